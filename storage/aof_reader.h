// AOF reading: a strict parser for segment bytes (ScanSegment) and a log
// reader that walks the segments of a manifest from a position (ReadLog).
// Used by start-up replay, tools/feedkv-check-aof and, later, the
// replication feed. Every byte is checked; nothing read from disk is trusted.
//
// Damage is classified as:
//   torn    - the bytes after the last complete group are a valid prefix of a
//             group (a crash mid-write). Only allowed at the end of the last
//             segment; it is cut off (with aof-load-truncated yes).
//   corrupt - anything else: a malformed record, a checksum mismatch, a
//             segment shorter or longer than the manifest says. Start-up stops.
// Stateless functions; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "storage/aof_format.h"
#include "storage/aof_manifest.h"
#include "storage/file_io.h"
#include "storage/status.h"

namespace feedkv::aof {

struct Record {
  uint64_t offset = 0;  // in the segment
  std::span<const std::string_view> argv;
};

struct Group {
  uint64_t begin = 0;   // offset of its first byte in the segment
  uint64_t end = 0;     // offset just past its trailer
  std::vector<Record> records;
  std::vector<std::string_view> args;  // storage behind every record's argv
};

enum class ScanEnd { kClean, kTorn, kCorrupt };

struct ScanResult {
  ScanEnd end = ScanEnd::kClean;
  uint64_t valid_end = 0;     // offset just past the last verified group
  uint64_t error_offset = 0;  // where the damage was found
  std::string error;          // what it is
  uint64_t groups = 0;
  uint64_t records = 0;
};

using GroupFn = std::function<Status(const Group&)>;

// Parses data[from..] (a whole segment's bytes) group by group, calling fn for
// each verified group in order; fn's views point into `data`. Stops early if
// fn fails, returning its status. Returns OK otherwise; damage is in *r.
Status ScanSegment(std::string_view data, uint64_t from, const GroupFn& fn, ScanResult* r);

struct LogReport {
  Position end;              // end of the valid log (after any cut)
  uint64_t end_offset = 0;   // the same, as a global offset
  uint64_t tail_size = 0;    // size of the last segment after any cut
  bool truncated = false;    // a torn tail was cut off
  std::string truncated_file;
  uint64_t truncated_at = 0;     // offset in truncated_file
  uint64_t truncated_bytes = 0;  // bytes cut
  std::string truncated_reason;  // why the tail was judged torn
  uint64_t groups = 0;
  uint64_t records = 0;
};

struct ReadOptions {
  // Cut a torn tail of the last segment (true), or fail with Corruption.
  bool truncate_torn_tail = true;
  // With truncate_torn_tail, also shorten the file on disk (start-up does;
  // a dry check does not).
  bool fix_file = true;
};

// Reads the segments of `m` in `dir` from `from` (a position in one of them)
// to the end of the last, calling fn(seq, group) for every verified group.
// Corruption names the file and the offset.
Status ReadLog(Env* env, const std::string& dir, std::string_view base_name, const Manifest& m,
               Position from, const ReadOptions& options,
               const std::function<Status(uint64_t seq, const Group&)>& fn, LogReport* report);

}  // namespace feedkv::aof
