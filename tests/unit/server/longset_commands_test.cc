// In-process tests of the LS* commands: integer-only members, WRONGTYPE on hashtable
// sets, LSSET/LSDUMP bit-for-bit round trips and rejection of bad images (old value
// untouched), cache-mode FULL, LSSCAN stability across growth, LSINTER/LSINTERCARD/
// LSDIFF and LSINFO.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "command_test_util.h"
#include "storage/database.h"
#include "storage/long_set.h"
#include "storage/long_set_image.h"
#include "storage/set_value.h"

namespace feedkv::server {
namespace {

constexpr char kWrongType[] = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
constexpr char kNotInt[] = "-ERR value is not an integer or out of range\r\n";

// Reads one RESP value; arrays/sets/maps flatten into `out` as their elements' text.
size_t ParseFlat(const std::string& r, size_t pos, std::vector<std::string>* out) {
  const size_t eol = r.find("\r\n", pos);
  const char t = r[pos];
  const std::string head = r.substr(pos + 1, eol - pos - 1);
  pos = eol + 2;
  if (t == '*' || t == '~' || t == '%') {
    const long n = std::stol(head) * (t == '%' ? 2 : 1);
    for (long i = 0; i < n; ++i) pos = ParseFlat(r, pos, out);
    return pos;
  }
  if (t == '$') {
    const size_t n = std::stoul(head);
    out->push_back(r.substr(pos, n));
    return pos + n + 2;
  }
  out->push_back(head);
  return pos;
}

std::multiset<std::string> AsSet(const std::string& reply) {
  std::vector<std::string> items;
  ParseFlat(reply, 0, &items);
  return {items.begin(), items.end()};
}

std::multiset<std::string> S(std::initializer_list<std::string> items) { return {items}; }

std::string Image(const std::vector<int64_t>& ids, double max_fill = 0.9) {
  LongSetOptions o;
  o.max_fill = max_fill;
  std::unique_ptr<LongSet> ls;
  EXPECT_TRUE(LongSet::Build(ids, o, 11, 22, &ls).ok());
  std::string image;
  ls->SerializeImage(&image);
  return image;
}

class LongSetCommandsTest : public CommandTest {
 protected:
  std::string Encoding(const std::string& key) {
    const Entry* e = server_->db(0).Find(key);
    return e == nullptr ? "(none)" : std::string(Database::GetObject(e)->encoding());
  }
};

TEST_F(LongSetCommandsTest, MemberCommands) {
  EXPECT_EQ(Run({"LSADD", "k", "5", "-7", "5", "0", "-9223372036854775808"}), Int(4));
  EXPECT_EQ(Encoding("k"), "longset");
  EXPECT_EQ(Run({"LSADD", "k", "5", "6"}), Int(1));
  EXPECT_EQ(Run({"LSCARD", "k"}), Int(5));
  EXPECT_EQ(Run({"LSISMEMBER", "k", "-7"}), Int(1));
  EXPECT_EQ(Run({"LSISMEMBER", "k", "8"}), Int(0));
  EXPECT_EQ(Run({"LSISMEMBER", "nokey", "8"}), Int(0));
  EXPECT_EQ(Run({"LSMISMEMBER", "k", "0", "1", "6"}), "*3\r\n:1\r\n:0\r\n:1\r\n");
  // Members come back as RESP integers.
  EXPECT_EQ(AsSet(Run({"LSMEMBERS", "k"})), S({"5", "-7", "0", "-9223372036854775808", "6"}));
  EXPECT_NE(Run({"LSMEMBERS", "k"}).find(":-7\r\n"), std::string::npos);
  EXPECT_EQ(Run({"LSREM", "k", "5", "99", "0"}), Int(2));
  EXPECT_EQ(Run({"LSCARD", "k"}), Int(3));
  EXPECT_EQ(Run({"LSREM", "k", "-7", "6", "-9223372036854775808"}), Int(3));
  EXPECT_EQ(Encoding("k"), "(none)");  // emptied sets are deleted
  EXPECT_EQ(Run({"LSCARD", "k"}), Int(0));
  EXPECT_EQ(Run({"LSMEMBERS", "k"}), "*0\r\n");
  EXPECT_EQ(Run({"LSREM", "k", "1"}), Int(0));
  // The same keys answer the S* commands.
  Run({"LSADD", "k", "42"});
  EXPECT_EQ(Run({"SISMEMBER", "k", "42"}), Int(1));
}

TEST_F(LongSetCommandsTest, NonIntegersAreRejectedBeforeAnyChange) {
  Run({"LSADD", "k", "1"});
  for (const char* bad : {"abc", "1.5", "007", "+3", "-0", "9223372036854775808", ""}) {
    EXPECT_EQ(Run({"LSADD", "k", "2", bad}), kNotInt) << bad;
    EXPECT_EQ(Run({"LSREM", "k", "1", bad}), kNotInt) << bad;
    EXPECT_EQ(Run({"LSISMEMBER", "k", bad}), kNotInt) << bad;
    EXPECT_EQ(Run({"LSMISMEMBER", "k", "1", bad}), kNotInt) << bad;
  }
  EXPECT_EQ(AsSet(Run({"LSMEMBERS", "k"})), S({"1"}));
}

TEST_F(LongSetCommandsTest, WrongTypeOnHashtableSetsAndOtherTypes) {
  Run({"SADD", "h", "1", "x"});
  server_->db(0).SetString("str", "v", kNoExpire, false);
  Run({"LSADD", "l", "1"});
  for (const char* key : {"h", "str"}) {
    for (const std::vector<std::string>& cmd : std::vector<std::vector<std::string>>{
             {"LSADD", key, "1"}, {"LSREM", key, "1"}, {"LSISMEMBER", key, "1"},
             {"LSMISMEMBER", key, "1"}, {"LSCARD", key}, {"LSMEMBERS", key},
             {"LSSCAN", key, "0"}, {"LSDUMP", key}, {"LSINFO", key}, {"LSINTER", "l", key},
             {"LSINTERCARD", "2", "l", key}, {"LSDIFF", "l", key}}) {
      EXPECT_EQ(Run(cmd), kWrongType) << cmd[0] << " " << key;
    }
  }
}

TEST_F(LongSetCommandsTest, LssetLsdumpRoundTripBitForBit) {
  const std::string image = Image({10, 20, 30, 0, 1000000000007});
  EXPECT_EQ(Run({"LSSET", "k", image}), "+OK\r\n");
  EXPECT_EQ(Encoding("k"), "longset");
  EXPECT_EQ(Run({"LSDUMP", "k"}), Bulk(image));
  EXPECT_EQ(AsSet(Run({"SMEMBERS", "k"})), S({"10", "20", "30", "0", "1000000000007"}));
  // A dump of a set built by LSADD loads back into an identical set.
  Run({"LSADD", "built", "3", "1", "4", "1", "5", "9", "2", "6"});
  std::vector<std::string> dump;
  ParseFlat(Run({"LSDUMP", "built"}), 0, &dump);
  EXPECT_EQ(Run({"LSSET", "copy", dump[0]}), "+OK\r\n");
  EXPECT_EQ(Run({"LSDUMP", "copy"}), Bulk(dump[0]));
  EXPECT_EQ(Run({"LSDUMP", "nokey"}), "$-1\r\n");
  // LSSET replaces whatever the key held.
  Run({"SADD", "h", "x"});
  EXPECT_EQ(Run({"LSSET", "h", image}), "+OK\r\n");
  EXPECT_EQ(Encoding("h"), "longset");
  // An empty image deletes the key.
  EXPECT_EQ(Run({"LSSET", "h", Image({})}), "+OK\r\n");
  EXPECT_EQ(Encoding("h"), "(none)");
}

TEST_F(LongSetCommandsTest, LssetRejectsBadImagesLeavingOldValue) {
  Run({"LSADD", "k", "1", "2"});
  const std::string good = Image({7, 8, 9});
  std::vector<std::pair<std::string, std::string>> cases;
  cases.emplace_back("short", good.substr(0, 20));
  std::string magic = good;
  magic[0] = 'X';
  cases.emplace_back("magic", magic);
  cases.emplace_back("truncated", good.substr(0, good.size() - 8));
  std::string count = good;
  count[longset_image::kCountOffset] = 9;
  cases.emplace_back("count", count);
  std::string dup = good;  // put a copy of a member in an empty slot
  {
    const size_t cap = (good.size() - longset_image::kHeaderSize) / 8;
    int64_t member = 0;
    size_t empty_slot = cap;
    for (size_t i = 0; i < cap; ++i) {
      int64_t v;
      std::memcpy(&v, good.data() + longset_image::kHeaderSize + 8 * i, 8);
      if (v != 0) member = v;
      if (v == 0 && empty_slot == cap) empty_slot = i;
    }
    std::memcpy(dup.data() + longset_image::kHeaderSize + 8 * empty_slot, &member, 8);
    dup[longset_image::kCountOffset] = 4;
  }
  cases.emplace_back("duplicate", dup);
  for (const auto& [name, image] : cases) {
    const std::string reply = Run({"LSSET", "k", image});
    EXPECT_EQ(reply.rfind("-ERR invalid longset image: ", 0), 0u) << name << ": " << reply;
    EXPECT_EQ(AsSet(Run({"LSMEMBERS", "k"})), S({"1", "2"})) << name;
  }
  // Well-formed, but fuller than this server's longset-max-fill allows.
  ASSERT_TRUE(server_->config().Set("longset-max-fill", "0.5", true).ok());
  const std::string reply = Run({"LSSET", "k", Image({1, 2, 3, 4, 5, 6}, 0.9)});
  EXPECT_NE(reply.find("fill too high"), std::string::npos) << reply;
  EXPECT_EQ(AsSet(Run({"LSMEMBERS", "k"})), S({"1", "2"}));
}

TEST_F(LongSetCommandsTest, CacheModeFullThenClientRebuildsBigger) {
  ASSERT_TRUE(server_->config().Set("longset-auto-grow", "no", true).ok());
  EXPECT_EQ(Run({"LSSET", "k", Image({1, 2, 3, 4, 5, 6})}), "+OK\r\n");  // capacity 7
  const std::string before = Run({"LSDUMP", "k"});
  EXPECT_EQ(Run({"LSADD", "k", "7"}), "-FULL longset is full\r\n");
  EXPECT_EQ(Run({"SADD", "k", "7"}), "-FULL longset is full\r\n");
  EXPECT_EQ(Run({"LSDUMP", "k"}), before);
  EXPECT_EQ(Run({"LSADD", "k", "6", "0"}), Int(1));  // 0 needs no slot
  // The client rebuilds at a larger capacity and retries.
  std::vector<int64_t> ids = {0, 1, 2, 3, 4, 5, 6};
  LongSetOptions roomy;
  roomy.max_fill = 0.5;
  std::unique_ptr<LongSet> ls;
  ASSERT_TRUE(LongSet::Build(ids, roomy, 1, 2, &ls).ok());
  std::string image;
  ls->SerializeImage(&image);
  EXPECT_EQ(Run({"LSSET", "k", image}), "+OK\r\n");
  EXPECT_EQ(Run({"LSADD", "k", "7"}), Int(1));
  ASSERT_TRUE(server_->config().Set("longset-auto-grow", "yes", true).ok());
  std::vector<std::string> cmd = {"LSADD", "k"};
  for (int i = 100; i < 200; ++i) cmd.push_back(std::to_string(i));
  EXPECT_EQ(Run(cmd), Int(100));  // auto-grow again
}

TEST_F(LongSetCommandsTest, LsscanStableAcrossGrowth) {
  std::vector<std::string> cmd = {"LSADD", "k"};
  for (int i = 1; i <= 400; ++i) cmd.push_back(std::to_string(i * 1000003));
  Run(cmd);
  std::multiset<std::string> seen;
  std::string cursor = "0";
  int calls = 0, extra = 0;
  do {
    std::vector<std::string> items;
    ParseFlat(Run({"LSSCAN", "k", cursor, "COUNT", "10"}), 0, &items);
    cursor = items[0];
    seen.insert(items.begin() + 1, items.end());
    for (int j = 0; j < 100; ++j) Run({"LSADD", "k", std::to_string(-1 - extra++)});
    ++calls;
  } while (cursor != "0" && calls < 10000);
  EXPECT_EQ(cursor, "0");
  for (int i = 1; i <= 400; ++i) EXPECT_EQ(seen.count(std::to_string(i * 1000003)), 1u) << i;
  EXPECT_EQ(Run({"LSSCAN", "k", "x"}), "-ERR invalid cursor\r\n");
  EXPECT_EQ(Run({"LSSCAN", "k", "0", "COUNT", "0"}), "-ERR syntax error\r\n");
  EXPECT_EQ(Run({"LSSCAN", "k", "0", "MATCH", "1*"}), "-ERR syntax error\r\n");
  EXPECT_EQ(Run({"LSSCAN", "nokey", "0"}), "*2\r\n$1\r\n0\r\n*0\r\n");
}

TEST_F(LongSetCommandsTest, InterInterCardDiff) {
  Run({"LSADD", "a", "1", "2", "3", "4"});
  Run({"LSADD", "b", "2", "3", "4", "5"});
  Run({"LSADD", "c", "3", "4", "6"});
  EXPECT_EQ(AsSet(Run({"LSINTER", "a", "b", "c"})), S({"3", "4"}));
  EXPECT_EQ(AsSet(Run({"LSINTER", "a", "nokey"})), S({}));
  EXPECT_EQ(Run({"LSINTERCARD", "2", "a", "b"}), Int(3));
  EXPECT_EQ(Run({"LSINTERCARD", "2", "a", "b", "LIMIT", "1"}), Int(1));
  EXPECT_EQ(Run({"LSINTERCARD", "2", "a", "nokey"}), Int(0));
  EXPECT_EQ(Run({"LSINTERCARD", "0", "a"}), "-ERR numkeys should be greater than 0\r\n");
  EXPECT_EQ(Run({"LSINTERCARD", "5", "a"}),
            "-ERR Number of keys can't be greater than number of args\r\n");
  EXPECT_EQ(AsSet(Run({"LSDIFF", "a", "b", "nokey"})), S({"1"}));
  EXPECT_EQ(AsSet(Run({"LSDIFF", "nokey", "a"})), S({}));
  Run({"HELLO", "3"});
  EXPECT_EQ(Run({"LSINTER", "a", "b"}).substr(0, 4), "~3\r\n");
}

TEST_F(LongSetCommandsTest, LsinfoReportsTableStatistics) {
  std::vector<std::string> cmd = {"LSADD", "k"};
  for (int i = 0; i < 1000; ++i) cmd.push_back(std::to_string(1000000000 + i * 7));
  Run(cmd);
  Run({"LSREM", "k", "1000000000"});
  std::vector<std::string> items;
  ParseFlat(Run({"LSINFO", "k"}), 0, &items);
  ASSERT_EQ(items.size(), 18u);
  std::map<std::string, std::string> info;
  for (size_t i = 0; i + 1 < items.size(); i += 2) info[items[i]] = items[i + 1];
  EXPECT_EQ(info["count"], "999");
  EXPECT_EQ(info["tombstones"], "1");
  const double capacity = std::stod(info["capacity"]);
  EXPECT_NEAR(std::stod(info["fill"]), 1000 / capacity, 1e-9);
  EXPECT_GE(std::stod(info["mean-probe"]), 1.0);
  EXPECT_GE(std::stoi(info["max-probe"]), 1);
  EXPECT_EQ(info["image-bytes"], std::to_string(40 + 8 * static_cast<int64_t>(capacity)));
  EXPECT_EQ(Run({"LSINFO", "nokey"}), "$-1\r\n");
}

}  // namespace
}  // namespace feedkv::server
