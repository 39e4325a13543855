// Unit tests for FeedTimeline: ordered inserts with duplicates refused, trimming in
// batches past the cap, the pushed-entry count of an outbox, entry-id text, and the
// snapshot form with its corruption cases.
#include "storage/feed_timeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "storage/object_codec.h"

namespace feedkv {
namespace {

TEST(FeedTimelineTest, InsertsKeepOrderAndRefuseRepeats) {
  FeedTimeline t(FeedTimeline::Kind::kInbox);
  std::mt19937_64 rng(3);
  std::set<std::pair<int64_t, int64_t>> model;
  for (int i = 0; i < 5000; ++i) {
    const int64_t ts = static_cast<int64_t>(rng() % 2000), id = static_cast<int64_t>(rng() % 50);
    EXPECT_EQ(t.Insert(FeedEntry{ts, id, 7}, 100000), model.insert({ts, id}).second);
  }
  ASSERT_EQ(t.size(), model.size());
  size_t i = 0;
  for (const auto& [ts, id] : model) {
    EXPECT_EQ(t.at(i).ts, ts);
    EXPECT_EQ(t.at(i).id, id);
    ++i;
  }
  EXPECT_EQ(t.LowerBound(t.at(10).ts, t.at(10).id), 10u);
}

TEST(FeedTimelineTest, KeepsTheNewestCapEntriesAndFreesAgedOutChunks) {
  FeedTimeline t(FeedTimeline::Kind::kInbox);
  for (int64_t i = 0; i < 800; ++i) t.Insert(FeedEntry{i, 0, 1}, 800);
  const size_t full = t.MemoryUsage();
  for (int64_t i = 800; i < 5000; ++i) {
    ASSERT_TRUE(t.Insert(FeedEntry{i, 0, 1}, 800));
    ASSERT_EQ(t.size(), 800u);
    ASSERT_LE(t.MemoryUsage(), full + 2 * FeedTimeline::kChunk * sizeof(FeedEntry) + 64);
  }
  EXPECT_EQ(t.at(0).ts, 4200);
  EXPECT_EQ(t.at(799).ts, 4999);
  EXPECT_FALSE(t.Insert(FeedEntry{5, 0, 1}, 800));  // older than all a full timeline keeps
  EXPECT_TRUE(t.Insert(FeedEntry{4500, 1, 1}, 800));  // in the middle: the oldest goes
  EXPECT_EQ(t.at(0).ts, 4201);
  EXPECT_EQ(t.LowerBound(4500, 1), 300u);
  EXPECT_TRUE(t.Remove(4500, 1));
  EXPECT_EQ(t.size(), 799u);
  // Removing down to nothing frees every chunk.
  while (!t.empty()) ASSERT_TRUE(t.Remove(t.at(t.size() - 1).ts, t.at(t.size() - 1).id));
  EXPECT_LT(t.MemoryUsage(), 400u);
}

TEST(FeedTimelineTest, OutboxCountsEntriesThatWereNotPushed) {
  FeedTimeline t(FeedTimeline::Kind::kOutbox);
  for (int64_t i = 0; i < 10; ++i) t.Insert(FeedEntry{i, i, i % 2 ? FeedTimeline::kPushed : 0}, 16);
  EXPECT_EQ(t.size(), 10u);
  EXPECT_EQ(t.unpushed(), 5u);
  t.Trim(6);  // drops 0..3: two unpushed
  EXPECT_EQ(t.unpushed(), 3u);
  FeedEntry gone;
  EXPECT_TRUE(t.RemovePost(8, &gone));
  EXPECT_EQ(gone.ts, 8);
  EXPECT_EQ(t.unpushed(), 2u);
  EXPECT_FALSE(t.RemovePost(8, &gone));
}

TEST(FeedTimelineTest, EntryIdsRoundTripAndRejectJunk) {
  int64_t ts, id;
  EXPECT_EQ(FormatFeedEntryId(1700000000000, 42), "1700000000000-42");
  ASSERT_TRUE(ParseFeedEntryId("-5-9", &ts, &id));
  EXPECT_EQ(ts, -5);
  EXPECT_EQ(id, 9);
  ASSERT_TRUE(ParseFeedEntryId("5--9", &ts, &id));
  EXPECT_EQ(id, -9);
  for (const char* bad : {"", "5", "5-", "-5", "a-1", "1-b", "1-2-3", "01-2", " 1-2"}) {
    EXPECT_FALSE(ParseFeedEntryId(bad, &ts, &id)) << bad;
  }
}

TEST(FeedTimelineTest, SnapshotRoundTripsAndRejectsCorruption) {
  FeedTimeline t(FeedTimeline::Kind::kOutbox);
  t.set_mode(FeedTimeline::Mode::kPull);
  for (int64_t i = 0; i < 50; ++i) t.Insert(FeedEntry{1000 + i, -i, i % 3 == 0 ? FeedTimeline::kPushed : 0}, 800);
  std::string bytes;
  t.SerializeTo(&bytes);
  std::unique_ptr<Object> back;
  ASSERT_TRUE(DecodeObject(ValueType::kFeed, bytes, &back).ok());
  const auto& u = static_cast<const FeedTimeline&>(*back);
  EXPECT_EQ(u.Digest(), t.Digest());
  EXPECT_EQ(u.unpushed(), t.unpushed());
  EXPECT_EQ(u.mode(), FeedTimeline::Mode::kPull);
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::unique_ptr<FeedTimeline> x;
    EXPECT_FALSE(FeedTimeline::Decode(bytes.substr(0, n), &x).ok()) << n;
  }
  std::unique_ptr<FeedTimeline> x;
  EXPECT_FALSE(FeedTimeline::Decode(bytes + "z", &x).ok());
  std::string bad_kind = bytes;
  bad_kind[0] = 9;
  EXPECT_FALSE(FeedTimeline::Decode(bad_kind, &x).ok());
}

TEST(FeedTimelineTest, MergeLeavesWhatInsertingOneByOneLeaves) {
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    const size_t cap = 1 + rng() % 200;
    const auto kind = round % 2 ? FeedTimeline::Kind::kInbox : FeedTimeline::Kind::kOutbox;
    FeedTimeline merged(kind), inserted(kind);
    for (int i = 0, n = static_cast<int>(rng() % 150); i < n; ++i) {
      FeedEntry e{static_cast<int64_t>(rng() % 40), static_cast<int64_t>(rng() % 10), static_cast<int64_t>(rng() % 2)};
      merged.Insert(e, cap);
      inserted.Insert(e, cap);
    }
    std::set<std::pair<int64_t, int64_t>> seen;
    std::vector<FeedEntry> batch;  // distinct ids, oldest first, some already present
    for (int i = 0, n = static_cast<int>(rng() % 300); i < n; ++i) {
      FeedEntry e{static_cast<int64_t>(rng() % 40), static_cast<int64_t>(rng() % 10), 1};
      if (seen.insert({e.ts, e.id}).second) batch.push_back(e);
    }
    std::sort(batch.begin(), batch.end(), [](const FeedEntry& a, const FeedEntry& b) { return a.Before(b.ts, b.id); });
    for (auto it = batch.rbegin(); it != batch.rend(); ++it) inserted.Insert(*it, cap);
    const uint64_t before = merged.Digest();
    const bool merged_changed = merged.Merge(batch, cap);
    ASSERT_EQ(merged.Digest(), inserted.Digest()) << round;
    ASSERT_EQ(merged.size(), inserted.size());
    ASSERT_EQ(merged.unpushed(), inserted.unpushed());
    ASSERT_EQ(merged_changed, merged.Digest() != before) << round;
  }
}

}  // namespace
}  // namespace feedkv
