// AofManifest: the list of live AOF segments and where each one starts in
// the global offset space. It is the only file that says which segments
// exist; a segment file it does not name is an orphan. It is replaced
// atomically (write temp, fsync, rename, fsync dir) on every change.
//
// Text form (one fact per line; the last line checksums all before it):
//
//   # feedkv AOF manifest; see docs/persistence.md. Do not edit.
//   version 1
//   lineage 6a1f03c2e4b5d7f8
//   segment 1 start 0 file appendonly.aof.000001
//   segment 2 start 67109012 file appendonly.aof.000002
//   checksum 1b2c3d4e5f607182
//
// `lineage` is a random id made when the log is created: an RDB records the
// lineage its position belongs to, so a snapshot is never replayed against a
// different log. Segments are listed in seq order with contiguous seqs.
// A log turned on at runtime (CONFIG SET appendonly yes) has no base until
// its first snapshot is finished in the background; until then a line
// `base pending` (after lineage) says so, and start-up discards such a log
// unless a snapshot of its lineage exists (as Redis ignores its AOF in that
// state). A plain value; not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "storage/file_io.h"
#include "storage/status.h"

namespace feedkv::aof {

struct SegmentInfo {
  uint64_t seq = 0;
  uint64_t start = 0;  // global offset of the segment's first byte
  bool operator==(const SegmentInfo&) const = default;
};

struct Manifest {
  uint64_t lineage = 0;
  bool base_pending = false;
  std::vector<SegmentInfo> segments;

  const SegmentInfo* Find(uint64_t seq) const;
  const SegmentInfo& last() const { return segments.back(); }
  bool operator==(const Manifest&) const = default;

  std::string Serialize(std::string_view base_name) const;
  // Parses and validates (checksum, order, contiguous seqs, increasing starts).
  static Status Parse(std::string_view text, std::string_view base_name, Manifest* out);
};

// Reads dir/<base>.manifest. NotFound if there is none.
Status LoadManifest(Env* env, const std::string& dir, std::string_view base_name, Manifest* out);
// Replaces dir/<base>.manifest atomically.
Status StoreManifest(Env* env, const std::string& dir, std::string_view base_name,
                     const Manifest& m);

}  // namespace feedkv::aof
