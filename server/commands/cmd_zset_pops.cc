// Sorted-set pops and random reads: ZPOPMIN, ZPOPMAX, ZMPOP, the blocking
// BZPOPMIN, BZPOPMAX and BZMPOP, and ZRANDMEMBER, with Redis 7.0's reply shapes and
// error texts. A blocking pop that finds every key empty parks its client on those
// keys (WaitingClients); a write that changes one of them wakes it, and the command
// runs again with its first deadline. A served pop is logged as ZPOPMIN/ZPOPMAX of
// the key it popped from, so the log and replicas never block.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/commands/zset_helpers.h"
#include "server/server.h"
#include "server/waiting_clients.h"
#include "storage/database.h"
#include "storage/sorted_set.h"

namespace feedkv::server {

namespace {

// How a pop replies (Redis's genericZpopCommand flags).
struct PopReply {
  bool emit_key = false;  // BZPOP*, ZMPOP: the key comes first
  bool nested = false;    // [[member, score], ...] instead of a flat list
};

// Pops min(count, size) members from one end of the non-empty z at `key`, replies
// them, and logs the pop as ZPOPMIN/ZPOPMAX key [count].
void PopAndReply(CommandContext& ctx, std::string_view key, Entry* e, SortedSetValue* z, bool max,
                 int64_t count, bool count_given, PopReply shape) {
  const size_t n = std::min<size_t>(static_cast<size_t>(count), z->size());
  std::vector<std::pair<std::string, double>> popped;
  popped.reserve(n);
  const size_t lo = max ? z->size() - n : 0;
  z->ForRanks(lo, lo + n - 1, max, [&](const ZEntry& x) { popped.emplace_back(x.member, x.score); });
  z->RemoveRanks(lo, lo + n - 1);
  protocol::ReplyWriter& r = ctx.reply;
  if (shape.emit_key && shape.nested) {
    r.ArrayHeader(2);
    r.Bulk(key);
    r.ArrayHeader(n);
  } else if (shape.emit_key) {
    r.ArrayHeader(n * 2 + 1);
    r.Bulk(key);
  } else {
    r.ArrayHeader(shape.nested ? n : n * 2);
  }
  for (const auto& [member, score] : popped) {
    if (shape.nested) r.ArrayHeader(2);
    r.Bulk(member);
    r.Score(score);
  }
  std::vector<std::string> logged = {max ? "ZPOPMAX" : "ZPOPMIN", std::string(key)};
  if (count_given) logged.push_back(std::to_string(n));
  ctx.PropagateAs(std::move(logged));
  ctx.Touched(ctx.client.db, key);
  ZAfterRemoval(ctx, key, e, z);
  ctx.Dirty(static_cast<int64_t>(n));
}

// ZPOPMIN / ZPOPMAX key [count]
void ZPopMinMax(CommandContext& ctx, bool max) {
  if (ctx.argc() > 3) return ctx.SyntaxError();
  int64_t count = 1;
  const bool count_given = ctx.argc() == 3;
  if (count_given) {
    // Redis's getPositiveLongFromObjectOrReply: one text for junk and negatives.
    if (!ParseCanonicalInt64(ctx.arg(2), &count) || count < 0) {
      return ctx.Error(protocol::err::kNotPositive);
    }
  }
  Entry* e;
  SortedSetValue* z;
  if (!LookupZset(ctx, ctx.arg(1), false, &e, &z)) return;
  if (z == nullptr || count == 0) return ctx.reply.ArrayHeader(0);
  // RESP3 nests pairs only when a count was given, as Redis.
  PopAndReply(ctx, ctx.arg(1), e, z, max, count, count_given,
              PopReply{false, ctx.reply.resp() >= 3 && count_given});
}

void ZPopMin(CommandContext& ctx) { ZPopMinMax(ctx, false); }
void ZPopMax(CommandContext& ctx) { ZPopMinMax(ctx, true); }

// A blocking command's timeout in seconds (a float), as Redis's
// getTimeoutFromObjectOrReply: *deadline_ms is unix ms, 0 for none.
bool BlockTimeoutArg(CommandContext& ctx, size_t i, int64_t* deadline_ms) {
  const std::string text(ctx.arg(i));
  char* end = nullptr;
  errno = 0;
  const long double secs = std::strtold(text.c_str(), &end);
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0])) || *end != '\0' ||
      std::isnan(secs) || (errno == ERANGE && std::isinf(secs))) {
    ctx.Error(protocol::err::kTimeoutNotFloat);
    return false;
  }
  const long double ms = std::ceil(secs * 1000.0L);
  if (ms > static_cast<long double>(INT64_MAX) / 2) {
    ctx.Error(protocol::err::kTimeoutOutOfRange);
    return false;
  }
  if (ms < 0) {
    ctx.Error(protocol::err::kTimeoutNegative);
    return false;
  }
  *deadline_ms = ms > 0 ? NowMs() + static_cast<int64_t>(ms) : 0;
  return true;
}

