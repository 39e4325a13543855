// ACL: users and permissions (server/acl.h holds the model). Replies and
// error texts as Redis 7.0's aclCommand.
#include <random>

#include <fmt/format.h>

#include "protocol/error_text.h"
#include "server/acl.h"
#include "server/command_context.h"
#include "server/command_table.h"
#include "server/commands/client_info.h"
#include "server/server.h"

namespace feedkv::server {

namespace {


void SetUser(CommandContext& ctx) {
  std::string_view name = ctx.arg(2);
  if (AclUsers::HasSpaces(name)) {
    ctx.Error(protocol::err::kAclUsernameSpaces);
    return;
  }
  std::vector<std::string> words;
  for (size_t i = 3; i < ctx.argc(); i++) words.emplace_back(ctx.arg(i));
  std::vector<std::string> rules;
  size_t bad = 0;
  if (!AclUsers::MergeSelectorArgs(words, &rules, &bad)) {
    ctx.Error(fmt::format(protocol::err::kAclUnmatchedParen, ctx.arg(bad + 3)));
    return;
  }
  // Subscribers of an existing user lose channels the new rules take away.
  AclUser* existing = ctx.server.acl().Find(name);
  std::vector<std::string> old_channels;
  if (existing != nullptr) {
    for (const AclSelector& sel : existing->selectors) {
      // allchannels counts as the pattern "*": losing it is a revocation.
      if (sel.all_channels) old_channels.emplace_back("*");
      old_channels.insert(old_channels.end(), sel.channels.begin(), sel.channels.end());
    }
  }
  Status s = ctx.server.acl().SetUser(name, rules);
  if (!s.ok()) {
    ctx.Error(s);
    return;
  }
  if (existing != nullptr) ctx.server.DisconnectRevokedSubscribers(*existing, old_channels, &ctx.client);
  ctx.reply.Ok();
}

void DelUser(CommandContext& ctx) {
  for (size_t i = 2; i < ctx.argc(); i++) {
    if (ctx.arg(i) == "default") {
      ctx.Error(protocol::err::kAclDefaultUndeletable);
      return;
    }
  }
  int64_t deleted = 0;
  for (size_t i = 2; i < ctx.argc(); i++) {
    AclUser* u = ctx.server.acl().Find(ctx.arg(i));
    if (u == nullptr) continue;
    ctx.server.DisconnectUser(u, &ctx.client);
    ctx.server.acl().Remove(ctx.arg(i));
    deleted++;
  }
  ctx.reply.Integer(deleted);
}

void ReplySelector(CommandContext& ctx, const AclSelector& s) {
  ctx.reply.Bulk("commands");
  ctx.reply.Bulk(ctx.server.acl().DescribeCommands(s));
  ctx.reply.Bulk("keys");
  ctx.reply.Bulk(AclUsers::DescribeKeys(s));
  ctx.reply.Bulk("channels");
  ctx.reply.Bulk(AclUsers::DescribeChannels(s));
}

void GetUser(CommandContext& ctx) {
  AclUser* u = ctx.server.acl().Find(ctx.arg(2));
  if (u == nullptr) {
    ctx.reply.Null();
    return;
  }
  auto& r = ctx.reply;
  r.MapHeader(6);
  r.Bulk("flags");
  std::vector<std::string_view> flags;
  flags.push_back(u->enabled ? "on" : "off");
  if (u->nopass) flags.push_back("nopass");
  if (u->skip_sanitize_payload) flags.push_back("skip-sanitize-payload");
  if (u->sanitize_payload) flags.push_back("sanitize-payload");
  r.SetHeader(flags.size());
  for (std::string_view f : flags) r.Bulk(f);
  r.Bulk("passwords");
  r.ArrayHeader(u->passwords.size());
  for (const std::string& p : u->passwords) r.Bulk(p);
  ReplySelector(ctx, u->selectors[0]);
  r.Bulk("selectors");
  r.ArrayHeader(u->selectors.size() - 1);
  for (size_t i = 1; i < u->selectors.size(); i++) {
    r.MapHeader(3);
    ReplySelector(ctx, u->selectors[i]);
  }
}

void ListUsers(CommandContext& ctx, bool names_only) {
  const auto& users = ctx.server.acl().users();
  ctx.reply.ArrayHeader(users.size());
  for (const auto& [name, user] : users) {
    ctx.reply.Bulk(names_only ? name : ctx.server.acl().DescribeUser(*user));
  }
}

void Cat(CommandContext& ctx) {
  const auto& cats = AclUsers::Categories();
  if (ctx.argc() == 2) {
    ctx.reply.ArrayHeader(cats.size());
    for (std::string_view c : cats) ctx.reply.Bulk(c);
    return;
  }
  std::string want = LowerAscii(ctx.arg(2));
  if (std::find(cats.begin(), cats.end(), want) == cats.end()) {
    ctx.Error(fmt::format(protocol::err::kAclUnknownCategory, ctx.arg(2).substr(0, 128)));
    return;
  }
  std::vector<std::string_view> names;
  for (const CommandSpec* spec : ctx.server.table().all_rows()) {
    for (std::string_view c : AclCategories(*spec)) {
      if (c == want) names.push_back(spec->name);
    }
  }
  ctx.reply.ArrayHeader(names.size());
  for (std::string_view n : names) ctx.reply.Bulk(n);
}

void GenPass(CommandContext& ctx) {
  constexpr int64_t kMaxBits = 4096;
  int64_t bits = 256;
  if (ctx.argc() == 3 && !ctx.IntArg(2, &bits)) return;
  if (bits <= 0 || bits > kMaxBits) {
    ctx.Error(fmt::format(protocol::err::kAclGenpassBits, kMaxBits));
    return;
  }
  static const char kHex[] = "0123456789abcdef";
  std::random_device rd;  // the kernel's CSPRNG
  std::string out;
  const int64_t chars = (bits + 3) / 4;
  while (static_cast<int64_t>(out.size()) < chars) {
    uint32_t v = rd();
    for (int i = 0; i < 8 && static_cast<int64_t>(out.size()) < chars; i++, v >>= 4) out += kHex[v & 15];
  }
  ctx.reply.Bulk(out);
}

std::string_view ReasonName(AclResult r) {
  switch (r) {
    case AclResult::kDeniedCommand: return "command";
    case AclResult::kDeniedKey: return "key";
    case AclResult::kDeniedChannel: return "channel";
    case AclResult::kDeniedAuth: return "auth";
    case AclResult::kOk: break;
  }
  return "unknown";
}

void Log(CommandContext& ctx) {
  int64_t count = 10;
  if (ctx.argc() == 3) {
    if (EqualsIgnoreCase(ctx.arg(2), "RESET")) {
      ctx.server.acl().ResetLog();
      ctx.reply.Ok();
      return;
    }
    if (!ctx.IntArg(2, &count)) return;
    if (count < 0) count = 0;
  }
  const auto& log = ctx.server.acl().log();
  count = std::min<int64_t>(count, static_cast<int64_t>(log.size()));
  ctx.reply.ArrayHeader(count);
  const int64_t now = NowMs();
  for (int64_t i = 0; i < count; i++) {
    const AclLogEntry& e = log[i];
    auto& r = ctx.reply;
    r.MapHeader(7);
    r.Bulk("count");
    r.Integer(static_cast<int64_t>(e.count));
    r.Bulk("reason");
    r.Bulk(ReasonName(e.reason));
    r.Bulk("context");
    r.Bulk(e.context);
    r.Bulk("object");
    r.Bulk(e.object);
    r.Bulk("username");
    r.Bulk(e.username);
    r.Bulk("age-seconds");
    r.Double(static_cast<double>(now - e.ctime_ms) / 1000);
    r.Bulk("client-info");
    r.Bulk(e.client_info);
  }
}

void DryRun(CommandContext& ctx) {
  AclUser* u = ctx.server.acl().Find(ctx.arg(2));
  if (u == nullptr) {
    ctx.Error(fmt::format(protocol::err::kAclUserNotFound, ctx.arg(2)));
    return;
  }
  std::span<const std::string_view> argv = ctx.args.subspan(3);
  const CommandSpec* spec = ctx.server.table().Lookup(argv);
  if (spec == nullptr) {
    ctx.Error(fmt::format(protocol::err::kAclCommandNotFound, ctx.arg(3)));
    return;
  }
  const int argc = static_cast<int>(argv.size());
  if ((spec->arity > 0 && argc != spec->arity) || argc < -spec->arity) {
    ctx.Error(fmt::format(protocol::err::kWrongArity, spec->name));
    return;
  }
  int idx = 0;
  switch (ctx.server.acl().Check(*u, *spec, argv, &idx)) {
    case AclResult::kOk:
      ctx.reply.Ok();
      return;
    case AclResult::kDeniedKey:
      ctx.reply.Bulk(fmt::format("This user has no permissions to access the '{}' key", argv[idx]));
      return;
    case AclResult::kDeniedChannel:
      ctx.reply.Bulk(fmt::format("This user has no permissions to access the '{}' channel", argv[idx]));
      return;
    default:
      ctx.reply.Bulk(fmt::format("This user has no permissions to run the '{}' command", spec->name));
  }
}

void LoadOrSave(CommandContext& ctx, bool load) {
  const std::string path = ctx.server.config().ValueOf("aclfile");
  if (path.empty()) {
    ctx.Error(protocol::err::kAclNoFile);
    return;
  }
  if (load) {
    Status s = ctx.server.ReloadAclFile(path, &ctx.client);
    if (!s.ok()) {
      ctx.Error(s);
      return;
    }
    ctx.reply.Ok();
    return;
  }
  Status s = ctx.server.SaveAclFile(path);
  if (!s.ok()) {
    ctx.server.Log(3, s.message());
    ctx.Error(protocol::err::kAclSaveFailed);
    return;
  }
  ctx.reply.Ok();
}

void Help(CommandContext& ctx) {
  ctx.ReplyHelp({
      "CAT [<category>]",
      "    List all commands that belong to <category>, or all command categories",
      "    when no category is specified.",
      "DELUSER <username> [<username> ...]",
      "    Delete a list of users.",
      "DRYRUN <username> <command> [<arg> ...]",
      "    Returns whether the user can execute the given command without executing the command.",
      "GETUSER <username>",
      "    Get the user's details.",
      "GENPASS [<bits>]",
      "    Generate a secure 256-bit user password. The optional `bits` argument can",
      "    be used to specify a different size.",
      "LIST",
      "    Show users details in config file format.",
      "LOAD",
      "    Reload users from the ACL file.",
      "LOG [<count> | RESET]",
      "    Show the ACL log entries.",
      "SAVE",
      "    Save the current config to the ACL file.",
      "SETUSER <username> <attribute> [<attribute> ...]",
      "    Create or modify a user with the specified attributes.",
      "USERS",
      "    List all the registered usernames.",
      "WHOAMI",
      "    Return the current connection username.",
  });
}

void Acl(CommandContext& ctx) {
  const std::string sub = LowerAscii(ctx.arg(1));
  const size_t argc = ctx.argc();
  if (sub == "setuser") return SetUser(ctx);
  if (sub == "deluser") return DelUser(ctx);
  if (sub == "getuser") return GetUser(ctx);
  if (sub == "list" || sub == "users") return ListUsers(ctx, sub == "users");
  if (sub == "whoami") {
    if (ctx.client.user != nullptr) {
      ctx.reply.Bulk(ctx.client.user->name);
    } else {
      ctx.reply.Null();
    }
    return;
  }
  if (sub == "load" || sub == "save") return LoadOrSave(ctx, sub == "load");
  if (sub == "cat" && argc <= 3) return Cat(ctx);
  if (sub == "genpass" && argc <= 3) return GenPass(ctx);
  if (sub == "log" && argc <= 3) return Log(ctx);
  if (sub == "dryrun") return DryRun(ctx);
  if (sub == "help") return Help(ctx);
  ctx.SubcommandError();
}

// Every rule of SETUSER may hold a password (">pw").
bool SetUserSecret(std::span<const std::string_view>, size_t i) { return i >= 2; }

constexpr uint32_t kAclAdm = kAdmin | kNoScript | kLoading | kStale;
constexpr uint32_t kAclOpen = kNoScript | kLoading | kStale;

const SubcommandSpec kAclSubs[] = {
    {"cat", -2, kAclOpen, "List the ACL categories or the commands inside a category"},
    {"deluser", -3, kAclAdm, "Remove the specified ACL users and the associated rules"},
    {"dryrun", -4, kAclAdm, "Returns whether the user can execute the given command without executing the command."},
    {"genpass", -2, kAclOpen, "Generate a pseudorandom secure password to use for ACL users"},
    {"getuser", 3, kAclAdm, "Get the rules for a specific ACL user"},
    {"help", 2, kLoading | kStale, "Show helpful text about the different subcommands"},
    {"list", 2, kAclAdm, "List the current ACL rules in ACL config file format"},
    {"load", 2, kAclAdm, "Reload the ACLs from the configured ACL file"},
    {"log", -2, kAclAdm, "List latest events denied because of ACLs in place"},
    {"save", 2, kAclAdm, "Save the current ACL rules in the configured ACL file"},
    {"setuser", -3, kAclAdm, "Modify or create the rules for a specific ACL user", 0, 0, 0, {}, SetUserSecret},
    {"users", 2, kAclAdm, "List the username of all the configured ACL rules"},
    {"whoami", 2, kAclOpen, "Return the name of the user associated to the current connection"},
};

const CommandSpec kCommands[] = {
    {"acl", -2, 0, 0, 0, 0, Acl, "A container for Access List Control commands ", "server", kAclSubs},
};

}  // namespace

std::span<const CommandSpec> AclCommands() { return kCommands; }

}  // namespace feedkv::server
