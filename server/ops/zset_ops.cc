#include "server/ops/zset_ops.h"

#include <algorithm>

#include "protocol/error_text.h"
#include "server/commands/lookup.h"
#include "server/config.h"
#include "server/ops/index_range.h"
#include "server/ops/store_result.h"
#include "server/server.h"
#include "storage/database.h"

namespace feedkv::server::zset_ops {

namespace {

// After removals: drop an emptied key, else re-measure it.
void AfterRemoval(CommandContext& ctx, std::string_view key, Entry* e, SortedSetValue* z) {
  if (z->empty()) {
    ctx.db().Delete(key);
    ctx.Notify(kNotifyGeneric, "del", key);
  } else {
    ctx.db().UpdateObjectMemory(e);
  }
}

}  // namespace

ZsetLimits Limits(const CommandContext& ctx) {
  const ServerConfig& c = ctx.server.cfg();
  return ZsetLimits{static_cast<size_t>(c.zset_max_listpack_entries),
                    static_cast<size_t>(c.zset_max_listpack_value)};
}

StatusOr<const SortedSetValue*> Find(CommandContext& ctx, std::string_view key) {
  Entry* e;
  SortedSetValue* z;
  if (Status st = FindTyped(ctx, key, ValueType::kZset, true, &e, &z); !st.ok()) return st;
  return static_cast<const SortedSetValue*>(z);
}

Status FindForWrite(CommandContext& ctx, std::string_view key, Entry** entry, SortedSetValue** zset) {
  return FindTyped(ctx, key, ValueType::kZset, false, entry, zset);
}

StatusOr<AddOutcome> Add(CommandContext& ctx, std::string_view key, int flags, std::span<const double> scores,
                         std::span<const std::string_view> pairs) {
  Entry* e;
  SortedSetValue* z;
  if (Status st = FindForWrite(ctx, key, &e, &z); !st.ok()) return st;
  AddOutcome out;
  if (z == nullptr && !(flags & SortedSetValue::kXX)) {
    // As Redis 7.0: the encoding is chosen by the first member alone; the adds
    // convert it when they outgrow it (which decides, e.g., whether a -0 score
    // stays -0: a listpack keeps it as 0).
    auto fresh = SortedSetValue::Create(1, pairs[1].size(), Limits(ctx));
    e = ctx.db().SetObject(key, std::move(fresh), kNoExpire, false);
    z = static_cast<SortedSetValue*>(Database::GetObject(e));
  }
  if (z == nullptr) return out;
  const ZsetLimits limits = Limits(ctx);
  for (size_t j = 0; j < scores.size(); ++j) {
    switch (z->Add(pairs[2 * j + 1], scores[j], flags, limits, &out.score)) {
      case SortedSetValue::AddResult::kAdded: ++out.added; ++out.processed; break;
      case SortedSetValue::AddResult::kUpdated: ++out.updated; ++out.processed; break;
      case SortedSetValue::AddResult::kUnchanged: ++out.processed; break;
      case SortedSetValue::AddResult::kSkipped: break;
      case SortedSetValue::AddResult::kNaN:
        if (z->empty()) ctx.db().Delete(key);
        return Status::InvalidArgument(protocol::err::Message(protocol::err::kZsetNaN));
    }
  }
  if (out.added + out.updated > 0) {
    ctx.db().UpdateObjectMemory(e);
    ctx.Dirty(out.added + out.updated);
    ctx.Notify(kNotifyZset, (flags & SortedSetValue::kIncr) ? "zincr" : "zadd", key);
  } else if (z->empty()) {
    ctx.db().Delete(key);  // created for a pair that NX/GT/LT then refused
  }
  return out;
}

StatusOr<size_t> Remove(CommandContext& ctx, std::string_view key, std::span<const std::string_view> members) {
  Entry* e;
  SortedSetValue* z;
  if (Status st = FindForWrite(ctx, key, &e, &z); !st.ok()) return st;
  if (z == nullptr) return size_t{0};
  size_t removed = 0;
  for (size_t i = 0; i < members.size() && !z->empty(); ++i) removed += z->Remove(members[i]);
  if (removed > 0) {
    ctx.Notify(kNotifyZset, "zrem", key);
    AfterRemoval(ctx, key, e, z);
    ctx.Dirty(static_cast<int64_t>(removed));
  }
  return removed;
}

size_t RemoveRanks(CommandContext& ctx, std::string_view key, Entry* e, SortedSetValue* z, size_t lo,
                   size_t hi) {
  if (hi <= lo) return 0;
  z->RemoveRanks(lo, hi - 1);
  ctx.Notify(kNotifyZset, ctx.spec.name, key);  // zremrangebyrank|score|lex
  AfterRemoval(ctx, key, e, z);
  ctx.Dirty(static_cast<int64_t>(hi - lo));
  return hi - lo;
}

StatusOr<size_t> RemoveRankRange(CommandContext& ctx, std::string_view key, int64_t start, int64_t stop) {
  Entry* e;
  SortedSetValue* z;
  if (Status st = FindForWrite(ctx, key, &e, &z); !st.ok()) return st;
  size_t lo = 0, hi = 0;
  if (z == nullptr || !ResolveRange(start, stop, z->size(), &lo, &hi)) return size_t{0};
  return RemoveRanks(ctx, key, e, z, lo, hi + 1);
}

StatusOr<std::vector<std::pair<std::string, double>>> Pop(CommandContext& ctx, std::string_view key, bool max,
                                                          size_t count, bool log_count) {
  Entry* e;
  SortedSetValue* z;
  if (Status st = FindForWrite(ctx, key, &e, &z); !st.ok()) return st;
  std::vector<std::pair<std::string, double>> popped;
  if (z == nullptr || count == 0) return popped;
  const size_t n = std::min(count, z->size());
  popped.reserve(n);
  const size_t lo = max ? z->size() - n : 0;
  z->ForRanks(lo, lo + n - 1, max, [&](const ZEntry& x) { popped.emplace_back(x.member, x.score); });
  z->RemoveRanks(lo, lo + n - 1);
  std::vector<std::string> logged = {max ? "ZPOPMAX" : "ZPOPMIN", std::string(key)};
  if (log_count) logged.push_back(std::to_string(n));
  ctx.PropagateAs(std::move(logged));
  ctx.Touched(ctx.client.db, key);
  ctx.Notify(kNotifyZset, max ? "zpopmax" : "zpopmin", key);
  AfterRemoval(ctx, key, e, z);
  ctx.Dirty(static_cast<int64_t>(n));
  return popped;
}

size_t Store(CommandContext& ctx, std::string_view dest, std::unique_ptr<SortedSetValue> result,
             std::string_view event) {
  if (result != nullptr && result->empty()) result.reset();
  const size_t n = result == nullptr ? 0 : result->size();
  return StoreResult(ctx, dest, std::move(result), n, kNotifyZset, event);
}

}  // namespace feedkv::server::zset_ops
