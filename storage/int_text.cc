#include "storage/int_text.h"

#include <charconv>
#include <cstring>

namespace feedkv {

namespace {

constexpr uint64_t kPow10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

// Whether all eight bytes of w are ASCII digits: each byte's high nibble is 3, and adding
// 6 to it does not carry into the high nibble (no byte above '9').
bool EightDigits(uint64_t w) {
  return (w & 0xF0F0F0F0F0F0F0F0ull) == 0x3030303030303030ull &&
         ((w + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) == 0x3030303030303030ull;
}

// The value of eight digit bytes (first digit in the lowest byte), or of bytes that are 0
// or digits: pairs, then quads, then the whole, one multiply each.
uint64_t EightDigitsValue(uint64_t w) {
  w &= 0x0F0F0F0F0F0F0F0Full;
  w = (w * 10 + (w >> 8)) & 0x00FF00FF00FF00FFull;
  w = (w * 100 + (w >> 16)) & 0x0000FFFF0000FFFFull;
  return (w * 10000 + (w >> 32)) & 0xFFFFFFFFull;
}

}  // namespace

bool ParseCanonicalInt64(std::string_view s, int64_t* out) {
  const size_t n = s.size();
  if (n == 0 || n > 20) return false;
  const char* p = s.data();
  const bool negative = p[0] == '-';
  size_t i = negative ? 1 : 0;
  if (i == n) return false;
  if (p[i] == '0') {
    if (n != 1) return false;  // "0" only: no "-0", no leading zeros
    *out = 0;
    return true;
  }
  if (n - i >= 8 && n - i <= 16) {  // ids are 8-16 digits: two 8-byte words, no loop
    const size_t rest = n - i - 8;
    uint64_t head, tail;
    std::memcpy(&head, p + i, 8);
    std::memcpy(&tail, p + n - 8, 8);  // overlaps head unless there are 16 digits
    if (!EightDigits(head) || !EightDigits(tail)) return false;
    // Clearing tail's low bytes (the digits head has) leaves its last `rest` digits
    // behind zero bytes, which read as leading zeros.
    const uint64_t low = rest == 0 ? 0 : EightDigitsValue(tail & (~uint64_t{0} << (8 * (8 - rest))));
    const uint64_t v = EightDigitsValue(head) * kPow10[rest] + low;
    *out = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
    return true;
  }
  if (n - i <= 18) {  // up to 18 digits cannot overflow: done by hand
    uint64_t v = 0;
    for (; i < n; ++i) {
      const unsigned d = static_cast<unsigned char>(p[i]) - unsigned{'0'};
      if (d > 9) return false;
      v = v * 10 + d;
    }
    *out = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
    return true;
  }
  if (p[i] < '1' || p[i] > '9') return false;
  auto [ptr, ec] = std::from_chars(p, p + n, *out);
  return ec == std::errc() && ptr == p + n;
}

std::string_view FormatInt64(int64_t v, char* buf) {
  auto [ptr, ec] = std::to_chars(buf, buf + 20, v);
  (void)ec;  // 20 bytes always fit an int64
  return std::string_view(buf, static_cast<size_t>(ptr - buf));
}

}  // namespace feedkv
