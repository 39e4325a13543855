#include "server/command_table.h"

#include <gtest/gtest.h>

#include <string>

#include "command_test_util.h"

namespace feedkv::server {
namespace {

TEST(CommandTableTest, EveryCommandIsWellDeclared) {
  CommandTable t;
  ASSERT_FALSE(t.all().empty());
  for (const CommandSpec* s : t.all()) {
    SCOPED_TRACE(std::string(s->name));
    EXPECT_NE(s->arity, 0);
    EXPECT_FALSE(s->summary.empty());
    EXPECT_FALSE(s->group.empty());
    EXPECT_FALSE((s->flags & kWrite) && (s->flags & kReadOnly));
    if (s->first_key > 0) {
      EXPECT_GT(s->key_step, 0);
    }
  }
}

TEST(CommandTableTest, LookupIsCaseInsensitive) {
  CommandTable t;
  EXPECT_NE(t.Find("PING"), nullptr);
  EXPECT_EQ(t.Find("PiNg"), t.Find("ping"));
  EXPECT_EQ(t.Find("nosuchcommand"), nullptr);
}

// Find hashes a name's first 8 bytes and its length: every row must be found under any
// mix of case, and a name that shares a row's first 8 bytes, or is that row's name with
// one byte more, less or changed, must not.
TEST(CommandTableTest, LookupFindsEveryRowAndNothingElse) {
  CommandTable t;
  for (const CommandSpec* spec : t.all()) {
    std::string name(spec->name), upper, mixed;
    for (size_t i = 0; i < name.size(); ++i) {
      const char c = name[i];
      const char up = (c >= 'a' && c <= 'z') ? static_cast<char>(c - 32) : c;
      upper.push_back(up);
      mixed.push_back(i % 2 ? up : c);
    }
    EXPECT_EQ(t.Find(name), spec) << name;
    EXPECT_EQ(t.Find(upper), spec) << upper;
    EXPECT_EQ(t.Find(mixed), spec) << mixed;
    for (const std::string& other : {name + "x", name.substr(0, name.size() - 1),
                                     name.substr(0, name.size() - 1) + "@", "{" + name.substr(1)}) {
      const CommandSpec* found = t.Find(other);
      EXPECT_TRUE(found == nullptr || found->name == other) << other;
    }
  }
  EXPECT_EQ(t.Find(""), nullptr);
  EXPECT_EQ(t.Find(std::string(1000, 'g')), nullptr);
  EXPECT_EQ(t.Find(std::string("get\0", 4)), nullptr);
}

TEST(CommandTableTest, KeyPositionsFollowFirstLastStep) {
  using Argv = std::vector<std::string_view>;
  CommandSpec mset{"mset", -3, kWrite, 1, -1, 2, [](CommandContext&) {}, "s", "string"};
  EXPECT_EQ(CommandTable::KeyPositions(mset, Argv{"mset", "a", "1", "b", "2"}),
            (std::vector<int>{1, 3}));
  CommandSpec get{"get", 2, kReadOnly, 1, 1, 1, [](CommandContext&) {}, "s", "string"};
  EXPECT_EQ(CommandTable::KeyPositions(get, Argv{"get", "k"}), (std::vector<int>{1}));
  CommandSpec ping{"ping", -1, 0, 0, 0, 0, [](CommandContext&) {}, "s", "connection"};
  EXPECT_TRUE(CommandTable::KeyPositions(ping, Argv{"ping"}).empty());
}

// SINTERCARD numkeys key [key ...] [LIMIT n]: the count says how many keys follow it.
TEST(CommandTableTest, KeyPositionsOfKeysGivenByCount) {
  using Argv = std::vector<std::string_view>;
  CommandTable t;
  for (std::string_view name : {"sintercard", "lsintercard"}) {
    const CommandSpec* s = t.Find(name);
    ASSERT_NE(s, nullptr);
    EXPECT_TRUE(s->flags & kKeyNum) << name;
    EXPECT_EQ(CommandTable::KeyPositions(*s, Argv{name, "2", "a", "b", "LIMIT", "5"}),
              (std::vector<int>{2, 3}));
    // Counts argv cannot hold, zero, negative or not a number: no keys.
    for (std::string_view bad : {"3", "0", "-1", "x", "1x", ""}) {
      EXPECT_TRUE(CommandTable::KeyPositions(*s, Argv{name, bad, "a", "b"}).empty()) << bad;
    }
  }
}

class DispatchTest : public CommandTest {};

TEST_F(DispatchTest, UnknownCommandGetsRedisText) {
  EXPECT_EQ(Run({"foo", "a", "b"}),
            "-ERR unknown command 'foo', with args beginning with: 'a' 'b' \r\n");
}

TEST_F(DispatchTest, WrongArityGetsRedisText) {
  EXPECT_EQ(Run({"echo"}), "-ERR wrong number of arguments for 'echo' command\r\n");
}

TEST_F(DispatchTest, RequirePassGatesCommandsUntilAuth) {
  Config c;
  ASSERT_TRUE(c.Set("requirepass", "secret", false).ok());
  Reset(c);
  EXPECT_EQ(Run({"echo", "x"}), "-NOAUTH Authentication required.\r\n");
  EXPECT_EQ(Run({"auth", "wrong"}),
            "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
  EXPECT_EQ(Run({"auth", "secret"}), "+OK\r\n");
  EXPECT_EQ(Run({"echo", "x"}), Bulk("x"));
}

TEST_F(DispatchTest, HelloSwitchesProtocolAndRejectsUnknownVersions) {
  EXPECT_EQ(Run({"hello", "4"}), "-NOPROTO unsupported protocol version\r\n");
  std::string r = Run({"hello", "3"});
  EXPECT_EQ(r.substr(0, 3), "%7\r");
  EXPECT_NE(r.find("7.2.4"), std::string::npos);
  EXPECT_EQ(client_.resp, 3);
}

TEST_F(DispatchTest, MultiQueuesAndExecRunsInOrder) {
  EXPECT_EQ(Run({"multi"}), "+OK\r\n");
  EXPECT_EQ(Run({"echo", "a"}), "+QUEUED\r\n");
  EXPECT_EQ(Run({"ping"}), "+QUEUED\r\n");
  EXPECT_EQ(Run({"exec"}), "*2\r\n" + Bulk("a") + "+PONG\r\n");
}

TEST_F(DispatchTest, QueueingErrorAbortsExec) {
  Run({"multi"});
  Run({"echo"});  // wrong arity while queueing
  EXPECT_EQ(Run({"exec"}), "-EXECABORT Transaction discarded because of previous errors.\r\n");
  EXPECT_EQ(Run({"exec"}), "-ERR EXEC without MULTI\r\n");
}

TEST_F(DispatchTest, NestedMultiAndWatchInsideMultiAreErrors) {
  Run({"multi"});
  EXPECT_EQ(Run({"multi"}), "-ERR MULTI calls can not be nested\r\n");
  EXPECT_EQ(Run({"watch", "k"}), "-ERR WATCH inside MULTI is not allowed\r\n");
  EXPECT_EQ(Run({"discard"}), "+OK\r\n");
}

TEST_F(DispatchTest, WatchedKeyTouchedByAnotherClientFailsExec) {
  Client other;
  other.authenticated = true;
  Run({"watch", "k"});
  server_->TouchKey(0, "k");  // what any write to k does
  Run({"multi"});
  Run({"ping"});
  EXPECT_EQ(Run({"exec"}), "*-1\r\n");
}

TEST_F(DispatchTest, ClientReplyOffSuppressesRepliesUntilOn) {
  EXPECT_EQ(Run({"client", "reply", "off"}), "");
  EXPECT_EQ(Run({"ping"}), "");
  EXPECT_EQ(Run({"client", "reply", "on"}), "+OK\r\n");
  EXPECT_EQ(Run({"client", "reply", "skip"}), "");
  EXPECT_EQ(Run({"ping"}), "");
  EXPECT_EQ(Run({"ping"}), "+PONG\r\n");
}

TEST_F(DispatchTest, ErrorsAreCountedInStats) {
  Run({"foo"});
  Run({"echo"});
  EXPECT_EQ(server_->stats().total_error_replies, 2u);
  EXPECT_EQ(server_->command_stats(*server_->table().Find("echo")).rejected_calls, 1u);
}

TEST_F(DispatchTest, ConfigSetIsAtomicAcrossPairs) {
  EXPECT_EQ(Run({"config", "set", "hz", "20", "maxclients", "nope"}).substr(0, 4), "-ERR");
  EXPECT_EQ(server_->cfg().hz, 10);
  EXPECT_EQ(Run({"config", "set", "hz", "20", "maxclients", "50"}), "+OK\r\n");
  EXPECT_EQ(server_->cfg().hz, 20);
  EXPECT_EQ(server_->cfg().maxclients, 50);
}

}  // namespace
}  // namespace feedkv::server
