// The script engine through the real dispatch path: SHA-1 names, value
// conversions both ways, the read-only sandbox and a script's writes.
#include "server/sha1.h"

#include <string>

#include "tests/unit/server/command_test_util.h"

namespace feedkv::server {
namespace {

TEST(Sha1Test, MatchesFips180Vectors) {
  EXPECT_EQ(Sha1Hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(Sha1Hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(Sha1Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  // 55, 56 and 64 bytes: the padding spills into a second block at 56.
  EXPECT_EQ(Sha1Hex(std::string(55, 'a')), "c1c8bbdc22796e28c0e15163d20899b65621d65a");
  EXPECT_EQ(Sha1Hex(std::string(56, 'a')), "c2db330f6083854c99d4b5bfb6e8f29f201be699");
  EXPECT_EQ(Sha1Hex(std::string(64, 'a')), "0098ba824b5c16427bd7a1122a5a442a25ec644d");
  EXPECT_EQ(Sha1Hex(std::string(1000000, 'a')), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

class ScriptingTest : public CommandTest {};

TEST_F(ScriptingTest, EvalCachesTheScriptUnderItsSha1) {
  EXPECT_EQ(Run({"EVAL", "return 1", "0"}), ":1\r\n");
  EXPECT_EQ(Run({"SCRIPT", "EXISTS", Sha1Hex("return 1")}), "*1\r\n:1\r\n");
  EXPECT_EQ(Run({"EVALSHA", Sha1Hex("return 1"), "0"}), ":1\r\n");
}

TEST_F(ScriptingTest, RepliesConvertBothWays) {
  Run({"RPUSH", "l", "a", "b"});
  EXPECT_EQ(Run({"EVAL", "return redis.call('lrange', KEYS[1], 0, -1)", "1", "l"}),
            "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
  EXPECT_EQ(Run({"EVAL", "return {1, 'x', {ok='fine'}, false, 2.9}", "0"}),
            "*5\r\n:1\r\n$1\r\nx\r\n+fine\r\n$-1\r\n:2\r\n");
  EXPECT_EQ(Run({"EVAL", "return redis.call('get', 'missing') == false", "0"}), ":1\r\n");
}

TEST_F(ScriptingTest, GlobalsAreReadOnly) {
  EXPECT_EQ(Run({"EVAL", "x = 1", "0"}).substr(0, 56),
            "-ERR user_script:1: Attempt to modify a readonly table s");
  EXPECT_EQ(Run({"EVAL", "return type(os)", "0"}).substr(0, 79),
            "-ERR user_script:1: Script attempted to access nonexistent global variable 'os'");
}

TEST_F(ScriptingTest, WritesChangeTheCallersDatabaseOnly) {
  EXPECT_EQ(Run({"EVAL", "redis.call('select', '2') return redis.call('set', 'k', 'v')", "0"}), "+OK\r\n");
  EXPECT_EQ(Run({"EXISTS", "k"}), ":0\r\n");
  EXPECT_EQ(Run({"SELECT", "2"}), "+OK\r\n");
  EXPECT_EQ(Run({"GET", "k"}), "$1\r\nv\r\n");
}

TEST_F(ScriptingTest, DeeplyNestedResultsAreBounded) {
  // A table nested deeper than the converter follows becomes an error, not a crash.
  std::string script = "local t = {} local cur = t for i = 1, 5000 do cur[1] = {} cur = cur[1] end return t";
  std::string reply = Run({"EVAL", script, "0"});
  EXPECT_NE(reply.find("reached lua stack limit"), std::string::npos);
}

}  // namespace
}  // namespace feedkv::server
