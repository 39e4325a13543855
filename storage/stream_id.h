// StreamId: a stream entry's ID, milliseconds and a sequence number, ordered
// as a pair; "ms-seq" as text. Value type, no state.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace feedkv {

struct StreamId {
  uint64_t ms = 0;
  uint64_t seq = 0;

  auto operator<=>(const StreamId&) const = default;

  static constexpr StreamId Max() { return {UINT64_MAX, UINT64_MAX}; }
  bool is_zero() const { return ms == 0 && seq == 0; }
  // The next / previous ID; false (and unchanged) at the end of the range.
  bool Incr() {
    if (seq != UINT64_MAX) {
      ++seq;
    } else if (ms != UINT64_MAX) {
      ++ms;
      seq = 0;
    } else {
      return false;
    }
    return true;
  }
  bool Decr() {
    if (seq != 0) {
      --seq;
    } else if (ms != 0) {
      --ms;
      seq = UINT64_MAX;
    } else {
      return false;
    }
    return true;
  }
  std::string ToString() const { return std::to_string(ms) + "-" + std::to_string(seq); }
};

// Parses "ms-seq" or "ms" (seq = missing_seq) with Redis's rules (decimal
// digits only, no sign, within 64 bits). With `seq_star` non-null, "ms-*" is
// accepted and sets *seq_star (XADD's partial ID). "-" and "+" are not handled
// here.
bool ParseStreamId(std::string_view s, uint64_t missing_seq, StreamId* id, bool* seq_star = nullptr);

}  // namespace feedkv
