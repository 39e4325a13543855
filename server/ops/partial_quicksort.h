// PartialQuickSort: puts into positions lo..hi of a vector what a full sort would
// put there, leaving the rest partitioned but unsorted, as Redis's pqsort (the BSD
// quicksort of Bentley and McIlroy: median-of-three or ninther pivot, three-way
// partition, insertion sort below 7 elements), which recurses only into the parts
// that overlap lo..hi.
//
// Equal elements are not kept in order by a quicksort; this one leaves them where
// Redis's does, step for step, so that GEORADIUS ... COUNT n breaks ties in
// distance as Redis 7.0 does. `cmp(a, b)` returns <0, 0 or >0.
//
// Pure; thread-compatible.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace feedkv::server {

namespace partial_quicksort_detail {

template <class T, class Cmp>
void Sort(std::vector<T>& v, size_t a, size_t n, size_t lo, size_t hi, Cmp& cmp) {
  auto c = [&](size_t i, size_t j) { return cmp(v[i], v[j]); };
  auto swap = [&](size_t i, size_t j) {
    if (i != j) std::swap(v[i], v[j]);
  };
  auto swap_run = [&](size_t i, size_t j, size_t k) {
    for (size_t t = 0; t < k; ++t) swap(i + t, j + t);
  };
  auto med3 = [&](size_t x, size_t y, size_t z) {
    return c(x, y) < 0 ? (c(y, z) < 0 ? y : (c(x, z) < 0 ? z : x)) : (c(y, z) > 0 ? y : (c(x, z) < 0 ? x : z));
  };
  // Whether the part [s, s + len) holds any of lo..hi.
  auto overlaps = [&](size_t s, size_t len) { return !(hi < s || lo >= s + len); };
  for (;;) {
    if (n < 7) {
      for (size_t m = a + 1; m < a + n; ++m) {
        for (size_t l = m; l > a && c(l - 1, l) > 0; --l) swap(l, l - 1);
      }
      return;
    }
    size_t pm = a + n / 2;
    if (n > 7) {
      size_t pl = a, pn = a + n - 1;
      if (n > 40) {
        const size_t d = n / 8;
        pl = med3(pl, pl + d, pl + 2 * d);
        pm = med3(pm - d, pm, pm + d);
        pn = med3(pn - 2 * d, pn - d, pn);
      }
      pm = med3(pl, pm, pn);
    }
    swap(a, pm);  // the pivot waits at a
    // [a, pa): equal to the pivot; [pa, pb): less; (pc, pd]: greater; (pd, end): equal.
    size_t pa = a + 1, pb = a + 1, pc = a + n - 1, pd = a + n - 1;
    for (;;) {
      int r;
      while (pb <= pc && (r = c(pb, a)) <= 0) {
        if (r == 0) swap(pa++, pb);
        ++pb;
      }
      while (pb <= pc && (r = c(pc, a)) >= 0) {
        if (r == 0) swap(pc, pd--);
        --pc;
      }
      if (pb > pc) break;
      swap(pb++, pc--);
    }
    const size_t end = a + n;
    size_t r = std::min(pa - a, pb - pa);
    swap_run(a, pb - r, r);
    r = std::min(pd - pc, end - pd - 1);
    swap_run(pb, end - r, r);
    // The two unsorted parts, less than and greater than the pivot; each is sorted
    // only if it holds part of lo..hi. They are disjoint, so the order they are
    // sorted in changes nothing: the smaller one recurses and the larger one loops,
    // so the stack stays O(log n) even on input chosen to make partitions lopsided
    // (Redis recurses into the first part whatever its size).
    const size_t left_n = pb - pa, right_n = pd - pc;
    const bool left = left_n > 1 && overlaps(a, left_n);
    const bool right = right_n > 1 && overlaps(end - right_n, right_n);
    const size_t left_a = a, right_a = end - right_n;
    if (left && right) {
      if (left_n <= right_n) {
        Sort(v, left_a, left_n, lo, hi, cmp);
        a = right_a;
        n = right_n;
      } else {
        Sort(v, right_a, right_n, lo, hi, cmp);
        a = left_a;
        n = left_n;
      }
    } else if (left) {
      a = left_a;
      n = left_n;
    } else if (right) {
      a = right_a;
      n = right_n;
    } else {
      return;
    }
  }
}

}  // namespace partial_quicksort_detail

// REQUIRES: lo <= hi < v.size().
template <class T, class Cmp>
void PartialQuickSort(std::vector<T>& v, size_t lo, size_t hi, Cmp cmp) {
  partial_quicksort_detail::Sort(v, 0, v.size(), lo, hi, cmp);
}

}  // namespace feedkv::server
