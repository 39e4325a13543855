// Replication: FAILOVER, as Redis 7's. The master pauses writes, waits until
// the chosen replica has acknowledged its whole log, then becomes that
// replica's replica with `PSYNC <replid> <offset+1> FAILOVER`; the replica,
// seeing its own master ask, promotes itself first and answers +CONTINUE. No
// acknowledged write is lost: none is accepted between the last ack and the
// hand-over. TIMEOUT without FORCE gives up and unpauses; with FORCE the
// hand-over happens anyway.
#include "server/replication/replication.h"

#include <fmt/format.h>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/replication/repl_util.h"
#include "server/server.h"

namespace feedkv::server {


namespace {

constexpr int64_t kPauseStepMs = 3600 * 1000;


}  // namespace

void Replication::Failover(CommandContext& ctx) {
  // As Redis's failoverCommand: ABORT alone, else the options, then the
  // state checks in its order.
  if (ctx.argc() == 2 && EqualsIgnoreCase(ctx.arg(1), "abort")) {
    if (failover_ == FailoverState::kNone) {
      ctx.Error(protocol::err::kNoFailover);
      return;
    }
    EndFailover("Failover manually aborted", true);
    ctx.reply.Ok();
    return;
  }
  std::string host;
  int64_t port = 0, timeout = 0;
  bool to = false, force = false;
  for (size_t i = 1; i < ctx.argc(); i++) {
    std::string_view a = ctx.arg(i);
    if (EqualsIgnoreCase(a, "timeout") && i + 1 < ctx.argc() && timeout == 0) {
      if (!ctx.IntArg(i + 1, &timeout)) return;
      if (timeout <= 0) {
        ctx.Error(protocol::err::kFailoverTimeout);
        return;
      }
      i++;
    } else if (EqualsIgnoreCase(a, "to") && i + 2 < ctx.argc() && !to) {
      if (!ctx.IntArg(i + 2, &port)) return;
      to = true;
      host = std::string(ctx.arg(i + 1));
      i += 2;
    } else if (EqualsIgnoreCase(a, "force") && !force) {
      force = true;
    } else {
      ctx.SyntaxError();
      return;
    }
  }
  const bool has_timeout = timeout > 0;
  if (failover_ != FailoverState::kNone) {
    ctx.Error(protocol::err::kFailoverInProgress);
    return;
  }
  if (is_replica()) {
    ctx.Error(protocol::err::kFailoverOnReplica);
    return;
  }
  size_t attached = 0;
  for (const auto& [id, r] : replicas_) attached += r.attached ? 1 : 0;
  if (attached == 0) {
    ctx.Error(protocol::err::kFailoverNoReplicas);
    return;
  }
  if (force && (!has_timeout || !to)) {
    ctx.Error(protocol::err::kFailoverForceNeedsTarget);
    return;
  }
  const Replica* target = nullptr;
  if (to) {
    for (const auto& [id, r] : replicas_) {
      if (r.attached && r.ip == host && r.listening_port == port) target = &r;
    }
    if (target == nullptr) {
      ctx.Error(protocol::err::kFailoverTargetNotReplica);
      return;
    }
    if (target->state != Replica::State::kOnline) {
      ctx.Error(protocol::err::kFailoverTargetOffline);
      return;
    }
  } else {
    // The online replica furthest along.
    for (const auto& [id, r] : replicas_) {
      if (r.attached && r.state == Replica::State::kOnline && (target == nullptr || r.ack > target->ack)) {
        target = &r;
      }
    }
    if (target == nullptr) {
      ctx.Error(protocol::err::kFailoverTargetOffline);
      return;
    }
  }
  failover_host_ = target->ip;
  failover_port_ = target->listening_port;
  failover_force_ = force;
  failover_deadline_ms_ = has_timeout ? NowMs() + timeout : 0;
  failover_ = FailoverState::kWaitingForSync;
  // No write is accepted from here: the target catches up with all of them.
  // (An hour at a time, renewed while waiting: a parked command's timer holds
  // the pause's end.)
  server_.PauseClients(NowMs() + kPauseStepMs, /*all=*/false);
  server_.Log(2, fmt::format("FAILOVER requested to {}:{}", failover_host_, failover_port_));
  ctx.reply.Ok();
}

void Replication::FailoverCron(int64_t now_ms) {
  if (failover_ != FailoverState::kNone) server_.PauseClients(now_ms + kPauseStepMs, false);
  if (failover_ == FailoverState::kWaitingForSync) {
    const uint64_t end = server_.journal().end_offset();
    bool synced = false;
    for (const auto& [id, r] : replicas_) {
      if (r.attached && r.ip == failover_host_ && r.listening_port == failover_port_) {
        synced = r.ack >= end;
      }
    }
    const bool timed_out = failover_deadline_ms_ != 0 && now_ms >= failover_deadline_ms_;
    if (timed_out && !synced && !failover_force_) {
      EndFailover("the replica did not catch up in time", false);
      return;
    }
    if (synced || timed_out) {
      server_.Log(2, fmt::format("Failover target {}:{} is {}; handing over", failover_host_,
                                 failover_port_, synced ? "in sync" : "not in sync (FORCE)"));
      failover_ = FailoverState::kInProgress;
      StartLink(failover_host_, failover_port_, /*failover=*/true);
    }
    return;
  }
  if (failover_ == FailoverState::kInProgress && link_shared_) {
    const LinkShared::State st = link_shared_->state.load();
    if (st == LinkShared::State::kUp) {
      EndFailover("", false);
    } else if (st == LinkShared::State::kDown) {
      EndFailover("the hand-over to the replica failed", true);
    }
  }
}

void Replication::EndFailover(const std::string& why, bool back_to_master) {
  if (failover_ == FailoverState::kNone) return;
  if (back_to_master && is_replica()) StopLink();
  failover_ = FailoverState::kNone;
  server_.UnpauseClients();
  if (why.empty()) {
    server_.Log(2, fmt::format("Failover to {}:{} complete: this node is its replica now",
                               failover_host_, failover_port_));
  } else {
    server_.Log(3, fmt::format("FAILOVER to {}:{} aborted: {}", failover_host_, failover_port_, why));
  }
}

}  // namespace feedkv::server
