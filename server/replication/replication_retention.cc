// Replication: known replicas and the segments kept for them.
#include "server/replication/replication.h"

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

using repl::ForEachLine;
using repl::IsHex40;
using repl::Words;

bool Replication::NeedsLog() const { return is_replica() || !replicas_.empty() || !known_.empty(); }
bool Replication::ReplicatesMessages() const {
  return !is_replica() && (!replicas_.empty() || !known_.empty());
}

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
      const int64_t pct = persistence_.aof_free_disk_percent();
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
  ForEachLine(text, [&](std::string_view line) {
    // replica <id> <addr> <offset> <last_seen_ms>
    std::vector<std::string_view> f = Words(line);
    int64_t off = 0, seen = 0;
    if (f.size() != 5 || f[0] != "replica" || !IsHex40(f[1]) || !ParseCanonicalInt64(f[3], &off) ||
        !ParseCanonicalInt64(f[4], &seen) || off < 0) {
      return;
    }
    KnownReplica& k = known_[std::string(f[1])];
    k.addr = std::string(f[2]);
    k.offset = static_cast<uint64_t>(off);
    k.last_seen_ms = seen;
    persistence_.log_tail()->Pin(PinOwner(std::string(f[1])), k.offset);
  });
  return Status::OK();
}

void Replication::StoreKnown() {
  std::string text = "# feedkv known replicas: id addr offset last_seen_ms. Do not edit.\n";
  for (const auto& [id, k] : known_) {
    text += fmt::format("replica {} {} {} {}\n", id, k.addr, k.offset,
                        k.connected ? NowMs() : k.last_seen_ms);
  }
  Status s = WriteFileAtomic(Env::Default(), JoinPath(server_.cfg().dir, "replicas.state"), text);
  if (!s.ok()) server_.Log(3, "Could not store the known replicas: " + s.ToString());
  known_stored_ms_ = NowMs();
}

}  // namespace feedkv::server
