// PageSet: a sparse set of page numbers, for tracking which pages of a large, lazily
// touched mapping were ever written (CounterTable). It stores only the 64-page words that
// hold a member, in a hash map, so its size follows the pages in the set (about 48 bytes
// per occupied word, at most ~1.2% of the 4 KiB pages it describes) and not the size of
// the mapping: a 1 TiB counter table with one key costs a few hundred bytes, where a
// bitmap over the whole reservation cost 32 MiB. Ordered walks (Runs) sort the occupied
// words, so they cost O(w log w) in the words held, never a scan of the page range.
// Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
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
  size_t words() const { return words_.size(); }
  // Heap bytes held (an estimate of the hash map's buckets and nodes).
  size_t memory_bytes() const;
  // The member runs in increasing order, replacing *out. O(w log w) for w words held.
  void Runs(std::vector<Run>* out) const;

 private:
  std::unordered_map<uint64_t, uint64_t> words_;  // page / 64 -> bit (page % 64) set
  uint64_t count_ = 0;
};

}  // namespace feedkv
