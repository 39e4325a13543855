// Security defaults as Redis 7.0: protected configs, DEBUG behind
// enable-debug-command, protected mode, and client-output-buffer-limit parsed
// once with memory units. End-to-end checks: tests/e2e/test_security.py.
#include <gtest/gtest.h>

#include "command_test_util.h"
#include "protocol/error_text.h"

namespace feedkv::server {
namespace {

std::string SetError(const Status& s) { return s.ok() ? "OK" : s.message(); }

TEST(ProtectedConfigTest, DirAndDbfilenameNeedEnableProtectedConfigsAtRuntime) {
  Config c;
  EXPECT_EQ(c.values().enable_protected_configs, "no");
  for (const char* name : {"dir", "dbfilename", "DBFilename"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(SetError(c.Set(name, "x", true, /*local_client=*/true)),
              std::string("CONFIG SET failed (possibly related to argument '") + name +
                  "') - can't set protected config");
  }
  // Start-up (config file, command line) sets them.
  EXPECT_TRUE(c.Set("dbfilename", "boot.rdb", false).ok());
  EXPECT_EQ(c.values().dbfilename, "boot.rdb");
  // Other settings are not protected.
  EXPECT_TRUE(c.Set("maxclients", "50", true).ok());
}

TEST(ProtectedConfigTest, LocalAllowsOnlyLocalClients) {
  Config c;
  ASSERT_TRUE(c.Set("enable-protected-configs", "LOCAL", false).ok());
  EXPECT_EQ(c.values().enable_protected_configs, "local");
  EXPECT_FALSE(c.Set("dbfilename", "a.rdb", true, /*local_client=*/false).ok());
  EXPECT_TRUE(c.Set("dbfilename", "a.rdb", true, /*local_client=*/true).ok());
  ASSERT_TRUE(c.Set("enable-protected-configs", "yes", false).ok());
  EXPECT_TRUE(c.Set("dir", "/tmp", true, /*local_client=*/false).ok());
}

TEST(ProtectedConfigTest, EnableSettingsAreImmutableAndTakeThreeValues) {
  Config c;
  for (const char* name : {"enable-protected-configs", "enable-debug-command"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(SetError(c.Set(name, "yes", true, true)),
              std::string("CONFIG SET failed (possibly related to argument '") + name +
                  "') - can't set immutable config");
    EXPECT_EQ(SetError(c.Set(name, "maybe", false)),
              std::string("CONFIG SET failed (possibly related to argument '") + name +
                  "') - argument(s) must be one of the following: no, yes, local");
  }
}

TEST(ProtectedConfigTest, FileNamesMustBePlainNames) {
  Config c;
  ASSERT_TRUE(c.Set("enable-protected-configs", "yes", false).ok());
  for (const char* bad : {"../x.rdb", "/abs.rdb", "a/b", "a\\b", "/"}) {
    SCOPED_TRACE(bad);
    for (bool runtime : {true, false}) {
      EXPECT_EQ(SetError(c.Set("dbfilename", bad, runtime)),
                std::string("CONFIG SET failed (possibly related to argument 'dbfilename') - ") +
                    protocol::err::kDbfilenamePath);
    }
    EXPECT_FALSE(c.Set("appendfilename", bad, false).ok());
    EXPECT_FALSE(c.Set("appenddirname", bad, false).ok());
  }
  EXPECT_EQ(c.values().dbfilename, "dump.rdb");
  EXPECT_TRUE(c.Set("dbfilename", "", true).ok());  // Redis allows an empty dbfilename
  EXPECT_TRUE(c.Set("dbfilename", "..", true).ok());  // and "..": a name, not a path
  EXPECT_EQ(SetError(c.Set("appendfilename", "", false)),
            std::string("CONFIG SET failed (possibly related to argument 'appendfilename') - ") +
                protocol::err::kAppendfilenameEmpty);
  EXPECT_EQ(SetError(c.Set("appenddirname", "", false)),
            std::string("CONFIG SET failed (possibly related to argument 'appenddirname') - ") +
                protocol::err::kAppenddirnameEmpty);
}

TEST(ProtectedActionTest, YesNoLocal) {
  EXPECT_TRUE(AllowProtectedAction("yes", false));
  EXPECT_TRUE(AllowProtectedAction("local", true));
  EXPECT_FALSE(AllowProtectedAction("local", false));
  EXPECT_FALSE(AllowProtectedAction("no", true));
}

TEST(ProtectedModeTest, RefusesOnlyNonLocalClientsWithoutPassword) {
  ServerConfig cfg;
  EXPECT_TRUE(cfg.protected_mode);  // the default, as Redis
  EXPECT_EQ(Config().Get("protected-mode")[0].second, "yes");
  EXPECT_TRUE(ProtectedModeRefuses(cfg, /*default_user_nopass=*/true, /*local_client=*/false));
  EXPECT_FALSE(ProtectedModeRefuses(cfg, true, /*local_client=*/true));
  // A password on the default user (requirepass or ACL SETUSER default >pw).
  EXPECT_FALSE(ProtectedModeRefuses(cfg, /*default_user_nopass=*/false, false));
  cfg.protected_mode = false;
  EXPECT_FALSE(ProtectedModeRefuses(cfg, true, false));
}

TEST(ProtectedModeTest, OnlyLoopbackPeersAreLocal) {
  auto local = [](const char* a) { return IsLocalPeer(boost::asio::ip::make_address(a)); };
  EXPECT_TRUE(local("127.0.0.1"));
  EXPECT_TRUE(local("127.255.255.254"));  // all of 127.0.0.0/8, as Redis's "127." prefix
  EXPECT_TRUE(local("::1"));
  EXPECT_FALSE(local("::ffff:127.0.0.1"));  // Redis compares the text: not "::1", not "127."
  EXPECT_FALSE(local("128.0.0.1"));
  EXPECT_FALSE(local("126.255.255.255"));
  EXPECT_FALSE(local("192.0.2.1"));
  EXPECT_FALSE(local("10.0.0.1"));
  EXPECT_FALSE(local("0.0.0.0"));
  EXPECT_FALSE(local("::"));
  EXPECT_FALSE(local("::2"));
  EXPECT_FALSE(local("fe80::1"));
  ServerConfig cfg;  // protected mode on, no password
  EXPECT_TRUE(ProtectedModeRefuses(cfg, true, local("192.0.2.1")));
  EXPECT_FALSE(ProtectedModeRefuses(cfg, true, local("127.0.0.1")));
}

class DebugCommandTest : public CommandTest {};

TEST_F(DebugCommandTest, RefusedUnlessEnabled) {
  const std::string refused = Err(protocol::err::kDebugNotAllowed);
  EXPECT_EQ(Run({"DEBUG", "SLEEP", "0"}), refused);
  client_.local = true;
  EXPECT_EQ(Run({"debug", "sleep", "0"}), refused);  // "no" refuses local clients too

  Config local;
  ASSERT_TRUE(local.Set("enable-debug-command", "local", false).ok());
  Reset(local);
  EXPECT_EQ(Run({"DEBUG", "SLEEP", "0"}), refused);
  client_.local = true;
  EXPECT_EQ(Run({"DEBUG", "SLEEP", "0"}), "+OK\r\n");

  Config yes;
  ASSERT_TRUE(yes.Set("enable-debug-command", "yes", false).ok());
  Reset(yes);
  EXPECT_EQ(Run({"DEBUG", "SLEEP", "0"}), "+OK\r\n");
}

TEST_F(DebugCommandTest, SleepOutOfRangeRepliesAtOnce) {
  Config yes;
  ASSERT_TRUE(yes.Set("enable-debug-command", "yes", false).ok());
  Reset(yes);
  // Each would be undefined behaviour (or a sleep of ages) if cast to microseconds.
  for (const char* v : {"inf", "-inf", "nan", "-nan", "1e300", "-1e300", "1e13", "-1", "x", ""}) {
    SCOPED_TRACE(v);
    EXPECT_EQ(Run({"DEBUG", "SLEEP", v}), "+OK\r\n");
  }
}

TEST(OutputBufferLimitTest, ParsesUnitsPerClassAndFormatsBytes) {
  OutputBufferLimits l = ServerConfig().client_output_buffer_limit;
  EXPECT_EQ(FormatOutputBufferLimits(l),
            "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60");
  ASSERT_TRUE(ParseOutputBufferLimits("normal 64mb 0 0", &l).ok());
  EXPECT_EQ(l[0], (OutputBufferLimit{64ull << 20, 0, 0}));
  EXPECT_EQ(l[1], (OutputBufferLimit{256ull << 20, 64ull << 20, 60}));  // untouched
  ASSERT_TRUE(ParseOutputBufferLimits("REPLICA 1K 2kB 3 pubsub 1g 2GB +4", &l).ok());
  EXPECT_EQ(l[1], (OutputBufferLimit{1000, 2048, 3}));
  EXPECT_EQ(l[2], (OutputBufferLimit{1000000000, 2ull << 30, 4}));
  ASSERT_TRUE(ParseOutputBufferLimits("slave 5b mb -0", &l).ok());  // Redis: no digits = 0
  EXPECT_EQ(l[1], (OutputBufferLimit{5, 0, 0}));
  ASSERT_TRUE(ParseOutputBufferLimits("", &l).ok());
  EXPECT_EQ(FormatOutputBufferLimits(l),
            "normal 67108864 0 0 slave 5 0 0 pubsub 1000000000 2147483648 4");
}

TEST(OutputBufferLimitTest, RejectsBadValuesAndChangesNothing) {
  const OutputBufferLimits before = ServerConfig().client_output_buffer_limit;
  struct Case { const char* value; const char* error; };
  const Case cases[] = {
      {"normal 1 1", protocol::err::kObufArgCount},
      {"normal  1 1 1", protocol::err::kObufArgCount},
      {"master 1 1 1", protocol::err::kObufClass},
      {"normal 1 1 1 x 1 1 1", protocol::err::kObufClass},
      {"normal -1 0 0", protocol::err::kObufValue},
      {"normal 1tb 0 0", protocol::err::kObufValue},
      {"normal 1 0 1.5", protocol::err::kObufValue},
      {"normal 1 0 -2", protocol::err::kObufValue},
      {"normal 1 0 +-2", protocol::err::kObufValue},
      {"normal 1 0 3000000000", protocol::err::kObufValue},
      {"normal 18446744073709551616 0 0", protocol::err::kObufValue},
      {"normal 17179869184gb 0 0", protocol::err::kObufValue},
      {"normal 5 0 0 pubsub x 0 0", protocol::err::kObufValue},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.value);
    OutputBufferLimits l = before;
    Status s = ParseOutputBufferLimits(c.value, &l);
    EXPECT_EQ(s.message(), c.error);
    EXPECT_EQ(l, before);
  }
}

TEST(OutputBufferLimitTest, HardAndSoftLimits) {
  int64_t since = 0;
  const OutputBufferLimit hard{100, 0, 0};
  EXPECT_FALSE(OutputBufferOverLimit(hard, 99, 1000, &since));
  EXPECT_TRUE(OutputBufferOverLimit(hard, 100, 1000, &since));  // at the limit, as Redis
  EXPECT_FALSE(OutputBufferOverLimit(OutputBufferLimit{}, UINT64_MAX, 1000, &since));

  const OutputBufferLimit soft{0, 100, 2};
  EXPECT_FALSE(OutputBufferOverLimit(soft, 150, 1000, &since));  // first sighting starts the clock
  EXPECT_EQ(since, 1000);
  EXPECT_FALSE(OutputBufferOverLimit(soft, 150, 1002, &since));  // 2 s: not more than soft_seconds
  EXPECT_TRUE(OutputBufferOverLimit(soft, 150, 1003, &since));
  EXPECT_FALSE(OutputBufferOverLimit(soft, 50, 1003, &since));   // dropped below: clock reset
  EXPECT_EQ(since, 0);
  EXPECT_FALSE(OutputBufferOverLimit(soft, 150, 1010, &since));
}

}  // namespace
}  // namespace feedkv::server
