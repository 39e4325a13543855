// COMMAND, COMMAND COUNT/INFO/DOCS/GETKEYS/LIST: answered from the command
// table, so redis-cli's hints and cluster-aware clients see the same facts
// dispatch uses.
#include <fmt/format.h>

#include "protocol/error_text.h"
#include "server/command_context.h"
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
    r.ArrayHeader(1 + (s.numkeys_at > 0 ? 1 : 0) + (s.more_keys != nullptr ? 1 : 0));
    // The first key's flags (a row's keys share one spec here, but for counted
    // keys after fixed ones).
    WriteKeySpec(r, s, KeyFlagsOf(s, {}, s.first_key), s.first_key, keynum, until_keyword);
    if (s.numkeys_at > 0) {
      WriteKeySpec(r, s, KeyFlagsOf(s, {}, s.numkeys_at + 1), s.numkeys_at, true, false);
    }
    if (s.more_keys != nullptr) WriteUnknownKeySpec(r, KeyFlagsOf(s, {}, s.first_key + 1));
  } else {
    r.ArrayHeader(0);
  }
  // Subcommands: each a full entry of its own, named "container|sub".
  r.ArrayHeader(s.subs().size());
  for (const CommandSpec& sub : s.subs()) WriteInfo(ctx, sub);
}

// One COMMAND DOCS entry (name, then its map); a container's map also holds
// "subcommands": a map of the same entries for each subcommand.
void WriteDocs(CommandContext& ctx, const CommandSpec& s) {
  auto& r = ctx.reply;
  r.Bulk(s.name);
  r.MapHeader(s.is_container() ? 4 : 3);
  r.Bulk("summary");
  r.Bulk(s.summary);
  r.Bulk("since");
  r.Bulk("1.0.0");
  r.Bulk("group");
  r.Bulk(s.group);
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
    {"count", 2, kLoading | kStale | kAclConnection, "Returns a count of commands."},
    {"info", -2, kLoading | kStale | kAclConnection, "Returns information about one, multiple or all commands."},
    {"docs", -2, kLoading | kStale | kAclConnection, "Returns documentary information about one, multiple or all commands."},
    {"list", -2, kLoading | kStale | kAclConnection, "Returns a list of command names."},
    {"getkeys", -4, kLoading | kStale | kAclConnection, "Extracts the key names from an arbitrary command."},
    {"getkeysandflags", -4, kLoading | kStale | kAclConnection, "Extracts the key names and access flags for an arbitrary command."},
    {"help", 2, kLoading | kStale | kAclConnection, "Returns helpful text about the different subcommands."},
};

const CommandSpec kCommands[] = {
    {"command", -1, kLoading | kStale | kAclConnection, 0, 0, 0, Command, "Returns detailed information about all commands.", "server",
     kCommandSubs},
};

}  // namespace

std::span<const CommandSpec> IntrospectionCommands() { return kCommands; }

}  // namespace feedkv::server
