// Unit tests for LongSet: probing, growth, tombstones, sentinel members, cache mode,
// scan stability, random members and a differential test against std::unordered_set.
// Image tests are in long_set_image_test.cc.
#include "storage/long_set.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace feedkv {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

#if defined(__SANITIZE_ADDRESS__)
constexpr int kScale = 8;  // sanitizers run ~10x slower; keep the suite bounded
#else
constexpr int kScale = 1;
#endif

LongSetOptions CacheMode() {
  LongSetOptions o;
  o.auto_grow = false;
  return o;
}

void AddOrDie(LongSet* s, int64_t v, const LongSetOptions& o = {}) {
  bool added = false;
  ASSERT_TRUE(s->Add(v, o, &added).ok()) << v;
}

std::vector<int64_t> Members(const LongSet& s) {
  std::vector<int64_t> out;
  s.ForEach([&](int64_t v) { out.push_back(v); });
  std::sort(out.begin(), out.end());
  return out;
}

// Every member collected by a complete scan, with the number of calls it took.
std::vector<int64_t> FullScan(const LongSet& s, size_t count, int* calls) {
  std::vector<int64_t> all, batch;
  uint64_t cursor = 0;
  *calls = 0;
  do {
    cursor = s.Scan(cursor, count, &batch);
    ++*calls;
    all.insert(all.end(), batch.begin(), batch.end());
  } while (cursor != 0);
  return all;
}

TEST(LongSetPrime, IsPrimeMatchesSieve) {
  constexpr int kN = 200000;
  std::vector<bool> composite(kN, false);
  for (int i = 2; i * i < kN; ++i) {
    if (!composite[i]) {
      for (int j = i * i; j < kN; j += i) composite[j] = true;
    }
  }
  for (int n = 0; n < kN; ++n) {
    ASSERT_EQ(longset_internal::IsPrime(n), n >= 2 && !composite[n]) << n;
  }
  EXPECT_TRUE(longset_internal::IsPrime(LongSet::kMaxCapacity));
  EXPECT_FALSE(longset_internal::IsPrime(4294967295ull));
  EXPECT_FALSE(longset_internal::IsPrime(3215031751ull));           // strong pseudoprime to 2,3,5,7
  EXPECT_TRUE(longset_internal::IsPrime(18446744073709551557ull));  // largest 64-bit prime
}

TEST(LongSetPrime, NextPrime) {
  EXPECT_EQ(longset_internal::NextPrime(7), 7u);
  EXPECT_EQ(longset_internal::NextPrime(8), 11u);
  EXPECT_EQ(longset_internal::NextPrime(1000), 1009u);
  EXPECT_EQ(longset_internal::NextPrime(LongSet::kMaxCapacity), LongSet::kMaxCapacity);
  EXPECT_EQ(longset_internal::NextPrime(LongSet::kMaxCapacity + 1), 0u);
}

TEST(LongSetProbe, FastModMatchesModulo) {
  std::mt19937_64 rng(1);
  for (int i = 0; i < 100000; ++i) {
    const uint32_t d = static_cast<uint32_t>(rng() % 0xfffffffeu) + 2;
    const uint32_t a = static_cast<uint32_t>(rng());
    ASSERT_EQ(longset_internal::FastMod(a, longset_internal::FastModMagic(d), d), a % d);
  }
  const uint32_t big = static_cast<uint32_t>(LongSet::kMaxCapacity);
  EXPECT_EQ(longset_internal::FastMod(0xffffffffu, longset_internal::FastModMagic(big), big),
            0xffffffffu % big);
}

// Pins the version 3 member hash, XXH3 of the 8 LE bytes folded to 32 bits
// (tools/longset_image.py asserts the same values).
TEST(LongSetHash, KnownAnswers) {
  struct Case {
    int64_t v;
    uint64_t seed;
    uint32_t want;
  };
  const Case cases[] = {
      {0, 0x9e3779b97f4a7c15ull, 0x3a6361aeu},
      {1, 0, 0x4b67201bu},
      {-1, 0, 0x2c6983f7u},
      {kMin, LongSet::kDefaultSeed1, 0x6d397119u},
      {kMax, LongSet::kDefaultSeed2, 0x177855b0u},
      {123456789, 99, 0x9efa9a92u},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(longset_internal::HashMember(c.v, c.seed), c.want) << c.v << " seed " << c.seed;
  }
}

