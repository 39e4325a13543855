// Bit operations. See bitmap.h.
#include "storage/bitmap.h"

#include <bit>
#include <cstring>

namespace feedkv::bitmap {

namespace {

uint8_t Byte(std::string_view s, uint64_t i) { return static_cast<uint8_t>(s[i]); }

// Set bits of a 64-bit word, SWAR style: the x86-64 baseline has no POPCNT
// instruction, and std::popcount would call libgcc's table walk per word.
uint64_t WordBits(uint64_t w) {
  w = w - ((w >> 1) & 0x5555555555555555ULL);
  w = (w & 0x3333333333333333ULL) + ((w >> 2) & 0x3333333333333333ULL);
  w = (w + (w >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
  return (w * 0x0101010101010101ULL) >> 56;
}

uint64_t PopCount(const char* p, size_t n) {
  uint64_t count = 0;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    count += WordBits(w);
  }
  for (; n > 0; ++p, --n) count += static_cast<uint64_t>(std::popcount(static_cast<uint8_t>(*p)));
  return count;
}

// The bits of a byte from bit `from` (0 = most significant) on.
uint8_t MaskFrom(unsigned from) { return static_cast<uint8_t>(0xffu >> from); }
// The bits of a byte up to bit `to` included.
uint8_t MaskTo(unsigned to) { return static_cast<uint8_t>(0xffu << (7 - to)); }

}  // namespace

uint64_t CountBits(std::string_view s, uint64_t first, uint64_t last) {
  const uint64_t b0 = first >> 3, b1 = last >> 3;
  if (b0 == b1) {
    return static_cast<uint64_t>(
        std::popcount(static_cast<uint8_t>(Byte(s, b0) & MaskFrom(first & 7) & MaskTo(last & 7))));
  }
  uint64_t count = static_cast<uint64_t>(std::popcount(static_cast<uint8_t>(Byte(s, b0) & MaskFrom(first & 7))));
  count += PopCount(s.data() + b0 + 1, b1 - b0 - 1);
  count += static_cast<uint64_t>(std::popcount(static_cast<uint8_t>(Byte(s, b1) & MaskTo(last & 7))));
  return count;
}

int64_t FindBit(std::string_view s, bool bit, uint64_t first, uint64_t last) {
  const uint8_t skip = bit ? 0x00 : 0xff;  // a byte with no bit of interest
  uint64_t i = first;
  while (i <= last) {
    if ((i & 7) == 0 && i + 7 <= last) {
      // Whole bytes (8 at a time where possible).
      uint64_t b = i >> 3;
      const uint64_t whole_end = (last + 1) >> 3;  // bytes [b, whole_end) are whole
      const uint64_t skip_word = bit ? 0 : ~uint64_t{0};
      while (b + 8 <= whole_end) {
        uint64_t w;
        std::memcpy(&w, s.data() + b, 8);
        if (w != skip_word) break;
        b += 8;
      }
      while (b < whole_end && Byte(s, b) == skip) ++b;
      i = b << 3;
      if (i > last) break;
    }
    if (((Byte(s, i >> 3) >> (7 - (i & 7))) & 1) == (bit ? 1 : 0)) return static_cast<int64_t>(i);
    ++i;
  }
  return -1;
}

uint64_t GetField(std::string_view s, uint64_t offset, int bits) {
  uint64_t value = 0;
  for (int j = 0; j < bits; ++j, ++offset) {
    const uint64_t byte = offset >> 3;
    const uint64_t bit = byte < s.size() ? (Byte(s, byte) >> (7 - (offset & 7))) & 1 : 0;
    value = (value << 1) | bit;
  }
  return value;
}

int64_t GetSignedField(std::string_view s, uint64_t offset, int bits) {
  uint64_t value = GetField(s, offset, bits);
  if (bits < 64 && (value & (uint64_t{1} << (bits - 1))) != 0) value |= ~uint64_t{0} << bits;
  return static_cast<int64_t>(value);
}

void SetField(char* p, uint64_t offset, int bits, uint64_t value) {
  for (int j = 0; j < bits; ++j, ++offset) {
    const uint64_t bit = (value >> (bits - 1 - j)) & 1;
    auto& byte = reinterpret_cast<uint8_t&>(p[offset >> 3]);
    const unsigned shift = 7 - (offset & 7);
    byte = static_cast<uint8_t>((byte & ~(1u << shift)) | (bit << shift));
  }
}

int CheckUnsignedOverflow(uint64_t value, int64_t incr, int bits, bool wrap, uint64_t* limit) {
  const uint64_t max = bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1;
  const auto maxincr = static_cast<int64_t>(max - value);
  const auto minincr = static_cast<int64_t>(0 - value);
  int result = 0;
  if (value > max || (incr > 0 && incr > maxincr)) {
    result = 1;
    *limit = max;
  } else if (incr < 0 && incr < minincr) {
    result = -1;
    *limit = 0;
  }
  if (result != 0 && wrap) {
    const uint64_t mask = bits == 64 ? 0 : ~uint64_t{0} << bits;
    *limit = (value + static_cast<uint64_t>(incr)) & ~mask;
  }
  return result;
}

int CheckSignedOverflow(int64_t value, int64_t incr, int bits, bool wrap, int64_t* limit) {
  const int64_t max = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
  const int64_t min = -max - 1;
  // As Redis: these may wrap, and are used only once value is known in range.
  const auto maxincr = static_cast<int64_t>(static_cast<uint64_t>(max) - static_cast<uint64_t>(value));
  const auto minincr = static_cast<int64_t>(static_cast<uint64_t>(min) - static_cast<uint64_t>(value));
  int result = 0;
  if (value > max || (bits != 64 && incr > maxincr) || (value >= 0 && incr > 0 && incr > maxincr)) {
    result = 1;
    *limit = max;
  } else if (value < min || (bits != 64 && incr < minincr) || (value < 0 && incr < 0 && incr < minincr)) {
    result = -1;
    *limit = min;
  }
  if (result != 0 && wrap) {
    uint64_t c = static_cast<uint64_t>(value) + static_cast<uint64_t>(incr);
    if (bits < 64) {
      const uint64_t mask = ~uint64_t{0} << bits;
      c = (c & (uint64_t{1} << (bits - 1))) != 0 ? (c | mask) : (c & ~mask);
    }
    *limit = static_cast<int64_t>(c);
  }
  return result;
}

}  // namespace feedkv::bitmap
