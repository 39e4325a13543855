// Connection commands: PING, ECHO, HELLO, AUTH, SELECT, QUIT, RESET, CLIENT,
// READONLY, READWRITE.
#include <fmt/format.h>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/acl.h"
#include "server/commands/client_info.h"
#include "server/commands/client_tracking.h"
#include "server/network.h"
#include "server/server.h"
#include "server/startup.h"

namespace feedkv::server {

namespace {

void Ping(CommandContext& ctx) {
  if (ctx.argc() > 2) {
    ctx.Error(protocol::err::kPingArity);
    return;
  }
  // A subscribed RESP2 connection gets ["pong", message], as Redis.
  if (ctx.client.resp == 2 && ctx.client.subscribed()) {
    ctx.reply.ArrayHeader(2);
    ctx.reply.Bulk("pong");
    ctx.reply.Bulk(ctx.argc() == 2 ? ctx.arg(1) : std::string_view());
    return;
  }
  if (ctx.argc() == 2) {
    ctx.reply.Bulk(ctx.arg(1));
  } else {
    ctx.reply.Simple("PONG");
  }
}

void Echo(CommandContext& ctx) { ctx.reply.Bulk(ctx.arg(1)); }

// AUTH and HELLO AUTH: logs a failure in the ACL log (object: the command
// as typed), as Redis's ACLAuthenticateUser.
bool Authenticate(CommandContext& ctx, std::string_view user, std::string_view pass) {
  AclUser* u = ctx.server.acl().Authenticate(user, pass);
  if (u == nullptr) {
    ctx.server.LogAclDenial(ctx.client, AclResult::kDeniedAuth, std::string(ctx.arg(0)), user);
    return false;
  }
  ctx.client.user = u;
  ctx.client.authenticated = true;
  return true;
}

void Auth(CommandContext& ctx) {
  if (ctx.argc() > 3) {
    ctx.SyntaxError();
    return;
  }
  if (ctx.argc() == 2 && ctx.server.acl().default_user()->nopass) {
    ctx.Error(protocol::err::kAuthNotConfigured);
    return;
  }
  std::string_view user = ctx.argc() == 3 ? ctx.arg(1) : "default";
  std::string_view pass = ctx.argc() == 3 ? ctx.arg(2) : ctx.arg(1);
  if (!Authenticate(ctx, user, pass)) {
    ctx.Error(protocol::err::kWrongPass);
    return;
  }
  ctx.reply.Ok();
}

void WriteHelloMap(CommandContext& ctx) {
  auto& r = ctx.reply;
  r.MapHeader(7);
  r.Bulk("server");
  r.Bulk("redis");
  r.Bulk("version");
  r.Bulk(kRedisCompatVersion);
  r.Bulk("proto");
  r.Integer(ctx.client.resp);
  r.Bulk("id");
  r.Integer(static_cast<int64_t>(ctx.client.id));
  r.Bulk("mode");
  r.Bulk("standalone");
  r.Bulk("role");
  r.Bulk("master");
  r.Bulk("modules");
  r.ArrayHeader(0);
}

void Hello(CommandContext& ctx) {
  int proto = ctx.client.resp;
  size_t i = 1;
  if (ctx.argc() >= 2) {
    int64_t v;
    if (!ParseCanonicalInt64(ctx.arg(1), &v)) {
      ctx.Error(protocol::err::kProtocolVersionNotInteger);
      return;
    }
    if (v < 2 || v > 3) {
      ctx.Error(protocol::err::kNoProto);
      return;
    }
    proto = static_cast<int>(v);
    i = 2;
  }
  std::string setname;
  bool has_setname = false;
  for (; i < ctx.argc(); i++) {
    if (EqualsIgnoreCase(ctx.arg(i), "AUTH") && i + 2 < ctx.argc()) {
      if (!Authenticate(ctx, ctx.arg(i + 1), ctx.arg(i + 2))) {
        ctx.Error(protocol::err::kWrongPass);
        return;
      }
      i += 2;
    } else if (EqualsIgnoreCase(ctx.arg(i), "SETNAME") && i + 1 < ctx.argc()) {
      setname = std::string(ctx.arg(i + 1));
      has_setname = true;
      i += 1;
    } else {
      ctx.Error(fmt::format(protocol::err::kHelloSyntax, ctx.arg(i)));
      return;
    }
  }
  if (!ctx.client.authenticated && ctx.server.acl().DefaultRequiresAuth()) {
    ctx.Error("NOAUTH HELLO must be called with the client already authenticated, otherwise "
              "the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the "
              "client and select the RESP protocol version at the same time");
    return;
  }
  if (has_setname) ctx.client.name = setname;
  ctx.client.resp = proto;
  ctx.reply = protocol::ReplyWriter(&ctx.client.out, proto);
  WriteHelloMap(ctx);
}

void Select(CommandContext& ctx) {
  int64_t idx;
  if (!ParseCanonicalInt64(ctx.arg(1), &idx)) {
    ctx.Error(protocol::err::kNotInteger);
    return;
  }
  if (idx < 0 || idx >= ctx.server.num_dbs()) {
    ctx.Error(protocol::err::kDbIndexOutOfRange);
    return;
  }
  ctx.client.db = static_cast<int>(idx);
  ctx.reply.Ok();
}

void Quit(CommandContext& ctx) {
  ctx.reply.Ok();
  ctx.client.close_after_reply = true;
}

void Reset(CommandContext& ctx) {
  Client& c = ctx.client;
  ctx.server.UnwatchAll(c);
  c.in_multi = c.multi_error = false;
  c.queued.Clear();
  c.db = 0;
  c.resp = 2;
  c.name.clear();
  c.reply_mode = Client::ReplyMode::kOn;
  c.no_evict = false;
  ctx.server.pubsub().UnsubscribeAll(&c);
  ctx.server.tracking().Disable(c);
  if (c.monitor) {
    ctx.server.RemoveMonitor(&c);
    c.monitor = false;
  }
  ctx.server.SetDefaultAuth(c);
  ctx.reply = protocol::ReplyWriter(&c.out, 2);
  ctx.reply.Simple("RESET");
}

void OkReply(CommandContext& ctx) { ctx.reply.Ok(); }

// AUTH's user name and password; HELLO's after its AUTH keyword.
bool AuthSecret(std::span<const std::string_view>, size_t i) { return i >= 1; }
bool HelloSecret(std::span<const std::string_view> argv, size_t i) {
  for (size_t j = 2; j + 2 < argv.size(); j++) {
    if (EqualsIgnoreCase(argv[j], "AUTH")) return i == j + 1 || i == j + 2;
  }
  return false;
}

}  // namespace

std::string ClientInfoLine(const Server& server, const Client& c) {
  int64_t now = NowMs();
  // Redis's flag letters, in its order.
  std::string flags;
  if (c.monitor) flags += 'O';
  if (c.subscribed()) flags += 'P';
  if (c.in_multi) flags += 'x';
  if (c.blocked) flags += 'b';
  if (c.tracking.on) flags += 't';
  if (c.tracking.broken_redirect) flags += 'R';
  if (c.tracking.bcast) flags += 'B';
  if (c.watch_dirty) flags += 'd';
  if (c.close_after_reply) flags += 'c';
  if (c.no_evict) flags += 'e';
  if (flags.empty()) flags = "N";
  return fmt::format(
      "id={} addr={} laddr={} fd={} name={} age={} idle={} flags={} db={} sub={} psub={} ssub={} "
      "multi={} qbuf={} qbuf-free={} argv-mem=0 multi-mem=0 rbs=16384 rbp=0 obl=0 oll=0 omem={} "
      "tot-mem={} events=r cmd={} user={} redir={} resp={} lib-name={} lib-ver={}",
      c.id, c.addr, c.laddr, c.fd, c.name, (now - c.created_ms) / 1000,
      (now - c.last_interaction_ms) / 1000, flags, c.db, c.channels.size(), c.patterns.size(),
      c.shard_channels.size(),
      c.in_multi ? static_cast<int64_t>(c.queued.size()) : -1, c.query_buffer_size,
      c.query_buffer_free, c.OutputBufferBytes(),
      c.out.capacity() + 1024, c.last_command == nullptr ? std::string_view("NULL") : c.last_command->name,
      c.user != nullptr ? std::string_view(c.user->name) : std::string_view("default"),
      c.tracking.on ? static_cast<int64_t>(c.tracking.redirect) : -1, c.resp,
      c.lib_name, c.lib_ver);
  (void)server;
}

namespace {

// Redis's client types (CLIENT LIST TYPE, CLIENT KILL TYPE), as its
// getClientType (a MONITOR is a normal client).
enum class ClientType { kNormal, kReplica, kMaster, kPubSub };

ClientType TypeOf(const Client& c) {
  if (c.replica && !c.monitor) return ClientType::kReplica;
  if (c.subscribed()) return ClientType::kPubSub;
  return ClientType::kNormal;
}

// Redis's getClientTypeByName; replies Redis's error on an unknown name.
bool ParseClientType(CommandContext& ctx, std::string_view name, ClientType* out) {
  if (EqualsIgnoreCase(name, "normal")) {
    *out = ClientType::kNormal;
  } else if (EqualsIgnoreCase(name, "replica") || EqualsIgnoreCase(name, "slave")) {
    *out = ClientType::kReplica;
  } else if (EqualsIgnoreCase(name, "master")) {
    *out = ClientType::kMaster;
  } else if (EqualsIgnoreCase(name, "pubsub")) {
    *out = ClientType::kPubSub;
  } else {
    ctx.Error(fmt::format(protocol::err::kUnknownClientType, name));
    return false;
  }
  return true;
}

// CLIENT LIST [TYPE type] | [ID id [id ...]]: the two filters exclude each
// other, as in Redis 7. IDs are listed in argument order (repeats repeat);
// unknown IDs are skipped.
void ClientList(CommandContext& ctx) {
  const auto& conns = ctx.server.connections();
  std::string out;
  if (ctx.argc() == 4 && EqualsIgnoreCase(ctx.arg(2), "TYPE")) {
    ClientType type;
    if (!ParseClientType(ctx, ctx.arg(3), &type)) return;
    for (const auto& [id, conn] : conns) {
      if (TypeOf(conn->client()) == type) out += ClientInfoLine(ctx.server, conn->client()) + "\n";
    }
  } else if (ctx.argc() > 3 && EqualsIgnoreCase(ctx.arg(2), "ID")) {
    std::vector<const Client*> found;
    for (size_t i = 3; i < ctx.argc(); i++) {
      int64_t id;
      if (!ParseCanonicalInt64(ctx.arg(i), &id)) {
        ctx.Error(protocol::err::kInvalidClientId);
        return;
      }
      auto it = id > 0 ? conns.find(static_cast<uint64_t>(id)) : conns.end();
      if (it != conns.end()) found.push_back(&it->second->client());
    }
    for (const Client* c : found) out += ClientInfoLine(ctx.server, *c) + "\n";
  } else if (ctx.argc() != 2) {
    ctx.SyntaxError();
    return;
  } else {
    for (const auto& [id, conn] : conns) out += ClientInfoLine(ctx.server, conn->client()) + "\n";
  }
  ctx.reply.Verbatim(out);
}

// Redis's CLIENT HELP, less the subcommands feedkv does not have.
void ClientHelp(CommandContext& ctx) {
  ctx.ReplyHelp({
      "CACHING (YES|NO)",
      "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
      "GETREDIR",
      "    Return the client ID we are redirecting to when tracking is enabled.",
      "GETNAME",
      "    Return the name of the current connection.",
      "ID",
      "    Return the ID of the current connection.",
      "INFO",
      "    Return information about the current client connection.",
      "KILL <ip:port>",
      "    Kill connection made from <ip:port>.",
      "KILL <option> <value> [<option> <value> [...]]",
      "    Kill connections. Options are:",
      "    * ADDR (<ip:port>|<unixsocket>:0)",
      "      Kill connections made from the specified address",
      "    * LADDR (<ip:port>|<unixsocket>:0)",
      "      Kill connections made to specified local address",
      "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
      "      Kill connections by type.",
      "    * USER <username>",
      "      Kill connections authenticated by <username>.",
      "    * SKIPME (YES|NO)",
      "      Skip killing current connection (default: yes).",
      "LIST [options ...]",
      "    Return information about client connections. Options:",
      "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
      "      Return clients of specified type.",
      "UNPAUSE",
      "    Stop the current client pause, resuming traffic.",
      "PAUSE <timeout> [WRITE|ALL]",
      "    Suspend all, or just write, clients for <timeout> milliseconds.",
      "REPLY (ON|OFF|SKIP)",
      "    Control the replies sent to the current connection.",
      "SETNAME <name>",
      "    Assign the name <name> to the current connection.",
      "UNBLOCK <clientid> [TIMEOUT|ERROR]",
      "    Unblock the specified blocked client.",
      "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
      "         [OPTIN] [OPTOUT] [NOLOOP]",
      "    Control server assisted client side caching.",
      "TRACKINGINFO",
      "    Report tracking status for the current connection.",
      "NO-EVICT (ON|OFF)",
      "    Protect current client connection from eviction.",
  });
}

bool ValidClientName(std::string_view n) {
  for (char ch : n) {
    if (ch < '!' || ch > '~') return false;
  }
  return true;
}

void ClientCmd(CommandContext& ctx) {
  std::string_view sub = ctx.arg(1);
  Client& c = ctx.client;
  auto& r = ctx.reply;
  if (EqualsIgnoreCase(sub, "ID") && ctx.argc() == 2) {
    r.Integer(static_cast<int64_t>(c.id));
  } else if (EqualsIgnoreCase(sub, "SETNAME") && ctx.argc() == 3) {
    if (!ValidClientName(ctx.arg(2))) {
      ctx.Error(protocol::err::kClientNameBadChars);
      return;
    }
    c.name = std::string(ctx.arg(2));
    r.Ok();
  } else if (EqualsIgnoreCase(sub, "GETNAME") && ctx.argc() == 2) {
    if (c.name.empty()) {
      r.Null();
    } else {
      r.Bulk(c.name);
    }
  } else if (EqualsIgnoreCase(sub, "SETINFO") && ctx.argc() == 4) {
    std::string_view attr = ctx.arg(2);
    if (!ValidClientName(ctx.arg(3))) {
      ctx.Error(fmt::format(protocol::err::kClientAttrBadChars, attr));
      return;
    }
    if (EqualsIgnoreCase(attr, "LIB-NAME")) {
      c.lib_name = std::string(ctx.arg(3));
    } else if (EqualsIgnoreCase(attr, "LIB-VER")) {
      c.lib_ver = std::string(ctx.arg(3));
    } else {
      ctx.Error(fmt::format(protocol::err::kUnrecognizedOption, attr));
      return;
    }
    r.Ok();
  } else if (EqualsIgnoreCase(sub, "INFO") && ctx.argc() == 2) {
    r.Verbatim(ClientInfoLine(ctx.server, c) + "\n");
  } else if (EqualsIgnoreCase(sub, "LIST")) {
    ClientList(ctx);
  } else if (EqualsIgnoreCase(sub, "KILL") && ctx.argc() >= 3) {
    // CLIENT KILL addr | CLIENT KILL ID id | ADDR addr | LADDR addr | SKIPME yes/no
    bool old_form = ctx.argc() == 3;
    std::vector<Connection*> victims;
    bool skipme = true;
    std::vector<ClientType> types;  // TYPE filters, checked before any match
    for (size_t i = 2; !old_form && i + 1 < ctx.argc(); i += 2) {
      if (EqualsIgnoreCase(ctx.arg(i), "ID")) {
        int64_t id;
        if (!ParseCanonicalInt64(ctx.arg(i + 1), &id) || id < 1) {
          ctx.Error(protocol::err::kClientIdNotPositive);
          return;
        }
      }
      if (EqualsIgnoreCase(ctx.arg(i), "SKIPME") && !EqualsIgnoreCase(ctx.arg(i + 1), "yes") &&
          !EqualsIgnoreCase(ctx.arg(i + 1), "no")) {
        ctx.SyntaxError();
        return;
      }
      if (EqualsIgnoreCase(ctx.arg(i), "USER") && ctx.server.acl().Find(ctx.arg(i + 1)) == nullptr) {
        ctx.Error(fmt::format(protocol::err::kNoSuchUser, ctx.arg(i + 1)));
        return;
      }
      if (!EqualsIgnoreCase(ctx.arg(i), "TYPE")) continue;
      if (!ParseClientType(ctx, ctx.arg(i + 1), &types.emplace_back())) return;
    }
    for (const auto& [id, conn] : ctx.server.connections()) {
      const Client& o = conn->client();
      bool match = true;
      if (old_form) {
        match = o.addr == ctx.arg(2);
      } else {
        for (size_t i = 2; i + 1 < ctx.argc(); i += 2) {
          std::string_view k = ctx.arg(i), v = ctx.arg(i + 1);
          if (EqualsIgnoreCase(k, "ID")) {
            match &= std::to_string(o.id) == v;
          } else if (EqualsIgnoreCase(k, "ADDR")) {
            match &= o.addr == v;
          } else if (EqualsIgnoreCase(k, "LADDR")) {
            match &= o.laddr == v;
          } else if (EqualsIgnoreCase(k, "USER")) {
            match &= o.user != nullptr && o.user->name == v;
          } else if (EqualsIgnoreCase(k, "SKIPME")) {
            skipme = EqualsIgnoreCase(v, "yes");
          } else if (EqualsIgnoreCase(k, "TYPE")) {
            (void)v;
            for (ClientType t : types) match &= TypeOf(o) == t;
          } else {
            ctx.SyntaxError();
            return;
          }
        }
        if ((ctx.argc() - 2) % 2 != 0) {
          ctx.SyntaxError();
          return;
        }
      }
      if (match && (!skipme || &o != &c || old_form)) victims.push_back(conn.get());
    }
    if (old_form && victims.empty()) {
      ctx.Error(protocol::err::kNoSuchClient);
      return;
    }
    for (Connection* v : victims) {
      if (&v->client() == &c) {
        c.close_after_reply = true;
      } else {
        v->Close();
      }
    }
    if (old_form) {
      r.Ok();
    } else {
      r.Integer(static_cast<int64_t>(victims.size()));
    }
  } else if (EqualsIgnoreCase(sub, "UNBLOCK") && (ctx.argc() == 3 || ctx.argc() == 4)) {
    // CLIENT UNBLOCK id [TIMEOUT|ERROR]: ends another client's blocking command
    // (BZPOPMIN, WAIT...) as if it timed out, or with -UNBLOCKED. The reason is
    // checked before the id, as Redis.
    WaitEnd how = WaitEnd::kTimeout;
    if (ctx.argc() == 4) {
      if (EqualsIgnoreCase(ctx.arg(3), "ERROR")) {
        how = WaitEnd::kUnblockError;
      } else if (!EqualsIgnoreCase(ctx.arg(3), "TIMEOUT")) {
        return ctx.Error(protocol::err::kUnblockReason);
      }
    }
    int64_t id;
    if (!ctx.IntArg(2, &id)) return;
    r.Integer(id > 0 && ctx.server.waiting().Unblock(static_cast<uint64_t>(id), how) ? 1 : 0);
  } else if (EqualsIgnoreCase(sub, "PAUSE") && (ctx.argc() == 3 || ctx.argc() == 4)) {
    // CLIENT PAUSE timeout [WRITE|ALL]: commands of every client (ALL, the
    // default) or those that may write (WRITE) wait until the pause ends.
    int64_t timeout;
    if (!ctx.TimeoutMsArg(2, &timeout)) return;
    bool all = true;
    if (ctx.argc() == 4) {
      if (EqualsIgnoreCase(ctx.arg(3), "WRITE")) {
        all = false;
      } else if (!EqualsIgnoreCase(ctx.arg(3), "ALL")) {
        ctx.Error(protocol::err::kClientPauseMode);
        return;
      }
    }
    ctx.server.PauseClients(NowMs() + timeout, all);
    r.Ok();
  } else if (EqualsIgnoreCase(sub, "UNPAUSE") && ctx.argc() == 2) {
    ctx.server.UnpauseClients();
    r.Ok();
  } else if (EqualsIgnoreCase(sub, "NO-EVICT") && ctx.argc() == 3) {
    c.no_evict = EqualsIgnoreCase(ctx.arg(2), "on");
    r.Ok();
  } else if (EqualsIgnoreCase(sub, "NO-TOUCH") && ctx.argc() == 3) {
    r.Ok();
  } else if (EqualsIgnoreCase(sub, "REPLY") && ctx.argc() == 3) {
    std::string_view m = ctx.arg(2);
    if (EqualsIgnoreCase(m, "ON")) {
      c.reply_mode = Client::ReplyMode::kOn;
      c.reply_forced = true;  // this +OK is sent even if the call started skipped
      r.Ok();
    } else if (EqualsIgnoreCase(m, "OFF")) {
      c.reply_mode = Client::ReplyMode::kOff;
    } else if (EqualsIgnoreCase(m, "SKIP")) {
      if (c.reply_mode == Client::ReplyMode::kOn) c.reply_mode = Client::ReplyMode::kSkip;
    } else {
      ctx.SyntaxError();
    }
  } else if (EqualsIgnoreCase(sub, "TRACKING") && ctx.argc() >= 3) {
    ClientTrackingCmd(ctx);
  } else if (EqualsIgnoreCase(sub, "CACHING") && ctx.argc() >= 3) {
    ClientCachingCmd(ctx);
  } else if (EqualsIgnoreCase(sub, "GETREDIR") && ctx.argc() == 2) {
    ClientGetRedirCmd(ctx);
  } else if (EqualsIgnoreCase(sub, "TRACKINGINFO") && ctx.argc() == 2) {
    ClientTrackingInfoCmd(ctx);
  } else if (EqualsIgnoreCase(sub, "HELP")) {
    ClientHelp(ctx);
  } else {
    ctx.SubcommandError();
  }
}

constexpr uint32_t kConn = kNoScript | kLoading | kStale | kFast | kAllowBusy;
constexpr uint32_t kCli = kNoScript | kLoading | kStale;

const SubcommandSpec kClientSubs[] = {
    {"id", 2, kCli, "Returns the client ID for the current connection"},
    {"setname", 3, kCli, "Set the current connection name"},
    {"getname", 2, kCli, "Get the current connection name"},
    {"setinfo", 4, kCli, "Sets information specific to the client or connection."},
    {"info", 2, kCli, "Returns information about the current client connection."},
    {"list", -2, kAdmin | kCli, "Get the list of client connections"},
    {"kill", -3, kAdmin | kCli, "Kill the connection of a client"},
    {"no-evict", 3, kAdmin | kCli, "Set client eviction mode for the current connection"},
    {"pause", -3, kAdmin | kCli, "Stop processing commands from clients for some time"},
    {"unblock", -3, kAdmin | kCli, "Unblock a client blocked in a blocking command from a different connection"},
    {"unpause", 2, kAdmin | kCli, "Resume processing of clients that were paused"},
    {"no-touch", 3, kCli, "Controls whether commands sent by the client affect the LRU/LFU of accessed keys."},
    {"reply", 3, kCli, "Instruct the server whether to reply to commands"},
    {"tracking", -3, kCli, "Enable or disable server assisted client side caching support"},
    {"caching", 3, kCli, "Instruct the server about tracking or not keys in the next request"},
    {"getredir", 2, kCli, "Get tracking notifications redirection client ID if any"},
    {"trackinginfo", 2, kCli, "Return information about server assisted client side caching for the current connection"},
    {"help", 2, kLoading | kStale, "Show helpful text about the different subcommands"},
};

const CommandSpec kCommands[] = {
    {"ping", -1, kFast | kSubscribedContext, 0, 0, 0, Ping, "Ping the server", "connection"},
    {"echo", 2, kFast | kLoading | kStale, 0, 0, 0, Echo, "Echo the given string", "connection"},
    {"auth", -2, kConn | kNoAuth, 0, 0, 0, Auth, "Authenticate to the server", "connection", {}, {}, {}, 0,
     nullptr, AuthSecret},
    {"hello", -1, kConn | kNoAuth, 0, 0, 0, Hello, "Handshake with Redis", "connection", {}, {}, {}, 0,
     nullptr, HelloSecret},
    {"select", 2, kLoading | kStale | kFast, 0, 0, 0, Select, "Change the selected database for the current connection", "connection"},
    {"quit", -1, kConn | kNoAuth | kTxControl | kSubscribedContext, 0, 0, 0, Quit, "Close the connection", "connection"},
    {"reset", 1, kConn | kNoAuth | kTxControl | kSubscribedContext, 0, 0, 0, Reset, "Reset the connection", "connection"},
    {"client", -2, 0, 0, 0, 0, ClientCmd, "A container for client connection commands", "connection",
     kClientSubs},
    {"readonly", 1, kFast | kLoading | kStale | kAclConnection, 0, 0, 0, OkReply, "Enables read queries for a connection to a cluster replica node", "cluster"},
    {"readwrite", 1, kFast | kLoading | kStale | kAclConnection, 0, 0, 0, OkReply, "Disables read queries for a connection to a cluster replica node", "cluster"},
};

}  // namespace

std::span<const CommandSpec> ConnectionCommands() { return kCommands; }

}  // namespace feedkv::server
