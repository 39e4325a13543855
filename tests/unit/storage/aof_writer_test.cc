// Unit tests for AofWriter as a consumer of a Journal: what it stores,
// positions equal to journal offsets, segment rolls and the manifest, fsync
// policies, and recovery from injected write/fsync failures with nothing lost.
#include "storage/aof_writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <time.h>
#include <vector>

#include "storage/aof_reader.h"

namespace feedkv::aof {
namespace {

using Cmds = std::vector<std::vector<std::string>>;

class AofWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() /
            ("aof_writer_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<AofWriter> Open(FsyncPolicy policy, uint64_t segment_size = 1 << 20,
                                  bool base_pending = false) {
    Manifest m;
    m.lineage = 42;
    m.base_pending = base_pending;
    m.segments = {{1, 0}};
    std::unique_ptr<WritableFile> f;
    EXPECT_TRUE(env_->NewWritableFile(dir_ + "/appendonly.aof.000001", true, &f).ok());
    EXPECT_TRUE(StoreManifest(env_, dir_, "appendonly.aof", m).ok());
    WriterOptions o;
    o.env = env_;
    o.dir = dir_;
    o.policy = policy;
    o.segment_size = segment_size;
    o.retry_interval = std::chrono::milliseconds(20);
    o.max_unsynced_bytes = max_unsynced_bytes_;
    WriterCallbacks cb;
    cb.on_durable = [this](uint64_t off) { durable_ = off; };
    cb.on_written = [this](uint64_t off) {
      written_ = off;
      written_calls_++;
    };
    cb.on_status = [this](const Status& s) {
      std::lock_guard<std::mutex> lk(mu_);
      statuses_.push_back(s.ok() ? "ok" : s.ToString());
    };
    auto w = std::make_unique<AofWriter>(o, m, 0, &journal_, cb);
    EXPECT_TRUE(w->Start().ok());
    journal_.ForgetSelectedDb();
    journal_.AddConsumer(w.get());
    return w;
  }

  void Append(int db, const Cmds& cmds) { journal_.AppendBatch(db, cmds); }
  uint64_t Seal() { return journal_.Seal(); }
  // Seals the journal and stops the writer, as the server does.
  Status Stop(AofWriter* w) {
    journal_.RemoveConsumer(w);
    return w->Stop();
  }

  // All commands in the log, as "db:cmd args".
  std::vector<std::string> ReadBack(LogReport* rep = nullptr) {
    Manifest m;
    EXPECT_TRUE(LoadManifest(env_, dir_, "appendonly.aof", &m).ok());
    std::vector<std::string> out;
    LogReport local;
    ReadOptions strict;
    strict.truncate_torn_tail = false;
    Status s = ReadLog(env_, dir_, "appendonly.aof", m, {m.segments.front().seq, 0}, strict,
                       [&](uint64_t, const Group& g) {
                         for (const auto& r : g.records) {
                           std::string line;
                           for (auto a : r.argv) line += (line.empty() ? "" : " ") + std::string(a);
                           out.push_back(line);
                         }
                         return Status::OK();
                       },
                       rep ? rep : &local);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return out;
  }

  static bool WaitFor(const std::function<bool()>& pred) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!pred()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
  }

  std::vector<std::string> Statuses() {
    std::lock_guard<std::mutex> lk(mu_);
    return statuses_;
  }

  std::string dir_;
  uint64_t max_unsynced_bytes_ = 8 << 20;
  Journal journal_;
  FaultInjectionEnv fault_{Env::Default()};
  Env* env_ = &fault_;
  std::atomic<uint64_t> durable_{0};
  std::atomic<uint64_t> written_{0};
  std::atomic<int> written_calls_{0};
  std::mutex mu_;
  std::vector<std::string> statuses_;
};

TEST_F(AofWriterTest, EncodesSelectAndTransactions) {
  auto w = Open(FsyncPolicy::kAlways);
  Append(0, Cmds{{"SET", "a", "1"}});
  Append(0, Cmds{{"SET", "b", "2"}});
  Append(3, Cmds{{"SET", "c", "3"}, {"DEL", "a"}});
  uint64_t end = Seal();
  EXPECT_EQ(end, journal_.sealed_offset());
  ASSERT_TRUE(Stop(w.get()).ok());
  EXPECT_EQ(ReadBack(), (std::vector<std::string>{"SELECT 0", "SET a 1", "SET b 2", "SELECT 3",
                                                   "MULTI", "SET c 3", "DEL a", "EXEC"}));
}

