// Set commands: SADD, SREM, SISMEMBER, SMISMEMBER, SCARD, SMEMBERS, SRANDMEMBER,
// SPOP, SMOVE, SINTER, SINTERCARD, SINTERSTORE, SUNION, SUNIONSTORE, SDIFF,
// SDIFFSTORE, SSCAN. They work on every set, whatever its encoding (longset or
// hashtable, storage/set_value.h); semantics, replies and error texts follow Redis 7.
// Handlers parse, call a set operation (server/ops/set_ops.h), reply; the rows LSADD
// and friends share are written once in set_family.h. The encodings stay behind
// SetValue.
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/commands/set_family.h"
#include "server/ops/set_ops.h"
#include "server/server.h"
#include "storage/set_value.h"

namespace feedkv::server {

namespace {

using set_family::ReplySet;

// SRANDMEMBER with a negative count and no hard output limit to stop it builds
// its whole reply at once; past this it would exhaust memory (Redis would too).
constexpr int64_t kMaxRandomReply = 100'000'000;

void SRandMember(CommandContext& ctx) {
  if (ctx.argc() > 3) return ctx.SyntaxError();
  int64_t count = 1;
  if (ctx.argc() == 3) {
    if (!ctx.IntArg(2, &count)) return;
    if (count == std::numeric_limits<int64_t>::min()) return ctx.Error(protocol::err::kCountRange);
  }
  const SetValue* set;
  if (!ctx.Found(set_ops::Find(ctx, ctx.arg(1), set_ops::Accept::kAnySet), &set)) return;
  if (ctx.argc() == 2) {
    if (set == nullptr) return ctx.reply.Null();
    return TextMembers::Reply(ctx.reply, set->RandomMember(ctx.server.Random()));
  }
  if (set == nullptr || count == 0) return ctx.reply.ArrayHeader(0);
  if (count < 0) {
    if (-count > kMaxRandomReply && !ctx.ReplyLimited()) return ctx.Error(protocol::err::kCountTooLarge);
    ctx.reply.ArrayHeader(static_cast<size_t>(-count));
    if (static_cast<uint64_t>(-count) > set->size()) {
      // More picks than members: list them once. A longset can be far below its fill (an
      // adopted sparse image, a cache-mode set after many removals), where each
      // RandomMember may walk a long run of empty slots.
      std::vector<SetMember> all;
      set->Members(&all);
      for (int64_t i = 0; i < -count && !ctx.ReplyOverLimit(); ++i) {
        TextMembers::Reply(ctx.reply, all[ctx.server.Random() % all.size()]);
      }
      return;
    }
    for (int64_t i = 0; i < -count && !ctx.ReplyOverLimit(); ++i) {
      TextMembers::Reply(ctx.reply, set->RandomMember(ctx.server.Random()));
    }
    return;
  }
  if (static_cast<uint64_t>(count) >= set->size()) {
    ctx.reply.ArrayHeader(set->size());
    set->ForEach([&](const SetMember& m) { TextMembers::Reply(ctx.reply, m); });
    return;
  }
  const auto picked = set_ops::DistinctRandom(ctx, *set, static_cast<size_t>(count));
  ctx.reply.ArrayHeader(picked.size());
  for (const SetMember& m : picked) TextMembers::Reply(ctx.reply, m);
}

void SPop(CommandContext& ctx) {
  if (ctx.argc() > 3) return ctx.SyntaxError();
  int64_t count = 1;
  if (ctx.argc() == 3 && (!ParseCanonicalInt64(ctx.arg(2), &count) || count < 0)) {
    return ctx.Error(protocol::err::kNotPositive);
  }
  StatusOr<std::vector<std::string>> popped = set_ops::Pop(ctx, ctx.arg(1), static_cast<uint64_t>(count));
  if (!popped.ok()) return ctx.Error(popped.status());
  if (ctx.argc() == 2) return popped->empty() ? ctx.reply.Null() : ctx.reply.Bulk(popped->front());
  ctx.reply.SetHeader(popped->size());
  for (const std::string& m : *popped) ctx.reply.Bulk(m);
}

void SMove(CommandContext& ctx) {
  StatusOr<bool> moved = set_ops::Move(ctx, ctx.arg(1), ctx.arg(2), ctx.arg(3));
  if (!moved.ok()) return ctx.Error(moved.status());
  ctx.reply.Integer(*moved ? 1 : 0);
}

// ---- multi-set commands ----

// SINTERSTORE / SUNIONSTORE / SDIFFSTORE destination key [key ...]
template <std::unique_ptr<SetValue> (*kAlgebra)(CommandContext&, const std::vector<const SetValue*>&)>
void Store(CommandContext& ctx) {
  std::vector<const SetValue*> sets;
  if (!set_family::GatherSets<TextMembers>(ctx, 2, ctx.argc() - 1, &sets)) return;
  ctx.reply.Integer(static_cast<int64_t>(set_ops::Store(ctx, ctx.arg(1), kAlgebra(ctx, sets))));
}

void SUnion(CommandContext& ctx) {
  std::vector<const SetValue*> sets;
  if (!set_family::GatherSets<TextMembers>(ctx, 1, ctx.argc() - 1, &sets)) return;
  const SetValue* only = nullptr;  // the one set present, replied without a copy
  size_t present = 0;
  for (const SetValue* s : sets) {
    if (s == nullptr || s == only) continue;
    ++present;
    only = s;
  }
  if (present == 1) return ReplySet<TextMembers>(ctx, only);
  ReplySet<TextMembers>(ctx, set_ops::Union(ctx, sets).get());
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

bool ParseScanOptions(CommandContext& ctx, size_t first, ScanOptions* out, bool allow_match) {
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
    } else if (allow_match && EqualsIgnoreCase(ctx.arg(i), "MATCH")) {
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

using namespace set_family;  // NOLINT: the shared handlers, one per row

constexpr uint32_t kW = kWrite | kDenyOom;

const CommandSpec kCommands[] = {
    {"sadd", -3, kW | kFast, 1, 1, 1, Add<TextMembers>, "Add one or more members to a set", "set", {}, {kKeyRW | kKeyInsert}},
    {"srem", -3, kWrite | kFast, 1, 1, 1, Remove<TextMembers>, "Remove one or more members from a set", "set", {}, {kKeyRW | kKeyDelete}},
    {"sismember", 3, kReadOnly | kFast, 1, 1, 1, IsMember<TextMembers>, "Determine if a given value is a member of a set", "set", {}, {kKeyRO}},
    {"smismember", -3, kReadOnly | kFast, 1, 1, 1, MIsMember<TextMembers>, "Returns the membership associated with the given elements for a set", "set"},
    {"scard", 2, kReadOnly | kFast, 1, 1, 1, Card<TextMembers>, "Get the number of members in a set", "set", {}, {kKeyRO}},
    {"smembers", 2, kReadOnly, 1, 1, 1, Members<TextMembers>, "Get all the members in a set", "set"},
    {"srandmember", -2, kReadOnly | kRandom, 1, 1, 1, SRandMember, "Get one or multiple random members from a set", "set"},
    {"spop", -2, kWrite | kRandom | kFast, 1, 1, 1, SPop, "Remove and return one or multiple random members from a set", "set", {}, {kKeyRW | kKeyAccess | kKeyDelete}},
    {"smove", 4, kWrite | kFast, 1, 2, 1, SMove, "Move a member from one set to another", "set", {}, {kKeyRW | kKeyAccess | kKeyDelete, kKeyRW | kKeyInsert}},
    {"sinter", -2, kReadOnly, 1, -1, 1, Inter<TextMembers>, "Intersect multiple sets", "set"},
    {"sintercard", -3, kReadOnly | kKeyNum, 1, 1, 1, InterCard<TextMembers>, "Intersect multiple sets and return the cardinality of the result", "set"},
    {"sinterstore", -3, kW, 1, -1, 1, Store<set_ops::Inter>, "Intersect multiple sets and store the resulting set in a key", "set", {}, {kKeyRW | kKeyUpdate, kKeyRO | kKeyAccess}},
    {"sunion", -2, kReadOnly, 1, -1, 1, SUnion, "Add multiple sets", "set"},
    {"sunionstore", -3, kW, 1, -1, 1, Store<set_ops::Union>, "Add multiple sets and store the resulting set in a key", "set", {}, {kKeyOW | kKeyUpdate, kKeyRO | kKeyAccess}},
    {"sdiff", -2, kReadOnly, 1, -1, 1, Diff<TextMembers>, "Subtract multiple sets", "set"},
    {"sdiffstore", -3, kW, 1, -1, 1, Store<set_ops::Diff>, "Subtract multiple sets and store the resulting set in a key", "set", {}, {kKeyOW | kKeyUpdate, kKeyRO | kKeyAccess}},
    {"sscan", -3, kReadOnly | kRandom, 1, 1, 1, Scan<TextMembers, true>, "Incrementally iterate Set elements", "set"},
};

}  // namespace

std::span<const CommandSpec> SetCommands() { return kCommands; }

}  // namespace feedkv::server
