// WaitingClients: clients that wait until a condition holds, while the
// command thread serves everyone else.
//
// Two kinds of wait, one registry:
//   - a parked command (Park): the command has not replied yet. Its client's
//     later commands are not run (the connection keeps reading, so a
//     disconnect is seen, but parses nothing) until the wait ends; then the
//     command's `done` writes its reply and the buffered input is processed,
//     so replies keep their order. WAIT and WAITAOF park; blocking pops, cold
//     reads and scripts will. A parked command ends when its condition holds,
//     at its timeout, by CLIENT UNBLOCK, or is dropped when its client
//     disconnects (`done` is not called then).
//   - held replies (HoldReplies): the command ran and replied, but the
//     client's pending replies may not be sent until the condition holds;
//     later commands run meanwhile (their replies queue behind). This is how
//     a write is acknowledged only once the log has it (written under
//     appendfsync everysec/no, fsynced under always) without costing a
//     pipeline one disk round trip per command.
//
// Conditions: the log written / fsynced to an offset, N replicas
// acknowledged an offset, an asynchronous job finished (by token), a key
// became ready. Whoever makes progress reports it (LogProgress, AsyncDone,
// KeyReady, ReplicaAcks...), and only the waiters it satisfies are visited.
//
// A command may only park when CommandContext::can_block() (not inside
// MULTI/EXEC, not when applied from the log — Redis's rule); otherwise it
// answers at once as if its timeout had passed.
//
// Thread-safety: command thread only.
#pragma once

#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/client.h"

namespace feedkv::server {

class Server;

enum class WaitFor {
  kLogWritten,   // the log is written (write(2)) up to `offset`
  kLogDurable,   // the log is fsynced up to `offset`
  kReplicaAcks,  // `replicas` replicas acknowledged `offset`
  kAsyncDone,    // the asynchronous job `token` finished
  kKeyReady,     // one of `keys` of database `db` became ready (a push, an insert...)
};

struct WaitCondition {
  WaitFor what = WaitFor::kLogWritten;
  uint64_t offset = 0;
  int64_t replicas = 0;
  bool fsynced = false;  // kReplicaAcks: the replicas must have fsynced it (WAITAOF)
  bool local_durable = false;  // kReplicaAcks: and the local log too (WAITAOF 1 N)
  uint64_t token = 0;
  int db = 0;
  std::vector<std::string> keys;  // kKeyReady
};

// How a parked command's wait ended.
enum class WaitEnd {
  kReady,        // the condition holds
  kTimeout,      // its timeout passed, or CLIENT UNBLOCK ... TIMEOUT
  kUnblockError, // CLIENT UNBLOCK ... ERROR
};

class WaitingClients {
 public:
  // Writes the parked command's reply into client.out (and may Park again,
  // e.g. a pop that lost its key to another client).
  using DoneFn = std::function<void(Client& client, WaitEnd end)>;

  explicit WaitingClients(Server& server);
  ~WaitingClients();

  // Parks `client`'s current command until `cond` holds or `timeout_ms`
  // (0: never) passes. A condition that already holds ends the wait in the
  // next loop turn, never inside the caller.
  void Park(Client& client, WaitCondition cond, int64_t timeout_ms, DoneFn done);
  // Holds `client`'s replies until the log (kLogWritten / kLogDurable)
  // reaches `offset`. Later holds of the same client only raise the offset.
  void HoldReplies(Client& client, WaitFor what, uint64_t offset);
  // True while `client` has replies that may not be sent.
  bool RepliesHeld(const Client& client) const;

  // --- progress reports ---
  void LogProgress(WaitFor what, uint64_t offset);
  // The log is no longer kept (AOF turned off): held replies go out.
  void ReleaseLogHolds();
  // Counts the replicas that acknowledged `offset` (fsynced: to their AOF).
  // Set by the replication subsystem for its lifetime (empty: none).
  using ReplicaAckCounter = std::function<int64_t(uint64_t offset, bool fsynced)>;
  void SetReplicaAckCounter(ReplicaAckCounter counter) { ack_counter_ = std::move(counter); }
  // Told each time the local log's fsynced offset advances (a replica passes
  // it on to its master at once, so WAITAOF there need not wait a period).
  void SetDurableListener(std::function<void(uint64_t durable)> fn) { on_durable_ = std::move(fn); }
  // A replica acknowledged something: kReplicaAcks waits that now hold end.
  void ReplicaAcks();
  void AsyncDone(uint64_t token);
  void KeyReady(int db, const std::string& key);
  // The keys of database `db` that parked commands wait for (SWAPDB readies
  // those that exist after the swap, as Redis's scanDatabaseForReadyKeys).
  std::vector<std::string> WaitedKeys(int db) const;

  // CLIENT UNBLOCK: ends a parked command early. False if it is not parked.
  bool Unblock(uint64_t client_id, WaitEnd how);
  // The client is going away: forget it (no reply, no callback).
  void Forget(uint64_t client_id);

  // The log offsets reached so far.
  uint64_t written() const { return written_; }
  uint64_t durable() const { return durable_; }
  size_t parked() const { return parked_.size(); }
  size_t holding() const { return holds_.size(); }
  size_t with_timeout() const { return by_deadline_.size(); }
  size_t keys_waited() const { return by_key_.size(); }
  bool IsParked(uint64_t client_id) const { return parked_.count(client_id) != 0; }

 private:
  struct Parked {
    WaitCondition cond;
    int64_t deadline_ms;  // 0: none
    DoneFn done;
    uint64_t seq;         // arrival order (fairness among waiters of one key)
    Client* client;       // valid while parked: a closing client is Forgotten first
  };
  struct Hold {
    WaitFor what;
    uint64_t offset;
  };

  bool Holds(const WaitCondition& c) const;
  // Ends the wait of `id` (already removed from the indexes) and resumes it.
  void End(uint64_t id, WaitEnd end);
  void Unindex(uint64_t id, const Parked& p);
  // Ends, in the next loop turn, the parked commands in `ids` whose condition holds.
  void EndLater(std::vector<uint64_t> ids, bool until_one_parks_again = false);
  void ReleaseHolds(WaitFor what, uint64_t offset);
  void ArmTimer();
  void OnTimer();

  Server& server_;
  ReplicaAckCounter ack_counter_;
  std::function<void(uint64_t)> on_durable_;
  uint64_t written_ = 0;
  uint64_t durable_ = 0;
  uint64_t next_seq_ = 0;
  std::unordered_map<uint64_t, Parked> parked_;         // by client id
  std::multimap<uint64_t, uint64_t> by_offset_;          // log/replica offset -> client id
  std::multimap<uint64_t, uint64_t> by_token_;           // async token -> client id
  std::map<std::pair<int, std::string>, std::vector<uint64_t>> by_key_;  // in arrival order
  std::set<std::pair<int64_t, uint64_t>> by_deadline_;   // (deadline, client id)
  std::unordered_map<uint64_t, Hold> holds_;             // by client id
  std::multimap<uint64_t, uint64_t> holds_by_offset_;    // offset -> client id
  boost::asio::steady_timer timer_;
  // Posted work checks it: the registry may be gone when the loop runs it.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  int64_t timer_at_ms_ = 0;  // deadline the timer is armed for; 0: not armed
};

}  // namespace feedkv::server
