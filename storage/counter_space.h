// CounterSpace: a schema counter store. Every key is an int64 id with the schema's fields
// as unsigned counters; a key absent everywhere reads as all zeros. A key lives in
// exactly one of three places:
//   - a table: bit-packed slots in rolling CounterTables, each owning an id range. New
//     ids (>= the newest table's first id) land in the newest table. The newest table
//     starts small and grows (rehashed into one 1.5x larger) each time it fills, until it
//     reaches counter-table-size; once that one is full the next insert starts a new
//     table at (largest id ever written + 1), or at the inserting id when stray larger
//     ids exist (they move along). Older ids go to the table owning their range (binary
//     search). A large growth step moves keys a few slots per insert (and per cron
//     tick): meanwhile the newest table's keys are in it or in `growing_from_`.
//   - the aux dict: keys with a counter wider than its field, stored with 64-bit fields.
//   - the extend dict: keys that found no free slot within the probe limit, whose table
//     was full, or that are one of the two reserved ids (CounterTable::IsReservedId).
// Keys never move back from aux/extend to a table. See docs/counters.md.
//
// The cold tier (storage/counter_space_tier.cc, docs/counters.md "Cold tables"): a
// table other than the newest may leave memory. BeginSpill freezes it (its keys are
// read from it, writes to its range go to the warm cache) and hands it to a spiller that
// copies it to the cold store off the command thread; CommitSpill then frees it (the
// range is cold), AbortSpill makes it hot again. The keys of a cold range live on disk
// and, once loaded or written, in the warm cache (`CounterWarmCache`) — except its aux
// and extend keys, which stay in their dicts; a command may
// touch a cold id only once it is loaded (NeedsLoad), which the server arranges by
// parking the command. Keys written in a spilling range stay dirty in the warm cache
// (and in snapshots); those of a cold range are handed out for write-back
// (TakeColdDirty) and stay until the store has them.
// Not thread-safe; owned by the command thread.
#pragma once

#include <array>
#include <functional>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "storage/counter_schema.h"
#include "storage/counter_table.h"
#include "storage/counter_warm_cache.h"
#include "storage/status.h"

namespace feedkv {

// Tunables (counter-table-size, counter-table-max-fill, counter-max-probes). Fixed per
// table at its creation: SetOptions affects tables created later.
struct CounterOptions {
  uint64_t table_bytes = uint64_t{1} << 30;
  // docs/counters.md has the measurement: at 0.9 with 32 probes ~0.08% of keys spill to
  // extend, and hits cost the same as at 0.7.
  double max_fill = 0.9;
  uint32_t max_probes = 32;
  // The size a new table starts at before it grows (0: one page). Not a server setting:
  // tests of the snapshot layout use it to get a table of a known size.
  uint64_t first_table_bytes = 0;

  bool operator==(const CounterOptions&) const = default;
};

// Where a table's keys are (docs/counters.md, "Cold tables").
enum class TableTier : uint8_t { kHot = 0, kSpilling = 1, kCold = 2 };
const char* TableTierName(TableTier tier);

struct CounterTableStats {
  int64_t first_id = 0;
  int64_t last_id = 0;
  uint64_t capacity = 0;
  uint64_t used = 0;
  uint64_t tombstones = 0;
  double fill = 0;
  size_t bytes = 0;  // mapped bytes
  double mean_probes = 0;
  uint32_t max_probes = 0;  // high-water mark
  TableTier tier = TableTier::kHot;
  uint64_t cold_keys = 0;  // keys of a spilling or cold table
};

struct CounterSpaceStats {
  std::vector<CounterTableStats> tables;
  size_t num_keys = 0;
  size_t table_keys = 0;
  size_t aux_keys = 0;
  size_t extend_keys = 0;
  size_t memory_bytes = 0;   // MemoryUsage()
  double bytes_per_key = 0;  // memory_bytes / num_keys (0 when empty)
  double mean_probes = 0;    // over all table keys
  uint32_t max_probes = 0;   // over all tables
  // Since this object was created (not persisted):
  uint64_t aux_entries = 0;         // keys that moved or were written to aux
  uint64_t extend_probe_limit = 0;  // new keys with no free slot within the probe limit
  uint64_t extend_table_full = 0;   // new keys whose table was full (or reserved ids)
  uint64_t growths = 0;             // times the newest table grew into a larger one
  bool growing = false;             // a growth step is moving keys now
  // The cold tier: keys in spilling or cold ranges (on disk or in the warm cache),
  // and the warm cache's entries, dirty entries and bytes.
  uint64_t cold_keys = 0;
  size_t warm_entries = 0;
  size_t warm_dirty = 0;
  size_t warm_bytes = 0;
};


// Byte streams for counter space snapshots: the RDB code adapts its own checksummed
// streams to these; SerializeTo/DeserializeFrom use strings.
class CounterSnapshotSink {
 public:
  virtual ~CounterSnapshotSink() = default;
  virtual void Write(const char* p, size_t n) = 0;
};

class CounterSnapshotSource {
 public:
  virtual ~CounterSnapshotSource() = default;
  // Reads exactly n bytes; false at the end of the input or on a read error.
  virtual bool Read(char* p, size_t n) = 0;
};

// The string forms (SerializeTo/DeserializeFrom, tests).
class CounterStringSink : public CounterSnapshotSink {
 public:
  explicit CounterStringSink(std::string* out) : out_(out) {}
  void Write(const char* p, size_t n) override { out_->append(p, n); }

