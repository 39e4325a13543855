// Replication: the replica side (REPLICAOF, the link, applying, full sync, +TRUNCATE).
#include "server/replication/replication.h"

#include "protocol/error_text.h"
#include "server/cold_tier.h"

#include <sys/stat.h>
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

using repl::kDivergedRetain;

// --- replica side ---

void Replication::StartLink(const std::string& host, int port, bool failover) {
  StopLink();
  Status s = persistence_.TurnOnLog("this node is a replica (a replica keeps its master's log)");
  if (!s.ok()) server_.Log(3, "A replica without its log cannot continue incrementally");
  master_host_ = host;
  master_port_ = port;
  link_shared_ = std::make_shared<LinkShared>();
  link_shared_->set_replid(replid_);
  link_shared_->applied = server_.journal().end_offset();
  link_shared_->durable = server_.waiting().durable();
  applier_ = NewApplier();
  apply_error_offset_ = -1;
  link_down_since_ms_ = NowMs();
  server_.config().values().replicaof = fmt::format("{} {}", host, port);

  LinkOptions o;
  o.host = host;
  o.port = port;
  link_shared_->set_auth(server_.cfg().masteruser, server_.cfg().masterauth);
  o.listening_port = server_.cfg().replica_announce_port != 0
                         ? static_cast<int>(server_.cfg().replica_announce_port)
                     : server_.tcp_port() != 0 ? server_.tcp_port()
                                               : static_cast<int>(server_.cfg().port);
  o.announce_ip = server_.cfg().replica_announce_ip;
  o.replica_id = replica_id_;
  o.dir = server_.cfg().dir;
  o.timeout_ms = server_.cfg().repl_timeout * 1000;
  o.shared = link_shared_;
  o.failover = failover;
  boost::asio::io_context& io = server_.io();
  std::shared_ptr<LinkShared> shared = link_shared_;
  o.install = [this, &io, shared](const std::string& rdb, const std::string& id, uint64_t off) {
    auto done = std::make_shared<std::promise<Status>>();
    std::future<Status> f = done->get_future();
    boost::asio::post(io, [this, done, shared, rdb, id, off] {
      if (shared != link_shared_) {
        done->set_value(Status::Busy("the link was replaced"));
        return;
      }
      done->set_value(InstallFullSync(rdb, id, off));
    });
    while (f.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
      if (shared->stopping.load()) return Status::Busy("stopping");
    }
    return f.get();
  };
  o.truncate = [this, &io, shared](uint64_t at, const std::string& id) {
    auto done = std::make_shared<std::promise<Status>>();
    std::future<Status> f = done->get_future();
    boost::asio::post(io, [this, done, shared, at, id] {
      done->set_value(shared == link_shared_ ? Rewind(at, id) : Status::Busy("link replaced"));
    });
    while (f.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
      if (shared->stopping.load()) return Status::Busy("stopping");
    }
    return f.get();
  };
  o.deliver = [this, &io, shared](std::shared_ptr<const std::string> bytes) {
    boost::asio::post(io, [this, shared, bytes] {
      if (shared != link_shared_) {
        shared->inflight -= bytes->size();
        return;
      }
      from_master_.push_back(bytes);
      DrainFromMaster();
    });
  };
  o.log = [this, &io](int level, std::string msg) {
    boost::asio::post(io, [this, level, msg] { server_.Log(level, msg); });
  };
  server_.Log(2, fmt::format("Connecting to MASTER {}:{}", host, port));
  link_ = std::make_unique<MasterLink>(std::move(o));
  link_->Start();
  UpdateServerFlags();
  StoreState(false).PermitUnchecked();
}

void Replication::StopLink() {
  if (!link_) return;
  replid_ = replid();  // the history we hold is the link's
  link_shared_->stopping = true;
  link_->RequestStop();
  link_.reset();  // joins: the thread checks its stop flag every 100 ms
  link_shared_.reset();
  from_master_.clear();
  awaiting_cold_rows_ = false;
  applier_.reset();
  master_host_.clear();
  master_port_ = 0;
  server_.config().values().replicaof.clear();
  UpdateServerFlags();
}

void Replication::DrainFromMaster() {
  ColdTier* cold = server_.cold_tier();
  while (!from_master_.empty() && !awaiting_cold_rows_) {
    std::shared_ptr<const std::string> bytes = from_master_.front();
    // Cold counter rows the commands touch are loaded first, off this thread;
    // meanwhile later bytes queue behind (the link counts them in flight, and
    // reconnects only once they are applied).
    if (cold != nullptr && cold->LoadForLog(*bytes, [this, shared = link_shared_] {
          if (shared != link_shared_) return;
          awaiting_cold_rows_ = false;
          DrainFromMaster();
        })) {
      awaiting_cold_rows_ = true;
      return;
    }
    from_master_.pop_front();
    ApplyFromMaster(bytes);
    link_shared_->inflight -= bytes->size();
  }
}

