// Sorted-set algebra and scans: ZUNION, ZINTER, ZDIFF, their STORE forms,
// ZINTERCARD, and ZSCAN, as Redis 7.0's zunionInterDiffGenericCommand and zscan:
// sources may be sorted sets or sets (a set member scores 1), WEIGHTS and
// AGGREGATE SUM|MIN|MAX, results ordered by (score, member).
#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/commands/lookup.h"
#include "server/commands/scan_args.h"
#include "server/ops/zset_ops.h"
#include "server/glob.h"
#include "server/server.h"
#include "storage/database.h"
#include "storage/set_value.h"
#include "storage/sorted_set.h"

namespace feedkv::server {

namespace {

enum class SetOp { kUnion, kInter, kDiff };
enum class Aggregate { kSum, kMin, kMax };

// One input: a sorted set, a set (every member scores 1), or a missing key.
struct Source {
  const SortedSetValue* zset = nullptr;
  const SetValue* set = nullptr;
  double weight = 1;

  const void* subject() const { return zset != nullptr ? static_cast<const void*>(zset) : set; }
  size_t size() const { return zset != nullptr ? zset->size() : set != nullptr ? set->size() : 0; }
  bool Find(std::string_view member, double* score) const {
    if (zset != nullptr) return zset->Score(member, score);
    *score = 1;
    return set != nullptr && set->Contains(member);
  }
  // f(std::string_view member, double score) for every member.
  template <class F>
  void ForEach(F&& f) const {
    if (zset != nullptr) {
      zset->ForEach([&](const ZEntry& e) { f(e.member, e.score); });
    } else if (set != nullptr) {
      char buf[24];
      set->ForEach([&](const SetMember& m) { f(m.Text(buf), 1.0); });
    }
  }
};

void Combine(double* target, double value, Aggregate agg) {
  switch (agg) {
    case Aggregate::kSum:
      *target += value;
      if (std::isnan(*target)) *target = 0;  // inf + -inf, as Redis
      break;
    case Aggregate::kMin:
      *target = value < *target ? value : *target;
      break;
    case Aggregate::kMax:
      *target = value > *target ? value : *target;
      break;
  }
}

struct Request {
  SetOp op = SetOp::kUnion;
  bool store = false;             // *STORE: the destination is argument 1
  bool cardinality_only = false;  // ZINTERCARD
  bool withscores = false;
  Aggregate agg = Aggregate::kSum;
  int64_t limit = 0;              // ZINTERCARD LIMIT; 0: none
};

using Result = std::vector<std::pair<std::string, double>>;

// Computes the operation over `src` (already weighted); *card counts for ZINTERCARD.
void Compute(const Request& req, std::vector<Source>& src, Result* out, int64_t* card) {
  if (req.op != SetOp::kDiff) {
    std::stable_sort(src.begin(), src.end(), [](const Source& a, const Source& b) { return a.size() < b.size(); });
  }
  switch (req.op) {
    case SetOp::kInter: {
      if (src[0].size() == 0) return;
      bool stop = false;
      src[0].ForEach([&](std::string_view member, double s0) {
        if (stop) return;
        double score = src[0].weight * s0;
        if (std::isnan(score)) score = 0;
        for (size_t j = 1; j < src.size(); ++j) {
          double value;
          if (src[j].subject() == src[0].subject()) {
            value = s0 * src[j].weight;
          } else if (src[j].Find(member, &value)) {
            value *= src[j].weight;
          } else {
            return;
          }
          Combine(&score, value, req.agg);
        }
        if (req.cardinality_only) {
          ++*card;
          if (req.limit > 0 && *card >= req.limit) stop = true;
          return;
        }
        out->emplace_back(member, score);
      });
      break;
    }
    case SetOp::kUnion: {
      std::unordered_map<std::string, double> acc;
      for (const Source& s : src) {
        s.ForEach([&](std::string_view member, double v) {
          double score = s.weight * v;
          if (std::isnan(score)) score = 0;
          auto [it, fresh] = acc.try_emplace(std::string(member), score);
          if (!fresh) Combine(&it->second, score, req.agg);
        });
      }
      out->reserve(acc.size());
      for (auto& [member, score] : acc) out->emplace_back(member, score);
      break;
    }
    case SetOp::kDiff:
      src[0].ForEach([&](std::string_view member, double score) {
        double unused;
        for (size_t j = 1; j < src.size(); ++j) {
          if (src[j].Find(member, &unused)) return;
        }
        out->emplace_back(member, score);
      });
      break;
  }
  std::sort(out->begin(), out->end(), [](const auto& a, const auto& b) {
    return a.second < b.second || (a.second == b.second && a.first < b.first);
  });
}

// ZUNION/ZINTER/ZDIFF/ZINTERCARD numkeys key [key ...] [options], and the STORE forms
// with the destination first.
void SetOpGeneric(CommandContext& ctx, Request req) {
  const size_t numkeys_idx = req.store ? 2 : 1;
  int64_t setnum;
  if (!ctx.IntArg(numkeys_idx, &setnum)) return;
  if (setnum < 1) return ctx.Error(fmt::format(protocol::err::kNoInputKeys, ctx.spec.name));
  if (static_cast<uint64_t>(setnum) > ctx.argc() - numkeys_idx - 1) return ctx.SyntaxError();
  std::vector<Source> src(static_cast<size_t>(setnum));
  size_t j = numkeys_idx + 1;
  for (Source& s : src) {
    Entry* e = ctx.LookupRead(ctx.db(), ctx.arg(j++), ctx.now_ms());
    if (e == nullptr) continue;
    if (e->type == ValueType::kZset) {
      s.zset = static_cast<const SortedSetValue*>(Database::GetObject(e));
    } else if (e->type == ValueType::kSet) {
      s.set = static_cast<const SetValue*>(Database::GetObject(e));
    } else {
      return ctx.WrongType();
    }
  }
  while (j < ctx.argc()) {
    const size_t remaining = ctx.argc() - j;
    const std::string_view opt = ctx.arg(j);
    const bool weighted_op = req.op != SetOp::kDiff && !req.cardinality_only;
    if (weighted_op && remaining >= src.size() + 1 && EqualsIgnoreCase(opt, "weights")) {
      ++j;
      for (Source& s : src) {
        if (!ParseDouble(ctx.arg(j++), &s.weight)) return ctx.Error(protocol::err::kWeightNotFloat);
      }
    } else if (weighted_op && remaining >= 2 && EqualsIgnoreCase(opt, "aggregate")) {
      const std::string_view how = ctx.arg(j + 1);
      if (EqualsIgnoreCase(how, "sum")) {
        req.agg = Aggregate::kSum;
      } else if (EqualsIgnoreCase(how, "min")) {
        req.agg = Aggregate::kMin;
      } else if (EqualsIgnoreCase(how, "max")) {
        req.agg = Aggregate::kMax;
      } else {
        return ctx.SyntaxError();
      }
      j += 2;
    } else if (!req.store && !req.cardinality_only && EqualsIgnoreCase(opt, "withscores")) {
      req.withscores = true;
      ++j;
    } else if (req.cardinality_only && remaining >= 2 && EqualsIgnoreCase(opt, "limit")) {
      if (!ParseCanonicalInt64(ctx.arg(j + 1), &req.limit) || req.limit < 0) {
        return ctx.Error(protocol::err::kLimitNegative);
      }
      j += 2;
    } else {
      return ctx.SyntaxError();
    }
  }
  Result result;
  int64_t card = 0;
  Compute(req, src, &result, &card);
  if (req.cardinality_only) return ctx.reply.Integer(card);
  if (req.store) {
    std::unique_ptr<SortedSetValue> dst;
    if (!result.empty()) {
      size_t max_len = 0;
      for (const auto& [member, score] : result) max_len = std::max(max_len, member.size());
      const ZsetLimits limits = zset_ops::Limits(ctx);
      dst = SortedSetValue::Create(result.size(), max_len, limits);
      double unused;
      for (const auto& [member, score] : result) dst->Add(member, score, 0, limits, &unused);
    }
    return ctx.reply.Integer(static_cast<int64_t>(zset_ops::Store(ctx, ctx.arg(1), std::move(dst))));
  }
  protocol::ReplyWriter& r = ctx.reply;
  r.ArrayHeader(req.withscores && r.resp() < 3 ? result.size() * 2 : result.size());
  for (const auto& [member, score] : result) {
    if (req.withscores && r.resp() >= 3) r.ArrayHeader(2);
    r.Bulk(member);
    if (req.withscores) r.Score(score);
  }
}

void ZUnion(CommandContext& ctx) { SetOpGeneric(ctx, Request{SetOp::kUnion}); }
void ZInter(CommandContext& ctx) { SetOpGeneric(ctx, Request{SetOp::kInter}); }
void ZDiff(CommandContext& ctx) { SetOpGeneric(ctx, Request{SetOp::kDiff}); }
void ZUnionStore(CommandContext& ctx) { SetOpGeneric(ctx, Request{SetOp::kUnion, true}); }
void ZInterStore(CommandContext& ctx) { SetOpGeneric(ctx, Request{SetOp::kInter, true}); }
void ZDiffStore(CommandContext& ctx) { SetOpGeneric(ctx, Request{SetOp::kDiff, true}); }
void ZInterCard(CommandContext& ctx) { SetOpGeneric(ctx, Request{SetOp::kInter, false, true}); }

// ZSCAN key cursor [MATCH pattern] [COUNT count]
void ZScan(CommandContext& ctx) {
  uint64_t cursor;
  if (!ParseScanCursor(ctx, 2, &cursor)) return;
  const SortedSetValue* z;
  if (!ctx.Found(zset_ops::Find(ctx, ctx.arg(1)), &z)) return;
  if (z == nullptr) return ReplyEmptyScan(ctx);
  ScanOptions opt;
  if (!ParseScanOptions(ctx, 3, &opt)) return;
  std::vector<ZEntry> batch;
  const uint64_t next = z->Scan(cursor, static_cast<size_t>(opt.count), &batch);
  if (opt.has_pattern) {
    std::erase_if(batch, [&](const ZEntry& x) { return !GlobMatch(opt.pattern, x.member, false); });
  }
  ctx.reply.ArrayHeader(2);
  ctx.reply.Bulk(std::to_string(next));
  ctx.reply.ArrayHeader(batch.size() * 2);
  char buf[32];
  for (const ZEntry& x : batch) {
    ctx.reply.Bulk(x.member);
    ctx.reply.Bulk(protocol::FormatScore(x.score, buf));
  }
}

constexpr uint32_t kW = kWrite | kDenyOom;
constexpr KeyFlags kStoreKeys = {kKeyOW | kKeyUpdate, kKeyRO | kKeyAccess};

const CommandSpec kCommands[] = {
    {"zunion", -3, kReadOnly | kKeyNum, 1, 1, 1, ZUnion, "Add multiple sorted sets", "sorted-set", {}, {kKeyRO | kKeyAccess}},
    {"zinter", -3, kReadOnly | kKeyNum, 1, 1, 1, ZInter, "Intersect multiple sorted sets", "sorted-set", {}, {kKeyRO | kKeyAccess}},
    {"zdiff", -3, kReadOnly | kKeyNum, 1, 1, 1, ZDiff, "Subtract multiple sorted sets", "sorted-set", {}, {kKeyRO | kKeyAccess}},
    {"zintercard", -3, kReadOnly | kKeyNum, 1, 1, 1, ZInterCard, "Intersect multiple sorted sets and return the cardinality of the result", "sorted-set", {}, {kKeyRO | kKeyAccess}},
    {"zunionstore", -4, kW, 1, 1, 1, ZUnionStore, "Add multiple sorted sets and store the resulting sorted set in a new key", "sorted-set", {}, kStoreKeys, {}, 2},
    {"zinterstore", -4, kW, 1, 1, 1, ZInterStore, "Intersect multiple sorted sets and store the resulting sorted set in a new key", "sorted-set", {}, kStoreKeys, {}, 2},
    {"zdiffstore", -4, kW, 1, 1, 1, ZDiffStore, "Subtract multiple sorted sets and store the resulting sorted set in a new key", "sorted-set", {}, kStoreKeys, {}, 2},
    {"zscan", -3, kReadOnly | kRandom, 1, 1, 1, ZScan, "Incrementally iterate sorted sets elements and associated scores", "sorted-set", {}, {kKeyRO | kKeyAccess}},
};

}  // namespace

std::span<const CommandSpec> ZsetAlgebraCommands() { return kCommands; }

}  // namespace feedkv::server
