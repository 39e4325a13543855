// ACL users: SHA-256 of passwords, rules applied all-or-nothing, descriptions
// worked out from the command bitmap, and the permission check with keys,
// channels, first arguments and selectors, through the real command table.
#include "server/acl.h"

#include <string>
#include <vector>

#include "server/sha256.h"
#include "tests/unit/server/command_test_util.h"

namespace feedkv::server {
namespace {

TEST(Sha256Test, MatchesFips180Vectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 55, 56 and 64 bytes: the padding spills into a second block at 56.
  EXPECT_EQ(Sha256Hex(std::string(55, 'a')), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(Sha256Hex(std::string(56, 'a')), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(Sha256Hex(std::string(64, 'a')), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  EXPECT_EQ(Sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

class AclTest : public ::testing::Test {
 protected:
  Status Set(const std::string& user, std::vector<std::string> rules) { return acl_.SetUser(user, rules); }
  AclResult Check(const std::string& user, std::vector<std::string> args, int* idx = nullptr) {
    std::vector<std::string_view> argv(args.begin(), args.end());
    const CommandSpec* spec = table_.Lookup(argv);
    EXPECT_NE(spec, nullptr);
    int i = 0;
    AclResult r = acl_.Check(*acl_.Find(user), *spec, argv, &i);
    if (idx != nullptr) *idx = i;
    return r;
  }
  CommandTable table_;
  AclUsers acl_{table_};
};

TEST_F(AclTest, TheDefaultUserMayRunEverything) {
  EXPECT_EQ(acl_.DescribeUser(*acl_.default_user()), "user default on nopass ~* &* +@all");
  EXPECT_TRUE(acl_.default_user()->unrestricted);
  EXPECT_FALSE(acl_.DefaultRequiresAuth());
  acl_.SetDefaultPassword("pw");
  EXPECT_TRUE(acl_.DefaultRequiresAuth());
  EXPECT_EQ(acl_.Authenticate("default", "pw"), acl_.default_user());
  EXPECT_EQ(acl_.Authenticate("default", "nope"), nullptr);
}

TEST_F(AclTest, AFailedRuleChangesNothing) {
  ASSERT_TRUE(Set("u", {"on", ">pw", "+get", "~k*"}).ok());
  Status s = Set("u", {"+set", "nosuchrule"});
  EXPECT_EQ(s.message(), "Error in ACL SETUSER modifier 'nosuchrule': Syntax error");
  EXPECT_EQ(Check("u", {"SET", "k1", "v"}), AclResult::kDeniedCommand);
  EXPECT_EQ(Set("v", {"+nosuch"}).message(),
            "Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL");
  EXPECT_EQ(acl_.Find("v"), nullptr);
}

TEST_F(AclTest, KeysNeedTheirPatternsPermission) {
  ASSERT_TRUE(Set("u", {"on", "nopass", "+@all", "%R~ro:*", "~rw:*"}).ok());
  EXPECT_EQ(Check("u", {"GET", "ro:1"}), AclResult::kOk);
  int idx = 0;
  EXPECT_EQ(Check("u", {"SET", "ro:1", "v"}, &idx), AclResult::kDeniedKey);
  EXPECT_EQ(idx, 1);
  EXPECT_EQ(Check("u", {"MSET", "rw:1", "v", "ro:2", "v"}, &idx), AclResult::kDeniedKey);
  EXPECT_EQ(idx, 3);
  EXPECT_EQ(Check("u", {"SET", "rw:1", "v"}), AclResult::kOk);
}

TEST_F(AclTest, ChannelsArePatternsButPsubscribeMustMatchLiterally) {
  ASSERT_TRUE(Set("u", {"on", "nopass", "+@all", "~*", "resetchannels", "&news.*"}).ok());
  EXPECT_EQ(Check("u", {"PUBLISH", "news.1", "m"}), AclResult::kOk);
  EXPECT_EQ(Check("u", {"PUBLISH", "other", "m"}), AclResult::kDeniedChannel);
  EXPECT_EQ(Check("u", {"SUBSCRIBE", "news.1", "other"}), AclResult::kDeniedChannel);
  EXPECT_EQ(Check("u", {"PSUBSCRIBE", "news.*"}), AclResult::kOk);
  EXPECT_EQ(Check("u", {"PSUBSCRIBE", "news.1*"}), AclResult::kDeniedChannel);
}

TEST_F(AclTest, FirstArgumentsAndSubcommands) {
  ASSERT_TRUE(Set("u", {"on", "nopass", "~*", "+select|0", "+config|get"}).ok());
  EXPECT_EQ(Check("u", {"SELECT", "0"}), AclResult::kOk);
  EXPECT_EQ(Check("u", {"SELECT", "1"}), AclResult::kDeniedCommand);
  EXPECT_EQ(Check("u", {"CONFIG", "GET", "x"}), AclResult::kOk);
  EXPECT_EQ(Check("u", {"CONFIG", "SET", "x", "y"}), AclResult::kDeniedCommand);
  EXPECT_EQ(Set("u", {"+config|get|x"}).message(),
            "Error in ACL SETUSER modifier '+config|get|x': Allowing first-arg of a subcommand is not supported");
  EXPECT_EQ(acl_.DescribeCommands(acl_.Find("u")->selectors[0]), "-@all +config|get +select|0");
}

TEST_F(AclTest, SelectorsAreTriedInTurn) {
  ASSERT_TRUE(Set("u", {"on", "nopass", "+get", "~a*", "(+set ~w*)"}).ok());
  EXPECT_EQ(Check("u", {"GET", "a1"}), AclResult::kOk);
  EXPECT_EQ(Check("u", {"SET", "w1", "v"}), AclResult::kOk);
  EXPECT_EQ(Check("u", {"SET", "a1", "v"}), AclResult::kDeniedKey);  // the relevant refusal
  EXPECT_EQ(acl_.DescribeUser(*acl_.Find("u")),
            "user u on nopass ~a* resetchannels -@all +get (~w* resetchannels -@all +set)");
}

TEST_F(AclTest, DescriptionsStartFromTheBestFittingCategories) {
  ASSERT_TRUE(Set("u", {"+@all", "-@hash", "-@slow", "+hget"}).ok());
  // Redis 7.0.15 answers the same: -@slow explains more with no exception.
  EXPECT_EQ(acl_.DescribeCommands(acl_.Find("u")->selectors[0]), "+@all -@slow -@hash +hget");
  ASSERT_TRUE(Set("w", {"-@all", "+@read", "-get"}).ok());
  EXPECT_EQ(acl_.DescribeCommands(acl_.Find("w")->selectors[0]), "-@all +@read -get");
}

TEST_F(AclTest, TheLogGroupsLikeEntries) {
  AclLogEntry e;
  e.object = "get";
  e.username = "u";
  e.context = "toplevel";
  e.ctime_ms = 1000;
  acl_.Log(e, 3);
  e.ctime_ms = 2000;
  acl_.Log(e, 3);
  ASSERT_EQ(acl_.log().size(), 1u);
  EXPECT_EQ(acl_.log()[0].count, 2u);
  e.ctime_ms = 200000;  // more than a minute later: a new entry
  acl_.Log(e, 3);
  EXPECT_EQ(acl_.log().size(), 2u);
}

}  // namespace
}  // namespace feedkv::server