// The inline hash is XXH3_64bits_withSeed of the member's 8 little-endian bytes, as
// libxxhash computes it, for any member and seed.
TEST(LongSetHash, MatchesLibXxh3) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 200000; ++i) {
    const int64_t v = i < 4 ? std::array<int64_t, 4>{0, -1, kMin, kMax}[i] : static_cast<int64_t>(rng());
    const uint64_t seed = i % 3 == 0 ? i : rng();
    unsigned char bytes[8];
    for (int k = 0; k < 8; ++k) bytes[k] = static_cast<unsigned char>(static_cast<uint64_t>(v) >> (8 * k));
    const uint64_t x = XXH3_64bits_withSeed(bytes, sizeof(bytes), seed);
    ASSERT_EQ(longset_internal::HashMember(v, seed), static_cast<uint32_t>((x >> 32) ^ x))
        << v << " seed " << seed;
  }
}

// Brent's insertion: at fill 0.9 plain double hashing averages ~2.6 probes per hit;
// moving members along their own paths keeps it under 2 (~1.8 measured).
TEST(LongSetProbe, BrentInsertionShortensHits) {
  std::mt19937_64 rng(99);
  std::vector<int64_t> ids(20000);
  for (auto& v : ids) v = static_cast<int64_t>(rng() % 1000000000000ull) + 1;
  LongSetOptions opts;
  opts.max_fill = 0.9;
  std::unique_ptr<LongSet> built;
  ASSERT_TRUE(LongSet::Build(ids, opts, 1, 2, &built).ok());
  const LongSetProbeStats st = built->Stats();
  EXPECT_GT(st.fill, 0.89);
  EXPECT_LT(st.mean_probe, 2.0);
  EXPECT_GT(st.mean_probe, 1.0);
  for (int64_t v : ids) ASSERT_TRUE(built->Contains(v)) << v;

  // Inserting one at a time (LSADD/SADD) takes the same path as the bulk build.
  LongSet one_by_one(1, 2);
  ASSERT_TRUE(one_by_one.Reserve(ids.size(), opts).ok());
  for (int64_t v : ids) AddOrDie(&one_by_one, v, opts);
  EXPECT_LT(one_by_one.Stats().mean_probe, 2.0);
}

TEST(LongSetProbe, SequenceVisitsEverySlot) {
  std::mt19937_64 rng(2);
  int capacities = 0;
  for (uint64_t cap = LongSet::kMinCapacity; cap < 6000;
       cap = longset_internal::NextPrime(cap + 1)) {
    ++capacities;
    for (int k = 0; k < 3; ++k) {
      const int64_t v = static_cast<int64_t>(rng());
      const auto start = longset_internal::ProbeStartFor(v, 11, 22, static_cast<uint32_t>(cap));
      ASSERT_LT(start.home, cap);
      ASSERT_GE(start.step, 1u);
      ASSERT_LT(start.step, cap);
      std::vector<bool> seen(cap, false);
      uint64_t slot = start.home;
      for (uint64_t n = 0; n < cap; ++n) {
        ASSERT_FALSE(seen[slot]) << "cap " << cap << " revisits slot " << slot;
        seen[slot] = true;
        slot = (slot + start.step) % cap;
      }
    }
  }
  EXPECT_GT(capacities, 700);
  // Large capacities: the walk is too long to run, but a prime capacity makes every
  // step coprime, which is all the full-cycle property needs.
  for (uint64_t cap : {uint64_t{1000003}, uint64_t{16777259}, LongSet::kMaxCapacity}) {
    for (int k = 0; k < 1000; ++k) {
      const auto start = longset_internal::ProbeStartFor(static_cast<int64_t>(rng()), 1, 2,
                                                         static_cast<uint32_t>(cap));
      ASSERT_LT(start.home, cap);
      ASSERT_GE(start.step, 1u);
      ASSERT_LT(start.step, cap);
      ASSERT_EQ(std::gcd(start.step, cap), 1u);
    }
  }
}

