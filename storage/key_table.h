// KeyTable: the keyspace's hash table. Chains of Entry blocks (linked through
// Entry::next) in a power-of-two bucket array, resized incrementally as
// Redis's dict does.
//
// A resize (grow when keys outnumber buckets, shrink when under 10% full)
// allocates a second array and from then on moves buckets a few at a time:
// one per keyspace operation (RehashStep) and a time-bounded batch per cron
// tick (RehashFor). So no single command pays for rehashing millions of keys.
// While rehashing, new keys go to the new array and lookups check both;
// buckets of the old array below the rehash cursor are empty. The pages of a
// large old array are returned to the OS piecewise behind the rehash cursor,
// so that freeing it at the end is not a stall either.
//
// SCAN's reverse-binary cursor stays valid across resizes and mid-rehash:
// ScanStep visits one bucket of the smaller array and all its expansions in
// the larger one, as Redis's dictScan.
//
// The table links entries but never allocates or frees them (Database owns
// them), so entry pointers survive rehashing; links (Entry**) do not.
// Not thread-safe: used by the command thread only (a fork child may read
// its own copy).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

namespace feedkv {

struct Entry;  // storage/database.h

// Reverses the bits of v (SCAN's cursor increments from the high bits).
inline uint64_t ReverseBits(uint64_t v) {
  v = ((v >> 1) & 0x5555555555555555ull) | ((v & 0x5555555555555555ull) << 1);
  v = ((v >> 2) & 0x3333333333333333ull) | ((v & 0x3333333333333333ull) << 2);
  v = ((v >> 4) & 0x0F0F0F0F0F0F0F0Full) | ((v & 0x0F0F0F0F0F0F0F0Full) << 4);
  v = ((v >> 8) & 0x00FF00FF00FF00FFull) | ((v & 0x00FF00FF00FF00FFull) << 8);
  v = ((v >> 16) & 0x0000FFFF0000FFFFull) | ((v & 0x0000FFFF0000FFFFull) << 16);
  return (v >> 32) | (v << 32);
}

// The next value of a splitmix64 sequence: fully mixed bits, so that bucket
// indexes taken modulo a power of two reach every bucket.
inline uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

class KeyTable {
 public:
  static constexpr size_t kMinBuckets = 16;

  KeyTable();
  ~KeyTable();  // frees the arrays, not the entries
  KeyTable(const KeyTable&) = delete;
  KeyTable& operator=(const KeyTable&) = delete;

  static uint64_t Hash(std::string_view key);

  // The link holding `key`'s entry or, when absent, the null link where a new
  // entry for it belongs (in the new array while rehashing). Valid until the
  // next rehash step or resize.
  Entry** FindLink(std::string_view key, uint64_t hash);
  Entry* Find(std::string_view key, uint64_t hash) const;

  // The two cache misses of a lookup, asked for ahead of it (protocol/
  // pipeline_scan.h says when): the bucket slot `hash` maps to, then, once that
  // slot has arrived, the first entry of its chain. Hints only: they change
  // nothing and never fault.
  void PrefetchSlot(uint64_t hash) const { __builtin_prefetch(Slot(hash)); }
  void PrefetchChainHead(uint64_t hash) const {
    if (const Entry* head = *Slot(hash)) __builtin_prefetch(head);
  }

  // Starts a grow or shrink if `keys` calls for one and none is in progress.
  // While resizing is discouraged (a fork child is writing a snapshot) only
  // a table five times over full grows, as Redis's dict_force_resize_ratio.
  void MaybeResize(size_t keys);
  // Process-wide, as Redis's dictEnableResize/dictDisableResize: set by the
  // command thread while a snapshot child runs, so the parent rewrites (and
  // copies on write) as few bucket pages as it can.
  static void SetResizeDiscouraged(bool discouraged) { resize_discouraged_ = discouraged; }

  // DEBUG HTSTATS: one array's shape, as Redis's dictGetStats counts it.
  struct ArrayStats {
    size_t size = 0;        // buckets
    size_t elements = 0;
    size_t used_slots = 0;  // non-empty buckets
    size_t max_chain = 0;
    size_t chain_counts[50] = {};  // buckets by chain length (the last: 49 or more)
  };
  // which: 0 the main array, 1 the rehashing target (size 0 when none).
  ArrayStats Stats(int which) const;
  // Moves one non-empty bucket (looking at most at 10 empty ones).
  void RehashStep() {
    if (rehashing()) Rehash(1);
  }
  // Rehashes for about `budget_us` microseconds. True while still rehashing.
  bool RehashFor(int64_t budget_us);

  bool rehashing() const { return t1_.buckets != nullptr; }
  size_t bucket_count() const { return t0_.size + t1_.size; }
  // Both arrays, whole (as Redis counts its dict tables).
  size_t MemoryUsage() const { return bucket_count() * sizeof(Entry*); }

