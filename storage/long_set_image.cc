// LongSet image load/dump: the byte layout is in long_set_image.h. Loading validates
// every structural property a lookup relies on, so an adopted image behaves exactly
// like a set built by Add().
#include "storage/long_set_image.h"

#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "storage/long_set.h"

namespace feedkv {

namespace {

using namespace longset_image;

constexpr bool kLittleEndianHost = std::endian::native == std::endian::little;

uint64_t LoadLE(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

void StoreLE(char* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<char>(v >> (8 * i));
}

struct SlotCounts {
  uint64_t used = 0;        // non-empty slots
  uint64_t tombstones = 0;
};

// Branch-free: empty slots are scattered at random, and a branchy loop paid a
// misprediction for most of them. noinline keeps the counters in registers (inlined
// into FromImage, GCC kept one on the stack).
[[gnu::noinline]] SlotCounts CountSlotsScalar(const int64_t* s, uint64_t n) {
  uint64_t used = 0;
  uint64_t tombstones = 0;
  for (uint64_t i = 0; i < n; ++i) {
    used += static_cast<uint64_t>(s[i] != LongSet::kEmptySlot);
    tombstones += static_cast<uint64_t>(s[i] == LongSet::kTombstoneSlot);
  }
  return SlotCounts{used, tombstones};
}

#if defined(__x86_64__)
// The baseline x86-64 target has no 64-bit vector compare, so the scalar loop above
// costs ~9 instructions a slot (~8% of an LSSET). Four slots per AVX2 compare instead;
// chosen at run time.
[[gnu::target("avx2")]] SlotCounts CountSlotsAvx2(const int64_t* s, uint64_t n) {
  const __m256i empty = _mm256_set1_epi64x(LongSet::kEmptySlot);
  const __m256i tomb = _mm256_set1_epi64x(LongSet::kTombstoneSlot);
  __m256i empties = _mm256_setzero_si256();  // per lane: minus the number of matches
  __m256i tombs = _mm256_setzero_si256();
  uint64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
    empties = _mm256_add_epi64(empties, _mm256_cmpeq_epi64(v, empty));
    tombs = _mm256_add_epi64(tombs, _mm256_cmpeq_epi64(v, tomb));
  }
  alignas(32) int64_t e[4];
  alignas(32) int64_t t[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(e), empties);
  _mm256_store_si256(reinterpret_cast<__m256i*>(t), tombs);
  const SlotCounts tail = CountSlotsScalar(s + i, n - i);
  const uint64_t empty_count = static_cast<uint64_t>(-(e[0] + e[1] + e[2] + e[3]));
  return SlotCounts{i - empty_count + tail.used,
                    static_cast<uint64_t>(-(t[0] + t[1] + t[2] + t[3])) + tail.tombstones};
}
#endif

SlotCounts CountSlots(const int64_t* s, uint64_t n) {
#if defined(__x86_64__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return CountSlotsAvx2(s, n);
#endif
  return CountSlotsScalar(s, n);
}

Status Bad(std::string_view what) {
  return Status::Corruption(fmt::format("invalid longset image: {}", what));
}

}  // namespace

void LongSet::SerializeImage(std::string* out) const {
  out->assign(kHeaderSize + size_t{capacity_} * kSlotSize, '\0');
  char* p = out->data();
  std::memcpy(p + kMagicOffset, kMagic, sizeof(kMagic));
  StoreLE(p + kVersionOffset, kVersion, 2);
  StoreLE(p + kFlagsOffset, flags_, 2);
  StoreLE(p + kCapacityOffset, capacity_, 8);
  StoreLE(p + kCountOffset, size(), 8);
  StoreLE(p + kSeed1Offset, seed1_, 8);
  StoreLE(p + kSeed2Offset, seed2_, 8);
  char* slots = p + kHeaderSize;
  if constexpr (kLittleEndianHost) {
    std::memcpy(slots, slots_.get(), size_t{capacity_} * kSlotSize);
  } else {
    for (uint64_t i = 0; i < capacity_; ++i) {
      StoreLE(slots + i * kSlotSize, static_cast<uint64_t>(slots_[i]), 8);
    }
  }
}

Status LongSet::FromImage(std::string_view image, const LongSetOptions& options,
                          std::unique_ptr<LongSet>* out) {
  // Header checks, cheapest first; nothing is allocated until the length is proven.
  if (image.size() < kHeaderSize) {
    return Bad(fmt::format("truncated header ({} bytes, need {})", image.size(), kHeaderSize));
  }
  const char* p = image.data();
  if (std::memcmp(p + kMagicOffset, kMagic, sizeof(kMagic)) != 0) return Bad("bad magic");
  const uint64_t version = LoadLE(p + kVersionOffset, 2);
  if (version != kVersion && version != kVersionXxh64) {
    return Bad(fmt::format("unsupported version {}", version));
  }
  const uint64_t flags = LoadLE(p + kFlagsOffset, 2);
  if ((flags & ~uint64_t{kKnownFlags}) != 0) {
    return Bad(fmt::format("unknown flag bits 0x{:x}", flags & ~uint64_t{kKnownFlags}));
  }
  const uint64_t capacity = LoadLE(p + kCapacityOffset, 8);
  if (capacity < kMinCapacity || capacity > kMaxCapacity || !longset_internal::IsPrime(capacity)) {
    return Bad(fmt::format("capacity {} is not allowed (must be a prime in [{}, {}])", capacity,
                           kMinCapacity, kMaxCapacity));
  }
  const uint64_t expected_size = kHeaderSize + capacity * kSlotSize;
  if (image.size() != expected_size) {
    return Bad(fmt::format("length mismatch ({} bytes, expected {} for capacity {})", image.size(),
                           expected_size, capacity));
  }
  const uint64_t count = LoadLE(p + kCountOffset, 8);
  if (version == kVersionXxh64) {
    return FromXxh64Image(image, flags, count, options, out);
  }

  auto set = std::make_unique<LongSet>(LoadLE(p + kSeed1Offset, 8), LoadLE(p + kSeed2Offset, 8));
  set->slots_ = AllocateSlots(capacity, /*zeroed=*/false);  // every slot is copied in
  set->SetCapacity(capacity);
  int64_t* s = set->slots_.get();
  if constexpr (kLittleEndianHost) {
    std::memcpy(s, p + kHeaderSize, capacity * kSlotSize);
  } else {
    for (uint64_t i = 0; i < capacity; ++i) {
      s[i] = static_cast<int64_t>(LoadLE(p + kHeaderSize + i * kSlotSize, 8));
    }
  }

  const SlotCounts counts = CountSlots(s, capacity);
  const uint64_t live = counts.used - counts.tombstones;
  const uint64_t tombstones = counts.tombstones;
  const uint64_t held = live + static_cast<uint64_t>(std::popcount(flags));
  if (count != held) {
    return Bad(
        fmt::format("count mismatch (header says {}, slots and flags hold {})", count, held));
  }
  // Legal bytes, but more full than this server runs its tables: the client should
  // rebuild at a larger capacity (or the server raise longset-max-fill).
  if (live > SlotLimit(capacity, options.max_fill) ||
      live + tombstones > UsedSlotLimit(capacity, options.max_fill)) {
    return Status::InvalidArgument(fmt::format(
        "invalid longset image: fill too high ({} members and {} tombstones in {} slots; "
        "longset-max-fill {} allows {} members and {} slots used)",
        live, tombstones, capacity, options.max_fill, SlotLimit(capacity, options.max_fill),
        UsedSlotLimit(capacity, options.max_fill)));
  }

  Status s_paths = set->CheckProbePaths(kMaxMeanProbeSteps * (live + 1));
  if (!s_paths.ok()) return s_paths;

  set->live_ = static_cast<uint32_t>(live);
  set->tombstones_ = static_cast<uint32_t>(tombstones);
  set->flags_ = static_cast<uint16_t>(flags);
  *out = std::move(set);
  return Status::OK();
}

Status LongSet::FromXxh64Image(std::string_view image, uint64_t flags, uint64_t count,
                               const LongSetOptions& options, std::unique_ptr<LongSet>* out) {
  // Version 1 placed members by another hash, so its slots cannot be adopted: its
  // members are re-inserted into a fresh table under the image's seeds. Probe paths
  // need no check (re-insertion makes them right); duplicates show up in the count.
  const uint64_t capacity = (image.size() - kHeaderSize) / kSlotSize;
  const char* slots = image.data() + kHeaderSize;
  std::vector<int64_t> members;
  members.reserve(capacity);
  if (flags & kFlagHasZero) members.push_back(0);
  if (flags & kFlagHasMin) members.push_back(kTombstoneSlot);
  for (uint64_t i = 0; i < capacity; ++i) {
    const auto v = static_cast<int64_t>(LoadLE(slots + i * kSlotSize, 8));
    if (!IsSentinel(v)) members.push_back(v);
  }
  std::unique_ptr<LongSet> set;
  Status st = Build(members, options, LoadLE(image.data() + kSeed1Offset, 8),
                    LoadLE(image.data() + kSeed2Offset, 8), &set);
  if (!st.ok()) return st;
  if (set->size() != count || set->size() != members.size()) {
    return Bad(fmt::format("count mismatch (header says {}, slots and flags hold {})", count,
                           members.size()));
  }
  *out = std::move(set);
  return Status::OK();
}

}  // namespace feedkv
