// HashOrderScan: SCAN-style iteration of a hash container whose slots move
// (open addressing with backward-shift deletion, resizes), done in the order of
// a fixed 64-bit key per member instead of slot order. The cursor is a key: each
// call returns the members whose keys are the next smallest at or above it. A
// member present for the whole scan is returned exactly once, whatever the
// container does between calls; each call walks every member once (O(n)), and
// returns at least size/64 members, so a whole scan costs O(64 n) at most.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace feedkv {

// for_each(f) calls f(const T&) once per member; key_of(const T&) is its scan key.
// Replaces *out with the next batch (in key order) and returns the next cursor, 0 at
// the end. Members sharing the batch's last key all go into the batch, so none is
// split off and lost.
template <class T, class ForEach, class KeyOf>
uint64_t HashOrderScan(size_t size, uint64_t cursor, size_t count, ForEach&& for_each,
                       KeyOf&& key_of, std::vector<T>* out) {
  out->clear();
  const size_t batch = std::max<size_t>({count, (size + 63) / 64, 1});
  std::vector<uint64_t> heap;  // max-heap of the smallest `batch` keys >= cursor
  heap.reserve(std::min(batch, size));
  for_each([&](const T& m) {
    const uint64_t key = key_of(m);
    if (key < cursor) return;
    if (heap.size() < batch) {
      heap.push_back(key);
      std::push_heap(heap.begin(), heap.end());
    } else if (key < heap.front()) {
      std::pop_heap(heap.begin(), heap.end());
      heap.back() = key;
      std::push_heap(heap.begin(), heap.end());
    }
  });
  if (heap.empty()) return 0;
  const uint64_t last = heap.front();
  bool more = false;
  std::vector<std::pair<uint64_t, T>> picked;
  picked.reserve(heap.size());
  for_each([&](const T& m) {
    const uint64_t key = key_of(m);
    if (key < cursor) return;
    if (key <= last) {
      picked.emplace_back(key, m);
    } else {
      more = true;
    }
  });
  std::sort(picked.begin(), picked.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  out->reserve(picked.size());
  for (const auto& [key, m] : picked) out->push_back(m);
  return more ? last + 1 : 0;  // more => last < UINT64_MAX
}

}  // namespace feedkv
