// CounterTable: one pre-allocated, fixed-capacity open-addressing table of counter slots
// (layout in counter_schema.h) owning the id range [first_id, last_id]. It is a
// self-contained unit: its metadata plus its raw slot bytes (data(), bytes()) are all
// that is needed to rebuild it (FromBytes), which is what snapshots and the cold tier
// rely on. Not thread-safe; owned by the command thread.
//
// Slot states are encoded in the stored id, so a slot costs no bit beyond its id and
// fields: a slot stores `id XOR 2^63`; stored 0 (all-zero memory) is an empty slot and
// stored 1 a tombstone. The two ids that would encode to those values, INT64_MIN and
// INT64_MIN+1, are never placed in a table (IsReservedId); the space keeps them in its
// side dictionaries, so every int64 id stays valid.
//
// Probing is double hashing: slot_n = (h1 + n*h2) mod capacity with
// h1 = fastrange(XXH3(id, seed1), capacity), h2 = 1 + fastrange(XXH3(id, seed2), capacity-1)
// and a prime capacity, so every h2 is coprime with it; a probe stops at an empty slot
// or after max_probes steps.
//
// Touched pages: the table remembers which kPageBytes pages of its slot bytes were ever
// written (a slot overlapping them inserted, or bytes loaded into them); every other
// page is all zero. Scans (ForEachUsed, validation on load) and snapshots visit touched
// pages only, and the record itself is sparse (PageSet), so their cost and its size
// follow the keys, not the size of the table's reservation (1 GiB default, up to 1 TiB).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "storage/counter_schema.h"
#include "storage/page_set.h"
#include "storage/status.h"

namespace feedkv {

// Everything about a table except its slots. Fixed when the table is created.
struct CounterTableMeta {
  int64_t first_id = std::numeric_limits<int64_t>::min();
  int64_t last_id = std::numeric_limits<int64_t>::max();  // inclusive
  uint64_t capacity = 0;                                  // slots; a prime >= kMinCapacity
  uint32_t max_probes = 0;                                // probe limit, 1..kMaxProbesLimit
  uint64_t max_used = 0;  // the table counts as full at this many keys (max fill * capacity)
  uint64_t seed1 = 0;
  uint64_t seed2 = 0;

  bool operator==(const CounterTableMeta&) const = default;
};

class CounterTable {
 public:
  static constexpr uint64_t kNoSlot = ~uint64_t{0};
  static constexpr uint64_t kMinCapacity = 3;
  static constexpr uint32_t kMaxProbesLimit = 1024;
  static constexpr uint64_t kMaxTableBytes = uint64_t{1} << 40;
  static constexpr uint64_t kDefaultSeed1 = 0x9e3779b97f4a7c15ULL;
  static constexpr uint64_t kDefaultSeed2 = 0xc2b2ae3d27d4eb4fULL;
  // Encoded size of CounterTableMeta (EncodeMeta).
  static constexpr size_t kMetaBytes = 8 + 8 + 8 + 4 + 8 + 8 + 8;
  // Granularity of touched-page tracking (a fixed 4 KiB, whatever the host's page size).
  static constexpr size_t kPageBytes = 4096;

  // The largest prime number of slots of `slot_bytes` that fits in `table_bytes`, or 0
  // when fewer than kMinCapacity slots fit.
  static uint64_t CapacityFor(uint64_t table_bytes, size_t slot_bytes);
  // Checks meta against the invariants above for slots of `slot_bytes`.
  static Status ValidateMeta(const CounterTableMeta& meta, size_t slot_bytes);

  // A new, empty table. Its slots are an anonymous mapping, so pages cost RSS only once
  // touched. Fails with InvalidArgument on bad meta, NoSpace if the mapping fails.
  static Status Create(std::shared_ptr<const CounterSchema> schema, const CounterTableMeta& meta,
                       std::unique_ptr<CounterTable>* out);
  // A table adopting a copy of `raw` (capacity * slot_bytes bytes, as data() returned).
  // Validates every slot: ids in range and reachable by their probe sequence, no
  // duplicates, padding and the fields of free slots zero. Corruption on bad input.
  // All-zero pages of `raw` are not copied (they cost no RSS and stay untouched).
  static Status FromBytes(std::shared_ptr<const CounterSchema> schema, const CounterTableMeta& meta,
                          std::string_view raw, std::unique_ptr<CounterTable>* out);

