#include "storage/counter_warm_cache.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <random>

namespace feedkv {
namespace {

TEST(CounterWarmCacheTest, LoadedRowsAndMissesAreCachedAndCleanUntilWritten) {
  CounterWarmCache c(2);
  const uint64_t row[2] = {7, 9};
  c.InsertLoaded(1, row);
  c.InsertLoaded(2, nullptr);  // absent in the cold tier: cached as zeros
  ASSERT_NE(c.Find(1), nullptr);
  EXPECT_EQ(c.Find(1)[1], 9u);
  EXPECT_EQ(c.Find(2)[0], 0u);
  EXPECT_EQ(c.Find(3), nullptr);
  EXPECT_EQ(c.dirty(), 0u);
  EXPECT_TRUE(c.TakeDirty(10).empty());
  c.Mutable(1)[0] += 1;
  EXPECT_EQ(c.dirty(), 1u);
  // A late load never overwrites what memory holds.
  const uint64_t stale[2] = {0, 0};
  c.InsertLoaded(1, stale);
  EXPECT_EQ(c.Find(1)[0], 8u);
}

TEST(CounterWarmCacheTest, AWriteBackCleansOnlyTheVersionItCarried) {
  CounterWarmCache c(1);
  c.Mutable(5)[0] = 1;
  auto first = c.TakeDirty(10);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].counters[0], 1u);
  EXPECT_TRUE(c.TakeDirty(10).empty()) << "in flight: not handed out twice";
  c.Mutable(5)[0] = 2;  // written while its write-back runs
  auto second = c.TakeDirty(10);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].counters[0], 2u);
  c.WrittenBack(first, true);
  EXPECT_EQ(c.dirty(), 1u) << "the newer value is not stored yet";
  c.WrittenBack(second, true);
  EXPECT_EQ(c.dirty(), 0u);
}

TEST(CounterWarmCacheTest, AFailedWriteBackKeepsTheEntryDirtyAndHandsItOutAgain) {
  CounterWarmCache c(1);
  c.Mutable(5)[0] = 3;
  auto wb = c.TakeDirty(10);
  c.WrittenBack(wb, false);
  EXPECT_EQ(c.dirty(), 1u);
  auto again = c.TakeDirty(10);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].counters[0], 3u);
  c.WrittenBack(again, true);
  EXPECT_EQ(c.dirty(), 0u);
}

TEST(CounterWarmCacheTest, TrimDropsCleanEntriesLeastRecentlyUsedFirstAndNeverDirtyOnes) {
  CounterWarmCache c(1);
  for (int64_t id = 0; id < 100; id++) c.InsertLoaded(id, nullptr);
  c.Mutable(0)[0] = 1;  // dirty and the oldest load
  for (int64_t id = 50; id < 60; id++) c.Find(id);  // recently used
  const size_t per = c.MemoryUsage() / c.size();
  EXPECT_EQ(c.Trim(per * 20), 80u);
  EXPECT_EQ(c.size(), 20u);
  EXPECT_TRUE(c.Contains(0)) << "dirty entries are never dropped";
  for (int64_t id = 50; id < 60; id++) EXPECT_TRUE(c.Contains(id)) << id;
  EXPECT_TRUE(c.Contains(99));
  EXPECT_EQ(c.Trim(0), 19u);
  EXPECT_EQ(c.size(), 1u);
  EXPECT_EQ(c.Trim(0, 0), 0u) << "a bounded step";
}

TEST(CounterWarmCacheTest, RandomUseMatchesAModelThroughWriteBacksAndTrims) {
  // The model is the cold tier plus memory: whatever is dropped or written
  // back must read the same when loaded again.
  CounterWarmCache c(2);
  std::map<int64_t, uint64_t> cold;   // what write-backs stored (field 0)
  std::map<int64_t, uint64_t> truth;  // the value every read must see
  std::mt19937_64 rng(7);
  std::deque<std::vector<CounterWarmCache::WriteBack>> inflight;  // the writer's queue
  for (int step = 0; step < 20000; step++) {
    const int64_t id = static_cast<int64_t>(rng() % 300);
    auto load = [&] {
      if (c.Contains(id)) return;
      uint64_t row[2] = {cold.count(id) ? cold[id] : 0, 0};
      c.InsertLoaded(id, row);
    };
    load();
    switch (rng() % 5) {
      case 0:
      case 1: {
        uint64_t* v = c.Mutable(id);
        v[0] += 1;
        truth[id] = v[0];
        break;
      }
      case 2:
        inflight.push_back(c.TakeDirty(1 + rng() % 20));
        break;
      case 3:
        if (!inflight.empty()) {  // the writer finishes its oldest batch
          const bool ok = rng() % 5 != 0;
          if (ok) {
            for (const auto& w : inflight.front()) cold[w.id] = w.counters[0];
          }
          c.WrittenBack(inflight.front(), ok);
          inflight.pop_front();
        }
        break;
      default:
        c.Trim(c.MemoryUsage() / 2, 50);
    }
    load();  // a trim may have dropped it: a clean entry reads back from the cold tier
    const uint64_t* v = c.Find(id);
    ASSERT_NE(v, nullptr);
    ASSERT_EQ(v[0], truth.count(id) ? truth[id] : 0) << "step " << step << " id " << id;
  }
}

}  // namespace
}  // namespace feedkv