TEST_F(AofWriterTest, PositionsAreExactAndAlwaysReportsDurable) {
  auto w = Open(FsyncPolicy::kAlways);
  Append(0, Cmds{{"SET", "a", "1"}});
  const uint64_t covered = journal_.end_offset();
  uint64_t end = Seal();
  EXPECT_EQ(end, covered) << "end_offset() predicts where the open group ends";
  EXPECT_EQ(w->position().offset, end) << "one segment: its offset is the journal offset";
  EXPECT_EQ(w->sealed_offset(), end);
  ASSERT_TRUE(WaitFor([&] { return durable_.load() == end; }));
  EXPECT_EQ(w->stats().durable_offset, end);
  uint64_t size;
  ASSERT_TRUE(env_->FileSize(dir_ + "/appendonly.aof.000001", &size).ok());
  EXPECT_EQ(size, end);
  EXPECT_TRUE(Stop(w.get()).ok());
}

TEST_F(AofWriterTest, RollsSegmentsAndUpdatesManifest) {
  auto w = Open(FsyncPolicy::kEverySec, 1024);
  std::vector<std::string> want;
  for (int i = 0; i < 200; i++) {
    std::string k = "key" + std::to_string(i);
    Append(0, Cmds{{"SET", k, std::string(40, 'x')}});
    Seal();
  }
  EXPECT_GT(w->position().segment, 5u);
  ASSERT_TRUE(Stop(w.get()).ok());
  Manifest m;
  ASSERT_TRUE(LoadManifest(env_, dir_, "appendonly.aof", &m).ok());
  EXPECT_EQ(m.last().seq, w->position().segment);
  LogReport rep;
  auto cmds = ReadBack(&rep);
  EXPECT_EQ(rep.end_offset, journal_.sealed_offset());
  int sets = 0;
  for (const auto& c : cmds) sets += c.rfind("SET ", 0) == 0;
  EXPECT_EQ(sets, 200);
  // Every segment opens with SELECT, so it can be read on its own.
  for (const auto& s : m.segments) {
    std::string data;
    ASSERT_TRUE(env_->ReadFile(dir_ + "/" + SegmentName("appendonly.aof", s.seq), &data).ok());
    EXPECT_EQ(data.rfind("*2\r\n$6\r\nSELECT", 0), 0u) << s.seq;
  }
}

TEST_F(AofWriterTest, RequestRollStartsANewSegmentAtOnce) {
  auto w = Open(FsyncPolicy::kAlways);
  Append(0, Cmds{{"SET", "a", "1"}});
  Seal();
  w->RequestRoll();
  EXPECT_EQ(w->position().segment, 2u);
  EXPECT_EQ(w->position().offset, 0u);
  std::atomic<bool> done{false};
  w->RunWhenDurable([&](const Status& s) {
    EXPECT_TRUE(s.ok());
    done = true;
  });
  ASSERT_TRUE(WaitFor([&] { return done.load(); }));
  Manifest m = w->manifest();
  ASSERT_EQ(m.segments.size(), 2u);
  EXPECT_EQ(m.segments[1].start, w->sealed_offset());
  ASSERT_TRUE(Stop(w.get()).ok());
}

TEST_F(AofWriterTest, RetireDropsOldSegments) {
  auto w = Open(FsyncPolicy::kNo);
  for (int i = 0; i < 5; i++) {
    Append(0, Cmds{{"SET", "k", std::to_string(i)}});
    Seal();
    w->RequestRoll();
  }
  w->RetireBefore(4);
  std::atomic<bool> done{false};
  w->RunWhenDurable([&](const Status&) { done = true; });
  ASSERT_TRUE(WaitFor([&] { return done.load() && w->manifest().segments.front().seq == 4; }));
  ASSERT_TRUE(Stop(w.get()).ok());
  EXPECT_FALSE(env_->FileExists(dir_ + "/appendonly.aof.000001"));
  EXPECT_FALSE(env_->FileExists(dir_ + "/appendonly.aof.000003"));
  EXPECT_TRUE(env_->FileExists(dir_ + "/appendonly.aof.000004"));
  auto cmds = ReadBack();
  EXPECT_EQ(cmds, (std::vector<std::string>{"SELECT 0", "SET k 3", "SELECT 0", "SET k 4"}));
}