  // Loading in pieces (snapshot readers): Create a table, write its slot bytes through
  // LoadTarget, then FinishLoad validates every touched slot as FromBytes does and sets
  // the counters. Use only between Create and FinishLoad, on a table no key was
  // inserted into. LoadTarget marks the pages of [offset, offset + n) touched and
  // returns where to write them. REQUIRES: offset + n <= bytes().
  char* LoadTarget(uint64_t offset, size_t n);
  // Copies `raw` to [offset, offset + raw.size()) except its all-zero pages, which stay
  // untouched. REQUIRES: offset a multiple of kPageBytes, within bytes().
  void LoadNonZero(uint64_t offset, std::string_view raw);
  Status FinishLoad();

  ~CounterTable();
  // Exchanges everything with `other` (O(1); an aborted spill takes its table back).
  void SwapWith(CounterTable& other) noexcept;
  CounterTable(const CounterTable&) = delete;
  CounterTable& operator=(const CounterTable&) = delete;

  // True for the two ids whose encoding collides with the empty/tombstone markers.
  static bool IsReservedId(int64_t id) { return id <= std::numeric_limits<int64_t>::min() + 1; }

  const CounterTableMeta& meta() const { return meta_; }
  const CounterSchema& schema() const { return *schema_; }
  int64_t first_id() const { return meta_.first_id; }
  int64_t last_id() const { return meta_.last_id; }
  bool Owns(int64_t id) const { return id >= meta_.first_id && id <= meta_.last_id; }
  // Narrows the range when a newer table takes over the ids above.
  // REQUIRES: first_id() <= last <= last_id() and no key above `last`.
  void set_last_id(int64_t last);

  uint64_t capacity() const { return meta_.capacity; }
  uint64_t used() const { return used_; }
  uint64_t tombstones() const { return tombstones_; }
  double fill() const { return static_cast<double>(used_) / static_cast<double>(meta_.capacity); }
  // A full table takes no new keys (they go to the space's extend dict).
  bool full() const { return used_ >= meta_.max_used; }
  size_t slot_bytes() const { return slot_bytes_; }

  // The raw slots: capacity() * slot_bytes() bytes, little-endian, see the file comment.
  const char* data() const { return base_; }
  size_t bytes() const { return meta_.capacity * slot_bytes_; }
  // Bytes reserved from the OS for the slots (bytes() rounded up to whole pages).
  size_t mapped_bytes() const { return mapped_bytes_; }

  // Touched pages (see the file comment): page p covers bytes [p, p + 1) * kPageBytes of
  // data(); an untouched page is all zero.
  uint64_t num_pages() const { return (bytes() + kPageBytes - 1) / kPageBytes; }
  bool page_touched(uint64_t page) const { return touched_.Contains(page); }
  uint64_t touched_pages() const { return touched_.size(); }
  // The touched pages as increasing runs, replacing *out; costs what the touched pages
  // cost (never a walk of the whole table).
  void TouchedRuns(std::vector<PageSet::Run>* out) const { touched_.Runs(out); }
  // Bytes of slots in use: the touched pages, which are all that costs RSS (the rest of
  // the mapping is a reservation), at most mapped_bytes().
  size_t touched_bytes() const {
    return std::min<uint64_t>(mapped_bytes_, touched_.size() * kPageBytes);
  }
  // Heap bytes of the touched-page record (sparse: grows with the pages touched).
  size_t tracking_bytes() const { return touched_.memory_bytes(); }
  // Calls f(first_slot, end_slot) for disjoint, increasing runs of slots that cover
  // every slot overlapping a touched page. Slots outside them are all zero.
  template <class F>
  void ForEachTouchedSlotRange(F&& f) const;

  // Mean probes per key (1 = found at its home slot) and the longest probe an insert has
  // needed (a high-water mark: erasing that key does not lower it).
  double mean_probes() const;
  uint32_t max_probe_seen() const { return max_probe_seen_; }
  // Sum over keys of the probe number of their slot (mean_probes() * used()).
  uint64_t probe_sum() const { return probe_sum_; }

  // Result of Lookup. found: `slot` holds the id. Not found: `slot` is where an insert
  // would go (first tombstone or empty slot seen), or kNoSlot when the probe limit ran
  // out first. `probes` is the 1-based probe number of `slot`.
  struct Probe {
    uint64_t slot = kNoSlot;
    uint32_t probes = 0;
    bool found = false;
  };
  // REQUIRES: !IsReservedId(id).
  Probe Lookup(int64_t id) const;

  // Claims p.slot for id and returns the slot, fields zero.
  // REQUIRES: p = Lookup(id) with no change since, !p.found, p.slot != kNoSlot, !full().
  char* Insert(int64_t id, const Probe& p);
  // Frees the slot of a found key (it becomes a tombstone, fields zeroed).
  // REQUIRES: p = Lookup(id) with no change since, p.found.
  void Erase(const Probe& p);

