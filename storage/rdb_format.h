// The snapshot (RDB) file format, shared by rdb_writer, rdb_reader and
// tools/feedkv-check-rdb. All integers are little-endian; "varint" is
// unsigned LEB128; "string" is varint length + bytes.
//
//   Header, 64 bytes:
//     0   magic "FEEDKVDB"
//     8   u32 version (kRdbVersion)
//     12  u32 flags (0)
//     16  u64 AOF lineage the position belongs to (0: no AOF)
//     24  u64 AOF segment seq       } the position this snapshot equals:
//     32  u64 offset in the segment } replay starts there
//     40  u64 global AOF offset     }
//     48  i64 creation time, unix ms
//     56  u64 XXH64 of bytes 0..55
//   Sections, each: u8 kind, body, u64 XXH64 of (kind byte + body):
//     kSectionAux       varint n, n x (string name, string value)
//     kSectionDatabase  varint db, varint keys, varint expires, then entries:
//                         u8 tag (kind | kHasExpire), [i64 expire ms],
//                         string key, value by kind:
//                           kEntryString   string
//                           kEntryInteger  i64
//                           kEntryObject   u8 ValueType, blob of Object::SerializeTo
//                       closed by tag kEntryEnd; keys/expires must match.
//     kSectionCounters  varint n, n x (string name, u8 kCounterStream, the image
//                       CounterSpace::WriteTo streams: self-delimiting, sparse).
//                       Version 1 files hold (string name, blob of a counter space
//                       image of format 1) instead; readers accept both.
//     kSectionFunctions varint n, n x string: the code of each function library
//                       (FUNCTION LOAD's argument); written only when n > 0.
//   A blob is u8 0 + string, or (rdbcompression, >= 4 KiB) u8 1 + varint
//   length + runs of (varint n, n literal bytes, varint zero-run length).
//   End: u8 kSectionEnd, u64 XXH64 of every byte of the file before it.
//
// Example: an empty snapshot is the header, an AUX section, an empty
// counters section (03 00 + checksum) and FF + checksum.
#pragma once

#include <cstdint>
#include <string_view>

namespace feedkv::rdb {

inline constexpr std::string_view kMagic = "FEEDKVDB";
// 2: counter spaces streamed (kCounterStream) in the sparse image format 2.
// 1: counter spaces as blobs of whole-table images; still read.
inline constexpr uint32_t kRdbVersion = 2;
inline constexpr size_t kHeaderSize = 64;

inline constexpr uint8_t kSectionAux = 0x01;
inline constexpr uint8_t kSectionDatabase = 0x02;
inline constexpr uint8_t kSectionCounters = 0x03;
inline constexpr uint8_t kSectionFunctions = 0x04;
inline constexpr uint8_t kSectionEnd = 0xFF;

inline constexpr uint8_t kEntryEnd = 0x00;
inline constexpr uint8_t kEntryString = 0x01;
inline constexpr uint8_t kEntryInteger = 0x02;
inline constexpr uint8_t kEntryObject = 0x03;
inline constexpr uint8_t kHasExpire = 0x80;

// Counters section: what follows a space's name. Blob encodings are 0 and 1.
inline constexpr uint8_t kCounterStream = 0x02;

// What the header says.
struct Header {
  uint32_t version = kRdbVersion;
  uint64_t aof_lineage = 0;
  uint64_t aof_segment = 0;
  uint64_t aof_segment_offset = 0;
  uint64_t aof_offset = 0;
  int64_t ctime_ms = 0;
};

}  // namespace feedkv::rdb
