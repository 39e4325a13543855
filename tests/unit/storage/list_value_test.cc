// Unit tests for ListValue: every mutator against a std::deque model under several
// chunk limits (so chunks split, empty and merge back to one), long elements that
// take the 5-byte length form, the snapshot form and its corruption cases, and the
// memory count kept as chunks change.
#include "storage/list_value.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "storage/object_codec.h"

namespace feedkv {
namespace {

std::vector<std::string> Elements(const ListValue& l) {
  std::vector<std::string> out;
  if (l.empty()) return out;
  l.ForRange(0, l.size() - 1, false, [&](std::string_view v) {
    out.emplace_back(v);
    return true;
  });
  return out;
}

std::string RandomValue(std::mt19937_64& rng) {
  static const char* kSmall[] = {"a", "b", "c", "", "hello"};
  switch (rng() % 8) {
    case 0: return std::string(250 + rng() % 20, 'x');  // around the 1/5-byte length edge
    case 1: return std::string(rng() % 3000, 'y');
    default: return kSmall[rng() % 5];
  }
}

class ListValueModelTest : public ::testing::TestWithParam<int64_t> {};

TEST_P(ListValueModelTest, EveryOperationMatchesADeque) {
  const int64_t fill = GetParam();
  std::mt19937_64 rng(static_cast<uint64_t>(fill) * 7919 + 1);
  ListValue l;
  std::deque<std::string> model;
  for (int step = 0; step < 6000; ++step) {
    const int op = static_cast<int>(rng() % 10);
    if (op <= 2 || model.empty()) {
      const bool front = rng() % 2;
      std::string v = RandomValue(rng);
      l.Push(front, v, fill);
      front ? model.push_front(v) : model.push_back(v);
    } else if (op == 3) {
      const bool front = rng() % 2;
      ASSERT_EQ(l.Pop(front), front ? model.front() : model.back());
      front ? model.pop_front() : model.pop_back();
    } else if (op == 4) {
      const size_t i = rng() % model.size();
      ASSERT_EQ(l.At(i), model[i]);
      std::string v = RandomValue(rng);
      l.Set(i, v, fill);
      model[i] = v;
    } else if (op == 5) {
      const std::string pivot = RandomValue(rng);
      const bool after = rng() % 2;
      const std::string v = RandomValue(rng);
      auto it = std::find(model.begin(), model.end(), pivot);
      ASSERT_EQ(l.InsertAtPivot(pivot, v, after, fill), it != model.end());
      if (it != model.end()) model.insert(after ? it + 1 : it, v);
    } else if (op == 6) {
      const std::string v = RandomValue(rng);
      const int64_t count = static_cast<int64_t>(rng() % 5) - 2;
      size_t want = 0;
      std::deque<std::string> next;
      if (count >= 0) {
        for (auto& x : model) {
          if (x == v && (count == 0 || want < static_cast<size_t>(count))) {
            ++want;
          } else {
            next.push_back(x);
          }
        }
      } else {
        for (auto it = model.rbegin(); it != model.rend(); ++it) {
          if (*it == v && want < static_cast<size_t>(-count)) {
            ++want;
          } else {
            next.push_front(*it);
          }
        }
      }
      ASSERT_EQ(l.RemoveEqual(v, count), want);
      model = next;
    } else if (op == 7 && rng() % 40 == 0) {
      const bool front = rng() % 2;
      const size_t n = rng() % (model.size() + 1);
      l.RemoveEnds(front, n);
      for (size_t k = 0; k < n; ++k) front ? model.pop_front() : model.pop_back();
    } else if (op == 8 && !model.empty()) {
      // Reverse walks from a tail-side index.
      const size_t a = rng() % model.size(), b = a + rng() % (model.size() - a);
      std::vector<std::string> got;
      l.ForRange(a, b, true, [&](std::string_view v) {
        got.emplace_back(v);
        return true;
      });
      std::vector<std::string> want;
      for (size_t k = a; k <= b; ++k) want.push_back(model[model.size() - 1 - k]);
      ASSERT_EQ(got, want);
    }
    ASSERT_EQ(l.size(), model.size());
    if (step % 97 == 0) {
      ASSERT_EQ(Elements(l), std::vector<std::string>(model.begin(), model.end()));
      for (size_t i = 0; i < model.size(); i += 1 + model.size() / 10) ASSERT_EQ(l.At(i), model[i]);
    }
  }
  EXPECT_EQ(Elements(l), std::vector<std::string>(model.begin(), model.end()));
}

INSTANTIATE_TEST_SUITE_P(Fills, ListValueModelTest, ::testing::Values(-2, -1, 1, 4, 128));

TEST(ListValueTest, SnapshotRoundTripsAndRejectsCorruption) {
  ListValue l;
  for (int i = 0; i < 5000; ++i) l.Push(i % 3 != 0, std::string(i % 300, 'a' + i % 26), kDefaultListFill);
  std::string bytes;
  l.SerializeTo(&bytes);
  std::unique_ptr<Object> back;
  ASSERT_TRUE(DecodeObject(ValueType::kList, bytes, &back).ok());
  EXPECT_EQ(Elements(static_cast<const ListValue&>(*back)), Elements(l));
  EXPECT_EQ(back->Digest(), l.Digest());
  EXPECT_EQ(static_cast<const ListValue&>(*l.Clone()).Digest(), l.Digest());
  EXPECT_FALSE(DecodeObject(ValueType::kList, bytes.substr(0, bytes.size() - 1), &back).ok());
  EXPECT_FALSE(DecodeObject(ValueType::kList, bytes + "x", &back).ok());
  EXPECT_FALSE(DecodeObject(ValueType::kList, std::string(1, '\0'), &back).ok());
}

TEST(ListValueTest, OrderMattersToTheDigest) {
  ListValue a, b;
  a.Push(false, "x", -2);
  a.Push(false, "y", -2);
  b.Push(false, "y", -2);
  b.Push(false, "x", -2);
  EXPECT_NE(a.Digest(), b.Digest());
}

TEST(ListValueTest, MemoryFollowsTheElements) {
  ListValue l;
  const size_t empty = l.MemoryUsage();
  for (int i = 0; i < 100000; ++i) l.Push(false, "0123456789", kDefaultListFill);
  const size_t full = l.MemoryUsage();
  EXPECT_GT(full, empty + 100000 * 12);
  EXPECT_LT(full, empty + 100000 * 14);  // 12 bytes an element, chunks nearly full
  l.RemoveEnds(true, 100000);
  EXPECT_EQ(l.MemoryUsage(), empty);
}

}  // namespace
}  // namespace feedkv
