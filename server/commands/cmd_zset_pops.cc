// Sorted-set pops and random reads: ZPOPMIN, ZPOPMAX, ZMPOP, the blocking
// BZPOPMIN, BZPOPMAX and BZMPOP, and ZRANDMEMBER, with Redis 7.0's reply shapes and
// error texts. A blocking pop that finds every key empty parks its client on those
// keys (WaitingClients); a write that changes one of them wakes it, and the command
// runs again with its first deadline. A served pop is logged as ZPOPMIN/ZPOPMAX of
// the key it popped from, so the log and replicas never block.
#include <string>
#include <vector>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/commands/blocking.h"
#include "server/ops/zset_ops.h"
#include "server/server.h"
#include "storage/sorted_set.h"

namespace feedkv::server {

namespace {

// How a pop replies (Redis's genericZpopCommand flags).
struct PopReply {
  bool emit_key = false;  // BZPOP*, ZMPOP: the key comes first
  bool nested = false;    // [[member, score], ...] instead of a flat list
};

// Pops min(count, size) members from one end of the sorted set at `key` (an empty
// reply when it is missing) and replies them in `shape`; logged as ZPOPMIN/ZPOPMAX
// key [count].
void PopAndReply(CommandContext& ctx, std::string_view key, bool max, int64_t count, bool count_given,
                 PopReply shape) {
  StatusOr<std::vector<std::pair<std::string, double>>> popped =
      zset_ops::Pop(ctx, key, max, static_cast<size_t>(count), count_given);
  if (!popped.ok()) return ctx.Error(popped.status());
  protocol::ReplyWriter& r = ctx.reply;
  const size_t n = popped->size();
  if (n == 0) return r.ArrayHeader(0);
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
  for (const auto& [member, score] : *popped) {
    if (shape.nested) r.ArrayHeader(2);
    r.Bulk(member);
    r.Score(score);
  }
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
  // RESP3 nests pairs only when a count was given, as Redis.
  PopAndReply(ctx, ctx.arg(1), max, count, count_given, PopReply{false, ctx.reply.resp() >= 3 && count_given});
}

void ZPopMin(CommandContext& ctx) { ZPopMinMax(ctx, false); }
void ZPopMax(CommandContext& ctx) { ZPopMinMax(ctx, true); }

// The blocking pops: the first non-empty key of args[first..first+nkeys) is popped;
// when all are empty the client parks on them until one changes or the deadline.
void BlockingPop(CommandContext& ctx, size_t first, size_t nkeys, bool max, int64_t count,
                 bool count_given, PopReply shape, int64_t deadline_ms) {
  // Run again after a wake-up: the first wait's deadline holds, and a key that now
  // holds another type is passed over (Redis 7.0 leaves such a client blocked).
  const bool retry = IsRetry(ctx);
  for (size_t i = first; i < first + nkeys; ++i) {
    Entry* e;
    SortedSetValue* z;
    if (!zset_ops::FindForWrite(ctx, ctx.arg(i), &e, &z).ok()) {
      if (retry) continue;
      return ctx.WrongType();
    }
    if (z != nullptr) return PopAndReply(ctx, ctx.arg(i), max, count, count_given, shape);
  }
  std::vector<std::string> keys;
  for (size_t i = first; i < first + nkeys; ++i) keys.emplace_back(ctx.arg(i));
  ParkOnKeys(ctx, std::move(keys), deadline_ms, TimeoutReply::kNullArray);
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
  MPopArgs m;
  if (!ParseMPopArgs(ctx, numkeys_idx, "min", "max", &m)) return;
  const bool max = !m.end_a;
  const PopReply shape{true, true};
  if (blocking) {
    int64_t deadline;
    if (!BlockTimeoutArg(ctx, 1, &deadline)) return;
    return BlockingPop(ctx, m.first, m.nkeys, max, m.count, true, shape, deadline);
  }
  for (size_t i = m.first; i < m.first + m.nkeys; ++i) {
    Entry* e;
    SortedSetValue* z;
    if (Status st = zset_ops::FindForWrite(ctx, ctx.arg(i), &e, &z); !st.ok()) return ctx.Error(st);
    if (z != nullptr) return PopAndReply(ctx, ctx.arg(i), max, m.count, true, shape);
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
    const SortedSetValue* z;
    if (!ctx.Found(zset_ops::Find(ctx, ctx.arg(1)), &z)) return;
    if (z == nullptr) return ctx.reply.Null();
    return ctx.reply.Bulk(z->Random(ctx.server.Random()).member);
  }
  int64_t count;
  if (!ctx.IntArg(2, &count)) return;
  if (count == INT64_MIN) return ctx.Error(protocol::err::kCountRange);  // Redis's range is -LONG_MAX..LONG_MAX
  bool withscores = false;
  if (ctx.argc() > 4 || (ctx.argc() == 4 && !EqualsIgnoreCase(ctx.arg(3), "withscores"))) {
    return ctx.SyntaxError();
  }
  if (ctx.argc() == 4) {
    withscores = true;
    if (count < INT64_MIN / 2 || count > INT64_MAX / 2) return ctx.Error(protocol::err::kValueOutOfRange);
  }
  const SortedSetValue* z;
  if (!ctx.Found(zset_ops::Find(ctx, ctx.arg(1)), &z)) return;
  if (z == nullptr || count == 0) return ctx.reply.ArrayHeader(0);
  protocol::ReplyWriter& r = ctx.reply;
  const size_t size = z->size();
  if (count < 0) {
    // Repeats allowed: count independent picks.
    // Stopped by a hard output limit, as in Redis; refused without one.
    if (-count > 100'000'000 && !ctx.ReplyLimited()) return ctx.Error(protocol::err::kCountTooLarge);
    const auto n = static_cast<size_t>(-count);
    r.ArrayHeader(withscores && r.resp() < 3 ? n * 2 : n);
    for (size_t i = 0; i < n && !ctx.ReplyOverLimit(); ++i) ReplyEntry(r, z->Random(ctx.server.Random()), withscores);
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
    {"zpopmin", -2, kWrite | kFast, 1, 1, 1, ZPopMin, "Remove and return members with the lowest scores in a sorted set", "sorted-set", {}, {kKeyRW | kKeyAccess | kKeyDelete}},
    {"zpopmax", -2, kWrite | kFast, 1, 1, 1, ZPopMax, "Remove and return members with the highest scores in a sorted set", "sorted-set", {}, {kKeyRW | kKeyAccess | kKeyDelete}},
    {"bzpopmin", -3, kWrite | kNoScript | kBlocking | kFast, 1, -2, 1, BZPopMin, "Remove and return the member with the lowest score from one or more sorted sets, or block until one is available", "sorted-set", {}, {kKeyRW | kKeyAccess | kKeyDelete}},
    {"bzpopmax", -3, kWrite | kNoScript | kBlocking | kFast, 1, -2, 1, BZPopMax, "Remove and return the member with the highest score from one or more sorted sets, or block until one is available", "sorted-set", {}, {kKeyRW | kKeyAccess | kKeyDelete}},
    {"zmpop", -4, kWrite | kKeyNum, 1, 1, 1, ZMPop, "Remove and return members with scores in a sorted set", "sorted-set", {}, {kKeyRW | kKeyAccess | kKeyDelete}},
    {"bzmpop", -5, kWrite | kBlocking | kKeyNum, 2, 2, 1, BZMPop, "Remove and return members with scores in a sorted set or block until one is available", "sorted-set", {}, {kKeyRW | kKeyAccess | kKeyDelete}},
    {"zrandmember", -2, kReadOnly | kRandom, 1, 1, 1, ZRandMember, "Get one or multiple random elements from a sorted set", "sorted-set", {}, {kKeyRO | kKeyAccess}},
};

}  // namespace

std::span<const CommandSpec> ZsetPopCommands() { return kCommands; }

}  // namespace feedkv::server