 private:
  std::string* out_;
};

class CounterStringSource : public CounterSnapshotSource {
 public:
  explicit CounterStringSource(std::string_view in) : in_(in) {}
  bool Read(char* p, size_t n) override;
  size_t remaining() const { return in_.size(); }

 private:
  std::string_view in_;
};

// Where a key lives (for tests and diagnostics).
enum class CounterLocation { kAbsent, kTable, kAux, kExtend, kCold };

// CounterDict: the aux and extend dictionaries, id -> width full 64-bit counters, kept in
// one flat row array so an entry costs a hash node plus its counters. Pointers it
// returns are valid until the next Insert. Not thread-safe; owned by its CounterSpace.
class CounterDict {
 public:
  explicit CounterDict(size_t width) : width_(width) {}

  size_t size() const { return index_.size(); }
  uint64_t* Find(int64_t id);
  const uint64_t* Find(int64_t id) const;
  // Adds id with all counters zero. REQUIRES: id absent.
  uint64_t* Insert(int64_t id);
  bool Erase(int64_t id);
  size_t MemoryUsage() const;
  // f(int64_t id, const uint64_t* counters); order unspecified.
  template <class F>
  void ForEach(F&& f) const {
    for (const auto& [id, row] : index_) f(id, &rows_[row * width_]);
  }

 private:
  size_t width_;
  std::unordered_map<int64_t, size_t> index_;  // id -> row number in rows_
  std::vector<uint64_t> rows_;
  std::vector<size_t> free_rows_;  // erased rows, reused before rows_ grows
};

class CounterSpace {
 public:
  // Out-of-range options are clamped to the nearest valid value; use ValidateOptions to
  // reject them instead (CONFIG SET).
  CounterSpace(CounterSchema schema, CounterOptions options);
  ~CounterSpace();
  CounterSpace(const CounterSpace&) = delete;
  CounterSpace& operator=(const CounterSpace&) = delete;

  // InvalidArgument unless a table of options.table_bytes holds at least
  // CounterTable::kMinCapacity slots of `slot_bytes`, max_fill is in (0, 1] and
  // max_probes in [1, CounterTable::kMaxProbesLimit].
  static Status ValidateOptions(const CounterOptions& options, size_t slot_bytes);

  const CounterSchema& schema() const { return *schema_; }
  const CounterOptions& options() const { return options_; }
  // New values apply to tables created later (clamped as in the constructor).
  void SetOptions(const CounterOptions& options);

  // Adds delta to one counter and returns the new value. A decrement below zero clamps
  // at 0 (a racing "unlike" must not fail); a result above 2^64-1 fails with
  // OutOfRange and changes nothing. A write that would create a key with all
  // counters zero creates nothing.
  Status IncrBy(int64_t id, size_t field, int64_t delta, uint64_t* new_value);
  // Sets one counter; same creation rule as IncrBy.
  Status Set(int64_t id, size_t field, uint64_t value);
  // All counters of id into values[0..num_fields); zeros if absent.
  void Get(int64_t id, uint64_t* values) const;
  // One counter (0 if absent). REQUIRES: field < num_fields.
  uint64_t GetField(int64_t id, size_t field) const;
  bool Exists(int64_t id) const { return Locate(id) != CounterLocation::kAbsent; }
  // Removes id from wherever it lives; true if it existed.
  bool Del(int64_t id);