TEST(LongSetOptionsTest, ValidateRejectsOutOfRange) {
  EXPECT_TRUE(LongSetOptions{}.Validate().ok());
  EXPECT_TRUE((LongSetOptions{0.99, 1.05, true}).Validate().ok());
  EXPECT_TRUE((LongSetOptions{1.0, 1.3, true}).Validate().IsInvalidArgument());
  EXPECT_TRUE((LongSetOptions{0.0, 1.3, true}).Validate().IsInvalidArgument());
  EXPECT_TRUE((LongSetOptions{0.9, 1.0, true}).Validate().IsInvalidArgument());
  EXPECT_TRUE((LongSetOptions{0.9, 5.0, true}).Validate().IsInvalidArgument());
  EXPECT_TRUE((LongSetOptions{std::nan(""), 1.3, true}).Validate().IsInvalidArgument());
}

TEST(LongSet, StartsSmall) {
  LongSet s;
  EXPECT_EQ(s.capacity(), LongSet::kMinCapacity);
  EXPECT_EQ(s.size(), 0u);
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.MemoryUsage(), sizeof(LongSet) + 7 * 8);
  EXPECT_LE(sizeof(LongSet), 64u);
}

TEST(LongSet, AddRemoveContains) {
  LongSet s;
  bool added = false;
  ASSERT_TRUE(s.Add(42, {}, &added).ok());
  EXPECT_TRUE(added);
  ASSERT_TRUE(s.Add(42, {}, &added).ok());
  EXPECT_FALSE(added);
  EXPECT_TRUE(s.Contains(42));
  EXPECT_FALSE(s.Contains(43));
  EXPECT_EQ(s.size(), 1u);
  EXPECT_TRUE(s.Remove(42));
  EXPECT_FALSE(s.Remove(42));
  EXPECT_FALSE(s.Contains(42));
  EXPECT_EQ(s.size(), 0u);
  EXPECT_EQ(s.tombstones(), 1u);
}

TEST(LongSet, GrowthKeepsAllMembers) {
  LongSet s;
  std::mt19937_64 rng(3);
  std::vector<int64_t> added;
  uint64_t last_cap = s.capacity();
  int grows = 0;
  for (int i = 0; i < 100000; ++i) {
    const int64_t v = static_cast<int64_t>(rng());
    AddOrDie(&s, v);
    added.push_back(v);
    if (s.capacity() != last_cap) {
      ++grows;
      last_cap = s.capacity();
      for (int64_t m : added) ASSERT_TRUE(s.Contains(m)) << "lost " << m << " at cap " << last_cap;
    }
  }
  EXPECT_GT(grows, 20);
  EXPECT_EQ(s.size(), added.size());
  std::sort(added.begin(), added.end());
  EXPECT_EQ(Members(s), added);
}

// Each grow multiplies capacity by about growth_factor (< 2), fill right after a grow
// is about max_fill / growth_factor, and memory stays <= 12 bytes/member from 200 up.
TEST(LongSet, GrowFactorBelowTwoAndMemoryPerMemberBounded) {
  const LongSetOptions opts;  // defaults: what production runs
  LongSet s;
  uint64_t last_cap = s.capacity();
  double worst_bytes = 0;
  for (int64_t v = 1; v <= 300000; ++v) {
    AddOrDie(&s, v * 7919, opts);
    if (s.capacity() != last_cap) {
      const double ratio = static_cast<double>(s.capacity()) / last_cap;
      if (last_cap > 100) {
        EXPECT_LT(ratio, 1.45) << "grew " << last_cap << " -> " << s.capacity();
        EXPECT_GT(ratio, 1.15);
      }
      EXPECT_LT(ratio, 2.0);
      const double fill = static_cast<double>(s.size()) / s.capacity();
      if (s.size() >= 200) {
        EXPECT_GE(fill, 0.67);
      }
      last_cap = s.capacity();
    }
    if (s.size() >= 200) {
      worst_bytes = std::max(worst_bytes, static_cast<double>(s.MemoryUsage()) / s.size());
    }
  }
  EXPECT_LE(worst_bytes, 12.0);
}

