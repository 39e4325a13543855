// Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH. Commands sent after
// MULTI are queued by Server::Execute (all but kTxControl rows) and run here, in
// one go, so they are atomic like everything on the command thread. Their
// changes reach the AOF as one batch.
#include <fmt/format.h>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/server.h"

namespace feedkv::server {

namespace {

void EndTransaction(Server& server, Client& c) {
  c.in_multi = false;
  c.multi_error = false;
  c.queued.Clear();
  server.UnwatchAll(c);
}

// As Redis's isWatchedKeyExpired: a watched key that has expired since WATCH
// changed, even if nothing has removed it yet. (WATCH drops a key already
// expired, so any expired key still here was live when watched.)
bool WatchedKeyExpired(CommandContext& ctx) {
  const int64_t now = ctx.now_ms();
  for (const WatchedKey& w : ctx.client.watched) {
    if (w.expired) continue;  // already stale when it came to be watched
    const Entry* e = ctx.server.db(w.db).Find(w.key);
    if (e != nullptr && e->has_expire && e->expire_ms() <= now) return true;
  }
  return false;
}

void Multi(CommandContext& ctx) {
  if (ctx.client.in_multi) {
    ctx.Error(protocol::err::kMultiNested);
    return;
  }
  ctx.client.in_multi = true;
  ctx.client.multi_error = false;
  ctx.reply.Ok();
}

void Exec(CommandContext& ctx) {
  Client& c = ctx.client;
  if (!c.in_multi) {
    ctx.Error(protocol::err::kExecWithoutMulti);
    return;
  }
  if (c.multi_error) {
    EndTransaction(ctx.server, c);
    ctx.Error(protocol::err::kExecAbort);
    return;
  }
  if (c.watch_dirty || WatchedKeyExpired(ctx)) {
    EndTransaction(ctx.server, c);
    ctx.reply.NullArray();
    return;
  }
  CommandQueue queued = std::move(c.queued);
  c.in_multi = false;
  c.queued.Clear();
  ctx.server.UnwatchAll(c);
  ctx.reply.ArrayHeader(queued.size());
  queued.Drain([&](const CommandSpec& spec, std::span<const std::string_view> argv) {
    // The ACL is checked again: the user's rules may have changed since queueing.
    if (c.user != nullptr && !c.user->unrestricted) {
      int idx = 0;
      AclResult r = ctx.server.acl().Check(*c.user, spec, argv, &idx);
      if (r != AclResult::kOk) {
        std::string object = r == AclResult::kDeniedCommand ? std::string(spec.name) : std::string(argv[idx]);
        ctx.server.LogAclDenial(c, r, std::move(object), {}, "multi");
        std::string_view why = r == AclResult::kDeniedKey       ? protocol::err::kNoPermExecKey
                               : r == AclResult::kDeniedChannel ? protocol::err::kNoPermExecChannel
                                                                : protocol::err::kNoPermExecCommand;
        const std::string msg = fmt::format(protocol::err::kNoPermExec, why);
        ctx.reply.Error(msg);
        ctx.server.CountError(msg);
        return;
      }
    }
    ctx.server.Call(c, spec, argv);
  });
}

void Discard(CommandContext& ctx) {
  if (!ctx.client.in_multi) {
    ctx.Error(protocol::err::kDiscardWithoutMulti);
    return;
  }
  EndTransaction(ctx.server, ctx.client);
  ctx.reply.Ok();
}

void Watch(CommandContext& ctx) {
  if (ctx.client.in_multi) {
    ctx.Error(protocol::err::kWatchInMulti);
    return;
  }
  for (size_t i = 1; i < ctx.argc(); i++) {
    // A key that is already logically expired counts as absent: expire it
    // now so a later write is seen as a change.
    ctx.db().Peek(ctx.arg(i), ctx.now_ms());
    ctx.server.Watch(ctx.client, ctx.client.db, ctx.arg(i));
  }
  ctx.reply.Ok();
}

void Unwatch(CommandContext& ctx) {
  ctx.server.UnwatchAll(ctx.client);
  ctx.reply.Ok();
}

constexpr uint32_t kTx = kNoScript | kLoading | kStale | kFast | kAllowBusy;

const CommandSpec kCommands[] = {
    {"multi", 1, kTx | kTxControl, 0, 0, 0, Multi, "Mark the start of a transaction block", "transactions"},
    {"exec", 1, kNoScript | kLoading | kStale | kSkipSlowlog | kTxControl, 0, 0, 0, Exec, "Execute all commands issued after MULTI", "transactions"},
    {"discard", 1, kTx | kTxControl, 0, 0, 0, Discard, "Discard all commands issued after MULTI", "transactions"},
    {"watch", -2, kTx | kTxControl, 1, -1, 1, Watch, "Watch the given keys to determine execution of the MULTI/EXEC block", "transactions"},
    {"unwatch", 1, kTx, 0, 0, 0, Unwatch, "Forget about all watched keys", "transactions"},
};

}  // namespace

std::span<const CommandSpec> TransactionCommands() { return kCommands; }

}  // namespace feedkv::server