// The blocking pops: the first non-empty key of args[first..first+nkeys) is popped;
// when all are empty the client parks on them until one changes or the deadline.
void BlockingPop(CommandContext& ctx, size_t first, size_t nkeys, bool max, int64_t count,
                 bool count_given, PopReply shape, int64_t deadline_ms) {
  // Run again after a wake-up: the first wait's deadline holds, and a key that now
  // holds another type is passed over (Redis 7.0 leaves such a client blocked).
  const bool retry = ctx.client.retry_deadline_ms >= 0;
  if (retry) deadline_ms = ctx.client.retry_deadline_ms;
  for (size_t i = first; i < first + nkeys; ++i) {
    Entry* e = ctx.db().Find(ctx.arg(i));
    if (e != nullptr && e->has_expire) e = ctx.db().Lookup(ctx.arg(i), ctx.now_ms());
    if (e == nullptr) continue;
    if (e->type != ValueType::kZset) {
      if (retry) continue;
      return ctx.WrongType();
    }
    auto* z = static_cast<SortedSetValue*>(Database::GetObject(e));
    return PopAndReply(ctx, ctx.arg(i), e, z, max, count, count_given, shape);
  }
  int64_t timeout_ms = 0;
  if (deadline_ms > 0) {
    timeout_ms = deadline_ms - NowMs();
    if (timeout_ms <= 0) return ctx.reply.NullArray();
  }
  if (!ctx.can_block()) return ctx.reply.NullArray();
  WaitCondition cond;
  cond.what = WaitFor::kKeyReady;
  cond.db = ctx.client.db;
  for (size_t i = first; i < first + nkeys; ++i) cond.keys.emplace_back(ctx.arg(i));
  std::vector<std::string> argv(ctx.args.begin(), ctx.args.end());
  Server& server = ctx.server;
  server.waiting().Park(ctx.client, std::move(cond), timeout_ms,
                        [&server, argv = std::move(argv), deadline_ms](Client& c, WaitEnd end) {
                          if (end != WaitEnd::kReady) {
                            protocol::ReplyWriter(&c.out, c.resp).NullArray();
                            return;
                          }
                          std::vector<std::string_view> views(argv.begin(), argv.end());
                          c.retry_deadline_ms = deadline_ms;
                          server.Execute(c, views);
                          c.retry_deadline_ms = -1;
                        });
}

// BZPOPMIN / BZPOPMAX key [key ...] timeout
void BZPopMinMax(CommandContext& ctx, bool max) {
  int64_t deadline;
  if (!BlockTimeoutArg(ctx, ctx.argc() - 1, &deadline)) return;
  BlockingPop(ctx, 1, ctx.argc() - 2, max, 1, false, PopReply{true, false}, deadline);
}

void BZPopMin(CommandContext& ctx) { BZPopMinMax(ctx, false); }
void BZPopMax(CommandContext& ctx) { BZPopMinMax(ctx, true); }

// [B]ZMPOP [timeout] numkeys key [key ...] MIN|MAX [COUNT count]
void ZMPopGeneric(CommandContext& ctx, size_t numkeys_idx, bool blocking) {
  int64_t numkeys;
  if (!ParseCanonicalInt64(ctx.arg(numkeys_idx), &numkeys) || numkeys < 1) {
    return ctx.Error(protocol::err::kNumkeysNotPositive);
  }
  if (static_cast<uint64_t>(numkeys) >= ctx.argc() - numkeys_idx - 1) return ctx.SyntaxError();
  const size_t where_idx = numkeys_idx + static_cast<size_t>(numkeys) + 1;
  bool max;
  if (EqualsIgnoreCase(ctx.arg(where_idx), "min")) {
    max = false;
  } else if (EqualsIgnoreCase(ctx.arg(where_idx), "max")) {
    max = true;
  } else {
    return ctx.SyntaxError();
  }
  int64_t count = -1;
  for (size_t j = where_idx + 1; j < ctx.argc(); ++j) {
    if (count == -1 && EqualsIgnoreCase(ctx.arg(j), "count") && j + 1 < ctx.argc()) {
      ++j;
      if (!ParseCanonicalInt64(ctx.arg(j), &count) || count < 1) {
        return ctx.Error(protocol::err::kCountNotPositive);
      }
    } else {
      return ctx.SyntaxError();
    }
  }
  if (count == -1) count = 1;
  const PopReply shape{true, true};
  const size_t first = numkeys_idx + 1;
  const auto nkeys = static_cast<size_t>(numkeys);
  if (blocking) {
    int64_t deadline;
    if (!BlockTimeoutArg(ctx, 1, &deadline)) return;
    return BlockingPop(ctx, first, nkeys, max, count, true, shape, deadline);
  }
  for (size_t i = first; i < first + nkeys; ++i) {
    Entry* e;
    SortedSetValue* z;
    if (!LookupZset(ctx, ctx.arg(i), false, &e, &z)) return;
    if (z != nullptr) return PopAndReply(ctx, ctx.arg(i), e, z, max, count, true, shape);
  }
  ctx.reply.NullArray();
}

