// String commands: GET, SET and its variants, MGET/MSET, GETSET/GETDEL/GETEX,
// the INCR family, INCRBYFLOAT, APPEND, STRLEN, GETRANGE/SUBSTR, SETRANGE, LCS.
//
// Semantics, replies and error texts follow Redis 7.2. Writes that carry a
// relative or clock-dependent effect are propagated in a deterministic form
// (absolute PXAT times, SET for INCRBYFLOAT, DEL for GETDEL) so that the AOF
// and replicas never depend on when they replay.
#include <algorithm>
#include <cerrno>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/ops/string_ops.h"
#include "server/server.h"
#include "storage/database.h"

namespace feedkv::server {

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

void InvalidExpire(CommandContext& ctx) {
  ctx.Error(fmt::format(protocol::err::kInvalidExpire, ctx.spec.name));
}

// ---------------------------------------------------------------------------
// SET / GETEX options.

enum StringFlag : uint32_t {
  kNx = 1u << 0,
  kXx = 1u << 1,
  kGet = 1u << 2,
  kKeepTtl = 1u << 3,
  kPersist = 1u << 4,
  kEx = 1u << 5,
  kPx = 1u << 6,
  kExAt = 1u << 7,
  kPxAt = 1u << 8,
};
constexpr uint32_t kAnyExpire = kEx | kPx | kExAt | kPxAt;

struct StringOptions {
  uint32_t flags = 0;
  std::string_view expire;  // the EX/PX/EXAT/PXAT argument
};

// Parses SET's (for_set) or GETEX's options from argument `i` on, with
// Redis's rules: NX/XX exclusive, one expire form, KEEPTTL and PERSIST
// exclusive with any expire; the same option may repeat.
bool ParseStringOptions(CommandContext& ctx, size_t i, bool for_set, StringOptions* o) {
  uint32_t& f = o->flags;
  for (; i < ctx.argc(); i++) {
    std::string_view opt = ctx.arg(i);
    bool has_next = i + 1 < ctx.argc();
    auto flag_option = [&](uint32_t flag, bool allowed) {
      if (allowed) f |= flag;
      return allowed;
    };
    auto expire_option = [&](uint32_t flag, uint32_t excluded) {
      if ((f & excluded) || !has_next) return false;
      f |= flag;
      o->expire = ctx.arg(++i);
      return true;
    };
    bool ok = false;
    if (EqualsIgnoreCase(opt, "NX")) {
      ok = flag_option(kNx, for_set && !(f & kXx));
    } else if (EqualsIgnoreCase(opt, "XX")) {
      ok = flag_option(kXx, for_set && !(f & kNx));
    } else if (EqualsIgnoreCase(opt, "GET")) {
      ok = flag_option(kGet, for_set);
    } else if (EqualsIgnoreCase(opt, "KEEPTTL")) {
      ok = flag_option(kKeepTtl, for_set && !(f & (kPersist | kAnyExpire)));
    } else if (EqualsIgnoreCase(opt, "PERSIST")) {
      ok = flag_option(kPersist, !for_set && !(f & (kKeepTtl | kAnyExpire)));
    } else if (EqualsIgnoreCase(opt, "EX")) {
      ok = expire_option(kEx, kKeepTtl | kPersist | kPx | kExAt | kPxAt);
    } else if (EqualsIgnoreCase(opt, "PX")) {
      ok = expire_option(kPx, kKeepTtl | kPersist | kEx | kExAt | kPxAt);
    } else if (EqualsIgnoreCase(opt, "EXAT")) {
      ok = expire_option(kExAt, kKeepTtl | kPersist | kEx | kPx | kPxAt);
    } else if (EqualsIgnoreCase(opt, "PXAT")) {
      ok = expire_option(kPxAt, kKeepTtl | kPersist | kEx | kPx | kExAt);
    }
    if (!ok) {
      ctx.SyntaxError();
      return false;
    }
  }
  return true;
}

// Turns an EX/PX/EXAT/PXAT argument into an absolute unix time in ms, with
// Redis's checks: positive, and no overflow in the unit conversion or in the
// addition of the current time.
bool AbsoluteExpire(CommandContext& ctx, const StringOptions& o, int64_t now, int64_t* when) {
  int64_t v;
  if (!ParseCanonicalInt64(o.expire, &v)) {
    ctx.Error(protocol::err::kNotInteger);
    return false;
  }
  bool seconds = o.flags & (kEx | kExAt);
  if (v <= 0 || (seconds && v > kInt64Max / 1000)) {
    InvalidExpire(ctx);
    return false;
  }
  if (seconds) v *= 1000;
  if (o.flags & (kEx | kPx)) {
    if (v > kInt64Max - now) {
      InvalidExpire(ctx);
      return false;
    }
    v += now;
  }
  *when = v;
  return true;
}

// Replies with the string at `key` (nil when missing): whether it was there. After a
// WRONGTYPE error it returns false with *ok false.
bool ReplyStringValue(CommandContext& ctx, std::string_view key, bool* ok) {
  char buf[Database::kIntBufSize];
  std::optional<std::string_view> s;
  *ok = ctx.Found(string_ops::Find(ctx, key, buf), &s);
  if (!*ok) return false;
  if (!s) {
    ctx.reply.Null();
    return false;
  }
  ctx.reply.Bulk(*s);
  return true;
}

// The body of SET, SETNX, SETEX and PSETEX. `int_reply`: 1/0 instead of
// OK/nil (SETNX).
void SetGeneric(CommandContext& ctx, const StringOptions& o, std::string_view key,
                std::string_view value, bool int_reply) {
  int64_t when = kNoExpire;
  if ((o.flags & kAnyExpire) && !AbsoluteExpire(ctx, o, ctx.now_ms(), &when)) return;

  // Plain SET needs no lookup; KEEPTTL does, so that the TTL of a key that
  // has already expired is not kept.
  bool found = false;
  if (o.flags & kGet) {
    bool ok;
    found = ReplyStringValue(ctx, key, &ok);
    if (!ok) return;
  } else if (o.flags & (kNx | kXx | kKeepTtl)) {
    found = string_ops::Exists(ctx, key);
  }
  if (((o.flags & kNx) && found) || ((o.flags & kXx) && !found)) {
    if (o.flags & kGet) return;
    if (int_reply) {
      ctx.reply.Integer(0);
    } else {
      ctx.reply.Null();
    }
    return;
  }

  string_ops::Set(ctx, key, value, when, (o.flags & kKeepTtl) != 0);
  if (!(o.flags & kGet)) {
    if (int_reply) {
      ctx.reply.Integer(1);
    } else {
      ctx.reply.Ok();
    }
  }

  // Deterministic propagation: an absolute expire, and never GET.
  if (when != kNoExpire) {
    ctx.PropagateAs({"SET", std::string(key), std::string(value), "PXAT", std::to_string(when)});
  } else if (o.flags & kGet) {
    std::vector<std::string> cmd{"SET", std::string(key), std::string(value)};
    if (o.flags & kKeepTtl) cmd.emplace_back("KEEPTTL");
    ctx.PropagateAs(std::move(cmd));
  }
}

void Set(CommandContext& ctx) {
  if (ctx.argc() == 3) {
    // The hot path: no options, no lookup.
    string_ops::Set(ctx, ctx.arg(1), ctx.arg(2));
    ctx.reply.Ok();
    return;
  }
  StringOptions o;
  if (!ParseStringOptions(ctx, 3, true, &o)) return;
  SetGeneric(ctx, o, ctx.arg(1), ctx.arg(2), false);
}

void SetNx(CommandContext& ctx) {
  SetGeneric(ctx, StringOptions{kNx, {}}, ctx.arg(1), ctx.arg(2), true);
}

void SetEx(CommandContext& ctx) {
  SetGeneric(ctx, StringOptions{kEx, ctx.arg(2)}, ctx.arg(1), ctx.arg(3), false);
}

void PSetEx(CommandContext& ctx) {
  SetGeneric(ctx, StringOptions{kPx, ctx.arg(2)}, ctx.arg(1), ctx.arg(3), false);
}

// ---------------------------------------------------------------------------
// Reads and read-modify-writes.

void Get(CommandContext& ctx) {
  bool ok;
  ReplyStringValue(ctx, ctx.arg(1), &ok);
}

void GetSet(CommandContext& ctx) {
  bool ok;
  ReplyStringValue(ctx, ctx.arg(1), &ok);
  if (!ok) return;
  string_ops::Set(ctx, ctx.arg(1), ctx.arg(2));
  ctx.PropagateAs({"SET", std::string(ctx.arg(1)), std::string(ctx.arg(2))});
}

void GetDel(CommandContext& ctx) {
  bool ok;
  if (ReplyStringValue(ctx, ctx.arg(1), &ok)) string_ops::Delete(ctx, ctx.arg(1));
}

void GetEx(CommandContext& ctx) {
  StringOptions o;
  if (!ParseStringOptions(ctx, 2, false, &o)) return;
  const std::string_view key = ctx.arg(1);
  // Redis's order: the key's type before the expire's value.
  char buf[Database::kIntBufSize];
  std::optional<std::string_view> value;
  if (!ctx.Found(string_ops::Find(ctx, key, buf), &value)) return;
  if (!value) return ctx.reply.Null();
  string_ops::ExpiryChange change;
  if (o.flags & kAnyExpire) {
    if (!AbsoluteExpire(ctx, o, ctx.now_ms(), &change.at)) return;
    change.kind = string_ops::ExpiryChange::kExpireAt;
    change.absolute = (o.flags & (kExAt | kPxAt)) != 0;
  } else if (o.flags & kPersist) {
    change.kind = string_ops::ExpiryChange::kPersist;
  }
  ctx.reply.Bulk(*value);
  string_ops::ChangeExpiry(ctx, key, change);
}

void MGet(CommandContext& ctx) {
  ctx.reply.ArrayHeader(ctx.argc() - 1);
  char buf[Database::kIntBufSize];
  for (size_t i = 1; i < ctx.argc(); i++) {
    // Another type answers nil, as Redis.
    StatusOr<std::optional<std::string_view>> s = string_ops::Find(ctx, ctx.arg(i), buf);
    if (!s.ok() || !*s) {
      ctx.reply.Null();
    } else {
      ctx.reply.Bulk(**s);
    }
  }
}

bool CheckPairs(CommandContext& ctx) {
  if (ctx.argc() % 2 == 0) {
    ctx.Error(fmt::format(protocol::err::kWrongArity, ctx.spec.name));
    return false;
  }
  return true;
}

void MSet(CommandContext& ctx) {
  if (!CheckPairs(ctx)) return;
  for (size_t i = 1; i < ctx.argc(); i += 2) string_ops::Set(ctx, ctx.arg(i), ctx.arg(i + 1));
  ctx.reply.Ok();
}

void MSetNx(CommandContext& ctx) {
  if (!CheckPairs(ctx)) return;
  for (size_t i = 1; i < ctx.argc(); i += 2) {
    if (string_ops::Exists(ctx, ctx.arg(i))) return ctx.reply.Integer(0);
  }
  for (size_t i = 1; i < ctx.argc(); i += 2) string_ops::Set(ctx, ctx.arg(i), ctx.arg(i + 1));
  ctx.reply.Integer(1);
}

// INCR, DECR, INCRBY, DECRBY.
void IncrDecr(CommandContext& ctx, int64_t incr) {
  StatusOr<int64_t> value = string_ops::IncrBy(ctx, ctx.arg(1), incr);
  if (!value.ok()) return ctx.Error(value.status());
  ctx.reply.Integer(*value);
}

void Incr(CommandContext& ctx) { IncrDecr(ctx, 1); }
void Decr(CommandContext& ctx) { IncrDecr(ctx, -1); }

void IncrBy(CommandContext& ctx) {
  int64_t incr;
  if (ctx.IntArg(2, &incr)) IncrDecr(ctx, incr);
}

void DecrBy(CommandContext& ctx) {
  int64_t decr;
  if (!ctx.IntArg(2, &decr)) return;
  if (decr == kInt64Min) {
    ctx.Error(protocol::err::kDecrOverflow);
    return;
  }
  IncrDecr(ctx, -decr);
}

void IncrByFloat(CommandContext& ctx) {
  StatusOr<std::string> value = string_ops::IncrByFloat(ctx, ctx.arg(1), ctx.arg(2));
  if (!value.ok()) return ctx.Error(value.status());
  ctx.reply.Bulk(*value);
}

void Append(CommandContext& ctx) {
  StatusOr<size_t> len = string_ops::Append(ctx, ctx.arg(1), ctx.arg(2));
  if (!len.ok()) return ctx.Error(len.status());
  ctx.reply.Integer(static_cast<int64_t>(*len));
}

void StrLen(CommandContext& ctx) {
  char buf[Database::kIntBufSize];
  std::optional<std::string_view> s;
  if (!ctx.Found(string_ops::Find(ctx, ctx.arg(1), buf), &s)) return;
  ctx.reply.Integer(s ? static_cast<int64_t>(s->size()) : 0);
}

void GetRange(CommandContext& ctx) {
  int64_t start, end;
  if (!ctx.IntArg(2, &start) || !ctx.IntArg(3, &end)) return;
  char buf[Database::kIntBufSize];
  std::optional<std::string_view> found;
  if (!ctx.Found(string_ops::Find(ctx, ctx.arg(1), buf), &found)) return;
  if (!found) return ctx.reply.Bulk("");
  const std::string_view s = *found;
  auto len = static_cast<int64_t>(s.size());
  if (start < 0 && end < 0 && start > end) {
    ctx.reply.Bulk("");
    return;
  }
  if (start < 0) start = std::max<int64_t>(0, len + start);
  if (end < 0) end = std::max<int64_t>(0, len + end);
  if (end >= len) end = len - 1;
  if (len == 0 || start > end) {
    ctx.reply.Bulk("");
    return;
  }
  ctx.reply.Bulk(s.substr(static_cast<size_t>(start), static_cast<size_t>(end - start + 1)));
}

void SetRange(CommandContext& ctx) {
  int64_t offset;
  if (!ctx.IntArg(2, &offset)) return;
  if (offset < 0) return ctx.Error(protocol::err::kOffsetOutOfRange);
  StatusOr<size_t> len = string_ops::SetRange(ctx, ctx.arg(1), static_cast<uint64_t>(offset), ctx.arg(3));
  if (!len.ok()) return ctx.Error(len.status());
  ctx.reply.Integer(static_cast<int64_t>(*len));
}

// ---------------------------------------------------------------------------
// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN]

struct LcsMatch {
  uint32_t a_start, a_end, b_start, b_end;
};

void Lcs(CommandContext& ctx) {
  char abuf[Database::kIntBufSize], bbuf[Database::kIntBufSize];
  StatusOr<std::optional<std::string_view>> ea = string_ops::Find(ctx, ctx.arg(1), abuf);
  StatusOr<std::optional<std::string_view>> eb = string_ops::Find(ctx, ctx.arg(2), bbuf);
  if (!ea.ok() || !eb.ok()) {
    ctx.Error(protocol::err::kKeysMustBeStrings);
    return;
  }
  bool want_len = false, want_idx = false, with_match_len = false;
  int64_t min_match_len = 0;
  for (size_t i = 3; i < ctx.argc(); i++) {
    std::string_view opt = ctx.arg(i);
    if (EqualsIgnoreCase(opt, "IDX")) {
      want_idx = true;
    } else if (EqualsIgnoreCase(opt, "LEN")) {
      want_len = true;
    } else if (EqualsIgnoreCase(opt, "WITHMATCHLEN")) {
      with_match_len = true;
    } else if (EqualsIgnoreCase(opt, "MINMATCHLEN") && i + 1 < ctx.argc()) {
      if (!ctx.IntArg(i + 1, &min_match_len)) return;
      min_match_len = std::max<int64_t>(0, min_match_len);
      i++;
    } else {
      ctx.SyntaxError();
      return;
    }
  }
  if (want_idx && want_len) {
    ctx.Error(protocol::err::kLcsLenAndIdx);
    return;
  }
  const std::string_view a = ea->value_or(std::string_view()), b = eb->value_or(std::string_view());
  constexpr uint64_t kMaxLen = std::numeric_limits<uint32_t>::max() - 1;
  if (a.size() >= kMaxLen || b.size() >= kMaxLen) {
    ctx.Error(protocol::err::kLcsTooLong);
    return;
  }
  const size_t alen = a.size(), blen = b.size(), width = blen + 1;
  uint64_t cells = static_cast<uint64_t>(alen + 1) * width;
  if (cells * sizeof(uint32_t) > static_cast<uint64_t>(ctx.server.cfg().proto_max_bulk_len)) {
    ctx.Error(protocol::err::kLcsTooMuchMemory);
    return;
  }
  // table[i * width + j]: LCS length of a[0, i) and b[0, j).
  std::vector<uint32_t> table(cells, 0);
  for (size_t i = 1; i <= alen; i++) {
    for (size_t j = 1; j <= blen; j++) {
      table[i * width + j] = a[i - 1] == b[j - 1]
                                 ? table[(i - 1) * width + j - 1] + 1
                                 : std::max(table[(i - 1) * width + j], table[i * width + j - 1]);
    }
  }
  const uint32_t total = table[alen * width + blen];
  if (want_len) {
    ctx.reply.Integer(total);
    return;
  }

  // Walk back from the end collecting the LCS and its contiguous ranges
  // (reported last-to-first, as Redis does).
  std::string common(total, '\0');
  std::vector<LcsMatch> matches;
  bool open = false;
  LcsMatch cur{};
  auto close_range = [&] {
    uint64_t n = cur.a_end - cur.a_start + 1;
    if (min_match_len == 0 || n >= static_cast<uint64_t>(min_match_len)) matches.push_back(cur);
    open = false;
  };
  size_t i = alen, j = blen, k = total;
  while (i > 0 && j > 0) {
    if (a[i - 1] == b[j - 1]) {
      common[--k] = a[i - 1];
      auto ai = static_cast<uint32_t>(i - 1), bj = static_cast<uint32_t>(j - 1);
      if (open && cur.a_start == ai + 1 && cur.b_start == bj + 1) {
        cur.a_start = ai;
        cur.b_start = bj;
      } else {
        if (open) close_range();
        cur = {ai, ai, bj, bj};
        open = true;
      }
      i--;
      j--;
      if (cur.a_start == 0 || cur.b_start == 0) close_range();
    } else {
      if (table[(i - 1) * width + j] > table[i * width + j - 1]) {
        i--;
      } else {
        j--;
      }
      if (open) close_range();
    }
  }
  if (!want_idx) {
    ctx.reply.Bulk(common);
    return;
  }
  auto& r = ctx.reply;
  r.MapHeader(2);
  r.Bulk("matches");
  r.ArrayHeader(matches.size());
  for (const LcsMatch& m : matches) {
    r.ArrayHeader(with_match_len ? 3 : 2);
    r.ArrayHeader(2);
    r.Integer(m.a_start);
    r.Integer(m.a_end);
    r.ArrayHeader(2);
    r.Integer(m.b_start);
    r.Integer(m.b_end);
    if (with_match_len) r.Integer(m.a_end - m.a_start + 1);
  }
  r.Bulk("len");
  r.Integer(total);
}

constexpr uint32_t kW = kWrite | kDenyOom;

const CommandSpec kCommands[] = {
    {"get", 2, kReadOnly | kFast, 1, 1, 1, Get, "Get the value of a key", "string"},
    {"set", -3, kW, 1, 1, 1, Set,
     "Set the string value of a key",
     "string", {}, {kKeyOW | kKeyUpdate | kKeyGetReads}},
    {"setnx", 3, kW | kFast, 1, 1, 1, SetNx,
     "Set the value of a key, only if the key does not exist", "string", {}, {kKeyOW | kKeyInsert}},
    {"setex", 4, kW, 1, 1, 1, SetEx,
     "Set the value and expiration of a key",
     "string", {}, {kKeyOW | kKeyUpdate}},
    {"psetex", 4, kW, 1, 1, 1, PSetEx,
     "Set the value and expiration in milliseconds of a key",
     "string", {}, {kKeyOW | kKeyUpdate}},
    {"mget", -2, kReadOnly | kFast, 1, -1, 1, MGet,
     "Get the values of all the given keys", "string"},
    {"mset", -3, kW, 1, -1, 2, MSet,
     "Set multiple keys to multiple values", "string", {}, {kKeyOW | kKeyUpdate}},
    {"msetnx", -3, kW, 1, -1, 2, MSetNx,
     "Set multiple keys to multiple values, only if none of the keys exist",
     "string", {}, {kKeyOW | kKeyInsert}},
    {"getset", 3, kW | kFast, 1, 1, 1, GetSet,
     "Set the string value of a key and return its old value", "string", {}, {kKeyRW | kKeyAccess | kKeyUpdate}},
    {"getdel", 2, kWrite | kFast, 1, 1, 1, GetDel,
     "Get the value of a key and delete the key", "string", {}, {kKeyRW | kKeyAccess | kKeyDelete}},
    {"getex", -2, kWrite | kFast, 1, 1, 1, GetEx,
     "Get the value of a key and optionally set its expiration", "string", {}, {kKeyRW | kKeyAccess | kKeyUpdate}},
    {"incr", 2, kW | kFast, 1, 1, 1, Incr,
     "Increment the integer value of a key by one",
     "string", {}, {kKeyRW | kKeyAccess | kKeyUpdate}},
    {"decr", 2, kW | kFast, 1, 1, 1, Decr,
     "Decrement the integer value of a key by one",
     "string", {}, {kKeyRW | kKeyAccess | kKeyUpdate}},
    {"incrby", 3, kW | kFast, 1, 1, 1, IncrBy,
     "Increment the integer value of a key by the given amount",
     "string", {}, {kKeyRW | kKeyAccess | kKeyUpdate}},
    {"decrby", 3, kW | kFast, 1, 1, 1, DecrBy,
     "Decrement the integer value of a key by the given number",
     "string", {}, {kKeyRW | kKeyAccess | kKeyUpdate}},
    {"incrbyfloat", 3, kW | kFast, 1, 1, 1, IncrByFloat,
     "Increment the float value of a key by the given amount",
     "string", {}, {kKeyRW | kKeyAccess | kKeyUpdate}},
    {"append", 3, kW, 1, 1, 1, Append,
     "Append a value to a key", "string", {}, {kKeyRW | kKeyInsert}},
    {"strlen", 2, kReadOnly | kFast, 1, 1, 1, StrLen, "Get the length of the value stored in a key",
     "string", {}, {kKeyRO}},
    {"getrange", 4, kReadOnly, 1, 1, 1, GetRange, "Get a substring of the string stored at a key",
     "string"},
    {"substr", 4, kReadOnly, 1, 1, 1, GetRange, "Get a substring of the string stored at a key",
     "string"},
    {"setrange", 4, kW, 1, 1, 1, SetRange,
     "Overwrite part of a string at key starting at the specified offset",
     "string"},
    {"lcs", -3, kReadOnly, 1, 2, 1, Lcs, "Find longest common substring", "string"},
};

}  // namespace

std::span<const CommandSpec> StringCommands() { return kCommands; }

}  // namespace feedkv::server
