// MasterLink: a replica's connection to its master, on a thread of its own.
//
// It connects, runs Redis's handshake (PING, AUTH, REPLCONF listening-port,
// REPLCONF capa eof capa psync2 capa aofpos, REPLCONF replica-id, PSYNC
// <replid> <offset+1>), and then:
//   +FULLRESYNC <replid> <offset>: receives the FKVBUNDLE1 payload into
//     dir/sync-tmp-<pid>/, checks every file's size and XXH64, and hands the
//     snapshot to the command thread (install), which keeps serving the old
//     dataset until the new one is complete;
//   +CONTINUE [<replid>]: goes straight on;
// then reads the master's log bytes and hands them over in whole, verified
// groups (deliver); the command thread applies them and appends them to its
// own log verbatim. Every repl-ack-period, and soon after the applied offset
// moves, it sends REPLCONF ACK <applied> FACK <fsynced>. A link that hears
// nothing for repl-timeout, or fails in any way, reconnects with backoff
// (1 s doubling to 30 s) until stopped. Bytes handed over but not applied are
// bounded: past 64 MB it stops reading, so TCP slows the master's sender.
//
// Thread-safety: Start/Stop and LinkShared's setters from the command thread;
// callbacks run on the link thread and must post to the command thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "storage/status.h"

namespace feedkv::server {

// State both threads read.
struct LinkShared {
  enum class State { kConnecting, kHandshake, kSyncing, kUp, kDown };
  std::atomic<State> state{State::kConnecting};
  std::atomic<uint64_t> applied{0};   // the replica's log end
  std::atomic<uint64_t> durable{0};   // ... fsynced
  std::atomic<uint64_t> inflight{0};  // bytes delivered, not yet applied
  std::atomic<int64_t> last_io_ms{0};  // wall clock of the last byte from the master
  std::atomic<uint64_t> sync_total{0}, sync_read{0};  // full-sync payload progress
  std::atomic<bool> stopped_on_error{false};
  std::atomic<bool> stopping{false};  // the command thread is ending the link

  std::string replid() const {
    std::lock_guard<std::mutex> lk(mu);
    return replid_;
  }
  void set_replid(std::string id) {
    std::lock_guard<std::mutex> lk(mu);
    replid_ = std::move(id);
  }
  // masteruser / masterauth, read at each connection attempt (CONFIG SET
  // masterauth takes effect at the next attempt, as Redis).
  void set_auth(std::string user, std::string password) {
    std::lock_guard<std::mutex> lk(mu);
    masteruser_ = std::move(user);
    masterauth_ = std::move(password);
  }
  std::pair<std::string, std::string> auth() const {
    std::lock_guard<std::mutex> lk(mu);
    return {masteruser_, masterauth_};
  }

 private:
  mutable std::mutex mu;
  std::string replid_;
  std::string masteruser_, masterauth_;
};

struct LinkOptions {
  std::string host;
  int port = 0;
  int listening_port = 0;   // replica-announce-port, else the port we listen on
  std::string announce_ip;  // replica-announce-ip: sent as REPLCONF ip-address
  std::string replica_id;
  std::string dir;  // staging happens in dir/sync-tmp-<pid>/
  int64_t timeout_ms = 60000;
  int64_t ack_period_ms = 1000;
  // FAILOVER: the first PSYNC says so, and the target promotes itself.
  bool failover = false;
  std::shared_ptr<LinkShared> shared;
  // Link thread; block until the command thread has done it. install loads
  // the staged snapshot at log offset `offset` of history `replid`.
  std::function<Status(const std::string& rdb, const std::string& replid, uint64_t offset)> install;
  // Link thread; blocks until the command thread has done it. +TRUNCATE: cut
  // this node's log after offset `at` (history `replid`) and rebuild the
  // dataset there; not OK when that cannot be done (a full sync follows).
  std::function<Status(uint64_t at, const std::string& replid)> truncate;
  // Link thread; must only post. Whole verified groups, in order.
  std::function<void(std::shared_ptr<const std::string> bytes)> deliver;
  // Link thread; must only post. A log line for the server log.
  std::function<void(int level, std::string msg)> log;
};

class MasterLink {
 public:
  explicit MasterLink(LinkOptions options);
  ~MasterLink();  // stops and joins
  MasterLink(const MasterLink&) = delete;
  MasterLink& operator=(const MasterLink&) = delete;

  void Start();
  void RequestStop() { stop_ = true; }
  const LinkOptions& options() const { return o_; }

 private:
  void Run();
  // One connection's life; returns why it ended.
  std::string Session();
  bool Connect(std::string* why);
  bool Send(std::string_view data, std::string* why);
  // Reads one line (without CRLF), skipping the bare newlines a master sends
  // as keep-alives.
  bool ReadLine(std::string* line, std::string* why);
  bool ReadExact(char* dst, size_t n, std::string* why);
  // Fills in_ with what the socket has, waiting up to wait_ms.
  bool Fill(int wait_ms, std::string* why);
  bool Command(std::initializer_list<std::string_view> argv, std::string* reply,
               std::string* why);
  bool ReceiveFullSync(const std::string& replid, uint64_t offset, std::string* why);
  std::string Stream();
  bool MaybeAck(bool force, std::string* why);

  LinkOptions o_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  int fd_ = -1;
  std::string in_;  // received, not yet consumed
  int64_t last_ack_ms_ = 0;
  bool reconnect_now_ = false;  // after a +TRUNCATE: PSYNC again at once
  uint64_t last_acked_ = 0;
  uint64_t last_facked_ = 0;
};

}  // namespace feedkv::server
