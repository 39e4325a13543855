// AofWriter: stores the journal (storage/journal.h) in AOF segment files,
// from a thread of its own.
//
// It is a JournalConsumer: the command thread hands it each sealed group
// (OnGroup), which only queues a reference to the group's bytes. Segment
// positions are assigned there, on the command thread, so a snapshot taken
// between two groups knows the exact (segment, offset) it equals; a segment's
// start is the journal offset of its first byte, so position and journal
// offset map one to one (the manifest records the starts). The writer
// thread writes queued groups, rolls segments and updates the manifest, and
// fsyncs by policy:
//   kAlways   - after every batch of groups it picked up (group commit), then
//               reports the durable offset;
//   kEverySec - once a second;
//   kNo       - never (the OS decides), except when a segment closes.
// After each batch of writes the written offset is reported (on_written), so
// the server can acknowledge writes once they would survive a process kill.
// A failed write or fsync is reported through on_status and retried once a
// second (never sooner, whatever the policy); everything not yet known durable stays in memory and is written
// again (at its own offset) on retry, so no acknowledged byte is lost.
//
// Thread-safety: OnGroup, RequestRoll, position() and the setters belong to
// one thread (the command thread, the journal's). Callbacks run on the writer
// thread. Jobs run on the writer thread in submission order.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "storage/aof_format.h"
#include "storage/aof_manifest.h"
#include "storage/aof_tail.h"
#include "storage/file_io.h"
#include "storage/fsync_policy.h"
#include "storage/journal.h"
#include "storage/status.h"

namespace feedkv::aof {

struct WriterOptions {
  Env* env = Env::Default();
  std::string dir;
  std::string base_name = "appendonly.aof";
  FsyncPolicy policy = FsyncPolicy::kEverySec;
  uint64_t segment_size = 64 << 20;
  std::chrono::milliseconds retry_interval{1000};
  // Under everysec, written bytes are kept in memory until their fsync (after
  // a failed fsync they are written again: the page cache cannot be trusted).
  // Past this many unsynced bytes the writer fsyncs early, so a heavy write
  // load costs this much memory, not a second's worth of log.
  uint64_t max_unsynced_bytes = 8 << 20;
  // Where readers of the live log (replica senders) learn its manifest and
  // written offset; segments holding a byte pinned there are not retired.
  std::shared_ptr<LogTail> tail;
};

struct WriterCallbacks {
  // Everything up to this global offset is on disk (fsynced).
  std::function<void(uint64_t durable_offset)> on_durable;
  // Everything up to this global offset has been handed to the OS (write(2)):
  // it survives a kill of the process. Called after each batch of writes under
  // everysec and no (under always, on_durable follows at once).
  std::function<void(uint64_t written_offset)> on_written;
  // A write/fsync failed (non-OK), or the writer recovered from one (OK).
  std::function<void(const Status& s)> on_status;
};

// Counters for INFO, readable from any thread.
struct WriterStats {
  uint64_t written_offset = 0;  // global offset written to the OS
  uint64_t durable_offset = 0;  // global offset fsynced
  uint64_t pending_bytes = 0;   // sealed but not yet written
  uint64_t fsyncs = 0;
  uint64_t write_errors = 0;
  int64_t last_fsync_us = 0;    // duration of the last fsync
  // Free space of the AOF directory's file system, in percent (-1: not known
  // yet), sampled on the writer thread at most once a second after an fsync,
  // so that nobody else needs a file-system call to learn it.
  int64_t free_disk_percent = -1;
  bool failing = false;
};

class AofWriter : public JournalConsumer {
 public:
  // `manifest` lists the live segments; appends continue at `tail_size` bytes
  // into its last one, which must be where `journal` is sealed to. The writer
  // does not register itself with the journal; the journal is told to repeat
  // SELECT at each new segment. REQUIRES: that segment file exists with at
  // least tail_size bytes (longer is truncated to tail_size on Start).
  AofWriter(WriterOptions options, Manifest manifest, uint64_t tail_size, Journal* journal,
            WriterCallbacks callbacks);
  ~AofWriter();
  AofWriter(const AofWriter&) = delete;
  AofWriter& operator=(const AofWriter&) = delete;

