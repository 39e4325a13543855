// Persistence: the glue between the Server and the storage-level AOF and
// snapshot code. Owned by the Server (Server::persistence()). It
//   - loads the dataset at start-up (persistence_load.cc): the newest valid
//     snapshot, then the AOF from the snapshot's position through the one
//     LogApplier; the journal then continues at the log's end offset;
//   - stores the journal (persistence_aof.cc): the AofWriter is a consumer
//     of Server::journal(), which seals one group per loop turn (group
//     commit). The writer thread's progress is posted back as
//     WaitingClients::LogProgress, which releases the replies held for it
//     (Server::set_reply_ack: written under everysec/no, fsynced under
//     always); write/fsync failures become MISCONF until the writer recovers;
//   - takes snapshots (persistence_snapshot.cc): SAVE in the foreground,
//     BGSAVE / BGREWRITEAOF / save points in a forked child (copy-on-write),
//     finished (rename, fsync dir, segment retirement) off the command
//     thread, after the AOF is durable up to the snapshot's position;
//   - runs the cron, config changes and shutdown (persistence.cc) and
//     answers INFO persistence (persistence_info.cc).
// All methods run on the command thread. See docs/persistence.md.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "server/server.h"
#include "storage/aof_reader.h"
#include "storage/aof_writer.h"
#include "storage/file_io.h"
#include "storage/rdb_format.h"
#include "storage/rdb_writer.h"
#include "storage/status.h"

namespace feedkv::server {

class JobThread;

class Persistence {
 public:
  Persistence(Server& server, Env* env);
  ~Persistence();

  // Loads the dataset and starts the AOF writer; registers the cron and
  // shutdown hooks and the INFO section. False (after logging) if the server
  // must not start.
  bool Attach();

  // SAVE: a snapshot in the foreground.
  Status Save();
  // BGSAVE (rewrite=false) or BGREWRITEAOF (rewrite=true: the AOF rolls to a
  // new segment and the snapshot is taken at its start). *reply is the
  // status text for the client.
  Status BgSave(bool rewrite, bool schedule, std::string* reply);
  // FLUSHALL just emptied the dataset: with save points configured, as
  // Redis, a running BGSAVE (now outdated) is stopped and the empty dataset
  // is saved, so a restart cannot bring the flushed keys back; the change
  // count starts again from 0. The save is taken in the background (Redis
  // saves in the foreground).
  void AfterFlushAll();
  // BGREWRITEAOF inside EXEC: as Redis, no fork there; the rewrite starts at
  // the next cron tick.
  Status ScheduleRewrite(std::string* reply);
  int64_t last_save_unix() const { return last_save_ms_ / 1000; }
  // DEBUG RELOAD: save, empty the dataset, load the snapshot back. !flush
  // (NOFLUSH) keeps the dataset and loads into it: a key or function library
  // it already holds fails the load unless `merge`, which replaces them.
  Status Reload(bool save, bool flush = true, bool merge = false);
  // DEBUG LOADAOF: empties the dataset and loads what a restart would: the
  // snapshot, then the log after it (with the log off, the snapshot alone,
  // which is what BGREWRITEAOF writes then). REQUIRES: the log is written up
  // to the journal's end.
  Status ReloadFromLog();

  // --- for replication ---
  // The live log as its readers see it (one for the process's life).
  std::shared_ptr<aof::LogTail> log_tail() const { return tail_; }
  bool log_on() const { return writer_ != nullptr; }
  const std::string& aof_directory() const { return aof_dir_; }
  // The AOF file system's free space in percent, as the writer thread last
  // sampled it (-1: no log, or not sampled yet). Never touches the disk.
  int64_t aof_free_disk_percent() const;
  std::string snapshot_path() const { return rdb_path(); }
  bool snapshot_in_progress() const { return child_.pid > 0 || finalizing_ > 0; }
  // Turns the AOF on if it is off (a node with replicas, or a replica, keeps
  // its log); logs why.
  Status TurnOnLog(std::string_view why);
  // A replica's full sync: the verified snapshot at `staged` replaces the
  // dataset and becomes the base of a new log that continues at its
  // position, under its lineage (the master's). *h is its header.
  Status AdoptSnapshot(const std::string& staged, rdb::Header* h);
  // A diverged replica's +TRUNCATE: moves the log's bytes after global
  // offset `at` to the file `aside`, cuts the log there and rebuilds the
  // dataset as of `at` (the newest local snapshot at or before it, then the
  // log). NotFound, changing nothing, when the log or no snapshot reaches
  // back to `at` (then only a full sync helps).
  Status RewindTo(uint64_t at, const std::string& aside);

