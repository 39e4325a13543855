// ColdTier: the server side of the cold counter tier (docs/counters.md, "Cold
// tables"). It owns the on-disk store (storage/cold/ColdStore, opened on the
// first spill or at start-up when a loaded space has cold tables), one writer
// thread that makes every change to it in order (spills, write-backs,
// checkpoints), and `cold-read-threads` reader threads.
//
//  - Spills: StartSpill freezes a table (CounterSpace::BeginSpill); the writer
//    thread clears the table's id range in the store, exports the table in id
//    order and ingests it as sorted SST files; back on the command thread the
//    range becomes cold and the table's memory is freed (or, on failure, the
//    table is hot again and the failure is logged and shown in INFO). The cron
//    starts one when counter-memory-limit is exceeded.
//  - Loads: before a counter command (or an EXEC holding one) runs, ParkForLoads
//    finds the ids it touches whose range is cold and that the warm cache does
//    not hold. If there are any, the client is parked, the ids are queued (an
//    id already being loaded is not queued twice), the reader threads look
//    them up in batches of up to cold-read-batch ids per space with one
//    MultiGet, the answers (absent ids too) go into the space's warm cache on
//    the command thread, and the command runs again from the start.
//    A read error answers the waiting commands with an error and changes
//    nothing. A replica's stream from its master waits the same way
//    (LoadForLog); only AOF replay at start-up reads cold ids synchronously.
//  - Write-back: every counter-cold-writeback-interval the cron hands the
//    written keys of cold ranges to the writer, which stores them without
//    RocksDB's log; the entries become clean (and trimmable) once stored.
//  - Snapshots: the writer takes a checkpoint of the store behind every job
//    issued before the snapshot's position, so snapshot + checkpoint + the log
//    after it are one state; a load starts the store from that checkpoint.
//
// Thread-safety: the public methods run on the command thread. The threads
// touch only the store and their queues, and post results back; they run at a
// lower CPU priority than the command thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "server/client.h"
#include "server/command_table.h"
#include "storage/counter_space.h"
#include "storage/rdb_digest.h"
#include "storage/rdb_format.h"
#include "storage/status.h"

namespace feedkv {
class ColdStore;
}

namespace feedkv::server {

class JobThread;
class Server;

class ColdTier {
 public:
  explicit ColdTier(Server& server);
  ~ColdTier();
  ColdTier(const ColdTier&) = delete;
  ColdTier& operator=(const ColdTier&) = delete;

  // After the snapshot `h` was loaded: when its spaces have cold tables, the
  // store becomes a copy of the checkpoint taken with that snapshot (the rows
  // as they were at its position; the log after it replays onto them), and
  // every space with a spilling history gets its reader of the store. Not OK:
  // the load must fail (checkpoint or rows missing, store damaged; the message
  // names the directory).
  Status AttachLoaded(const rdb::Header& h);

  // Snapshots. A snapshot at `h` whose spaces have cold tables needs the store
  // as it is now: QueueCheckpoint queues a checkpoint of it (hard links, under
  // <cold-dir>-checkpoints/) behind every job issued so far and returns true;
  // *done gets its status. False when no space has a cold table.
  bool QueueCheckpoint(const rdb::Header& h, std::shared_future<Status>* done);
  // Runs fn on the command thread once every job queued so far has run.
  void AfterWriter(std::function<void()> fn);
  // The snapshot at `h` is now the newest: the other checkpoints go.
  void KeepOnlyCheckpoint(const rdb::Header& h);
  // Any thread: a pure function of the header and cold-dir.
  std::string CheckpointDir(const rdb::Header& h) const;
  // A full sync's staging directory: its "cold-ckpt.<checkpoint>.<file>" files
  // become the checkpoint <checkpoint> (replica_sender.h), replacing one of
  // that name.
  Status AdoptCheckpointFiles(const std::string& stage);

  // Called before a command runs. True if it touches cold ids that are not in
  // memory: the client is parked and the command runs again once they are.
  bool ParkForLoads(Client& c, const CommandSpec& spec, std::span<const std::string_view> args);

  // For the replication stream (the master link, which must not read the disk
  // on the command thread): true if the commands in `bytes` (whole log groups)
  // touch cold ids that are not in memory; they are being loaded and `done`
  // runs on the command thread once they are (or failed to: the commands then
  // read them synchronously and fail as they would have).
  bool LoadForLog(std::string_view bytes, std::function<void()> done);

  // Spills table `table` of space `name` (-1: the space's oldest hot table
  // that is not the newest). `done` runs on the command thread when the spill
  // ended (OK: the table is cold). Not OK at once when it cannot start.
  Status StartSpill(const std::string& name, int table, std::function<void(const Status&)> done);

  // DEBUG DIGEST (server/cold_tier_digest.cc). `digest` holds everything in
  // memory; the rows of cold ranges that only the store holds still have to be
  // added. False: there are none, `digest` is whole. Else the warm rows of cold
  // ranges are added now and the writer thread adds the store's other rows
  // behind every job issued so far (so it sees the rows of this moment), then
  // `done` runs on the command thread with the digest or a read error.
  bool DigestColdRows(const rdb::DigestBuilder& digest,
                      std::function<void(const Status&, const std::string& hex)> done);
  // The same on the calling thread, for a command that cannot wait (in
  // MULTI/EXEC): reads the store synchronously.
  Status DigestColdRowsNow(rdb::DigestBuilder* digest);

