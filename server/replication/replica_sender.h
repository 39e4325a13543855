// ReplicaSender: feeds one attached replica from a thread of its own.
//
// After the master's command thread has decided a PSYNC, the sender owns a
// duplicate of the replica's socket for writing (the connection keeps
// reading REPLCONF ACKs on the command thread). It writes the PSYNC reply,
// then for a full sync a snapshot already on disk (the newest one whose
// position the log still holds, pinned before anything is sent; it asks the
// command thread for a BGSAVE when there is none), then the log's bytes from
// that position on, read from the segment files (aof::LogCursor) as the
// AOF writer hands them to the OS. Nothing is buffered beyond one window, so
// a slow or stalled replica costs the master no memory; the command thread
// only learns that the sender ended.
//
// Full-sync payload: to a replica that announced `capa aofpos` (a feedkv
// replica), one bulk `$<len>\r\n` holding the bundle
//   "FKVBUNDLE1", then per file: u32 name length, name, u64 size, the file's
//   bytes, u64 XXH64 of those bytes (all integers little-endian)
// (the checksum follows the bytes so each file is read once): "dump.rdb",
// and when the snapshot has a cold-store checkpoint (server/cold_tier.h)
// each of its files as "cold-ckpt.<checkpoint>.<file>"; to any other
// replica, the snapshot file as Redis sends an RDB: `$<len>\r\n<bytes>`.
//
// Thread-safety: Start/Stop/accessors from the command thread; the callbacks
// run on the sender's thread and must only post to the command thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "storage/aof_tail.h"
#include "storage/file_io.h"
#include "storage/rdb_format.h"

namespace feedkv::server {

struct SenderOptions {
  uint64_t id = 0;  // the replica's client id: its pin in the tail
  int fd = -1;      // a dup of the replica's socket; the sender closes it
  std::shared_ptr<aof::LogTail> tail;
  std::string aof_dir, aof_base, rdb_path;
  std::string replid;
  bool full = false;    // +FULLRESYNC; else +CONTINUE from `from`
  bool psync = true;    // false: the old SYNC, whose payload has no +FULLRESYNC line
  // A full sync's snapshot must be at least this new. SYNC sets it to the log's
  // end at attach: such a client reads the stream from there on (Redis makes a
  // snapshot for every SYNC), so an older snapshot and the log since will not do.
  uint64_t min_snapshot_offset = 0;
  uint64_t from = 0;    // continue: the first byte to send (0-based offset)
  bool bundle = false;  // the replica takes the FKVBUNDLE1 payload
  // The directory of the cold-store checkpoint taken with a snapshot (it may
  // not exist: no cold tables). Empty function: none is ever sent.
  std::function<std::string(const rdb::Header&)> checkpoint_dir;
  size_t window = 4 << 20;
  int64_t timeout_ms = 60000;  // no byte accepted for this long: give up
  // Sender thread: no usable snapshot exists; the command thread should start
  // a BGSAVE. Called at most every few seconds while waiting.
  std::function<void()> need_snapshot;
  // Sender thread: the full-sync snapshot at log offset `offset` is chosen.
  std::function<void(uint64_t offset)> full_sync_chosen;
  // Sender thread, last call: why it stopped.
  std::function<void(const std::string& reason)> on_exit;
};

class ReplicaSender {
 public:
  explicit ReplicaSender(SenderOptions options);
  ~ReplicaSender();  // stops and joins
  ReplicaSender(const ReplicaSender&) = delete;
  ReplicaSender& operator=(const ReplicaSender&) = delete;

  void Start();
  // Asks the thread to stop (it ends within ~100 ms) without waiting.
  void RequestStop();
  bool finished() const { return finished_.load(); }
  // The log offset sent so far (0 until streaming starts).
  uint64_t sent_offset() const { return sent_.load(); }

 private:
  void Run();
  std::string Serve();
  // Writes all of `data`, waiting for the socket; false on error, stop or
  // timeout (*why says which).
  bool WriteAll(std::string_view data, std::string* why);
  // Chooses and pins a snapshot; false when stopped.
  struct BundleFile {
    std::string name;
    int fd = -1;
    uint64_t size = 0;
  };
  bool ChooseSnapshot(int* fd, uint64_t* size, rdb::Header* header, std::string* why);
  // The checkpoint's files, opened (they stay readable if a newer snapshot
  // removes the checkpoint meanwhile); false if one could not be opened.
  bool OpenCheckpoint(const rdb::Header& h, std::vector<BundleFile>* files, std::string* why);
  bool SendSnapshot(const std::vector<BundleFile>& files, std::string* why);
  bool SendFile(const BundleFile& f, std::string* why);

  SenderOptions o_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> finished_{false};
  std::atomic<uint64_t> sent_{0};
};

}  // namespace feedkv::server
