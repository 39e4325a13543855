// Evictor: holds used memory under `maxmemory`, as Redis's evict.c.
//
// Before every command a client sends (Server::Execute), Perform compares
// used memory (Server::UsedMemory: the allocator's count plus the counter
// table pages) with the limit. Over it, the policy picks victims until the
// excess is freed: the *-random policies pick random keys, the others sample
// `maxmemory-samples` keys of each database per round into an EvictionPool
// (storage/eviction_pool.h) and delete its best candidate. Each eviction is
// logged as a DEL (so the AOF and replicas see it, as they see an expiry) and
// invalidates WATCH. When nothing can be evicted (noeviction, or no key the
// policy may take) Perform answers kFail and the server refuses deny-oom
// commands with -OOM; everything else still runs.
//
// Eviction is time-boxed per command by `maxmemory-eviction-tenacity`; past
// the box it continues from the event loop (kRunning) and the command runs.
// Counter spaces count towards used memory but are never evicted: a counter
// has no other copy to reload from (the cold tier will move them to disk
// instead). Nothing is evicted while loading, during CLIENT PAUSE, or (once
// replication lands) on a replica: a replica mirrors its master's DELs.
//
// Not thread-safe: the command thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "storage/eviction_pool.h"

namespace feedkv {
struct Entry;
}

namespace feedkv::server {

class Server;

class Evictor {
 public:
  enum class Result { kOk, kRunning, kFail };

  explicit Evictor(Server& server) : server_(server) {}
  Evictor(const Evictor&) = delete;
  Evictor& operator=(const Evictor&) = delete;

  // Frees memory until used memory is under the limit or the time box ends.
  Result Perform();
  // CONFIG SET maxmemory / maxmemory-policy: warns when the new limit is
  // below the memory in use and starts evicting from the event loop.
  void OnLimitChanged();

  uint64_t evicted_keys() const { return evicted_keys_; }
  // Milliseconds spent over the limit, in total and in the current stretch.
  uint64_t total_exceeded_ms() const;
  uint64_t current_exceeded_ms() const;
  void ResetStats();

 private:
  // Whether used memory exceeds the limit; if so, *to_free is the excess.
  bool OverLimit(size_t* to_free) const;
  bool SafeToEvict() const;
  // One victim by the policy: its database and name. False: none to take.
  bool PickVictim(int* db, std::string* key);
  bool PickRandom(bool volatile_only, int* db, std::string* key);
  // Fills sample_ with up to `count` candidates of database i: a random
  // sample, or where that finds none, the next stretch of a scan.
  void Gather(int i, size_t count, bool volatile_only);
  // The time box of one Perform, from maxmemory-eviction-tenacity.
  uint64_t TimeLimitUs() const;
  void StartBackground();
  void UpdateExceeded(Result r);

  Server& server_;
  EvictionPool pool_;
  std::vector<const Entry*> sample_;
  std::vector<uint64_t> scan_cursors_;  // per database, for Gather's scans
  int next_random_db_ = 0;
  bool background_ = false;  // continuing from the event loop
  uint64_t evicted_keys_ = 0;
  uint64_t total_exceeded_us_ = 0;
  int64_t exceeded_since_us_ = 0;  // 0: under the limit
};

}  // namespace feedkv::server
