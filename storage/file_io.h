// Env: the one door persistence code uses to reach the file system (AOF
// segments, the manifest, snapshots), in leveldb's shape. Production code uses
// Env::Default(); tests wrap it in a FaultInjectionEnv to make writes or
// fsyncs fail (full disk, I/O error) without a real broken disk.
//
// Thread-safety: Env methods may be called from any thread. A WritableFile or
// SequentialFile is used by one thread at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "storage/status.h"

namespace feedkv {

// A file written at its end. The append position starts at the file's size.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  // Writes all of `data` at the append position. On error some prefix of it
  // may have reached the file; Size() then still reports the position before
  // the call, and the caller decides whether to Truncate back and retry.
  virtual Status Append(std::string_view data) = 0;
  // fdatasync: the bytes appended so far survive a crash once this returns OK.
  virtual Status Sync() = 0;
  // Sets the file size and the append position to `size`.
  virtual Status Truncate(uint64_t size) = 0;
  virtual Status Close() = 0;
  virtual uint64_t Size() const = 0;
};

// A file read from front to back.
class SequentialFile {
 public:
  virtual ~SequentialFile() = default;
  // Reads up to n bytes into scratch; *got is the count (0 at end of file).
  virtual Status Read(size_t n, char* scratch, size_t* got) = 0;
};

// A read-only view of a whole file (mmap). Valid until destroyed.
class MappedFile {
 public:
  virtual ~MappedFile() = default;
  virtual std::string_view data() const = 0;
};

class Env {
 public:
  virtual ~Env() = default;
  // The process-wide POSIX Env. Never destroyed.
  static Env* Default();

  // Opens `path` for appending, creating it; truncates it first if `truncate`.
  virtual Status NewWritableFile(const std::string& path, bool truncate,
                                 std::unique_ptr<WritableFile>* out) = 0;
  virtual Status NewSequentialFile(const std::string& path,
                                   std::unique_ptr<SequentialFile>* out) = 0;
  virtual Status MapFile(const std::string& path, std::unique_ptr<MappedFile>* out) = 0;
  // Reads a small file whole.
  virtual Status ReadFile(const std::string& path, std::string* out) = 0;
  virtual Status FileSize(const std::string& path, uint64_t* size) = 0;
  virtual bool FileExists(const std::string& path) = 0;
  // Names (not paths) of the entries of `dir`, without "." and "..".
  virtual Status ListDir(const std::string& dir, std::vector<std::string>* names) = 0;
  virtual Status CreateDirIfMissing(const std::string& dir) = 0;
  virtual Status RenameFile(const std::string& from, const std::string& to) = 0;
  virtual Status RemoveFile(const std::string& path) = 0;
  virtual Status TruncateFile(const std::string& path, uint64_t size) = 0;
  // fsyncs a directory, making renames and creations in it durable.
  virtual Status SyncDir(const std::string& dir) = 0;
};

// Writes `data` to `path` so that a crash leaves either the old file or the
// new one: write `path`.tmp, fsync, rename over `path`, fsync the directory.
Status WriteFileAtomic(Env* env, const std::string& path, std::string_view data);

// "dir/name", without doubling the slash.
std::string JoinPath(const std::string& dir, const std::string& name);
// The directory part of a path ("." when there is none).
std::string DirName(const std::string& path);

// An Env that forwards to another and fails operations on request. Knobs are
// atomics so a test thread may flip them while a writer thread runs.
class FaultInjectionEnv : public Env {
 public:
  explicit FaultInjectionEnv(Env* base) : base_(base) {}

  // Appends fail with NoSpace (as a full disk) while set. A failing append
  // first writes half of its data, as a short write would.
  std::atomic<bool> fail_appends{false};
  // Sync() fails with IOError while set.
  std::atomic<bool> fail_syncs{false};
  // Renames fail with IOError while set.
  std::atomic<bool> fail_renames{false};
  std::atomic<int> appends{0};
  std::atomic<int> syncs{0};

  Status NewWritableFile(const std::string& path, bool truncate,
                         std::unique_ptr<WritableFile>* out) override;
  Status NewSequentialFile(const std::string& path, std::unique_ptr<SequentialFile>* out) override {
    return base_->NewSequentialFile(path, out);
  }
  Status MapFile(const std::string& path, std::unique_ptr<MappedFile>* out) override {
    return base_->MapFile(path, out);
  }
  Status ReadFile(const std::string& path, std::string* out) override {
    return base_->ReadFile(path, out);
  }
  Status FileSize(const std::string& path, uint64_t* size) override {
    return base_->FileSize(path, size);
  }
  bool FileExists(const std::string& path) override { return base_->FileExists(path); }
  Status ListDir(const std::string& dir, std::vector<std::string>* names) override {
    return base_->ListDir(dir, names);
  }
  Status CreateDirIfMissing(const std::string& dir) override {
    return base_->CreateDirIfMissing(dir);
  }
  Status RenameFile(const std::string& from, const std::string& to) override;
  Status RemoveFile(const std::string& path) override { return base_->RemoveFile(path); }
  Status TruncateFile(const std::string& path, uint64_t size) override {
    return base_->TruncateFile(path, size);
  }
  Status SyncDir(const std::string& dir) override { return base_->SyncDir(dir); }

 private:
  Env* base_;
};

}  // namespace feedkv
