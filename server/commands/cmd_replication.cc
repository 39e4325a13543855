// Replication commands: REPLICAOF / SLAVEOF, ROLE, WAIT, WAITAOF, and the
// internal REPLCONF / PSYNC / SYNC a replica sends its master. The work is in
// server/replication/replication.h; these parse and reply.
#include <fmt/format.h>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/replication/replication.h"
#include "server/server.h"

namespace feedkv::server {

namespace {

// Without the subsystem (unit tests) the node is a master with no replicas.
Replication* Repl(CommandContext& ctx) { return ctx.server.replication(); }

void ReplicaOf(CommandContext& ctx) {
  if (Repl(ctx) == nullptr) {
    ctx.Error(protocol::err::kReplicationUnavailable);
    return;
  }
  Repl(ctx)->ReplicaOf(ctx);
}

void Replconf(CommandContext& ctx) {
  if (Repl(ctx) == nullptr) {
    ctx.reply.Ok();
    return;
  }
  Repl(ctx)->Replconf(ctx);
}

void Psync(CommandContext& ctx) {
  if (Repl(ctx) == nullptr) {
    ctx.Error(protocol::err::kReplicationUnavailable);
    return;
  }
  Repl(ctx)->Psync(ctx, true);
}

void Sync(CommandContext& ctx) {
  if (Repl(ctx) == nullptr) {
    ctx.Error(protocol::err::kReplicationUnavailable);
    return;
  }
  Repl(ctx)->Psync(ctx, false);
}

void Failover(CommandContext& ctx) {
  if (Repl(ctx) == nullptr) {
    ctx.Error(protocol::err::kFailoverNoReplicas);
    return;
  }
  Repl(ctx)->Failover(ctx);
}

void Role(CommandContext& ctx) {
  if (Repl(ctx) != nullptr) {
    Repl(ctx)->Role(ctx.reply);
    return;
  }
  ctx.reply.ArrayHeader(3);
  ctx.reply.Bulk("master");
  ctx.reply.Integer(static_cast<int64_t>(ctx.server.journal().end_offset()));
  ctx.reply.ArrayHeader(0);
}

int64_t Acked(Server& s, uint64_t offset, bool fsynced) {
  return s.replication() != nullptr ? s.replication()->ReplicasAcked(offset, fsynced) : 0;
}

// WAIT numreplicas timeout: the replicas that acknowledged this client's last
// write. Enough already, or not allowed to wait (inside MULTI, from the log):
// answer now, as Redis. Otherwise park until enough acknowledge or the timeout
// (0: forever) passes; other clients are served meanwhile.
void Wait(CommandContext& ctx) {
  if (ctx.server.replica_mode()) {
    ctx.Error(protocol::err::kWaitFromReplica);
    return;
  }
  int64_t n, timeout;
  if (!ctx.IntArg(1, &n)) return;
  if (!ctx.TimeoutMsArg(2, &timeout)) return;
  const uint64_t woff = ctx.client.woff;
  const int64_t acked = Acked(ctx.server, woff, false);
  if (acked >= n || !ctx.can_block()) {
    ctx.reply.Integer(acked);
    return;
  }
  WaitCondition cond;
  cond.what = WaitFor::kReplicaAcks;
  cond.offset = woff;
  cond.replicas = n;
  Server& server = ctx.server;
  ctx.server.waiting().Park(ctx.client, std::move(cond), timeout, [&server, woff](Client& c, WaitEnd) {
    protocol::ReplyWriter w(&c.out, c.resp);
    w.Integer(Acked(server, woff, false));
  });
}

// WAITAOF numlocal numreplicas timeout (Redis 7.2): waits until this client's
// last write is fsynced to the local AOF (numlocal 1) and acknowledged as
// fsynced by numreplicas replicas; replies [local, replicas].
void WaitAof(CommandContext& ctx) {
  int64_t numlocal, numreplicas, timeout;
  if (!ctx.IntArg(1, &numlocal) || !ctx.IntArg(2, &numreplicas)) return;
  if (!ctx.TimeoutMsArg(3, &timeout)) return;
  if (ctx.server.replica_mode()) {
    ctx.Error(protocol::err::kWaitAofOnReplica);
    return;
  }
  const bool aof_on = ctx.server.cfg().appendonly;
  if (numlocal > 0 && !aof_on) {
    ctx.Error(protocol::err::kWaitAofNoAppendonly);
    return;
  }
  const uint64_t woff = ctx.client.woff;
  auto local_acked = [aof_on, woff](Server& s) -> int64_t {
    return aof_on && s.waiting().durable() >= woff ? 1 : 0;
  };
  auto reply = [woff](protocol::ReplyWriter& w, Server& s, int64_t local) {
    w.ArrayHeader(2);
    w.Integer(local);
    w.Integer(Acked(s, woff, true));
  };
  const int64_t local = local_acked(ctx.server);
  if ((local >= numlocal && Acked(ctx.server, woff, true) >= numreplicas) || !ctx.can_block()) {
    reply(ctx.reply, ctx.server, local);
    return;
  }
  WaitCondition cond;
  cond.offset = woff;
  if (numreplicas > 0) {
    cond.what = WaitFor::kReplicaAcks;
    cond.replicas = numreplicas;
    cond.fsynced = true;
    cond.local_durable = numlocal > 0;
  } else {
    cond.what = WaitFor::kLogDurable;
  }
  Server& server = ctx.server;
  server.waiting().Park(ctx.client, std::move(cond), timeout,
                        [&server, local_acked, reply](Client& c, WaitEnd) {
                          protocol::ReplyWriter w(&c.out, c.resp);
                          reply(w, server, local_acked(server));
                        });
}

constexpr uint32_t kRepl = kAdmin | kNoScript | kStale;

const CommandSpec kCommands[] = {
    {"replicaof", 3, kRepl, 0, 0, 0, ReplicaOf, "Make the server a replica of another instance, or promote it as master.", "server"},
    {"slaveof", 3, kRepl, 0, 0, 0, ReplicaOf, "Make the server a replica of another instance, or promote it as master.", "server"},
    {"replconf", -1, kRepl | kLoading | kAllowBusy, 0, 0, 0, Replconf, "An internal command for configuring the replication stream", "server"},
    {"psync", -3, kRepl | kNoMulti, 0, 0, 0, Psync, "Internal command used for replication", "server"},
    {"sync", 1, kRepl | kNoMulti, 0, 0, 0, Sync, "Internal command used for replication", "server"},
    {"failover", -1, kRepl, 0, 0, 0, Failover, "Start a coordinated failover between this server and one of its replicas.", "server"},
    {"role", 1, kNoScript | kLoading | kStale | kFast | kAclAdmin | kAclDangerous, 0, 0, 0, Role, "Return the role of the instance in the context of replication", "server"},
    {"wait", 3, kAclConnection, 0, 0, 0, Wait, "Wait for the synchronous replication of all the write commands sent in the context of the current connection", "generic"},
    {"waitaof", 4, kAclConnection, 0, 0, 0, WaitAof, "Blocks until all of the preceding write commands sent by the connection are written to the append-only file of the master and/or replicas.", "generic"},
};

}  // namespace

std::span<const CommandSpec> ReplicationCommands() { return kCommands; }

}  // namespace feedkv::server
