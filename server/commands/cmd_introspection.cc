// COMMAND, COMMAND COUNT/INFO/DOCS/GETKEYS/LIST: answered from the command
// table, so redis-cli's hints and cluster-aware clients see the same facts
// dispatch uses.
#include <fmt/format.h>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/command_docs.h"
#include "server/startup.h"
#include "server/server.h"

namespace feedkv::server {

namespace {

// One COMMAND INFO entry in Redis 7's 10-field shape.
// One key spec of COMMAND INFO: where the keys begin (an index) and how to find
// them from there (a count, a range, or only a key finder).
void WriteKeySpec(protocol::ReplyWriter& r, const CommandSpec& s, uint16_t flags, int index,
                  bool keynum, bool until_keyword) {
  r.MapHeader(3);
  r.Bulk("flags");
  auto key_flags = KeyFlagNames(flags);
  r.SetHeader(key_flags.size());
  for (auto f : key_flags) r.Simple(f);
  r.Bulk("begin_search");
  r.MapHeader(2);
  r.Bulk("type");
  r.Bulk("index");
  r.Bulk("spec");
  r.MapHeader(1);
  r.Bulk("index");
  r.Integer(index);
  r.Bulk("find_keys");
  r.MapHeader(2);
  r.Bulk("type");
  if (until_keyword) {
    r.Bulk("unknown");  // Redis's shape for keys only a key finder knows
    r.Bulk("spec");
    r.MapHeader(0);
  } else if (keynum) {
    r.Bulk("keynum");
    r.Bulk("spec");
    r.MapHeader(3);
    r.Bulk("keynumidx");
    r.Integer(0);
    r.Bulk("firstkey");
    r.Integer(1);
    r.Bulk("keystep");
    r.Integer(1);
  } else {
    r.Bulk("range");
    r.Bulk("spec");
    r.MapHeader(3);
    r.Bulk("lastkey");
    r.Integer(s.last_key < 0 ? s.last_key : s.last_key - s.first_key);
    r.Bulk("keystep");
    r.Integer(s.key_step);
    r.Bulk("limit");
    r.Integer(0);
  }
}

// A key spec for keys only a scan of the arguments finds (SORT's STORE).
void WriteUnknownKeySpec(protocol::ReplyWriter& r, uint16_t flags) {
  r.MapHeader(3);
  r.Bulk("flags");
  auto key_flags = KeyFlagNames(flags);
  r.SetHeader(key_flags.size());
  for (auto f : key_flags) r.Simple(f);
  for (const char* part : {"begin_search", "find_keys"}) {
    r.Bulk(part);
    r.MapHeader(2);
    r.Bulk("type");
    r.Bulk("unknown");
    r.Bulk("spec");
    r.MapHeader(0);
  }
}

void WriteInfo(CommandContext& ctx, const CommandSpec& s) {
  auto& r = ctx.reply;
  r.ArrayHeader(10);
  r.Bulk(s.name);
  r.Integer(s.arity);
  auto flags = FlagNames(DisplayFlags(s));
  r.SetHeader(flags.size());
  for (auto f : flags) r.Simple(f);
  // Redis's legacy triple is 0,0,0 for keys given by count; the key spec says where.
  // A range that ends at a keyword names its first key only (as SORT's 1,1,1).
  const bool keynum = (s.flags & kKeyNum) != 0;
  const bool until_keyword = !s.keys_end_before.empty();
  r.Integer(keynum ? 0 : s.first_key);
  r.Integer(keynum ? 0 : until_keyword ? s.first_key : s.last_key);
  r.Integer(keynum ? 0 : s.key_step);
  auto categories = AclCategories(s);
  r.SetHeader(categories.size());
  for (auto c : categories) r.Simple(fmt::format("@{}", c));
  r.SetHeader(0);  // tips
  if (s.first_key > 0) {
    const bool unknown_keys = s.more_keys != nullptr || s.keys_proc != nullptr;
    r.ArrayHeader(1 + (s.numkeys_at > 0 ? 1 : 0) + (unknown_keys ? 1 : 0));
    // The first key's flags (a row's keys share one spec here, but for counted
    // keys after fixed ones).
    WriteKeySpec(r, s, KeyFlagsOf(s, {}, s.first_key), s.first_key, keynum, until_keyword);
    if (s.numkeys_at > 0) {
      WriteKeySpec(r, s, KeyFlagsOf(s, {}, s.numkeys_at + 1), s.numkeys_at, true, false);
    }
    if (unknown_keys) WriteUnknownKeySpec(r, KeyFlagsOf(s, {}, s.first_key + 1));
  } else {
    r.ArrayHeader(0);
  }
  // Subcommands: each a full entry of its own, named "container|sub".
  r.ArrayHeader(s.subs().size());
  for (const CommandSpec& sub : s.subs()) WriteInfo(ctx, sub);
}

// A COMMAND DOCS argument map, in Redis 7.0's field order.
void WriteArgumentDoc(protocol::ReplyWriter& r, const ArgumentDoc& a) {
  const size_t nflags = a.optional + a.multiple + a.multiple_token;
  r.MapHeader(2 + (a.key_spec_index >= 0) + a.has_token + !a.since.empty() +
              !a.deprecated_since.empty() + (nflags > 0) + !a.arguments.empty());
  r.Bulk("name");
  r.Bulk(a.name);
  r.Bulk("type");
  r.Bulk(a.type);
  if (a.key_spec_index >= 0) {
    r.Bulk("key_spec_index");
    r.Integer(a.key_spec_index);
  }
  if (a.has_token) {
    r.Bulk("token");
    r.Bulk(a.token);
  }
  if (!a.since.empty()) {
    r.Bulk("since");
    r.Bulk(a.since);
  }
  if (!a.deprecated_since.empty()) {
    r.Bulk("deprecated_since");
    r.Bulk(a.deprecated_since);
  }
  if (nflags > 0) {
    r.Bulk("flags");
    r.SetHeader(nflags);
    if (a.optional) r.Simple("optional");
    if (a.multiple) r.Simple("multiple");
    if (a.multiple_token) r.Simple("multiple_token");
  }
  if (!a.arguments.empty()) {
    r.Bulk("arguments");
    r.ArrayHeader(a.arguments.size());
    for (const ArgumentDoc& sub : a.arguments) WriteArgumentDoc(r, sub);
  }
}

// Splits `text` at `sep` into its non-empty parts.
std::vector<std::string_view> SplitNonEmpty(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  while (!text.empty()) {
    size_t at = text.find(sep);
    if (at != 0) parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) break;
    text.remove_prefix(at + 1);
  }
  return parts;
}

// One COMMAND DOCS entry (name, then its map, fields in Redis 7.0's order): the
// summary and group from the row, the rest from its docs entry
// (server/command_docs/); a container's map also holds "subcommands".
void WriteDocs(CommandContext& ctx, const CommandSpec& s) {
  auto& r = ctx.reply;
  const CommandDoc* doc = FindCommandDoc(s.name);
  const command_docs::CommandDocEntry none{s.name, "", "", ""};
  const command_docs::CommandDocEntry& e = doc != nullptr ? *doc->entry : none;
  const auto history = SplitNonEmpty(e.history, '\n');
  const auto doc_flags = SplitNonEmpty(e.doc_flags, ' ');
  const bool has_args = doc != nullptr && !doc->arguments.empty();
  r.Bulk(s.name);
  r.MapHeader(3 + !e.complexity.empty() + !doc_flags.empty() + !e.deprecated_since.empty() +
              !e.replaced_by.empty() + !history.empty() + has_args + s.is_container());
  r.Bulk("summary");
  r.Bulk(s.summary);
  r.Bulk("since");
  r.Bulk(e.since.empty() ? std::string_view(kFeedkvVersion) : e.since);
  r.Bulk("group");
  r.Bulk(s.group);
  if (!e.complexity.empty()) {
    r.Bulk("complexity");
    r.Bulk(e.complexity);
  }
  if (!doc_flags.empty()) {
    r.Bulk("doc_flags");
    r.SetHeader(doc_flags.size());
    for (auto f : doc_flags) r.Simple(f);
  }
  if (!e.deprecated_since.empty()) {
    r.Bulk("deprecated_since");
    r.Bulk(e.deprecated_since);
  }
  if (!e.replaced_by.empty()) {
    r.Bulk("replaced_by");
    r.Bulk(e.replaced_by);
  }
  if (!history.empty()) {
    // Redis 7.0 replies the history as a set of [version, change] pairs.
    r.Bulk("history");
    r.SetHeader(history.size());
    for (auto line : history) {
      size_t space = line.find(' ');
      r.ArrayHeader(2);
      r.Bulk(line.substr(0, space));
      r.Bulk(space == std::string_view::npos ? std::string_view() : line.substr(space + 1));
    }
  }
  if (has_args) {
    r.Bulk("arguments");
    r.ArrayHeader(doc->arguments.size());
    for (const ArgumentDoc& a : doc->arguments) WriteArgumentDoc(r, a);
  }
  if (s.is_container()) {
    r.Bulk("subcommands");
    r.MapHeader(s.subs().size());
    for (const CommandSpec& sub : s.subs()) WriteDocs(ctx, sub);
  }
}

// COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern]:
// every row's fullname that passes the filter, each container followed by its
// subcommands. feedkv has no modules, so MODULE matches nothing.
void CommandList(CommandContext& ctx) {
  enum class Filter { kNone, kModule, kAclCat, kPattern } filter = Filter::kNone;
  std::string_view arg;
  if (ctx.argc() == 5 && EqualsIgnoreCase(ctx.arg(2), "FILTERBY")) {
    arg = ctx.arg(4);
    if (EqualsIgnoreCase(ctx.arg(3), "MODULE")) {
      filter = Filter::kModule;
    } else if (EqualsIgnoreCase(ctx.arg(3), "ACLCAT")) {
      filter = Filter::kAclCat;
    } else if (EqualsIgnoreCase(ctx.arg(3), "PATTERN")) {
      filter = Filter::kPattern;
    }
  }
  if (ctx.argc() != 2 && filter == Filter::kNone) return ctx.SyntaxError();
  auto passes = [&](const CommandSpec& s) {
    switch (filter) {
      case Filter::kNone: return true;
      case Filter::kModule: return false;
      case Filter::kAclCat: {
        for (std::string_view c : AclCategories(s)) {
          if (EqualsIgnoreCase(c, arg)) return true;
        }
        return false;
      }
      case Filter::kPattern: return GlobMatch(arg, s.name, true);
    }
    return false;
  };
  std::vector<std::string_view> names;
  for (const CommandSpec* s : ctx.server.table().all()) {
    if (passes(*s)) names.push_back(s->name);
    for (const CommandSpec& subspec : s->subs()) {
      if (passes(subspec)) names.push_back(subspec.name);
    }
  }
  ctx.reply.ArrayHeader(names.size());
  for (std::string_view n : names) ctx.reply.Bulk(n);
}

// COMMAND GETKEYS / GETKEYSANDFLAGS full-command: the key arguments, with
// their key-spec flags for the latter ([[key, [flag...]], ...]).
void GetKeys(CommandContext& ctx, bool with_flags) {
  auto argv = ctx.args.subspan(2);
  const CommandSpec* s = ctx.server.table().Lookup(argv);
  if (s == nullptr) return ctx.Error(protocol::err::kInvalidCommand);
  int argc = static_cast<int>(argv.size());
  if ((s->arity > 0 && argc != s->arity) || (s->arity < 0 && argc < -s->arity)) {
    return ctx.Error(protocol::err::kGetkeysArity);
  }
  auto pos = CommandTable::KeyPositions(*s, argv);
  // EVAL script 0: no keys is a valid call of a command that may take none.
  if (pos.empty() && (s->flags & kNoMandatoryKeys) && (s->flags & kKeyNum) &&
      static_cast<size_t>(s->first_key) < argv.size() && argv[static_cast<size_t>(s->first_key)] == "0") {
    return ctx.reply.ArrayHeader(0);
  }
  if (pos.empty() && (s->flags & kKeyNum)) {
    return ctx.Error(protocol::err::kGetkeysInvalidArgs);  // a bad key count
  }
  if (pos.empty()) return ctx.Error(protocol::err::kNoKeyArguments);
  ctx.reply.ArrayHeader(pos.size());
  for (int p : pos) {
    if (!with_flags) {
      ctx.reply.Bulk(argv[static_cast<size_t>(p)]);
      continue;
    }
    ctx.reply.ArrayHeader(2);
    ctx.reply.Bulk(argv[static_cast<size_t>(p)]);
    auto names = KeyFlagNames(KeyFlagsOf(*s, argv, p));
    ctx.reply.ArrayHeader(names.size());
    for (auto n : names) ctx.reply.Simple(n);
  }
}

void Command(CommandContext& ctx) {
  const CommandTable& t = ctx.server.table();
  if (ctx.argc() == 1) {
    ctx.reply.ArrayHeader(t.all().size());
    for (const CommandSpec* s : t.all()) WriteInfo(ctx, *s);
    return;
  }
  // Dispatch has checked the subcommand and its arity against the table.
  std::string_view sub = ctx.arg(1);
  if (EqualsIgnoreCase(sub, "COUNT")) {
    ctx.reply.Integer(static_cast<int64_t>(t.all().size()));
  } else if (EqualsIgnoreCase(sub, "INFO")) {
    if (ctx.argc() == 2) {
      ctx.reply.ArrayHeader(t.all().size());
      for (const CommandSpec* s : t.all()) WriteInfo(ctx, *s);
      return;
    }
    ctx.reply.ArrayHeader(ctx.argc() - 2);
    for (size_t i = 2; i < ctx.argc(); i++) {
      const CommandSpec* s = t.FindFullName(ctx.arg(i));
      if (s) {
        WriteInfo(ctx, *s);
      } else {
        ctx.reply.NullArray();
      }
    }
  } else if (EqualsIgnoreCase(sub, "DOCS")) {
    std::vector<const CommandSpec*> list;
    if (ctx.argc() == 2) {
      list = t.all();
    } else {
      for (size_t i = 2; i < ctx.argc(); i++) {
        if (const CommandSpec* s = t.FindFullName(ctx.arg(i))) list.push_back(s);
      }
    }
    ctx.reply.MapHeader(list.size());
    for (const CommandSpec* s : list) WriteDocs(ctx, *s);
  } else if (EqualsIgnoreCase(sub, "LIST")) {
    CommandList(ctx);
  } else if (EqualsIgnoreCase(sub, "GETKEYS") || EqualsIgnoreCase(sub, "GETKEYSANDFLAGS")) {
    GetKeys(ctx, EqualsIgnoreCase(sub, "GETKEYSANDFLAGS"));
  } else if (EqualsIgnoreCase(sub, "HELP")) {
    ctx.ReplyHelp({
        "(no subcommand)",
        "    Return details about all Redis commands.",
        "COUNT",
        "    Return the total number of commands in this Redis server.",
        "LIST",
        "    Return a list of all commands in this Redis server.",
        "INFO [<command-name> ...]",
        "    Return details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "DOCS [<command-name> ...]",
        "    Return documentation details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "GETKEYS <full-command>",
        "    Return the keys from a full Redis command.",
        "GETKEYSANDFLAGS <full-command>",
        "    Return the keys and the access flags from a full Redis command.",
    });
  } else {
    ctx.SubcommandError();
  }
}

const SubcommandSpec kCommandSubs[] = {
    {"count", 2, kLoading | kStale | kAclConnection, "Get total number of Redis commands"},
    {"info", -2, kLoading | kStale | kAclConnection, "Get array of specific Redis command details, or all when no argument is given."},
    {"docs", -2, kLoading | kStale | kAclConnection, "Get array of specific Redis command documentation"},
    {"list", -2, kLoading | kStale | kAclConnection, "Get an array of Redis command names"},
    {"getkeys", -4, kLoading | kStale | kAclConnection, "Extract keys given a full Redis command"},
    {"getkeysandflags", -4, kLoading | kStale | kAclConnection, "Extract keys and access flags given a full Redis command"},
    {"help", 2, kLoading | kStale | kAclConnection, "Show helpful text about the different subcommands"},
};

const CommandSpec kCommands[] = {
    {"command", -1, kLoading | kStale | kAclConnection, 0, 0, 0, Command, "Get array of Redis command details", "server",
     kCommandSubs},
};

}  // namespace

std::span<const CommandSpec> IntrospectionCommands() { return kCommands; }

}  // namespace feedkv::server
