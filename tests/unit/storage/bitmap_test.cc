// Unit tests for the bit operations: counting and searching any bit range against
// a bit-by-bit reference, fields of every width round-tripping, and BITFIELD's
// overflow rules at the edges of a field.
#include "storage/bitmap.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace feedkv::bitmap {
namespace {

bool BitAt(const std::string& s, uint64_t i) { return (static_cast<uint8_t>(s[i >> 3]) >> (7 - (i & 7))) & 1; }

TEST(BitmapTest, CountAndFindMatchABitByBitWalk) {
  std::mt19937_64 rng(3);
  for (int round = 0; round < 300; ++round) {
    std::string s(1 + rng() % 40, '\0');
    const int density = static_cast<int>(rng() % 4);  // all zero, sparse, dense, all one
    for (char& c : s) {
      c = static_cast<char>(density == 0 ? 0 : density == 3 ? 0xff : (rng() % 8 == 0) != (density == 2) ? rng() : 0);
    }
    const uint64_t nbits = s.size() * 8;
    const uint64_t first = rng() % nbits, last = first + rng() % (nbits - first);
    uint64_t count = 0;
    int64_t first_one = -1, first_zero = -1;
    for (uint64_t i = first; i <= last; ++i) {
      count += BitAt(s, i);
      if (BitAt(s, i) && first_one < 0) first_one = static_cast<int64_t>(i);
      if (!BitAt(s, i) && first_zero < 0) first_zero = static_cast<int64_t>(i);
    }
    ASSERT_EQ(CountBits(s, first, last), count);
    ASSERT_EQ(FindBit(s, true, first, last), first_one);
    ASSERT_EQ(FindBit(s, false, first, last), first_zero);
  }
}

TEST(BitmapTest, FieldsRoundTripAtAnyOffsetAndWidth) {
  std::mt19937_64 rng(5);
  std::string s(32, '\0');
  for (int round = 0; round < 2000; ++round) {
    const int bits = 1 + static_cast<int>(rng() % 64);
    const uint64_t offset = rng() % (s.size() * 8 - 64);
    const uint64_t value = bits == 64 ? rng() : rng() & ((uint64_t{1} << bits) - 1);
    SetField(s.data(), offset, bits, value);
    ASSERT_EQ(GetField(s, offset, bits), value);
    const int64_t sv = GetSignedField(s, offset, bits);
    ASSERT_EQ(static_cast<uint64_t>(sv) & (bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1), value);
  }
  EXPECT_EQ(GetField("", 5, 8), 0u);  // past the end reads zeros
}

TEST(BitmapTest, OverflowWrapsOrSaturatesAtTheFieldEdges) {
  uint64_t u;
  EXPECT_EQ(CheckUnsignedOverflow(255, 1, 8, true, &u), 1);
  EXPECT_EQ(u, 0u);
  EXPECT_EQ(CheckUnsignedOverflow(255, 1, 8, false, &u), 1);
  EXPECT_EQ(u, 255u);
  EXPECT_EQ(CheckUnsignedOverflow(0, -1, 8, false, &u), -1);
  EXPECT_EQ(u, 0u);
  EXPECT_EQ(CheckUnsignedOverflow(0, -1, 8, true, &u), -1);
  EXPECT_EQ(u, 255u);
  EXPECT_EQ(CheckUnsignedOverflow(10, 5, 8, true, &u), 0);
  int64_t i;
  EXPECT_EQ(CheckSignedOverflow(127, 1, 8, true, &i), 1);
  EXPECT_EQ(i, -128);
  EXPECT_EQ(CheckSignedOverflow(-128, -1, 8, false, &i), -1);
  EXPECT_EQ(i, -128);
  EXPECT_EQ(CheckSignedOverflow(INT64_MAX, 1, 64, true, &i), 1);
  EXPECT_EQ(i, INT64_MIN);
  EXPECT_EQ(CheckSignedOverflow(-5, 3, 8, true, &i), 0);
}

}  // namespace
}  // namespace feedkv::bitmap
