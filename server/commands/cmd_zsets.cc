// Sorted-set commands on one key: ZADD, ZINCRBY, ZREM, ZCARD, ZSCORE, ZMSCORE,
// ZRANK, ZREVRANK, ZCOUNT, ZLEXCOUNT, ZREMRANGEBYRANK/SCORE/LEX. Semantics, replies
// (scores formatted as Redis 7.0 does) and error texts follow Redis 7.0's t_zset.c.
// Handlers parse, call a sorted-set operation (server/ops/zset_ops.h) or read the
// sorted set it finds, reply.
// The range readers are in cmd_zset_ranges.cc; the structure in storage/sorted_set.h.
#include <string>
#include <vector>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/ops/zset_ops.h"
#include "server/ops/zset_ranges.h"
#include "server/server.h"
#include "storage/sorted_set.h"

namespace feedkv::server {

namespace {

// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...], and ZINCRBY
// as ZADD INCR.
void ZAddGeneric(CommandContext& ctx, size_t first_pair, int flags, bool ch) {
  const size_t rest = ctx.argc() - first_pair;
  if (rest == 0 || rest % 2 != 0) return ctx.SyntaxError();
  const size_t pairs = rest / 2;
  if ((flags & SortedSetValue::kNX) && (flags & SortedSetValue::kXX)) {
    return ctx.Error(protocol::err::kZaddXXNX);
  }
  const int gt_lt_nx = SortedSetValue::kGT | SortedSetValue::kLT | SortedSetValue::kNX;
  if (__builtin_popcount(static_cast<unsigned>(flags & gt_lt_nx)) > 1) {
    return ctx.Error(protocol::err::kZaddGtLtNx);
  }
  const bool incr = (flags & SortedSetValue::kIncr) != 0;
  if (incr && pairs > 1) return ctx.Error(protocol::err::kZaddIncrPairs);
  // Every score is checked before anything changes: all or nothing.
  std::vector<double> scores(pairs);
  for (size_t j = 0; j < pairs; ++j) {
    if (!ctx.DoubleArg(first_pair + 2 * j, &scores[j])) return;
  }
  StatusOr<zset_ops::AddOutcome> out =
      zset_ops::Add(ctx, ctx.arg(1), flags, scores, ctx.args.subspan(first_pair));
  if (!out.ok()) return ctx.Error(out.status());
  if (incr) return out->processed > 0 ? ctx.reply.Score(out->score) : ctx.reply.Null();
  ctx.reply.Integer(ch ? out->added + out->updated : out->added);
}

void ZAdd(CommandContext& ctx) {
  int flags = 0;
  bool ch = false;
  size_t i = 2;
  for (; i < ctx.argc(); ++i) {
    const std::string_view a = ctx.arg(i);
    if (EqualsIgnoreCase(a, "nx")) {
      flags |= SortedSetValue::kNX;
    } else if (EqualsIgnoreCase(a, "xx")) {
      flags |= SortedSetValue::kXX;
    } else if (EqualsIgnoreCase(a, "gt")) {
      flags |= SortedSetValue::kGT;
    } else if (EqualsIgnoreCase(a, "lt")) {
      flags |= SortedSetValue::kLT;
    } else if (EqualsIgnoreCase(a, "ch")) {
      ch = true;
    } else if (EqualsIgnoreCase(a, "incr")) {
      flags |= SortedSetValue::kIncr;
    } else {
      break;
    }
  }
  ZAddGeneric(ctx, i, flags, ch);
}

void ZIncrBy(CommandContext& ctx) { ZAddGeneric(ctx, 2, SortedSetValue::kIncr, false); }

void ZRem(CommandContext& ctx) {
  StatusOr<size_t> removed = zset_ops::Remove(ctx, ctx.arg(1), ctx.args.subspan(2));
  if (!removed.ok()) return ctx.Error(removed.status());
  ctx.reply.Integer(static_cast<int64_t>(*removed));
}

void ZCard(CommandContext& ctx) {
  const SortedSetValue* z;
  if (!ctx.Found(zset_ops::Find(ctx, ctx.arg(1)), &z)) return;
  ctx.reply.Integer(z != nullptr ? static_cast<int64_t>(z->size()) : 0);
}

void ZScore(CommandContext& ctx) {
  const SortedSetValue* z;
  if (!ctx.Found(zset_ops::Find(ctx, ctx.arg(1)), &z)) return;
  double score;
  if (z != nullptr && z->Score(ctx.arg(2), &score)) return ctx.reply.Score(score);
  ctx.reply.Null();
}

void ZMScore(CommandContext& ctx) {
  const SortedSetValue* z;
  if (!ctx.Found(zset_ops::Find(ctx, ctx.arg(1)), &z)) return;
  ctx.reply.ArrayHeader(ctx.argc() - 2);
  for (size_t i = 2; i < ctx.argc(); ++i) {
    double score;
    if (z != nullptr && z->Score(ctx.arg(i), &score)) {
      ctx.reply.Score(score);
    } else {
      ctx.reply.Null();
    }
  }
}

void ZRankGeneric(CommandContext& ctx, bool reverse) {
  const SortedSetValue* z;
  if (!ctx.Found(zset_ops::Find(ctx, ctx.arg(1)), &z)) return;
  size_t rank;
  double score;
  if (z == nullptr || !z->Rank(ctx.arg(2), &rank, &score)) return ctx.reply.Null();
  ctx.reply.Integer(static_cast<int64_t>(reverse ? z->size() - 1 - rank : rank));
}

void ZRank(CommandContext& ctx) { ZRankGeneric(ctx, false); }
void ZRevRank(CommandContext& ctx) { ZRankGeneric(ctx, true); }

template <class Range>
void CountInRange(CommandContext& ctx, const Range& range) {
  const SortedSetValue* z;
  if (!ctx.Found(zset_ops::Find(ctx, ctx.arg(1)), &z)) return;
  size_t lo = 0, hi = 0;
  if (z != nullptr && !range.Empty()) range.Ranks(*z, &lo, &hi);
  ctx.reply.Integer(static_cast<int64_t>(hi - lo));
}

void ZCount(CommandContext& ctx) {
  ScoreRange range;
  if (!range.Parse(ctx.arg(2), ctx.arg(3))) return ctx.Error(protocol::err::kZsetMinMaxFloat);
  CountInRange(ctx, range);
}

void ZLexCount(CommandContext& ctx) {
  LexRange range;
  if (!range.Parse(ctx.arg(2), ctx.arg(3))) return ctx.Error(protocol::err::kZsetMinMaxLex);
  CountInRange(ctx, range);
}

void ZRemRangeByRank(CommandContext& ctx) {
  int64_t start, end;
  if (!ctx.IntArg(2, &start) || !ctx.IntArg(3, &end)) return;
  StatusOr<size_t> removed = zset_ops::RemoveRankRange(ctx, ctx.arg(1), start, end);
  if (!removed.ok()) return ctx.Error(removed.status());
  ctx.reply.Integer(static_cast<int64_t>(*removed));
}

template <class Range>
void RemoveInRange(CommandContext& ctx, const Range& range) {
  StatusOr<size_t> removed = zset_ops::RemoveInRange(ctx, ctx.arg(1), range);
  if (!removed.ok()) return ctx.Error(removed.status());
  ctx.reply.Integer(static_cast<int64_t>(*removed));
}

void ZRemRangeByScore(CommandContext& ctx) {
  ScoreRange range;
  if (!range.Parse(ctx.arg(2), ctx.arg(3))) return ctx.Error(protocol::err::kZsetMinMaxFloat);
  RemoveInRange(ctx, range);
}

void ZRemRangeByLex(CommandContext& ctx) {
  LexRange range;
  if (!range.Parse(ctx.arg(2), ctx.arg(3))) return ctx.Error(protocol::err::kZsetMinMaxLex);
  RemoveInRange(ctx, range);
}

constexpr uint32_t kW = kWrite | kDenyOom;

const CommandSpec kCommands[] = {
    {"zadd", -4, kW | kFast, 1, 1, 1, ZAdd, "Add one or more members to a sorted set, or update its score if it already exists", "sorted-set", {}, {kKeyRW | kKeyUpdate}},
    {"zincrby", 4, kW | kFast, 1, 1, 1, ZIncrBy, "Increment the score of a member in a sorted set", "sorted-set", {}, {kKeyRW | kKeyUpdate}},
    {"zrem", -3, kWrite | kFast, 1, 1, 1, ZRem, "Remove one or more members from a sorted set", "sorted-set", {}, {kKeyRW | kKeyDelete}},
    {"zcard", 2, kReadOnly | kFast, 1, 1, 1, ZCard, "Get the number of members in a sorted set", "sorted-set", {}, {kKeyRO}},
    {"zscore", 3, kReadOnly | kFast, 1, 1, 1, ZScore, "Get the score associated with the given member in a sorted set", "sorted-set", {}, {kKeyRO | kKeyAccess}},
    {"zmscore", -3, kReadOnly | kFast, 1, 1, 1, ZMScore, "Get the score associated with the given members in a sorted set", "sorted-set", {}, {kKeyRO | kKeyAccess}},
    {"zrank", 3, kReadOnly | kFast, 1, 1, 1, ZRank, "Determine the index of a member in a sorted set", "sorted-set", {}, {kKeyRO | kKeyAccess}},
    {"zrevrank", 3, kReadOnly | kFast, 1, 1, 1, ZRevRank, "Determine the index of a member in a sorted set, with scores ordered from high to low", "sorted-set", {}, {kKeyRO | kKeyAccess}},
    {"zcount", 4, kReadOnly | kFast, 1, 1, 1, ZCount, "Count the members in a sorted set with scores within the given values", "sorted-set", {}, {kKeyRO | kKeyAccess}},
    {"zlexcount", 4, kReadOnly | kFast, 1, 1, 1, ZLexCount, "Count the number of members in a sorted set between a given lexicographical range", "sorted-set", {}, {kKeyRO | kKeyAccess}},
    {"zremrangebyrank", 4, kWrite, 1, 1, 1, ZRemRangeByRank, "Remove all members in a sorted set within the given indexes", "sorted-set", {}, {kKeyRW | kKeyDelete}},
    {"zremrangebyscore", 4, kWrite, 1, 1, 1, ZRemRangeByScore, "Remove all members in a sorted set within the given scores", "sorted-set", {}, {kKeyRW | kKeyDelete}},
    {"zremrangebylex", 4, kWrite, 1, 1, 1, ZRemRangeByLex, "Remove all members in a sorted set between the given lexicographical range", "sorted-set", {}, {kKeyRW | kKeyDelete}},
};

}  // namespace

std::span<const CommandSpec> ZsetCommands() { return kCommands; }

}  // namespace feedkv::server
