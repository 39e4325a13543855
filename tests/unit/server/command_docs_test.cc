#include "server/command_docs.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "server/command_table.h"

namespace feedkv::server {
namespace {

TEST(CommandDocs, EveryRowHasDocsThatParse) {
  CommandTable t;
  size_t rows = 0;
  for (const CommandSpec* s : t.all()) {
    std::vector<const CommandSpec*> family{s};
    for (const CommandSpec& sub : s->subs()) family.push_back(&sub);
    for (const CommandSpec* row : family) {
      SCOPED_TRACE(std::string(row->name));
      ++rows;
      const CommandDoc* doc = FindCommandDoc(row->name);
      ASSERT_NE(doc, nullptr) << "no entry in server/command_docs/";
      EXPECT_FALSE(doc->entry->since.empty());
      std::vector<ArgumentDoc> args;
      Status st = ParseArgumentNotation(doc->entry->arguments, &args);
      EXPECT_TRUE(st.ok()) << st.message();
      // A key argument exists exactly when the row declares keys, except for
      // commands whose keys only a scan finds (SORT's STORE) or that may run
      // without any (EVAL's numkeys 0): those declare them all the same.
      if (row->first_key == 0 && row->numkeys_at == 0 && !(row->flags & kKeyNum)) {
        for (const ArgumentDoc& a : args) EXPECT_NE(a.type, "key") << a.name;
      }
    }
  }
  EXPECT_EQ(rows, AllCommandDocEntries().size()) << "an entry names no row";
}

TEST(CommandDocs, EveryEntryNamesARowOnce) {
  CommandTable t;
  std::set<std::string_view> seen;
  for (const auto* e : AllCommandDocEntries()) {
    SCOPED_TRACE(std::string(e->name));
    EXPECT_NE(t.FindFullName(e->name), nullptr);
    EXPECT_TRUE(seen.insert(e->name).second) << "written twice";
  }
}

TEST(CommandDocs, NotationDescribesTokensOptionsAndNesting) {
  std::vector<ArgumentDoc> args;
  ASSERT_TRUE(ParseArgumentNotation(
                  "key:key#0 value:string condition:oneof@2.6.12?(=NX =XX) "
                  "\"ip:port\":string=ADDR@2.8.12!3.0? item:string*+",
                  &args)
                  .ok());
  ASSERT_EQ(args.size(), 5u);
  EXPECT_EQ(args[0].name, "key");
  EXPECT_EQ(args[0].type, "key");
  EXPECT_EQ(args[0].key_spec_index, 0);
  EXPECT_EQ(args[1].key_spec_index, -1);
  EXPECT_FALSE(args[1].has_token);
  EXPECT_EQ(args[2].type, "oneof");
  EXPECT_EQ(args[2].since, "2.6.12");
  EXPECT_TRUE(args[2].optional);
  ASSERT_EQ(args[2].arguments.size(), 2u);
  EXPECT_EQ(args[2].arguments[1].name, "xx");
  EXPECT_EQ(args[2].arguments[1].type, "pure-token");
  EXPECT_EQ(args[2].arguments[1].token, "XX");
  EXPECT_EQ(args[3].name, "ip:port");
  EXPECT_EQ(args[3].token, "ADDR");
  EXPECT_EQ(args[3].since, "2.8.12");
  EXPECT_EQ(args[3].deprecated_since, "3.0");
  EXPECT_TRUE(args[3].optional);
  EXPECT_TRUE(args[4].multiple && args[4].multiple_token && !args[4].optional);
}

TEST(CommandDocs, MalformedNotationIsRejected) {
  std::vector<ArgumentDoc> args;
  for (const char* bad : {"key", "key:nosuchtype", "a:oneof(=X", "a:oneof()", "a:string(=X)",
                          "a:string)", "a:string$", "\"unterminated:string", "a:key#"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(ParseArgumentNotation(bad, &args).ok());
  }
  EXPECT_TRUE(ParseArgumentNotation("", &args).ok());
  EXPECT_TRUE(args.empty());
}

}  // namespace
}  // namespace feedkv::server