  size_t num_keys() const;
  // Growth (see the file comment): true while the newest table's keys are being moved
  // into its larger successor. GrowStep moves the keys of up to `slots` more slots of the
  // old table (the cron calls it); FinishGrowth moves all that are left.
  bool growing() const { return growing_from_ != nullptr; }
  // Slots per cron tick: about a millisecond of moves, as Redis's rehash budget.
  static constexpr uint64_t kCronGrowSlots = 32768;
  void GrowStep(uint64_t slots);
  void FinishGrowth();
  // The touched bytes of every table's slots (the part of MemoryUsage that costs RSS).
  size_t TableBytes() const;
  // Bytes in use: every table's touched pages (the rest of a table's mapping is a
  // reservation that costs no RSS) and its touched-page record, plus the dictionaries.
  size_t MemoryUsage() const;
  CounterSpaceStats Stats() const;

  CounterLocation Locate(int64_t id, size_t* table_index = nullptr) const;
  size_t num_tables() const { return tables_.size(); }
  const CounterTable& table(size_t i) const { return *tables_[i]; }
  // Largest id ever written (INT64_MIN before any); the next table starts above it.
  int64_t max_id_seen() const { return max_id_seen_; }

  // Full consistency check: every table slot, table ranges, one place per key.
  Status Validate() const;

  // --- the cold tier (storage/counter_space_tier.cc; see the file comment) ---
  // Synchronous read of one id from the cold store, for callers that cannot wait for a
  // load (commands applied from the log): *found false when the store has no row.
  using ColdReader = std::function<Status(int64_t id, uint64_t* values, bool* found)>;
  void set_cold_reader(ColdReader reader) { cold_reader_ = std::move(reader); }
  // Keys of spilling and cold ranges (on disk or in the warm cache).
  uint64_t cold_keys() const {
    uint64_t n = 0;
    for (const Tier& t : tiers_) n += t.keys;
    return n;
  }
  // True while some table is spilling or cold.
  bool tiered() const { return tiered_; }
  TableTier tier(size_t table) const { return tiered_ ? tiers_[table].state : TableTier::kHot; }
  // Names this space's rows in the cold store; 0 until its first spill. Kept in
  // snapshots, so a restarted server finds the rows of its cold tables.
  uint64_t cold_generation() const { return cold_generation_; }
  void set_cold_generation(uint64_t g) { cold_generation_ = g; }
  // True if id's range is cold and the warm cache does not hold id: a command must wait
  // until InsertLoaded brings it.
  bool NeedsLoad(int64_t id) const;
  // The tier of the table owning id (hot for ids outside every table).
  TableTier TierOf(int64_t id) const {
    const int r = TieredRoute(id);
    return r < 0 ? TableTier::kHot : tiers_[r].state;
  }
  // What the cold store holds for id (nullptr: no row). Ignored unless NeedsLoad(id).
  Status InsertLoaded(int64_t id, std::string_view row);
  // The table a spill takes next: the oldest hot table that is not the newest; -1 if
  // none (or a spill is running).
  int SpillCandidate() const;
  // Freezes table `table` for a spill and returns it (the spiller may read it on any
  // thread while the space lives or not); O(1). Aux and extend keys of its range stay
  // in their dicts. InvalidArgument if it is the newest or not hot, Busy if a spill is
  // running.
  Status BeginSpill(size_t table, std::shared_ptr<const CounterTable>* source);
  int spilling_table() const { return spilling_; }
  // The spill of the spilling table reached the cold store: its range becomes cold and
  // its memory is freed: the frozen table is returned, for the caller to drop where
  // unmapping a large table does not stall commands. `zero_keys`: keys of the frozen
  // table whose counters were all zero, which the spill left out (in a cold range,
  // all zeros is no key).
  std::shared_ptr<const CounterTable> CommitSpill(uint64_t zero_keys);
  // The spill failed: the table is hot again, with the writes made meanwhile. O(1) plus
  // those writes when the spiller no longer holds the table, as it should not.
  void AbortSpill();
  // Write-back: up to `max` written keys of cold ranges (not of a spilling one, whose
  // rows its spill writes) for the cold store, and the store's answer (ok: written;
  // see CounterWarmCache::WrittenBack).
  std::vector<CounterWarmCache::WriteBack> TakeColdDirty(size_t max);
  void ColdWrittenBack(std::span<const CounterWarmCache::WriteBack> written, bool ok) {
    if (warm_) warm_->WrittenBack(written, ok);
  }
  size_t warm_dirty() const { return warm_ ? warm_->dirty() : 0; }
  // Drops clean warm entries until the cache holds at most `budget` bytes.
  size_t TrimWarm(size_t budget, size_t max_visits);
  size_t WarmBytes() const { return warm_ ? warm_->MemoryUsage() : 0; }
  // The id ranges [first, last] of the cold tables, ascending (DEBUG DIGEST reads
  // their rows from the store).
  std::vector<std::pair<int64_t, int64_t>> ColdRanges() const;
  // f(id, counters) for every warm cache entry of a cold range: the current counters
  // of those ids (loaded, written, or all zero for an absent answer), which take
  // precedence over the store's rows.
  void ForEachColdCached(const std::function<void(int64_t, std::span<const uint64_t>)>& f) const;

