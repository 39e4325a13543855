// PageSet: a sparse set of page numbers, for tracking which pages of a large, lazily
// touched mapping were ever written (CounterTable). It stores only the 64-page words that
// hold a member, in an open-addressing hash table (linear probing, at most half full), so
// its size follows the pages in the set (16-64 bytes per occupied word, at most ~1.6% of
// the 4 KiB pages it describes) and not the size of the mapping: a 1 TiB counter table
// with one key costs a few hundred bytes, where a bitmap over the whole reservation cost
// 32 MiB. Add is a multiply and usually one cache line. Ordered walks (Runs) sort the
// occupied words, so they cost O(w log w) in the words held, never a scan of the page
// range. Not thread-safe.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace feedkv {

class PageSet {
 public:
  // A maximal run of consecutive member pages: [first, end).
  struct Run {
    uint64_t first = 0;
    uint64_t end = 0;
    bool operator==(const Run&) const = default;
  };

  // Adds pages [first, end).
  void Add(uint64_t first, uint64_t end);
  bool Contains(uint64_t page) const;
  // Number of pages in the set.
  uint64_t size() const { return count_; }
  // Number of 64-page words stored (the bookkeeping entries).
  size_t words() const { return used_; }
  // Heap bytes held.
  size_t memory_bytes() const { return slots_.capacity() * sizeof(Slot); }
  // The member runs in increasing order, replacing *out. O(w log w) for w words held.
  void Runs(std::vector<Run>* out) const;

 private:
  struct Slot {
    uint64_t key = 0;   // word index + 1 (page / 64 + 1); 0: an empty slot
    uint64_t bits = 0;  // bit i: page (key - 1) * 64 + i is a member
  };
  // The bits of word w, inserted (zero) if absent.
  uint64_t& Word(uint64_t w);
  size_t Home(uint64_t key) const;
  // The slot holding key, or the empty slot where it would go. REQUIRES: slots exist.
  size_t Find(uint64_t key) const;
  void Grow();

  std::vector<Slot> slots_;  // a power of two in size, or empty
  size_t used_ = 0;          // occupied slots
  uint64_t count_ = 0;
};

// Inline: Add runs on every insert of a new counter key.
inline size_t PageSet::Home(uint64_t key) const {
  // Fibonacci hashing: the top bits of key * 2^64/phi, so neighbouring words spread out.
  const int shift = 64 - std::countr_zero(slots_.size());
  return static_cast<size_t>((key * 0x9e3779b97f4a7c15ULL) >> shift);
}

inline size_t PageSet::Find(uint64_t key) const {
  const size_t mask = slots_.size() - 1;
  size_t i = Home(key);
  while (slots_[i].key != key && slots_[i].key != 0) i = (i + 1) & mask;
  return i;
}

inline uint64_t& PageSet::Word(uint64_t w) {
  const uint64_t key = w + 1;
  if (!slots_.empty()) {
    const size_t i = Find(key);
    if (slots_[i].key == key) return slots_[i].bits;
  }
  // At most half full, so probes stay short and there is always an empty slot.
  if ((used_ + 1) * 2 > slots_.size()) Grow();
  const size_t i = Find(key);
  slots_[i].key = key;
  ++used_;
  return slots_[i].bits;
}

}  // namespace feedkv
