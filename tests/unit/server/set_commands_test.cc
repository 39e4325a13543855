// In-process tests of the Redis set commands over both encodings: replies and error
// texts as Redis 7's, encoding conversion, empty-set deletion, propagation (SPOP as
// SREM, nothing for no-ops), cache-mode FULL without side effects, memory accounting.
// Set replies are compared as sets: Redis leaves their order unspecified.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "command_test_util.h"
#include "storage/database.h"
#include "storage/journal.h"
#include "storage/set_value.h"

namespace feedkv::server {
namespace {

// Reads one RESP value; arrays/sets flatten into `out` as their elements' text.
size_t ParseFlat(const std::string& r, size_t pos, std::vector<std::string>* out) {
  const size_t eol = r.find("\r\n", pos);
  const char t = r[pos];
  const std::string head = r.substr(pos + 1, eol - pos - 1);
  pos = eol + 2;
  if (t == '*' || t == '~') {
    const long n = std::stol(head);
    for (long i = 0; i < n; ++i) pos = ParseFlat(r, pos, out);
    return pos;
  }
  if (t == '$') {
    const size_t n = std::stoul(head);
    out->push_back(r.substr(pos, n));
    return pos + n + 2;
  }
  out->push_back(head);  // integers, simple strings, errors
  return pos;
}

std::multiset<std::string> AsSet(const std::string& reply) {
  std::vector<std::string> items;
  EXPECT_TRUE(!reply.empty() && (reply[0] == '*' || reply[0] == '~')) << reply;
  if (reply.empty()) return {};
  ParseFlat(reply, 0, &items);
  return {items.begin(), items.end()};
}

std::multiset<std::string> S(std::initializer_list<std::string> items) { return {items}; }

// Records every logged command, decoded from the journal's bytes with the
// journal's own decoder (SELECT / MULTI / EXEC framing removed).
class RecordingSink : public JournalConsumer {
 public:
  void OnGroup(const JournalGroup& g) override {
    JournalDecoder dec(16, [this](int, std::span<const JournalDecoder::Argv> batch) {
      for (const auto& argv : batch) records.emplace_back(argv.begin(), argv.end());
      return Status::OK();
    });
    Status s = dec.FeedGroups(*g.bytes, "test");
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  std::vector<std::vector<std::string>> records;
};

constexpr char kWrongType[] = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";

class SetCommandsTest : public CommandTest {
 protected:
  SetCommandsTest() { server_->journal().AddConsumer(&sink_); }
  ~SetCommandsTest() override { server_->journal().RemoveConsumer(&sink_); }
  void ResetWith(Config c) {
    server_->journal().RemoveConsumer(&sink_);
    Reset(std::move(c));
    server_->journal().AddConsumer(&sink_);
  }
  // What was logged so far (the journal is sealed first, as a loop turn ends).
  std::vector<std::vector<std::string>>& Logged() {
    server_->journal().Seal();
    return sink_.records;
  }
  std::string Encoding(const std::string& key) {
    const Entry* e = server_->db(0).Find(key);
    if (e == nullptr) return "(none)";
    return std::string(Database::GetObject(e)->encoding());
  }
  bool Exists(const std::string& key) { return server_->db(0).Find(key) != nullptr; }
  void MakeString(const std::string& key) { server_->db(0).SetString(key, "v", kNoExpire, false); }