  // Snapshots (storage/counter_space_codec.cc; format in docs/formats.md, "Counter space
  // snapshot"). WriteTo streams a self-contained, XXH3-checksummed image to `sink` in
  // pieces of at most 64 KiB: each table as its non-zero 64 KiB chunks, zero runs
  // skipped, reading only the table's touched pages. It never copies a table, only reads
  // the space and is safe in a forked child. SerializeTo appends the same bytes.
  void WriteTo(CounterSnapshotSink* sink) const;
  void SerializeTo(std::string* out) const;
  // Rebuild a space from an image of format version 2 or 1 (whole tables, still read).
  // Checks everything; Corruption on bad input (NoSpace if a table cannot be mapped).
  // ReadFrom consumes exactly one image from `src` and verifies its checksum at the end;
  // DeserializeFrom verifies it first and requires `in` to be exactly one image.
  static Status ReadFrom(CounterSnapshotSource* src, std::unique_ptr<CounterSpace>* out);
  static Status DeserializeFrom(std::string_view in, std::unique_ptr<CounterSpace>* out);

  // f(int64_t id, std::span<const uint64_t> counters) for every key in memory: tables
  // in id-range order (slot order within one; the newest's old table while it grows),
  // then aux, then extend, then a spilling table's keys as the warm cache has them. The
  // keys of cold ranges are not visited (they are on disk).
  template <class F>
  void ForEachKey(F&& f) const;

 private:
  template <class Compute>
  Status Update(int64_t id, size_t field, Compute compute, uint64_t* new_value);
  // Index of the table owning id, or -1 (no tables yet, or a reserved id).
  int Route(int64_t id) const;
  // Starts a new newest table for `id`: at max_id_seen_ + 1, or at `id` itself when
  // keys above it exist (they move over). False if no table can start there.
  bool Roll(int64_t id);
  // Appends a table starting at first_id, sized for `keys` keys (at least the first
  // growth size, at most options_.table_bytes).
  Status AddTable(int64_t first_id, uint64_t keys = 0);
  // The meta of a new table for [first_id, last_id] of about `table_bytes` bytes.
  CounterTableMeta NewMeta(int64_t first_id, int64_t last_id, uint64_t table_bytes) const;
  // Makes room in the newest table before a new key goes there: a growth step, and when
  // the table is full a growth or a roll. True if tables changed (routes and probes
  // must be recomputed).
  bool PrepareNewest(int64_t id);
  // Starts the newest table's growth into one 1.5x larger; false if it is at
  // counter-table-size already or the mapping fails.
  bool StartGrowth();
  // The table holding id among the ones `route` names (the routed table and, for the
  // newest, the table it grows from), with its probe; nullptr if in neither.
  CounterTable* FindSlot(int64_t id, int route, CounterTable::Probe* probe);
  const CounterTable* FindSlot(int64_t id, int route, CounterTable::Probe* probe) const;
  // Writes a new key (REQUIRES: absent everywhere) with counters `row`.
  // route/probe: Route(id) and, if >= 0, that table's Lookup(id).
  void Place(int64_t id, int route, CounterTable::Probe probe, const uint64_t* row);
  // Place for a key whose counters are zero except `field` = value.
  void Place(int64_t id, int route, CounterTable::Probe probe, size_t field, uint64_t value);
  // Cross-structure checks shared by Validate and ReadFrom.
  Status ValidateLayout() const;

