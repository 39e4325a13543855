// Set commands: SADD, SREM, SISMEMBER, SMISMEMBER, SCARD, SMEMBERS, SRANDMEMBER,
// SPOP, SMOVE, SINTER, SINTERCARD, SINTERSTORE, SUNION, SUNIONSTORE, SDIFF,
// SDIFFSTORE, SSCAN. They work on every set, whatever its encoding (longset or
// hashtable, storage/set_value.h); semantics, replies and error texts follow Redis 7.
// Handlers parse, call SetValue, reply; the encodings stay behind SetValue.
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/commands/set_helpers.h"
#include "server/config.h"
#include "server/glob.h"
#include "server/server.h"
#include "storage/database.h"
#include "storage/set_value.h"

namespace feedkv::server {

namespace {

// SRANDMEMBER with a negative count builds its whole reply at once; past this it
// would exhaust memory (Redis would too).
constexpr int64_t kMaxRandomReply = 100'000'000;
// SPOP with a count is logged as SREMs of at most this many members each.
constexpr size_t kSremBatch = 1024;

// The sets at args[first..last]: false after WRONGTYPE (every key is checked, as
// Redis does). Missing keys are null entries.
bool GatherSets(CommandContext& ctx, size_t first, size_t last, std::vector<const SetValue*>* sets) {
  sets->clear();
  for (size_t i = first; i <= last; ++i) {
    Entry* e;
    SetValue* s;
    if (!LookupSet(ctx, ctx.arg(i), true, &e, &s)) return false;
    sets->push_back(s);
  }
  return true;
}

std::string_view FormatUint(uint64_t v, char* buf) {
  auto [ptr, ec] = std::to_chars(buf, buf + 20, v);
  (void)ec;  // 20 digits always fit
  return std::string_view(buf, static_cast<size_t>(ptr - buf));
}

void ReplyMember(protocol::ReplyWriter& r, const SetMember& m) {
  char buf[24];
  r.Bulk(m.Text(buf));
}

void ReplyMembers(CommandContext& ctx, const std::vector<SetMember>& members) {
  ctx.reply.SetHeader(members.size());
  for (const SetMember& m : members) ReplyMember(ctx.reply, m);
}

void ReplySet(CommandContext& ctx, const SetValue* set) {
  if (set == nullptr) {
    ctx.reply.SetHeader(0);
    return;
  }
  ctx.reply.SetHeader(set->size());
  set->ForEach([&](const SetMember& m) { ReplyMember(ctx.reply, m); });
}

// ---- single-set commands ----

void SAdd(CommandContext& ctx) {
  Entry* e;
  SetValue* set;
  if (!LookupSet(ctx, ctx.arg(1), false, &e, &set)) return;
  auto members = ctx.args.subspan(2);
  AddToSet(
      ctx, "sadd", e, set,
      [&](std::unique_ptr<SetValue>* fresh) { return SetValue::FromMembers(members, Options(ctx), fresh); },
      [&](SetValue* s, size_t* added) { return s->AddMembers(members, Options(ctx), added); });
}

void SRem(CommandContext& ctx) {
  Entry* e;
  SetValue* set;
  if (!LookupSet(ctx, ctx.arg(1), false, &e, &set)) return;
  int64_t removed = 0;
  if (set != nullptr) {
    for (size_t i = 2; i < ctx.argc() && !set->empty(); ++i) removed += set->Remove(ctx.arg(i));
    if (removed > 0) {
      ctx.Notify(kNotifySet, "srem", ctx.arg(1));
      AfterRemoval(ctx, ctx.arg(1), e, set);
      ctx.Dirty(removed);
    }
  }
  ctx.reply.Integer(removed);
}

void SIsMember(CommandContext& ctx) {
  Entry* e;
  SetValue* set;
  if (!LookupSet(ctx, ctx.arg(1), true, &e, &set)) return;
  ReplyBool(ctx, set != nullptr && set->Contains(ctx.arg(2)));
}

void SMIsMember(CommandContext& ctx) {
  Entry* e;
  SetValue* set;
  if (!LookupSet(ctx, ctx.arg(1), true, &e, &set)) return;
  ctx.reply.ArrayHeader(ctx.argc() - 2);
  for (size_t i = 2; i < ctx.argc(); ++i) {
    ReplyBool(ctx, set != nullptr && set->Contains(ctx.arg(i)));
  }
}

void SCard(CommandContext& ctx) {
  Entry* e;
  SetValue* set;
  if (!LookupSet(ctx, ctx.arg(1), true, &e, &set)) return;
  ctx.reply.Integer(set != nullptr ? static_cast<int64_t>(set->size()) : 0);
}

void SMembers(CommandContext& ctx) {
  Entry* e;
  SetValue* set;
  if (!LookupSet(ctx, ctx.arg(1), true, &e, &set)) return;
  ReplySet(ctx, set);
}

// `count` distinct members chosen uniformly. REQUIRES: 0 < count < set.size().
std::vector<SetMember> DistinctRandom(CommandContext& ctx, const SetValue& set, size_t count) {
  std::vector<SetMember> picked;
  picked.reserve(count);
  if (count * 3 > set.size()) {
    // A large share: a partial Fisher-Yates shuffle of all members.
    set.Members(&picked);
    for (size_t i = 0; i < count; ++i) {
      const size_t j = i + ctx.server.Random() % (picked.size() - i);
      std::swap(picked[i], picked[j]);
    }
    picked.resize(count);
    return picked;
  }
  // A small share: draw with rejection of repeats.
  std::unordered_set<uint64_t> seen_ints;
  std::unordered_set<std::string_view> seen_strings;
  while (picked.size() < count) {
    const SetMember m = set.RandomMember(ctx.server.Random());
    const bool fresh = m.is_int ? seen_ints.insert(static_cast<uint64_t>(m.i)).second
                                : seen_strings.insert(m.s).second;
    if (fresh) picked.push_back(m);
  }
  return picked;
}

void SRandMember(CommandContext& ctx) {
  if (ctx.argc() > 3) return ctx.SyntaxError();
  Entry* e;
  SetValue* set;
  if (ctx.argc() == 2) {
    if (!LookupSet(ctx, ctx.arg(1), true, &e, &set)) return;
    if (set == nullptr) return ctx.reply.Null();
    return ReplyMember(ctx.reply, set->RandomMember(ctx.server.Random()));
  }
  int64_t count;
  if (!ctx.IntArg(2, &count)) return;
  if (count == std::numeric_limits<int64_t>::min()) return ctx.Error(protocol::err::kCountRange);
  if (!LookupSet(ctx, ctx.arg(1), true, &e, &set)) return;
  if (set == nullptr || count == 0) return ctx.reply.ArrayHeader(0);
  if (count < 0) {
    if (-count > kMaxRandomReply) return ctx.Error(protocol::err::kCountTooLarge);
    ctx.reply.ArrayHeader(static_cast<size_t>(-count));
    if (static_cast<uint64_t>(-count) > set->size()) {
      // More picks than members: list them once. A longset can be far below its fill (an
      // adopted sparse image, a cache-mode set after many removals), where each
      // RandomMember may walk a long run of empty slots.
      std::vector<SetMember> all;
      set->Members(&all);
      for (int64_t i = 0; i < -count; ++i) ReplyMember(ctx.reply, all[ctx.server.Random() % all.size()]);
      return;
    }
    for (int64_t i = 0; i < -count; ++i) ReplyMember(ctx.reply, set->RandomMember(ctx.server.Random()));
    return;
  }
  if (static_cast<uint64_t>(count) >= set->size()) {
    ctx.reply.ArrayHeader(set->size());
    set->ForEach([&](const SetMember& m) { ReplyMember(ctx.reply, m); });
    return;
  }
  const auto picked = DistinctRandom(ctx, *set, static_cast<size_t>(count));
  ctx.reply.ArrayHeader(picked.size());
  for (const SetMember& m : picked) ReplyMember(ctx.reply, m);
}

// Logs the popped members as SREMs (SPOP is random; its effect is not).
void PropagatePopped(CommandContext& ctx, const std::vector<std::string>& popped) {
  for (size_t i = 0; i < popped.size(); i += kSremBatch) {
    std::vector<std::string> cmd = {"SREM", std::string(ctx.arg(1))};
    for (size_t j = i; j < popped.size() && j < i + kSremBatch; ++j) cmd.push_back(popped[j]);
    ctx.PropagateAs(std::move(cmd));
  }
}

void SPop(CommandContext& ctx) {
  if (ctx.argc() > 3) return ctx.SyntaxError();
  int64_t count = 1;
  if (ctx.argc() == 3 && (!ParseCanonicalInt64(ctx.arg(2), &count) || count < 0)) {
    return ctx.Error(protocol::err::kNotPositive);
  }
  Entry* e;
  SetValue* set;
  if (!LookupSet(ctx, ctx.arg(1), false, &e, &set)) return;
  if (set == nullptr) return ctx.argc() == 2 ? ctx.reply.Null() : ctx.reply.SetHeader(0);
  std::vector<std::string> popped;
  char buf[24];
  if (static_cast<uint64_t>(count) >= set->size()) {
    popped.reserve(set->size());
    set->ForEach([&](const SetMember& m) { popped.emplace_back(m.Text(buf)); });
  } else {
    std::vector<SetMember> picked;
    if (count == 1) {
      picked.push_back(set->RandomMember(ctx.server.Random()));
    } else if (count > 1) {
      picked = DistinctRandom(ctx, *set, static_cast<size_t>(count));
    }
    for (const SetMember& m : picked) popped.emplace_back(m.Text(buf));
  }
  for (const std::string& m : popped) set->Remove(m);
  if (!popped.empty()) {
    ctx.Notify(kNotifySet, "spop", ctx.arg(1));
    AfterRemoval(ctx, ctx.arg(1), e, set);
    ctx.Dirty(static_cast<int64_t>(popped.size()));
    PropagatePopped(ctx, popped);
  }
  if (ctx.argc() == 2) return ctx.reply.Bulk(popped.front());
  ctx.reply.SetHeader(popped.size());
  for (const std::string& m : popped) ctx.reply.Bulk(m);
}

void SMove(CommandContext& ctx) {
  Entry *src_e, *dst_e;
  SetValue *src, *dst;
  std::string_view member = ctx.arg(3);
  if (!LookupSet(ctx, ctx.arg(1), false, &src_e, &src)) return;
  if (src == nullptr) return ctx.reply.Integer(0);
  if (!LookupSet(ctx, ctx.arg(2), false, &dst_e, &dst)) return;
  if (src == dst) return ctx.reply.Integer(src->Contains(member) ? 1 : 0);
  if (!src->Contains(member)) return ctx.reply.Integer(0);
  const LongSetOptions options = Options(ctx);
  // Cache mode: fail before touching either set.
  if (dst != nullptr && dst->WouldBeFull(SetMember::Str(member), options)) {
    return ctx.Error("FULL longset is full");
  }
  src->Remove(member);
  ctx.Notify(kNotifySet, "srem", ctx.arg(1));
  AfterRemoval(ctx, ctx.arg(1), src_e, src);
  ctx.Touched(ctx.client.db, ctx.arg(1));
  // As Redis: the destination changes only if the member was not there yet.
  const bool dst_changes = dst == nullptr || !dst->Contains(member);
  if (dst_changes) ctx.Touched(ctx.client.db, ctx.arg(2));
  if (dst == nullptr) {
    std::unique_ptr<SetValue> fresh;
    Status st = SetValue::FromMembers(std::span<const std::string_view>(&member, 1), options, &fresh);
    if (st.ok()) ctx.db().SetObject(ctx.arg(2), std::move(fresh), kNoExpire, false);
  } else {
    size_t added = 0;
    Status st = dst->AddMembers(std::span<const std::string_view>(&member, 1), options, &added);
    st.PermitUnchecked();  // room was checked above
    ctx.db().UpdateObjectMemory(dst_e);
  }
  if (dst_changes) ctx.Notify(kNotifySet, "sadd", ctx.arg(2));
  ctx.Dirty();
  ctx.reply.Integer(1);
}

// ---- multi-set commands ----

// Stores `result` at args[1] (deleting the key when it is empty) and replies its size.
void StoreResult(CommandContext& ctx, std::unique_ptr<SetValue> result) {
  // Only the destination changes, never the sources.
  if (result == nullptr) {
    if (ctx.db().Delete(ctx.arg(1))) {
      ctx.Dirty();
      ctx.Touched(ctx.client.db, ctx.arg(1));
      ctx.Notify(kNotifyGeneric, "del", ctx.arg(1));
    }
    return ctx.reply.Integer(0);
  }
  const auto n = static_cast<int64_t>(result->size());
  ctx.db().SetObject(ctx.arg(1), std::move(result), kNoExpire, false);
  ctx.Dirty();
  ctx.Touched(ctx.client.db, ctx.arg(1));
  ctx.Notify(kNotifySet, ctx.spec.name, ctx.arg(1));  // sinterstore, sunionstore, sdiffstore
  ctx.reply.Integer(n);
}

bool AnyMissing(const std::vector<const SetValue*>& sets) {
  for (const SetValue* s : sets) {
    if (s == nullptr) return true;
  }
  return false;
}

std::vector<const SetValue*> Present(const std::vector<const SetValue*>& sets) {
  std::vector<const SetValue*> out;
  for (const SetValue* s : sets) {
    if (s != nullptr) out.push_back(s);
  }
  return out;
}

void SInter(CommandContext& ctx) {
  std::vector<const SetValue*> sets;
  if (!GatherSets(ctx, 1, ctx.argc() - 1, &sets)) return;
  std::vector<SetMember> members;
  if (!AnyMissing(sets)) ForEachInter(sets, 0, [&](const SetMember& m) { members.push_back(m); });
  ReplyMembers(ctx, members);
}

void SInterStore(CommandContext& ctx) {
  std::vector<const SetValue*> sets;
  if (!GatherSets(ctx, 2, ctx.argc() - 1, &sets)) return;
  StoreResult(ctx, AnyMissing(sets) ? nullptr : SetInter(sets, Options(ctx)));
}

void SUnion(CommandContext& ctx) {
  std::vector<const SetValue*> sets;
  if (!GatherSets(ctx, 1, ctx.argc() - 1, &sets)) return;
  const auto present = Present(sets);
  if (present.size() == 1) return ReplySet(ctx, present[0]);
  ReplySet(ctx, SetUnion(present, Options(ctx)).get());
}

void SUnionStore(CommandContext& ctx) {
  std::vector<const SetValue*> sets;
  if (!GatherSets(ctx, 2, ctx.argc() - 1, &sets)) return;
  StoreResult(ctx, SetUnion(Present(sets), Options(ctx)));
}

std::unique_ptr<SetValue> Diff(CommandContext& ctx, const std::vector<const SetValue*>& sets) {
  if (sets[0] == nullptr) return nullptr;
  return SetDiff(Present(sets), Options(ctx));
}

void SDiff(CommandContext& ctx) {
  std::vector<const SetValue*> sets;
  if (!GatherSets(ctx, 1, ctx.argc() - 1, &sets)) return;
  ReplySet(ctx, Diff(ctx, sets).get());
}

void SDiffStore(CommandContext& ctx) {
  std::vector<const SetValue*> sets;
  if (!GatherSets(ctx, 2, ctx.argc() - 1, &sets)) return;
  StoreResult(ctx, Diff(ctx, sets));
}

}  // namespace

// SINTERCARD / LSINTERCARD argument parsing: numkeys key [key ...] [LIMIT n].
// Returns false after replying an error. Shared with cmd_longset.cc.
bool ParseInterCardArgs(CommandContext& ctx, size_t* numkeys, size_t* limit) {
  int64_t n;
  if (!ParseCanonicalInt64(ctx.arg(1), &n) || n <= 0) {
    ctx.Error(protocol::err::kNumkeysNotPositive);
    return false;
  }
  if (static_cast<uint64_t>(n) > ctx.argc() - 2) {
    ctx.Error(protocol::err::kNumkeysTooMany);
    return false;
  }
  *numkeys = static_cast<size_t>(n);
  *limit = 0;
  for (size_t i = 2 + *numkeys; i < ctx.argc(); i += 2) {
    if (!EqualsIgnoreCase(ctx.arg(i), "LIMIT") || i + 1 >= ctx.argc()) {
      ctx.SyntaxError();
      return false;
    }
    int64_t l;
    if (!ParseCanonicalInt64(ctx.arg(i + 1), &l) || l < 0) {
      ctx.Error(protocol::err::kLimitNegative);
      return false;
    }
    *limit = static_cast<size_t>(l);
  }
  return true;
}

void ReplyEmptyScan(CommandContext& ctx) {
  ctx.reply.ArrayHeader(2);
  ctx.reply.Bulk("0");
  ctx.reply.ArrayHeader(0);
}

// A SCAN-family cursor, read as Redis's parseScanCursorOrReply does: strtoul
// over the argument as a C string. So a sign is allowed (a negative cursor
// wraps), "" is 0, and a NUL ends the number; a leading blank, any other
// trailing byte or a value past 2^64-1 is refused. Returns false after
// replying "invalid cursor".
bool ParseScanCursor(CommandContext& ctx, size_t i, uint64_t* cursor) {
  const std::string text(ctx.arg(i));
  errno = 0;
  char* end = nullptr;
  *cursor = std::strtoul(text.c_str(), &end, 10);
  if (std::isspace(static_cast<unsigned char>(text[0])) || *end != '\0' || errno == ERANGE) {
    ctx.Error(protocol::err::kInvalidCursor);
    return false;
  }
  return true;
}

bool ParseScanOptions(CommandContext& ctx, size_t first, ScanOptions* out) {
  for (size_t i = first; i < ctx.argc(); i += 2) {
    if (i + 1 >= ctx.argc()) {
      ctx.SyntaxError();
      return false;
    }
    if (EqualsIgnoreCase(ctx.arg(i), "COUNT")) {
      if (!ctx.IntArg(i + 1, &out->count)) return false;
      if (out->count < 1) {
        ctx.SyntaxError();
        return false;
      }
    } else if (EqualsIgnoreCase(ctx.arg(i), "MATCH")) {
      out->pattern = ctx.arg(i + 1);
      out->has_pattern = !(out->pattern.size() == 1 && out->pattern[0] == '*');
    } else {
      ctx.SyntaxError();
      return false;
    }
  }
  return true;
}

namespace {

void SInterCard(CommandContext& ctx) {
  size_t numkeys, limit;
  if (!ParseInterCardArgs(ctx, &numkeys, &limit)) return;
  std::vector<const SetValue*> sets;
  if (!GatherSets(ctx, 2, 1 + numkeys, &sets)) return;
  int64_t n = 0;
  if (!AnyMissing(sets)) ForEachInter(sets, limit, [&](const SetMember&) { ++n; });
  ctx.reply.Integer(n);
}

void SScan(CommandContext& ctx) {
  uint64_t cursor;
  if (!ParseScanCursor(ctx, 2, &cursor)) return;
  // As Redis's sscanCommand: the key before the options, so a missing key answers an
  // empty scan and another type WRONGTYPE whatever the options say.
  Entry* e;
  SetValue* set;
  if (!LookupSet(ctx, ctx.arg(1), true, &e, &set)) return;
  if (set == nullptr) return ReplyEmptyScan(ctx);
  ScanOptions opt;
  if (!ParseScanOptions(ctx, 3, &opt)) return;
  std::vector<SetMember> batch;
  const uint64_t next = set->Scan(cursor, static_cast<size_t>(opt.count), &batch);
  char buf[24];
  if (opt.has_pattern) {
    std::erase_if(batch, [&](const SetMember& m) { return !GlobMatch(opt.pattern, m.Text(buf), false); });
  }
  ctx.reply.ArrayHeader(2);
  ctx.reply.Bulk(FormatUint(next, buf));
  ctx.reply.ArrayHeader(batch.size());
  for (const SetMember& m : batch) ReplyMember(ctx.reply, m);
}

constexpr uint32_t kW = kWrite | kDenyOom;

const CommandSpec kCommands[] = {
    {"sadd", -3, kW | kFast, 1, 1, 1, SAdd, "Add one or more members to a set", "set", {}, {kKeyRW | kKeyInsert}},
    {"srem", -3, kWrite | kFast, 1, 1, 1, SRem, "Remove one or more members from a set", "set", {}, {kKeyRW | kKeyDelete}},
    {"sismember", 3, kReadOnly | kFast, 1, 1, 1, SIsMember, "Determine if a given value is a member of a set", "set", {}, {kKeyRO}},
    {"smismember", -3, kReadOnly | kFast, 1, 1, 1, SMIsMember, "Returns the membership associated with the given elements for a set", "set"},
    {"scard", 2, kReadOnly | kFast, 1, 1, 1, SCard, "Get the number of members in a set", "set", {}, {kKeyRO}},
    {"smembers", 2, kReadOnly, 1, 1, 1, SMembers, "Get all the members in a set", "set"},
    {"srandmember", -2, kReadOnly | kRandom, 1, 1, 1, SRandMember, "Get one or multiple random members from a set", "set"},
    {"spop", -2, kWrite | kRandom | kFast, 1, 1, 1, SPop, "Remove and return one or multiple random members from a set", "set", {}, {kKeyRW | kKeyAccess | kKeyDelete}},
    {"smove", 4, kWrite | kFast, 1, 2, 1, SMove, "Move a member from one set to another", "set", {}, {kKeyRW | kKeyAccess | kKeyDelete, kKeyRW | kKeyInsert}},
    {"sinter", -2, kReadOnly, 1, -1, 1, SInter, "Intersect multiple sets", "set"},
    {"sintercard", -3, kReadOnly | kKeyNum, 1, 1, 1, SInterCard, "Intersect multiple sets and return the cardinality of the result", "set"},
    {"sinterstore", -3, kW, 1, -1, 1, SInterStore, "Intersect multiple sets and store the resulting set in a key", "set", {}, {kKeyRW | kKeyUpdate, kKeyRO | kKeyAccess}},
    {"sunion", -2, kReadOnly, 1, -1, 1, SUnion, "Add multiple sets", "set"},
    {"sunionstore", -3, kW, 1, -1, 1, SUnionStore, "Add multiple sets and store the resulting set in a key", "set", {}, {kKeyOW | kKeyUpdate, kKeyRO | kKeyAccess}},
    {"sdiff", -2, kReadOnly, 1, -1, 1, SDiff, "Subtract multiple sets", "set"},
    {"sdiffstore", -3, kW, 1, -1, 1, SDiffStore, "Subtract multiple sets and store the resulting set in a key", "set", {}, {kKeyOW | kKeyUpdate, kKeyRO | kKeyAccess}},
    {"sscan", -3, kReadOnly | kRandom, 1, 1, 1, SScan, "Incrementally iterate Set elements", "set"},
};

}  // namespace

std::span<const CommandSpec> SetCommands() { return kCommands; }

}  // namespace feedkv::server
