#include "server/replication/replication.h"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <boost/asio/post.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <future>

#include <fmt/format.h>

#include "server/command_context.h"
#include "server/log_applier.h"
#include "server/network.h"
#include "server/persistence.h"
#include "server/server.h"
#include "storage/aof_reader.h"
#include "storage/file_io.h"
#include "storage/rdb_format.h"

namespace feedkv::server {

namespace {

// Diverged tails kept in dir/diverged (each may have a .rdb beside it).
constexpr size_t kDivergedRetain = 3;
constexpr std::string_view kNoReplid = "0000000000000000000000000000000000000000";

std::string RandomHex40(Server& s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 40; i++) id.push_back(kHex[s.Random() % 16]);
  return id;
}

bool ParseI64(std::string_view s, int64_t* out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool IsHex40(std::string_view s) {
  if (s.size() != 40) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// "host port" (the replicaof setting); false when malformed.
bool SplitHostPort(std::string_view v, std::string* host, int* port) {
  size_t sp = v.find(' ');
  if (sp == std::string_view::npos) return false;
  int64_t p = 0;
  if (!ParseI64(v.substr(sp + 1), &p) || p < 0 || p > 65535) return false;
  *host = std::string(v.substr(0, sp));
  *port = static_cast<int>(p);
  return !host->empty();
}

// Percent of the file system holding `dir` that is free; -1 if unknown.
int64_t FreeDiskPercent(const std::string& dir) {
  struct statvfs v;
  if (::statvfs(dir.c_str(), &v) != 0 || v.f_blocks == 0) return -1;
  return static_cast<int64_t>(100.0 * static_cast<double>(v.f_bavail) / static_cast<double>(v.f_blocks));
}

Status WriteFileAtomically(const std::string& path, const std::string& text) {
  Env* env = Env::Default();
  const std::string tmp = path + ".tmp";
  std::unique_ptr<WritableFile> f;
  Status s = env->NewWritableFile(tmp, true, &f);
  if (s.ok()) s = f->Append(text);
  if (s.ok()) s = f->Sync();
  if (s.ok()) s = f->Close();
  if (s.ok()) s = env->RenameFile(tmp, path);
  return s;
}

}  // namespace

Replication::Replication(Server& server, Persistence& persistence)
    : server_(server), persistence_(persistence) {}

Replication::~Replication() {
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
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string_view line(text.data() + pos, nl - pos);
    pos = nl + 1;
    size_t sp = line.find(' ');
    if (sp == std::string_view::npos) continue;
    std::string_view k = line.substr(0, sp), v = line.substr(sp + 1);
    if (k == "replid" && IsHex40(v)) replid_ = std::string(v);
    if (k == "replid2" && IsHex40(v)) replid2_ = std::string(v);
    if (k == "second_offset") ParseI64(v, &second_offset_);
    if (k == "replica_id" && IsHex40(v)) replica_id_ = std::string(v);
    if (k == "clean") *clean = v == "yes";
    if (k == "role") *was_master = v == "master";
  }
  return Status::OK();
}

Status Replication::StoreState(bool clean) {
  std::string text = fmt::format(
      "# feedkv replication state; see docs/replication.md. Do not edit.\n"
      "replid {}\nreplid2 {}\nsecond_offset {}\nreplica_id {}\nrole {}\nclean {}\n",
      replid(), replid2_.empty() ? std::string(kNoReplid) : replid2_, second_offset_, replica_id_,
      is_replica() ? "replica" : "master", clean ? "yes" : "no");
  Status s = WriteFileAtomically(state_path(), text);
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
  if (!of.empty()) {
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
    std::string opt(ctx.arg(i));
    for (char& ch : opt) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    std::string_view v = ctx.arg(i + 1);
    if (opt == "listening-port") {
      int64_t p;
      if (!ParseI64(v, &p) || p < 0 || p > 65535) {
        ctx.Error("ERR value is not an integer or out of range");
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
      if (!ParseI64(v, &off) || off < 0) return;
      if (opt == "ack") {
        r.ack = std::max(r.ack, static_cast<uint64_t>(off));
        r.last_ack_ms = NowMs();
        if (r.state == Replica::State::kSendBulk) r.state = Replica::State::kOnline;
        if (r.attached) Remember(r, r.ack, true);
      } else {
        r.fack = std::max(r.fack, static_cast<uint64_t>(off));
      }
      if (i + 2 >= ctx.argc()) {
        server_.waiting().ReplicaAcks(
            [this](uint64_t offset, bool fsynced) { return ReplicasAcked(offset, fsynced); });
        ctx.client.out.clear();
        return;
      }
      continue;
    } else if (opt == "getack" || opt == "rdb-only" || opt == "rdb-filter-only") {
      // Accepted as Redis does; nothing to do for a master.
    } else {
      ctx.Error(fmt::format("ERR Unrecognized REPLCONF option: {}", ctx.arg(i)));
      return;
    }
  }
  ctx.reply.Ok();
}

void Replication::Psync(CommandContext& ctx, bool psync) {
  Client& c = ctx.client;
  if (c.replica) return;  // already fed
  if (is_replica() && link_shared_->state.load() != LinkShared::State::kUp &&
      link_shared_->applied.load() == 0 && server_.journal().end_offset() == 0) {
    ctx.Error(protocol::err::kNoMasterLink);
    return;
  }
  Status s = persistence_.TurnOnLog("a replica attached (a master keeps its log while it has replicas)");
  if (!s.ok()) {
    ctx.Error("ERR can't start the log a replica needs: " + s.ToString());
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
    if (want != "?" && ParseI64(ctx.arg(2), &x) && x >= 1) {
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
  StartSender(c, r, full, from);
}

void Replication::StartSender(Client& c, Replica& r, bool full, uint64_t from) {
  SenderOptions o;
  o.id = c.id;
  o.fd = ::dup(c.fd);
  o.tail = persistence_.log_tail();
  o.aof_dir = persistence_.aof_directory();
  o.aof_base = server_.cfg().appendfilename;
  o.rdb_path = persistence_.snapshot_path();
  o.replid = replid();
  o.full = full;
  o.from = from;
  o.bundle = r.aofpos;
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
  if (any && !is_replica() && now_ms - last_log_write_ms_ >= cfg.repl_ping_replica_period * 1000) {
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

bool Replication::NeedsLog() const { return is_replica() || !replicas_.empty() || !known_.empty(); }

uint64_t Replication::PinOwner(const std::string& replica_id) {
  // Client ids (the senders' pins) are small; known replicas' pins live in
  // the top half of the id space.
  return (uint64_t{1} << 63) | (std::hash<std::string>()(replica_id) >> 1);
}

void Replication::Remember(const Replica& r, uint64_t offset, bool connected) {
  if (r.replica_id.empty()) return;  // a Redis replica or a tool: no persistent id
  KnownReplica& k = known_[r.replica_id];
  k.addr = fmt::format("{}:{}", r.ip, r.listening_port);
  k.offset = std::max(k.offset, offset);
  if (connected && !k.connected) k.offset = offset;  // a resync may move it back
  k.last_seen_ms = NowMs();
  k.connected = connected;
  persistence_.log_tail()->Pin(PinOwner(r.replica_id), k.offset);
}

void Replication::Forget(const std::string& id, const std::string& why, bool forced) {
  auto it = known_.find(id);
  if (it == known_.end()) return;
  server_.Log(forced ? 3 : 2, fmt::format("Replica {} ({}) no longer holds the log at offset {}: "
                                          "{}; it will need a full sync",
                                          id, it->second.addr, it->second.offset, why));
  if (forced) server_.stats().repl_retention_forced_drops++;
  persistence_.log_tail()->Unpin(PinOwner(id));
  known_.erase(it);
  StoreKnown();
}

void Replication::EnforceRetention(int64_t now_ms) {
  const ServerConfig& cfg = server_.cfg();
  std::vector<std::string> stale;
  for (const auto& [id, k] : known_) {
    if (!k.connected && now_ms - k.last_seen_ms > cfg.repl_retain_max_age * 1000) stale.push_back(id);
  }
  for (const auto& id : stale) {
    Forget(id, fmt::format("not seen for more than repl-retain-max-age ({} s)",
                           cfg.repl_retain_max_age),
           false);
  }
  // Safety valves: the retained log's size, the disk's free space. The
  // furthest-behind disconnected replica lets go first.
  for (int guard = 0; guard < 64 && !known_.empty(); guard++) {
    const uint64_t end = server_.journal().end_offset();
    const KnownReplica* worst = nullptr;
    std::string worst_id;
    for (const auto& [id, k] : known_) {
      if (k.connected) continue;
      if (worst == nullptr || k.offset < worst->offset) {
        worst = &k;
        worst_id = id;
      }
    }
    if (worst == nullptr) break;
    std::string why;
    if (cfg.repl_retain_max_bytes > 0 &&
        end - worst->offset > static_cast<uint64_t>(cfg.repl_retain_max_bytes)) {
      why = fmt::format("the log it needs ({} bytes) passed repl-retain-max-bytes ({})",
                        end - worst->offset, cfg.repl_retain_max_bytes);
    } else if (cfg.repl_retain_min_free_disk > 0) {
      int64_t pct = FreeDiskPercent(persistence_.aof_directory());
      if (pct >= 0 && pct < cfg.repl_retain_min_free_disk) {
        why = fmt::format("free disk {}% is below repl-retain-min-free-disk ({}%)", pct,
                          cfg.repl_retain_min_free_disk);
      }
    }
    if (why.empty()) break;
    Forget(worst_id, why, true);
  }
}

Status Replication::LoadKnown() {
  std::string text;
  Status s = Env::Default()->ReadFile(JoinPath(server_.cfg().dir, "replicas.state"), &text);
  if (!s.ok()) return s;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string_view line(text.data() + pos, nl - pos);
    pos = nl + 1;
    // replica <id> <addr> <offset> <last_seen_ms>
    std::vector<std::string_view> f;
    for (size_t a = 0; a <= line.size();) {
      size_t b = line.find(' ', a);
      if (b == std::string_view::npos) b = line.size();
      f.push_back(line.substr(a, b - a));
      a = b + 1;
    }
    int64_t off = 0, seen = 0;
    if (f.size() != 5 || f[0] != "replica" || !IsHex40(f[1]) || !ParseI64(f[3], &off) ||
        !ParseI64(f[4], &seen) || off < 0) {
      continue;
    }
    KnownReplica& k = known_[std::string(f[1])];
    k.addr = std::string(f[2]);
    k.offset = static_cast<uint64_t>(off);
    k.last_seen_ms = seen;
    persistence_.log_tail()->Pin(PinOwner(std::string(f[1])), k.offset);
  }
  return Status::OK();
}

void Replication::StoreKnown() {
  std::string text = "# feedkv known replicas: id addr offset last_seen_ms. Do not edit.\n";
  for (const auto& [id, k] : known_) {
    text += fmt::format("replica {} {} {} {}\n", id, k.addr, k.offset,
                        k.connected ? NowMs() : k.last_seen_ms);
  }
  Status s = WriteFileAtomically(JoinPath(server_.cfg().dir, "replicas.state"), text);
  if (!s.ok()) server_.Log(3, "Could not store the known replicas: " + s.ToString());
  known_stored_ms_ = NowMs();
}

// --- replica side ---

void Replication::StartLink(const std::string& host, int port) {
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
  o.masteruser = server_.cfg().masteruser;
  o.masterauth = server_.cfg().masterauth;
  o.listening_port = server_.tcp_port() != 0 ? server_.tcp_port()
                                             : static_cast<int>(server_.cfg().port);
  o.replica_id = replica_id_;
  o.dir = server_.cfg().dir;
  o.timeout_ms = server_.cfg().repl_timeout * 1000;
  o.shared = link_shared_;
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
      shared->inflight -= bytes->size();
      if (shared == link_shared_) ApplyFromMaster(bytes);
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
  applier_.reset();
  master_host_.clear();
  master_port_ = 0;
  server_.config().values().replicaof.clear();
  UpdateServerFlags();
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
  Status s = persistence_.AdoptSnapshot(rdb, &h);
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
  auto lower = [](std::string s) {
    for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return s;
  };
  if (lower(host) == "no" && lower(port_s) == "one") {
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
  if (!ParseI64(port_s, &port) || port < 0 || port > 65535) {
    ctx.Error("ERR Invalid master port");
    return;
  }
  if (is_replica() && master_host_ == host && master_port_ == port) {
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

void Replication::Role(protocol::ReplyWriter& w) const {
  if (is_replica()) {
    w.ArrayHeader(5);
    w.Bulk("slave");
    w.Bulk(master_host_);
    w.Integer(master_port_);
    const char* state = "connect";
    switch (link_shared_->state.load()) {
      case LinkShared::State::kConnecting: state = "connecting"; break;
      case LinkShared::State::kHandshake: state = "handshake"; break;
      case LinkShared::State::kSyncing: state = "sync"; break;
      case LinkShared::State::kUp: state = "connected"; break;
      case LinkShared::State::kDown: state = "connect"; break;
    }
    w.Bulk(state);
    w.Integer(static_cast<int64_t>(server_.journal().end_offset()));
    return;
  }
  w.ArrayHeader(3);
  w.Bulk("master");
  w.Integer(static_cast<int64_t>(server_.journal().end_offset()));
  size_t n = 0;
  for (const auto& [id, r] : replicas_) n += r.attached ? 1 : 0;
  w.ArrayHeader(n);
  for (const auto& [id, r] : replicas_) {
    if (!r.attached) continue;
    w.ArrayHeader(3);
    w.Bulk(r.ip);
    w.Bulk(std::to_string(r.listening_port));
    w.Bulk(std::to_string(r.ack));
  }
}

void Replication::Info(std::string* o) const {
  const uint64_t end = server_.journal().end_offset();
  const int64_t now = NowMs();
  if (is_replica()) {
    const LinkShared& l = *link_shared_;
    const bool up = l.state.load() == LinkShared::State::kUp;
    const bool syncing = l.state.load() == LinkShared::State::kSyncing;
    const int64_t last_io = l.last_io_ms.load();
    *o += fmt::format(
        "role:slave\r\nmaster_host:{}\r\nmaster_port:{}\r\nmaster_link_status:{}\r\n"
        "master_last_io_seconds_ago:{}\r\nmaster_sync_in_progress:{}\r\n"
        "slave_read_repl_offset:{}\r\nslave_repl_offset:{}\r\n",
        master_host_, master_port_, up ? "up" : "down",
        last_io > 0 ? (now - last_io) / 1000 : -1, syncing ? 1 : 0, end, end);
    if (syncing) {
      *o += fmt::format(
          "master_sync_total_bytes:{}\r\nmaster_sync_read_bytes:{}\r\nmaster_sync_left_bytes:{}\r\n"
          "master_sync_perc:{:.2f}\r\nmaster_sync_last_io_seconds_ago:{}\r\n",
          l.sync_total.load(), l.sync_read.load(), l.sync_total.load() - l.sync_read.load(),
          l.sync_total.load() > 0 ? 100.0 * l.sync_read.load() / l.sync_total.load() : 0.0,
          last_io > 0 ? (now - last_io) / 1000 : -1);
    }
    if (!up) {
      *o += fmt::format("master_link_down_since_seconds:{}\r\n",
                        link_down_since_ms_ > 0 ? (now - link_down_since_ms_) / 1000 : -1);
    }
    *o += fmt::format("slave_priority:100\r\nslave_read_only:1\r\nreplica_announced:1\r\n");
  } else {
    *o += "role:master\r\n";
  }
  size_t n = 0;
  for (const auto& [id, r] : replicas_) n += r.attached ? 1 : 0;
  *o += fmt::format("connected_slaves:{}\r\n", n);
  size_t i = 0;
  for (const auto& [id, r] : replicas_) {
    if (!r.attached) continue;
    const char* state = r.state == Replica::State::kOnline     ? "online"
                        : r.state == Replica::State::kSendBulk ? "send_bulk"
                                                               : "wait_bgsave";
    *o += fmt::format("slave{}:ip={},port={},state={},offset={},lag={},fsynced={},bytes_behind={},"
                      "id={}\r\n",
                      i++, r.ip, r.listening_port, state, r.ack, (now - r.last_ack_ms) / 1000,
                      r.fack, end > r.ack ? end - r.ack : 0,
                      r.replica_id.empty() ? "-" : r.replica_id);
  }
  if (server_.cfg().min_replicas_to_write > 0) {
    int64_t good = 0;
    for (const auto& [id, r] : replicas_) {
      if (r.attached && r.state == Replica::State::kOnline &&
          now - r.last_ack_ms <= server_.cfg().min_replicas_max_lag * 1000) {
        good++;
      }
    }
    *o += fmt::format("min_slaves_good_slaves:{}\r\n", good);
  }
  aof::LogTail::State tail = persistence_.log_tail()->state();
  const bool log = persistence_.log_on() && !tail.manifest.segments.empty();
  const uint64_t first = log ? tail.manifest.segments.front().start : end;
  *o += fmt::format(
      "master_failover_state:no-failover\r\nmaster_replid:{}\r\nmaster_replid2:{}\r\n"
      "master_repl_offset:{}\r\nsecond_repl_offset:{}\r\nrepl_backlog_active:{}\r\n"
      "repl_backlog_size:{}\r\nrepl_backlog_first_byte_offset:{}\r\nrepl_backlog_histlen:{}\r\n",
      replid(), replid2_.empty() ? std::string(kNoReplid) : replid2_, end, second_offset_,
      log ? 1 : 0, end - first, first + 1, end - first);
  // feedkv's own fields.
  *o += fmt::format("repl_retained_segments:{}\r\nrepl_retained_first_segment:{}\r\n",
                    log ? tail.manifest.segments.size() : 0,
                    log ? tail.manifest.segments.front().seq : 0);
  std::string pinned_by = "none";
  uint64_t lowest = UINT64_MAX;
  for (const auto& [id, k] : known_) {
    if (k.offset < lowest) {
      lowest = k.offset;
      pinned_by = id;
    }
  }
  *o += fmt::format("repl_retain_pinned_by:{}\r\nrepl_known_replicas:{}\r\n", pinned_by,
                    known_.size());
  size_t k_i = 0;
  for (const auto& [id, k] : known_) {
    *o += fmt::format("known_replica{}:id={},addr={},state={},offset={},last_seen={}\r\n", k_i++,
                      id, k.addr, k.connected ? "online" : "disconnected", k.offset,
                      k.connected ? 0 : (now - k.last_seen_ms) / 1000);
  }
  if (is_replica()) {
    *o += fmt::format("master_link_aofpos_capable:1\r\nrepl_apply_error:{}\r\n",
                      apply_error_offset_);
  }
}

}  // namespace feedkv::server