TEST(LongSet, TombstonesAreReusedByAdd) {
  LongSet s;
  for (int64_t v = 1; v <= 5; ++v) AddOrDie(&s, v);
  ASSERT_TRUE(s.Remove(3));
  EXPECT_EQ(s.tombstones(), 1u);
  const uint64_t cap = s.capacity();
  // 3's own slot is on 3's path before any empty slot, so re-adding takes it back.
  AddOrDie(&s, 3);
  EXPECT_EQ(s.tombstones(), 0u);
  EXPECT_EQ(s.capacity(), cap);
}

TEST(LongSet, TombstoneRebuildKeepsCapacity) {
  LongSet s;
  ASSERT_TRUE(s.Reserve(10000, {}).ok());
  for (int64_t v = 1; v <= 10000; ++v) AddOrDie(&s, v);
  const uint64_t cap = s.capacity();
  size_t max_tombstones = 0;
  bool rebuilt = false;
  for (int64_t v = 1; v <= 6000; ++v) {
    const size_t before = s.tombstones();
    ASSERT_TRUE(s.Remove(v));
    max_tombstones = std::max(max_tombstones, s.tombstones());
    if (s.tombstones() < before) {
      rebuilt = true;
      EXPECT_EQ(s.tombstones(), 0u);
    }
    ASSERT_LE(s.tombstones(), cap / 4);
  }
  EXPECT_TRUE(rebuilt);
  EXPECT_EQ(s.capacity(), cap);
  EXPECT_EQ(s.size(), 4000u);
  for (int64_t v = 1; v <= 10000; ++v) ASSERT_EQ(s.Contains(v), v > 6000) << v;
}

// Churn at a fixed size: tombstone pile-up is cleared by same-size rebuilds. At most
// one early resize may move the table to its steady-state fill (max_fill/growth).
TEST(LongSet, ChurnDoesNotKeepGrowing) {
  const LongSetOptions opts;
  LongSet s;
  for (int64_t v = 1; v <= 1000; ++v) AddOrDie(&s, v);
  const uint64_t cap = s.capacity();
  std::set<uint64_t> capacities;
  for (int64_t v = 1001; v <= 200000; ++v) {
    ASSERT_TRUE(s.Remove(v - 1000));
    AddOrDie(&s, v);
    capacities.insert(s.capacity());
    ASSERT_LE(s.size(), LongSet::SlotLimit(s.capacity(), opts.max_fill));
    ASSERT_LE(s.size() + s.tombstones(), LongSet::UsedSlotLimit(s.capacity(), opts.max_fill));
  }
  EXPECT_EQ(s.size(), 1000u);
  EXPECT_LE(capacities.size(), 2u);
  EXPECT_LE(s.capacity(), cap * opts.growth_factor);
}

