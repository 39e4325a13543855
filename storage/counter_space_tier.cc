// CounterSpace's cold tier: spilling a table, and reads and writes of the ids of
// spilling and cold ranges (docs/counters.md, "Cold tables").
//
// A tiered id's counters are, in order of precedence: its warm cache entry; else, while
// its table spills, the frozen table; else (cold) the cold store's row, which a command
// must have loaded first (NeedsLoad / InsertLoaded). The cold reader is the fallback for
// callers that cannot wait (commands applied from the log): it reads synchronously.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cassert>

#include "storage/counter_cold_rows.h"
#include "storage/counter_space.h"

namespace feedkv {

const char* TableTierName(TableTier tier) {
  switch (tier) {
    case TableTier::kHot:
      return "hot";
    case TableTier::kSpilling:
      return "spilling";
    case TableTier::kCold:
      return "cold";
  }
  return "hot";
}

namespace {

bool AnyNonZero(const uint64_t* row, size_t n) {
  return std::any_of(row, row + n, [](uint64_t v) { return v != 0; });
}

}  // namespace

void CounterSpace::MakeTiered() {
  if (tiered_) return;
  tiered_ = true;
  tiers_.assign(tables_.size(), Tier{});
  if (!warm_) warm_ = std::make_unique<CounterWarmCache>(schema_->num_fields());
}

bool CounterSpace::NeedsLoad(int64_t id) const {
  const int r = TieredRoute(id);
  return r >= 0 && tiers_[r].state == TableTier::kCold && !warm_->Contains(id);
}

Status CounterSpace::InsertLoaded(int64_t id, std::string_view row) {
  if (!NeedsLoad(id)) return Status::OK();
  if (row.empty()) {
    warm_->InsertLoaded(id, nullptr);
    return Status::OK();
  }
  std::array<uint64_t, CounterSchema::kMaxFields> values{};
  Status s = counter_cold::Decode(*schema_, row, values.data());
  if (!s.ok()) return s;
  warm_->InsertLoaded(id, values.data());
  return Status::OK();
}

bool CounterSpace::TieredGet(int r, int64_t id, uint64_t* values) const {
  const size_t n = schema_->num_fields();
  if (const uint64_t* row = warm_->Find(id)) {
    std::copy(row, row + n, values);
    return AnyNonZero(row, n);
  }
  if (r == spilling_) {
    const CounterTable::Probe p = spill_source_->Lookup(id);
    if (p.found) {
      schema_->LoadAll(spill_source_->slot(p.slot), values);
      return true;
    }
    std::fill(values, values + n, 0);
    return false;
  }
  // Cold and not loaded: only commands applied from the log get here (a client's
  // command waits for the load first). Read it now and keep it.
  bool found = false;
  if (cold_reader_ && cold_reader_(id, values, &found).ok() && found) {
    warm_->InsertLoaded(id, values);
    return AnyNonZero(values, n);
  }
  // No reader (a unit test) or a failed read: absent, and not cached, so a later
  // command loads it again.
  std::fill(values, values + n, 0);
  return false;
}

uint64_t* CounterSpace::TieredRowForWrite(int r, int64_t id, bool* existed) {
  const size_t n = schema_->num_fields();
  if (!warm_->Contains(id)) {
    std::array<uint64_t, CounterSchema::kMaxFields> values{};
    TieredGet(r, id, values.data());
    if (!warm_->Contains(id)) warm_->InsertLoaded(id, values.data());
  }
  uint64_t* row = warm_->Mutable(id);
  *existed = AnyNonZero(row, n);
  return row;
}

void CounterSpace::TieredWritten(int r, bool existed, const uint64_t* row) {
  const bool exists = AnyNonZero(row, schema_->num_fields());
  if (exists && !existed) tiers_[r].keys++;
  if (!exists && existed) tiers_[r].keys--;
}

int CounterSpace::SpillCandidate() const {
  if (spilling_ >= 0 || growing_from_) return -1;
  for (size_t i = 0; i + 1 < tables_.size(); ++i) {
    if (tier(i) == TableTier::kHot) return static_cast<int>(i);
  }
  return -1;
}

Status CounterSpace::BeginSpill(size_t table, std::shared_ptr<const CounterTable>* source) {
  if (spilling_ >= 0) return Status::Busy("a spill of this space is running");
  if (table + 1 >= tables_.size()) {
    return Status::InvalidArgument("the newest table stays in memory");
  }
  if (tier(table) != TableTier::kHot) return Status::InvalidArgument("the table is not hot");
  std::unique_ptr<CounterTable> empty;
  Status s = CounterTable::Create(schema_, tables_[table]->meta(), &empty);
  if (!s.ok()) return s;
  MakeTiered();
  std::shared_ptr<CounterTable> frozen = std::move(tables_[table]);
  tables_[table] = std::move(empty);
  Tier& t = tiers_[table];
  t.state = TableTier::kSpilling;
  t.keys = frozen->used();
  // Aux and extend keys of the range stay in their dicts (TieredRoute): moving
  // them here would cost the command thread time per key (27 ms for a 1 GiB
  // table's ~25 k extend keys), and they are few.
  spilling_ = static_cast<int>(table);
  spill_source_ = std::move(frozen);
  *source = spill_source_;
  return Status::OK();
}

std::shared_ptr<const CounterTable> CounterSpace::CommitSpill(uint64_t zero_keys) {
  if (spilling_ < 0) return nullptr;
  // A zero key counted at BeginSpill and written since was counted again then.
  tiers_[spilling_].keys -= std::min(zero_keys, tiers_[spilling_].keys);
  tiers_[spilling_].state = TableTier::kCold;
  spilling_ = -1;
  return std::move(spill_source_);
}

void CounterSpace::AbortSpill() {
  if (spilling_ < 0) return;
  const int r = spilling_;
  std::vector<int64_t> ids;
  std::vector<uint64_t> rows;
  const size_t n = schema_->num_fields();
  warm_->ForEach([&](int64_t id, const uint64_t* row, bool) {
    if (!tables_[r]->Owns(id)) return;
    ids.push_back(id);
    rows.insert(rows.end(), row, row + n);
  });
  tiers_[r] = Tier{};
  spilling_ = -1;
  if (spill_source_.use_count() == 1) {
    // Nobody else reads the frozen table any more: it goes back as it is.
    tables_[r]->SwapWith(const_cast<CounterTable&>(*spill_source_));
  } else {
    // The spiller still holds it (not expected): copy its keys into the placeholder.
    std::array<uint64_t, CounterSchema::kMaxFields> row;
    spill_source_->ForEachUsed([&](int64_t id, const char* slot) {
      schema_->LoadAll(slot, row.data());
      SetHotRow(id, row.data());
    });
  }
  spill_source_.reset();
  // Then the writes made meanwhile.
  for (size_t i = 0; i < ids.size(); ++i) {
    warm_->Erase(ids[i]);
    SetHotRow(ids[i], &rows[i * n]);
  }
}

void CounterSpace::SetHotRow(int64_t id, const uint64_t* row) {
  Del(id);
  if (!AnyNonZero(row, schema_->num_fields())) return;
  const int route = Route(id);
  CounterTable::Probe probe;
  if (route >= 0) probe = tables_[route]->Lookup(id);
  Place(id, route, probe, row);
}

std::vector<CounterWarmCache::WriteBack> CounterSpace::TakeColdDirty(size_t max) {
  if (!warm_) return {};
  return warm_->TakeDirty(max, [this](int64_t id) {
    const int r = TieredRoute(id);
    return r >= 0 && tiers_[r].state == TableTier::kCold;
  });
}

size_t CounterSpace::TrimWarm(size_t budget, size_t max_visits) {
  return warm_ ? warm_->Trim(budget, max_visits) : 0;
}

std::vector<std::pair<int64_t, int64_t>> CounterSpace::ColdRanges() const {
  std::vector<std::pair<int64_t, int64_t>> out;
  if (!tiered_) return out;
  for (size_t i = 0; i < tables_.size(); i++) {
    if (tiers_[i].state == TableTier::kCold) out.emplace_back(tables_[i]->first_id(), tables_[i]->last_id());
  }
  return out;
}

void CounterSpace::ForEachColdCached(
    const std::function<void(int64_t, std::span<const uint64_t>)>& f) const {
  if (!tiered_) return;
  const size_t n = schema_->num_fields();
  warm_->ForEach([&](int64_t id, const uint64_t* row, bool) {
    const int r = TieredRoute(id);
    if (r >= 0 && tiers_[r].state == TableTier::kCold) f(id, std::span<const uint64_t>(row, n));
  });
}

}  // namespace feedkv