void Replication::ApplyFromMaster(std::shared_ptr<const std::string> bytes) {
  if (apply_error_offset_ >= 0) return;
  const uint64_t base = server_.journal().end_offset();
  uint64_t applied_end = 0;
  aof::ScanResult r;
  Status s = aof::ScanSegment(
      *bytes, 0,
      [&](const aof::Group& g) {
        Status st = applier_->ApplyGroup(g.records, "master stream", base + g.begin);
        if (st.ok()) applied_end = g.end;
        return st;
      },
      &r);
  if (s.ok() && r.end != aof::ScanEnd::kClean) {
    s = Status::Corruption(fmt::format("damaged stream at offset {}: {}", base + r.error_offset,
                                       r.error));
  }
  if (applied_end == bytes->size()) {
    server_.journal().AppendSealed(bytes);
  } else if (applied_end > 0) {
    server_.journal().AppendSealed(std::make_shared<const std::string>(bytes->substr(0, applied_end)));
  }
  link_shared_->applied = server_.journal().end_offset();
  if (!s.ok()) {
    apply_error_offset_ = static_cast<int64_t>(server_.journal().end_offset());
    link_shared_->stopped_on_error = true;
    server_.Log(3, fmt::format("Replication stopped at offset {}: applying the master's log "
                               "failed: {}. Nothing after it is applied; fix the cause and run "
                               "REPLICAOF again.",
                               apply_error_offset_, s.ToString()));
  }
}

Status Replication::Rewind(uint64_t at, const std::string& id) {
  const uint64_t end = server_.journal().end_offset();
  const std::string dir = JoinPath(server_.cfg().dir, "diverged");
  const std::string aside = JoinPath(dir, fmt::format("{}-{}-{}.aof", replid(), at + 1, end));
  Status s = persistence_.RewindTo(at, aside);
  if (!s.ok()) return s;
  server_.Log(2, fmt::format("Log cut at offset {}: bytes {}..{} of our history kept in {}", at,
                             at + 1, end, aside));
  // Keep the newest few diverged tails (repl-diverged-retain).
  std::vector<std::string> names;
  Env::Default()->ListDir(dir, &names).PermitUnchecked();
  std::vector<std::pair<int64_t, std::string>> files;
  for (const auto& n : names) {
    struct stat st;
    const std::string p = JoinPath(dir, n);
    if (::stat(p.c_str(), &st) == 0) files.emplace_back(st.st_mtime, p);
  }
  std::sort(files.rbegin(), files.rend());
  for (size_t i = 2 * kDivergedRetain; i < files.size(); i++) {
    Env::Default()->RemoveFile(files[i].second).PermitUnchecked();
  }
  // Our history is the master's up to `at`: ask for the rest under its id.
  replid_ = id;
  link_shared_->set_replid(id);
  link_shared_->applied = server_.journal().end_offset();
  applier_ = NewApplier();
  StoreState(false).PermitUnchecked();
  return Status::OK();
}

Status Replication::InstallFullSync(const std::string& rdb, const std::string& id, uint64_t off) {
  full_sync_in_progress_ = true;
  rdb::Header h;
  Status s;
  // The cold store's checkpoint, if the bundle brought one, goes where the
  // snapshot's load looks for it.
  if (ColdTier* cold = server_.cold_tier()) s = cold->AdoptCheckpointFiles(DirName(rdb));
  if (s.ok()) s = persistence_.AdoptSnapshot(rdb, &h);
  full_sync_in_progress_ = false;
  if (!s.ok()) {
    server_.Log(3, "Full sync failed: " + s.ToString());
    return s;
  }
  if (h.aof_offset != off) {
    server_.Log(3, fmt::format("The master's snapshot is at offset {}, not {} as announced",
                               h.aof_offset, off));
  }
  replid_ = id;
  replid2_.clear();
  second_offset_ = -1;
  // Our own replicas held the old history: they sync again, as in Redis.
  std::vector<uint64_t> fed;
  for (const auto& [cid, r] : replicas_) {
    if (r.attached) fed.push_back(cid);
  }
  for (uint64_t cid : fed) {
    CloseClient(cid);
  }
  link_shared_->set_replid(id);
  link_shared_->applied = server_.journal().end_offset();
  applier_ = NewApplier();
  StoreState(false).PermitUnchecked();
  server_.Log(2, fmt::format("MASTER <-> REPLICA sync: loaded the master's snapshot at offset {}",
                             h.aof_offset));
  return Status::OK();
}

void Replication::ReplicaOf(CommandContext& ctx) {
  std::string host(ctx.arg(1));
  std::string port_s(ctx.arg(2));
  if (EqualsIgnoreCase(host, "no") && EqualsIgnoreCase(port_s, "one")) {
    if (is_replica()) {
      StopLink();
      // A new history starts here; replicas of the old one continue with us
      // up to where it ended.
      ShiftReplid();
      StoreState(false).PermitUnchecked();
      server_.Log(2, "MASTER MODE enabled (user request)");
    }
    ctx.reply.Ok();
    return;
  }
  int64_t port = 0;
  if (!ParseCanonicalInt64(port_s, &port) || port < 0 || port > 65535) {
    ctx.Error(protocol::err::kInvalidMasterPort);
    return;
  }
  // The same master again is a no-op, as Redis, unless applying its log
  // stopped on an error: then it is the retry docs/replication.md promises.
  if (is_replica() && master_host_ == host && master_port_ == port && apply_error_offset_ < 0) {
    server_.Log(2, "REPLICAOF would result into synchronization with the master we are already "
                   "connected with. No operation performed.");
    ctx.reply.Simple("OK Already connected to specified master");
    return;
  }
  StartLink(host, static_cast<int>(port));
  server_.Log(2, fmt::format("REPLICAOF {}:{} enabled (user request from '{}')", host, port,
                             ctx.client.addr));
  ctx.reply.Ok();
}

bool Replication::ServesStaleData() const {
  if (!is_replica() || server_.cfg().replica_serve_stale_data) return true;
  return link_shared_->state.load() == LinkShared::State::kUp;
}

}  // namespace feedkv::server
