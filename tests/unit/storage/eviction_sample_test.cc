// Unit tests for what sampled eviction reads from storage: Database::Sample
// (random stretches of buckets, optionally only keys with an expire) and the
// EvictionPool that keeps the best candidates across rounds.
#include "storage/database.h"
#include "storage/eviction_pool.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace feedkv {
namespace {

TEST(DatabaseSampleTest, ReturnsAtMostTheCountAskedFromAFullTable) {
  Database db(0);
  for (int i = 0; i < 1000; i++) db.SetString("k" + std::to_string(i), "v", kNoExpire, false);
  std::vector<const Entry*> out;
  db.Sample(42, 5, false, &out);
  EXPECT_EQ(out.size(), 5u);
  std::set<std::string> distinct;
  for (const Entry* e : out) distinct.insert(std::string(e->key()));
  EXPECT_EQ(distinct.size(), 5u);
}

TEST(DatabaseSampleTest, WithExpireOnlyFindsTheVolatileKeys) {
  Database db(0);
  for (int i = 0; i < 1000; i++) {
    db.SetString("k" + std::to_string(i), "v", i % 2 ? int64_t{1} << 50 : kNoExpire, false);
  }
  for (uint64_t seed = 1; seed < 200; seed++) {
    std::vector<const Entry*> out;
    db.Sample(seed, 1, true, &out);
    ASSERT_EQ(out.size(), 1u) << seed;
    EXPECT_TRUE(out[0]->has_expire);
  }
}

TEST(DatabaseSampleTest, ASparseTableYieldsNoMoreThanItHolds) {
  Database db(0);
  for (int i = 0; i < 5000; i++) db.SetString("k" + std::to_string(i), "v", kNoExpire, false);
  for (int i = 0; i < 4997; i++) db.Delete("k" + std::to_string(i));
  for (uint64_t seed = 1; seed < 100; seed++) {
    std::vector<const Entry*> out;
    db.Sample(seed, 5, false, &out);
    EXPECT_LE(out.size(), 3u);  // bounded walk: often none (the evictor then scans)
  }
}

TEST(DatabaseSampleTest, SamplingMidRehashSeesBothArrays) {
  Database db(0);
  for (int i = 0; i < 1025; i++) {
    db.SetString("key:" + std::to_string(i * 7919), "x", i % 2 ? int64_t{1} << 50 : kNoExpire, false);
  }
  ASSERT_TRUE(db.rehashing());  // 1,025 keys: growing from 1,024 buckets
  int empty = 0;
  for (uint64_t seed = 1; seed <= 2000; seed++) {
    std::vector<const Entry*> out;
    db.Sample(seed * 0x12345677, 1, true, &out);
    empty += out.empty();
  }
  // Picking between the arrays separately left 10% of samples empty.
  EXPECT_LT(empty, 60);
}

TEST(EvictionPoolTest, PopsTheHighestScoreFirstAndKeepsTheBestSixteen) {
  EvictionPool pool;
  for (int i = 0; i < 40; i++) pool.Offer(static_cast<uint64_t>((i * 7) % 40), 0, "k" + std::to_string(i));
  EXPECT_EQ(pool.size(), EvictionPool::kSize);
  int db = -1;
  std::string key;
  uint64_t expect = 39;
  while (pool.PopBest(&db, &key)) {
    int i = std::stoi(key.substr(1));
    EXPECT_EQ(static_cast<uint64_t>((i * 7) % 40), expect--);
  }
  EXPECT_EQ(expect, 39u - EvictionPool::kSize);
}

TEST(EvictionPoolTest, ReofferingAKeyRescoresIt) {
  EvictionPool pool;
  pool.Offer(10, 0, "a");
  pool.Offer(20, 0, "b");
  pool.Offer(30, 0, "a");
  EXPECT_EQ(pool.size(), 2u);
  int db = -1;
  std::string key;
  ASSERT_TRUE(pool.PopBest(&db, &key));
  EXPECT_EQ(key, "a");
  ASSERT_TRUE(pool.PopBest(&db, &key));
  EXPECT_EQ(key, "b");
  EXPECT_FALSE(pool.PopBest(&db, &key));
}

TEST(EvictionPoolTest, KeysOfDifferentDatabasesAreDifferentCandidates) {
  EvictionPool pool;
  pool.Offer(5, 0, "a");
  pool.Offer(6, 3, "a");
  EXPECT_EQ(pool.size(), 2u);
  int db = -1;
  std::string key;
  ASSERT_TRUE(pool.PopBest(&db, &key));
  EXPECT_EQ(db, 3);
}

}  // namespace
}  // namespace feedkv
