// Unit tests for ScoreTree and SortedSetValue: the order index against a std::set
// model through inserts, score updates and mass removals (ranks, range counts, walks
// both ways), ZADD's flag rules, the listpack -> skiplist conversion, the snapshot
// form and its corruption cases, digests that do not depend on the encoding.
#include "storage/sorted_set.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "storage/object_codec.h"

namespace feedkv {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr int kScale = 8;
#else
constexpr int kScale = 1;
#endif

using Model = std::set<std::pair<double, std::string>>;

std::vector<std::pair<double, std::string>> Walk(const SortedSetValue& z, bool reverse) {
  std::vector<std::pair<double, std::string>> out;
  if (!z.empty()) {
    z.ForRanks(0, z.size() - 1, reverse, [&](const ZEntry& e) { out.emplace_back(e.score, std::string(e.member)); });
  }
  return out;
}

void ExpectMatches(const SortedSetValue& z, const Model& model) {
  ASSERT_EQ(z.size(), model.size());
  const std::vector<std::pair<double, std::string>> want(model.begin(), model.end());
  ASSERT_EQ(Walk(z, false), want);
  std::vector<std::pair<double, std::string>> back(want.rbegin(), want.rend());
  ASSERT_EQ(Walk(z, true), back);
}

TEST(SortedSetTest, RandomOperationsMatchAnOrderedModelInBothEncodings) {
  for (const size_t listpack_limit : {size_t{0}, size_t{128}, size_t{100000}}) {
    std::mt19937_64 rng(listpack_limit + 1);
    SortedSetValue z;
    Model model;
    std::map<std::string, double> scores;
    const ZsetLimits limits{listpack_limit, 64};
    const int ops = (listpack_limit == 100000 ? 3000 : 60000) / kScale;
    for (int i = 0; i < ops; ++i) {
      const std::string m = "m" + std::to_string(rng() % 5000);
      const double s = static_cast<double>(rng() % 300) / 4;  // many ties
      if (rng() % 10 < 7) {
        double out;
        const auto res = z.Add(m, s, 0, limits, &out);
        auto it = scores.find(m);
        if (it == scores.end()) {
          EXPECT_EQ(res, SortedSetValue::AddResult::kAdded);
        } else {
          EXPECT_EQ(res, it->second == s ? SortedSetValue::AddResult::kUnchanged : SortedSetValue::AddResult::kUpdated);
          model.erase({it->second, m});
        }
        scores[m] = s;
        model.insert({s, m});
      } else {
        const bool had = scores.count(m) > 0;
        EXPECT_EQ(z.Remove(m), had);
        if (had) {
          model.erase({scores[m], m});
          scores.erase(m);
        }
      }
      if (i % 997 == 0) ExpectMatches(z, model);
    }
    ExpectMatches(z, model);
    EXPECT_EQ(z.is_listpack(), listpack_limit == 100000);
    // Ranks, At and monotone counts against the model.
    const std::vector<std::pair<double, std::string>> order(model.begin(), model.end());
    for (size_t r = 0; r < order.size(); r += 7) {
      size_t rank;
      double score;
      ASSERT_TRUE(z.Rank(order[r].second, &rank, &score));
      EXPECT_EQ(rank, r);
      EXPECT_EQ(score, order[r].first);
      EXPECT_EQ(z.At(r).member, order[r].second);
    }
    for (double bound = -1; bound < 80; bound += 3.25) {
      const size_t below = z.CountWhile([&](double s, std::string_view) { return s < bound; });
      size_t want = 0;
      for (const auto& e : order) want += e.first < bound;
      EXPECT_EQ(below, want) << bound;
    }
    // Mass removal by rank down to a few members, then back up.
    while (z.size() > 3) {
      const size_t lo = rng() % z.size();
      const size_t hi = std::min(z.size() - 1, lo + rng() % 200);
      z.RemoveRanks(lo, hi);
      auto it = std::next(model.begin(), static_cast<long>(lo));
      model.erase(it, std::next(it, static_cast<long>(hi - lo + 1)));
    }
    ExpectMatches(z, model);
    for (int i = 0; i < 5000 / kScale; ++i) {
      const std::string m = "n" + std::to_string(i);
      double out;
      z.Add(m, i % 13, 0, limits, &out);
      model.insert({static_cast<double>(i % 13), m});
    }
    ExpectMatches(z, model);
  }
}

TEST(SortedSetTest, AddFlagsFollowZaddRules) {
  SortedSetValue z;
  const ZsetLimits limits;
  double out = 0;
  using R = SortedSetValue::AddResult;
  EXPECT_EQ(z.Add("a", 5, SortedSetValue::kXX, limits, &out), R::kSkipped);
  EXPECT_EQ(z.Add("a", 5, SortedSetValue::kNX, limits, &out), R::kAdded);
  EXPECT_EQ(z.Add("a", 9, SortedSetValue::kNX, limits, &out), R::kSkipped);
  EXPECT_EQ(out, 5);
  EXPECT_EQ(z.Add("a", 4, SortedSetValue::kGT, limits, &out), R::kSkipped);
  EXPECT_EQ(z.Add("a", 6, SortedSetValue::kGT, limits, &out), R::kUpdated);
  EXPECT_EQ(z.Add("a", 7, SortedSetValue::kLT, limits, &out), R::kSkipped);
  EXPECT_EQ(z.Add("a", 2, SortedSetValue::kIncr, limits, &out), R::kUpdated);
  EXPECT_EQ(out, 8);
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(z.Add("a", inf, 0, limits, &out), R::kUpdated);
  EXPECT_EQ(z.Add("a", -inf, SortedSetValue::kIncr, limits, &out), R::kNaN);
  double score;
  ASSERT_TRUE(z.Score("a", &score));
  EXPECT_EQ(score, inf);
  EXPECT_EQ(z.Add("a", inf, 0, limits, &out), R::kUnchanged);
}

TEST(SortedSetTest, ListpackConvertsOnceForCountOrLength) {
  const ZsetLimits limits{4, 8};
  SortedSetValue z;
  double out;
  for (int i = 0; i < 4; ++i) z.Add("m" + std::to_string(i), i, 0, limits, &out);
  EXPECT_EQ(z.encoding(), "listpack");
  z.Add("m4", 4, 0, limits, &out);
  EXPECT_EQ(z.encoding(), "skiplist");
  for (int i = 0; i < 5; ++i) z.Remove("m" + std::to_string(i));
  EXPECT_EQ(z.encoding(), "skiplist");  // never back, as Redis
  SortedSetValue y;
  y.Add("123456789", 1, 0, limits, &out);
  EXPECT_EQ(y.encoding(), "skiplist");
  EXPECT_EQ(SortedSetValue::Create(5, 1, limits)->encoding(), "skiplist");
  EXPECT_EQ(SortedSetValue::Create(4, 8, limits)->encoding(), "listpack");
}

TEST(SortedSetTest, SnapshotRoundTripsAndDigestIgnoresEncoding) {
  for (const size_t limit : {size_t{0}, size_t{1000}}) {
    SortedSetValue z;
    double out;
    for (int i = 0; i < 500; ++i) z.Add("k" + std::to_string(i * 7919 % 1000), i % 17 - 3.5, 0, {limit, 64}, &out);
    std::string bytes;
    z.SerializeTo(&bytes);
    std::unique_ptr<Object> back;
    ASSERT_TRUE(DecodeObject(ValueType::kZset, bytes, &back).ok());
    const auto& y = static_cast<const SortedSetValue&>(*back);
    EXPECT_EQ(y.encoding(), z.encoding());
    EXPECT_EQ(Walk(y, false), Walk(z, false));
    EXPECT_EQ(y.Digest(), z.Digest());
    auto clone = z.Clone();
    EXPECT_EQ(clone->Digest(), z.Digest());
  }
  SortedSetValue a, b;
  double out;
  for (int i = 0; i < 200; ++i) {
    a.Add(std::to_string(i), i, 0, {0, 64}, &out);
    b.Add(std::to_string(199 - i), 199 - i, 0, {1000, 64}, &out);
  }
  EXPECT_NE(a.encoding(), b.encoding());
  EXPECT_EQ(a.Digest(), b.Digest());
  b.Add("5", 6, 0, {1000, 64}, &out);
  EXPECT_NE(a.Digest(), b.Digest());
}

TEST(SortedSetTest, DecodeRejectsCorruptInput) {
  SortedSetValue z;
  double out;
  z.Add("a", 1, 0, {}, &out);
  z.Add("b", 2, 0, {}, &out);
  std::string good;
  z.SerializeTo(&good);
  std::unique_ptr<SortedSetValue> back;
  ASSERT_TRUE(SortedSetValue::Decode(good, &back).ok());
  // Every truncation fails.
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(SortedSetValue::Decode(good.substr(0, n), &back).ok()) << n;
  }
  EXPECT_FALSE(SortedSetValue::Decode(good + "x", &back).ok());
  std::string bad_tag = good;
  bad_tag[0] = 7;
  EXPECT_FALSE(SortedSetValue::Decode(bad_tag, &back).ok());
  // Out of order: swap the two scores.
  std::string swapped = good;
  const double three = 3, nan = std::nan("");
  std::memcpy(&swapped[2], &three, 8);
  EXPECT_FALSE(SortedSetValue::Decode(swapped, &back).ok());
  std::string with_nan = good;
  std::memcpy(&with_nan[2], &nan, 8);
  EXPECT_FALSE(SortedSetValue::Decode(with_nan, &back).ok());
  // A duplicate member in order by score.
  SortedSetValue d;
  d.Add("a", 1, 0, {}, &out);
  d.Add("b", 2, 0, {}, &out);
  std::string dup;
  d.SerializeTo(&dup);
  dup[dup.size() - 1] = 'a';
  EXPECT_FALSE(SortedSetValue::Decode(dup, &back).ok());
}

TEST(SortedSetTest, MemoryOfABigSetIsFarBelowASkiplist) {
  SortedSetValue z;
  double out;
  for (int i = 0; i < 100000 / kScale; ++i) z.Add("user:" + std::to_string(i), i * 1.5, 0, {}, &out);
  const double per_member = static_cast<double>(z.MemoryUsage()) / z.size();
  // Redis's dict + skiplist spend ~110 bytes on such a member; this layout ~60.
  EXPECT_LT(per_member, 75) << per_member;
  EXPECT_GT(per_member, 40) << per_member;
}

}  // namespace
}  // namespace feedkv
