// CounterSchema: the named, fixed-width fields of a counter space and the bit packing of
// one slot. A slot is an 8-byte little-endian id followed by the fields packed back to
// back, LSB first, rounded up to whole bytes (repost:20 comment:20 like:24 read:32 →
// 96 bits → 12 bytes → 20-byte slot). Immutable once parsed; safe to share read-only
// between threads.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "storage/status.h"

namespace feedkv {

// Little-endian fixed-width coding shared by the counter files. Slots and snapshots are
// little-endian on every host so that raw table bytes are portable.
namespace counter_coding {

template <class T>
inline T ByteSwap(T v) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
  if constexpr (sizeof(T) == 8) {
    return __builtin_bswap64(v);
  } else {
    return __builtin_bswap32(v);
  }
}

// T is uint32_t or uint64_t.
template <class T>
inline T LoadLE(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(v));
  if constexpr (std::endian::native == std::endian::big) v = ByteSwap(v);
  return v;
}

template <class T>
inline void StoreLE(char* p, T v) {
  if constexpr (std::endian::native == std::endian::big) v = ByteSwap(v);
  std::memcpy(p, &v, sizeof(v));
}

inline uint64_t LoadLE64(const char* p) { return LoadLE<uint64_t>(p); }
inline void StoreLE64(char* p, uint64_t v) { StoreLE<uint64_t>(p, v); }
inline uint32_t LoadLE32(const char* p) { return LoadLE<uint32_t>(p); }
inline void StoreLE32(char* p, uint32_t v) { StoreLE<uint32_t>(p, v); }

// Offset of the first non-zero byte of p[0, n), or n (8 bytes at a time).
inline size_t FindNonZero(const char* p, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, sizeof(w));
    if (w != 0) break;
  }
  for (; i < n; ++i) {
    if (p[i] != 0) return i;
  }
  return n;
}

inline bool AllZero(const char* p, size_t n) { return FindNonZero(p, n) == n; }

// Appends v as 4 / 8 little-endian bytes.
inline void PutLE32(std::string* out, uint32_t v) {
  char b[4];
  StoreLE32(b, v);
  out->append(b, sizeof(b));
}

inline void PutLE64(std::string* out, uint64_t v) {
  char b[8];
  StoreLE64(b, v);
  out->append(b, sizeof(b));
}

}  // namespace counter_coding

class CounterSchema {
 public:
  static constexpr size_t kMaxFields = 64;
  static constexpr size_t kMaxNameLength = 64;
  static constexpr size_t kIdBytes = 8;

  // An empty schema (no fields); only useful as the target of Parse().
  CounterSchema() = default;

  // Parses field specs of the form "name:bits". Names match [A-Za-z0-9_-]{1,64} and are
  // unique; bits is 1..64; 1..64 fields. On error *out is left unchanged.
  static Status Parse(const std::vector<std::string_view>& field_specs, CounterSchema* out);
  // Same, from one whitespace-separated string ("repost:20 comment:20").
  static Status ParseString(std::string_view specs, CounterSchema* out);

  size_t num_fields() const { return fields_.size(); }
  // Index of the named field, or -1 if the schema has none.
  int FieldIndex(std::string_view name) const;
  const std::string& field_name(size_t i) const { return fields_[i].name; }
  unsigned field_bits(size_t i) const { return fields_[i].bits; }
  // Largest value the field holds in a slot: 2^bits - 1.
  uint64_t field_max(size_t i) const { return fields_[i].mask; }
  size_t packed_bits() const { return packed_bits_; }
  // Bytes of one slot: the id plus the packed fields rounded up to a byte.
  size_t slot_bytes() const { return kIdBytes + (packed_bits_ + 7) / 8; }

  bool operator==(const CounterSchema& o) const;
  // Canonical text form, "repost:20 comment:20 like:24 read:32"; Parse accepts it back.
  std::string ToString() const;

  // Bit packing. `slot` points at a whole slot (id first).
  // REQUIRES: field < num_fields(); for Store, value <= field_max(field).
  uint64_t Load(const char* slot, size_t field) const;
  void Store(char* slot, size_t field, uint64_t value) const;
  // Loads all fields into values[0..num_fields()).
  void LoadAll(const char* slot, uint64_t* values) const;
  // True when the slack bits after the last field (to the byte boundary) are zero; a
  // snapshot with stray bits there is corrupt.
  bool PaddingIsZero(const char* slot) const;

 private:
  // Where a field sits: `word` is the byte offset within the slot of an 8-byte load that
  // covers the field (clamped so it never reads past the slot end), `shift` the bit
  // offset of the field inside that word. A field of 58+ bits at an odd offset spans 9
  // bytes; `straddle` then says its top bits are in the byte after the word.
  struct Field {
    std::string name;
    unsigned bits = 0;
    uint32_t word = 0;
    uint32_t shift = 0;
    uint64_t mask = 0;
    bool straddle = false;
  };

  std::vector<Field> fields_;
  size_t packed_bits_ = 0;
};

// ---- inline packing: on the hot path of every counter operation ----

inline uint64_t CounterSchema::Load(const char* slot, size_t field) const {
  const Field& f = fields_[field];
  uint64_t v = counter_coding::LoadLE64(slot + f.word) >> f.shift;
  if (f.straddle) {
    v |= static_cast<uint64_t>(static_cast<unsigned char>(slot[f.word + 8])) << (64 - f.shift);
  }
  return v & f.mask;
}

inline void CounterSchema::Store(char* slot, size_t field, uint64_t value) const {
  const Field& f = fields_[field];
  char* p = slot + f.word;
  uint64_t w = counter_coding::LoadLE64(p);
  if (!f.straddle) {
    w = (w & ~(f.mask << f.shift)) | (value << f.shift);
    counter_coding::StoreLE64(p, w);
    return;
  }
  // Straddling field: shift >= 1, so the low word keeps bits [0, shift) of its neighbour
  // and the next byte keeps its bits above the field's top.
  const uint64_t low_keep = (uint64_t{1} << f.shift) - 1;
  counter_coding::StoreLE64(p, (w & low_keep) | (value << f.shift));
  const unsigned hi_bits = f.shift + f.bits - 64;  // 1..7
  const unsigned hi_mask = (1u << hi_bits) - 1;
  unsigned char hi = static_cast<unsigned char>(p[8]);
  hi = static_cast<unsigned char>((hi & ~hi_mask) | ((value >> (64 - f.shift)) & hi_mask));
  p[8] = static_cast<char>(hi);
}

inline void CounterSchema::LoadAll(const char* slot, uint64_t* values) const {
  for (size_t i = 0; i < fields_.size(); ++i) values[i] = Load(slot, i);
}

}  // namespace feedkv
