// ColdTier: the server side of the cold counter tier (docs/counters.md, "Cold
// tables"). It owns the on-disk store (storage/cold/ColdStore, opened on the
// first spill or at start-up when a loaded space has cold tables), one writer
// thread that runs spills in order, and `cold-read-threads` reader threads.
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
//    nothing.
//  - Rows on disk are written only by spills; written cold keys stay in the
//    warm cache (and in snapshots), so a snapshot plus the store's rows of its
//    cold ranges are always one state.
//
// Thread-safety: the public methods run on the command thread. The threads
// touch only the store and their queues, and post results back.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
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

  // After a snapshot was loaded: gives every space with a spilling history its
  // reader of the store, and checks that the store holds the rows of every
  // cold table (opening it). Not OK: the load must fail (the rows are missing
  // or the store is damaged; the message names the directory).
  Status AttachLoaded();

  // Called before a command runs. True if it touches cold ids that are not in
  // memory: the client is parked and the command runs again once they are.
  bool ParkForLoads(Client& c, const CommandSpec& spec, std::span<const std::string_view> args);

  // Spills table `table` of space `name` (-1: the space's oldest hot table
  // that is not the newest). `done` runs on the command thread when the spill
  // ended (OK: the table is cold). Not OK at once when it cannot start.
  Status StartSpill(const std::string& name, int table, std::function<void(const Status&)> done);

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
  };
  struct Request {
    uint64_t client_id = 0;
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
    std::vector<std::function<void(const Status&)>> done;
  };

  // The store, opening it under cold-dir if it is not open yet (any thread).
  Status Store(std::shared_ptr<ColdStore>* out);
  std::shared_ptr<ColdStore> StoreIfOpen() const;
  void SetReader(const std::string& name, CounterSpace& space);
  // The (space, id)s a command touches.
  void CollectIds(const CommandSpec& spec, std::span<const std::string_view> args,
                  std::vector<Touched>* out);
  void ReadLoop();
  void OnLoaded(std::vector<ReadItem> items, std::vector<std::string> rows,
                std::vector<bool> found, Status status, int64_t usec);
  void OnSpillDone(const Status& s, uint64_t zero_keys);
  void MaybeAutoSpill();
  std::string LoadKey(const ReadItem& item) const;

  Server& server_;
  std::string dir_;  // cold-dir, resolved at start
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
  std::atomic<int64_t> read_delay_ms_{0};
  std::atomic<int64_t> read_batch_{64};

  // Spills (one at a time, server-wide: the writer thread does them in order).
  std::unique_ptr<JobThread> writer_;
  std::unique_ptr<SpillState> spill_;

  // INFO # Cold.
  uint64_t cache_hits_ = 0, cache_misses_ = 0;
  uint64_t read_batches_ = 0, read_keys_ = 0, read_errors_ = 0;
  uint64_t spills_ = 0, spill_failures_ = 0;
  bool last_spill_ok_ = true;
  double last_spill_seconds_ = 0;
  std::string last_spill_error_;
  std::vector<int64_t> read_latency_usec_;  // the last batches' service times (ring)
  size_t read_latency_next_ = 0;
};

}  // namespace feedkv::server
