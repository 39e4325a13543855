// Subcommands declared in the command table: their rows, dispatch's checks,
// COMMAND INFO/DOCS/LIST/COUNT/GETKEYS, and per-row statistics.
#include <gtest/gtest.h>

#include <set>

#include "command_test_util.h"
#include "server/command_table.h"

namespace feedkv::server {
namespace {

TEST(SubcommandTableTest, SubcommandsAreRowsNamedContainerBarSub) {
  CommandTable t;
  const CommandSpec* config = t.Find("config");
  ASSERT_NE(config, nullptr);
  ASSERT_TRUE(config->is_container());
  const CommandSpec* get = config->FindSubcommand("GeT");
  ASSERT_NE(get, nullptr);
  EXPECT_EQ(get->name, "config|get");
  EXPECT_EQ(get->arity, -3);
  EXPECT_EQ(get->parent, config);
  EXPECT_EQ(&get->container(), config);
  EXPECT_EQ(get->handler, config->handler);
  EXPECT_EQ(get->group, config->group);
  EXPECT_EQ(t.FindFullName("CONFIG|GET"), get);
  EXPECT_EQ(t.FindFullName("config"), config);
  EXPECT_EQ(t.FindFullName("config|nope"), nullptr);
  EXPECT_EQ(t.FindFullName("nope|get"), nullptr);
  EXPECT_EQ(t.Find("config|get"), nullptr);  // Find is top-level only
  // OBJECT's key is on its subcommands, as in Redis 7.
  const CommandSpec* enc = t.FindFullName("object|encoding");
  ASSERT_NE(enc, nullptr);
  EXPECT_EQ(CommandTable::KeyPositions(*enc, std::vector<std::string_view>{"object", "encoding", "k"}),
            std::vector<int>{2});
  EXPECT_EQ(t.Find("object")->first_key, 0);
}

TEST(SubcommandTableTest, EveryRowHasADenseIdAndAUniqueName) {
  CommandTable t;
  std::set<uint32_t> ids;
  std::set<std::string_view> names;
  for (const CommandSpec* s : t.all_rows()) {
    SCOPED_TRACE(std::string(s->name));
    EXPECT_LT(s->id, t.size());
    EXPECT_TRUE(ids.insert(s->id).second);
    EXPECT_TRUE(names.insert(s->name).second);
    EXPECT_NE(s->arity, 0);
    EXPECT_FALSE(s->summary.empty());
    if (s->parent != nullptr) {
      EXPECT_EQ(s->name.substr(0, s->parent->name.size() + 1), std::string(s->parent->name) + "|");
      EXPECT_FALSE(s->is_container());  // one level, as Redis
    }
  }
  EXPECT_EQ(ids.size(), t.size());
  EXPECT_TRUE(std::is_sorted(t.all_rows().begin(), t.all_rows().end(),
                             [](auto* a, auto* b) { return a->name < b->name; }));
}

TEST(SubcommandTableTest, LookupResolvesTheSubcommandRow) {
  CommandTable t;
  bool unknown_sub = true;
  std::vector<std::string_view> argv = {"CLIENT", "List"};
  EXPECT_EQ(t.Lookup(argv, &unknown_sub), t.FindFullName("client|list"));
  EXPECT_FALSE(unknown_sub);
  argv = {"client"};
  EXPECT_EQ(t.Lookup(argv, &unknown_sub), t.Find("client"));
  argv = {"client", "frob"};
  EXPECT_EQ(t.Lookup(argv, &unknown_sub), nullptr);
  EXPECT_TRUE(unknown_sub);
  argv = {"nosuch", "x"};
  EXPECT_EQ(t.Lookup(argv, &unknown_sub), nullptr);
  EXPECT_FALSE(unknown_sub);
  argv = {"get", "list"};  // not a container: the argument is no subcommand
  EXPECT_EQ(t.Lookup(argv, &unknown_sub), t.Find("get"));
}

class SubcommandDispatchTest : public CommandTest {
 protected:
  const CommandStats& Stats(std::string_view fullname) {
    const CommandSpec* s = server_->table().FindFullName(fullname);
    EXPECT_NE(s, nullptr) << fullname;
    return server_->command_stats(*s);
  }
  std::string CommandStatsInfo() { return Run({"info", "commandstats"}); }
};

TEST_F(SubcommandDispatchTest, UnknownSubcommandAndArityComeFromTheTable) {
  EXPECT_EQ(Run({"client", "frob"}), Err("ERR unknown subcommand 'frob'. Try CLIENT HELP."));
  EXPECT_EQ(Run({"Object", "nope", "k"}), Err("ERR unknown subcommand 'nope'. Try OBJECT HELP."));
  EXPECT_EQ(Run({"client"}), Err("ERR wrong number of arguments for 'client' command"));
  EXPECT_EQ(Run({"CLIENT", "ID", "x"}), Err("ERR wrong number of arguments for 'client|id' command"));
  EXPECT_EQ(Run({"config", "get"}), Err("ERR wrong number of arguments for 'config|get' command"));
  EXPECT_EQ(Run({"object", "encoding"}),
            Err("ERR wrong number of arguments for 'object|encoding' command"));
  EXPECT_EQ(Run({"command", "getkeys", "get"}),
            Err("ERR wrong number of arguments for 'command|getkeys' command"));
  EXPECT_EQ(Stats("client|id").rejected_calls, 1u);
  EXPECT_EQ(Stats("client").rejected_calls, 1u);
  EXPECT_EQ(server_->stats().total_error_replies, 7u);
  // A handler's own refusal of a known subcommand: Redis's other text.
  EXPECT_EQ(Run({"slowlog", "get", "1", "2"}),
            Err("ERR unknown subcommand or wrong number of arguments for 'get'. Try SLOWLOG HELP."));
  EXPECT_EQ(Run({"config", "set", "a", "b", "c"}), Err("ERR syntax error"));
}

TEST_F(SubcommandDispatchTest, UnknownSubcommandInsideMultiAbortsExec) {
  Run({"multi"});
  EXPECT_EQ(Run({"config", "nope"}), Err("ERR unknown subcommand 'nope'. Try CONFIG HELP."));
  EXPECT_EQ(Run({"config", "get", "port"}), "+QUEUED\r\n");
  EXPECT_EQ(Run({"exec"}), Err("EXECABORT Transaction discarded because of previous errors."));
}

TEST_F(SubcommandDispatchTest, StatsAreKeptPerSubcommandRow) {
  Run({"client", "id"});
  Run({"CLIENT", "ID"});
  Run({"config", "get", "port"});
  Run({"get", "k"});
  Run({"multi"});
  Run({"client", "getname"});
  Run({"exec"});
  EXPECT_EQ(Stats("client|id").calls, 2u);
  EXPECT_EQ(Stats("client|getname").calls, 1u);
  EXPECT_EQ(Stats("client").calls, 0u);
  EXPECT_EQ(Stats("config|get").calls, 1u);
  EXPECT_EQ(Stats("get").calls, 1u);
  std::string info = CommandStatsInfo();
  // Sorted by fullname, Redis's field names, rows without activity left out.
  size_t id = info.find("cmdstat_client|id:calls=2,usec=");
  size_t getname = info.find("cmdstat_client|getname:calls=1,");
  size_t config = info.find("cmdstat_config|get:calls=1,");
  size_t get = info.find("cmdstat_get:calls=1,");
  ASSERT_NE(id, std::string::npos) << info;
  ASSERT_NE(getname, std::string::npos) << info;
  EXPECT_LT(getname, id);
  EXPECT_LT(id, config);
  EXPECT_LT(config, get);
  EXPECT_EQ(info.find("cmdstat_client:"), std::string::npos);
  EXPECT_EQ(info.find("cmdstat_set:"), std::string::npos);
  EXPECT_NE(info.find(",rejected_calls=0,failed_calls=0\r\n"), std::string::npos);
  EXPECT_EQ(Run({"config", "resetstat"}), "+OK\r\n");
  EXPECT_EQ(Stats("client|id").calls, 0u);
  EXPECT_EQ(Stats("client|id").latency, nullptr);
  // RESETSTAT itself counts, after the reset, as in Redis.
  EXPECT_EQ(Stats("config|resetstat").calls, 1u);
  info = CommandStatsInfo();
  EXPECT_EQ(info.find("cmdstat_client|id"), std::string::npos);
  EXPECT_EQ(info.find("cmdstat_info:"), std::string::npos);  // counted once it is done
  EXPECT_NE(CommandStatsInfo().find("cmdstat_info:calls=1,"), std::string::npos);
}

TEST_F(SubcommandDispatchTest, CommandInfoListsSubcommandEntries) {
  std::string r = Run({"command", "info", "config"});
  // Element 10 of the entry: one full entry per subcommand.
  EXPECT_EQ(r.substr(0, 26), "*1\r\n*10\r\n$6\r\nconfig\r\n:-2\r\n");
  EXPECT_NE(r.find("*5\r\n*10\r\n$10\r\nconfig|get\r\n:-3\r\n"), std::string::npos) << r;
  for (const char* sub : {"config|set", "config|rewrite", "config|resetstat", "config|help"}) {
    EXPECT_NE(r.find(Bulk(sub)), std::string::npos) << sub;
  }
  // A subcommand by fullname; keys of OBJECT ENCODING.
  r = Run({"command", "info", "object|encoding", "client|nope"});
  EXPECT_EQ(r.substr(0, 35), "*2\r\n*10\r\n$15\r\nobject|encoding\r\n:3\r\n");
  EXPECT_NE(r.find(":2\r\n:2\r\n:1\r\n"), std::string::npos) << r;
  EXPECT_EQ(r.substr(r.size() - 9), "*0\r\n*-1\r\n");  // no subcommands; unknown: nil
  // A plain command has an empty subcommand list.
  r = Run({"command", "info", "ping"});
  EXPECT_EQ(r.substr(r.size() - 8), "*0\r\n*0\r\n");
}

TEST_F(SubcommandDispatchTest, CommandCountListAndDocs) {
  size_t top = server_->table().all().size();
  EXPECT_EQ(Run({"command", "count"}), Int(static_cast<int64_t>(top)));
  std::string list = Run({"command", "list"});
  EXPECT_EQ(list.substr(0, list.find("\r\n")), "*" + std::to_string(server_->table().size()));
  EXPECT_NE(list.find(Bulk("client") + Bulk("client|id")), std::string::npos);
  EXPECT_EQ(Run({"command", "list", "filterby"}), Err("ERR syntax error"));
  std::string docs = Run({"command", "docs", "slowlog", "slowlog|len", "nosuch"});
  EXPECT_EQ(docs.substr(0, 4), "*4\r\n");  // two entries, flattened
  // summary, since, group, complexity (and history, arguments for GET), as Redis 7.0
  EXPECT_NE(docs.find(Bulk("subcommands") + "*8\r\n" + Bulk("slowlog|get") + "*12\r\n"),
            std::string::npos)
      << docs;
  EXPECT_NE(docs.find(Bulk("slowlog|len") + "*8\r\n" + Bulk("summary")), std::string::npos);
}

TEST_F(SubcommandDispatchTest, EveryContainerAnswersHelpAsRedis) {
  for (const CommandSpec* s : server_->table().all()) {
    if (!s->is_container()) continue;
    SCOPED_TRACE(std::string(s->name));
    ASSERT_NE(s->FindSubcommand("help"), nullptr);  // "Try X HELP." must work
    std::string upper(s->name);
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    std::string r = Run({std::string(s->name), "HELP"});
    if (s->name == "cluster") {
      // Without cluster support Redis refuses CLUSTER HELP too.
      EXPECT_EQ(r, "-ERR This instance has cluster support disabled\r\n");
      continue;
    }
    EXPECT_EQ(r.substr(0, 1), "*");
    EXPECT_NE(r.find("\r\n+" + upper + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n"),
              std::string::npos)
        << r;
    const std::string tail = "+HELP\r\n+    Prints this help.\r\n";
    EXPECT_EQ(r.substr(r.size() - tail.size()), tail);
  }
}

TEST_F(SubcommandDispatchTest, GetKeysLooksSubcommandsUp) {
  EXPECT_EQ(Run({"command", "getkeys", "memory", "usage", "k"}), "*1\r\n" + Bulk("k"));
  EXPECT_EQ(Run({"command", "getkeys", "OBJECT", "encoding", "k"}), "*1\r\n" + Bulk("k"));
  EXPECT_EQ(Run({"command", "getkeys", "config", "nope", "k"}), Err("ERR Invalid command specified"));
  EXPECT_EQ(Run({"command", "getkeys", "config", "get", "k"}),
            Err("ERR The command has no key arguments"));
}

}  // namespace
}  // namespace feedkv::server
