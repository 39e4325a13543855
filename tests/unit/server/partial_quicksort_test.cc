// Unit tests for PartialQuickSort (Redis's pqsort): the requested positions hold
// what a full sort puts there, for every size and window, with many ties.
#include "server/ops/partial_quicksort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace feedkv::server {
namespace {

struct Item {
  int key;
  int id;
};

int CompareKeys(const Item& a, const Item& b) { return a.key < b.key ? -1 : a.key > b.key ? 1 : 0; }

TEST(PartialQuickSortTest, WindowHoldsWhatAFullSortPutsThere) {
  std::mt19937 rng(3);
  for (int n = 1; n <= 200; ++n) {
    for (int trial = 0; trial < 5; ++trial) {
      std::vector<Item> v(n);
      for (int i = 0; i < n; ++i) v[i] = Item{static_cast<int>(rng() % (trial + 2) * 7), i};
      std::vector<Item> sorted = v;
      std::stable_sort(sorted.begin(), sorted.end(), [](const Item& a, const Item& b) { return a.key < b.key; });
      const size_t lo = rng() % n, hi = lo + rng() % (n - lo);
      std::vector<Item> partial = v;
      PartialQuickSort(partial, lo, hi, CompareKeys);
      for (size_t i = lo; i <= hi; ++i) ASSERT_EQ(partial[i].key, sorted[i].key) << n << " " << i;
      // Nothing lost or duplicated.
      std::vector<int> ids;
      for (const Item& it : partial) ids.push_back(it.id);
      std::sort(ids.begin(), ids.end());
      for (int i = 0; i < n; ++i) ASSERT_EQ(ids[i], i);
    }
  }
}

TEST(PartialQuickSortTest, FullWindowSortsEverything) {
  std::mt19937 rng(5);
  std::vector<Item> v(1000);
  for (int i = 0; i < 1000; ++i) v[i] = Item{static_cast<int>(rng() % 50), i};
  PartialQuickSort(v, 0, v.size() - 1, CompareKeys);
  EXPECT_TRUE(std::is_sorted(v.begin(), v.end(), [](const Item& a, const Item& b) { return a.key < b.key; }));
}

}  // namespace
}  // namespace feedkv::server
