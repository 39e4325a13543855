// PageSet (storage/page_set.h): membership, counts and ordered runs against a std::set
// model, runs that cross 64-page words, and a size that follows the members, not the
// page numbers' range.
#include "storage/page_set.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

namespace feedkv {
namespace {

std::vector<PageSet::Run> Runs(const PageSet& s) {
  std::vector<PageSet::Run> out;
  s.Runs(&out);
  return out;
}

std::vector<PageSet::Run> ModelRuns(const std::set<uint64_t>& m) {
  std::vector<PageSet::Run> out;
  for (uint64_t p : m) {
    if (!out.empty() && out.back().end == p) {
      ++out.back().end;
    } else {
      out.push_back({p, p + 1});
    }
  }
  return out;
}

TEST(PageSet, EmptyHasNoRuns) {
  PageSet s;
  EXPECT_EQ(s.size(), 0u);
  EXPECT_FALSE(s.Contains(0));
  EXPECT_TRUE(Runs(s).empty());
  s.Add(5, 5);  // empty range
  EXPECT_EQ(s.size(), 0u);
  EXPECT_EQ(s.words(), 0u);
}

TEST(PageSet, RunsMergeAcrossWordsAndCountOnce) {
  PageSet s;
  s.Add(60, 130);  // words 0, 1 and 2
  s.Add(64, 70);   // already there: counted once
  s.Add(200, 201);
  s.Add(128, 192);  // all of word 2
  EXPECT_EQ(s.size(), (192u - 60u) + 1u);
  EXPECT_EQ(Runs(s), (std::vector<PageSet::Run>{{60, 192}, {200, 201}}));
  EXPECT_TRUE(s.Contains(60));
  EXPECT_TRUE(s.Contains(191));
  EXPECT_FALSE(s.Contains(59));
  EXPECT_FALSE(s.Contains(192));
  s.Add(0, 64);  // a whole word
  EXPECT_EQ(Runs(s), (std::vector<PageSet::Run>{{0, 192}, {200, 201}}));
}

TEST(PageSet, MatchesASetModel) {
  std::mt19937_64 rng(11);
  PageSet s;
  std::set<uint64_t> model;
  for (int i = 0; i < 3000; ++i) {
    // Clustered low pages (runs that touch and merge) and a few far ones.
    const uint64_t first = i % 10 == 0 ? rng() >> 20 : rng() % 5000;
    const uint64_t end = first + rng() % 150;
    s.Add(first, end);
    for (uint64_t p = first; p < end; ++p) model.insert(p);
  }
  EXPECT_EQ(s.size(), model.size());
  EXPECT_EQ(Runs(s), ModelRuns(model));
  for (uint64_t p = 0; p < 6000; ++p) ASSERT_EQ(s.Contains(p), model.count(p) == 1) << p;
}

TEST(PageSet, SizeFollowsMembersNotTheirRange) {
  // One page at the far end of a 1 TiB table's 2^28 pages: a bitmap over the range would
  // take 32 MiB; the set holds one word.
  PageSet s;
  s.Add((uint64_t{1} << 28) - 1, uint64_t{1} << 28);
  EXPECT_EQ(s.words(), 1u);
  EXPECT_LT(s.memory_bytes(), 1024u);
  // 1000 scattered pages: at most one word each.
  std::mt19937_64 rng(3);
  for (int i = 0; i < 1000; ++i) {
    const uint64_t p = rng() >> 36;
    s.Add(p, p + 1);
  }
  EXPECT_LE(s.words(), 1001u);
  EXPECT_LT(s.memory_bytes(), 1001u * 64);
}

}  // namespace
}  // namespace feedkv