void ZMPop(CommandContext& ctx) { ZMPopGeneric(ctx, 1, false); }
void BZMPop(CommandContext& ctx) { ZMPopGeneric(ctx, 2, true); }

void ReplyEntry(protocol::ReplyWriter& r, const ZEntry& x, bool withscores) {
  if (withscores && r.resp() >= 3) r.ArrayHeader(2);
  r.Bulk(x.member);
  if (withscores) r.Score(x.score);
}

// ZRANDMEMBER key [count [WITHSCORES]]
void ZRandMember(CommandContext& ctx) {
  if (ctx.argc() == 2) {
    Entry* e;
    SortedSetValue* z;
    if (!LookupZset(ctx, ctx.arg(1), true, &e, &z)) return;
    if (z == nullptr) return ctx.reply.Null();
    return ctx.reply.Bulk(z->Random(ctx.server.Random()).member);
  }
  int64_t count;
  if (!ctx.IntArg(2, &count)) return;
  bool withscores = false;
  if (ctx.argc() > 4 || (ctx.argc() == 4 && !EqualsIgnoreCase(ctx.arg(3), "withscores"))) {
    return ctx.SyntaxError();
  }
  if (ctx.argc() == 4) {
    withscores = true;
    if (count < INT64_MIN / 2 || count > INT64_MAX / 2) return ctx.Error(protocol::err::kValueOutOfRange);
  }
  Entry* e;
  SortedSetValue* z;
  if (!LookupZset(ctx, ctx.arg(1), true, &e, &z)) return;
  if (z == nullptr || count == 0) return ctx.reply.ArrayHeader(0);
  protocol::ReplyWriter& r = ctx.reply;
  const size_t size = z->size();
  if (count < 0) {
    // Repeats allowed: count independent picks.
    if (-count > 100'000'000) return ctx.Error(protocol::err::kCountTooLarge);
    const auto n = static_cast<size_t>(-count);
    r.ArrayHeader(withscores && r.resp() < 3 ? n * 2 : n);
    for (size_t i = 0; i < n; ++i) ReplyEntry(r, z->Random(ctx.server.Random()), withscores);
    return;
  }
  const auto want = static_cast<size_t>(count);
  if (want >= size) {
    // The whole set, highest first: Redis walks it from the tail.
    r.ArrayHeader(withscores && r.resp() < 3 ? size * 2 : size);
    z->ForRanks(0, size - 1, true, [&](const ZEntry& x) { ReplyEntry(r, x, withscores); });
    return;
  }
  // Distinct ranks: a partial Fisher-Yates shuffle over all ranks.
  std::vector<size_t> ranks(size);
  for (size_t i = 0; i < size; ++i) ranks[i] = i;
  for (size_t i = 0; i < want; ++i) std::swap(ranks[i], ranks[i + ctx.server.Random() % (size - i)]);
  r.ArrayHeader(withscores && r.resp() < 3 ? want * 2 : want);
  for (size_t i = 0; i < want; ++i) ReplyEntry(r, z->At(ranks[i]), withscores);
}

const CommandSpec kCommands[] = {
    {"zpopmin", -2, kWrite | kFast, 1, 1, 1, ZPopMin, "Returns the lowest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", "sorted-set", {}, {kKeyRW | kKeyAccess | kKeyDelete}},
    {"zpopmax", -2, kWrite | kFast, 1, 1, 1, ZPopMax, "Returns the highest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", "sorted-set", {}, {kKeyRW | kKeyAccess | kKeyDelete}},
    {"bzpopmin", -3, kWrite | kNoScript | kBlocking | kFast, 1, -2, 1, BZPopMin, "Removes and returns the member with the lowest score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", "sorted-set", {}, {kKeyRW | kKeyAccess | kKeyDelete}},
    {"bzpopmax", -3, kWrite | kNoScript | kBlocking | kFast, 1, -2, 1, BZPopMax, "Removes and returns the member with the highest score from one or more sorted sets. Blocks until a member available otherwise.  Deletes the sorted set if the last element was popped.", "sorted-set", {}, {kKeyRW | kKeyAccess | kKeyDelete}},
    {"zmpop", -4, kWrite | kKeyNum, 1, 1, 1, ZMPop, "Returns the highest- or lowest-scoring members from one or more sorted sets after removing them. Deletes the sorted set if the last member was popped.", "sorted-set", {}, {kKeyRW | kKeyAccess | kKeyDelete}},
    {"bzmpop", -5, kWrite | kBlocking | kKeyNum, 2, 2, 1, BZMPop, "Removes and returns a member by score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", "sorted-set", {}, {kKeyRW | kKeyAccess | kKeyDelete}},
    {"zrandmember", -2, kReadOnly | kRandom, 1, 1, 1, ZRandMember, "Returns one or more random members from a sorted set.", "sorted-set", {}, {kKeyRO | kKeyAccess}},
};

}  // namespace

std::span<const CommandSpec> ZsetPopCommands() { return kCommands; }

}  // namespace feedkv::server
