// The AOF's on-disk vocabulary, shared by the writer, the reader, the replay
// code and tools/feedkv-check-aof. docs/persistence.md has the full story.
//
// A segment file (appendonly.aof.000001, .000002, ...) is a sequence of
// *groups*. A group is one or more RESP-encoded commands, exactly as a client
// would send them, followed by one trailer line that checksums them:
//
//   *2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n            <- a db change
//   *3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n     <- a command
//   #xxh64:9f0c7a4e1b2d3c5a\r\n                    <- trailer: XXH64 (seed 0)
//                                                   of the group's bytes above
//
// A group holds what the command thread produced in one loop turn (group
// commit); a MULTI/EXEC batch is never split across groups or segments. A
// group whose trailer is missing (a torn tail) or wrong (corruption) is never
// applied. Lines starting with '#' that are not trailers are annotations and
// are ignored, as Redis 7 ignores them.
//
// A position is (segment seq, byte offset in that segment); the global
// offset is the segment's start (recorded in the manifest) plus the offset.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace feedkv::aof {

inline constexpr std::string_view kTrailerPrefix = "#xxh64:";
// "#xxh64:" + 16 lower-case hex digits + "\r\n".
inline constexpr size_t kTrailerSize = 7 + 16 + 2;
// A group is sealed early once it reaches this size, bounding memory and the
// latency of one write.
inline constexpr size_t kMaxGroupBytes = 4 << 20;
// Largest argument count / bulk length the reader accepts in a record.
inline constexpr uint64_t kMaxArgs = 1 << 20;
inline constexpr uint64_t kMaxBulk = 1ull << 32;

struct Position {
  uint64_t segment = 0;  // 0: no position
  uint64_t offset = 0;   // bytes into that segment
  bool operator==(const Position&) const = default;
};

// "appendonly.aof" + 3 -> "appendonly.aof.000003".
std::string SegmentName(std::string_view base, uint64_t seq);
// Inverse of SegmentName; false if `name` is not a segment of `base`.
bool ParseSegmentName(std::string_view base, std::string_view name, uint64_t* seq);
// "appendonly.aof.manifest".
std::string ManifestName(std::string_view base);

// Appends one command in RESP multibulk form.
void AppendCommand(std::string* out, std::span<const std::string> argv);
void AppendCommand(std::string* out, std::span<const std::string_view> argv);
// Appends the trailer for a group whose bytes are `group`.
void AppendTrailer(std::string* out, std::string_view group);
uint64_t GroupHash(std::string_view group);

}  // namespace feedkv::aof
