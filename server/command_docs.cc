#include "server/command_docs.h"

#include <fmt/format.h>

#include <map>
#include <unordered_map>
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
      "COMMAND GETKEYS.\n\n"
      "COMMAND DOCS adds each row's since-version, complexity, history and argument tree from\n"
      "server/command_docs/: Redis 7's own docs for the commands both servers have (written by\n"
      "tools/command-docs-from-redis.py; test_command_docs.py compares the replies byte for\n"
      "byte) and feedkv.cc for the rest.\n";
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

namespace {

constexpr std::string_view kArgumentTypes[] = {"key",       "string",     "integer", "double", "pattern",
                                               "unix-time", "pure-token", "oneof",   "block"};

bool PlainChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

// A recursive-descent reader of the notation; `pos` only moves forward, so
// every loop ends within the text.
class NotationParser {
 public:
  explicit NotationParser(std::string_view text) : text_(text) {}

  Status ParseList(std::vector<ArgumentDoc>* out, bool nested) {
    while (true) {
      while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
      if (pos_ == text_.size()) return nested ? Fail("')' missing") : Status::OK();
      if (text_[pos_] == ')') return nested ? Status::OK() : Fail("unbalanced ')'");
      if (Status s = ParseArgument(&out->emplace_back()); !s.ok()) return s;
    }
  }

 private:
  Status Fail(std::string_view what) const {
    return Status::InvalidArgument(fmt::format("{} at {} of \"{}\"", what, pos_, text_));
  }
  bool Peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }

  // A plain word or a double-quoted string.
  Status Word(std::string* out, bool allow_empty) {
    out->clear();
    if (Peek('"')) {
      size_t end = text_.find('"', pos_ + 1);
      if (end == std::string_view::npos) return Fail("unterminated quote");
      out->assign(text_.substr(pos_ + 1, end - pos_ - 1));
      pos_ = end + 1;
      return Status::OK();
    }
    while (pos_ < text_.size() && PlainChar(text_[pos_])) out->push_back(text_[pos_++]);
    return out->empty() && !allow_empty ? Fail("name expected") : Status::OK();
  }

  std::string Version() {
    std::string v;
    while (pos_ < text_.size() && ((text_[pos_] >= '0' && text_[pos_] <= '9') || text_[pos_] == '.')) {
      v.push_back(text_[pos_++]);
    }
    return v;
  }

  Status ParseArgument(ArgumentDoc* a) {
    if (Peek('=')) {  // a pure-token named after its token
      ++pos_;
      if (Status s = Word(&a->token, false); !s.ok()) return s;
      a->has_token = true;
      a->name = LowerAscii(a->token);
      a->type = "pure-token";
    } else {
      if (Status s = Word(&a->name, false); !s.ok()) return s;
      if (!Peek(':')) return Fail("':' expected");
      ++pos_;
      if (Status s = Word(&a->type, false); !s.ok()) return s;
      bool known = false;
      for (std::string_view t : kArgumentTypes) known = known || t == a->type;
      if (!known) return Fail("unknown type");
      if (Peek('=')) {
        ++pos_;
        if (Status s = Word(&a->token, true); !s.ok()) return s;
        a->has_token = true;
      }
    }
    while (pos_ < text_.size() && text_[pos_] != ' ' && text_[pos_] != ')') {
      const char c = text_[pos_++];
      if (c == '#') {
        int n = 0;
        size_t start = pos_;
        while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9' && pos_ - start < 4) {
          n = n * 10 + (text_[pos_++] - '0');
        }
        if (pos_ == start) return Fail("key spec index expected");
        a->key_spec_index = n;
      } else if (c == '@') {
        a->since = Version();
      } else if (c == '!') {
        a->deprecated_since = Version();
      } else if (c == '?') {
        a->optional = true;
      } else if (c == '*') {
        a->multiple = true;
      } else if (c == '+') {
        a->multiple_token = true;
      } else if (c == '(') {
        if (Status s = ParseList(&a->arguments, true); !s.ok()) return s;
        ++pos_;  // the ')'
      } else {
        --pos_;
        return Fail("unexpected character");
      }
    }
    const bool container = a->type == "oneof" || a->type == "block";
    if (container != !a->arguments.empty()) return Fail("only a oneof or block has arguments");
    return Status::OK();
  }

  std::string_view text_;
  size_t pos_ = 0;
};

std::vector<std::span<const command_docs::CommandDocEntry>> DocFiles() {
  return {
#define FEEDKV_DOCS_FILE(func) command_docs::func(),
#include "server/command_docs/redis_files.inc"
#undef FEEDKV_DOCS_FILE
      command_docs::FeedkvDocs(),
  };
}

}  // namespace

Status ParseArgumentNotation(std::string_view text, std::vector<ArgumentDoc>* out) {
  out->clear();
  return NotationParser(text).ParseList(out, false);
}

std::vector<const command_docs::CommandDocEntry*> AllCommandDocEntries() {
  std::vector<const command_docs::CommandDocEntry*> all;
  for (auto file : DocFiles()) {
    for (const auto& e : file) all.push_back(&e);
  }
  return all;
}

const CommandDoc* FindCommandDoc(std::string_view fullname) {
  // Parsed once: COMMAND DOCS without names (redis-cli asks on connect) walks
  // every entry. An entry that does not parse keeps no arguments; the unit
  // test CommandDocs.EveryRowHasDocsThatParse fails on it.
  static const std::unordered_map<std::string_view, CommandDoc> kIndex = [] {
    std::unordered_map<std::string_view, CommandDoc> index;
    for (const auto* e : AllCommandDocEntries()) {
      CommandDoc doc{e, {}};
      if (!ParseArgumentNotation(e->arguments, &doc.arguments).ok()) doc.arguments.clear();
      index.emplace(e->name, std::move(doc));
    }
    return index;
  }();
  auto it = kIndex.find(fullname);
  return it == kIndex.end() ? nullptr : &it->second;
}

}  // namespace feedkv::server
