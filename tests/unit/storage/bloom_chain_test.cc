// Unit tests for BloomChain: the hash is MurmurHash64A (SMHasher's verification
// value), bit positions follow RedisBloom's (a + i*b) mod bits in every link,
// scaling adds links of entries*expansion at half the error, the dump form
// round-trips chunk by chunk, and corrupt or oversized snapshots are refused.
#include "storage/bloom_chain.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "storage/murmur_hash.h"
#include "storage/object_codec.h"

namespace feedkv {
namespace {

std::unique_ptr<BloomChain> MakeChain(double error, uint64_t capacity, uint32_t growth, bool nonscaling = false) {
  std::unique_ptr<BloomChain> c;
  BloomChain::Params p;
  p.error = error;
  p.capacity = capacity;
  p.growth = growth;
  p.nonscaling = nonscaling;
  EXPECT_TRUE(BloomChain::Create(p, UINT64_MAX, &c).ok());
  return c;
}

// SMHasher's VerificationTest: hash keys {}, {0}, {0,1}, ... {0..254} with seeds
// 256..1, hash the concatenated results with seed 0; MurmurHash64A's published
// value is 0x1F0D3804.
TEST(BloomChainTest, HashIsMurmurHash64A) {
  uint8_t key[256];
  std::string hashes;
  for (int i = 0; i < 256; i++) {
    key[i] = static_cast<uint8_t>(i);
    const uint64_t h = MurmurHash64A(std::string_view(reinterpret_cast<char*>(key), i), 256 - i);
    hashes.append(reinterpret_cast<const char*>(&h), 8);
  }
  const uint64_t final_hash = MurmurHash64A(hashes, 0);
  EXPECT_EQ(static_cast<uint32_t>(final_hash), 0x1F0D3804u);
}

// The bits an item sets are RedisBloom's: (a + i*b) mod bits for i < hashes.
TEST(BloomChainTest, ItemSetsTheBitsRedisBloomComputes) {
  auto c = MakeChain(0.01, 100, 2);
  ASSERT_EQ(c->Add("observation1", UINT64_MAX, nullptr), BloomChain::AddResult::kAdded);
  int64_t iter = 1;
  const std::string_view bits = c->Chunk(&iter, 1 << 20);
  ASSERT_EQ(bits.size(), 144u);  // 100 entries at 0.005: 1102 bits, rounded up to 1152
  const uint64_t a = MurmurHash64A("observation1", 0xc6a4a7935bd1e995ULL);
  const uint64_t b = MurmurHash64A("observation1", a);
  std::vector<uint8_t> want(144, 0);
  for (uint64_t i = 0; i < 8; i++) {  // ceil(ln 2 * 11.03) hashes
    const uint64_t x = (a + i * b) % 1152;
    want[x / 8] |= static_cast<uint8_t>(1u << (x % 8));
  }
  EXPECT_EQ(std::memcmp(bits.data(), want.data(), 144), 0);
  EXPECT_EQ(c->RedisBloomSize(), 240u);  // redis.io's BF.INFO example
}

TEST(BloomChainTest, ScalingAddsLinksAtHalfTheError) {
  auto c = MakeChain(0.1, 10, 3);
  for (int i = 0; c->links() < 3; i++) {
    c->Add("item" + std::to_string(i), UINT64_MAX, nullptr);
    ASSERT_LT(i, 1000);
  }
  EXPECT_EQ(c->capacity(), 10u + 30u + 90u);
  EXPECT_GE(c->items(), 41u);
  for (int i = 0; i < 40; i++) EXPECT_TRUE(c->Contains("item" + std::to_string(i)));
}

TEST(BloomChainTest, NonScalingChainRefusesWhenFull) {
  auto c = MakeChain(0.000001, 5, 2, true);
  int added = 0;
  for (int i = 0; added < 5; i++) added += c->Add("i" + std::to_string(i), UINT64_MAX, nullptr) ==
                                           BloomChain::AddResult::kAdded;
  EXPECT_EQ(c->Add("more", UINT64_MAX, nullptr), BloomChain::AddResult::kFull);
  EXPECT_EQ(c->links(), 1u);
}

TEST(BloomChainTest, ScaleStepPastTheLimitChangesNothing) {
  auto c = MakeChain(0.01, 10, 1000);
  for (int i = 0; c->items() < 10; i++) c->Add("i" + std::to_string(i), UINT64_MAX, nullptr);
  uint64_t needed = 0;
  EXPECT_EQ(c->Add("next", 5000, &needed), BloomChain::AddResult::kTooBig);
  EXPECT_GT(needed, 5000u);
  EXPECT_EQ(c->links(), 1u);
  EXPECT_FALSE(c->Contains("next"));
}

TEST(BloomChainTest, DumpChunksRebuildTheSameFilter) {
  auto src = MakeChain(0.01, 50, 2);
  for (int i = 0; i < 500; i++) src->Add("k" + std::to_string(i), UINT64_MAX, nullptr);
  ASSERT_GT(src->links(), 2u);
  std::unique_ptr<BloomChain> dst;
  ASSERT_TRUE(BloomChain::FromHeader(src->EncodeHeader(), UINT64_MAX, &dst).ok());
  int64_t iter = 1;
  for (;;) {
    std::string_view chunk = src->Chunk(&iter, 7);  // small chunks cross link borders
    if (iter == 0) break;
    ASSERT_TRUE(dst->LoadChunk(iter, chunk).ok());
  }
  std::string a, b;
  src->SerializeTo(&a);
  dst->SerializeTo(&b);
  EXPECT_EQ(a, b);
  EXPECT_EQ(src->Digest(), dst->Digest());
  std::unique_ptr<Object> back;
  ASSERT_TRUE(DecodeObject(ValueType::kBloom, a, &back).ok());
  EXPECT_EQ(back->Digest(), src->Digest());
}

TEST(BloomChainTest, CorruptSnapshotsAreRefused) {
  auto c = MakeChain(0.01, 100, 2);
  c->Add("x", UINT64_MAX, nullptr);
  std::string bytes;
  c->SerializeTo(&bytes);
  std::unique_ptr<Object> out;
  EXPECT_FALSE(DecodeObject(ValueType::kBloom, bytes.substr(0, bytes.size() - 1), &out).ok());
  EXPECT_FALSE(DecodeObject(ValueType::kBloom, bytes + "x", &out).ok());
  EXPECT_FALSE(DecodeObject(ValueType::kBloom, "", &out).ok());
  std::string huge = bytes;
  const uint64_t claim = uint64_t{1} << 50;  // a link of 1 PB: refused before allocating
  std::memcpy(&huge[20], &claim, 8);
  EXPECT_FALSE(DecodeObject(ValueType::kBloom, huge, &out).ok());
  for (size_t i = 0; i < 73; i++) {  // every header byte flipped: refused or consistent
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    if (DecodeObject(ValueType::kBloom, bad, &out).ok()) {
      auto* chain = static_cast<BloomChain*>(out.get());
      chain->Contains("x");
      chain->Add("y", UINT64_MAX, nullptr);
    }
  }
}

}  // namespace
}  // namespace feedkv
