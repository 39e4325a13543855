// The LongSet image: the byte layout shared by LongSet::SerializeImage/FromImage
// (LSSET, LSDUMP, snapshots), tools/feedkv_lspack.cc and tools/longset_image.py.
// docs/formats.md is the normative description; keep the two in step.
//
// All integers are little-endian. Version 3:
//
//   offset  size  field
//        0     4  magic     "FKLS"
//        4     2  version   3 (1 and 2 are still read, below)
//        6     2  flags     bit 0: 0 is a member; bit 1: INT64_MIN is a member
//        8     8  capacity  a prime in [7, 4294967291]
//       16     8  count     members, including the two flag members
//       24     8  seed1     seed of h1
//       32     8  seed2     seed of h2
//       40  8*cap slots     int64: 0 = empty, INT64_MIN = tombstone, else a member
//
// The hash: x = XXH3_64bits_withSeed(the member's 8 LE bytes, seed) (xxHash 0.8's XXH3);
// f = (x >> 32) ^ (x & 0xffffffff); h1 = f(seed1) mod capacity; h2 = 1 + f(seed2) mod
// (capacity - 1); slot(n) = (h1 + n*h2) mod capacity.
//
// Versions 2 (f from splitmix64's finalizer of v ^ seed) and 1 (f from XXH64) have the
// same layout. Both are still accepted: their members are re-inserted into a version 3
// table (LongSet::FromImage).
//
// Example: the set {5} in a capacity-7 table with seeds 1 and 2 is 40 + 56 = 96 bytes:
//   46 4b 4c 53 | 03 00 | 00 00 | 07 00.. | 01 00.. | 01 00.. | 02 00.. | 7 slots,
// six of them zero and slot 2 = h1(5) holding 05 00 00 00 00 00 00 00.
//
// There is no checksum: images travel inside RESP (TCP-checked) and inside snapshots
// (which carry their own checksum), and the O(n) structural validation in FromImage is
// what keeps a bad image from ever being adopted.
#pragma once

#include <cstddef>
#include <cstdint>

namespace feedkv::longset_image {

inline constexpr char kMagic[4] = {'F', 'K', 'L', 'S'};
inline constexpr uint16_t kVersion = 3;
// Older versions, whose members were placed by other hashes; read by re-insertion only.
inline constexpr uint16_t kVersionSplitMix = 2;
inline constexpr uint16_t kVersionXxh64 = 1;

inline constexpr size_t kMagicOffset = 0;
inline constexpr size_t kVersionOffset = 4;
inline constexpr size_t kFlagsOffset = 6;
inline constexpr size_t kCapacityOffset = 8;
inline constexpr size_t kCountOffset = 16;
inline constexpr size_t kSeed1Offset = 24;
inline constexpr size_t kSeed2Offset = 32;
inline constexpr size_t kHeaderSize = 40;
inline constexpr size_t kSlotSize = 8;

// Validation gives up once the probe walks of all members exceed this many steps per
// member on average. A table built by any allowed max fill (<= 0.99) averages well
// under 100; without a bound a crafted image could cost O(capacity^2).
inline constexpr uint64_t kMaxMeanProbeSteps = 1024;

}  // namespace feedkv::longset_image