TEST_F(AofWriterTest, RetireClearsTheBasePendingMark) {
  // A log turned on at runtime is marked until its first snapshot is durable;
  // the retirement that follows that snapshot stores the manifest unmarked,
  // even when no segment goes.
  auto w = Open(FsyncPolicy::kNo, 1 << 20, /*base_pending=*/true);
  ASSERT_TRUE(w->manifest().base_pending);
  Append(0, Cmds{{"SET", "k", "v"}});
  Seal();
  w->RetireBefore(1);
  std::atomic<bool> done{false};
  w->RunWhenDurable([&](const Status&) { done = true; });
  ASSERT_TRUE(WaitFor([&] { return done.load() && !w->manifest().base_pending; }));
  ASSERT_TRUE(Stop(w.get()).ok());
  Manifest stored;
  ASSERT_TRUE(LoadManifest(env_, dir_, "appendonly.aof", &stored).ok());
  EXPECT_FALSE(stored.base_pending);
  EXPECT_EQ(stored.segments.size(), 1u);
}

TEST_F(AofWriterTest, FullDiskIsReportedThenRecoveredWithNothingLost) {
  auto w = Open(FsyncPolicy::kAlways);
  Append(0, Cmds{{"SET", "a", "1"}});
  uint64_t first = Seal();
  ASSERT_TRUE(WaitFor([&] { return durable_.load() == first; }));
  fault_.fail_appends = true;
  Append(0, Cmds{{"SET", "b", std::string(1000, 'b')}});
  uint64_t second = Seal();
  ASSERT_TRUE(WaitFor([&] { return !Statuses().empty(); }));
  EXPECT_NE(Statuses()[0].find("No space"), std::string::npos);
  EXPECT_EQ(durable_.load(), first) << "nothing past the failure is reported durable";
  EXPECT_TRUE(w->stats().failing);
  fault_.fail_appends = false;
  ASSERT_TRUE(WaitFor([&] { return durable_.load() == second; }));
  ASSERT_TRUE(WaitFor([&] { return Statuses().size() == 2; }));
  EXPECT_EQ(Statuses()[1], "ok");
  ASSERT_TRUE(Stop(w.get()).ok());
  // Every group opens with SELECT (a reader may start at any group).
  EXPECT_EQ(ReadBack(), (std::vector<std::string>{"SELECT 0", "SET a 1", "SELECT 0",
                                                  "SET b " + std::string(1000, 'b')}));
}

TEST_F(AofWriterTest, FailedFsyncRewritesUnsyncedData) {
  auto w = Open(FsyncPolicy::kAlways);
  fault_.fail_syncs = true;
  Append(0, Cmds{{"SET", "a", "1"}});
  Append(0, Cmds{{"SET", "b", "2"}});
  uint64_t end = Seal();
  ASSERT_TRUE(WaitFor([&] { return !Statuses().empty(); }));
  EXPECT_EQ(durable_.load(), 0u);
  int appends_before = fault_.appends.load();
  fault_.fail_syncs = false;
  ASSERT_TRUE(WaitFor([&] { return durable_.load() == end; }));
  EXPECT_GT(fault_.appends.load(), appends_before) << "the unsynced group was written again";
  ASSERT_TRUE(Stop(w.get()).ok());
  EXPECT_EQ(ReadBack(), (std::vector<std::string>{"SELECT 0", "SET a 1", "SET b 2"}));
}

TEST_F(AofWriterTest, EverySecSyncsWithinASecond) {
  auto w = Open(FsyncPolicy::kEverySec);
  Append(0, Cmds{{"SET", "a", "1"}});
  uint64_t end = Seal();
  ASSERT_TRUE(WaitFor([&] { return w->stats().written_offset == end; }));
  ASSERT_TRUE(WaitFor([&] { return durable_.load() == end; }));
  ASSERT_TRUE(Stop(w.get()).ok());
}

TEST_F(AofWriterTest, EverySecFsyncsEarlyOnceTheUnsyncedBytesPassTheCap) {
  max_unsynced_bytes_ = 4096;
  auto w = Open(FsyncPolicy::kEverySec);
  const std::string value(1000, 'v');
  uint64_t end = 0;
  for (int i = 0; i < 64; i++) {
    Append(0, Cmds{{"SET", "k" + std::to_string(i), value}});
    end = Seal();
  }
  // 64 KB past a 4 KB cap: many fsyncs, without waiting for the second.
  ASSERT_TRUE(WaitFor([&] { return w->stats().written_offset == end; }));
  EXPECT_GE(w->stats().fsyncs, 8u);
  EXPECT_GE(durable_.load(), end - 8192);
  ASSERT_TRUE(WaitFor([&] { return durable_.load() == end; }));
  ASSERT_TRUE(Stop(w.get()).ok());
  const auto log = ReadBack();
  EXPECT_EQ(std::count_if(log.begin(), log.end(), [](const std::string& l) { return l.starts_with("SET "); }),
            64);
}

