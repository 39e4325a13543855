// CLIENT LIST [TYPE type] [ID id ...] and CLIENT KILL TYPE, through dispatch,
// with Redis 7's replies and error texts.
#include <gtest/gtest.h>

#include "command_test_util.h"

namespace feedkv::server {
namespace {

class ClientListTest : public CommandTest {
 protected:
  // The ids in a CLIENT LIST reply, in order.
  static std::vector<std::string> Ids(const std::string& reply) {
    std::vector<std::string> ids;
    for (size_t pos = reply.find("id="); pos != std::string::npos; pos = reply.find("\nid=", pos)) {
      if (reply[pos] == '\n') pos++;
      size_t end = reply.find(' ', pos);
      ids.push_back(reply.substr(pos + 3, end - pos - 3));
      pos = end;
    }
    return ids;
  }
};

TEST_F(ClientListTest, ListsEveryConnectionWithoutFilter) {
  Client& a = Connect();
  Client& b = Connect();
  EXPECT_EQ(Ids(Run({"client", "list"})),
            (std::vector<std::string>{std::to_string(a.id), std::to_string(b.id)}));
}

TEST_F(ClientListTest, IdFilterListsTheGivenClientsInArgumentOrder) {
  Client& a = Connect();
  Client& b = Connect();
  std::string ida = std::to_string(a.id), idb = std::to_string(b.id);
  EXPECT_EQ(Ids(Run({"client", "list", "id", idb})), std::vector<std::string>{idb});
  EXPECT_EQ(Ids(Run({"CLIENT", "LIST", "ID", idb, ida})), (std::vector<std::string>{idb, ida}));
  // Unknown and non-positive ids are skipped, not errors.
  EXPECT_EQ(Ids(Run({"client", "list", "id", "999999", ida, "0", "-1"})),
            std::vector<std::string>{ida});
  EXPECT_EQ(Run({"client", "list", "id", "999999"}), Bulk(""));
}

TEST_F(ClientListTest, IdFilterRejectsNonIntegers) {
  Connect();
  for (const char* bad : {"abc", "+1", "01", "1.0", "99999999999999999999"}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(Run({"client", "list", "id", "1", bad}), Err("ERR Invalid client ID"));
  }
}

TEST_F(ClientListTest, TypeFilter) {
  Client& a = Connect();
  EXPECT_EQ(Ids(Run({"client", "list", "type", "normal"})), std::vector<std::string>{std::to_string(a.id)});
  EXPECT_EQ(Ids(Run({"client", "list", "TYPE", "NORMAL"})), std::vector<std::string>{std::to_string(a.id)});
  // No replicas, masters or subscribers yet: empty, but valid.
  for (const char* t : {"replica", "slave", "master", "pubsub"}) {
    EXPECT_EQ(Run({"client", "list", "type", t}), Bulk("")) << t;
  }
  EXPECT_EQ(Run({"client", "list", "type", "x"}), Err("ERR Unknown client type 'x'"));
}

TEST_F(ClientListTest, OtherArgumentsAreSyntaxErrors) {
  Connect();
  const std::string syntax = Err("ERR syntax error");
  EXPECT_EQ(Run({"client", "list", "foo"}), syntax);
  EXPECT_EQ(Run({"client", "list", "type"}), syntax);
  EXPECT_EQ(Run({"client", "list", "id"}), syntax);
  EXPECT_EQ(Run({"client", "list", "type", "normal", "id", "1"}), syntax);
  EXPECT_EQ(Run({"client", "list", "foo", "bar"}), syntax);
}

TEST_F(ClientListTest, CmdFieldNamesTheLastSubcommand) {
  Client& a = Connect();
  EXPECT_NE(Run({"client", "list"}).find("cmd=NULL"), std::string::npos);  // a: nothing run yet
  RunAs(a, {"CONFIG", "GET", "port"});
  std::string line = Run({"client", "list", "id", std::to_string(a.id)});
  EXPECT_NE(line.find(" cmd=config|get "), std::string::npos) << line;
  RunAs(a, {"ping"});
  line = Run({"client", "list", "id", std::to_string(a.id)});
  EXPECT_NE(line.find(" cmd=ping "), std::string::npos) << line;
}

TEST_F(ClientListTest, KillTypeChecksTheTypeName) {
  Connect();
  EXPECT_EQ(Run({"client", "kill", "type", "bogus"}), Err("ERR Unknown client type 'bogus'"));
  EXPECT_EQ(Run({"client", "kill", "type", "pubsub"}), Int(0));
  EXPECT_EQ(Run({"client", "kill", "type", "normal"}), Int(1));
  EXPECT_EQ(Run({"client", "list"}), Bulk(""));
}

}  // namespace
}  // namespace feedkv::server