TEST(LongSet, SentinelMembers) {
  const int64_t specials[] = {0, -1, kMin, kMax, 1, kMin + 1};
  LongSet s;
  for (int64_t v : specials) EXPECT_FALSE(s.Contains(v));
  for (int64_t v : specials) {
    bool added = false;
    ASSERT_TRUE(s.Add(v, {}, &added).ok());
    EXPECT_TRUE(added) << v;
    ASSERT_TRUE(s.Add(v, {}, &added).ok());
    EXPECT_FALSE(added) << v;
  }
  EXPECT_EQ(s.size(), 6u);
  for (int64_t v : specials) EXPECT_TRUE(s.Contains(v)) << v;
  std::vector<int64_t> want(std::begin(specials), std::end(specials));
  std::sort(want.begin(), want.end());
  EXPECT_EQ(Members(s), want);

  int calls = 0;
  std::vector<int64_t> scanned = FullScan(s, 1, &calls);
  std::sort(scanned.begin(), scanned.end());
  EXPECT_EQ(scanned, want);

  std::set<int64_t> drawn;
  for (uint64_t r = 0; r < 2000; ++r) drawn.insert(s.RandomMember(r * 0x9e3779b97f4a7c15ull));
  EXPECT_EQ(std::vector<int64_t>(drawn.begin(), drawn.end()), want);

  // Sentinel members cost no slot and survive a grow.
  for (int64_t v = 2; v < 1000; ++v) AddOrDie(&s, v);
  for (int64_t v : specials) EXPECT_TRUE(s.Contains(v)) << v;

  EXPECT_TRUE(s.Remove(0));
  EXPECT_TRUE(s.Remove(kMin));
  EXPECT_FALSE(s.Remove(0));
  EXPECT_FALSE(s.Contains(0));
  EXPECT_FALSE(s.Contains(kMin));
  EXPECT_TRUE(s.Contains(-1));
  EXPECT_TRUE(s.Contains(kMax));
  EXPECT_TRUE(s.Remove(-1));
  EXPECT_TRUE(s.Remove(kMax));
  EXPECT_FALSE(s.Contains(-1));
  EXPECT_FALSE(s.Contains(kMax));
}

TEST(LongSet, OnlySentinelMembers) {
  LongSet s;
  AddOrDie(&s, kMin);
  EXPECT_EQ(s.size(), 1u);
  EXPECT_EQ(s.RandomMember(12345), kMin);
  AddOrDie(&s, 0);
  std::set<int64_t> drawn;
  for (uint64_t r = 0; r < 200; ++r) drawn.insert(s.RandomMember(r * 7919));
  EXPECT_EQ(drawn, (std::set<int64_t>{0, kMin}));
}

TEST(LongSet, CacheModeFullLeavesSetUnchanged) {
  const LongSetOptions cache = CacheMode();
  LongSet s;
  int64_t v = 1;
  for (;; ++v) {
    bool added = false;
    Status st = s.Add(v * 31, cache, &added);
    if (!st.ok()) {
      ASSERT_TRUE(st.IsFull()) << st.ToString();
      EXPECT_EQ(st.message(), "longset is full");
      break;
    }
    ASSERT_TRUE(added);
  }
  EXPECT_EQ(s.capacity(), LongSet::kMinCapacity);
  EXPECT_EQ(s.size(), LongSet::SlotLimit(LongSet::kMinCapacity, cache.max_fill));

  std::string before, after;
  s.SerializeImage(&before);
  bool added = true;
  EXPECT_TRUE(s.Add(v * 31, cache, &added).IsFull());
  EXPECT_TRUE(s.Add(99999, cache, &added).IsFull());
  s.SerializeImage(&after);
  EXPECT_EQ(before, after);
  EXPECT_FALSE(s.Contains(v * 31));

  // An existing member and the flag members still succeed.
  ASSERT_TRUE(s.Add(31, cache, &added).ok());
  EXPECT_FALSE(added);
  ASSERT_TRUE(s.Add(0, cache, &added).ok());
  EXPECT_TRUE(added);

  // A removal makes room again, without growing.
  ASSERT_TRUE(s.Remove(31));
  ASSERT_TRUE(s.Add(99999, cache, &added).ok());
  EXPECT_TRUE(added);
  EXPECT_EQ(s.capacity(), LongSet::kMinCapacity);
  EXPECT_FALSE(s.MaybeShrink(cache));

  // Switching auto-grow back on lets the same set grow.
  ASSERT_TRUE(s.Add(123456, LongSetOptions{}, &added).ok());
  EXPECT_GT(s.capacity(), LongSet::kMinCapacity);
}

