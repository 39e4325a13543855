#include "storage/counter_space.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <utility>

namespace feedkv {

namespace {

constexpr int64_t kMinId = std::numeric_limits<int64_t>::min();
constexpr int64_t kMaxId = std::numeric_limits<int64_t>::max();
constexpr char kOverflowMessage[] = "increment or decrement would overflow";

// Rough cost of one std::unordered_map node (next pointer, key, value, malloc header).
constexpr size_t kDictNodeBytes = 32;

}  // namespace

// Growth (docs/counters.md, "Growth"): a new table is one page; each time the newest
// table fills it is rehashed into one kGrowthFactor larger, up to counter-table-size.
// 1.5x keeps a table just after growth at 0.9 / 1.5 = 60% fill, so at rest a key costs
// at most 1.67x its slot bytes (2x the bound we promise).
constexpr uint64_t kFirstTableBytes = CounterTable::kPageBytes;
constexpr uint64_t kFirstTableSlots = 64;
constexpr double kGrowthFactor = 1.5;
// Tables up to this many slots (~640 KiB of 20-byte slots) grow in one step.
constexpr uint64_t kInstantGrowthSlots = 32768;
// Slots of the old table moved per new key while a large table grows. The larger table
// is full only after 0.45x the old capacity in new keys; 16 slots per key finishes the
// move after 1/16 of the old capacity.
constexpr uint64_t kGrowSlotsPerInsert = 16;

namespace {

CounterOptions ClampOptions(CounterOptions o, size_t slot_bytes) {
  const uint64_t min_bytes = CounterTable::kMinCapacity * slot_bytes;
  o.table_bytes = std::clamp<uint64_t>(o.table_bytes, min_bytes, CounterTable::kMaxTableBytes);
  if (!(o.max_fill > 0.0)) o.max_fill = CounterOptions{}.max_fill;  // also catches NaN
  o.max_fill = std::min(o.max_fill, 1.0);
  o.max_probes = std::clamp<uint32_t>(o.max_probes, 1, CounterTable::kMaxProbesLimit);
  return o;
}

// Applies a signed delta with the store's rules: clamp at 0 below, error above 2^64-1.
Status AddDelta(uint64_t old, int64_t delta, uint64_t* out) {
  if (delta >= 0) {
    const auto d = static_cast<uint64_t>(delta);
    if (old > std::numeric_limits<uint64_t>::max() - d) {
      return Status::OutOfRange(kOverflowMessage);
    }
    *out = old + d;
  } else {
    const uint64_t d = uint64_t{0} - static_cast<uint64_t>(delta);  // |INT64_MIN| fits
    *out = old > d ? old - d : 0;
  }
  return Status::OK();
}

}  // namespace

// ---- CounterDict ----

uint64_t* CounterDict::Find(int64_t id) {
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : &rows_[it->second * width_];
}

const uint64_t* CounterDict::Find(int64_t id) const {
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : &rows_[it->second * width_];
}

uint64_t* CounterDict::Insert(int64_t id) {
  size_t row;
  if (!free_rows_.empty()) {
    row = free_rows_.back();
    free_rows_.pop_back();
  } else {
    row = rows_.size() / width_;
    rows_.resize(rows_.size() + width_);
  }
  [[maybe_unused]] const bool inserted = index_.emplace(id, row).second;
  assert(inserted);
  uint64_t* r = &rows_[row * width_];
  std::fill(r, r + width_, 0);
  return r;
}

bool CounterDict::Erase(int64_t id) {
  auto it = index_.find(id);
  if (it == index_.end()) return false;
  free_rows_.push_back(it->second);
  index_.erase(it);
  return true;
}

size_t CounterDict::MemoryUsage() const {
  return index_.bucket_count() * sizeof(void*) + index_.size() * kDictNodeBytes +
         rows_.capacity() * sizeof(uint64_t) + free_rows_.capacity() * sizeof(size_t);
}

// ---- CounterSpace ----

CounterSpace::CounterSpace(CounterSchema schema, CounterOptions options)
    : schema_(std::make_shared<const CounterSchema>(std::move(schema))),
      options_(ClampOptions(options, schema_->slot_bytes())),
      aux_(schema_->num_fields()),
      extend_(schema_->num_fields()),
      max_id_seen_(kMinId) {
  assert(schema_->num_fields() > 0);
}

CounterSpace::~CounterSpace() = default;

Status CounterSpace::ValidateOptions(const CounterOptions& o, size_t slot_bytes) {
  if (o.table_bytes > CounterTable::kMaxTableBytes ||
      CounterTable::CapacityFor(o.table_bytes, slot_bytes) == 0) {
    return Status::InvalidArgument(
        fmt::format("counter table size must hold at least {} slots of {} bytes and be at most {}",
                    CounterTable::kMinCapacity, slot_bytes, CounterTable::kMaxTableBytes));
  }
  if (!(o.max_fill > 0.0 && o.max_fill <= 1.0)) {
    return Status::InvalidArgument("counter table max fill must be in (0, 1]");
  }
  if (o.max_probes < 1 || o.max_probes > CounterTable::kMaxProbesLimit) {
    return Status::InvalidArgument(
        fmt::format("counter max probes must be in [1, {}]", CounterTable::kMaxProbesLimit));
  }
  return Status::OK();
}

void CounterSpace::SetOptions(const CounterOptions& options) {
  options_ = ClampOptions(options, schema_->slot_bytes());
}

int CounterSpace::Route(int64_t id) const {
  if (tables_.empty() || CounterTable::IsReservedId(id)) return -1;
  // Ids grow with time, so nearly all traffic is for the newest table.
  if (id >= starts_.back()) return static_cast<int>(tables_.size() - 1);
  // starts_[0] is INT64_MIN, so upper_bound never returns begin().
  auto it = std::upper_bound(starts_.begin(), starts_.end(), id);
  return static_cast<int>(it - starts_.begin()) - 1;
}

CounterTableMeta CounterSpace::NewMeta(int64_t first_id, int64_t last_id,
                                       uint64_t table_bytes) const {
  CounterTableMeta meta;
  meta.first_id = first_id;
  meta.last_id = last_id;
  meta.capacity = CounterTable::CapacityFor(table_bytes, schema_->slot_bytes());
  meta.max_probes = options_.max_probes;
  const double limit = std::floor(options_.max_fill * static_cast<double>(meta.capacity));
  meta.max_used = std::clamp<uint64_t>(static_cast<uint64_t>(limit), 1, meta.capacity);
  meta.seed1 = CounterTable::kDefaultSeed1;
  meta.seed2 = CounterTable::kDefaultSeed2;
  return meta;
}

Status CounterSpace::AddTable(int64_t first_id, uint64_t keys) {
  const size_t slot_bytes = schema_->slot_bytes();
  const double want = static_cast<double>(keys) * static_cast<double>(slot_bytes) /
                      options_.max_fill * kGrowthFactor;
  const uint64_t bytes = std::min<uint64_t>(
      options_.table_bytes,
      std::max<uint64_t>({kFirstTableBytes, kFirstTableSlots * slot_bytes, options_.first_table_bytes,
                          static_cast<uint64_t>(std::min(want, 0x1p62))}));
  std::unique_ptr<CounterTable> t;
  Status s = CounterTable::Create(schema_, NewMeta(first_id, kMaxId, bytes), &t);
  if (!s.ok()) return s;
  if (!tables_.empty()) tables_.back()->set_last_id(first_id - 1);
  tables_.push_back(std::move(t));
  if (tiered_) tiers_.emplace_back();
  starts_.push_back(first_id);
  return Status::OK();
}

bool CounterSpace::StartGrowth() {
  assert(!growing_from_ && !tables_.empty());
  CounterTable& newest = *tables_.back();
  const uint64_t bytes = std::min<uint64_t>(
      options_.table_bytes,
      static_cast<uint64_t>(static_cast<double>(newest.bytes()) * kGrowthFactor));
  if (CounterTable::CapacityFor(bytes, schema_->slot_bytes()) <= newest.capacity()) return false;
  std::unique_ptr<CounterTable> bigger;
  if (!CounterTable::Create(schema_, NewMeta(newest.first_id(), newest.last_id(), bytes), &bigger)
           .ok()) {
    return false;  // the key goes to extend, as into a full table
  }
  growing_from_ = std::move(tables_.back());
  tables_.back() = std::move(bigger);
  grow_cursor_ = 0;
  ++growths_;
  // A small table moves at once (well under a millisecond); a large one a few slots per
  // new key and per cron tick, so no command waits for a whole rehash.
  if (growing_from_->capacity() <= kInstantGrowthSlots) FinishGrowth();
  return true;
}

void CounterSpace::GrowStep(uint64_t slots) {
  if (!growing_from_) return;
  CounterTable& from = *growing_from_;
  CounterTable& to = *tables_.back();
  const size_t width = schema_->num_fields();
  std::array<uint64_t, CounterSchema::kMaxFields> row;
  const uint64_t end = std::min(from.capacity(), grow_cursor_ + slots);
  for (; grow_cursor_ < end; ++grow_cursor_) {
    int64_t id;
    if (!from.KeyAt(grow_cursor_, &id)) continue;
    schema_->LoadAll(from.slot(grow_cursor_), row.data());
    from.Erase(from.Lookup(id));
    const CounterTable::Probe p = to.Lookup(id);
    if (!to.full() && p.slot != CounterTable::kNoSlot) {
      char* slot = to.Insert(id, p);
      for (size_t f = 0; f < width; f++) schema_->Store(slot, f, row[f]);
    } else {
      std::copy(row.begin(), row.begin() + width, extend_.Insert(id));
      ++extend_probe_limit_;
    }
  }
  if (grow_cursor_ >= from.capacity()) growing_from_.reset();
}

void CounterSpace::FinishGrowth() {
  if (growing_from_) GrowStep(growing_from_->capacity());
}

bool CounterSpace::PrepareNewest(int64_t id) {
  bool changed = false;
  if (growing_from_) {
    GrowStep(kGrowSlotsPerInsert);
    changed = true;
  }
  if (tables_.back()->full()) {
    // Growth moves kGrowSlotsPerInsert slots per insert and the larger table takes
    // 1.5x the keys, so it finishes long before this; finish it in case it has not.
    FinishGrowth();
    if (!StartGrowth()) Roll(id);
    changed = true;
  }
  return changed;
}

CounterTable* CounterSpace::FindSlot(int64_t id, int route, CounterTable::Probe* probe) {
  return const_cast<CounterTable*>(std::as_const(*this).FindSlot(id, route, probe));
}

const CounterTable* CounterSpace::FindSlot(int64_t id, int route,
                                           CounterTable::Probe* probe) const {
  if (route < 0) return nullptr;
  const CounterTable* t = tables_[route].get();
  *probe = t->Lookup(id);
  if (probe->found) return t;
  if (growing_from_ && route == static_cast<int>(tables_.size()) - 1) {
    CounterTable::Probe old = growing_from_->Lookup(id);
    if (old.found) {
      *probe = old;
      return growing_from_.get();
    }
  }
  return nullptr;
}

bool CounterSpace::Roll(int64_t id) {
  CounterTable& newest = *tables_.back();
  // Normally the new table starts above every id written so far. But one id written far
  // ahead of real traffic (a typo, a test id) would then strand every later table above
  // the ids that really come, sending them all to the extend dict. So when the arriving
  // id is below the largest id seen, the new table starts at the arriving id and the
  // few keys above it move over; the scan this needs happens only in that case.
  int64_t start;
  if (id > newest.first_id() && id <= max_id_seen_) {
    start = id;
  } else if (max_id_seen_ == kMaxId) {
    return false;
  } else {
    start = max_id_seen_ + 1;
  }
  if (start <= newest.first_id()) return false;
  std::vector<int64_t> movers;
  std::vector<uint64_t> values;
  const size_t width = schema_->num_fields();
  if (start <= max_id_seen_) {
    newest.ForEachUsed([&](int64_t key, const char* slot) {
      if (key < start) return;
      movers.push_back(key);
      values.resize(values.size() + width);
      schema_->LoadAll(slot, &values[values.size() - width]);
    });
  }
  if (!AddTable(start, movers.size()).ok()) return false;
  CounterTable& fresh = *tables_.back();
  for (size_t i = 0; i < movers.size(); i++) {
    newest.Erase(newest.Lookup(movers[i]));
    const uint64_t* row = &values[i * width];
    CounterTable::Probe probe = fresh.Lookup(movers[i]);
    if (!fresh.full() && probe.slot != CounterTable::kNoSlot) {
      char* slot = fresh.Insert(movers[i], probe);
      for (size_t f = 0; f < width; f++) schema_->Store(slot, f, row[f]);
    } else {
      std::copy(row, row + width, extend_.Insert(movers[i]));
    }
  }
  return true;
}

void CounterSpace::Place(int64_t id, int route, CounterTable::Probe probe, const uint64_t* row) {
  const size_t width = schema_->num_fields();
  bool fits = true;
  for (size_t f = 0; f < width; f++) fits = fits && row[f] <= schema_->field_max(f);
  if (!fits) {
    std::copy(row, row + width, aux_.Insert(id));
    ++aux_entries_;
  } else {
    bool reroute = false;
    if (route < 0 && !CounterTable::IsReservedId(id) && tables_.empty() && AddTable(kMinId).ok()) {
      reroute = true;
    }
    if (!reroute && route >= 0 && route == static_cast<int>(tables_.size()) - 1) {
      reroute = PrepareNewest(id);
    }
    if (reroute) {
      route = Route(id);
      if (route >= 0) probe = tables_[route]->Lookup(id);
    }
    if (route >= 0 && !tables_[route]->full() && probe.slot != CounterTable::kNoSlot) {
      char* slot = tables_[route]->Insert(id, probe);
      for (size_t f = 0; f < width; f++) {
        if (row[f] != 0) schema_->Store(slot, f, row[f]);
      }
    } else {
      std::copy(row, row + width, extend_.Insert(id));
      if (route >= 0 && !tables_[route]->full()) {
        ++extend_probe_limit_;
      } else {
        ++extend_table_full_;
      }
    }
  }
  max_id_seen_ = std::max(max_id_seen_, id);
}

void CounterSpace::Place(int64_t id, int route, CounterTable::Probe probe, size_t field,
                         uint64_t value) {
  std::array<uint64_t, CounterSchema::kMaxFields> row{};
  row[field] = value;
  Place(id, route, probe, row.data());
}

template <class Compute>
Status CounterSpace::Update(int64_t id, size_t field, Compute compute, uint64_t* new_value) {
  if (field >= schema_->num_fields()) return Status::InvalidArgument("no such counter field");
  if (const int r = TieredRoute(id); r >= 0) {
    bool existed;
    uint64_t* row = TieredRowForWrite(r, id, &existed);
    uint64_t value = 0;
    Status s = compute(row[field], &value);
    if (!s.ok()) return s;
    row[field] = value;
    TieredWritten(r, existed, row);
    *new_value = value;
    return Status::OK();
  }
  const int route = Route(id);
  CounterTable::Probe probe;
  uint64_t value = 0;
  if (CounterTable* t = FindSlot(id, route, &probe)) {
    char* slot = t->slot(probe.slot);
    Status s = compute(schema_->Load(slot, field), &value);
    if (!s.ok()) return s;
    if (value <= schema_->field_max(field)) {
      schema_->Store(slot, field, value);
    } else {
      // Too wide for the slot: the whole key moves to aux, keeping its other fields.
      uint64_t* row = aux_.Insert(id);
      schema_->LoadAll(slot, row);
      row[field] = value;
      t->Erase(probe);
      ++aux_entries_;
    }
    *new_value = value;
    return Status::OK();
  }
  // Not in a table: `probe` is the routed table's, where a new key would go.
  if (uint64_t* row = aux_.Find(id)) {
    Status s = compute(row[field], &value);
    if (!s.ok()) return s;
    row[field] = value;
    *new_value = value;
    return Status::OK();
  }
  if (uint64_t* row = extend_.Find(id)) {
    Status s = compute(row[field], &value);
    if (!s.ok()) return s;
    if (value <= schema_->field_max(field)) {
      row[field] = value;
    } else {
      // Extend keys always fit their fields, so a later compaction could pack them back
      // into a table; a key that outgrows them goes to aux like a table key would.
      uint64_t* to = aux_.Insert(id);
      std::copy(row, row + schema_->num_fields(), to);
      to[field] = value;
      extend_.Erase(id);
      ++aux_entries_;
    }
    *new_value = value;
    return Status::OK();
  }
  Status s = compute(0, &value);
  if (!s.ok()) return s;
  if (value != 0) Place(id, route, probe, field, value);
  *new_value = value;
  return Status::OK();
}

Status CounterSpace::IncrBy(int64_t id, size_t field, int64_t delta, uint64_t* new_value) {
  return Update(
      id, field, [delta](uint64_t old, uint64_t* out) { return AddDelta(old, delta, out); },
      new_value);
}

Status CounterSpace::Set(int64_t id, size_t field, uint64_t value) {
  uint64_t ignored;
  return Update(
      id, field,
      [value](uint64_t, uint64_t* out) {
        *out = value;
        return Status::OK();
      },
      &ignored);
}

void CounterSpace::Get(int64_t id, uint64_t* values) const {
  if (const int r = TieredRoute(id); r >= 0) {
    TieredGet(r, id, values);
    return;
  }
  CounterTable::Probe p;
  if (const CounterTable* t = FindSlot(id, Route(id), &p)) {
    schema_->LoadAll(t->slot(p.slot), values);
    return;
  }
  const size_t n = schema_->num_fields();
  const uint64_t* row = aux_.size() ? aux_.Find(id) : nullptr;
  if (row == nullptr && extend_.size()) row = extend_.Find(id);
  if (row != nullptr) {
    std::copy(row, row + n, values);
  } else {
    std::fill(values, values + n, 0);
  }
}

uint64_t CounterSpace::GetField(int64_t id, size_t field) const {
  assert(field < schema_->num_fields());
  if (const int r = TieredRoute(id); r >= 0) {
    std::array<uint64_t, CounterSchema::kMaxFields> values;
    TieredGet(r, id, values.data());
    return values[field];
  }
  CounterTable::Probe p;
  if (const CounterTable* t = FindSlot(id, Route(id), &p)) {
    return schema_->Load(t->slot(p.slot), field);
  }
  if (const uint64_t* row = aux_.Find(id)) return row[field];
  if (const uint64_t* row = extend_.Find(id)) return row[field];
  return 0;
}

bool CounterSpace::Del(int64_t id) {
  if (const int r = TieredRoute(id); r >= 0) {
    bool existed;
    uint64_t* row = TieredRowForWrite(r, id, &existed);
    std::fill(row, row + schema_->num_fields(), 0);
    TieredWritten(r, existed, row);
    return existed;
  }
  CounterTable::Probe p;
  if (CounterTable* t = FindSlot(id, Route(id), &p)) {
    t->Erase(p);
    return true;
  }
  return aux_.Erase(id) || extend_.Erase(id);
}

CounterLocation CounterSpace::Locate(int64_t id, size_t* table_index) const {
  if (const int r = TieredRoute(id); r >= 0) {
    std::array<uint64_t, CounterSchema::kMaxFields> values;
    if (!TieredGet(r, id, values.data())) return CounterLocation::kAbsent;
    if (table_index != nullptr) *table_index = static_cast<size_t>(r);
    return CounterLocation::kCold;
  }
  const int route = Route(id);
  CounterTable::Probe p;
  if (FindSlot(id, route, &p) != nullptr) {
    if (table_index != nullptr) *table_index = static_cast<size_t>(route);
    return CounterLocation::kTable;
  }
  if (aux_.Find(id) != nullptr) return CounterLocation::kAux;
  if (extend_.Find(id) != nullptr) return CounterLocation::kExtend;
  return CounterLocation::kAbsent;
}

size_t CounterSpace::num_keys() const {
  size_t n = aux_.size() + extend_.size();
  for (const auto& t : tables_) n += t->used();
  if (growing_from_) n += growing_from_->used();
  for (const Tier& t : tiers_) n += t.keys;
  return n;
}

size_t CounterSpace::TableBytes() const {
  size_t bytes = growing_from_ ? growing_from_->touched_bytes() : 0;
  if (spill_source_) bytes += spill_source_->touched_bytes();
  for (const auto& t : tables_) bytes += t->touched_bytes();
  return bytes;
}

size_t CounterSpace::MemoryUsage() const {
  size_t bytes = sizeof(*this) + aux_.MemoryUsage() + extend_.MemoryUsage() +
                 tables_.capacity() * sizeof(tables_[0]) + starts_.capacity() * sizeof(int64_t);
  for (const auto& t : tables_) {
    bytes += sizeof(CounterTable) + t->touched_bytes() + t->tracking_bytes();
  }
  if (growing_from_) {
    bytes += sizeof(CounterTable) + growing_from_->touched_bytes() + growing_from_->tracking_bytes();
  }
  if (spill_source_) bytes += spill_source_->touched_bytes() + spill_source_->tracking_bytes();
  if (warm_) bytes += warm_->MemoryUsage();
  return bytes;
}

CounterSpaceStats CounterSpace::Stats() const {
  CounterSpaceStats st;
  uint64_t probe_sum = 0;
  for (size_t i = 0; i < tables_.size(); ++i) {
    const CounterTable* t = tables_[i].get();
    CounterTableStats ts;
    ts.tier = tier(i);
    if (ts.tier != TableTier::kHot) {
      ts.cold_keys = tiers_[i].keys;
      st.cold_keys += ts.cold_keys;
      if (static_cast<int>(i) == spilling_) t = spill_source_.get();
    }
    ts.first_id = t->first_id();
    ts.last_id = t->last_id();
    ts.capacity = t->capacity();
    ts.used = t->used();
    ts.tombstones = t->tombstones();
    ts.fill = t->fill();
    ts.bytes = t->mapped_bytes();
    ts.mean_probes = t->mean_probes();
    ts.max_probes = t->max_probe_seen();
    if (ts.tier == TableTier::kHot) {
      st.table_keys += ts.used;
      probe_sum += t->probe_sum();
    }
    st.max_probes = std::max(st.max_probes, ts.max_probes);
    st.tables.push_back(ts);
  }
  if (growing_from_) {
    st.table_keys += growing_from_->used();
    probe_sum += growing_from_->probe_sum();
  }
  st.aux_keys = aux_.size();
  st.extend_keys = extend_.size();
  st.num_keys = st.table_keys + st.aux_keys + st.extend_keys + st.cold_keys;
  if (warm_) {
    st.warm_entries = warm_->size();
    st.warm_dirty = warm_->dirty();
    st.warm_bytes = warm_->MemoryUsage();
  }
  st.memory_bytes = MemoryUsage();
  st.bytes_per_key =
      st.num_keys ? static_cast<double>(st.memory_bytes) / static_cast<double>(st.num_keys) : 0;
  st.mean_probes =
      st.table_keys ? static_cast<double>(probe_sum) / static_cast<double>(st.table_keys) : 0;
  st.aux_entries = aux_entries_;
  st.extend_probe_limit = extend_probe_limit_;
  st.extend_table_full = extend_table_full_;
  st.growths = growths_;
  st.growing = growing_from_ != nullptr;
  return st;
}

// ---- consistency ----

Status CounterSpace::ValidateLayout() const {
  for (size_t i = 0; i < tables_.size(); ++i) {
    const CounterTable& t = *tables_[i];
    if (&t.schema() != schema_.get()) return Status::Corruption("counter table: foreign schema");
    if (starts_[i] != t.first_id()) return Status::Corruption("counter space: stale table start");
    if (i == 0 && t.first_id() != kMinId) {
      return Status::Corruption("counter space: first table does not start at the lowest id");
    }
    if (i > 0 &&
        (tables_[i - 1]->last_id() == kMaxId || tables_[i - 1]->last_id() + 1 != t.first_id())) {
      return Status::Corruption("counter space: table ranges are not contiguous");
    }
    // Tables after the first were started above the largest id written at the time.
    if (i > 0 && t.first_id() - 1 > max_id_seen_) {
      return Status::Corruption("counter space: table starts above the largest id");
    }
  }
  if (!tables_.empty() && tables_.back()->last_id() != kMaxId) {
    return Status::Corruption("counter space: last table does not reach the highest id");
  }
  Status s;
  auto check_id = [&](int64_t id) {
    if (id > max_id_seen_ && s.ok()) {
      s = Status::Corruption(fmt::format("counter space: id {} above the largest id", id));
    }
  };
  // Older tables' ids are bounded by their ranges (checked above); only the newest can
  // hold an id above max_id_seen_.
  if (!tables_.empty()) tables_.back()->ForEachUsed([&](int64_t id, const char*) { check_id(id); });
  if (growing_from_) {
    if (tables_.empty() || growing_from_->first_id() != tables_.back()->first_id() ||
        growing_from_->last_id() != tables_.back()->last_id() ||
        growing_from_->capacity() >= tables_.back()->capacity()) {
      return Status::Corruption("counter space: growing table does not match the newest");
    }
    growing_from_->ForEachUsed([&](int64_t id, const char*) {
      check_id(id);
      if (s.ok() && (tables_.back()->Lookup(id).found || aux_.Find(id) || extend_.Find(id))) {
        s = Status::Corruption(fmt::format("counter space: id {} stored in two places", id));
      }
    });
  }
  auto check_dict = [&](const CounterDict& dict, const CounterDict& other, bool must_fit) {
    dict.ForEach([&](int64_t id, const uint64_t* row) {
      if (!s.ok()) return;
      check_id(id);
      CounterTable::Probe p;
      if (FindSlot(id, Route(id), &p) != nullptr || other.Find(id) != nullptr) {
        s = Status::Corruption(fmt::format("counter space: id {} stored in two places", id));
        return;
      }
      for (size_t f = 0; must_fit && f < schema_->num_fields(); ++f) {
        if (row[f] > schema_->field_max(f)) {
          s = Status::Corruption(fmt::format("counter space: extend id {} too wide", id));
          return;
        }
      }
    });
  };
  check_dict(aux_, extend_, false);
  check_dict(extend_, aux_, true);
  return s;
}

Status CounterSpace::Validate() const {
  for (const auto& t : tables_) {
    Status s = t->Validate();
    if (!s.ok()) return s;
  }
  if (growing_from_) {
    Status s = growing_from_->Validate();
    if (!s.ok()) return s;
  }
  return ValidateLayout();
}

}  // namespace feedkv
