#include "storage/counter_space.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "counter_test_util.h"

namespace feedkv {
namespace {

using counter_test::Incr;
using counter_test::kScale;
using counter_test::Schema;

constexpr int64_t kMinId = std::numeric_limits<int64_t>::min();
constexpr int64_t kMaxId = std::numeric_limits<int64_t>::max();
constexpr uint64_t kMaxU64 = std::numeric_limits<uint64_t>::max();

CounterOptions Tiny(uint64_t table_bytes = 2048, double max_fill = 0.8, uint32_t probes = 8) {
  return CounterOptions{table_bytes, max_fill, probes};
}

std::vector<uint64_t> GetAll(const CounterSpace& s, int64_t id) {
  std::vector<uint64_t> v(s.schema().num_fields(), 99);
  s.Get(id, v.data());
  return v;
}

// Recomputes the trailing checksum after a test edits a snapshot, so that the structural
// checks (not the checksum) must catch the edit.
void Reseal(std::string* snap) {
  const uint64_t h = XXH3_64bits(snap->data(), snap->size() - 8);
  counter_coding::StoreLE64(snap->data() + snap->size() - 8, h);
}

std::string Sealed(std::string body) {
  body.append(8, '\0');
  Reseal(&body);
  return body;
}

// ---- basic semantics ----

TEST(CounterSpace, EmptySpaceReadsZeros) {
  CounterSpace s(Schema("repost:20 comment:20 like:24 read:32"), Tiny());
  EXPECT_EQ(GetAll(s, 1), std::vector<uint64_t>(4, 0));
  EXPECT_EQ(GetAll(s, kMinId), std::vector<uint64_t>(4, 0));
  EXPECT_EQ(s.num_keys(), 0u);
  EXPECT_EQ(s.num_tables(), 0u);  // tables are mapped on the first write
  EXPECT_FALSE(s.Del(1));
  EXPECT_FALSE(s.Exists(1));
  EXPECT_LT(s.MemoryUsage(), 2048u);
  EXPECT_TRUE(s.Validate().ok());
}

TEST(CounterSpace, IncrByGetAndSet) {
  CounterSpace s(Schema("repost:20 comment:20 like:24 read:32"), Tiny());
  EXPECT_EQ(Incr(&s, 100, 2, 5), 5u);
  EXPECT_EQ(Incr(&s, 100, 2, 3), 8u);
  EXPECT_TRUE(s.Set(100, 3, 1000).ok());
  EXPECT_EQ(GetAll(s, 100), (std::vector<uint64_t>{0, 0, 8, 1000}));
  EXPECT_EQ(s.GetField(100, 3), 1000u);
  EXPECT_EQ(s.GetField(101, 3), 0u);
  EXPECT_TRUE(s.Exists(100));
  EXPECT_EQ(s.Locate(100), CounterLocation::kTable);
  EXPECT_EQ(s.num_keys(), 1u);
  EXPECT_GE(s.MemoryUsage(), s.table(0).mapped_bytes());
  uint64_t v;
  EXPECT_TRUE(s.IncrBy(100, 4, 1, &v).IsInvalidArgument());
  EXPECT_TRUE(s.Set(100, 4, 1).IsInvalidArgument());
}

TEST(CounterSpace, DecrementClampsAtZero) {
  CounterSpace s(Schema("like:8 read:8"), Tiny());
  EXPECT_EQ(Incr(&s, 1, 0, 5), 5u);
  EXPECT_EQ(Incr(&s, 1, 0, -10), 0u);
  EXPECT_EQ(Incr(&s, 1, 0, kMinId), 0u);
  // A key whose counters are all zero stays where it is until deleted.
  EXPECT_EQ(s.num_keys(), 1u);
  EXPECT_EQ(s.Locate(1), CounterLocation::kTable);
  EXPECT_TRUE(s.Del(1));
  EXPECT_EQ(s.num_keys(), 0u);
}

TEST(CounterSpace, WritesOfZeroDoNotCreateKeys) {
  CounterSpace s(Schema("like:8 read:8"), Tiny());
  EXPECT_EQ(Incr(&s, 1, 0, -3), 0u);
  EXPECT_EQ(Incr(&s, 2, 1, 0), 0u);
  EXPECT_TRUE(s.Set(3, 0, 0).ok());
  EXPECT_EQ(s.num_keys(), 0u);
  EXPECT_EQ(s.num_tables(), 0u);
}

TEST(CounterSpace, Uint64OverflowIsAnErrorAndChangesNothing) {
  CounterSpace s(Schema("a:64 b:4"), Tiny());
  ASSERT_TRUE(s.Set(7, 0, kMaxU64 - 1).ok());
  ASSERT_TRUE(s.Set(7, 1, 3).ok());
  uint64_t v = 42;
  Status st = s.IncrBy(7, 0, 2, &v);
  EXPECT_TRUE(st.IsOutOfRange());
  EXPECT_EQ(st.message(), "increment or decrement would overflow");
  EXPECT_EQ(v, 42u);
  EXPECT_EQ(GetAll(s, 7), (std::vector<uint64_t>{kMaxU64 - 1, 3}));
  EXPECT_EQ(Incr(&s, 7, 0, 1), kMaxU64);
  // Same in aux: b overflows its 4 bits, then a 64-bit overflow there changes nothing.
  EXPECT_EQ(Incr(&s, 7, 1, 100), 103u);
  EXPECT_EQ(s.Locate(7), CounterLocation::kAux);
  EXPECT_TRUE(s.IncrBy(7, 1, kMaxId, &v).ok());
  EXPECT_TRUE(s.IncrBy(7, 1, kMaxId, &v).IsOutOfRange());
  EXPECT_EQ(GetAll(s, 7), (std::vector<uint64_t>{kMaxU64, 103u + uint64_t{kMaxId}}));
  EXPECT_TRUE(s.Validate().ok());
}

// ---- aux ----

TEST(CounterSpace, OverflowMovesKeyToAuxWithAllFields) {
  CounterSpace s(Schema("repost:20 comment:20 like:24 read:32"), Tiny());
  ASSERT_TRUE(s.Set(5, 0, 11).ok());
  ASSERT_TRUE(s.Set(5, 1, 22).ok());
  ASSERT_TRUE(s.Set(5, 3, 44).ok());
  EXPECT_EQ(Incr(&s, 5, 2, (1 << 24) - 1), (1u << 24) - 1);
  EXPECT_EQ(s.Locate(5), CounterLocation::kTable);
  EXPECT_EQ(Incr(&s, 5, 2, 1), 1u << 24);
  EXPECT_EQ(s.Locate(5), CounterLocation::kAux);
  EXPECT_EQ(GetAll(s, 5), (std::vector<uint64_t>{11, 22, 1u << 24, 44}));
  EXPECT_EQ(s.table(0).used(), 0u);
  EXPECT_EQ(s.table(0).tombstones(), 1u);
  // Later increments continue in aux, including on other fields and back under width.
  EXPECT_EQ(Incr(&s, 5, 2, 1000), (1u << 24) + 1000);
  EXPECT_EQ(Incr(&s, 5, 0, 1), 12u);
  EXPECT_EQ(Incr(&s, 5, 2, -(1 << 25)), 0u);
  EXPECT_EQ(s.Locate(5), CounterLocation::kAux);
  EXPECT_EQ(GetAll(s, 5), (std::vector<uint64_t>{12, 22, 0, 44}));
  EXPECT_EQ(s.num_keys(), 1u);
  EXPECT_EQ(s.Stats().aux_entries, 1u);
  EXPECT_TRUE(s.Validate().ok());
}

TEST(CounterSpace, WideValueOnNewKeyGoesStraightToAux) {
  CounterSpace s(Schema("a:3 b:3"), Tiny());
  ASSERT_TRUE(s.Set(9, 1, 8).ok());
  EXPECT_EQ(s.Locate(9), CounterLocation::kAux);
  EXPECT_EQ(s.num_tables(), 0u);
  EXPECT_EQ(GetAll(s, 9), (std::vector<uint64_t>{0, 8}));
}

// ---- tables: rolling and routing ----

TEST(CounterSpace, TableRollsAtFillThreshold) {
  CounterSpace s(Schema("a:8 b:8"), Tiny(1000, 0.5, 16));  // 10-byte slots: 97 slots
  const uint64_t max_used = 48;                            // floor(0.5 * 97)
  int64_t id = 1000;
  for (uint64_t i = 0; i < max_used; ++i, id += 3) ASSERT_EQ(Incr(&s, id, 0, 1), 1u);
  ASSERT_EQ(s.num_tables(), 1u);
  EXPECT_TRUE(s.table(0).full());
  EXPECT_EQ(s.table(0).meta().max_used, max_used);
  const int64_t last = id - 3;
  EXPECT_EQ(s.max_id_seen(), last);
  ASSERT_EQ(Incr(&s, id, 0, 1), 1u);  // the next new id starts table 1
  ASSERT_EQ(s.num_tables(), 2u);
  EXPECT_EQ(s.table(0).first_id(), kMinId);
  EXPECT_EQ(s.table(0).last_id(), last);
  EXPECT_EQ(s.table(1).first_id(), last + 1);
  EXPECT_EQ(s.table(1).last_id(), kMaxId);
  size_t t = 9;
  EXPECT_EQ(s.Locate(id, &t), CounterLocation::kTable);
  EXPECT_EQ(t, 1u);
  EXPECT_EQ(s.table(0).used(), max_used);
  EXPECT_EQ(s.table(1).used(), 1u);
  EXPECT_TRUE(s.Validate().ok());
}

TEST(CounterSpace, OldIdsRouteToTheirOwningTable) {
  CounterSpace s(Schema("a:8 b:8"), Tiny(1000, 0.5, 16));
  for (int64_t id = 1; id <= 48 * 3 + 10; ++id) Incr(&s, id * 10, 1, 1);
  ASSERT_EQ(s.num_tables(), 4u);
  // Make room in the oldest and a middle table, then write older ids.
  ASSERT_TRUE(s.Del(10));
  ASSERT_TRUE(s.Del(s.table(1).first_id() + 9));
  size_t t = 99;
  Incr(&s, -500, 0, 1);  // below every id so far: still table 0's range
  EXPECT_EQ(s.Locate(-500, &t), CounterLocation::kTable);
  EXPECT_EQ(t, 0u);
  const int64_t mid = s.table(1).first_id() + 1;  // not a multiple of 10: a new id
  Incr(&s, mid, 0, 1);
  EXPECT_EQ(s.Locate(mid, &t), CounterLocation::kTable);
  EXPECT_EQ(t, 1u);
  // Table 2's range is full: an old id there goes to extend, the newest table unaffected.
  const int64_t old = s.table(2).first_id() + 1;
  Incr(&s, old, 0, 1);
  EXPECT_EQ(s.Locate(old), CounterLocation::kExtend);
  EXPECT_EQ(s.Stats().extend_table_full, 1u);
  EXPECT_EQ(s.num_tables(), 4u);
  EXPECT_TRUE(s.Validate().ok());
}

TEST(CounterSpace, OldIdInFullNewestRangeStartsTheNextTableAndMovesKeysAbove) {
  CounterSpace s(Schema("a:8"), Tiny(600, 0.5, 16));  // 9-byte slots: 61 slots, 30 max
  for (int64_t id = 100; id < 130; ++id) Incr(&s, id * 2, 0, 1);
  ASSERT_EQ(s.num_tables(), 1u);
  Incr(&s, 201, 0, 1);  // below max_id_seen (258): the next table starts at 201
  EXPECT_EQ(s.num_tables(), 2u);
  EXPECT_EQ(s.table(1).first_id(), 201);
  size_t t = 99;
  EXPECT_EQ(s.Locate(201, &t), CounterLocation::kTable);
  EXPECT_EQ(t, 1u);
  EXPECT_EQ(s.Locate(258, &t), CounterLocation::kTable);  // moved over
  EXPECT_EQ(t, 1u);
  EXPECT_EQ(s.Locate(200, &t), CounterLocation::kTable);  // stays
  EXPECT_EQ(t, 0u);
  for (int64_t id = 100; id < 130; ++id) EXPECT_EQ(s.GetField(id * 2, 0), 1u);
  EXPECT_TRUE(s.Validate().ok()) << s.Validate().ToString();
}

TEST(CounterSpace, OneFarAheadIdDoesNotStrandLaterTables) {
  CounterSpace s(Schema("a:8"), Tiny(600, 0.5, 16));
  Incr(&s, INT64_MAX - 5, 0, 1);  // a bogus far-future id
  for (int64_t id = 1; id <= 300; ++id) Incr(&s, id, 0, 1);
  CounterSpaceStats st = s.Stats();
  EXPECT_GT(s.num_tables(), 5u);
  // Real ids keep landing in tables; only the outlier rides along.
  EXPECT_LT(st.extend_keys, 10u);
  EXPECT_EQ(s.GetField(INT64_MAX - 5, 0), 1u);
  for (int64_t id = 1; id <= 300; ++id) EXPECT_EQ(s.GetField(id, 0), 1u);
  EXPECT_TRUE(s.Validate().ok()) << s.Validate().ToString();
}

// ---- extend ----

TEST(CounterSpace, ProbeLimitSpillsAdversarialIdsToExtend) {
  CounterSpace s(Schema("a:8 b:8"), Tiny(1000, 0.9, 4));
  Incr(&s, 1, 0, 1);
  ASSERT_EQ(s.num_tables(), 1u);
  const CounterTable& t = s.table(0);
  uint64_t home0, step0;
  t.ProbeStart(1, &home0, &step0);
  std::vector<int64_t> same;
  for (int64_t id = 2; same.size() < 5; ++id) {
    uint64_t h, st;
    t.ProbeStart(id, &h, &st);
    if (h == home0 && st == step0) same.push_back(id);
  }
  for (int i = 0; i < 3; ++i) Incr(&s, same[i], 0, i + 2);
  EXPECT_EQ(t.used(), 4u);
  Incr(&s, same[3], 1, 7);  // fifth id on one probe sequence of length 4
  EXPECT_EQ(s.Locate(same[3]), CounterLocation::kExtend);
  EXPECT_EQ(s.Stats().extend_probe_limit, 1u);
  EXPECT_EQ(GetAll(s, same[3]), (std::vector<uint64_t>{0, 7}));
  EXPECT_EQ(Incr(&s, same[3], 1, 1), 8u);
  EXPECT_EQ(s.Locate(same[3]), CounterLocation::kExtend);
  // A freed slot on the sequence does not pull the extend key back, and is reused.
  ASSERT_TRUE(s.Del(same[0]));
  Incr(&s, same[4], 0, 1);
  EXPECT_EQ(s.Locate(same[4]), CounterLocation::kTable);
  EXPECT_EQ(s.Locate(same[3]), CounterLocation::kExtend);
  EXPECT_EQ(GetAll(s, same[3]), (std::vector<uint64_t>{0, 8}));
  // An extend key that outgrows a field moves to aux.
  EXPECT_EQ(Incr(&s, same[3], 0, 300), 300u);
  EXPECT_EQ(s.Locate(same[3]), CounterLocation::kAux);
  EXPECT_EQ(GetAll(s, same[3]), (std::vector<uint64_t>{300, 8}));
  EXPECT_TRUE(s.Validate().ok());
}

TEST(CounterSpace, ReservedIdsLiveOutsideTables) {
  CounterSpace s(Schema("a:8"), Tiny());
  Incr(&s, kMinId, 0, 3);
  Incr(&s, kMinId + 1, 0, 4);
  Incr(&s, kMinId + 2, 0, 5);
  EXPECT_EQ(s.Locate(kMinId), CounterLocation::kExtend);
  EXPECT_EQ(s.Locate(kMinId + 1), CounterLocation::kExtend);
  EXPECT_EQ(s.Locate(kMinId + 2), CounterLocation::kTable);
  EXPECT_EQ(s.GetField(kMinId, 0), 3u);
  EXPECT_EQ(s.GetField(kMinId + 1, 0), 4u);
  Incr(&s, kMinId, 0, 1000);
  EXPECT_EQ(s.Locate(kMinId), CounterLocation::kAux);
  EXPECT_EQ(s.num_keys(), 3u);
  EXPECT_TRUE(s.Validate().ok());
}

TEST(CounterSpace, DelFromEachPlace) {
  CounterSpace s(Schema("a:4"), Tiny());
  Incr(&s, 10, 0, 1);      // table
  Incr(&s, 11, 0, 100);    // aux
  Incr(&s, kMinId, 0, 1);  // extend
  ASSERT_EQ(s.Locate(10), CounterLocation::kTable);
  ASSERT_EQ(s.Locate(11), CounterLocation::kAux);
  ASSERT_EQ(s.Locate(kMinId), CounterLocation::kExtend);
  for (int64_t id : {int64_t{10}, int64_t{11}, kMinId}) {
    EXPECT_TRUE(s.Del(id));
    EXPECT_EQ(s.Locate(id), CounterLocation::kAbsent);
    EXPECT_FALSE(s.Del(id));
    EXPECT_EQ(GetAll(s, id), std::vector<uint64_t>{0});
  }
  EXPECT_EQ(s.num_keys(), 0u);
  // Recreated keys start from zero.
  EXPECT_EQ(Incr(&s, 11, 0, 1), 1u);
  EXPECT_EQ(s.Locate(11), CounterLocation::kTable);
  EXPECT_TRUE(s.Validate().ok());
}

// ---- options and stats ----

TEST(CounterSpace, ValidateOptionsRejectsOutOfRange) {
  const size_t sb = 20;
  EXPECT_TRUE(CounterSpace::ValidateOptions(CounterOptions{}, sb).ok());
  EXPECT_TRUE(CounterSpace::ValidateOptions({59, 0.9, 32}, sb).IsInvalidArgument());
  EXPECT_TRUE(CounterSpace::ValidateOptions({uint64_t{1} << 41, 0.9, 32}, sb).IsInvalidArgument());
  EXPECT_TRUE(CounterSpace::ValidateOptions({4096, 0.0, 32}, sb).IsInvalidArgument());
  EXPECT_TRUE(CounterSpace::ValidateOptions({4096, 1.01, 32}, sb).IsInvalidArgument());
  EXPECT_TRUE(CounterSpace::ValidateOptions({4096, std::nan(""), 32}, sb).IsInvalidArgument());
  EXPECT_TRUE(CounterSpace::ValidateOptions({4096, 0.9, 0}, sb).IsInvalidArgument());
  EXPECT_TRUE(CounterSpace::ValidateOptions({4096, 0.9, 1025}, sb).IsInvalidArgument());
  // The constructor clamps instead.
  CounterSpace s(Schema("a:8"), {1, 7.0, 0});
  EXPECT_EQ(s.options().max_fill, 1.0);
  EXPECT_EQ(s.options().max_probes, 1u);
  Incr(&s, 1, 0, 1);
  EXPECT_EQ(s.table(0).capacity(), 3u);
}

TEST(CounterSpace, SetOptionsAppliesToLaterTables) {
  CounterSpace s(Schema("a:8 b:8"), Tiny(1000, 0.5, 16));
  for (int64_t id = 1; id <= 48; ++id) Incr(&s, id, 0, 1);
  s.SetOptions(Tiny(1000, 0.25, 5));  // same size: the full table rolls, no growth
  Incr(&s, 100, 0, 1);
  ASSERT_EQ(s.num_tables(), 2u);
  EXPECT_EQ(s.table(0).meta().max_probes, 16u);
  EXPECT_EQ(s.table(0).capacity(), 97u);
  EXPECT_EQ(s.table(1).meta().max_probes, 5u);
  EXPECT_EQ(s.table(1).capacity(), 97u);
  EXPECT_EQ(s.table(1).meta().max_used, 24u);
}

TEST(CounterSpace, StatsDescribeTablesAndDicts) {
  CounterSpace s(Schema("a:4"), Tiny(1000, 0.5, 8));  // 9-byte slots: 109 slots
  for (int64_t id = 1; id <= 60; ++id) Incr(&s, id, 0, 1);
  Incr(&s, 7, 0, 100);
  Incr(&s, kMinId, 0, 1);
  CounterSpaceStats st = s.Stats();
  ASSERT_EQ(st.tables.size(), 2u);
  EXPECT_EQ(st.tables[0].capacity, 109u);
  EXPECT_EQ(st.tables[0].used, 53u);  // 54 minus id 7, now in aux
  EXPECT_EQ(st.tables[0].tombstones, 1u);
  EXPECT_EQ(st.tables[1].first_id, 55);
  EXPECT_EQ(st.aux_keys, 1u);
  EXPECT_EQ(st.extend_keys, 1u);
  EXPECT_EQ(st.num_keys, 61u);
  EXPECT_EQ(st.num_keys, s.num_keys());
  EXPECT_GE(st.mean_probes, 1.0);
  EXPECT_GE(st.max_probes, 1u);
  EXPECT_EQ(st.memory_bytes, s.MemoryUsage());
  EXPECT_NEAR(st.bytes_per_key, static_cast<double>(st.memory_bytes) / 61, 1e-9);
}

// ---- snapshots ----

// A space with keys in several tables, aux and extend.
std::unique_ptr<CounterSpace> MixedSpace(uint64_t table_bytes, int keys) {
  auto s = std::make_unique<CounterSpace>(Schema("a:5 b:7"), Tiny(table_bytes, 0.6, 2));
  std::mt19937_64 rng(11);
  int64_t id = 0;
  for (int i = 0; i < keys; ++i) {
    id += 1 + static_cast<int64_t>(rng() % 5);
    Incr(s.get(), id, rng() % 2, 1 + static_cast<int64_t>(rng() % 20));
    if (rng() % 4 == 0) Incr(s.get(), static_cast<int64_t>(rng() % 200), 0, 1);  // old ids
  }
  Incr(s.get(), 3, 1, 1000);    // aux
  Incr(s.get(), kMinId, 1, 9);  // extend
  return s;
}

std::map<int64_t, std::vector<uint64_t>> Dump(const CounterSpace& s) {
  std::map<int64_t, std::vector<uint64_t>> m;
  s.ForEachKey([&](int64_t id, std::span<const uint64_t> v) {
    EXPECT_TRUE(m.emplace(id, std::vector<uint64_t>(v.begin(), v.end())).second) << id;
  });
  return m;
}

TEST(CounterSpace, SerializeRoundTrip) {
  auto s = MixedSpace(400, 300);
  CounterSpaceStats st = s->Stats();
  ASSERT_GT(st.tables.size(), 2u);
  ASSERT_GT(st.aux_keys, 0u);
  ASSERT_GT(st.extend_keys, 1u);
  std::string snap;
  s->SerializeTo(&snap);
  std::unique_ptr<CounterSpace> copy;
  Status rs = CounterSpace::DeserializeFrom(snap, &copy);
  ASSERT_TRUE(rs.ok()) << rs.ToString();
  EXPECT_TRUE(copy->schema() == s->schema());
  EXPECT_EQ(copy->options(), s->options());
  EXPECT_EQ(copy->max_id_seen(), s->max_id_seen());
  EXPECT_EQ(Dump(*copy), Dump(*s));
  ASSERT_EQ(copy->num_tables(), s->num_tables());
  for (size_t i = 0; i < s->num_tables(); ++i) {
    EXPECT_EQ(copy->table(i).meta(), s->table(i).meta());
    EXPECT_EQ(copy->table(i).mean_probes(), s->table(i).mean_probes());
  }
  EXPECT_TRUE(copy->Validate().ok());
  // Both evolve identically afterwards.
  for (int64_t id = 0; id < 2000; id += 7) {
    EXPECT_EQ(Incr(copy.get(), id, 0, 3), Incr(s.get(), id, 0, 3));
  }
  EXPECT_EQ(Dump(*copy), Dump(*s));
  EXPECT_EQ(copy->num_tables(), s->num_tables());
  // An empty space round-trips too.
  CounterSpace empty(Schema("x:1"), Tiny());
  snap.clear();
  empty.SerializeTo(&snap);
  ASSERT_TRUE(CounterSpace::DeserializeFrom(snap, &copy).ok());
  EXPECT_EQ(copy->num_keys(), 0u);
  EXPECT_EQ(copy->schema().ToString(), "x:1");
}

TEST(CounterSpace, DeserializeRejectsTruncationAtEveryOffset) {
  auto s = MixedSpace(100, 40);
  std::string snap;
  s->SerializeTo(&snap);
  ASSERT_LT(snap.size(), 4000u);
  std::unique_ptr<CounterSpace> out;
  for (size_t len = 0; len < snap.size(); ++len) {
    const std::string cut = snap.substr(0, len);
    ASSERT_TRUE(CounterSpace::DeserializeFrom(cut, &out).IsCorruption()) << len;
    // With a valid checksum over the cut, the parser itself must notice.
    if (len >= 8) {
      ASSERT_TRUE(
          CounterSpace::DeserializeFrom(Sealed(snap.substr(0, len - 8)), &out).IsCorruption())
          << len;
    }
  }
  EXPECT_EQ(out, nullptr);
}

TEST(CounterSpace, DeserializeRejectsEveryByteFlip) {
  auto s = MixedSpace(100, 40);
  std::string snap;
  s->SerializeTo(&snap);
  std::unique_ptr<CounterSpace> out;
  for (size_t i = 0; i < snap.size(); ++i) {
    std::string bad = snap;
    bad[i] ^= 0x10;
    ASSERT_TRUE(CounterSpace::DeserializeFrom(bad, &out).IsCorruption()) << i;
  }
}

// Flips every byte and reseals the checksum: structural checks must reject the edit or
// accept a space that is still self-consistent; nothing may crash.
TEST(CounterSpace, DeserializeOfResealedFlipsNeverCrashes) {
  auto s = MixedSpace(100, 40);
  std::string snap;
  s->SerializeTo(&snap);
  std::unique_ptr<CounterSpace> out;
  for (size_t i = 0; i + 8 < snap.size(); ++i) {
    for (unsigned char mask : {0x01, 0x80, 0xff}) {
      std::string bad = snap;
      bad[i] = static_cast<char>(bad[i] ^ mask);
      Reseal(&bad);
      Status st = CounterSpace::DeserializeFrom(bad, &out);
      if (st.ok()) {
        ASSERT_TRUE(out->Validate().ok()) << i;
      } else {
        ASSERT_TRUE(st.IsCorruption()) << i << " " << st.ToString();
      }
    }
  }
}

// Byte offsets in a snapshot of schema "a:5 b:7" (see docs/formats.md).
constexpr size_t kSchemaEnd = 8 + 4 + 1 + (1 + 1 + 1) * 2;
constexpr size_t kTableCountAt = kSchemaEnd + 8 + 8 + 4 + 8;

TEST(CounterSpace, DeserializeRejectsStructuralErrors) {
  CounterSpace s(Schema("a:5 b:7"), Tiny(100, 0.9, 4));  // 10-byte slots: 7 slots
  Incr(&s, 50, 0, 1);
  Incr(&s, 60, 0, 100);  // aux
  std::string snap;
  s.SerializeTo(&snap);
  std::unique_ptr<CounterSpace> out;
  auto expect_corrupt = [&](std::string bad, const char* what) {
    Reseal(&bad);
    Status st = CounterSpace::DeserializeFrom(bad, &out);
    EXPECT_TRUE(st.IsCorruption()) << what << ": " << st.ToString();
  };
  ASSERT_TRUE(CounterSpace::DeserializeFrom(snap, &out).ok());
  std::string bad = snap;
  bad[0] = 'X';
  expect_corrupt(bad, "magic");
  bad = snap;
  bad[8] = 4;
  expect_corrupt(bad, "version");
  bad = snap;
  bad[8] = 0;
  expect_corrupt(bad, "version 0");
  bad = snap;
  bad[12] = 0;
  expect_corrupt(bad, "zero fields");
  bad = snap;
  bad[15] = 0;  // width of a
  expect_corrupt(bad, "width 0");
  bad = snap;
  bad[15] = 65;
  expect_corrupt(bad, "width 65");
  bad = snap;
  bad[17] = 'a';  // b renamed a
  expect_corrupt(bad, "duplicate field");
  bad = snap;
  bad[kSchemaEnd + 8 + 7] = 0x40;  // max_fill 2.0
  expect_corrupt(bad, "max fill");
  bad = snap;
  bad[kTableCountAt] = 2;
  expect_corrupt(bad, "table count");
  const size_t table_at = kTableCountAt + 4;
  bad = snap;
  bad[table_at] = 1;  // first table no longer starts at INT64_MIN
  expect_corrupt(bad, "first id");
  bad = snap;
  bad[table_at + 16] = 8;  // capacity 8: not prime
  expect_corrupt(bad, "capacity");
  bad = snap;
  bad[kTableCountAt - 8] = 10;  // max_id_seen 10 < id 60
  expect_corrupt(bad, "max id");
  // Tail: aux count, one aux entry (id + 2 counters), extend count, loose count, checksum.
  const size_t aux_at = snap.size() - 8 - 8 - 8 - 3 * 8 - 8;
  ASSERT_EQ(counter_coding::LoadLE64(snap.data() + aux_at), 1u);
  bad = snap;
  counter_coding::StoreLE64(bad.data() + aux_at + 8, 50);  // aux id = a table id
  expect_corrupt(bad, "two places");
  bad = snap;
  counter_coding::StoreLE64(bad.data() + aux_at, 2);  // claims 2 aux entries
  expect_corrupt(bad, "aux count");
  // Move the aux entry into extend: its value is too wide for extend.
  bad = snap.substr(0, aux_at);
  bad.append(8, '\0');                      // aux count 0
  bad.append(snap.substr(aux_at, 8));       // extend count 1
  bad.append(snap.substr(aux_at + 8, 24));  // the entry
  bad.append(8, '\0');                      // loose count 0
  expect_corrupt(Sealed(bad), "extend too wide");
  bad = snap;
  bad.insert(bad.size() - 8, "x");
  expect_corrupt(bad, "trailing bytes");
}

// ---- randomized differential test ----

// A few million mixed operations against a plain map, with tables of ~2 KiB and a short
// probe limit so that rolling, routing to old tables, aux and extend all happen often.
TEST(CounterSpace, RandomizedDifferentialAgainstMap) {
  constexpr size_t kFields = 4;
  using Row = std::array<uint64_t, kFields>;
  auto space = std::make_unique<CounterSpace>(Schema("a:3 b:9 c:1 d:64"), Tiny(2048, 0.8, 3));
  std::unordered_map<int64_t, Row> model;
  std::vector<int64_t> known;
  std::mt19937_64 rng(20240601);
  int64_t next_id = 1'000'000;
  bool late_phase = false;
  uint64_t extend_probe_limit = 0;  // Stats() counters restart on each deserialized copy
  uint64_t extend_table_full = 0;
  const int ops = 2'000'000 / kScale;
  const uint64_t widths[kFields] = {7, 511, 1, kMaxU64};
  auto pick_id = [&]() -> int64_t {
    const unsigned r = rng() % 100;
    if (r < 20 || known.empty()) {
      next_id += 1 + static_cast<int64_t>(rng() % 40);
      known.push_back(next_id);
      return next_id;
    }
    if (r < 75) return next_id - static_cast<int64_t>(rng() % 400);  // recent
    if (r < 93) return known[rng() % known.size()];                  // any older id
    // Anywhere below the live sequence. An id far above it would start the next table
    // beyond every later id (see docs/counters.md), so those only come at the end.
    if (r < 97) return static_cast<int64_t>(rng() % static_cast<uint64_t>(next_id)) - kMaxId;
    const int64_t special[] = {kMinId, kMinId + 1, kMinId + 2, -1, 0, kMaxId, kMaxId - 1};
    return special[rng() % (late_phase ? 7 : 5)];
  };
  auto pick_value = [&](size_t f) -> uint64_t {
    const unsigned r = rng() % 20;
    if (r < 2) return 0;
    if (r < 4) return widths[f];
    if (r < 5) return widths[f] + 1;  // just too wide (wraps to 0 for d)
    if (r < 6) return kMaxU64 - rng() % 3;
    return rng() % 5;
  };
  auto pick_delta = [&]() -> int64_t {
    const unsigned r = rng() % 50;
    if (r < 8) return -static_cast<int64_t>(rng() % 10);
    if (r < 9) return kMaxId;
    if (r < 10) return kMinId;
    if (r < 14) return static_cast<int64_t>(rng() % 600) - 100;
    return 1 + static_cast<int64_t>(rng() % 3);
  };
  auto check_all = [&]() {
    ASSERT_TRUE(space->Validate().ok()) << space->Validate().ToString();
    ASSERT_EQ(space->num_keys(), model.size());
    size_t seen = 0;
    space->ForEachKey([&](int64_t id, std::span<const uint64_t> v) {
      ++seen;
      auto it = model.find(id);
      ASSERT_NE(it, model.end()) << id;
      ASSERT_TRUE(std::equal(v.begin(), v.end(), it->second.begin())) << id;
    });
    ASSERT_EQ(seen, model.size());
  };
  for (int op = 0; op < ops; ++op) {
    late_phase = op >= ops - ops / 20;
    const int64_t id = pick_id();
    const size_t f = rng() % kFields;
    const unsigned kind = rng() % 100;
    auto it = model.find(id);
    if (kind < 45) {
      const int64_t delta = pick_delta();
      const uint64_t old = it == model.end() ? 0 : it->second[f];
      uint64_t got = 12345;
      Status st = space->IncrBy(id, f, delta, &got);
      if (delta > 0 && old > kMaxU64 - static_cast<uint64_t>(delta)) {
        ASSERT_TRUE(st.IsOutOfRange()) << op;
        continue;
      }
      ASSERT_TRUE(st.ok()) << op << " " << st.ToString();
      uint64_t want = old;
      if (delta >= 0) {
        want = old + static_cast<uint64_t>(delta);
      } else {
        const uint64_t d = uint64_t{0} - static_cast<uint64_t>(delta);
        want = old > d ? old - d : 0;
      }
      ASSERT_EQ(got, want) << op;
      if (it != model.end()) {
        it->second[f] = want;
      } else if (want != 0) {
        Row r{};
        r[f] = want;
        model.emplace(id, r);
      }
    } else if (kind < 55) {
      const uint64_t v = pick_value(f);
      ASSERT_TRUE(space->Set(id, f, v).ok());
      if (it != model.end()) {
        it->second[f] = v;
      } else if (v != 0) {
        Row r{};
        r[f] = v;
        model.emplace(id, r);
      }
    } else if (kind < 85) {
      Row got;
      space->Get(id, got.data());
      const Row want = it == model.end() ? Row{} : it->second;
      ASSERT_EQ(got, want) << op << " id " << id;
      ASSERT_EQ(space->GetField(id, f), want[f]);
      ASSERT_EQ(space->Exists(id), it != model.end());
    } else {
      ASSERT_EQ(space->Del(id), it != model.end()) << op;
      if (it != model.end()) model.erase(it);
    }
    if ((op + 1) % (ops / 6) == 0) {
      check_all();
      if (HasFatalFailure()) return;
      // Continue on a deserialized copy, and vary the options for later tables.
      const CounterSpaceStats before = space->Stats();
      extend_probe_limit += before.extend_probe_limit;
      extend_table_full += before.extend_table_full;
      std::string snap;
      space->SerializeTo(&snap);
      std::unique_ptr<CounterSpace> copy;
      ASSERT_TRUE(CounterSpace::DeserializeFrom(snap, &copy).ok());
      space = std::move(copy);
      space->SetOptions(Tiny(1024 + 512 * (rng() % 4), 0.5 + 0.1 * (rng() % 5), 1 + rng() % 6));
    }
  }
  check_all();
  const CounterSpaceStats st = space->Stats();
  std::printf("differential: %d ops, %zu keys, %zu tables, %zu aux, %zu extend\n", ops, st.num_keys,
              st.tables.size(), st.aux_keys, st.extend_keys);
  EXPECT_GT(st.tables.size(), 100u);
  EXPECT_GT(st.aux_keys, 100u);
  EXPECT_GT(st.extend_keys, 100u);
  EXPECT_GT(extend_probe_limit + st.extend_probe_limit, 1000u);
  EXPECT_GT(extend_table_full + st.extend_table_full, 1000u);
}

}  // namespace
}  // namespace feedkv