TEST(LongSet, CacheModeChurnAtFullRebuildsInPlace) {
  const LongSetOptions cache = CacheMode();
  LongSet s;
  ASSERT_TRUE(s.Reserve(1000, cache).ok());
  const uint64_t cap = s.capacity();
  const int64_t limit = static_cast<int64_t>(LongSet::SlotLimit(cap, cache.max_fill));
  for (int64_t v = 1; v <= limit; ++v) AddOrDie(&s, v, cache);
  bool added = false;
  ASSERT_TRUE(s.Add(-5, cache, &added).IsFull());
  // Sliding window: drop the oldest member, add a new one; the set stays at the limit.
  for (int64_t v = limit + 1; v <= limit + 5000; ++v) {
    ASSERT_TRUE(s.Remove(v - limit));
    ASSERT_TRUE(s.Add(v, cache, &added).ok()) << v;
    ASSERT_TRUE(added);
  }
  EXPECT_EQ(s.capacity(), cap);
  EXPECT_EQ(s.size(), static_cast<size_t>(limit));
  for (int64_t v = 5001; v <= limit + 5000; ++v) ASSERT_TRUE(s.Contains(v)) << v;
}

TEST(LongSet, ReserveAvoidsResize) {
  LongSetOptions opts;
  LongSet s;
  ASSERT_TRUE(s.Reserve(50000, opts).ok());
  const uint64_t cap = s.capacity();
  EXPECT_EQ(cap, LongSet::CapacityFor(50000, opts.max_fill));
  EXPECT_TRUE(longset_internal::IsPrime(cap));
  EXPECT_GE(LongSet::SlotLimit(cap, opts.max_fill), 50000u);
  for (int64_t v = 1; v <= 50000; ++v) AddOrDie(&s, v, opts);
  EXPECT_EQ(s.capacity(), cap);
  ASSERT_TRUE(s.Reserve(10, opts).ok());  // never shrinks
  EXPECT_EQ(s.capacity(), cap);
  EXPECT_TRUE(LongSet().Reserve(size_t{1} << 40, opts).IsFull());
}

TEST(LongSet, MaybeShrinkAfterRemovals) {
  LongSetOptions opts;
  LongSet s;
  for (int64_t v = 1; v <= 100000; ++v) AddOrDie(&s, v, opts);
  EXPECT_FALSE(s.MaybeShrink(opts));
  const uint64_t big = s.capacity();
  for (int64_t v = 1; v <= 99000; ++v) ASSERT_TRUE(s.Remove(v));
  EXPECT_TRUE(s.MaybeShrink(opts));
  EXPECT_LT(s.capacity(), big / 50);
  const double fill = static_cast<double>(s.size()) / s.capacity();
  EXPECT_NEAR(fill, opts.max_fill / opts.growth_factor, 0.05);
  for (int64_t v = 1; v <= 100000; ++v) ASSERT_EQ(s.Contains(v), v > 99000);
  // Emptied completely: back to the minimum.
  for (int64_t v = 99001; v <= 100000; ++v) ASSERT_TRUE(s.Remove(v));
  s.MaybeShrink(opts);
  EXPECT_EQ(s.capacity(), LongSet::kMinCapacity);
}

TEST(LongSet, CopyIsDeep) {
  LongSet a(5, 6);
  for (int64_t v = -50; v <= 50; ++v) AddOrDie(&a, v);
  LongSet b = a;
  ASSERT_TRUE(b.Remove(7));
  EXPECT_TRUE(a.Contains(7));
  EXPECT_EQ(b.seed1(), 5u);
  EXPECT_EQ(b.size() + 1, a.size());
  LongSet c;
  c = a;
  EXPECT_EQ(Members(c), Members(a));
}

TEST(LongSet, ScanKeyIsBijection) {
  std::mt19937_64 rng(4);
  for (int64_t v : {int64_t{0}, int64_t{-1}, kMin, kMax, int64_t{1}}) {
    EXPECT_EQ(LongSet::ScanKeyToValue(LongSet::ScanKey(v)), v);
  }
  for (int i = 0; i < 100000; ++i) {
    const int64_t v = static_cast<int64_t>(rng());
    ASSERT_EQ(LongSet::ScanKeyToValue(LongSet::ScanKey(v)), v);
  }
}

