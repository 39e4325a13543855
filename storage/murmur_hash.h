// MurmurHash64A (Austin Appleby's MurmurHash2, 64-bit variant for 64-bit
// platforms), bit for bit as Redis (HyperLogLog registers, seed 0xadc83b19) and
// RedisBloom (Bloom filter bit positions, seed 0xc6a4a7935bd1e995) compute it,
// so values made by either load into feedkv and hash to the same places.
// Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

namespace feedkv {

uint64_t MurmurHash64A(std::string_view key, uint64_t seed);

}  // namespace feedkv
