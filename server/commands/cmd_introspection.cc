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
  std::erase(flags, std::string_view("no_multi"));
  r.SetHeader(flags.size());
  for (auto f : flags) r.Simple(f);
  r.Integer(s.first_key);
  r.Integer(s.last_key);
  r.Integer(s.key_step);
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
    r.Bulk("range");
    r.Bulk("spec");
    r.MapHeader(3);
    r.Bulk("lastkey");
    r.Integer(s.last_key < 0 ? s.last_key : s.last_key - s.first_key);
    r.Bulk("keystep");
    r.Integer(s.key_step);
    r.Bulk("limit");
    r.Integer(0);
  } else {
    r.ArrayHeader(0);
  }
  r.ArrayHeader(0);  // subcommands
}

void WriteDocs(CommandContext& ctx, const CommandSpec& s) {
  auto& r = ctx.reply;
  r.Bulk(s.name);
  r.MapHeader(3);
  r.Bulk("summary");
  r.Bulk(s.summary);
  r.Bulk("since");
  r.Bulk("1.0.0");
  r.Bulk("group");
  r.Bulk(s.group);
}

void Command(CommandContext& ctx) {
  const CommandTable& t = ctx.server.table();
  if (ctx.argc() == 1) {
    ctx.reply.ArrayHeader(t.all().size());
    for (const CommandSpec* s : t.all()) WriteInfo(ctx, *s);
    return;
  }
  std::string_view sub = ctx.arg(1);
  if (EqualsIgnoreCase(sub, "COUNT") && ctx.argc() == 2) {
    ctx.reply.Integer(static_cast<int64_t>(t.all().size()));
  } else if (EqualsIgnoreCase(sub, "INFO")) {
    if (ctx.argc() == 2) {
      ctx.reply.ArrayHeader(t.all().size());
      for (const CommandSpec* s : t.all()) WriteInfo(ctx, *s);
      return;
    }
    ctx.reply.ArrayHeader(ctx.argc() - 2);
    for (size_t i = 2; i < ctx.argc(); i++) {
      const CommandSpec* s = t.Find(ctx.arg(i));
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
        if (const CommandSpec* s = t.Find(ctx.arg(i))) list.push_back(s);
      }
    }
    ctx.reply.MapHeader(list.size());
    for (const CommandSpec* s : list) WriteDocs(ctx, *s);
  } else if (EqualsIgnoreCase(sub, "LIST")) {
    ctx.reply.ArrayHeader(t.all().size());
    for (const CommandSpec* s : t.all()) ctx.reply.Bulk(s->name);
  } else if (EqualsIgnoreCase(sub, "GETKEYS") && ctx.argc() >= 3) {
    const CommandSpec* s = t.Find(ctx.arg(2));
    if (s == nullptr) {
      ctx.Error("ERR Invalid command specified");
      return;
    }
    int argc = static_cast<int>(ctx.argc()) - 2;
    if ((s->arity > 0 && argc != s->arity) || (s->arity < 0 && argc < -s->arity)) {
      ctx.Error("ERR Invalid number of arguments specified for command");
      return;
    }
    auto pos = CommandTable::KeyPositions(*s, static_cast<size_t>(argc));
    if (pos.empty()) {
      ctx.Error("ERR The command has no key arguments");
      return;
    }
    ctx.reply.ArrayHeader(pos.size());
    for (int p : pos) ctx.reply.Bulk(ctx.arg(static_cast<size_t>(p) + 2));
  } else {
    ctx.Error(fmt::format("ERR unknown subcommand or wrong number of arguments for '{}'. Try COMMAND HELP.", sub));
  }
}

const CommandSpec kCommands[] = {
    {"command", -1, kLoading | kStale, 0, 0, 0, Command, "Returns detailed information about all commands.", "server",
     "count info docs list getkeys"},
};

}  // namespace

std::span<const CommandSpec> IntrospectionCommands() { return kCommands; }

}  // namespace feedkv::server