TEST(LongSet, ScanReturnsEveryMemberExactlyOnce) {
  for (size_t count : {size_t{1}, size_t{10}, size_t{1000}, size_t{1000000}}) {
    LongSet s;
    std::vector<int64_t> want;
    for (int64_t v = -3000; v <= 3000; ++v) {
      AddOrDie(&s, v * 3);
      want.push_back(v * 3);
    }
    int calls = 0;
    std::vector<int64_t> got = FullScan(s, count, &calls);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want) << "count " << count;
  }
  LongSet empty;
  std::vector<int64_t> out{1, 2};
  EXPECT_EQ(empty.Scan(0, 10, &out), 0u);
  EXPECT_TRUE(out.empty());
}

// Each call returns at least capacity/64 members, so a static set is scanned in at most
// 64 * fill + 1 calls, each one walk of the table: O(64 n) in total.
TEST(LongSet, ScanCostIsBounded) {
  for (int n : {100, 5000, 200000}) {
    LongSet s;
    for (int64_t v = 1; v <= n; ++v) AddOrDie(&s, v);
    int calls = 0;
    std::vector<int64_t> got = FullScan(s, 1, &calls);
    EXPECT_EQ(got.size(), static_cast<size_t>(n));
    const double fill = static_cast<double>(n) / s.capacity();
    EXPECT_LE(calls, static_cast<int>(64 * fill) + 1) << "n " << n;
  }
}

TEST(LongSet, ScanStableAcrossGrowth) {
  LongSet s;
  std::vector<int64_t> original;
  for (int64_t v = 1; v <= 2000; ++v) {
    AddOrDie(&s, v * 1000003);
    original.push_back(v * 1000003);
  }
  std::unordered_map<int64_t, int> seen;
  std::vector<int64_t> batch;
  uint64_t cursor = s.Scan(0, 10, &batch);
  for (int64_t v : batch) ++seen[v];
  ASSERT_NE(cursor, 0u);
  const uint64_t cap_before = s.capacity();
  int64_t next = -1;
  while (cursor != 0) {
    // Force several grows (and a tombstone rebuild) between calls.
    for (int i = 0; i < 5000; ++i) AddOrDie(&s, next--);
    for (int i = 0; i < 300; ++i) s.Remove(-1 - i * 7);
    cursor = s.Scan(cursor, 10, &batch);
    for (int64_t v : batch) ++seen[v];
  }
  EXPECT_GT(s.capacity(), cap_before * 10);
  for (int64_t v : original) EXPECT_EQ(seen[v], 1) << v;
  for (const auto& [v, n] : seen) EXPECT_EQ(n, 1) << v;
}

TEST(LongSet, ScanStableAcrossShrink) {
  LongSet s;
  std::vector<int64_t> keep;
  for (int64_t v = 1; v <= 50000; ++v) {
    AddOrDie(&s, v);
    if (v % 50 == 0) keep.push_back(v);
  }
  std::set<int64_t> seen;
  std::vector<int64_t> batch;
  uint64_t cursor = s.Scan(0, 1, &batch);
  seen.insert(batch.begin(), batch.end());
  for (int64_t v = 1; v <= 50000; ++v) {
    if (v % 50 != 0) s.Remove(v);
  }
  ASSERT_TRUE(s.MaybeShrink({}));
  while (cursor != 0) {
    cursor = s.Scan(cursor, 1, &batch);
    seen.insert(batch.begin(), batch.end());
  }
  for (int64_t v : keep) EXPECT_TRUE(seen.count(v)) << v;
}

TEST(LongSet, RandomMemberIsUniform) {
  LongSet s;
  constexpr int kMembers = 100;
  for (int64_t v = 1; v <= kMembers; ++v) AddOrDie(&s, v * 17);
  AddOrDie(&s, 0);
  std::unordered_map<int64_t, int> hits;
  std::mt19937_64 rng(5);
  constexpr int kDraws = 202000;
  for (int i = 0; i < kDraws; ++i) ++hits[s.RandomMember(rng())];
  ASSERT_EQ(hits.size(), static_cast<size_t>(kMembers + 1));
  const double expected = static_cast<double>(kDraws) / (kMembers + 1);
  for (const auto& [v, n] : hits) {
    ASSERT_TRUE(s.Contains(v));
    EXPECT_NEAR(n, expected, expected * 0.15) << v;
  }
}

