// Unit tests for the HyperLogLog string format: an HLL edited in sparse form keeps
// exactly the registers of one kept dense, stays valid opcode by opcode, turns
// dense past its byte limit, and corrupt bodies are refused.
#include "storage/hyperloglog.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

namespace feedkv::hll {
namespace {

TEST(HyperLogLogTest, SparseEditsKeepTheRegistersOfADenseCopy) {
  std::mt19937_64 rng(1);
  std::string sparse = NewSparse(), dense = NewSparse();
  ASSERT_TRUE(ToDense(&dense));
  for (int i = 0; i < 3000; ++i) {
    const std::string e = std::to_string(rng());
    const std::string_view v = e;
    EXPECT_EQ(Add(&sparse, &v, 1, SIZE_MAX), Add(&dense, &v, 1, SIZE_MAX));
    if (i % 100 == 0) {
      Registers a, b;
      ASSERT_TRUE(Decode(sparse, a));  // every opcode sequence covers 16384 registers
      ASSERT_TRUE(Decode(dense, b));
      ASSERT_EQ(std::memcmp(a, b, kRegisters), 0) << i;
      ASSERT_TRUE(IsSparse(sparse));
    }
  }
}

TEST(HyperLogLogTest, TurnsDenseWhenItWouldOutgrowItsLimit) {
  std::string h = NewSparse();
  for (int i = 0; IsSparse(h); ++i) {
    const std::string e = "e" + std::to_string(i);
    const std::string_view v = e;
    const size_t before = h.size();
    Add(&h, &v, 1, 300);
    if (IsSparse(h)) {
      EXPECT_TRUE(h.size() <= 300 || h.size() <= before);
    }
  }
  EXPECT_EQ(h.size(), kDenseSize);
  EXPECT_TRUE(LooksValid(h));
}

TEST(HyperLogLogTest, CorruptBodiesAreRefused) {
  std::string h = NewSparse();
  const std::string_view v = "x";
  Add(&h, &v, 1, 3000);
  Registers regs;
  EXPECT_FALSE(Decode(h + "\x80", regs));           // covers a register too many
  EXPECT_FALSE(Decode(h.substr(0, h.size() - 1), regs));
  // Opcodes that end before the register an element goes to.
  std::string cut = h.substr(0, kHeaderSize) + "\x3f";  // ZERO x64: registers 0..63 only
  std::string far;
  int reg = 0;
  uint8_t value;
  for (int i = 0; reg < 64; ++i) {
    far = "f" + std::to_string(i);
    Hash(far, &reg, &value);
  }
  const std::string_view fv = far;
  EXPECT_EQ(Add(&cut, &fv, 1, 3000), -1);
  EXPECT_FALSE(LooksValid("HYLL"));
  EXPECT_FALSE(LooksValid(std::string("HYLL\x00", 5) + std::string(11, '\0')));  // dense, wrong size
}

TEST(HyperLogLogTest, TheCountCacheRoundTrips) {
  std::string h = NewSparse();
  uint64_t c;
  ASSERT_TRUE(CachedCount(h, &c));
  EXPECT_EQ(c, 0u);
  InvalidateCache(&h);
  EXPECT_FALSE(CachedCount(h, &c));
  SetCachedCount(&h, 123456789);
  ASSERT_TRUE(CachedCount(h, &c));
  EXPECT_EQ(c, 123456789u);
  EXPECT_EQ(SelfTest(), "");
}

}  // namespace
}  // namespace feedkv::hll