TEST_F(AofWriterTest, IdleWriterDoesNotSpinAfterARoll) {
  auto w = Open(FsyncPolicy::kEverySec, 64);
  for (int i = 0; i < 5; i++) {
    Append(0, Cmds{{"SET", "k", std::string(100, 'x')}});
    Seal();  // each group rolls the segment: an empty new segment is open
  }
  ASSERT_TRUE(WaitFor([&] { return w->stats().durable_offset == journal_.sealed_offset(); }));
  timespec a, b;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
  double cpu_ms = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
  EXPECT_LT(cpu_ms, 50.0) << "the writer thread busy-waits";
  ASSERT_TRUE(Stop(w.get()).ok());
}

TEST_F(AofWriterTest, JobSeesFailureWhileDiskIsFull) {
  auto w = Open(FsyncPolicy::kEverySec);
  fault_.fail_appends = true;
  Append(0, Cmds{{"SET", "a", "1"}});
  Seal();
  std::atomic<int> result{-1};
  w->RunWhenDurable([&](const Status& s) { result = s.ok() ? 1 : 0; });
  ASSERT_TRUE(WaitFor([&] { return result.load() != -1; }));
  EXPECT_EQ(result.load(), 0);
  fault_.fail_appends = false;
  ASSERT_TRUE(Stop(w.get()).ok());
  EXPECT_EQ(ReadBack(), (std::vector<std::string>{"SELECT 0", "SET a 1"}));
}

TEST_F(AofWriterTest, WrittenOffsetIsReportedBeforeAnyFsyncUnderNo) {
  // Replies under everysec and no wait for this report: it must come after the
  // write(2), without waiting for an fsync.
  auto w = Open(FsyncPolicy::kNo);
  Append(0, Cmds{{"SET", "a", "1"}});
  uint64_t end = Seal();
  ASSERT_TRUE(WaitFor([&] { return written_.load() == end; }));
  EXPECT_EQ(durable_.load(), 0u) << "no fsync under 'no'";
  EXPECT_EQ(w->stats().written_offset, end);
  ASSERT_TRUE(Stop(w.get()).ok());
}

TEST_F(AofWriterTest, AlwaysReportsOnlyTheDurableOffset) {
  auto w = Open(FsyncPolicy::kAlways);
  Append(0, Cmds{{"SET", "a", "1"}});
  uint64_t end = Seal();
  ASSERT_TRUE(WaitFor([&] { return durable_.load() == end; }));
  EXPECT_EQ(written_calls_.load(), 0) << "under always only durable data is acknowledged";
  ASSERT_TRUE(Stop(w.get()).ok());
}

TEST_F(AofWriterTest, FailingDiskUnderEverySecRetriesAtTheIntervalInsteadOfSpinning) {
  auto w = Open(FsyncPolicy::kEverySec);
  Append(0, Cmds{{"SET", "a", "1"}});
  uint64_t first = Seal();
  ASSERT_TRUE(WaitFor([&] { return written_.load() == first; }));  // written, not yet fsynced
  fault_.fail_appends = true;
  Append(0, Cmds{{"SET", "b", "2"}});
  uint64_t second = Seal();
  ASSERT_TRUE(WaitFor([&] { return !Statuses().empty(); }));
  // Past the everysec deadline of the unsynced first group: the writer used to wait
  // for that deadline, already past, and retry the failing write without pause.
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  int before = fault_.appends.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  int attempts = fault_.appends.load() - before;
  EXPECT_LE(attempts, 500 / 20 + 5) << "retry interval is 20 ms: at most ~25 attempts in 500 ms";
  EXPECT_EQ(written_.load(), first) << "the failed group is not reported written";
  fault_.fail_appends = false;
  ASSERT_TRUE(WaitFor([&] { return written_.load() == second; }));
  ASSERT_TRUE(Stop(w.get()).ok());
  EXPECT_EQ(ReadBack(), (std::vector<std::string>{"SELECT 0", "SET a 1", "SELECT 0", "SET b 2"}));
}

}  // namespace
}  // namespace feedkv::aof
