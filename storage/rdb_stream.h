// RdbSink / RdbSource: a rio-like checksummed byte stream. The RDB code is
// written once against these, and works on a file, a string (DEBUG RELOAD,
// tests) and later a replica socket. Both keep two running XXH64 states: one
// over the whole stream and one over the current section, and hash in large
// chunks (on buffer flush/refill), so checksumming costs little per record.
// Not thread-safe.
#pragma once

#include <xxhash.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "storage/file_io.h"
#include "storage/status.h"

namespace feedkv::rdb {

class RdbSink {
 public:
  // Writes to `file` (not owned) or appends to `out` (not owned).
  explicit RdbSink(WritableFile* file);
  explicit RdbSink(std::string* out);
  ~RdbSink();

  void Write(const void* p, size_t n);
  void PutU8(uint8_t v) { Write(&v, 1); }
  void PutFixed32(uint32_t v);
  void PutFixed64(uint64_t v);
  void PutVarint(uint64_t v);
  void PutString(std::string_view s) {
    PutVarint(s.size());
    Write(s.data(), s.size());
  }

  // A value blob (object or counter space snapshot form): u8 0 + string, or,
  // when `compress` and the blob is large, u8 1 + varint total length + runs
  // of (varint literal length, literal bytes, varint zero-run length) that
  // add up to it. Pre-allocated tables are mostly zeros; this keeps them
  // small on disk at the cost of one scan.
  void PutBlob(std::string_view blob, bool compress);

  // A section starts with its kind byte; EndSection appends its checksum.
  void BeginSection(uint8_t kind);
  void EndSection();
  // Appends kSectionEnd and the whole-stream checksum, then flushes.
  Status Finish();
  // Bytes written so far.
  uint64_t bytes() const { return flushed_ + buf_.size(); }
  // The first write error, if any (later writes are dropped).
  const Status& status() const { return status_; }
  // Hashes and writes the buffer. Also called when it fills.
  void Flush();

 private:
  void HashPending();

  WritableFile* file_ = nullptr;
  std::string* out_ = nullptr;
  std::string buf_;
  size_t hashed_ = 0;  // bytes of buf_ already in the hash states
  uint64_t flushed_ = 0;
  XXH64_state_t* file_hash_;
  XXH64_state_t* section_hash_;
  Status status_;
};

class RdbSource {
 public:
  // Reads from `file` (not owned), or from `data` (must outlive the source).
  explicit RdbSource(SequentialFile* file);
  explicit RdbSource(std::string_view data);
  ~RdbSource();

  // False at end of input or on a read error (see status()).
  bool Read(void* p, size_t n);
  bool GetU8(uint8_t* v) { return Read(v, 1); }
  bool GetFixed32(uint32_t* v);
  bool GetFixed64(uint64_t* v);
  // False also on an over-long encoding.
  bool GetVarint(uint64_t* v);
  // Reads a string of at most max_len bytes into *s.
  bool GetString(std::string* s, uint64_t max_len);
  // Reads PutBlob's form. The view is valid until the next call.
  bool GetBlob(std::string_view* blob, uint64_t max_len, std::string* scratch);
  // The same after its encoding byte `enc` was read by the caller.
  bool GetBlobBody(uint8_t enc, std::string_view* blob, uint64_t max_len, std::string* scratch);
  // Returns a view valid until the next call (no copy when possible).
  bool GetStringView(std::string_view* s, uint64_t max_len, std::string* scratch);

  // Offset of the next byte to be read (for error messages).
  uint64_t offset() const { return consumed_base_ + pos_; }
  // Call just before reading a section's kind byte (or the end marker).
  void BeginSection();
  // Reads the section checksum and compares it. Returns false on mismatch.
  bool EndSection(uint64_t* stored, uint64_t* computed);
  // After reading kSectionEnd: the checksum of everything before the
  // trailing u64, then reads that u64.
  bool FinishFile(uint64_t* stored, uint64_t* computed);
  const Status& status() const { return status_; }

 private:
  bool Fill(size_t need);
  // Reads len bytes into *out, growing it as they arrive.
  bool ReadGrowing(std::string* out, uint64_t len);
  void HashConsumed();

  SequentialFile* file_ = nullptr;
  std::string buf_;
  std::string_view view_;  // the readable window: buf_ or the caller's data
  size_t pos_ = 0;
  size_t hashed_ = 0;
  uint64_t consumed_base_ = 0;  // stream offset of view_[0]
  bool eof_ = false;
  XXH64_state_t* file_hash_;
  XXH64_state_t* section_hash_;
  Status status_;
};

}  // namespace feedkv::rdb