  // One SCAN step: calls visit(Entry** head) for each live bucket the cursor
  // designates and returns the next cursor (0 after the last step).
  template <class F>
  uint64_t ScanStep(uint64_t cursor, F&& visit) const;
  // Calls f(Entry* head) for every live bucket.
  template <class F>
  void ForEachHead(F&& f) const;
  // A random entry from a mixed sequence seeded by `seed`; nullptr if empty.
  Entry* Random(uint64_t seed) const;
  // Calls visit(Entry* head) for the live buckets of a random stretch, as
  // Redis's dictGetSomeKeys: from a random bucket onwards, jumping elsewhere
  // after a run of empty buckets, until visit returns false or `max_buckets`
  // buckets have been looked at. Cheap and biased to runs of neighbours, which
  // sampled eviction does not mind.
  template <class F>
  void SampleBuckets(uint64_t seed, size_t max_buckets, F&& visit) const;

  // Unlinks every entry, handing each to free_entry, and returns to the
  // minimal empty table.
  void Clear(void (*free_entry)(Entry*));
  void Swap(KeyTable& other);

 private:
  struct Array {
    Entry** buckets = nullptr;
    size_t size = 0;      // a power of two; 0 when unused
    size_t released = 0;  // bytes of pages already returned to the OS
  };
  static Array Allocate(size_t nbuckets);
  static void Free(Array* a);
  void StartResize(size_t nbuckets);
  // Moves up to n non-empty buckets. False once the rehash has finished.
  bool Rehash(size_t n);
  // Returns pages of t0 behind the rehash cursor to the OS.
  void ReleaseRehashed();
  // The slot a lookup of `hash` reads first (the new array's for a bucket of
  // the old one already rehashed).
  Entry* const* Slot(uint64_t hash) const {
    const size_t i0 = hash & (t0_.size - 1);
    if (!rehashing() || i0 >= rehash_idx_) return &t0_.buckets[i0];
    return &t1_.buckets[hash & (t1_.size - 1)];
  }
  // The bucket of `a` at idx, or nullptr for a t0 bucket already rehashed
  // (empty, its page maybe released).
  Entry** Head(const Array& a, size_t idx) const {
    if (&a == &t0_ && idx < rehash_idx_) return nullptr;
    return &a.buckets[idx];
  }

  static inline bool resize_discouraged_ = false;
  Array t0_;             // the table; the old one while rehashing
  Array t1_;             // the new table while rehashing, else unused
  size_t rehash_idx_ = 0;  // t0 buckets below this are empty
};

template <class F>
uint64_t KeyTable::ScanStep(uint64_t v, F&& visit) const {
  auto advance = [](uint64_t cursor, uint64_t mask) {
    // Increment the reversed cursor: the high bits advance first, so a
    // resize between steps neither skips nor loses buckets.
    cursor |= ~mask;
    return ReverseBits(ReverseBits(cursor) + 1);
  };
  if (!rehashing()) {
    const uint64_t m0 = t0_.size - 1;
    visit(Head(t0_, v & m0));
    return advance(v, m0);
  }
  const Array* small = &t0_;
  const Array* big = &t1_;
  if (small->size > big->size) std::swap(small, big);
  const uint64_t m0 = small->size - 1, m1 = big->size - 1;
  if (Entry** h = Head(*small, v & m0)) visit(h);
  // Then every bucket of the big array whose low bits are this bucket's: the
  // keys a rehash moves between the two arrays stay within this set.
  do {
    if (Entry** h = Head(*big, v & m1)) visit(h);
    v = advance(v, m1);
  } while (v & (m0 ^ m1));
  return v;
}

template <class F>
void KeyTable::SampleBuckets(uint64_t seed, size_t max_buckets, F&& visit) const {
  // One index into both arrays at once, as dictGetSomeKeys: while rehashing,
  // the new array is sparse and the old one half empty, and picking among
  // their buckets separately would land in the emptier one too often.
  const size_t span = std::max(t0_.size, t1_.size);
  uint64_t x = seed;
  size_t i = SplitMix64(&x) % span, empty_run = 0;
  for (size_t step = 0; step < max_buckets; step++) {
    Entry* h0 = i < t0_.size && i >= rehash_idx_ ? t0_.buckets[i] : nullptr;
    Entry* h1 = i < t1_.size ? t1_.buckets[i] : nullptr;
    if (h0 == nullptr && h1 == nullptr) {
      // A run of empty buckets: the table is sparse here; try another spot.
      if (++empty_run >= 5) {
        i = SplitMix64(&x) % span;
        empty_run = 0;
        continue;
      }
    } else {
      empty_run = 0;
      if (h0 != nullptr && !visit(h0)) return;
      if (h1 != nullptr && !visit(h1)) return;
    }
    i = i + 1 == span ? 0 : i + 1;
  }
}

template <class F>
void KeyTable::ForEachHead(F&& f) const {
  for (size_t i = rehash_idx_; i < t0_.size; i++) f(t0_.buckets[i]);
  for (size_t i = 0; i < t1_.size; i++) f(t1_.buckets[i]);
}

}  // namespace feedkv
