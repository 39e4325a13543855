#include "storage/murmur_hash.h"

#include <cstring>

namespace feedkv {

uint64_t MurmurHash64A(std::string_view key, uint64_t seed) {
  constexpr uint64_t m = 0xc6a4a7935bd1e995ULL;
  constexpr int r = 47;
  // Both reference implementations take the length as an int.
  const auto len = static_cast<int>(key.size());
  uint64_t h = seed ^ (static_cast<uint64_t>(len) * m);
  const auto* data = reinterpret_cast<const uint8_t*>(key.data());
  const uint8_t* end = data + (len - (len & 7));
  for (; data != end; data += 8) {
    uint64_t k;
    std::memcpy(&k, data, 8);
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  switch (len & 7) {
    case 7: h ^= uint64_t{data[6]} << 48; [[fallthrough]];
    case 6: h ^= uint64_t{data[5]} << 40; [[fallthrough]];
    case 5: h ^= uint64_t{data[4]} << 32; [[fallthrough]];
    case 4: h ^= uint64_t{data[3]} << 24; [[fallthrough]];
    case 3: h ^= uint64_t{data[2]} << 16; [[fallthrough]];
    case 2: h ^= uint64_t{data[1]} << 8; [[fallthrough]];
    case 1:
      h ^= uint64_t{data[0]};
      h *= m;
      break;
    default: break;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

}  // namespace feedkv
