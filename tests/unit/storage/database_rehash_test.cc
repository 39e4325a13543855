// Unit tests for Database's incremental resizing (KeyTable): every operation
// stays correct while two bucket arrays are live, for grows and shrinks;
// SCAN keeps its guarantee with mutations between calls spanning rehashes;
// expiry (lazy and active) mid-rehash; RANDOMKEY / KEYS / SWAPDB / FLUSHDB /
// snapshot paths mid-rehash; memory counts both arrays; and growth of a big table
// does bounded work per insert.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "storage/database.h"
#include "storage/rdb_digest.h"
#include "storage/rdb_writer.h"
#include "database_test_util.h"

namespace feedkv {
namespace {

std::string Key(int i) { return "key:" + std::to_string(i); }

std::string Value(const Database& db, std::string_view key) {
  const Entry* e = db.Find(key);
  if (e == nullptr) return "<none>";
  std::string scratch;
  return std::string(Database::StringValue(e, &scratch));
}

// The database holds exactly `ref`, seen through every read path.
void ExpectContents(const Database& db, const std::map<std::string, std::string>& ref) {
  ASSERT_EQ(db.size(), ref.size());
  for (const auto& [k, v] : ref) ASSERT_EQ(Value(db, k), v) << k;
  std::map<std::string, int> seen;
  db.ForEach([&](const Entry* e) { seen[std::string(e->key())]++; });
  ASSERT_EQ(seen.size(), ref.size());
  for (const auto& [k, n] : seen) {
    ASSERT_EQ(n, 1) << k;
    ASSERT_TRUE(ref.count(k)) << k;
  }
  // A full scan with no changes in between returns each key exactly once,
  // mid-rehash too.
  seen.clear();
  uint64_t cursor = 0;
  do {
    cursor = db.Scan(cursor, 13, [&](const Entry* e) { seen[std::string(e->key())]++; });
  } while (cursor != 0);
  ASSERT_EQ(seen.size(), ref.size());
  for (const auto& [k, n] : seen) ASSERT_EQ(n, 1) << k;
}

// Random writes and reads checked against a reference map. Counts in
// *mid_rehash the operations that ran while a rehash was in progress.
void Churn(Database& db, std::map<std::string, std::string>& ref, std::mt19937_64& rng, int ops,
           int key_space, int insert_pct, int delete_pct, size_t* mid_rehash) {
  for (int i = 0; i < ops; i++) {
    if (db.rehashing()) (*mid_rehash)++;
    std::string k = Key(static_cast<int>(rng() % key_space));
    int roll = static_cast<int>(rng() % 100);
    if (roll < insert_pct) {
      std::string v = rng() % 2 ? std::to_string(rng() % 1000) : "v" + std::to_string(i);
      if (rng() % 4 == 0) {
        db.SetInteger(k, i, kNoExpire, false);
        v = std::to_string(i);
      } else {
        db.SetString(k, v, kNoExpire, false);
      }
      ref[k] = v;
    } else if (roll < insert_pct + delete_pct) {
      // Delete a key that exists (so that deletes really shrink the table).
      auto it = ref.lower_bound(k);
      if (it == ref.end()) it = ref.begin();
      if (it == ref.end()) continue;
      ASSERT_TRUE(db.Delete(it->first));
      ASSERT_FALSE(db.Delete(it->first));
      ref.erase(it);
    } else {
      const Entry* e = db.Lookup(k, 0);
      ASSERT_EQ(e != nullptr, ref.count(k) == 1) << k;
      if (e != nullptr) {
        ASSERT_EQ(Value(db, k), ref[k]);
      }
    }
  }
}

TEST(DatabaseRehashTest, OperationsWhileGrowing) {
  std::mt19937_64 rng(1);
  Database db(0);
  std::map<std::string, std::string> ref;
  int n = 0;
  while (!db.rehashing()) {
    db.SetString(Key(n), "v", kNoExpire, false);
    ref[Key(n)] = "v";
    n++;
  }
  EXPECT_EQ(n, 16 + 1);  // the 17th key outgrows 16 buckets
  // Grow a table big enough that the rehash spans many operations.
  for (; n < 32768; n++) {
    db.SetString(Key(n), "v", kNoExpire, false);
    ref[Key(n)] = "v";
  }
  SettleResizes(db);
  db.SetString(Key(n), "v", kNoExpire, false);
  ref[Key(n)] = "v";
  n++;
  ASSERT_TRUE(db.rehashing());
  EXPECT_EQ(db.bucket_count(), 32768u + 65536u);
  ExpectContents(db, ref);
  size_t mid = 0;
  Churn(db, ref, rng, 300, 2 * n, 45, 25, &mid);
  ASSERT_TRUE(db.rehashing());  // both arrays hold keys now
  ExpectContents(db, ref);
  Churn(db, ref, rng, 20000, 2 * n, 45, 25, &mid);
  EXPECT_GT(mid, 5000u);  // most of the churn ran against two arrays
  ExpectContents(db, ref);
  SettleResizes(db);
  ExpectContents(db, ref);
}

TEST(DatabaseRehashTest, OperationsWhileShrinking) {
  std::mt19937_64 rng(2);
  Database db(0);
  std::map<std::string, std::string> ref;
  const int kN = 100000;
  for (int i = 0; i < kN; i++) {
    db.SetString(Key(i), std::to_string(i), kNoExpire, false);
    ref[Key(i)] = std::to_string(i);
  }
  SettleResizes(db);
  const size_t big = db.bucket_count();
  EXPECT_EQ(big, 131072u);
  // Delete until the table is under 10% full and starts shrinking.
  std::vector<int> order(kN);
  for (int i = 0; i < kN; i++) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  size_t next = 0;
  while (!db.rehashing()) {
    ASSERT_TRUE(db.Delete(Key(order[next])));
    ref.erase(Key(order[next++]));
  }
  EXPECT_LE(db.size() * 10, big);
  EXPECT_EQ(db.bucket_count(), big + 16384u);
  ExpectContents(db, ref);
  size_t mid = 0;
  Churn(db, ref, rng, 300, kN, 30, 30, &mid);
  ASSERT_TRUE(db.rehashing());  // both arrays hold keys now
  ExpectContents(db, ref);
  Churn(db, ref, rng, 20000, kN, 30, 30, &mid);
  EXPECT_GT(mid, 2000u);
  ExpectContents(db, ref);
  SettleResizes(db);
  ExpectContents(db, ref);
  EXPECT_LT(db.bucket_count(), big / 4);
  // Emptied, it returns to the minimum.
  for (const auto& [k, v] : ref) ASSERT_TRUE(db.Delete(k));
  SettleResizes(db);
  EXPECT_EQ(db.bucket_count(), 16u);
  EXPECT_EQ(db.MemoryUsage(), Database(1).MemoryUsage());
}

TEST(DatabaseRehashTest, OverwriteExpireAndEditMidRehash) {
  Database db(0);
  int n = 0;
  for (; n < 4096; n++) db.SetString(Key(n), "v", kNoExpire, false);
  SettleResizes(db);
  db.SetString(Key(n++), "v", kNoExpire, false);
  ASSERT_TRUE(db.rehashing());
  // Every kind of in-place and relayout edit, on keys in both arrays.
  for (int i = 0; i < 200; i++) {
    std::string k = Key(i);
    switch (i % 5) {
      case 0: db.SetString(k, "overwritten", kNoExpire, false); break;
      case 1: db.SetExpire(k, 9000); break;
      case 2: db.AppendString(k, "-tail"); break;
      case 3: db.SetRange(k, 3, "XY"); break;
      case 4: db.MoveKey(k, &db, "moved:" + k); break;
    }
  }
  ASSERT_TRUE(db.rehashing());
  for (int i = 0; i < 200; i++) {
    std::string k = Key(i);
    switch (i % 5) {
      case 0: EXPECT_EQ(Value(db, k), "overwritten"); break;
      case 1: EXPECT_EQ(db.Find(k)->expire_ms(), 9000); break;
      case 2: EXPECT_EQ(Value(db, k), "v-tail"); break;
      case 3: EXPECT_EQ(Value(db, k), std::string("v\0\0XY", 5)); break;
      case 4:
        EXPECT_EQ(db.Find(k), nullptr);
        EXPECT_EQ(Value(db, "moved:" + k), "v");
        break;
    }
  }
  EXPECT_EQ(db.size(), static_cast<size_t>(n));
  EXPECT_EQ(db.expires_count(), 40u);
}

// SCAN's guarantee: a key present from the first call to the last is
// returned, whatever happens between calls — here, growth and then shrinking
// with the cursor moving through both rehashes.
TEST(DatabaseRehashTest, ScanGuaranteeAcrossGrowAndShrinkRehashes) {
  for (uint64_t seed = 1; seed <= 4; seed++) {
    std::mt19937_64 rng(seed);
    Database db(0);
    // Keys are numbered and never re-created once deleted, so the keys
    // present throughout the scan are those of the start still alive at
    // the end.
    std::vector<int> live;  // ids, for uniform random deletion
    std::vector<char> alive;
    auto insert = [&] {
      int id = static_cast<int>(alive.size());
      db.SetString(Key(id), "v", kNoExpire, false);
      live.push_back(id);
      alive.push_back(1);
    };
    const int kAtStart = 3000;
    auto remove_random = [&] {
      size_t i = rng() % live.size();
      // Spare most keys of the start so that enough remain to check.
      if (live[i] < kAtStart && rng() % 4 != 0) return;
      ASSERT_TRUE(db.Delete(Key(live[i])));
      alive[live[i]] = 0;
      live[i] = live.back();
      live.pop_back();
    };
    for (int i = 0; i < kAtStart; i++) insert();
    const size_t kFloor = 2000;  // low enough to make a 64Ki-bucket table shrink
    std::set<std::string> seen;
    bool saw_grow = false, saw_shrink = false;
    uint64_t cursor = 0;
    int calls = 0;
    do {
      cursor = db.Scan(cursor, 1 + rng() % 4, [&](const Entry* e) { seen.emplace(e->key()); });
      calls++;
      // Insert-heavy first (grows past 32Ki keys), then delete-heavy
      // (shrinks), with some of each throughout; reads step the rehash too.
      bool growing = calls < 300;
      int inserts = growing ? static_cast<int>(rng() % 250) : static_cast<int>(rng() % 3);
      int deletes = growing ? static_cast<int>(rng() % 20) : static_cast<int>(rng() % 300);
      for (int i = 0; i < inserts; i++) insert();
      for (int i = 0; i < deletes && live.size() > kFloor; i++) remove_random();
      for (int i = 0; i < 5; i++) db.Lookup(Key(static_cast<int>(rng() % alive.size())), 0);
      if (db.rehashing()) (growing ? saw_grow : saw_shrink) = true;
      ASSERT_LT(calls, 1000000);
    } while (cursor != 0);
    ASSERT_EQ(db.size(), live.size());
    for (const auto& k : seen) ASSERT_EQ(k.rfind("key:", 0), 0u) << k;  // nothing invented
    size_t checked = 0;
    for (int id = 0; id < kAtStart; id++) {
      if (!alive[id]) continue;  // deleted at some point: no guarantee
      ASSERT_TRUE(seen.count(Key(id))) << "seed " << seed << " missed " << Key(id);
      checked++;
    }
    EXPECT_GT(checked, 500u);
    EXPECT_TRUE(saw_grow) << seed;
    EXPECT_TRUE(saw_shrink) << seed;
  }
}

TEST(DatabaseRehashTest, ExpiryMidRehash) {
  Database db(0);
  std::set<std::string> expired_keys;
  db.set_expire_hook([&](Database&, std::string_view key) { expired_keys.emplace(key); });
  auto expire_of = [](int i) { return i % 3 == 0 ? int64_t{500} : i % 3 == 1 ? int64_t{5000} : kNoExpire; };
  int n = 0;
  for (; n < 8192; n++) db.SetString(Key(n), "v", expire_of(n), false);
  SettleResizes(db);
  db.SetString(Key(n), "v", expire_of(n), false);  // grows to 16384 buckets
  n++;
  ASSERT_TRUE(db.rehashing());
  // Lazy: a lookup drops an expired key from whichever array holds it.
  for (int i = 0; i < 300; i++) {
    const Entry* e = db.Lookup(Key(i), 1000);
    EXPECT_EQ(e == nullptr, i % 3 == 0) << i;
  }
  EXPECT_EQ(expired_keys.size(), 100u);
  ASSERT_TRUE(db.rehashing());
  // Active: bounded walks with a bounded rehash after each, so that the
  // walk runs against two arrays for a while.
  size_t cycles_mid_rehash = 0, removed = 100;
  const size_t expected = static_cast<size_t>((n + 2) / 3);
  for (int round = 0; round < 100000 && removed < expected; round++) {
    if (db.rehashing()) cycles_mid_rehash++;
    removed += db.ActiveExpireCycle(1000, 64, 0);
  }
  EXPECT_GT(cycles_mid_rehash, 10u);
  EXPECT_EQ(removed, expected);
  EXPECT_EQ(expired_keys.size(), expected);
  for (int i = 0; i < n; i++) {
    ASSERT_EQ(db.Find(Key(i)) == nullptr, i % 3 == 0) << i;
    ASSERT_EQ(expired_keys.count(Key(i)) == 1, i % 3 == 0) << i;
  }
  EXPECT_EQ(db.size(), static_cast<size_t>(n) - expected);
  EXPECT_EQ(db.expires_count(), static_cast<size_t>((n + 1) / 3));
}

TEST(DatabaseRehashTest, RandomEntryReachesBothArrays) {
  Database db(0);
  int n = 0;
  while (!db.rehashing()) db.SetString(Key(n++), "v", kNoExpire, false);
  // Move a few buckets: 17 keys, some in the old array, some in the new.
  for (int i = 0; i < 3; i++) db.Lookup("absent", 0);
  ASSERT_TRUE(db.rehashing());
  std::set<std::string> picked;
  for (uint64_t r = 0; r < 5000; r++) {
    const Entry* e = db.RandomEntry(r * 0x9E3779B97F4A7C15ull + 1);
    ASSERT_NE(e, nullptr);
    picked.emplace(e->key());
  }
  EXPECT_EQ(picked.size(), static_cast<size_t>(n));
  // One key left, wherever it is.
  for (int i = 1; i < n; i++) db.Delete(Key(i));
  for (uint64_t seed = 0; seed < 200; seed++) ASSERT_EQ(db.RandomEntry(seed)->key(), Key(0));
}

TEST(DatabaseRehashTest, SwapClearAndMoveMidRehash) {
  Database a(0), b(1);
  int n = 0;
  for (; n < 2048; n++) a.SetString(Key(n), "a", kNoExpire, false);
  SettleResizes(a);
  a.SetString(Key(n), "a", 100, false);
  n++;
  ASSERT_TRUE(a.rehashing());
  b.SetString("only-b", "b", kNoExpire, false);
  a.Swap(b);  // SWAPDB: the rehash state travels with the keys
  EXPECT_TRUE(b.rehashing());
  EXPECT_FALSE(a.rehashing());
  EXPECT_EQ(b.size(), static_cast<size_t>(n));
  for (int i = 0; i < n; i++) ASSERT_EQ(Value(b, Key(i)), "a");
  // MOVE out of and into a rehashing database.
  b.MoveKey(Key(0), &a, Key(0));
  a.MoveKey("only-b", &b, "only-b");
  EXPECT_EQ(Value(a, Key(0)), "a");
  EXPECT_EQ(Value(b, "only-b"), "b");
  EXPECT_EQ(b.size(), static_cast<size_t>(n));
  // FLUSHDB mid-rehash frees both arrays' entries (ASan checks the leaks).
  ASSERT_TRUE(b.rehashing());
  b.Clear();
  EXPECT_FALSE(b.rehashing());
  EXPECT_EQ(b.size(), 0u);
  EXPECT_EQ(b.MemoryUsage(), Database(2).MemoryUsage());
  // Destroying a database mid-rehash frees everything too.
  Database c(3);
  for (int i = 0; i < 17; i++) c.SetString(Key(i), std::string(100, 'x'), kNoExpire, false);
  EXPECT_TRUE(c.rehashing());
}

// A snapshot (what a BGSAVE child writes) and DEBUG DIGEST see every key
// once while the keys are spread over both arrays.
TEST(DatabaseRehashTest, SnapshotAndDigestMidRehash) {
  Database db(0);
  int n = 0;
  for (; n < 4096; n++) db.SetString(Key(n), "v" + std::to_string(n), n % 2 ? kNoExpire : 99999, false);
  SettleResizes(db);
  db.SetString(Key(n), "last", kNoExpire, false);
  n++;
  for (int i = 0; i < 500; i++) db.Lookup("absent", 0);  // moves part of the keys
  ASSERT_TRUE(db.rehashing());
  auto snapshot_keys = [&] {
    rdb::SnapshotSource src;
    src.dbs = {&db};
    std::string out;
    rdb::RdbSink sink(&out);
    rdb::SaveStats st;
    EXPECT_TRUE(rdb::WriteSnapshot(src, &sink, &st).ok());
    return st.keys;
  };
  EXPECT_EQ(snapshot_keys(), static_cast<uint64_t>(n));
  rdb::DigestBuilder mid;
  mid.AddDatabase(0, db);
  SettleResizes(db);
  EXPECT_EQ(snapshot_keys(), static_cast<uint64_t>(n));
  rdb::DigestBuilder settled;
  settled.AddDatabase(0, db);
  EXPECT_EQ(mid.Hex(), settled.Hex());
}

TEST(DatabaseRehashTest, MemoryCountsBothArrays) {
  Database db(0);
  for (int i = 0; i < 1024; i++) db.SetString(Key(i), "v", kNoExpire, false);
  SettleResizes(db);
  size_t before = db.MemoryUsage();
  size_t entry = Database::EntryMemory(db.Find(Key(1000)));  // same key length
  db.SetString(Key(1024), "v", kNoExpire, false);
  ASSERT_TRUE(db.rehashing());
  EXPECT_EQ(db.MemoryUsage(), before + entry + 2048 * sizeof(Entry*));
  SettleResizes(db);
  EXPECT_EQ(db.MemoryUsage(), before + entry + 1024 * sizeof(Entry*));
}

// One insert that makes a 1M-key table grow starts the rehash and returns:
// the keys move over later, a bucket per operation and a slice per cron.
TEST(DatabaseRehashTest, GrowthOfALargeTableIsIncremental) {
  Database db(0);
  const int kN = 1 << 20;
  for (int i = 0; i < kN; i++) db.SetInteger(Key(i), i, kNoExpire, false);
  SettleResizes(db);
  ASSERT_EQ(db.bucket_count(), static_cast<size_t>(kN));
  db.SetInteger(Key(kN), kN, kNoExpire, false);
  EXPECT_TRUE(db.rehashing());
  EXPECT_EQ(db.bucket_count(), static_cast<size_t>(3 * kN));
  // A thousand more operations move at most a thousand buckets (plus the
  // empty ones skipped): far from done.
  for (int i = 0; i < 1000; i++) ASSERT_NE(db.Lookup(Key(i), 0), nullptr);
  EXPECT_TRUE(db.rehashing());
  // Cron slices finish it.
  while (db.IncrementalRehash(Database::kCronRehashMicros)) {
  }
  EXPECT_EQ(db.bucket_count(), static_cast<size_t>(2 * kN));
  for (int i = 0; i <= kN; i += 997) {
    int64_t v;
    ASSERT_TRUE(Database::StringAsInteger(db.Find(Key(i)), &v));
    ASSERT_EQ(v, i);
  }
  EXPECT_EQ(db.size(), static_cast<size_t>(kN) + 1);
}

TEST(DatabaseRehashTest, GrowsOnlyWhenFiveTimesFullWhileResizingIsDiscouraged) {
  // As Redis's dict while a fork child runs: pages stay shared unless the
  // chains would grow long.
  Database db(0);
  int n = 0;
  for (; n < 16; n++) db.SetString(Key(n), "v", kNoExpire, false);
  KeyTable::SetResizeDiscouraged(true);
  for (; n < 80; n++) db.SetString(Key(n), "v", kNoExpire, false);
  EXPECT_FALSE(db.rehashing());
  EXPECT_EQ(db.TableStats(0).size, 16u);
  EXPECT_EQ(db.TableStats(0).elements, 80u);
  db.SetString(Key(n++), "v", kNoExpire, false);  // 81 > 5 x 16
  EXPECT_TRUE(db.rehashing());
  KeyTable::SetResizeDiscouraged(false);
  SettleResizes(db);
  EXPECT_EQ(db.TableStats(0).size, 128u);
  EXPECT_EQ(db.TableStats(0).elements, 81u);
}

TEST(DatabaseRehashTest, TableStatsCountChainsAsRedisDoes) {
  Database db(0);
  for (int n = 0; n < 12; n++) db.SetString(Key(n), "v", kNoExpire, false);
  const KeyTable::ArrayStats st = db.TableStats(0);
  EXPECT_EQ(st.size, 16u);
  EXPECT_EQ(st.elements, 12u);
  size_t buckets = 0, elements = 0;
  for (size_t len = 0; len < std::size(st.chain_counts); len++) {
    buckets += st.chain_counts[len];
    elements += len * st.chain_counts[len];
  }
  EXPECT_EQ(buckets, 16u);
  EXPECT_EQ(elements, 12u);
  EXPECT_EQ(st.used_slots, 16u - st.chain_counts[0]);
  EXPECT_EQ(db.TableStats(1).size, 0u);  // no rehash in progress
}

}  // namespace
}  // namespace feedkv
