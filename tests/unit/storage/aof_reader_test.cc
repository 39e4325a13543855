// Unit tests for the AOF format, manifest and reader: one test per damage
// class, the torn tail cut at every byte, and multi-segment reads.
#include "storage/aof_reader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "storage/aof_format.h"
#include "storage/aof_manifest.h"

namespace feedkv::aof {
namespace {

std::string Cmd(std::vector<std::string> argv) {
  std::string out;
  AppendCommand(&out, std::span<const std::string>(argv));
  return out;
}

std::string GroupOf(const std::vector<std::string>& cmds) {
  std::string g;
  for (const auto& c : cmds) g += c;
  AppendTrailer(&g, g);
  return g;
}

std::vector<std::vector<std::string>> ScanAll(std::string_view data, ScanResult* r) {
  std::vector<std::vector<std::string>> out;
  Status s = ScanSegment(data, 0, [&](const Group& g) {
    for (const auto& rec : g.records) out.emplace_back(rec.argv.begin(), rec.argv.end());
    return Status::OK();
  }, r);
  EXPECT_TRUE(s.ok());
  return out;
}

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("aof_reader_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string path() const { return path_.string(); }
  void Write(const std::string& name, const std::string& data) {
    std::ofstream(path_ / name, std::ios::binary) << data;
  }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

TEST(AofFormat, SegmentNames) {
  EXPECT_EQ(SegmentName("appendonly.aof", 3), "appendonly.aof.000003");
  EXPECT_EQ(SegmentName("appendonly.aof", 1234567), "appendonly.aof.1234567");
  uint64_t seq;
  EXPECT_TRUE(ParseSegmentName("appendonly.aof", "appendonly.aof.000042", &seq));
  EXPECT_EQ(seq, 42u);
  EXPECT_FALSE(ParseSegmentName("appendonly.aof", "appendonly.aof.42", &seq));
  EXPECT_FALSE(ParseSegmentName("appendonly.aof", "appendonly.aof.manifest", &seq));
  EXPECT_FALSE(ParseSegmentName("appendonly.aof", "appendonly.aof.000000", &seq));
}

TEST(AofFormat, CommandEncodingIsResp) {
  EXPECT_EQ(Cmd({"SET", "k", "v"}), "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n");
  std::string g = GroupOf({Cmd({"PING"})});
  EXPECT_EQ(g.size(), Cmd({"PING"}).size() + kTrailerSize);
  EXPECT_EQ(g.substr(g.size() - kTrailerSize, 7), "#xxh64:");
}

TEST(AofReader, ReadsGroupsAndBinaryArguments) {
  std::string bin("a\0\r\nb", 5);
  std::string data = GroupOf({Cmd({"SELECT", "0"}), Cmd({"SET", "k", bin})}) + GroupOf({Cmd({"DEL", "k"})});
  ScanResult r;
  auto cmds = ScanAll(data, &r);
  EXPECT_EQ(r.end, ScanEnd::kClean);
  EXPECT_EQ(r.groups, 2u);
  ASSERT_EQ(cmds.size(), 3u);
  EXPECT_EQ(cmds[1][2], bin);
  EXPECT_EQ(r.valid_end, data.size());
}

TEST(AofReader, AnnotationsAreIgnored) {
  std::string body = "#TS:123\r\n" + Cmd({"SET", "a", "1"});
  std::string data = body;
  AppendTrailer(&data, body);
  ScanResult r;
  auto cmds = ScanAll(data, &r);
  EXPECT_EQ(r.end, ScanEnd::kClean);
  EXPECT_EQ(cmds.size(), 1u);
}

TEST(AofReader, TornTailCutAtEveryByteIsTorn) {
  std::string first = GroupOf({Cmd({"SET", "a", "1"})});
  std::string last = GroupOf({Cmd({"MULTI"}), Cmd({"SET", "b", "2"}), Cmd({"EXEC"})});
  for (size_t cut = 0; cut < last.size(); cut++) {
    std::string data = first + last.substr(0, cut);
    ScanResult r;
    auto cmds = ScanAll(data, &r);
    if (cut == 0) {
      EXPECT_EQ(r.end, ScanEnd::kClean);
    } else {
      EXPECT_EQ(r.end, ScanEnd::kTorn) << "cut " << cut << ": " << r.error;
    }
    EXPECT_EQ(r.valid_end, first.size()) << "cut " << cut;
    EXPECT_EQ(cmds.size(), 1u) << "the torn group is never applied (cut " << cut << ")";
  }
}

TEST(AofReader, FlippedPayloadByteIsChecksumMismatch) {
  std::string a = GroupOf({Cmd({"SET", "a", "hello"})});
  std::string b = GroupOf({Cmd({"SET", "b", "world"})});
  std::string data = a + b + GroupOf({Cmd({"DEL", "a"})});
  data[a.size() + b.find("world")] ^= 0x01;
  ScanResult r;
  auto cmds = ScanAll(data, &r);
  EXPECT_EQ(r.end, ScanEnd::kCorrupt);
  EXPECT_EQ(r.error_offset, a.size());
  EXPECT_NE(r.error.find("checksum mismatch"), std::string::npos);
  EXPECT_EQ(cmds.size(), 1u);
}

TEST(AofReader, FlippedFramingByteIsCorruptAtThatByte) {
  std::string a = GroupOf({Cmd({"SET", "a", "1"})});
  std::string b = GroupOf({Cmd({"SET", "b", "2"})});
  std::string data = a + b + a;
  size_t at = a.size() + 4;  // the '$' of the first argument of group b
  ASSERT_EQ(data[at], '$');
  data[at] = 'x';
  ScanResult r;
  ScanAll(data, &r);
  EXPECT_EQ(r.end, ScanEnd::kCorrupt);
  EXPECT_EQ(r.error_offset, at);
}

TEST(AofReader, LengthRunningPastLaterTrailerIsCorruptNotTorn) {
  std::string a = GroupOf({Cmd({"SET", "a", "1"})});
  std::string b = GroupOf({Cmd({"SET", "b", "2"})});
  std::string data = a + b + b;
  size_t at = a.size() + b.find("$1\r\nb");
  data[at + 1] = '9';  // $9: runs past the end of the file, but trailers follow
  ScanResult r;
  ScanAll(data, &r);
  EXPECT_EQ(r.end, ScanEnd::kCorrupt) << r.error;
}

TEST(AofReader, GarbageIsCorrupt) {
  std::string data = GroupOf({Cmd({"SET", "a", "1"})}) + "hello\r\n";
  ScanResult r;
  ScanAll(data, &r);
  EXPECT_EQ(r.end, ScanEnd::kCorrupt);
}

TEST(AofReader, StartsMidSegment) {
  std::string a = GroupOf({Cmd({"SET", "a", "1"})});
  std::string b = GroupOf({Cmd({"SET", "b", "2"})});
  std::string data = a + b;
  int n = 0;
  ScanResult r;
  ASSERT_TRUE(ScanSegment(data, a.size(), [&](const Group& g) {
    n += static_cast<int>(g.records.size());
    EXPECT_EQ(g.begin, a.size());
    return Status::OK();
  }, &r).ok());
  EXPECT_EQ(n, 1);
  ASSERT_TRUE(ScanSegment(data, data.size() + 1, [](const Group&) { return Status::OK(); }, &r).ok());
  EXPECT_EQ(r.end, ScanEnd::kCorrupt);
}

TEST(AofManifest, RoundTripAndChecksum) {
  Manifest m;
  m.lineage = 0xabcdef0123456789ull;
  m.segments = {{3, 100}, {4, 250}};
  std::string text = m.Serialize("appendonly.aof");
  Manifest back;
  ASSERT_TRUE(Manifest::Parse(text, "appendonly.aof", &back).ok());
  EXPECT_EQ(back, m);
  std::string bad = text;
  bad[bad.find("250")] = '3';
  EXPECT_TRUE(Manifest::Parse(bad, "appendonly.aof", &back).IsCorruption());
  EXPECT_TRUE(Manifest::Parse("", "appendonly.aof", &back).IsCorruption());
}

TEST(AofManifest, BasePendingMarkRoundTrips) {
  Manifest m;
  m.lineage = 7;
  m.base_pending = true;
  m.segments = {{1, 40}};
  const std::string text = m.Serialize("appendonly.aof");
  EXPECT_NE(text.find("\nbase pending\n"), std::string::npos);
  Manifest back;
  ASSERT_TRUE(Manifest::Parse(text, "appendonly.aof", &back).ok());
  EXPECT_TRUE(back.base_pending);
  EXPECT_EQ(back, m);
  m.base_pending = false;
  ASSERT_TRUE(Manifest::Parse(m.Serialize("appendonly.aof"), "appendonly.aof", &back).ok());
  EXPECT_FALSE(back.base_pending);
}

TEST(AofManifest, RejectsGapsInSeqs) {
  Manifest m;
  m.lineage = 1;
  m.segments = {{1, 0}, {3, 10}};
  Manifest back;
  EXPECT_TRUE(Manifest::Parse(m.Serialize("x"), "x", &back).IsCorruption());
}

TEST(AofLog, ReadsAcrossSegmentsAndCutsTornTail) {
  TempDir dir;
  std::string s1 = GroupOf({Cmd({"SET", "a", "1"})});
  std::string s2 = GroupOf({Cmd({"SET", "b", "2"})}) + GroupOf({Cmd({"SET", "c", "3"})}).substr(0, 10);
  dir.Write("appendonly.aof.000001", s1);
  dir.Write("appendonly.aof.000002", s2);
  Manifest m;
  m.lineage = 7;
  m.segments = {{1, 0}, {2, s1.size()}};
  ASSERT_TRUE(StoreManifest(Env::Default(), dir.path(), "appendonly.aof", m).ok());
  Manifest loaded;
  ASSERT_TRUE(LoadManifest(Env::Default(), dir.path(), "appendonly.aof", &loaded).ok());
  EXPECT_EQ(loaded, m);

  std::vector<std::string> keys;
  auto collect = [&](uint64_t, const Group& g) {
    for (const auto& r : g.records) keys.emplace_back(r.argv[1]);
    return Status::OK();
  };
  LogReport rep;
  ReadOptions strict;
  strict.truncate_torn_tail = false;
  EXPECT_TRUE(ReadLog(Env::Default(), dir.path(), "appendonly.aof", m, {1, 0}, strict, collect, &rep)
                  .IsCorruption());
  keys.clear();
  ASSERT_TRUE(ReadLog(Env::Default(), dir.path(), "appendonly.aof", m, {1, 0}, {}, collect, &rep).ok());
  EXPECT_EQ(keys, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(rep.truncated);
  EXPECT_EQ(rep.truncated_bytes, 10u);
  EXPECT_EQ(rep.end.segment, 2u);
  EXPECT_EQ(rep.end_offset, s1.size() + s2.size() - 10);
  uint64_t size;
  ASSERT_TRUE(Env::Default()->FileSize(dir.path() + "/appendonly.aof.000002", &size).ok());
  EXPECT_EQ(size, s2.size() - 10);  // cut on disk
}

TEST(AofLog, TornClosedSegmentIsCorruption) {
  TempDir dir;
  std::string s1 = GroupOf({Cmd({"SET", "a", "1"})});
  dir.Write("appendonly.aof.000001", s1.substr(0, s1.size() - 3));
  dir.Write("appendonly.aof.000002", GroupOf({Cmd({"SET", "b", "2"})}));
  Manifest m;
  m.lineage = 7;
  m.segments = {{1, 0}, {2, s1.size()}};
  LogReport rep;
  Status s = ReadLog(Env::Default(), dir.path(), "appendonly.aof", m, {1, 0}, {},
                     [](uint64_t, const Group&) { return Status::OK(); }, &rep);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("appendonly.aof.000001"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace feedkv::aof