  // True if slot i holds a key, with its id in *id. REQUIRES: i < capacity().
  bool KeyAt(uint64_t i, int64_t* id) const {
    const uint64_t stored = counter_coding::LoadLE64(slot(i));
    if (stored == kEmpty || stored == kTombstone) return false;
    *id = Decode(stored);
    return true;
  }

  char* slot(uint64_t i) { return base_ + i * slot_bytes_; }
  const char* slot(uint64_t i) const { return base_ + i * slot_bytes_; }

  // The probe sequence of id: home slot h1 and step h2. Exposed for tests and tools.
  void ProbeStart(int64_t id, uint64_t* home, uint64_t* step) const;

  // Calls f(int64_t id, const char* slot) for every key, in slot order. Visits touched
  // pages only.
  template <class F>
  void ForEachUsed(F&& f) const;

  // Re-checks every slot and the cached counters (used, tombstones, probe sums) against
  // the slots, and that untouched pages are zero. O(capacity * probes); for tests.
  Status Validate() const;

  // Appends meta as kMetaBytes little-endian bytes; DecodeMeta consumes them from *in.
  void EncodeMeta(std::string* out) const;
  static Status DecodeMeta(std::string_view* in, CounterTableMeta* meta);

 private:
  static constexpr uint64_t kSignFlip = uint64_t{1} << 63;
  static constexpr uint64_t kEmpty = 0;
  static constexpr uint64_t kTombstone = 1;

  CounterTable(std::shared_ptr<const CounterSchema> schema, const CounterTableMeta& meta);
  Status Map();
  void Touch(uint64_t begin, uint64_t end);  // marks the pages of bytes [begin, end)
  // f(slot index) for every slot with a non-zero byte, in order (all-zero slots are
  // empty slots with zero fields: valid, and skipped 8 bytes at a time).
  template <class F>
  void ForEachNonZeroSlot(F&& f) const;
  // Recomputes the counters from the slots, validating them; Corruption on a bad slot.
  Status Scan(uint64_t* used, uint64_t* tombstones, uint64_t* probe_sum, uint32_t* max_probe) const;
  Status ScanSlot(uint64_t i, size_t field_bytes, uint64_t* used, uint64_t* tombstones,
                  uint64_t* probe_sum, uint32_t* max_probe) const;

  static uint64_t Encode(int64_t id) { return static_cast<uint64_t>(id) ^ kSignFlip; }
  static int64_t Decode(uint64_t stored) { return static_cast<int64_t>(stored ^ kSignFlip); }

  std::shared_ptr<const CounterSchema> schema_;
  CounterTableMeta meta_;
  size_t slot_bytes_;
  char* base_ = nullptr;
  size_t mapped_bytes_ = 0;
  PageSet touched_;  // the kPageBytes pages of the slots ever written
  uint64_t used_ = 0;
  uint64_t tombstones_ = 0;
  uint64_t probe_sum_ = 0;  // sum over keys of the probe number of their slot
  uint32_t max_probe_seen_ = 0;
};

template <class F>
void CounterTable::ForEachTouchedSlotRange(F&& f) const {
  std::vector<PageSet::Run> runs;
  touched_.Runs(&runs);
  uint64_t done = 0;  // slots below this were reported
  for (const PageSet::Run& r : runs) {
    const uint64_t first = std::max(done, r.first * kPageBytes / slot_bytes_);
    const uint64_t end =
        std::min<uint64_t>(meta_.capacity, (r.end * kPageBytes + slot_bytes_ - 1) / slot_bytes_);
    if (first < end) f(first, end);
    done = std::max(done, end);
  }
}

template <class F>
void CounterTable::ForEachNonZeroSlot(F&& f) const {
  ForEachTouchedSlotRange([&](uint64_t first, uint64_t end) {
    const uint64_t end_byte = end * slot_bytes_;
    for (uint64_t at = first * slot_bytes_; at < end_byte;) {
      at += counter_coding::FindNonZero(base_ + at, end_byte - at);
      if (at >= end_byte) break;
      const uint64_t i = at / slot_bytes_;
      f(i);
      at = (i + 1) * slot_bytes_;
    }
  });
}

template <class F>
void CounterTable::ForEachUsed(F&& f) const {
  ForEachNonZeroSlot([&](uint64_t i) {
    const char* s = slot(i);
    const uint64_t stored = counter_coding::LoadLE64(s);
    if (stored != kEmpty && stored != kTombstone) f(Decode(stored), s);
  });
}

}  // namespace feedkv
