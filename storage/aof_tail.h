// LogTail: the live AOF as its readers (replica senders) see it. The
// AofWriter's thread publishes the manifest (which segment holds which global
// offsets) and how far the log has been handed to the OS; a reader waits for
// the log to grow past the offset it has sent, and reads the bytes from the
// segment files (LogCursor), never from the command thread's memory.
//
// Readers *pin* the lowest offset they still need; the writer retires no
// segment that holds a pinned byte (a full sync pins the snapshot's position
// before it sends anything). A pin taken while a retirement is under way can
// still lose that race: the reader then finds the segment gone (NotFound)
// and gives up, and its replica asks again.
//
// Thread-safety: every LogTail method may be called from any thread. A
// LogCursor belongs to one thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "storage/aof_manifest.h"
#include "storage/status.h"

namespace feedkv::aof {

class LogTail {
 public:
  struct State {
    Manifest manifest;
    uint64_t written = 0;  // global offset handed to the OS
    bool open = false;     // a writer publishes into it
  };

  // --- the writer ---
  void Publish(const Manifest& m, uint64_t written);
  void PublishWritten(uint64_t written);
  void PublishManifest(const Manifest& m);
  // The writer stopped: readers stop waiting for more.
  void Close();

  // --- readers ---
  State state() const;
  // Waits until the written offset passes `offset`, the tail closes, Wake is
  // called or `timeout` passes; returns the written offset.
  uint64_t WaitBeyond(uint64_t offset, std::chrono::milliseconds timeout);
  // Wakes every waiter (a reader being stopped).
  void Wake();

  // Pins: owner -> lowest offset it needs.
  void Pin(uint64_t owner, uint64_t offset);
  void Unpin(uint64_t owner);
  // The lowest pinned offset; UINT64_MAX without pins.
  uint64_t MinPin() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  State state_;
  uint64_t wakes_ = 0;
  std::map<uint64_t, uint64_t> pins_;
};

// Reads log bytes by global offset from the segment files of a manifest.
class LogCursor {
 public:
  LogCursor(std::string dir, std::string base_name)
      : dir_(std::move(dir)), base_(std::move(base_name)) {}
  ~LogCursor();
  LogCursor(const LogCursor&) = delete;
  LogCursor& operator=(const LogCursor&) = delete;

  // Appends to *out the bytes [from, min(limit, from + max)) that lie in the
  // segment holding `from` (a read never crosses a segment's end). NotFound
  // when no segment of `m` holds `from` or its file is gone.
  Status Read(const Manifest& m, uint64_t from, uint64_t limit, size_t max, std::string* out);

 private:
  std::string dir_, base_;
  int fd_ = -1;
  uint64_t fd_seq_ = 0;
};

}  // namespace feedkv::aof
