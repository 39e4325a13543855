// A hash field and its value as one run of bytes: [length][field][length][value],
// each length one byte below 0xff, or 0xff and 4 bytes. A small hash (listpack) is
// such items back to back in one block; a big one keeps one heap block per item,
// indexed by field (BlockIndex), so a field's bytes are stored once.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace feedkv::hash_item {

inline constexpr unsigned char kLongLength = 0xff;

inline size_t LengthSize(size_t len) { return len < kLongLength ? 1 : 5; }
inline size_t Size(std::string_view field, std::string_view value) {
  return LengthSize(field.size()) + field.size() + LengthSize(value.size()) + value.size();
}

// The string starting at p; *next is the byte after it.
inline std::string_view ReadString(const char* p, const char** next) {
  const auto first = static_cast<unsigned char>(p[0]);
  size_t h = 1, n = first;
  if (first == kLongLength) {
    uint32_t n32;
    std::memcpy(&n32, p + 1, 4);
    n = n32;
    h = 5;
  }
  *next = p + h + n;
  return std::string_view(p + h, n);
}

inline std::string_view Field(const char* item) {
  const char* next;
  return ReadString(item, &next);
}

inline std::string_view Value(const char* item) {
  const char* next;
  ReadString(item, &next);
  return ReadString(next, &next);
}

// Bytes of the item at `item`.
inline size_t ItemSize(const char* item) {
  const char* next;
  ReadString(item, &next);
  ReadString(next, &next);
  return static_cast<size_t>(next - item);
}

inline char* WriteString(char* out, std::string_view s) {
  if (s.size() < kLongLength) {
    *out++ = static_cast<char>(s.size());
  } else {
    *out++ = static_cast<char>(kLongLength);
    const auto n = static_cast<uint32_t>(s.size());
    std::memcpy(out, &n, 4);
    out += 4;
  }
  if (!s.empty()) std::memcpy(out, s.data(), s.size());
  return out + s.size();
}

// Writes the item into `out` (Size(field, value) bytes).
inline void Write(char* out, std::string_view field, std::string_view value) {
  WriteString(WriteString(out, field), value);
}

}  // namespace feedkv::hash_item
