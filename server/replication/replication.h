// Replication: replicas that sync by log position (docs/replication.md).
//
// Both roles live here, on the command thread:
//   - master: REPLCONF / PSYNC / SYNC decide, per attached replica, between
//     +CONTINUE (the replica's next byte is still in a retained AOF segment)
//     and +FULLRESYNC (a snapshot on disk, then the log after it); a
//     ReplicaSender thread then feeds the replica from the files. Replicas'
//     REPLCONF ACKs come back on their connection and release WAIT. With
//     replicas attached and no write for repl-ping-replica-period, a PING is
//     logged: the heartbeat is a log record like any other.
//   - replica: REPLICAOF starts a MasterLink thread; the groups it receives
//     are applied through the one LogApplier and appended to this node's own
//     log verbatim (Journal::AppendSealed), so both logs hold the same bytes
//     at the same offsets and this node can feed replicas of its own.
// Histories are named by replid / replid2 (Redis's PSYNC2), kept in
// dir/replication.state across restarts; a master that restarts after an
// unclean stop takes a new replid, since it may have lost a tail its
// replicas hold.
//
// Thread-safety: command thread only; the sender and link threads reach it
// by posting to the io_context.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/reply_writer.h"
#include "server/replication/master_link.h"
#include "server/replication/replica_sender.h"
#include "storage/status.h"

namespace feedkv::server {

class Server;
class Persistence;
class LogApplier;
struct Client;
struct CommandContext;

class Replication {
 public:
  Replication(Server& server, Persistence& persistence);
  ~Replication();
  Replication(const Replication&) = delete;
  Replication& operator=(const Replication&) = delete;

  // Loads the replication state, registers cron, INFO and shutdown hooks and
  // connects to the configured master (replicaof). False if the server must
  // not start.
  bool Attach();

  bool is_replica() const { return link_ != nullptr; }
  // This node must keep its AOF on: it is a replica, or replicas are attached
  // or known.
  bool NeedsLog() const;
  // PUBLISH goes into the log for replicas: this node is a master with
  // replicas attached or known (a known one may resume from the log).
  bool ReplicatesMessages() const;
  // The current history's id (a replica's is its master's).
  std::string replid() const;

  // --- master side (command handlers) ---
  void Replconf(CommandContext& ctx);
  // PSYNC replid offset (psync) or SYNC.
  void Psync(CommandContext& ctx, bool psync);
  // The connection of client `id` closed.
  void OnClientClosed(uint64_t id);
  // Replicas that acknowledged the log up to `offset` (fsynced: FACK).
  int64_t ReplicasAcked(uint64_t offset, bool fsynced) const;
  // min-replicas-to-write holds (always, when it is 0).
  bool EnoughGoodReplicas() const;

  // --- replica side ---
  // REPLICAOF host port / NO ONE. Replies like Redis.
  void ReplicaOf(CommandContext& ctx);
  // Whether clients may be served their reads (replica-serve-stale-data).
  bool ServesStaleData() const;

  // FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms], as Redis 7.
  void Failover(CommandContext& ctx);

  void Role(protocol::ReplyWriter& w) const;
  void Info(std::string* out) const;

 private:
  struct Replica {
    uint64_t client_id = 0;
    std::string ip;
    int listening_port = 0;
    std::string replica_id;
    bool aofpos = false;
    bool attached = false;  // PSYNC accepted, a sender runs
    enum class State { kWaitBgsave, kSendBulk, kOnline } state = State::kWaitBgsave;
    uint64_t ack = 0, fack = 0;
    int64_t last_ack_ms = 0;
    std::unique_ptr<ReplicaSender> sender;
  };

  // A replica seen before, by its persistent replica-id: its log position
  // keeps segments from retirement while it is away (up to
  // repl-retain-max-age and the disk valves).
  struct KnownReplica {
    std::string addr;
    uint64_t offset = 0;  // acknowledged
    int64_t last_seen_ms = 0;
    bool connected = false;
  };

  Replica& ReplicaFor(Client& c);
  static uint64_t PinOwner(const std::string& replica_id);
  void Remember(const Replica& r, uint64_t offset, bool connected);
  // Drops a known replica's hold on the log, logging why.
  void Forget(const std::string& id, const std::string& why, bool forced);
  void EnforceRetention(int64_t now_ms);
  Status LoadKnown();
  void StoreKnown();
  void StartSender(Client& c, Replica& r, bool full, uint64_t from, bool psync);
  void SenderExited(uint64_t id, const std::string& reason);
  void Cron(int64_t now_ms);
  // `failover`: this master hands over to that replica (PSYNC ... FAILOVER).
  void StartLink(const std::string& host, int port, bool failover = false);
  void FailoverCron(int64_t now_ms);
  void EndFailover(const std::string& why, bool back_to_master);
  void StopLink();
  // Link thread → command thread: bytes queue in from_master_ and are applied
  // in order, each once the cold counter rows it touches are in memory.
  void DrainFromMaster();
  void ApplyFromMaster(std::shared_ptr<const std::string> bytes);
  Status Rewind(uint64_t at, const std::string& replid);
  Status InstallFullSync(const std::string& rdb, const std::string& replid, uint64_t offset);
  // A new history from here on (REPLICAOF NO ONE, unclean restart).
  void ShiftReplid();
  Status LoadState(bool* clean, bool* was_master);
  Status StoreState(bool clean);
  std::string state_path() const;
  void UpdateServerFlags();
  std::unique_ptr<LogApplier> NewApplier();
  void CloseClient(uint64_t id);

  Server& server_;
  Persistence& persistence_;
  std::string replid_, replid2_;
  int64_t second_offset_ = -1;  // first byte of the current history, under replid2
  std::string replica_id_;      // this node's own, persistent
  std::map<uint64_t, Replica> replicas_;  // by client id
  std::map<std::string, KnownReplica> known_;  // by replica-id
  int64_t known_stored_ms_ = 0;
  int64_t last_retention_ms_ = 0;
  std::vector<std::unique_ptr<ReplicaSender>> finished_;
  int64_t last_log_write_ms_ = 0;
  uint64_t last_seen_offset_ = 0;

  // Replica side.
  std::string master_host_;
  int master_port_ = 0;
  std::shared_ptr<LinkShared> link_shared_;
  std::unique_ptr<MasterLink> link_;
  std::unique_ptr<LogApplier> applier_;
  std::deque<std::shared_ptr<const std::string>> from_master_;
  bool awaiting_cold_rows_ = false;  // from_master_.front() waits for loads
  int64_t link_down_since_ms_ = 0;
  int64_t apply_error_offset_ = -1;
  bool full_sync_in_progress_ = false;

  // FAILOVER (server/replication/replication_failover.cc).
  enum class FailoverState { kNone, kWaitingForSync, kInProgress } failover_ = FailoverState::kNone;
  std::string failover_host_;
  int failover_port_ = 0;
  int64_t failover_deadline_ms_ = 0;  // 0: no TIMEOUT
  bool failover_force_ = false;
};

}  // namespace feedkv::server
