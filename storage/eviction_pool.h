// EvictionPool: the best eviction candidates seen so far, as Redis's
// EvictionPoolLRU (evict.c). Each round of sampled eviction offers the keys it
// sampled with a score (idle time under LRU, 255 minus the frequency under
// LFU, the inverse of the expire time under volatile-ttl: higher is a better
// victim), and the pool keeps the kSize best by score. So a key needs not be
// the worst of one small sample to go, only the worst of everything sampled
// lately, which brings a sample of 5 close to true LRU.
//
// Candidates are held by name (db, key), not by pointer: the key may be
// deleted or rewritten between rounds, so the evictor checks that a popped
// candidate still exists. Not thread-safe: the command thread only.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace feedkv {

class EvictionPool {
 public:
  static constexpr size_t kSize = 16;

  // Offers a candidate. A key already in the pool is re-scored.
  void Offer(uint64_t score, int db, std::string_view key);
  // Takes out the highest-scored candidate; false when the pool is empty.
  bool PopBest(int* db, std::string* key);
  // Forgets every candidate (FLUSHALL, a policy change).
  void Clear() { size_ = 0; }
  size_t size() const { return size_; }

 private:
  struct Candidate {
    uint64_t score = 0;
    int db = 0;
    std::string key;
  };
  void Remove(size_t i);

  // slots_[0, size_) sorted by ascending score: the best victim is last.
  std::array<Candidate, kSize> slots_;
  size_t size_ = 0;
};

}  // namespace feedkv
