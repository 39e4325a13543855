// A sorted-set member as one heap block: [double score][length][bytes], where the
// length is one byte below 0xff and 0xff + a 4-byte length otherwise. Big sorted
// sets keep one block per member; the member index and the order index
// (ScoreTree) both point to it, so a member's bytes are stored once.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace feedkv::zset_item {

inline constexpr unsigned char kLongLength = 0xff;

inline size_t HeaderSize(size_t len) { return 8 + (len < kLongLength ? 1 : 5); }

inline double Score(const char* item) {
  double d;
  std::memcpy(&d, item, 8);
  return d;
}

inline void SetScore(char* item, double d) { std::memcpy(item, &d, 8); }

inline std::string_view Member(const char* item) {
  const auto first = static_cast<unsigned char>(item[8]);
  if (first != kLongLength) return std::string_view(item + 9, first);
  uint32_t n;
  std::memcpy(&n, item + 9, 4);
  return std::string_view(item + 13, n);
}

// Writes an item into `out`, which has HeaderSize(member.size()) + member.size()
// bytes; returns the bytes written.
inline size_t Write(char* out, double score, std::string_view member) {
  SetScore(out, score);
  size_t h = 9;
  if (member.size() < kLongLength) {
    out[8] = static_cast<char>(member.size());
  } else {
    out[8] = static_cast<char>(kLongLength);
    const auto n = static_cast<uint32_t>(member.size());
    std::memcpy(out + 9, &n, 4);
    h = 13;
  }
  if (!member.empty()) std::memcpy(out + h, member.data(), member.size());
  return h + member.size();
}

inline size_t Size(const char* item) {
  const std::string_view m = Member(item);
  return static_cast<size_t>(m.data() - item) + m.size();
}

}  // namespace feedkv::zset_item