  // --- the cold tier ---
  struct Tier {
    TableTier state = TableTier::kHot;
    uint64_t keys = 0;  // keys of the range while spilling or cold
  };
  // The route of id if its range is spilling or cold, else -1. The aux and
  // extend keys of such a range stay in their dicts (in memory, as before the
  // spill): for them it is -1 too, and the hot paths find them there.
  int TieredRoute(int64_t id) const {
    if (!tiered_) return -1;
    const int r = Route(id);
    if (r < 0 || tiers_[r].state == TableTier::kHot) return -1;
    if ((aux_.size() != 0 && aux_.Find(id) != nullptr) || (extend_.size() != 0 && extend_.Find(id) != nullptr)) {
      return -1;
    }
    return r;
  }
  // The counters of a tiered id (route r) into values; true if the key exists.
  bool TieredGet(int r, int64_t id, uint64_t* values) const;
  // The warm row of a tiered id for a write (made from the spilling table, the cold
  // reader or zeros if not cached); *existed says whether the key had a counter.
  uint64_t* TieredRowForWrite(int r, int64_t id, bool* existed);
  // Bookkeeping after a tiered write: the range's key count.
  void TieredWritten(int r, bool existed, const uint64_t* row);
  void MakeTiered();
  // Replaces a hot key's counters (all zero: deletes it). Used by AbortSpill and loads.
  void SetHotRow(int64_t id, const uint64_t* row);

  std::shared_ptr<const CounterSchema> schema_;
  CounterOptions options_;
  std::vector<std::unique_ptr<CounterTable>> tables_;
  std::vector<int64_t> starts_;  // tables_[i]->first_id(), for the routing binary search
  // While the newest table grows: its previous, smaller table (same id range), whose
  // slots below grow_cursor_ have been moved out.
  std::unique_ptr<CounterTable> growing_from_;
  uint64_t grow_cursor_ = 0;
  uint64_t growths_ = 0;
  CounterDict aux_;
  CounterDict extend_;
  int64_t max_id_seen_;
  uint64_t aux_entries_ = 0;
  uint64_t extend_probe_limit_ = 0;
  uint64_t extend_table_full_ = 0;
  // The cold tier (empty / null until the first spill).
  bool tiered_ = false;
  std::vector<Tier> tiers_;  // parallel to tables_ once tiered_
  int spilling_ = -1;
  std::shared_ptr<const CounterTable> spill_source_;  // the spilling table's keys
  mutable std::unique_ptr<CounterWarmCache> warm_;    // a read refreshes its LRU
  uint64_t cold_generation_ = 0;
  ColdReader cold_reader_;
};

template <class F>
void CounterSpace::ForEachKey(F&& f) const {
  const size_t n = schema_->num_fields();
  std::array<uint64_t, CounterSchema::kMaxFields> values;
  auto emit_slot = [&](int64_t id, const char* slot) {
    schema_->LoadAll(slot, values.data());
    f(id, std::span<const uint64_t>(values.data(), n));
  };
  for (const auto& t : tables_) t->ForEachUsed(emit_slot);
  if (growing_from_) growing_from_->ForEachUsed(emit_slot);
  auto emit = [&](int64_t id, const uint64_t* row) { f(id, std::span<const uint64_t>(row, n)); };
  aux_.ForEach(emit);
  extend_.ForEach(emit);
  if (spilling_ >= 0) {
    spill_source_->ForEachUsed([&](int64_t id, const char* slot) {
      if (!warm_->Contains(id)) emit_slot(id, slot);
    });
    const CounterTable& t = *tables_[spilling_];
    warm_->ForEach([&](int64_t id, const uint64_t* row, bool) {
      if (!t.Owns(id)) return;
      for (size_t i = 0; i < n; i++) {
        if (row[i] != 0) return emit(id, row);
      }
    });
  }
}

}  // namespace feedkv
