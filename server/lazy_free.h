// LazyFree: frees big values and whole flushed databases on its own thread,
// as Redis's lazyfree: UNLINK, DEL under lazyfree-lazy-user-del, and
// FLUSHALL / FLUSHDB ASYNC (or under lazyfree-lazy-user-flush). Freeing a
// set of ten million members walks ten million allocations; the command
// thread only unlinks the key and hands the value over. INFO memory shows
// lazyfree_pending_objects and lazyfreed_objects.
//
// A value goes to the thread only when freeing it is worth a hand-over:
// Redis counts allocations (LAZYFREE_THRESHOLD, 64); feedkv's proxy is the
// bytes the value owns (MemoryUsage), at least kThresholdBytes. Smaller
// values are freed at once, as in Redis.
//
// Free and FreeDatabase run on the command thread; the counters may be read
// from any thread. Values handed over must not be reachable from anything
// else (the keyspace has already forgotten them).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "server/job_thread.h"
#include "storage/key_table.h"
#include "storage/object.h"

namespace feedkv::server {

class LazyFree {
 public:
  static constexpr size_t kThresholdBytes = 16 * 1024;

  // Frees `value` on the thread if it is big, here otherwise.
  void Free(std::unique_ptr<Object> value);
  // Frees the `keys` entries of a database detached by Database::DetachAll.
  void FreeDatabase(std::unique_ptr<KeyTable> table, uint64_t keys);

  uint64_t pending() const { return pending_.load(std::memory_order_relaxed); }
  uint64_t freed() const { return freed_.load(std::memory_order_relaxed); }
  // CONFIG RESETSTAT.
  void ResetFreed() { freed_.store(0, std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> pending_{0};
  std::atomic<uint64_t> freed_{0};
  // Last: its destructor runs the jobs already queued, while the counters live.
  JobThread thread_;
};

}  // namespace feedkv::server
