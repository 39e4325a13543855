// Unit tests for LogApplier, the one path by which logged commands change the
// dataset: the journal a workload of every command family produces (SELECTs,
// MULTI blocks, rewritten non-deterministic commands) replays into an equal
// dataset, and a record the command table refuses stops the load naming its
// place.
#include "server/log_applier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "command_test_util.h"
#include "storage/aof_reader.h"
#include "storage/journal.h"

namespace feedkv::server {
namespace {

class GroupCollector : public JournalConsumer {
 public:
  void OnGroup(const JournalGroup& g) override { bytes += *g.bytes; }
  std::string bytes;
};

class LogApplierTest : public CommandTest {
 protected:
  LogApplierTest() { Reset(DebugConfig()); }

  static Config DebugConfig() {
    Config c;
    EXPECT_TRUE(c.ApplyArgs({"--enable-debug-command", "yes"}).ok());
    return c;
  }

  // The workload's keys as text: type, value (reply lines sorted, so a set's
  // order does not matter) and whether a TTL is set, per database.
  std::string Dump() {
    const std::vector<std::pair<std::string, std::vector<std::string>>> keys = {
        {"0", {"s", "n", "ttl", "set", "follow", "nosuch"}},
        {"3", {"in3", "moved", "tx1", "tx2", "txset"}}};
    std::string out;
    for (const auto& [db, names] : keys) {
      Run({"SELECT", db});
      for (const auto& k : names) {
        const std::string type = Run({"TYPE", k});
        std::string value = type == "+string\r\n" ? Run({"GET", k})
                            : type == "+set\r\n"  ? Run({"SMEMBERS", k})
                                                    : "";
        std::vector<std::string> lines;
        for (size_t at = 0; at < value.size();) {
          size_t end = value.find("\r\n", at);
          lines.push_back(value.substr(at, end - at));
          at = end + 2;
        }
        std::sort(lines.begin(), lines.end());
        const std::string ttl = Run({"PTTL", k});
        out += db + "/" + k + " " + type;
        for (const auto& l : lines) out += l + "|";
        out += ttl[1] == '-' ? ttl : ":positive";
        out += "\n";
      }
    }
    Run({"SELECT", "0"});
    return out;
  }

  // Applies journal bytes to the current server as AOF loading does.
  Status Replay(const std::string& bytes) {
    LogApplier applier(*server_, LogApplier::Options{});
    aof::ScanResult r;
    Status s = aof::ScanSegment(bytes, 0,
                                [&](const aof::Group& g) {
                                  return applier.ApplyGroup(g.records, "appendonly.aof.1.incr.aof",
                                                            g.begin);
                                },
                                &r);
    if (s.ok() && r.end != aof::ScanEnd::kClean) return Status::Corruption(r.error);
    return s;
  }
};

TEST_F(LogApplierTest, AJournalOfEveryFamilyReplaysToTheSameDataset) {
  GroupCollector log;
  server_->journal().AddConsumer(&log);
  const std::vector<std::vector<std::string>> workload = {
      {"SET", "s", "hello"},     {"APPEND", "s", " world"}, {"INCRBY", "n", "41"},
      {"INCR", "n"},             {"SETEX", "ttl", "1000", "v"}, {"EXPIRE", "s", "5000"},
      {"PERSIST", "s"},          {"SADD", "set", "1", "2", "x"}, {"SREM", "set", "2"},
      {"LSADD", "follow", "10", "20", "30"}, {"LSREM", "follow", "20"},
      {"SELECT", "3"},           {"SET", "in3", "v3"},      {"RENAME", "in3", "moved"},
      {"MULTI"},                 {"SET", "tx1", "a"},       {"INCR", "tx2"},
      {"SADD", "txset", "7"},    {"EXEC"},
      {"SELECT", "0"},           {"SPOP", "set"},           {"DEL", "nosuch", "n"},
      {"COUNTER.CREATE", "post", "like:24", "read:32"},
      {"COUNTER.INCRBY", "post", "7", "like", "5"}, {"COUNTER.INCRBY", "post", "9", "read", "3"},
  };
  for (const auto& cmd : workload) {
    std::string reply = Run(cmd);
    ASSERT_NE(reply[0], '-') << cmd[0] << ": " << reply;
    server_->journal().Seal();  // one group per command, as loop turns would make
  }
  server_->journal().RemoveConsumer(&log);
  const std::string digest = Dump();
  const std::string counters = Run({"COUNTER.GET", "post", "7", "like"}) +
                               Run({"COUNTER.GET", "post", "9", "read"});
  ASSERT_FALSE(log.bytes.empty());

  Reset(DebugConfig());
  ASSERT_NE(Dump(), digest);
  Status s = Replay(log.bytes);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Dump(), digest);
  EXPECT_EQ(Run({"COUNTER.GET", "post", "7", "like"}) + Run({"COUNTER.GET", "post", "9", "read"}),
            counters);
  Run({"SELECT", "3"});
  EXPECT_EQ(Run({"GET", "moved"}), Bulk("v3"));
  EXPECT_EQ(Run({"GET", "tx1"}), Bulk("a"));
  // Applied from the log, nothing is logged again and no command is counted.
  EXPECT_EQ(Run({"INFO", "replication"}).find("master_repl_offset:0") != std::string::npos, true);
}

TEST_F(LogApplierTest, RecordsTheTableRefusesStopTheLoadNamingTheirPlace) {
  struct Case {
    std::vector<std::string_view> argv;
    std::string want;
  };
  const std::vector<Case> cases = {
      {{"NOSUCHCMD", "k"}, "unknown command 'NOSUCHCMD' at appendonly.aof.1.incr.aof offset 40"},
      {{"SET", "k"}, "wrong arity for 'SET'"},
      {{"GET", "k"}, "'GET' at appendonly.aof.1.incr.aof offset 40"},
  };
  for (const Case& c : cases) {
    LogApplier applier(*server_, LogApplier::Options{});
    const std::string_view set[] = {"SET", "before", "1"};
    std::vector<aof::Record> records = {{0, set}, {40, c.argv}};
    Status s = applier.ApplyGroup(records, "appendonly.aof.1.incr.aof", 0);
    EXPECT_FALSE(s.ok()) << c.argv[0];
    EXPECT_NE(s.ToString().find(c.want), std::string::npos) << s.ToString();
    EXPECT_NE(s.ToString().find("offset 40"), std::string::npos) << s.ToString();
  }
}

}  // namespace
}  // namespace feedkv::server
