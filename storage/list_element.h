// One list element as stored in a list chunk (storage/list_value.h):
// [len][bytes][len], each length one byte below 0xff, or 0xff and 4 bytes (the
// trailing copy: 4 bytes then 0xff), so a chunk reads from either end.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace feedkv::list_element {

inline constexpr unsigned char kLong = 0xff;

inline size_t Size(size_t len) { return len < kLong ? len + 2 : len + 10; }

// Writes v at out; returns the byte after it.
inline char* Write(char* out, std::string_view v) {
  const auto n = static_cast<uint32_t>(v.size());
  if (n < kLong) {
    *out++ = static_cast<char>(n);
  } else {
    *out++ = static_cast<char>(kLong);
    std::memcpy(out, &n, 4);
    out += 4;
  }
  if (n != 0) std::memcpy(out, v.data(), n);
  out += n;
  if (n < kLong) {
    *out++ = static_cast<char>(n);
  } else {
    std::memcpy(out, &n, 4);
    out += 4;
    *out++ = static_cast<char>(kLong);
  }
  return out;
}

// The element starting at p; *next is the byte after it.
inline std::string_view Read(const char* p, const char** next) {
  const auto first = static_cast<unsigned char>(p[0]);
  uint32_t n = first;
  size_t h = 1;
  if (first == kLong) {
    std::memcpy(&n, p + 1, 4);
    h = 5;
  }
  *next = p + Size(n);
  return std::string_view(p + h, n);
}

// The element ending just before end; *start is its first byte.
inline std::string_view ReadBack(const char* end, const char** start) {
  const auto last = static_cast<unsigned char>(end[-1]);
  uint32_t n = last;
  size_t t = 1;
  if (last == kLong) {
    std::memcpy(&n, end - 5, 4);
    t = 5;
  }
  *start = end - Size(n);
  return std::string_view(end - t - n, n);
}

}  // namespace feedkv::list_element
