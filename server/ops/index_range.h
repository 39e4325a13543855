// Redis's index arithmetic, shared by the list and sorted-set operations: negative
// indexes count from the end. Pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

namespace feedkv::server {

// One index as LINDEX/LSET take it: false when out of range, else *out in [0, size).
inline bool ResolveIndex(int64_t index, size_t size, size_t* out) {
  const auto n = static_cast<int64_t>(size);
  if (index < 0) index += n;
  if (index < 0 || index >= n) return false;
  *out = static_cast<size_t>(index);
  return true;
}

// start/stop as LRANGE, LTRIM, ZRANGE and ZREMRANGEBYRANK take them, clamped to the
// size: false when the range is empty, else *lo..*hi inclusive.
inline bool ResolveRange(int64_t start, int64_t stop, size_t size, size_t* lo, size_t* hi) {
  const auto n = static_cast<int64_t>(size);
  if (start < 0) start += n;
  if (stop < 0) stop += n;
  if (start < 0) start = 0;
  if (start > stop || start >= n) return false;
  if (stop >= n) stop = n - 1;
  *lo = static_cast<size_t>(start);
  *hi = static_cast<size_t>(stop);
  return true;
}

}  // namespace feedkv::server
