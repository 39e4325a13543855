#include "server/command_docs.h"

#include <fmt/format.h>

#include <map>
#include <vector>

#include "server/command_table.h"

namespace feedkv::server {

namespace {

// "CONFIG" for a command, "CONFIG GET" for a subcommand.
std::string Row(const CommandSpec& s) {
  std::string flags;
  for (auto f : FlagNames(DisplayFlags(s))) flags += (flags.empty() ? "" : " ") + std::string(f);
  std::string name(s.name);
  for (char& c : name) c = c == '|' ? ' ' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return fmt::format("| {} | {} | {} | {} | {} |\n", name, s.arity, flags,
                     (s.flags & kKeyNum) ? fmt::format("numkeys at {}", s.first_key)
                     : !s.keys_end_before.empty()
                         ? fmt::format("{},{},{} until {}", s.first_key, s.last_key, s.key_step,
                                       LowerAscii(s.keys_end_before))
                     : s.numkeys_at > 0
                         ? fmt::format("{},{},{} then numkeys at {}", s.first_key, s.last_key,
                                       s.key_step, s.numkeys_at)
                     : s.first_key > 0   ? fmt::format("{},{},{}", s.first_key, s.last_key, s.key_step)
                                         : std::string("-"),
                     s.summary);
}

}  // namespace

std::string CommandsMarkdown(const CommandTable& table) {
  std::map<std::string, std::vector<const CommandSpec*>> by_group;
  for (const CommandSpec* s : table.all()) by_group[std::string(s->group)].push_back(s);
  std::string out =
      "# Commands\n\n"
      "Generated from the command table by `feedkv-server --commands-markdown`; the ctest\n"
      "`docs_commands` fails when this file and the table differ. Arity follows Redis: N means\n"
      "exactly N arguments including the name, -N at least N. Keys gives first,last,step.\n"
      "A container command (CONFIG, CLIENT, ...) is followed by its subcommands, each with its\n"
      "own arity (counting the container's name) and flags.\n\n"
      "The routing rule: every command that reads or writes data declares the positions of its\n"
      "keys here, and COMMAND INFO / COMMAND GETKEYS answer from the same row, so a\n"
      "cluster-aware client routes each command by them. A COUNTER.* command's key is its id\n"
      "(argument 2), flagged `not_key` in its key spec: routed like a key, never a keyspace key\n"
      "(WATCH does not see it). Commands about a whole counter space (CREATE, DROP, INFO,\n"
      "SPACES) have none: spaces exist on every node. COUNTER.MGET's ids run up to an optional\n"
      "FIELDS keyword (\"until fields\"): COMMAND INFO marks it movablekeys, and clients ask\n"
      "COMMAND GETKEYS.\n";
  for (const auto& [group, specs] : by_group) {
    out += fmt::format("\n## {}\n\n| command | arity | flags | keys | summary |\n|---|---|---|---|---|\n",
                       group);
    for (const CommandSpec* s : specs) {
      out += Row(*s);
      for (const CommandSpec& sub : s->subs()) out += Row(sub);
    }
  }
  return out;
}

}  // namespace feedkv::server