TEST(LongSet, RandomMemberInSparseCacheTable) {
  LongSet s;
  ASSERT_TRUE(s.Reserve(100000, CacheMode()).ok());
  AddOrDie(&s, 77, CacheMode());
  for (uint64_t r = 0; r < 100; ++r) EXPECT_EQ(s.RandomMember(r), 77);
}

TEST(LongSet, StatsReportProbeLengths) {
  LongSet s;
  LongSetProbeStats empty = s.Stats();
  EXPECT_EQ(empty.members, 0u);
  EXPECT_EQ(empty.mean_probe, 0);
  for (int64_t v = 1; v <= 10000; ++v) AddOrDie(&s, v);
  ASSERT_TRUE(s.Remove(5));
  LongSetProbeStats st = s.Stats();
  EXPECT_EQ(st.members, 9999u);
  EXPECT_EQ(st.tombstones, 1u);
  EXPECT_NEAR(st.fill, 10000.0 / s.capacity(), 1e-9);
  EXPECT_GE(st.mean_probe, 1.0);
  EXPECT_LT(st.mean_probe, 3.0);
  EXPECT_GE(st.max_probe, 2u);
  EXPECT_EQ(s.ProbeCount(0), 0u);
  EXPECT_GE(s.ProbeCount(1), 1u);
}

// Random mixed operations checked against std::unordered_set, including sentinel
// values, cache-mode phases and shrinking.
TEST(LongSet, DifferentialAgainstUnorderedSet) {
  const int ops = 4000000 / kScale;
  std::mt19937_64 rng(6);
  LongSet s(rng(), rng());
  std::unordered_set<int64_t> ref;
  const auto start = std::chrono::steady_clock::now();
  int64_t domain = 1000;
  LongSetOptions opts;
  for (int i = 0; i < ops; ++i) {
    if (i % 200000 == 0) {
      domain = int64_t{1} << (4 + rng() % 18);  // vary hit rate and size
      opts.auto_grow = rng() % 4 != 0;
      opts.max_fill = 0.5 + (rng() % 49) / 100.0;
      opts.growth_factor = 1.1 + (rng() % 20) / 10.0;
    }
    int64_t v = static_cast<int64_t>(rng() % domain) - domain / 2;
    if (rng() % 64 == 0) v = (rng() & 1) ? kMin : kMax - static_cast<int64_t>(rng() % 2);
    switch (rng() % 8) {
      case 0:
      case 1:
      case 2: {
        bool added = false;
        Status st = s.Add(v, opts, &added);
        if (st.IsFull()) {
          ASSERT_FALSE(opts.auto_grow);
          ASSERT_FALSE(ref.count(v));
          ASSERT_GE(s.size() - ((s.Contains(0) ? 1 : 0) + (s.Contains(kMin) ? 1 : 0)),
                    LongSet::SlotLimit(s.capacity(), opts.max_fill));
        } else {
          ASSERT_TRUE(st.ok());
          ASSERT_EQ(added, ref.insert(v).second) << "op " << i << " v " << v;
        }
        break;
      }
      case 3:
      case 4:
        ASSERT_EQ(s.Remove(v), ref.erase(v) == 1) << "op " << i << " v " << v;
        if (rng() % 16 == 0) s.MaybeShrink(opts);
        break;
      case 5:
      case 6:
        ASSERT_EQ(s.Contains(v), ref.count(v) == 1) << "op " << i << " v " << v;
        break;
      case 7:
        if (!ref.empty()) {
          ASSERT_TRUE(ref.count(s.RandomMember(rng())));
        }
        break;
    }
    ASSERT_EQ(s.size(), ref.size());
    ASSERT_LE(s.size() + s.tombstones(), s.capacity());
  }
  std::vector<int64_t> want(ref.begin(), ref.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(Members(s), want);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 10.0 * kScale);
}

}  // namespace
}  // namespace feedkv
