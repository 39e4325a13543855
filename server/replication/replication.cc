#include "server/replication/replication.h"

#include "protocol/error_text.h"
#include "server/cold_tier.h"

#include <unistd.h>

#include <boost/asio/post.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <future>

#include <fmt/format.h>

#include "server/command_context.h"
#include "server/log_applier.h"
#include "server/replication/repl_util.h"
#include "server/network.h"
#include "server/persistence.h"
#include "server/server.h"
#include "storage/aof_reader.h"
#include "storage/file_io.h"
#include "storage/int_text.h"
#include "storage/rdb_format.h"

namespace feedkv::server {

using repl::RandomHex40;


using repl::ForEachLine;
using repl::IsHex40;
using repl::Words;
using repl::SplitHostPort;
using repl::kNoReplid;


Replication::Replication(Server& server, Persistence& persistence)
    : server_(server), persistence_(persistence) {
  server_.waiting().SetReplicaAckCounter(
      [this](uint64_t offset, bool fsynced) { return ReplicasAcked(offset, fsynced); });
  server_.waiting().SetDurableListener([this](uint64_t durable) {
    if (link_shared_) link_shared_->durable = std::min(durable, server_.journal().end_offset());
  });
}

Replication::~Replication() {
  server_.waiting().SetReplicaAckCounter(nullptr);
  server_.waiting().SetDurableListener(nullptr);
  StopLink();
  for (auto& [id, r] : replicas_) {
    if (r.sender) r.sender->RequestStop();
  }
  replicas_.clear();  // joins the senders
  finished_.clear();
}

std::string Replication::state_path() const {
  return JoinPath(server_.cfg().dir, "replication.state");
}

Status Replication::LoadState(bool* clean, bool* was_master) {
  std::string text;
  Status s = Env::Default()->ReadFile(state_path(), &text);
  if (!s.ok()) return s;
  *clean = false;
  *was_master = true;
  // One "key value" fact per line.
  ForEachLine(text, [&](std::string_view line) {
    std::vector<std::string_view> w = Words(line);
    if (w.size() != 2) return;
    std::string_view k = w[0], v = w[1];
    if (k == "replid" && IsHex40(v)) replid_ = std::string(v);
    if (k == "replid2" && IsHex40(v)) replid2_ = std::string(v);
    if (k == "second_offset") ParseCanonicalInt64(v, &second_offset_);
    if (k == "replica_id" && IsHex40(v)) replica_id_ = std::string(v);
    if (k == "clean") *clean = v == "yes";
    if (k == "role") *was_master = v == "master";
  });
  return Status::OK();
}

Status Replication::StoreState(bool clean) {
  std::string text = fmt::format(
      "# feedkv replication state; see docs/replication.md. Do not edit.\n"
      "replid {}\nreplid2 {}\nsecond_offset {}\nreplica_id {}\nrole {}\nclean {}\n",
      replid(), replid2_.empty() ? std::string(kNoReplid) : replid2_, second_offset_, replica_id_,
      is_replica() ? "replica" : "master", clean ? "yes" : "no");
  Status s = WriteFileAtomic(Env::Default(), state_path(), text);
  if (!s.ok()) server_.Log(3, "Could not store the replication state: " + s.ToString());
  return s;
}

bool Replication::Attach() {
  // A full sync cut by a crash left its staging directory: the old dataset
  // (already loaded) stands.
  Env* env = Env::Default();
  std::vector<std::string> names;
  env->ListDir(server_.cfg().dir, &names).PermitUnchecked();
  for (const auto& n : names) {
    if (!n.starts_with("sync-tmp-")) continue;
    const std::string stage = JoinPath(server_.cfg().dir, n);
    std::vector<std::string> files;
    env->ListDir(stage, &files).PermitUnchecked();
    for (const auto& f : files) env->RemoveFile(JoinPath(stage, f)).PermitUnchecked();
    ::rmdir(stage.c_str());
    server_.Log(2, "Removed " + stage + ", left by a full sync that did not finish");
  }
  bool clean = false, was_master = true;
  Status s = LoadState(&clean, &was_master);
  if (replica_id_.empty()) replica_id_ = RandomHex40(server_);
  if (!s.ok() || replid_.empty()) {
    replid_ = RandomHex40(server_);
  } else if (!clean && was_master) {
    // An unclean stop may have lost a tail that replicas already hold: the
    // history we continue is a new one, the old id valid up to our end.
    server_.Log(2, "Unclean restart: the replication ID changes (the old one stays valid up "
                   "to the recovered end of the log)");
    ShiftReplid();
  }
  StoreState(false).PermitUnchecked();
  LoadKnown().PermitUnchecked();
  server_.AddCronHook([this](int64_t now) { Cron(now); });
  server_.AddConfigHook([this](const std::string& name) {
    if ((name == "masterauth" || name == "masteruser") && link_shared_) {
      link_shared_->set_auth(server_.cfg().masteruser, server_.cfg().masterauth);
    }
  });
  server_.AddInfoSection("replication", [this](std::string* out) { Info(out); });
  server_.AddShutdownHook([this](const ShutdownOptions&) {
    StopLink();
    for (auto& [id, r] : replicas_) {
      if (r.sender) r.sender->RequestStop();
    }
    StoreState(true).PermitUnchecked();
    for (auto& [id, k] : known_) k.connected = false;
    StoreKnown();
    return Status::OK();
  });
  const std::string& of = server_.cfg().replicaof;
  if (!of.empty() && LowerAscii(of) != "no one") {
    std::string host;
    int port = 0;
    if (!SplitHostPort(of, &host, &port)) {
      server_.Log(3, "Bad replicaof setting: '" + of + "' (expected: host port)");
      return false;
    }
    StartLink(host, port);
  }
  return true;
}

std::string Replication::replid() const {
  if (link_shared_) {
    std::string id = link_shared_->replid();
    if (!id.empty()) return id;
  }
  return replid_;
}

void Replication::ShiftReplid() {
  replid2_ = replid();
  second_offset_ = static_cast<int64_t>(server_.journal().end_offset()) + 1;
  replid_ = RandomHex40(server_);
}

void Replication::UpdateServerFlags() {
  server_.set_replica_mode(is_replica());
}

std::unique_ptr<LogApplier> Replication::NewApplier() {
  LogApplier::Options o;
  o.source = "master";
  o.count_stats = true;   // a replica counts what it applies, as Redis's do
  o.stop_on_error = true;  // and never skips a failed command
  o.deliver_messages = true;
  return std::make_unique<LogApplier>(server_, o);
}

void Replication::CloseClient(uint64_t id) {
  auto c = server_.connections().find(id);
  if (c != server_.connections().end()) c->second->Close();
}

// --- master side ---

Replication::Replica& Replication::ReplicaFor(Client& c) {
  Replica& r = replicas_[c.id];
  r.client_id = c.id;
  if (r.ip.empty()) {
    size_t colon = c.addr.rfind(':');
    r.ip = colon == std::string::npos ? c.addr : c.addr.substr(0, colon);
  }
  return r;
}

void Replication::Replconf(CommandContext& ctx) {
  if (ctx.argc() % 2 == 0) {
    ctx.SyntaxError();
    return;
  }
  Replica& r = ReplicaFor(ctx.client);
  for (size_t i = 1; i + 1 < ctx.argc(); i += 2) {
    const std::string opt = LowerAscii(ctx.arg(i));
    std::string_view v = ctx.arg(i + 1);
    if (opt == "listening-port") {
      int64_t p;
      if (!ParseCanonicalInt64(v, &p) || p < 0 || p > 65535) {
        ctx.Error(protocol::err::kNotInteger);
        return;
      }
      r.listening_port = static_cast<int>(p);
    } else if (opt == "ip-address") {
      r.ip = std::string(v);
    } else if (opt == "capa") {
      if (v == "aofpos") r.aofpos = true;
    } else if (opt == "replica-id") {
      r.replica_id = std::string(v);
    } else if (opt == "ack" || opt == "fack") {
      // REPLCONF ACK <offset> [FACK <offset>]: no reply, as Redis.
      int64_t off;
      if (!ParseCanonicalInt64(v, &off) || off < 0) return;
      if (opt == "ack") {
        r.ack = std::max(r.ack, static_cast<uint64_t>(off));
        r.last_ack_ms = NowMs();
        if (r.state == Replica::State::kSendBulk) r.state = Replica::State::kOnline;
        if (r.attached) Remember(r, r.ack, true);
      } else {
        r.fack = std::max(r.fack, static_cast<uint64_t>(off));
      }
      if (i + 2 >= ctx.argc()) {
        server_.waiting().ReplicaAcks();
        ctx.client.out.clear();
        return;
      }
      continue;
    } else if (opt == "getack" || opt == "rdb-only" || opt == "rdb-filter-only") {
      // Accepted as Redis does; nothing to do for a master.
    } else {
      ctx.Error(fmt::format(protocol::err::kUnrecognizedReplconfOption, ctx.arg(i)));
      return;
    }
  }
  ctx.reply.Ok();
}

void Replication::Psync(CommandContext& ctx, bool psync) {
  Client& c = ctx.client;
  if (c.replica) return;  // already fed
  // Redis 7.0 acts on a fourth argument only when it is FAILOVER.
  if (psync && ctx.argc() >= 4 && EqualsIgnoreCase(ctx.arg(3), "failover")) {
    // Our master hands over (FAILOVER): we become the master of its history.
    if (!is_replica() || ctx.arg(1) != replid()) {
      ctx.Error(protocol::err::kPsyncFailoverReplid);
      return;
    }
    server_.Log(2, fmt::format("Failover request received for replid {}: this node is the "
                               "master now",
                               ctx.arg(1)));
    StopLink();
    ShiftReplid();
    StoreState(false).PermitUnchecked();
  }
  if (is_replica() && link_shared_->state.load() != LinkShared::State::kUp &&
      link_shared_->applied.load() == 0 && server_.journal().end_offset() == 0) {
    ctx.Error(protocol::err::kNoMasterLink);
    return;
  }
  Status s = persistence_.TurnOnLog("a replica attached (a master keeps its log while it has replicas)");
  if (!s.ok()) {
    ctx.Error(protocol::err::kReplicaLogPrefix + s.ToString());
    return;
  }
  Replica& r = ReplicaFor(c);
  const uint64_t end = server_.journal().end_offset();
  aof::LogTail::State tail = persistence_.log_tail()->state();
  const uint64_t first = tail.manifest.segments.empty() ? end : tail.manifest.segments.front().start;
  bool full = true;
  uint64_t from = 0;
  if (psync && ctx.argc() >= 3) {
    std::string_view want = ctx.arg(1);
    int64_t x = 0;
    if (want != "?" && ParseCanonicalInt64(ctx.arg(2), &x) && x >= 1) {
      // x is the first byte the replica wants (offsets count from 1).
      const uint64_t next = static_cast<uint64_t>(x - 1);
      const bool in_log = next >= first && next <= end;
      const std::string current = replid();
      if (want == current && in_log) {
        full = false;
      } else if (want == replid2_ && in_log && x <= second_offset_) {
        full = false;
      } else if (want == replid2_ && r.aofpos && second_offset_ > 0 &&
                 static_cast<uint64_t>(second_offset_ - 1) >= first) {
        // The replica's log goes on past where our history left its: it
        // cuts its own tail there and asks again (feedkv replicas only).
        const int64_t fork = second_offset_ - 1;
        server_.stats().sync_truncate++;
        server_.Log(2, fmt::format("Replica {} diverges after offset {} (it asks for {}): "
                                   "+TRUNCATE",
                                   c.addr, fork, x));
        ctx.reply.Simple(fmt::format("TRUNCATE {} {}", replid2_, fork));
        return;
      } else if (want == current && next > end) {
        server_.Log(3, fmt::format("Replica {} asks for offset {} past our end {} of the same "
                                   "history: a bug; full resync",
                                   c.addr, x, end));
      }
      from = next;
      if (full) {
        server_.stats().sync_partial_err += want != "?" ? 1 : 0;
        server_.Log(2, fmt::format("Partial resynchronization not accepted for {}: replid {} "
                                   "offset {} (ours: {} / {} up to {}, log {}..{})",
                                   c.addr, want, x, current, replid2_.empty() ? "-" : replid2_,
                                   second_offset_, first + 1, end));
      }
    }
  }
  if (full) {
    server_.stats().sync_full++;
    server_.Log(2, fmt::format("Replica {} asks for synchronization: full resync", c.addr));
  } else {
    server_.stats().sync_partial_ok++;
    server_.Log(2, fmt::format("Partial resynchronization request from {} accepted, sending "
                               "the log from offset {}",
                               c.addr, from + 1));
  }
  // The sender writes every byte this connection gets from now on.
  server_.journal().Seal();
  c.replica = true;
  c.out.clear();
  r.attached = true;
  r.last_ack_ms = NowMs();
  r.state = full ? Replica::State::kWaitBgsave : Replica::State::kOnline;
  if (!full) {
    r.ack = from;
    Remember(r, from, true);
  }
  StartSender(c, r, full, from, psync);
}

void Replication::StartSender(Client& c, Replica& r, bool full, uint64_t from, bool psync) {
  SenderOptions o;
  o.id = c.id;
  o.fd = ::dup(c.fd);
  o.tail = persistence_.log_tail();
  o.aof_dir = persistence_.aof_directory();
  o.aof_base = server_.cfg().appendfilename;
  o.rdb_path = persistence_.snapshot_path();
  o.replid = replid();
  o.full = full;
  o.psync = psync;
  if (!psync) o.min_snapshot_offset = server_.journal().end_offset();
  o.from = from;
  o.bundle = r.aofpos;
  if (ColdTier* cold = server_.cold_tier()) {
    o.checkpoint_dir = [cold](const rdb::Header& h) { return cold->CheckpointDir(h); };
  }
  o.timeout_ms = server_.cfg().repl_timeout * 1000;
  boost::asio::io_context& io = server_.io();
  const uint64_t id = c.id;
  o.need_snapshot = [this, &io] {
    boost::asio::post(io, [this] {
      if (persistence_.snapshot_in_progress()) return;
      std::string reply;
      Status s = persistence_.BgSave(false, false, &reply);
      server_.Log(2, s.ok() ? "Starting BGSAVE for a replica's full sync"
                            : "BGSAVE for a replica failed: " + s.ToString());
    });
  };
  o.full_sync_chosen = [this, &io, id](uint64_t offset) {
    boost::asio::post(io, [this, id, offset] {
      auto it = replicas_.find(id);
      if (it != replicas_.end()) it->second.state = Replica::State::kSendBulk;
      server_.Log(2, fmt::format("Full sync of replica {} from the snapshot at offset {}", id,
                                 offset));
    });
  };
  o.on_exit = [this, &io, id](const std::string& reason) {
    boost::asio::post(io, [this, id, reason] { SenderExited(id, reason); });
  };
  if (o.fd < 0) {
    server_.Log(3, "Can't feed a replica: dup failed");
    return;
  }
  r.sender = std::make_unique<ReplicaSender>(std::move(o));
  r.sender->Start();
}

void Replication::SenderExited(uint64_t id, const std::string& reason) {
  auto it = replicas_.find(id);
  if (it == replicas_.end()) return;
  if (reason != "stopped") {
    server_.Log(2, fmt::format("Replica {}:{} feed ended: {}", it->second.ip,
                               it->second.listening_port, reason));
  }
  if (it->second.sender) finished_.push_back(std::move(it->second.sender));
  if (it->second.attached) {
    Remember(it->second, it->second.ack, false);
    StoreKnown();
  }
  replicas_.erase(it);
  CloseClient(id);
}

void Replication::OnClientClosed(uint64_t id) {
  auto it = replicas_.find(id);
  if (it == replicas_.end()) return;
  if (it->second.sender) {
    it->second.sender->RequestStop();
    finished_.push_back(std::move(it->second.sender));
    server_.Log(2, fmt::format("Connection with replica {}:{} lost", it->second.ip,
                               it->second.listening_port));
  }
  if (it->second.attached) {
    Remember(it->second, it->second.ack, false);
    StoreKnown();
  }
  replicas_.erase(it);
}

int64_t Replication::ReplicasAcked(uint64_t offset, bool fsynced) const {
  int64_t n = 0;
  for (const auto& [id, r] : replicas_) {
    if (r.attached && (fsynced ? r.fack : r.ack) >= offset) n++;
  }
  return n;
}

bool Replication::EnoughGoodReplicas() const {
  const ServerConfig& cfg = server_.cfg();
  if (cfg.min_replicas_to_write <= 0 || cfg.min_replicas_max_lag <= 0) return true;
  const int64_t now = NowMs();
  int64_t good = 0;
  for (const auto& [id, r] : replicas_) {
    if (r.attached && r.state == Replica::State::kOnline &&
        now - r.last_ack_ms <= cfg.min_replicas_max_lag * 1000) {
      good++;
    }
  }
  return good >= cfg.min_replicas_to_write;
}

void Replication::Cron(int64_t now_ms) {
  FailoverCron(now_ms);
  if (now_ms - last_retention_ms_ >= 1000) {
    last_retention_ms_ = now_ms;
    EnforceRetention(now_ms);
    if (!known_.empty() && now_ms - known_stored_ms_ >= 60000) StoreKnown();
  }
  // Reap the threads of senders that ended.
  std::erase_if(finished_, [](const std::unique_ptr<ReplicaSender>& s) { return s->finished(); });
  const ServerConfig& cfg = server_.cfg();
  // A replica silent for repl-timeout is let go (it comes back and continues).
  std::vector<uint64_t> silent;
  for (auto& [id, r] : replicas_) {
    if (r.attached && r.state == Replica::State::kOnline &&
        now_ms - r.last_ack_ms > cfg.repl_timeout * 1000) {
      silent.push_back(id);
    }
  }
  for (uint64_t id : silent) {
    server_.Log(2, fmt::format("Disconnecting timedout replica (client id {})", id));
    server_.stats().repl_timeout_disconnects++;
    CloseClient(id);
  }
  // Heartbeat: with replicas attached and no write for the ping period, a
  // PING goes into the log (replicas see it as log bytes, nothing else).
  const uint64_t end = server_.journal().end_offset();
  if (end != last_seen_offset_) {
    last_seen_offset_ = end;
    last_log_write_ms_ = now_ms;
  }
  bool any = false;
  for (const auto& [id, r] : replicas_) any = any || r.attached;
  if (any && !is_replica() && failover_ == FailoverState::kNone &&
      now_ms - last_log_write_ms_ >= cfg.repl_ping_replica_period * 1000) {
    const std::vector<std::string> ping[] = {{"PING"}};
    server_.journal().AppendBatch(0, ping);
    server_.journal().Seal();
    last_log_write_ms_ = now_ms;
    last_seen_offset_ = server_.journal().end_offset();
  }
  if (link_shared_) {
    link_shared_->durable = std::min(server_.waiting().durable(), server_.journal().end_offset());
    const bool up = link_shared_->state.load() == LinkShared::State::kUp;
    if (up) {
      link_down_since_ms_ = 0;
    } else if (link_down_since_ms_ == 0) {
      link_down_since_ms_ = now_ms;
    }
  }
}

}  // namespace feedkv::server