  // The space `name` is being deleted (COUNTER.DROP, FLUSHALL): the writer
  // drops its rows from the store after every job issued so far (earlier
  // snapshots' checkpoints keep theirs).
  void DropRows(const std::string& name, const CounterSpace& space);

  void Cron(int64_t now_ms);
  // A token for WaitFor::kAsyncDone waits of this tier's (COUNTER.SPILL's).
  uint64_t NextToken() { return next_token_++; }
  // DEBUG COLD-DELAY: every read batch sleeps this long first (tests).
  void set_read_delay_ms(int64_t ms) { read_delay_ms_.store(ms); }
  void InfoSection(std::string* out);
  // Clients parked for loads (INFO blocked_clients counts them too).
  size_t blocked_clients() const { return requests_.size(); }
  // The store's column family of a space.
  static std::string ColumnFamily(const std::string& space, uint64_t generation);

 private:
  struct ReadItem {
    std::string space;
    uint64_t generation;
    int64_t id;
    uint64_t epoch;  // answers read before a load replaced the store are not kept
  };
  struct Request {
    uint64_t client_id = 0;       // the parked client, or
    std::function<void()> done;   // what runs once loaded (LoadForLog)
    size_t remaining = 0;
    std::string error;
  };
  struct Touched {
    CounterSpace* space;
    const std::string* name;
    int64_t id;
  };
  struct SpillState {
    std::string space;
    uint64_t generation = 0;
    int table = -1;
    int64_t start_ms = 0;
    int64_t stall_us = 0;  // BeginSpill's time on the command thread
    std::vector<std::function<void(const Status&)>> done;
  };

  // One space's share of DEBUG DIGEST's store scan (cold_tier_digest.cc).
  struct DigestPlan;
  // The plans, with the warm rows of cold ranges added to `digest`.
  std::vector<DigestPlan> PlanDigest(rdb::DigestBuilder* digest);
  // The store rows of the planned ranges that the warm cache did not hold (any thread).
  static Status ScanColdRows(const ColdStore& store, const std::vector<DigestPlan>& plans,
                             rdb::DigestBuilder* digest);

  // The store, opening it under cold-dir if it is not open yet (any thread).
  Status Store(std::shared_ptr<ColdStore>* out);
  std::shared_ptr<ColdStore> StoreIfOpen() const;
  void SetReader(const std::string& name, CounterSpace& space);
  // Queues the loads of the ids not in memory for `req`; its token, or 0 if
  // every id is in memory.
  uint64_t QueueLoads(std::span<const Touched> ids, Request req);
  // The (space, id)s a command touches.
  void CollectIds(const CommandSpec& spec, std::span<const std::string_view> args,
                  std::vector<Touched>* out);
  void ReadLoop();
  void OnLoaded(std::vector<ReadItem> items, std::vector<std::string> rows,
                std::vector<bool> found, Status status, int64_t usec);
  void OnSpillDone(const Status& s, uint64_t zero_keys);
  void MaybeAutoSpill();
  // Hands every tiered space's written cold keys to the writer thread, which
  // stores them (the entries stay dirty until it says so).
  void WriteBack();
  // Stops using the store (its jobs done, its readers out) and closes it.
  void CloseStore();
  std::string LoadKey(const ReadItem& item) const;

  Server& server_;
  std::string dir_;  // cold-dir, resolved at start
  std::string checkpoints_;  // <dir_>-checkpoints
  uint64_t epoch_ = 0;       // bumped each time a load replaces the store
  mutable std::mutex store_mu_;
  std::shared_ptr<ColdStore> store_;

  // Loads: requests by park token; ids being loaded -> tokens waiting for them.
  uint64_t next_token_ = uint64_t{1} << 62;  // apart from other AsyncDone tokens
  std::map<uint64_t, Request> requests_;
  std::map<std::string, std::vector<uint64_t>> loading_;
  std::mutex read_mu_;
  std::condition_variable read_cv_;
  std::deque<ReadItem> read_queue_;
  bool stopping_ = false;
  std::vector<std::thread> readers_;
  size_t num_readers_ = 1;  // fixed before the readers start
  std::atomic<int64_t> read_delay_ms_{0};
  std::atomic<int64_t> read_batch_{64};

  // Spills (one at a time, server-wide: the writer thread does them in order).
  std::unique_ptr<JobThread> writer_;
  std::unique_ptr<SpillState> spill_;

  // INFO # Cold.
  uint64_t cache_hits_ = 0, cache_misses_ = 0;
  uint64_t sync_reads_ = 0;  // ids read on the command thread (AOF replay at start-up)
  uint64_t read_batches_ = 0, read_keys_ = 0, read_errors_ = 0;
  uint64_t spills_ = 0, spill_failures_ = 0;
  uint64_t writebacks_ = 0, writeback_errors_ = 0;
  int writebacks_inflight_ = 0;  // rounds queued to the writer, not yet answered
  int64_t last_writeback_ms_ = 0;
  bool last_spill_ok_ = true;
  double last_spill_seconds_ = 0;
  // The longest step of the last spill on the command thread (freeze, commit or abort).
  int64_t last_spill_stall_us_ = 0;
  std::string last_spill_error_;
  std::vector<int64_t> read_latency_usec_;  // the last batches' service times (ring)
  size_t read_latency_next_ = 0;
};

}  // namespace feedkv::server
