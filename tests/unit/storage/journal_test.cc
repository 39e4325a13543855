// Unit tests for Journal and JournalDecoder: offsets count bytes whether or
// not anyone consumes them (so turning the AOF off and on never shifts them),
// two consumers at different starting offsets see the same groups, a reset
// continues from a loaded offset, and the decoder undoes the framing.
#include "storage/journal.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>


namespace feedkv {
namespace {

using Cmd = std::vector<std::string>;

class RecordingConsumer : public JournalConsumer {
 public:
  void OnGroup(const JournalGroup& g) override {
    if (!groups.empty()) {
      EXPECT_EQ(g.start, groups.back().end()) << "groups arrive in offset order, no gaps";
    }
    groups.push_back(g);
  }
  uint64_t bytes() const {
    uint64_t n = 0;
    for (const auto& g : groups) n += g.bytes->size();
    return n;
  }
  std::vector<JournalGroup> groups;
};

// A mix of batches: single commands, a transaction, a database change.
void AppendWorkload(Journal* j) {
  const std::vector<Cmd> one = {{"SET", "k", "v"}};
  const std::vector<Cmd> tx = {{"INCR", "a"}, {"SADD", "s", "1", "2"}, {"DEL", "x"}};
  const std::vector<Cmd> big = {{"SET", "big", std::string(100000, 'x')}};
  j->AppendBatch(0, one);
  j->AppendBatch(0, tx);
  j->Seal();
  j->AppendBatch(3, one);
  j->AppendBatch(3, big);
  j->Seal();
  j->AppendBatch(0, tx);
  j->Seal();
}

TEST(Journal, OffsetsAreTheSameWithOrWithoutAConsumer) {
  Journal counted;  // nobody reads: sizes only
  AppendWorkload(&counted);
  Journal stored;
  RecordingConsumer c;
  stored.AddConsumer(&c);
  AppendWorkload(&stored);
  EXPECT_EQ(counted.sealed_offset(), stored.sealed_offset());
  EXPECT_EQ(c.bytes(), stored.sealed_offset());
  EXPECT_EQ(counted.groups_sealed(), 3u);
}

TEST(Journal, CountBatchMovesOffsetsAsAppendBatchWould) {
  const std::vector<Cmd> tx = {{"SET", "a", "1"}, {"SET", "b", std::string(300, 'y')}};
  Journal appended, counted;
  appended.AppendBatch(2, tx);
  uint64_t bytes = 0;
  for (const auto& c : tx) bytes += Journal::EncodedSize(std::span<const std::string>(c));
  counted.CountBatch(2, tx.size(), bytes);
  EXPECT_EQ(appended.end_offset(), counted.end_offset());
  EXPECT_EQ(appended.Seal(), counted.Seal());
  // Both open the next group with SELECT again.
  appended.AppendBatch(2, std::vector<Cmd>{tx[0]});
  counted.CountBatch(2, 1, Journal::EncodedSize(std::span<const std::string>(tx[0])));
  EXPECT_EQ(appended.Seal(), counted.Seal());
}

TEST(Journal, EveryGroupOpensWithSelectSoAReaderMayStartAtAnyGroup) {
  Journal j;
  RecordingConsumer sink;
  j.AddConsumer(&sink);
  j.AppendBatch(3, std::vector<Cmd>{{"SET", "a", "1"}});
  j.Seal();
  j.AppendBatch(3, std::vector<Cmd>{{"SET", "b", "2"}});
  j.Seal();
  ASSERT_EQ(sink.groups.size(), 2u);
  EXPECT_TRUE(sink.groups[1].bytes->starts_with("*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n"));
}

TEST(Journal, AppendSealedHandsForeignGroupsOnVerbatimAtTheEnd) {
  Journal source(500), copy(500);
  RecordingConsumer from, to;
  source.AddConsumer(&from);
  copy.AddConsumer(&to);
  source.AppendBatch(1, std::vector<Cmd>{{"SET", "k", "v"}});
  source.Seal();
  ASSERT_EQ(from.groups.size(), 1u);
  EXPECT_EQ(copy.AppendSealed(from.groups[0].bytes), source.sealed_offset());
  ASSERT_EQ(to.groups.size(), 1u);
  EXPECT_EQ(to.groups[0].start, 500u);
  EXPECT_EQ(*to.groups[0].bytes, *from.groups[0].bytes);
}

TEST(Journal, AReadOrAnEmptySealNeverMovesTheOffset) {
  Journal j(1000);
  EXPECT_EQ(j.end_offset(), 1000u);
  EXPECT_EQ(j.Seal(), 1000u);
  EXPECT_TRUE(j.group_empty());
  EXPECT_EQ(j.groups_sealed(), 0u);
}

TEST(Journal, ConsumersAddedLaterStartWhereTheJournalIsAndRepeatSelect) {
  Journal j;
  RecordingConsumer first, second;
  j.AddConsumer(&first);
  j.AppendBatch(5, std::vector<Cmd>{{"SET", "a", "1"}});
  j.Seal();
  const uint64_t joined_at = j.sealed_offset();
  j.ForgetSelectedDb();  // what a consumer starting at a boundary asks for
  j.AddConsumer(&second);
  j.AppendBatch(5, std::vector<Cmd>{{"SET", "b", "2"}});
  j.Seal();
  ASSERT_EQ(first.groups.size(), 2u);
  ASSERT_EQ(second.groups.size(), 1u);
  EXPECT_EQ(second.groups[0].start, joined_at);
  // One group, one shared buffer: no copy per consumer.
  EXPECT_EQ(first.groups[1].bytes.get(), second.groups[0].bytes.get());
  EXPECT_NE(second.groups[0].bytes->find("SELECT"), std::string::npos);
  // A removed consumer sees nothing more; the offsets go on.
  j.RemoveConsumer(&first);
  j.AppendBatch(5, std::vector<Cmd>{{"SET", "c", "3"}});
  const uint64_t end = j.Seal();
  EXPECT_EQ(first.groups.size(), 2u);
  EXPECT_EQ(second.groups.size(), 2u);
  EXPECT_EQ(second.groups[1].end(), end);
}

TEST(Journal, ResetOffsetContinuesFromALoadedPosition) {
  Journal j;
  j.ResetOffset(123456);
  RecordingConsumer c;
  j.AddConsumer(&c);
  j.AppendBatch(0, std::vector<Cmd>{{"SET", "a", "1"}});
  j.Seal();
  ASSERT_EQ(c.groups.size(), 1u);
  EXPECT_EQ(c.groups[0].start, 123456u);
}

TEST(JournalDecoder, UndoesSelectAndMultiFraming) {
  Journal j;
  RecordingConsumer c;
  j.AddConsumer(&c);
  AppendWorkload(&j);
  std::vector<std::pair<int, size_t>> batches;  // (db, commands)
  std::vector<std::string> names;
  JournalDecoder dec(16, [&](int db, std::span<const JournalDecoder::Argv> batch) {
    batches.emplace_back(db, batch.size());
    for (const auto& argv : batch) names.emplace_back(argv[0]);
    return Status::OK();
  });
  for (const auto& g : c.groups) {
    Status s = dec.FeedGroups(*g.bytes, "test");
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  const std::vector<std::pair<int, size_t>> want = {{0, 1}, {0, 3}, {3, 1}, {3, 1}, {0, 3}};
  EXPECT_EQ(batches, want);
  EXPECT_EQ(names.front(), "SET");
  EXPECT_EQ(std::count(names.begin(), names.end(), "INCR"), 2);
}

TEST(JournalDecoder, RefusesBrokenFraming) {
  JournalDecoder dec(16, [](int, std::span<const JournalDecoder::Argv>) { return Status::OK(); });
  const std::string_view exec[] = {"EXEC"};
  EXPECT_FALSE(dec.Feed(JournalDecoder::Argv(exec), "f:1").ok());
  const std::string_view sel[] = {"SELECT", "16"};
  EXPECT_FALSE(dec.Feed(JournalDecoder::Argv(sel), "f:2").ok());
  const std::string_view multi[] = {"MULTI"};
  EXPECT_TRUE(dec.Feed(JournalDecoder::Argv(multi), "f:3").ok());
  EXPECT_FALSE(dec.Feed(JournalDecoder::Argv(multi), "f:4").ok());
  EXPECT_FALSE(dec.EndGroup("f:5").ok());
  // Bytes whose trailer does not match are refused as a whole.
  Journal j;
  RecordingConsumer c;
  j.AddConsumer(&c);
  j.AppendBatch(0, std::vector<Cmd>{{"SET", "a", "1"}});
  j.Seal();
  std::string bytes = *c.groups[0].bytes;
  bytes[bytes.find("SET")] = 'X';
  JournalDecoder fresh(16, [](int, std::span<const JournalDecoder::Argv>) { return Status::OK(); });
  EXPECT_FALSE(fresh.FeedGroups(bytes, "f:6").ok());
}

}  // namespace
}  // namespace feedkv
