// Bit operations on a string's bytes, as Redis's bitops.c defines them: bit 0 is
// the most significant bit of byte 0. Pure functions over byte ranges; the
// commands (server/commands/cmd_bitmaps.cc) do the argument rules.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace feedkv::bitmap {

// Set bits among bits [first, last] of s. REQUIRES: first <= last < 8 * s.size().
uint64_t CountBits(std::string_view s, uint64_t first, uint64_t last);

// The first bit equal to `bit` among bits [first, last] of s, or -1.
// REQUIRES: first <= last < 8 * s.size().
int64_t FindBit(std::string_view s, bool bit, uint64_t first, uint64_t last);

// The `bits`-wide (1..64) unsigned field at bit `offset`, most significant bit
// first; bits past the end of s read as 0.
uint64_t GetField(std::string_view s, uint64_t offset, int bits);
// The same field read as two's complement.
int64_t GetSignedField(std::string_view s, uint64_t offset, int bits);
// Writes the low `bits` bits of value at bit `offset`. REQUIRES: the bytes exist.
void SetField(char* p, uint64_t offset, int bits, uint64_t value);

// BITFIELD's overflow rules for value + incr in a field of `bits` bits:
// returns 0 when it fits, else 1 (too big) or -1 (too small) with *limit set to
// the wrapped (wrap) or saturated (!wrap) result.
int CheckUnsignedOverflow(uint64_t value, int64_t incr, int bits, bool wrap, uint64_t* limit);
int CheckSignedOverflow(int64_t value, int64_t incr, int bits, bool wrap, int64_t* limit);

}  // namespace feedkv::bitmap