 private:
  struct Child {
    pid_t pid = 0;
    bool rewrite = false;
    std::string tmp;
    rdb::Header header;
    int64_t start_ms = 0;
    uint64_t dirty_at_start = 0;
    // The cold store's checkpoint taken with this snapshot (cold_tier.h), if
    // its counter spaces have cold tables.
    bool cold_checkpoint = false;
    std::shared_future<Status> cold_done;
  };

  std::string rdb_path() const;
  aof::FsyncPolicy fsync_policy() const;
  std::string aof_dir() const;
  void RemoveTemporaryFiles();
  bool LoadAtStartup();
  // Replaces the dataset with the snapshot at `path`.
  Status LoadSnapshot(const std::string& path, rdb::Header* h, bool flushed = true, bool merge = false);
  Status ReplayAof(const aof::Manifest& m, aof::Position from, aof::LogReport* report);
  // A new log at the journal's offset; lineage 0 makes a new one. With
  // save_base its base snapshot is written first, in the foreground (start-up
  // and replication); with base_pending the manifest says the base is still
  // to come (StartBaseRewrite).
  Status StartNewLog(bool save_base, uint64_t lineage = 0, bool base_pending = false);
  // The background snapshot that becomes the base of a log turned on at
  // runtime; scheduled for the cron inside EXEC or while another child runs.
  void StartBaseRewrite(bool in_exec);
  // Stops the snapshot child (SIGKILL, reaped, its file removed), logging `why`.
  void KillChild(std::string_view why);
  // Removes the segments (and manifest) of the log in aof_dir_.
  void RemoveLogFiles();
  Status OpenWriter(const aof::Manifest& m, uint64_t tail_size);
  void StopWriter();
  // Which log progress acknowledges a write under the current policy.
  void UpdateReplyAck();
  rdb::Header SnapshotHeader();
  // What a snapshot taken now, at position `h`, is made of.
  rdb::SnapshotSource Source(const rdb::Header& h);
  // Runs `done(status)` once the file `tmp` has become the snapshot (rename
  // + fsync dir) after the AOF is durable to its position, and segments
  // before it are retired. `done` runs on the command thread.
  void Finalize(std::string tmp, rdb::Header h, std::function<void(const Status&)> done);
  // The work that turns `tmp` into the snapshot; `after(status)` runs on the
  // thread that did it.
  std::function<void(const Status&)> FinishWork(std::string tmp, rdb::Header h,
                                                std::function<void(const Status&)> after);
  // Runs work on the writer thread once the AOF is durable (or on the job
  // thread without an AOF).
  void RunFinish(std::function<void(const Status&)> work);
  void Cron(int64_t now_ms);
  void ReapChild();
  // A reaped child's snapshot, once its cold checkpoint (if any) is done.
  void FinishChild(const Child& c);
  // INFO's last_bgsave/rewrite status and duration for a child that ended.
  void RecordChild(const Child& c, bool success);
  // `h` is the newest snapshot now (older cold checkpoints go).
  void SnapshotTaken(const rdb::Header& h);
  // Makes the log match appendonly / appendfsync / aof-segment-size (their
  // change hook runs it after the CONFIG SET that changed one; in_exec: that
  // CONFIG SET ran inside EXEC).
  void ApplyLogConfig(bool in_exec = false);
  void UpdateWriteError();
  Status Shutdown(const ShutdownOptions& options);
  void InfoSection(std::string* out);

  Server& server_;
  Env* env_;
  std::unique_ptr<aof::AofWriter> writer_;
  std::shared_ptr<aof::LogTail> tail_ = std::make_shared<aof::LogTail>();
  std::unique_ptr<JobThread> jobs_;
  std::string aof_dir_;  // fixed at start (dir may change later)
  std::string rdb_dir_;

  Child child_;
  bool rewrite_scheduled_ = false;
  int64_t rewrite_not_before_ms_ = 0;  // a scheduled rewrite waits until then
  // The live log was turned on at runtime and no snapshot of it is durable yet.
  bool base_pending_ = false;
  static constexpr int64_t kBaseRetryMs = 5000;
  bool bgsave_scheduled_ = false;
  int64_t last_save_ms_ = 0;
  int64_t last_bgsave_try_ms_ = 0;
  bool last_bgsave_ok_ = true;
  int64_t last_bgsave_secs_ = -1;
  bool last_rewrite_ok_ = true;
  int64_t last_rewrite_secs_ = -1;
  uint64_t rdb_saves_ = 0;
  uint64_t aof_rewrites_ = 0;
  int64_t last_fork_us_ = 0;
  uint64_t total_forks_ = 0;
  uint64_t finalizing_ = 0;
  std::string aof_error_;       // non-empty while the AOF cannot be written
  rdb::Header last_snapshot_;   // position of the newest snapshot
  uint64_t load_keys_ = 0, load_expired_ = 0;
  int64_t load_ms_ = 0;
  // Settings seen at the last cron tick, to act on CONFIG SET.
  bool shut_down_ = false;
};

}  // namespace feedkv::server
