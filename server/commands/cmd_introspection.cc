// COMMAND, COMMAND COUNT/INFO/DOCS/GETKEYS/LIST: answered from the command
// table, so redis-cli's hints and cluster-aware clients see the same facts
// dispatch uses.
#include <fmt/format.h>

#include "server/command_context.h"
#include "server/server.h"

namespace feedkv::server {

namespace {

// One COMMAND INFO entry in Redis 7's 10-field shape.
void WriteInfo(CommandContext& ctx, const CommandSpec& s) {
  auto& r = ctx.reply;
  r.ArrayHeader(10);
  r.Bulk(s.name);
  r.Integer(s.arity);
  auto flags = FlagNames(s.flags);
  r.SetHeader(flags.size());
  for (auto f : flags) r.Simple(f);
  // Redis's legacy triple is 0,0,0 for keys given by count; the key spec says where.
  const bool keynum = (s.flags & kKeyNum) != 0;
  r.Integer(keynum ? 0 : s.first_key);
  r.Integer(keynum ? 0 : s.last_key);
  r.Integer(keynum ? 0 : s.key_step);
  r.SetHeader(0);  // ACL categories
  r.SetHeader(0);  // tips
  if (s.first_key > 0) {
    r.ArrayHeader(1);
    r.MapHeader(3);
    r.Bulk("flags");
    r.SetHeader(1);
    r.Simple((s.flags & kWrite) ? "RW" : "RO");
    r.Bulk("begin_search");
    r.MapHeader(2);
    r.Bulk("type");
    r.Bulk("index");
    r.Bulk("spec");
    r.MapHeader(1);
    r.Bulk("index");
    r.Integer(s.first_key);
    r.Bulk("find_keys");
    r.MapHeader(2);
    r.Bulk("type");
    if (keynum) {
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
    if (ctx.argc() != 2) {
      ctx.SyntaxError();  // FILTERBY is not supported
      return;
    }
    // Every command's fullname, each container followed by its subcommands.
    size_t n = 0;
    for (const CommandSpec* s : t.all()) n += 1 + s->subs().size();
    ctx.reply.ArrayHeader(n);
    for (const CommandSpec* s : t.all()) {
      ctx.reply.Bulk(s->name);
      for (const CommandSpec& subspec : s->subs()) ctx.reply.Bulk(subspec.name);
    }
  } else if (EqualsIgnoreCase(sub, "GETKEYS")) {
    auto argv = ctx.args.subspan(2);
    const CommandSpec* s = t.Lookup(argv);
    if (s == nullptr) {
      ctx.Error("ERR Invalid command specified");
      return;
    }
    int argc = static_cast<int>(argv.size());
    if ((s->arity > 0 && argc != s->arity) || (s->arity < 0 && argc < -s->arity)) {
      ctx.Error("ERR Invalid number of arguments specified for command");
      return;
    }
    auto pos = CommandTable::KeyPositions(*s, argv);
    if (pos.empty() && (s->flags & kKeyNum)) {
      ctx.Error("ERR Invalid arguments specified for command");  // a bad key count
      return;
    }
    if (pos.empty()) {
      ctx.Error("ERR The command has no key arguments");
      return;
    }
    ctx.reply.ArrayHeader(pos.size());
    for (int p : pos) ctx.reply.Bulk(argv[static_cast<size_t>(p)]);
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
    });
  } else {
    ctx.SubcommandError();
  }
}

const SubcommandSpec kCommandSubs[] = {
    {"count", 2, kLoading | kStale, "Returns a count of commands."},
    {"info", -2, kLoading | kStale, "Returns information about one, multiple or all commands."},
    {"docs", -2, kLoading | kStale, "Returns documentary information about one, multiple or all commands."},
    {"list", -2, kLoading | kStale, "Returns a list of command names."},
    {"getkeys", -4, kLoading | kStale, "Extracts the key names from an arbitrary command."},
    {"help", 2, kLoading | kStale, "Returns helpful text about the different subcommands."},
};

const CommandSpec kCommands[] = {
    {"command", -1, kLoading | kStale, 0, 0, 0, Command, "Returns detailed information about all commands.", "server",
     kCommandSubs},
};

}  // namespace

std::span<const CommandSpec> IntrospectionCommands() { return kCommands; }

}  // namespace feedkv::server