  RecordingSink sink_;
};

TEST_F(SetCommandsTest, SaddCountsNewMembersAndStaysLongSet) {
  EXPECT_EQ(Run({"SADD", "k", "1", "2", "2", "-3"}), Int(3));
  EXPECT_EQ(Run({"SADD", "k", "2", "4"}), Int(1));
  EXPECT_EQ(Run({"SCARD", "k"}), Int(4));
  EXPECT_EQ(Encoding("k"), "longset");
  EXPECT_EQ(AsSet(Run({"SMEMBERS", "k"})), S({"1", "2", "-3", "4"}));
  EXPECT_EQ(Run({"SISMEMBER", "k", "2"}), Int(1));
  EXPECT_EQ(Run({"SISMEMBER", "k", "02"}), Int(0));
  EXPECT_EQ(Run({"SISMEMBER", "k", "x"}), Int(0));
  EXPECT_EQ(Run({"SISMEMBER", "nokey", "1"}), Int(0));
  EXPECT_EQ(Run({"SMISMEMBER", "k", "1", "9", "-3"}), "*3\r\n:1\r\n:0\r\n:1\r\n");
  EXPECT_EQ(Run({"SMISMEMBER", "nokey", "1"}), "*1\r\n:0\r\n");
  EXPECT_EQ(Run({"SCARD", "nokey"}), Int(0));
  EXPECT_EQ(Run({"SMEMBERS", "nokey"}), "*0\r\n");
}

TEST_F(SetCommandsTest, FirstStringMemberConvertsToHashtable) {
  Run({"SADD", "k", "1", "2"});
  EXPECT_EQ(Run({"SADD", "k", "3", "007", "alice"}), Int(3));
  EXPECT_EQ(Encoding("k"), "hashtable");
  EXPECT_EQ(AsSet(Run({"SMEMBERS", "k"})), S({"1", "2", "3", "007", "alice"}));
  EXPECT_EQ(Run({"SISMEMBER", "k", "7"}), Int(0));
  EXPECT_EQ(Run({"SREM", "k", "007", "alice"}), Int(2));
  EXPECT_EQ(Encoding("k"), "hashtable");  // no conversion back, as Redis
  // A brand-new set with a string member starts as a hashtable.
  Run({"SADD", "h", "x"});
  EXPECT_EQ(Encoding("h"), "hashtable");
}

TEST_F(SetCommandsTest, EmptySetsAreDeleted) {
  Run({"SADD", "k", "1", "a"});
  EXPECT_EQ(Run({"SREM", "k", "1", "a", "zz"}), Int(2));
  EXPECT_FALSE(Exists("k"));
  EXPECT_EQ(Run({"SREM", "k", "1"}), Int(0));
  Run({"SADD", "k", "5"});
  Run({"SPOP", "k"});
  EXPECT_FALSE(Exists("k"));
}

TEST_F(SetCommandsTest, WrongTypeEverywhere) {
  MakeString("str");
  Run({"SADD", "s", "1"});
  Logged().clear();
  for (const std::vector<std::string>& cmd : std::vector<std::vector<std::string>>{
           {"SADD", "str", "1"}, {"SREM", "str", "1"}, {"SISMEMBER", "str", "1"},
           {"SMISMEMBER", "str", "1"}, {"SCARD", "str"}, {"SMEMBERS", "str"},
           {"SRANDMEMBER", "str"}, {"SPOP", "str"}, {"SINTER", "s", "str"},
           {"SINTER", "nokey", "str"}, {"SUNION", "s", "str"}, {"SDIFF", "nokey", "str"},
           {"SINTERCARD", "2", "s", "str"}, {"SINTERSTORE", "d", "s", "str"},
           {"SSCAN", "str", "0"}, {"SMOVE", "str", "s", "1"}, {"SMOVE", "s", "str", "1"}}) {
    EXPECT_EQ(Run(cmd), kWrongType) << cmd[0];
  }
  EXPECT_EQ(Run({"SMOVE", "nokey", "str", "1"}), Int(0));  // Redis: missing source first
  EXPECT_TRUE(Logged().empty());
}

TEST_F(SetCommandsTest, SrandmemberFollowsRedis) {
  Run({"SADD", "k", "1", "2", "3", "4", "5"});
  Logged().clear();
  EXPECT_EQ(Run({"SRANDMEMBER", "nokey"}), "$-1\r\n");
  EXPECT_EQ(Run({"SRANDMEMBER", "nokey", "3"}), "*0\r\n");
  EXPECT_EQ(Run({"SRANDMEMBER", "k", "0"}), "*0\r\n");
  EXPECT_EQ(Run({"SRANDMEMBER", "k", "1", "2"}), "-ERR syntax error\r\n");
  EXPECT_EQ(Run({"SRANDMEMBER", "k", "x"}), "-ERR value is not an integer or out of range\r\n");
  EXPECT_EQ(Run({"SRANDMEMBER", "k", "-9223372036854775808"}),
            "-ERR value is out of range, value must between -9223372036854775807 and "
            "9223372036854775807\r\n");
  const auto all = S({"1", "2", "3", "4", "5"});
  EXPECT_EQ(AsSet(Run({"SRANDMEMBER", "k", "10"})), all);
  for (int count : {1, 2, 4}) {
    auto got = AsSet(Run({"SRANDMEMBER", "k", std::to_string(count)}));
    EXPECT_EQ(got.size(), static_cast<size_t>(count));
    EXPECT_EQ(std::set<std::string>(got.begin(), got.end()).size(), got.size());  // distinct
    for (const auto& m : got) EXPECT_EQ(all.count(m), 1u);
  }
  auto rep = AsSet(Run({"SRANDMEMBER", "k", "-20"}));
  EXPECT_EQ(rep.size(), 20u);
  for (const auto& m : rep) EXPECT_EQ(all.count(m), 1u);
  EXPECT_EQ(all.count(Run({"SRANDMEMBER", "k"}).substr(4, 1)), 1u);
  EXPECT_EQ(Run({"SCARD", "k"}), Int(5));
  EXPECT_TRUE(Logged().empty());  // read-only
}

TEST_F(SetCommandsTest, SpopPropagatesAsSremOfWhatItPopped) {
  for (bool hashtable : {false, true}) {
    Logged().clear();
    server_->db(0).Delete("k");
    Run({"SADD", "k", "1", "2", "3", "4", "5", "6"});
    if (hashtable) Run({"SADD", "k", "x"});
    Logged().clear();
    const std::string one = Run({"SPOP", "k"});
    std::vector<std::string> popped;
    ParseFlat(one, 0, &popped);
    ASSERT_EQ(popped.size(), 1u);
    auto two = AsSet(Run({"SPOP", "k", "2"}));
    ASSERT_EQ(two.size(), 2u);
    popped.insert(popped.end(), two.begin(), two.end());
    ASSERT_EQ(Logged().size(), 2u);
    std::multiset<std::string> logged;
    for (const auto& rec : Logged()) {
      EXPECT_EQ(rec[0], "SREM");
      EXPECT_EQ(rec[1], "k");
      logged.insert(rec.begin() + 2, rec.end());
    }
    EXPECT_EQ(logged, std::multiset<std::string>(popped.begin(), popped.end()));
    for (const auto& m : popped) EXPECT_EQ(Run({"SISMEMBER", "k", m}), Int(0));
    // Popping more than is left empties and deletes the key.
    const auto rest = AsSet(Run({"SPOP", "k", "100"}));
    EXPECT_EQ(rest.size(), hashtable ? 4u : 3u);
    EXPECT_FALSE(Exists("k"));
  }
  Logged().clear();
  EXPECT_EQ(Run({"SPOP", "nokey"}), "$-1\r\n");
  EXPECT_EQ(Run({"SPOP", "nokey", "3"}), "*0\r\n");
  Run({"SADD", "k", "1"});
  Logged().clear();
  EXPECT_EQ(Run({"SPOP", "k", "0"}), "*0\r\n");
  EXPECT_EQ(Run({"SPOP", "k", "-1"}), "-ERR value is out of range, must be positive\r\n");
  EXPECT_EQ(Run({"SPOP", "k", "x"}), "-ERR value is out of range, must be positive\r\n");
  EXPECT_EQ(Run({"SPOP", "k", "1", "2"}), "-ERR syntax error\r\n");
  EXPECT_TRUE(Logged().empty());
}

TEST_F(SetCommandsTest, SmoveMovesAndConvertsDestination) {
  Run({"SADD", "a", "1", "2", "x"});
  Run({"SADD", "b", "10"});
  EXPECT_EQ(Run({"SMOVE", "a", "b", "1"}), Int(1));
  EXPECT_EQ(Encoding("b"), "longset");
  EXPECT_EQ(Run({"SMOVE", "a", "b", "x"}), Int(1));
  EXPECT_EQ(Encoding("b"), "hashtable");
  EXPECT_EQ(AsSet(Run({"SMEMBERS", "b"})), S({"1", "10", "x"}));
  EXPECT_EQ(Run({"SMOVE", "a", "b", "nope"}), Int(0));
  EXPECT_EQ(Run({"SMOVE", "a", "new", "2"}), Int(1));
  EXPECT_FALSE(Exists("a"));  // emptied
  EXPECT_EQ(Encoding("new"), "longset");
  EXPECT_EQ(Run({"SMOVE", "new", "new", "2"}), Int(1));
  EXPECT_EQ(Run({"SMOVE", "new", "new", "3"}), Int(0));
  EXPECT_EQ(Run({"SCARD", "new"}), Int(1));
}

TEST_F(SetCommandsTest, InterUnionDiffAcrossEncodings) {
  Run({"SADD", "a", "1", "2", "3", "4"});
  Run({"SADD", "b", "2", "3", "4", "5", "x"});
  Run({"SADD", "c", "3", "4", "9"});
  EXPECT_EQ(AsSet(Run({"SINTER", "a", "b", "c"})), S({"3", "4"}));
  EXPECT_EQ(AsSet(Run({"SINTER", "a", "nokey"})), S({}));
  EXPECT_EQ(AsSet(Run({"SUNION", "a", "c", "nokey"})), S({"1", "2", "3", "4", "9"}));
  EXPECT_EQ(AsSet(Run({"SUNION", "b"})), S({"2", "3", "4", "5", "x"}));
  EXPECT_EQ(AsSet(Run({"SDIFF", "b", "a", "nokey"})), S({"5", "x"}));
  EXPECT_EQ(AsSet(Run({"SDIFF", "nokey", "a"})), S({}));
  EXPECT_EQ(Run({"SINTERCARD", "3", "a", "b", "c"}), Int(2));
  EXPECT_EQ(Run({"SINTERCARD", "2", "a", "b", "LIMIT", "2"}), Int(2));
  EXPECT_EQ(Run({"SINTERCARD", "2", "a", "b", "LIMIT", "0"}), Int(3));
  EXPECT_EQ(Run({"SINTERCARD", "1", "a", "limit", "1", "LIMIT", "3"}), Int(3));
  EXPECT_EQ(Run({"SINTERCARD", "2", "a", "nokey"}), Int(0));

  EXPECT_EQ(Run({"SINTERSTORE", "d", "a", "b"}), Int(3));
  EXPECT_EQ(Encoding("d"), "longset");
  EXPECT_EQ(AsSet(Run({"SMEMBERS", "d"})), S({"2", "3", "4"}));
  EXPECT_EQ(Run({"SUNIONSTORE", "d", "a", "b"}), Int(6));
  EXPECT_EQ(Encoding("d"), "hashtable");
  EXPECT_EQ(Run({"SDIFFSTORE", "d", "b", "a"}), Int(2));
  EXPECT_EQ(AsSet(Run({"SMEMBERS", "d"})), S({"5", "x"}));
  EXPECT_EQ(Run({"SDIFFSTORE", "a", "a", "c"}), Int(2));  // destination is a source
  EXPECT_EQ(AsSet(Run({"SMEMBERS", "a"})), S({"1", "2"}));
  // An empty result deletes the destination, whatever it held.
  MakeString("str");
  EXPECT_EQ(Run({"SINTERSTORE", "str", "a", "nokey"}), Int(0));
  EXPECT_FALSE(Exists("str"));
}

TEST_F(SetCommandsTest, SintercardErrorsMatchRedis) {
  Run({"SADD", "s", "1"});
  EXPECT_EQ(Run({"SINTERCARD", "0", "s"}), "-ERR numkeys should be greater than 0\r\n");
  EXPECT_EQ(Run({"SINTERCARD", "abc", "s"}), "-ERR numkeys should be greater than 0\r\n");
  EXPECT_EQ(Run({"SINTERCARD", "3", "s"}),
            "-ERR Number of keys can't be greater than number of args\r\n");
  EXPECT_EQ(Run({"SINTERCARD", "1", "s", "LIMIT", "-1"}), "-ERR LIMIT can't be negative\r\n");
  EXPECT_EQ(Run({"SINTERCARD", "1", "s", "LIMIT", "abc"}), "-ERR LIMIT can't be negative\r\n");
  EXPECT_EQ(Run({"SINTERCARD", "1", "s", "foo"}), "-ERR syntax error\r\n");
}

TEST_F(SetCommandsTest, SscanReturnsEveryMemberOnceWithMatch) {
  std::vector<std::string> cmd = {"SADD", "k"};
  for (int i = 0; i < 500; ++i) cmd.push_back(std::to_string(i * 31));
  Run(cmd);
  for (bool hashtable : {false, true}) {
    if (hashtable) Run({"SADD", "k", "word"});
    std::multiset<std::string> seen;
    std::string cursor = "0";
    int calls = 0;
    do {
      std::vector<std::string> items;
      ParseFlat(Run({"SSCAN", "k", cursor, "COUNT", "20"}), 0, &items);
      cursor = items[0];
      seen.insert(items.begin() + 1, items.end());
      ++calls;
    } while (cursor != "0" && calls < 1000);
    EXPECT_EQ(seen.size(), hashtable ? 501u : 500u);
    EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), seen.size());
  }
  auto matched = AsSet(Run({"SSCAN", "k", "0", "MATCH", "wo*", "COUNT", "100000"}));
  EXPECT_EQ(matched, S({"0", "word"}));  // the cursor "0" and the one match
  EXPECT_EQ(Run({"SSCAN", "nokey", "0"}), "*2\r\n$1\r\n0\r\n*0\r\n");
  EXPECT_EQ(Run({"SSCAN", "k", "abc"}), "-ERR invalid cursor\r\n");
  EXPECT_EQ(Run({"SSCAN", "k", "0", "COUNT", "0"}), "-ERR syntax error\r\n");
  EXPECT_EQ(Run({"SSCAN", "k", "0", "COUNT"}), "-ERR syntax error\r\n");
  EXPECT_EQ(Run({"SSCAN", "k", "0", "FOO", "1"}), "-ERR syntax error\r\n");
  EXPECT_EQ(Run({"SSCAN", "k", "0", "COUNT", "x"}),
            "-ERR value is not an integer or out of range\r\n");
}

TEST_F(SetCommandsTest, Resp3RepliesAreSets) {
  Run({"HELLO", "3"});
  Run({"SADD", "k", "1", "2"});
  EXPECT_EQ(Run({"SMEMBERS", "k"}).substr(0, 4), "~2\r\n");
  EXPECT_EQ(Run({"SINTER", "k"}).substr(0, 4), "~2\r\n");
  EXPECT_EQ(Run({"SUNION", "k"}).substr(0, 4), "~2\r\n");
  EXPECT_EQ(Run({"SDIFF", "k"}).substr(0, 4), "~2\r\n");
  EXPECT_EQ(Run({"SRANDMEMBER", "k", "2"}).substr(0, 4), "*2\r\n");
  EXPECT_EQ(Run({"SPOP", "nokey", "1"}), "~0\r\n");
  EXPECT_EQ(Run({"SRANDMEMBER", "nokey"}), "_\r\n");
}

TEST_F(SetCommandsTest, NoOpsAreNotPropagated) {
  Run({"SADD", "k", "1"});
  Logged().clear();
  Run({"SADD", "k", "1"});
  Run({"SREM", "k", "2"});
  Run({"SMOVE", "k", "j", "9"});
  Run({"SINTERSTORE", "nokey2", "nokey"});
  EXPECT_TRUE(Logged().empty());
  Run({"SADD", "k", "2"});
  ASSERT_EQ(Logged().size(), 1u);
  EXPECT_EQ(Logged()[0], (std::vector<std::string>{"SADD", "k", "2"}));
}

TEST_F(SetCommandsTest, CacheModeFullChangesNothing) {
  Config c;
  ASSERT_TRUE(c.Set("longset-auto-grow", "no", false).ok());
  ResetWith(c);
  // A new set is sized for what it is created with: 6 members fit capacity 7.
  EXPECT_EQ(Run({"SADD", "k", "1", "2", "3", "4", "5", "6"}), Int(6));
  Run({"SADD", "b", "100"});
  std::string before;
  static_cast<SetValue*>(Database::GetObject(server_->db(0).Find("k")))->longset().SerializeImage(&before);
  Logged().clear();
  EXPECT_EQ(Run({"SADD", "k", "6", "7"}), "-FULL longset is full\r\n");
  EXPECT_EQ(Run({"SMOVE", "b", "k", "100"}), "-FULL longset is full\r\n");
  EXPECT_EQ(Run({"SCARD", "b"}), Int(1));  // the source kept its member
  std::string after;
  static_cast<SetValue*>(Database::GetObject(server_->db(0).Find("k")))->longset().SerializeImage(&after);
  EXPECT_EQ(before, after);
  EXPECT_TRUE(Logged().empty());
  // Existing members and removals still work; a string member converts instead.
  EXPECT_EQ(Run({"SADD", "k", "6"}), Int(0));
  EXPECT_EQ(Run({"SREM", "k", "6"}), Int(1));
  EXPECT_EQ(Run({"SADD", "k", "7"}), Int(1));
  EXPECT_EQ(Run({"SADD", "k", "x"}), Int(1));
  EXPECT_EQ(Encoding("k"), "hashtable");
}

// The keyspace keeps an object's size in 8-byte units, so what it counts for
// a key is the entry's exact cost rounded up by less than 8 bytes (allocators
// such as ASan's report exact, unrounded block sizes).
void ExpectCountedAsEntry(size_t counted, const Entry* e) {
  EXPECT_GE(counted, Database::EntryMemory(e));
  EXPECT_LT(counted, Database::EntryMemory(e) + 8);
}

TEST_F(SetCommandsTest, MemoryAccountingFollowsInPlaceChanges) {
  Database& db = server_->db(0);
  const size_t empty = db.MemoryUsage();
  std::vector<std::string> cmd = {"SADD", "k"};
  for (int i = 0; i < 50; ++i) cmd.push_back(std::to_string(1000000000 + i));
  Run(cmd);
  for (int i = 0; i < 5000; ++i) Run({"SADD", "k", std::to_string(2000000000 + i)});
  const Entry* e = db.Find("k");
  ExpectCountedAsEntry(db.MemoryUsage() - empty, e);
  const size_t grown = db.MemoryUsage();
  EXPECT_GT(grown - empty, 5050u * 8);
  EXPECT_LT(grown - empty, 5050u * 13);  // about 8 / fill bytes per member
  for (int i = 0; i < 5000; ++i) Run({"SREM", "k", std::to_string(2000000000 + i)});
  ExpectCountedAsEntry(db.MemoryUsage() - empty, db.Find("k"));
  EXPECT_LT(db.MemoryUsage(), grown / 10);  // shrank
  Run({"SADD", "k", "name"});
  ExpectCountedAsEntry(db.MemoryUsage() - empty, db.Find("k"));
  db.Delete("k");
  EXPECT_EQ(db.MemoryUsage(), empty);
}

}  // namespace
}  // namespace feedkv::server
