// Unsigned LEB128 varints for the snapshot forms of values (SetValue,
// SortedSetValue): 7 bits per byte, low first, high bit set on all but the last.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace feedkv {

inline void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// Consumes a varint from the front of *in; false when it is truncated or
// overflows 64 bits.
inline bool GetVarint(std::string_view* in, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && !in->empty(); shift += 7) {
    const auto byte = static_cast<unsigned char>(in->front());
    in->remove_prefix(1);
    if (shift == 63 && byte > 1) return false;  // would overflow 64 bits
    result |= uint64_t{byte & 0x7fu} << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}

}  // namespace feedkv
