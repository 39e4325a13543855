// Unit tests for StreamValue: appends, deletes and exact trims against a
// std::map model under small node limits (so nodes split and empty), range
// reads both ways, approximate trims dropping whole nodes only, Redis's lag
// helpers, consumer groups' pending lists, and the snapshot form (round trip,
// clone, corruption).
#include "storage/stream_value.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "storage/object_codec.h"

namespace feedkv {
namespace {

using Model = std::map<StreamId, std::vector<std::string>>;

Model Contents(const StreamValue& s, bool reverse = false) {
  Model out;
  StreamId prev = reverse ? StreamId::Max() : StreamId{};
  bool first = true;
  s.ForRange({}, StreamId::Max(), reverse, [&](const StreamEntry& e) {
    if (!first) {
      EXPECT_TRUE(reverse ? e.id < prev : e.id > prev);
    }
    first = false;
    prev = e.id;
    out[e.id] = std::vector<std::string>(e.items.begin(), e.items.end());
    return true;
  });
  return out;
}

void Append(StreamValue* s, Model* m, StreamId id, std::vector<std::string> items, const StreamLimits& limits) {
  std::vector<std::string_view> views(items.begin(), items.end());
  s->Append(id, views, limits);
  (*m)[id] = std::move(items);
}

TEST(StreamValueTest, RandomOperationsMatchAMapModel) {
  std::mt19937_64 rng(7);
  const StreamLimits limits{200, 5};
  StreamValue s;
  Model m;
  StreamId next{1, 0};
  for (int step = 0; step < 5000; ++step) {
    const int op = static_cast<int>(rng() % 10);
    if (op < 6) {
      next.ms += rng() % 3;
      next.seq = rng() % 2 == 0 ? 0 : next.seq + 1;
      if (!(next > s.last_id())) next = {s.last_id().ms, s.last_id().seq + 1};
      Append(&s, &m, next, {"f" + std::to_string(rng() % 4), std::string(rng() % 40, 'v')}, limits);
    } else if (op < 8 && !m.empty()) {
      auto it = m.begin();
      std::advance(it, static_cast<long>(rng() % m.size()));
      const StreamId id = it->first;
      EXPECT_TRUE(s.Delete(id));
      EXPECT_FALSE(s.Delete(id));
      m.erase(id);
    } else if (op == 8) {
      const uint64_t maxlen = rng() % 30;
      const uint64_t dropped = s.TrimMaxLen(maxlen, false, 0);
      uint64_t expect = 0;
      while (m.size() > maxlen) {
        m.erase(m.begin());
        ++expect;
      }
      EXPECT_EQ(dropped, expect);
    } else if (!m.empty()) {
      auto it = m.begin();
      std::advance(it, static_cast<long>(rng() % m.size()));
      const StreamId minid = it->first;
      s.TrimMinId(minid, false, 0);
      m.erase(m.begin(), m.lower_bound(minid));
    }
    ASSERT_EQ(s.length(), m.size());
    if (!m.empty()) {
      ASSERT_EQ(s.first_id(), m.begin()->first);
    }
    if (step % 97 == 0) {
      ASSERT_EQ(Contents(s), m);
      ASSERT_EQ(Contents(s, true), m);
    }
  }
  EXPECT_EQ(Contents(s), m);
}

TEST(StreamValueTest, RangesHonourBoundsAndStopEarly) {
  StreamValue s;
  Model m;
  for (uint64_t i = 1; i <= 50; ++i) Append(&s, &m, {i, i % 3}, {"i", std::to_string(i)}, StreamLimits{0, 4});
  std::vector<uint64_t> seen;
  s.ForRange({10, 0}, {20, UINT64_MAX}, false, [&](const StreamEntry& e) {
    seen.push_back(e.id.ms);
    return seen.size() < 5;
  });
  EXPECT_EQ(seen, (std::vector<uint64_t>{10, 11, 12, 13, 14}));
  seen.clear();
  s.ForRange({10, 0}, {20, UINT64_MAX}, true, [&](const StreamEntry& e) {
    seen.push_back(e.id.ms);
    return true;
  });
  EXPECT_EQ(seen.size(), 11u);
  EXPECT_EQ(seen.front(), 20u);
  EXPECT_EQ(seen.back(), 10u);
  std::vector<std::string> items;
  EXPECT_TRUE(s.Get({7, 1}, &items));
  EXPECT_EQ(items, (std::vector<std::string>{"i", "7"}));
  EXPECT_FALSE(s.Get({7, 0}, &items));
}

TEST(StreamValueTest, ApproximateTrimDropsWholeNodesOnly) {
  StreamValue s;
  Model m;
  for (uint64_t i = 1; i <= 10; ++i) Append(&s, &m, {i, 0}, {"a", "b"}, StreamLimits{0, 4});
  // Nodes of 4, 4, 2: keeping 5 may drop the first node only.
  EXPECT_EQ(s.node_count(), 3u);
  EXPECT_EQ(s.TrimMaxLen(5, true, 0), 4u);
  EXPECT_EQ(s.length(), 6u);
  EXPECT_EQ(s.first_id(), (StreamId{5, 0}));
  // A limit below a node's entries stops it.
  EXPECT_EQ(s.TrimMaxLen(0, true, 3), 0u);
  EXPECT_EQ(s.TrimMinId({9, 0}, true, 0), 4u);
  EXPECT_EQ(s.length(), 2u);
}

TEST(StreamValueTest, LagHelpersFollowRedis) {
  StreamValue s;
  Model m;
  for (uint64_t i = 1; i <= 5; ++i) Append(&s, &m, {i, 0}, {"a", "b"}, StreamLimits{});
  EXPECT_EQ(s.EntriesAddedBefore({5, 0}), 5);
  EXPECT_EQ(s.EntriesAddedBefore({1, 0}), 1);
  EXPECT_EQ(s.EntriesAddedBefore({0, 5}), 0);
  EXPECT_EQ(s.EntriesAddedBefore({3, 0}), -1);
  EXPECT_EQ(s.EntriesAddedBefore({6, 0}), -1);
  EXPECT_FALSE(s.RangeHasTombstones({}, StreamId::Max()));
  s.Delete({3, 0});
  EXPECT_EQ(s.max_deleted_id(), (StreamId{3, 0}));
  EXPECT_TRUE(s.RangeHasTombstones({2, 0}, StreamId::Max()));
  EXPECT_FALSE(s.RangeHasTombstones({4, 0}, StreamId::Max()));
  EXPECT_EQ(s.EntriesAddedBefore({1, 0}), -1);
}

TEST(StreamValueTest, SnapshotFormRoundTripsGroupsAndRejectsCorruption) {
  StreamValue s;
  Model m;
  for (uint64_t i = 1; i <= 300; ++i) Append(&s, &m, {i, 1}, {"k", std::string(i % 9, 'x')}, StreamLimits{});
  s.Delete({10, 1});
  s.SetLastId({1000, 0}, 400, {10, 1});
  StreamGroup* g = s.CreateGroup("g1", {5, 1}, 5);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(s.CreateGroup("g1", {}, 0), nullptr);
  StreamConsumer* alice = g->CreateConsumer("alice", 111);
  StreamConsumer* bob = g->CreateConsumer("bob", 222);
  g->SetPending({1, 1}, alice, 1000, 1);
  g->SetPending({2, 1}, alice, 1001, 1);
  g->SetPending({2, 1}, bob, 1500, 3);  // claimed by bob
  EXPECT_EQ(alice->pending.size(), 1u);
  EXPECT_EQ(bob->pending.size(), 1u);
  s.CreateGroup("g2", {}, -1);

  std::string bytes;
  s.SerializeTo(&bytes);
  std::unique_ptr<Object> obj;
  ASSERT_TRUE(DecodeObject(ValueType::kStream, bytes, &obj).ok());
  const auto* back = static_cast<const StreamValue*>(obj.get());
  m.erase({10, 1});
  EXPECT_EQ(Contents(*back), m);
  EXPECT_EQ(back->last_id(), (StreamId{1000, 0}));
  EXPECT_EQ(back->entries_added(), 400u);
  EXPECT_EQ(back->max_deleted_id(), (StreamId{10, 1}));
  EXPECT_EQ(back->Digest(), s.Digest());
  const StreamGroup* g1 = back->FindGroup("g1");
  ASSERT_NE(g1, nullptr);
  EXPECT_EQ(g1->entries_read, 5);
  EXPECT_EQ(back->FindGroup("g2")->entries_read, -1);
  ASSERT_EQ(g1->pel().size(), 2u);
  EXPECT_EQ(g1->pel().Find({2, 1})->consumer->name, "bob");
  EXPECT_EQ(g1->pel().Find({2, 1})->delivery_count, 3u);
  EXPECT_EQ(g1->FindConsumer("alice")->seen_time_ms, 111);

  std::unique_ptr<Object> copy = s.Clone();
  EXPECT_EQ(copy->Digest(), s.Digest());
  EXPECT_EQ(copy->MemoryUsage() > 0, true);

  for (size_t cut : {size_t{0}, size_t{1}, bytes.size() / 2, bytes.size() - 1}) {
    EXPECT_FALSE(DecodeObject(ValueType::kStream, bytes.substr(0, cut), &obj).ok()) << cut;
  }
  std::string bad = bytes;
  bad[0] = 9;
  EXPECT_FALSE(DecodeObject(ValueType::kStream, bad, &obj).ok());
}

TEST(StreamValueTest, ParseStreamIdFollowsRedis) {
  StreamId id;
  bool star = false;
  EXPECT_TRUE(ParseStreamId("5", 7, &id));
  EXPECT_EQ(id, (StreamId{5, 7}));
  EXPECT_TRUE(ParseStreamId("18446744073709551615-18446744073709551615", 0, &id));
  EXPECT_EQ(id, StreamId::Max());
  EXPECT_FALSE(ParseStreamId("18446744073709551616", 0, &id));
  EXPECT_TRUE(ParseStreamId("3-*", 0, &id, &star));
  EXPECT_TRUE(star);
  EXPECT_FALSE(ParseStreamId("3-*", 0, &id));
  // strtoull's leniency, as Redis's string2ull falls back to it.
  EXPECT_TRUE(ParseStreamId(" 7", 0, &id));
  EXPECT_EQ(id, (StreamId{7, 0}));
  EXPECT_TRUE(ParseStreamId("+007-1", 0, &id));
  EXPECT_EQ(id, (StreamId{7, 1}));
  EXPECT_TRUE(ParseStreamId("1--01", 0, &id));
  EXPECT_EQ(id, (StreamId{1, UINT64_MAX}));
  for (const char* bad : {"", "-", "a", "1-", "-1", "1-2-3", "1 ", "1-x", " ", "1--1", "1-+"}) {
    EXPECT_FALSE(ParseStreamId(bad, 0, &id)) << bad;
  }
}

}  // namespace
}  // namespace feedkv