  // Opens the tail segment and starts the thread.
  Status Start();
  // Writes and fsyncs every group received, then stops the thread (seal the
  // journal first). Returns the last error if data could not be made durable.
  Status Stop();

  // --- command thread ---
  // Queues a sealed group. REQUIRES: group.start == sealed_offset().
  void OnGroup(const JournalGroup& group) override;
  // Makes the next group start a new segment, now (seal the journal first, so
  // the roll falls at the journal's end).
  void RequestRoll();
  // End of the groups received: the position of a snapshot taken now, after
  // the journal is sealed.
  Position position() const { return {seq_, seg_offset_}; }
  uint64_t sealed_offset() const { return seg_start_ + seg_offset_; }
  uint64_t lineage() const { return lineage_; }
  void set_policy(FsyncPolicy p);
  FsyncPolicy policy() const { return policy_; }
  void set_segment_size(uint64_t bytes) { segment_size_ = bytes; }

  // Runs fn(status) on the writer thread once everything sealed before the
  // call is written and fsynced; status is the error if that failed.
  void RunWhenDurable(std::function<void(const Status&)> fn);
  // A snapshot of this log is durable (its new base): drops segments with
  // seq < keep_from from the manifest, then deletes their files, and clears
  // the manifest's `base pending` mark (on the writer thread). Never drops
  // the current segment.
  void RetireBefore(uint64_t keep_from);
  // A copy of the current manifest and stats (any thread).
  Manifest manifest() const;
  WriterStats stats() const;

 private:
  struct Chunk {
    uint64_t seq;
    uint64_t start;   // global start of the segment
    uint64_t offset;  // offset of the chunk in its segment
    std::shared_ptr<const std::string> data;  // a sealed group; null: open segment `seq`
    bool counted;     // already subtracted from stats_.pending_bytes
    size_t size() const { return data ? data->size() : 0; }
  };
  struct Job {
    uint64_t after_offset;  // global offset that must be durable first (0: none)
    std::function<void(const Status&)> fn;
    uint64_t retire_before = 0;
  };

  void Roll();
  void Run();
  void ProcessLocked(std::unique_lock<std::mutex>& lk);
  // Writer thread: write pending chunks; fsync per policy (or if forced).
  // Writes the picked-up chunks; under everysec fsyncs early past
  // max_unsynced_bytes. `policy` is the thread's copy of the fsync policy.
  Status WritePending(FsyncPolicy policy);
  // Reports the written offset (everysec and no) if it moved.
  void ReportWritten(FsyncPolicy policy);
  Status SyncNow();
  Status OpenSegment(uint64_t seq, uint64_t start, bool truncate, uint64_t tail_size);
  void RunJob(Job& job, const Status& st);
  void Retire(uint64_t keep_from);
  void SetFailing(const Status& s);

  WriterOptions opts_;
  WriterCallbacks cb_;

  // Command-thread state.
  uint64_t lineage_;
  uint64_t seq_;
  uint64_t seg_start_;
  uint64_t seg_offset_;  // bytes received in the current segment
  Journal* journal_;
  uint64_t segment_size_;
  FsyncPolicy policy_;

  // Shared state.
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Chunk> queue_;      // sealed, not yet picked up
  std::deque<Job> jobs_;
  bool stop_ = false;
  bool started_ = false;
  FsyncPolicy thread_policy_;
  Manifest manifest_;            // guarded: the writer thread replaces it
  WriterStats stats_;
  uint64_t tail_size_;

  // Writer-thread state.
  std::thread thread_;
  std::unique_ptr<WritableFile> file_;
  uint64_t file_seq_ = 0;
  uint64_t file_start_ = 0;
  uint64_t synced_size_ = 0;       // bytes of file_ known durable
  std::deque<Chunk> pending_;      // picked up, not yet written
  std::deque<Chunk> unsynced_;     // written to file_, not yet fsynced
  bool failing_ = false;
  uint64_t reported_written_ = 0;  // last offset given to on_written
  bool need_truncate_ = false;     // a failed write may have left junk
  Status last_error_;
  std::chrono::steady_clock::time_point last_sync_;
  std::chrono::steady_clock::time_point last_statvfs_;
  std::chrono::steady_clock::time_point last_attempt_;
};

}  // namespace feedkv::aof
