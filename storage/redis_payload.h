// The pieces of Redis's RDB value encoding that DUMP/RESTORE payloads are made of,
// so values move between Redis 7 and feedkv (DUMP on one, RESTORE on the other):
//
//   payload = [RDB type byte][value][RDB version: 2 bytes LE][CRC-64: 8 bytes LE]
//
// with Redis's length encoding (6/14/32/64-bit lengths, int8/16/32 and LZF-compressed
// strings), its CRC-64 (Jones polynomial, reflected), and readers for the compact
// blobs Redis 7.0 writes inside values: listpacks and intsets.
//
// Pure functions and value types over bytes; thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

namespace feedkv::redis_payload {

// RDB value types (rdb.h).
enum RdbType : uint8_t {
  kString = 0,
  kList = 1,
  kSet = 2,
  kZset = 3,
  kHash = 4,
  kZset2 = 5,
  kSetIntset = 11,
  kHashListpack = 16,
  kZsetListpack = 17,
  kListQuicklist2 = 18,
  kStreamListpacks = 15,   // Redis 5.0-6.2
  kStreamListpacks2 = 19,  // Redis 7.0: first ID, max deleted ID, entries added, entries read
};

// The RDB version Redis 7.0 writes and the highest it reads.
inline constexpr uint16_t kRdbVersion = 10;

// Redis's crc64 (crc64.c): CRC-64/Jones, reflected, init 0, no final xor.
uint64_t Crc64(uint64_t crc, std::string_view bytes);

// Appends the footer (version and CRC over everything before) to a payload body.
void AppendFooter(std::string* payload);
// Redis's verifyDumpPayload: the version is at most ours and the CRC matches. On
// success *body is the payload without its footer.
bool CheckFooter(std::string_view payload, std::string_view* body);

// LZF (lzf_d.c) decompression into exactly `out_len` bytes: false if malformed.
bool LzfDecompress(std::string_view in, size_t out_len, std::string* out);

// Writes RDB-encoded lengths, strings and doubles.
class Writer {
 public:
  void Type(RdbType t) { out_.push_back(static_cast<char>(t)); }
  void Length(uint64_t n);
  void String(std::string_view s);  // uncompressed, as Redis does for short strings
  void BinaryDouble(double d);      // 8 bytes little-endian
  void Raw(std::string_view bytes) { out_.append(bytes); }
  std::string Finish();             // the body with its footer
 private:
  std::string out_;
};

// Reads what Writer writes, and what Redis writes: integer- and LZF-encoded strings
// included. Every read is bounded by the input; false on malformed input.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool Byte(uint8_t* b);
  bool Length(uint64_t* n);
  bool String(std::string* s);
  bool BinaryDouble(double* d);
  // The next n bytes as they are (a stream's raw IDs and millisecond times).
  bool Raw(size_t n, std::string_view* bytes);
  bool done() const { return in_.empty(); }
 private:
  // A length, or (*encoded) the special string encoding in *n (0 int8, 1 int16,
  // 2 int32, 3 LZF).
  bool LengthOrEncoding(uint64_t* n, bool* encoded);
  std::string_view in_;
};

// Builds a listpack as Redis's lpAppend does: integers in the smallest integer
// encoding, strings with 6-, 12- or 32-bit lengths, each entry followed by its
// back-length; Finish() adds the header (total bytes, element count) and the
// end byte.
class ListpackWriter {
 public:
  void Integer(int64_t v);
  void String(std::string_view s);
  std::string Finish() const;
 private:
  void Entry(std::string_view encoded);
  std::string body_;
  size_t count_ = 0;
};

// Calls f(std::string_view) for every entry of a listpack, integers formatted as
// Redis formats them. False if the listpack is malformed.
template <class F>
bool ForEachListpackEntry(std::string_view lp, F&& f);
// Calls f(int64_t) for every member of an intset. False if malformed.
template <class F>
bool ForEachIntsetMember(std::string_view is, F&& f);

namespace internal {
// One listpack entry at lp[*pos]: a string (*s) or an integer (*is_int, *v);
// advances *pos past its back-length. False if malformed or at the end byte.
bool ListpackEntry(std::string_view lp, size_t* pos, std::string_view* s, bool* is_int, int64_t* v);
bool ListpackHeader(std::string_view lp, size_t* count);
}  // namespace internal

template <class F>
bool ForEachListpackEntry(std::string_view lp, F&& f) {
  size_t count;
  if (!internal::ListpackHeader(lp, &count)) return false;
  size_t pos = 6;
  size_t seen = 0;
  char buf[24];
  while (pos < lp.size() && static_cast<uint8_t>(lp[pos]) != 0xff) {
    std::string_view s;
    bool is_int;
    int64_t v;
    if (!internal::ListpackEntry(lp, &pos, &s, &is_int, &v)) return false;
    if (is_int) {
      const int n = std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(v));
      s = std::string_view(buf, static_cast<size_t>(n));
    }
    f(s);
    ++seen;
  }
  // The end byte closes the blob, and the count (when not saturated) matches.
  return pos + 1 == lp.size() && (count == 65535 || count == seen);
}

template <class F>
bool ForEachIntsetMember(std::string_view is, F&& f) {
  if (is.size() < 8) return false;
  uint32_t width, length;
  std::memcpy(&width, is.data(), 4);
  std::memcpy(&length, is.data() + 4, 4);
  if ((width != 2 && width != 4 && width != 8) || is.size() != 8 + uint64_t{width} * length) return false;
  for (uint32_t i = 0; i < length; ++i) {
    const char* p = is.data() + 8 + static_cast<size_t>(i) * width;
    int64_t v;
    if (width == 2) {
      int16_t x;
      std::memcpy(&x, p, 2);
      v = x;
    } else if (width == 4) {
      int32_t x;
      std::memcpy(&x, p, 4);
      v = x;
    } else {
      std::memcpy(&v, p, 8);
    }
    f(v);
  }
  return true;
}

}  // namespace feedkv::redis_payload
