// Replication: ROLE and INFO replication.
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
#include "storage/rdb_format.h"

namespace feedkv::server {

using repl::kNoReplid;

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
      "master_failover_state:{}\r\nmaster_replid:{}\r\nmaster_replid2:{}\r\n"
      "master_repl_offset:{}\r\nsecond_repl_offset:{}\r\nrepl_backlog_active:{}\r\n"
      "repl_backlog_size:{}\r\nrepl_backlog_first_byte_offset:{}\r\nrepl_backlog_histlen:{}\r\n",
      failover_ == FailoverState::kWaitingForSync ? "waiting-for-sync"
      : failover_ == FailoverState::kInProgress   ? "failover-in-progress"
                                                  : "no-failover",
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
