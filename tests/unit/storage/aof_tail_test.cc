#include "storage/aof_tail.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <thread>

#include "storage/aof_format.h"

namespace feedkv::aof {
namespace {

class LogCursorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("aof_tail_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void WriteSegment(uint64_t seq, const std::string& bytes) {
    std::ofstream(dir_ / SegmentName("appendonly.aof", seq), std::ios::binary) << bytes;
  }
  std::filesystem::path dir_;
};

TEST_F(LogCursorTest, ReadsByGlobalOffsetAndNeverCrossesASegmentEnd) {
  // Segment 1 holds offsets [100, 110), segment 2 [110, ...).
  WriteSegment(1, "0123456789");
  WriteSegment(2, "abcdef");
  Manifest m;
  m.segments = {{1, 100}, {2, 110}};
  LogCursor c(dir_.string(), "appendonly.aof");
  std::string out;
  ASSERT_TRUE(c.Read(m, 104, 200, 1 << 20, &out).ok());
  EXPECT_EQ(out, "456789");
  out.clear();
  ASSERT_TRUE(c.Read(m, 110, 114, 1 << 20, &out).ok());
  EXPECT_EQ(out, "abcd") << "stops at the written limit";
  out.clear();
  ASSERT_TRUE(c.Read(m, 111, 200, 2, &out).ok());
  EXPECT_EQ(out, "bc") << "stops at the window";
  out.clear();
  EXPECT_TRUE(c.Read(m, 99, 200, 10, &out).IsNotFound()) << "before the first retained byte";
}

TEST_F(LogCursorTest, ARetiredSegmentFileIsNotFound) {
  Manifest m;
  m.segments = {{7, 0}};
  LogCursor c(dir_.string(), "appendonly.aof");
  std::string out;
  EXPECT_TRUE(c.Read(m, 0, 10, 10, &out).IsNotFound());
}

TEST(LogTail, TheLowestPinWinsAndUnpinningReleasesIt) {
  LogTail t;
  EXPECT_EQ(t.MinPin(), std::numeric_limits<uint64_t>::max());
  t.Pin(1, 500);
  t.Pin(2, 300);
  EXPECT_EQ(t.MinPin(), 300u);
  t.Pin(2, 900);
  EXPECT_EQ(t.MinPin(), 500u);
  t.Unpin(1);
  EXPECT_EQ(t.MinPin(), 900u);
}

TEST(LogTail, AWaiterWakesWhenTheLogGrowsPastItsOffset) {
  LogTail t;
  Manifest m;
  m.segments = {{1, 0}};
  t.Publish(m, 10);
  EXPECT_EQ(t.WaitBeyond(5, std::chrono::milliseconds(0)), 10u);
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    t.PublishWritten(25);
  });
  EXPECT_EQ(t.WaitBeyond(10, std::chrono::seconds(10)), 25u);
  writer.join();
}

}  // namespace
}  // namespace feedkv::aof
