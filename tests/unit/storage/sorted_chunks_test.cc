// Unit tests for SortedChunks: random inserts and erases against a std::map
// model with small chunks (so chunks split, fill in order and empty), ordered
// iteration from any key, and in-order inserts filling every chunk.
#include "storage/sorted_chunks.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

namespace feedkv {
namespace {

using Chunks = SortedChunks<int, int, 8>;

std::vector<std::pair<int, int>> Rows(const Chunks& c) {
  std::vector<std::pair<int, int>> out;
  for (const auto& [k, v] : c) out.emplace_back(k, v);
  return out;
}

TEST(SortedChunksTest, RandomInsertsAndErasesMatchAMap) {
  std::mt19937 rng(5);
  Chunks c;
  std::map<int, int> m;
  for (int step = 0; step < 20000; ++step) {
    const int k = static_cast<int>(rng() % 500);
    if (rng() % 3 != 0) {
      auto [v, inserted] = c.Insert(k, step);
      EXPECT_EQ(inserted, !m.contains(k));
      if (inserted) m[k] = step;
      EXPECT_EQ(*v, m[k]);
    } else {
      EXPECT_EQ(c.Erase(k), m.erase(k) == 1);
    }
    ASSERT_EQ(c.size(), m.size());
    if (step % 251 == 0) {
      const std::vector<std::pair<int, int>> want_rows(m.begin(), m.end());
      ASSERT_EQ(Rows(c), want_rows);
      const int from = static_cast<int>(rng() % 520);
      std::vector<int> got, want;
      for (auto it = c.lower_bound(from); it != c.end(); ++it) got.push_back(it->key);
      for (auto it = m.lower_bound(from); it != m.end(); ++it) want.push_back(it->first);
      ASSERT_EQ(got, want);
      if (!m.empty()) {
        EXPECT_EQ(c.front().key, m.begin()->first);
        EXPECT_EQ(c.back().key, m.rbegin()->first);
      }
    }
    const int probe = static_cast<int>(rng() % 500);
    const int* found = c.Find(probe);
    ASSERT_EQ(found != nullptr, m.contains(probe));
  }
}

TEST(SortedChunksTest, InOrderInsertsFillChunksAndEmptyChunksGo) {
  Chunks c;
  for (int i = 0; i < 64; ++i) c.Insert(i, i);
  // 8 full chunks: an estimate of rows plus 8 handles.
  EXPECT_EQ(c.size(), 64u);
  EXPECT_LE(c.MemoryUsage(), 64 * sizeof(Chunks::Row) + 16 * (sizeof(std::vector<Chunks::Row>) + 16));
  for (int i = 0; i < 64; ++i) EXPECT_TRUE(c.Erase(i));
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(c.begin(), c.end());
  EXPECT_EQ(c.lower_bound(3), c.end());
}

}  // namespace
}  // namespace feedkv
