// ColdTier's part of DEBUG DIGEST: the counter keys of cold ranges. A cold id's
// counters are its warm cache entry if it has one (written, loaded, or an
// absent answer), else its row in the store. The warm rows are added on the
// command thread; the store is scanned behind every write-back and spill
// issued before (the writer thread runs jobs in order), so a row it reads is
// either that of this moment or overridden by a warm entry that was dirty at
// this moment. A spilling range is not scanned: its keys are still in memory
// (CounterSpace::ForEachKey).
#include <boost/asio/post.hpp>

#include <algorithm>
#include <array>
#include <unordered_set>

#include "server/cold_tier.h"
#include "server/job_thread.h"
#include "server/server.h"
#include "storage/cold/cold_store.h"
#include "storage/counter_cold_rows.h"

namespace feedkv::server {

struct ColdTier::DigestPlan {
  std::string name;
  std::string column_family;
  CounterSchema schema;
  std::vector<std::pair<int64_t, int64_t>> ranges;  // ascending, disjoint
  std::unordered_set<int64_t> cached;               // ids the warm rows stand for
};

std::vector<ColdTier::DigestPlan> ColdTier::PlanDigest(rdb::DigestBuilder* digest) {
  std::vector<DigestPlan> plans;
  for (const auto& [name, space] : server_.counter_spaces()) {
    std::vector<std::pair<int64_t, int64_t>> ranges = space->ColdRanges();
    if (ranges.empty()) continue;
    DigestPlan plan;
    plan.name = name;
    plan.column_family = ColumnFamily(name, space->cold_generation());
    plan.schema = space->schema();
    plan.ranges = std::move(ranges);
    space->ForEachColdCached([&](int64_t id, std::span<const uint64_t> counters) {
      plan.cached.insert(id);
      digest->AddCounterKey(name, id, counters);
    });
    plans.push_back(std::move(plan));
  }
  return plans;
}

Status ColdTier::ScanColdRows(const ColdStore& store, const std::vector<DigestPlan>& plans,
                              rdb::DigestBuilder* digest) {
  std::array<uint64_t, CounterSchema::kMaxFields> values{};
  for (const DigestPlan& plan : plans) {
    const size_t n = plan.schema.num_fields();
    size_t range = 0;  // rows come in id order, so the range only moves forward
    Status bad;
    Status s = store.ForEach(plan.column_family, [&](int64_t id, std::string_view row) {
      while (range < plan.ranges.size() && id > plan.ranges[range].second) range++;
      if (range == plan.ranges.size()) return false;
      if (id < plan.ranges[range].first || plan.cached.count(id) != 0) return true;
      bad = counter_cold::Decode(plan.schema, row, values.data());
      if (!bad.ok()) return false;
      digest->AddCounterKey(plan.name, id, std::span<const uint64_t>(values.data(), n));
      return true;
    });
    if (!s.ok()) return s;
    if (!bad.ok()) return bad;
  }
  return Status::OK();
}

bool ColdTier::DigestColdRows(const rdb::DigestBuilder& digest,
                              std::function<void(const Status&, const std::string&)> done) {
  auto builder = std::make_shared<rdb::DigestBuilder>(digest);
  auto plans = std::make_shared<std::vector<DigestPlan>>(PlanDigest(builder.get()));
  if (plans->empty()) return false;
  std::shared_ptr<ColdStore> store = StoreIfOpen();
  writer_->Submit([this, store, plans, builder, done = std::move(done)] {
    Status s = store ? ScanColdRows(*store, *plans, builder.get())
                     : Status::IOError("the cold store is not open");
    boost::asio::post(server_.io(), [s, builder, done] { done(s, s.ok() ? builder->Hex() : std::string()); });
  });
  return true;
}

Status ColdTier::DigestColdRowsNow(rdb::DigestBuilder* digest) {
  std::vector<DigestPlan> plans = PlanDigest(digest);
  if (plans.empty()) return Status::OK();
  std::shared_ptr<ColdStore> store = StoreIfOpen();
  if (!store) return Status::IOError("the cold store is not open");
  return ScanColdRows(*store, plans, digest);
}

}  // namespace feedkv::server
