// Sorted-set range readers: ZRANGE (by rank, BYSCORE, BYLEX, REV, LIMIT,
// WITHSCORES), ZRANGESTORE, and the older ZREVRANGE, ZRANGEBYSCORE,
// ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX, all through one parser and one
// walk, as Redis 7.0's zrangeGenericCommand. Every range becomes a run of ascending
// ranks, walked forward or backward (storage/sorted_set.h: O(log n) to its start).
#include <string>
#include <vector>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/ops/index_range.h"
#include "server/ops/zset_ops.h"
#include "server/ops/zset_ranges.h"
#include "server/server.h"
#include "storage/database.h"
#include "storage/sorted_set.h"

namespace feedkv::server {

namespace {

enum class RangeType { kAuto, kRank, kScore, kLex };
enum class Direction { kAuto, kForward, kReverse };

struct RangeRequest {
  RangeType type = RangeType::kAuto;
  Direction direction = Direction::kAuto;
  bool store = false;
  bool withscores = false;
  bool has_limit = false;
  int64_t offset = 0;
  int64_t limit = -1;  // negative: no limit
};

// The ascending ranks [lo, hi) the request selects, walked from hi-1 down when
// reverse. False after replying an error.
struct Selection {
  size_t lo = 0, hi = 0;
  bool reverse = false;
};

// Applies LIMIT offset count to the ranks [lo, hi) in walk order.
void ApplyLimit(const RangeRequest& req, Selection* sel) {
  if (!req.has_limit) return;
  const size_t avail = sel->hi - sel->lo;
  if (req.offset < 0 || static_cast<uint64_t>(req.offset) >= avail) {
    sel->hi = sel->lo;
    return;
  }
  size_t take = avail - static_cast<size_t>(req.offset);
  if (req.limit >= 0 && static_cast<uint64_t>(req.limit) < take) take = static_cast<size_t>(req.limit);
  if (sel->reverse) {
    sel->hi -= static_cast<size_t>(req.offset);
    sel->lo = sel->hi - take;
  } else {
    sel->lo += static_cast<size_t>(req.offset);
    sel->hi = sel->lo + take;
  }
}

// The shared body. `src` is the source key's argument index; the range bounds
// follow it; options start at src + 3.
void RangeGeneric(CommandContext& ctx, size_t src, RangeRequest req) {
  for (size_t j = src + 3; j < ctx.argc(); ++j) {
    const std::string_view a = ctx.arg(j);
    const size_t left = ctx.argc() - j - 1;
    if (!req.store && EqualsIgnoreCase(a, "withscores")) {
      req.withscores = true;
    } else if (EqualsIgnoreCase(a, "limit") && left >= 2) {
      if (!ctx.IntArg(j + 1, &req.offset) || !ctx.IntArg(j + 2, &req.limit)) return;
      req.has_limit = true;
      j += 2;
    } else if (req.direction == Direction::kAuto && EqualsIgnoreCase(a, "rev")) {
      req.direction = Direction::kReverse;
    } else if (req.type == RangeType::kAuto && EqualsIgnoreCase(a, "bylex")) {
      req.type = RangeType::kLex;
    } else if (req.type == RangeType::kAuto && EqualsIgnoreCase(a, "byscore")) {
      req.type = RangeType::kScore;
    } else {
      return ctx.SyntaxError();
    }
  }
  if (req.direction == Direction::kAuto) req.direction = Direction::kForward;
  if (req.type == RangeType::kAuto) req.type = RangeType::kRank;
  // Redis tells "no LIMIT" by a count of -1, so "LIMIT 0 -1" passes this check.
  if (req.has_limit && req.limit != -1 && req.type == RangeType::kRank) {
    return ctx.Error(protocol::err::kZrangeLimit);
  }
  if (req.withscores && req.type == RangeType::kLex) return ctx.Error(protocol::err::kZrangeLexScores);
  const bool reverse = req.direction == Direction::kReverse;
  size_t min_idx = src + 1, max_idx = src + 2;
  if (reverse && req.type != RangeType::kRank) std::swap(min_idx, max_idx);

  int64_t start = 0, end = 0;
  ScoreRange score_range;
  LexRange lex_range;
  switch (req.type) {
    case RangeType::kRank:
      if (!ctx.IntArg(min_idx, &start) || !ctx.IntArg(max_idx, &end)) return;
      break;
    case RangeType::kScore:
      if (!score_range.Parse(ctx.arg(min_idx), ctx.arg(max_idx))) {
        return ctx.Error(protocol::err::kZsetMinMaxFloat);
      }
      break;
    case RangeType::kLex:
      if (!lex_range.Parse(ctx.arg(min_idx), ctx.arg(max_idx))) {
        return ctx.Error(protocol::err::kZsetMinMaxLex);
      }
      break;
    case RangeType::kAuto:
      break;
  }

  const SortedSetValue* z;
  if (!ctx.Found(zset_ops::Find(ctx, ctx.arg(src)), &z)) return;
  Selection sel;
  sel.reverse = reverse;
  if (z != nullptr) {
    switch (req.type) {
      case RangeType::kRank: {
        size_t lo, hi;
        if (ResolveRange(start, end, z->size(), &lo, &hi)) {
          // A reverse rank range counts from the end.
          sel.lo = reverse ? z->size() - 1 - hi : lo;
          sel.hi = reverse ? z->size() - lo : hi + 1;
        }
        break;
      }
      case RangeType::kScore:
        if (!score_range.Empty()) score_range.Ranks(*z, &sel.lo, &sel.hi);
        break;
      case RangeType::kLex:
        if (!lex_range.Empty()) lex_range.Ranks(*z, &sel.lo, &sel.hi);
        break;
      case RangeType::kAuto:
        break;
    }
    // A rank range ignores LIMIT (only "LIMIT n -1" gets this far), as Redis.
    if (req.type != RangeType::kRank) ApplyLimit(req, &sel);
  }
  const size_t n = sel.hi - sel.lo;

  if (req.store) {
    std::unique_ptr<SortedSetValue> result;
    if (n > 0) {
      size_t max_len = 0;
      z->ForRanks(sel.lo, sel.hi - 1, false, [&](const ZEntry& x) { max_len = std::max(max_len, x.member.size()); });
      const ZsetLimits limits = zset_ops::Limits(ctx);
      result = SortedSetValue::Create(n, max_len, limits);
      double unused;
      z->ForRanks(sel.lo, sel.hi - 1, false, [&](const ZEntry& x) {
        result->Add(x.member, x.score, 0, limits, &unused);
      });
    }
    return ctx.reply.Integer(static_cast<int64_t>(zset_ops::Store(ctx, ctx.arg(1), std::move(result))));
  }

  protocol::ReplyWriter& r = ctx.reply;
  const bool pairs = req.withscores && r.resp() >= 3;
  r.ArrayHeader(req.withscores && !pairs ? n * 2 : n);
  if (n == 0) return;
  z->ForRanks(sel.lo, sel.hi - 1, reverse, [&](const ZEntry& x) {
    if (pairs) r.ArrayHeader(2);
    r.Bulk(x.member);
    if (req.withscores) r.Score(x.score);
  });
}

void ZRange(CommandContext& ctx) { RangeGeneric(ctx, 1, RangeRequest{}); }

void ZRangeStore(CommandContext& ctx) {
  RangeRequest req;
  req.store = true;
  RangeGeneric(ctx, 2, req);
}

void Preset(CommandContext& ctx, RangeType type, Direction direction) {
  RangeRequest req;
  req.type = type;
  req.direction = direction;
  RangeGeneric(ctx, 1, req);
}

void ZRevRange(CommandContext& ctx) { Preset(ctx, RangeType::kRank, Direction::kReverse); }
void ZRangeByScore(CommandContext& ctx) { Preset(ctx, RangeType::kScore, Direction::kForward); }
void ZRevRangeByScore(CommandContext& ctx) { Preset(ctx, RangeType::kScore, Direction::kReverse); }
void ZRangeByLex(CommandContext& ctx) { Preset(ctx, RangeType::kLex, Direction::kForward); }
void ZRevRangeByLex(CommandContext& ctx) { Preset(ctx, RangeType::kLex, Direction::kReverse); }

constexpr uint32_t kW = kWrite | kDenyOom;

const CommandSpec kCommands[] = {
    {"zrange", -4, kReadOnly, 1, 1, 1, ZRange, "Return a range of members in a sorted set", "sorted-set", {}, {kKeyRO | kKeyAccess}},
    {"zrangestore", -5, kW, 1, 2, 1, ZRangeStore, "Store a range of members from sorted set into another key", "sorted-set", {}, {kKeyOW | kKeyUpdate, kKeyRO | kKeyAccess}},
    {"zrevrange", -4, kReadOnly, 1, 1, 1, ZRevRange, "Return a range of members in a sorted set, by index, with scores ordered from high to low", "sorted-set", {}, {kKeyRO | kKeyAccess}},
    {"zrangebyscore", -4, kReadOnly, 1, 1, 1, ZRangeByScore, "Return a range of members in a sorted set, by score", "sorted-set", {}, {kKeyRO | kKeyAccess}},
    {"zrevrangebyscore", -4, kReadOnly, 1, 1, 1, ZRevRangeByScore, "Return a range of members in a sorted set, by score, with scores ordered from high to low", "sorted-set", {}, {kKeyRO | kKeyAccess}},
    {"zrangebylex", -4, kReadOnly, 1, 1, 1, ZRangeByLex, "Return a range of members in a sorted set, by lexicographical range", "sorted-set", {}, {kKeyRO | kKeyAccess}},
    {"zrevrangebylex", -4, kReadOnly, 1, 1, 1, ZRevRangeByLex, "Return a range of members in a sorted set, by lexicographical range, ordered from higher to lower strings.", "sorted-set", {}, {kKeyRO | kKeyAccess}},
};

}  // namespace

std::span<const CommandSpec> ZsetRangeCommands() { return kCommands; }

}  // namespace feedkv::server
