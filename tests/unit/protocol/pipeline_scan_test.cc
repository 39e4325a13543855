// Tests for ScanPipelinedKeys: which keys a look ahead over pipelined input finds.
#include "protocol/pipeline_scan.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "protocol/reply_writer.h"

namespace feedkv::protocol {
namespace {

std::string Mb(std::vector<std::string_view> args) {
  std::string out;
  AppendCommand(&out, args.data(), args.size());
  return out;
}

std::vector<std::string> Scan(std::string_view buf, size_t max = 16) {
  std::vector<std::string_view> keys(max);
  size_t n = ScanPipelinedKeys(buf, keys);
  return std::vector<std::string>(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(n));
}

using Keys = std::vector<std::string>;

TEST(PipelineScanTest, FindsTheFirstArgumentOfEachCompleteCommand) {
  std::string buf = Mb({"GET", "a"}) + Mb({"SET", "bb", "value"}) + Mb({"INCR", "key:1"});
  EXPECT_EQ(Scan(buf), (Keys{"a", "bb", "key:1"}));
}

TEST(PipelineScanTest, StopsAtAnIncompleteCommand) {
  std::string full = Mb({"GET", "a"});
  std::string next = Mb({"SET", "b", "a value"});
  for (size_t cut = 0; cut < next.size(); cut++) {
    EXPECT_EQ(Scan(full + next.substr(0, cut)), (Keys{"a"})) << "cut at " << cut;
  }
  EXPECT_EQ(Scan(full + next), (Keys{"a", "b"}));
}

TEST(PipelineScanTest, StopsAtInlineMalformedOrOneWordCommands) {
  const std::string get = Mb({"GET", "a"});
  EXPECT_EQ(Scan(get + "GET b\r\n" + get), (Keys{"a"}));
  EXPECT_EQ(Scan(get + "*2\r\n$x\r\n" + get), (Keys{"a"}));
  EXPECT_EQ(Scan(get + "*-1\r\n" + get), (Keys{"a"}));
  EXPECT_EQ(Scan(get + "*2\r\n$99999999999999999999\r\n"), (Keys{"a"}));
  EXPECT_EQ(Scan(get + Mb({"PING"}) + get), (Keys{"a"}));
  EXPECT_EQ(Scan(""), (Keys{}));
}

TEST(PipelineScanTest, StopsAtACommandWithTooManyArguments) {
  std::vector<std::string_view> args(kMaxScanArgs + 1, "x");
  args[0] = "MSET";
  const std::string get = Mb({"GET", "a"});
  EXPECT_EQ(Scan(get + Mb(args) + get), (Keys{"a"}));
  args.resize(kMaxScanArgs);
  EXPECT_EQ(Scan(get + Mb(args) + get), (Keys{"a", "x", "a"}));
}

TEST(PipelineScanTest, FindsAtMostAsManyKeysAsThereIsRoomFor) {
  std::string buf;
  for (int i = 0; i < 40; i++) buf += Mb({"GET", std::to_string(i)});
  Keys keys = Scan(buf, 16);
  ASSERT_EQ(keys.size(), 16u);
  EXPECT_EQ(keys.front(), "0");
  EXPECT_EQ(keys.back(), "15");
}

TEST(PipelineScanTest, SkipsValuesByLengthWhateverTheyHold) {
  std::string value = "*2\r\n$3\r\nGET\r\n$1\r\nz\r\n";  // RESP inside a value is data
  std::string big(1 << 20, 'v');
  EXPECT_EQ(Scan(Mb({"SET", "k1", value}) + Mb({"SET", "k2", big}) + Mb({"GET", "k3"})),
            (Keys{"k1", "k2", "k3"}));
}

}  // namespace
}  // namespace feedkv::protocol
