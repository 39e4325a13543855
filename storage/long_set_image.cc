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
using longset_internal::FastMod;
using longset_internal::HashMemberInline;
using longset_internal::NextSlot;

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
  if (longset_internal::VectorCodeEnabled()) return CountSlotsAvx2(s, n);
#endif
  return CountSlotsScalar(s, n);
}

// FastMod(HashMemberInline(v[i], seed), magic, d) for i < n, into out[i]. Image
// validation hashes every slot, and scalar hashing was ~45 instructions a slot, half
// of an LSSET; the AVX2 version does four slots in ~35 vector instructions.
void HashToSlotsScalar(const int64_t* v, uint32_t n, uint64_t seed, uint64_t magic, uint32_t d,
                       uint32_t* out) {
  for (uint32_t i = 0; i < n; ++i) {
    out[i] = FastMod(HashMemberInline(v[i], seed), magic, d);
  }
}

#if defined(__x86_64__)
// a * b mod 2^64 per 64-bit lane; b_hi holds b >> 32 (AVX2 has no 64-bit multiply).
[[gnu::target("avx2")]] inline __m256i MulLo64(__m256i a, __m256i b, __m256i b_hi) {
  const __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), b),
                                         _mm256_mul_epu32(a, b_hi));
  return _mm256_add_epi64(_mm256_mul_epu32(a, b), _mm256_slli_epi64(cross, 32));
}

[[gnu::target("avx2")]] inline __m256i RotL64(__m256i x, int r) {
  return _mm256_or_si256(_mm256_slli_epi64(x, r), _mm256_srli_epi64(x, 64 - r));
}

[[gnu::target("avx2")]] void HashToSlotsAvx2(const int64_t* v, uint32_t n, uint64_t seed,
                                             uint64_t magic, uint32_t d, uint32_t* out) {
  const __m256i flip = _mm256_set1_epi64x(static_cast<int64_t>(longset_internal::Xxh3Bitflip(seed)));
  const __m256i mx = _mm256_set1_epi64x(static_cast<int64_t>(longset_internal::kXxh3PrimeMx2));
  const __m256i mx_hi = _mm256_set1_epi64x(static_cast<int64_t>(longset_internal::kXxh3PrimeMx2 >> 32));
  const __m256i len = _mm256_set1_epi64x(8);
  const __m256i mg = _mm256_set1_epi64x(static_cast<int64_t>(magic));
  const __m256i mg_hi = _mm256_set1_epi64x(static_cast<int64_t>(magic >> 32));
  const __m256i dv = _mm256_set1_epi64x(d);
  const __m256i low32 = _mm256_set1_epi64x(0xffffffff);
  uint32_t i = 0;
  for (; i + 4 <= n; i += 4) {
    // HashMemberInline, four lanes: swapping the 32-bit halves is the rotate by 32.
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + i));
    __m256i z = _mm256_xor_si256(_mm256_shuffle_epi32(x, 0xb1), flip);
    z = _mm256_xor_si256(z, _mm256_xor_si256(RotL64(z, 49), RotL64(z, 24)));
    z = MulLo64(z, mx, mx_hi);
    z = _mm256_xor_si256(z, _mm256_add_epi64(_mm256_srli_epi64(z, 35), len));
    z = MulLo64(z, mx, mx_hi);
    z = _mm256_xor_si256(z, _mm256_srli_epi64(z, 28));
    const __m256i f = _mm256_and_si256(_mm256_xor_si256(z, _mm256_srli_epi64(z, 32)), low32);
    // FastMod: low = magic * f mod 2^64, then the high 64 bits of low * d.
    const __m256i lo = _mm256_add_epi64(_mm256_mul_epu32(mg, f),
                                        _mm256_slli_epi64(_mm256_mul_epu32(mg_hi, f), 32));
    const __m256i hi = _mm256_srli_epi64(
        _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(lo, 32), dv),
                         _mm256_srli_epi64(_mm256_mul_epu32(lo, dv), 32)),
        32);
    // Lanes hold 32-bit results in their low halves: gather them into four uint32.
    const __m256i packed = _mm256_permutevar8x32_epi32(hi, _mm256_setr_epi32(0, 2, 4, 6, 0, 0, 0, 0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_castsi256_si128(packed));
  }
  HashToSlotsScalar(v + i, n - i, seed, magic, d, out + i);
}
#endif

void HashToSlots(const int64_t* v, uint32_t n, uint64_t seed, uint64_t magic, uint32_t d,
                 uint32_t* out) {
#if defined(__x86_64__)
  if (longset_internal::VectorCodeEnabled()) return HashToSlotsAvx2(v, n, seed, magic, d, out);
#endif
  HashToSlotsScalar(v, n, seed, magic, d, out);
}


#if defined(__x86_64__)
// Bit i set when s[i] (i < 4) is an empty slot or a tombstone.
[[gnu::target("avx2")]] inline unsigned SentinelMask4(const int64_t* s) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s));
  const __m256i hit = _mm256_or_si256(_mm256_cmpeq_epi64(v, _mm256_set1_epi64x(LongSet::kEmptySlot)),
                                      _mm256_cmpeq_epi64(v, _mm256_set1_epi64x(LongSet::kTombstoneSlot)));
  return static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(hit)));
}

// Appends to slot_out/home_out, in order, the slots base+i (i < 8) that hold a member
// not in its home slot; returns how many. The scalar version costs ~17 instructions a
// slot; this one ~3, with no data-dependent branch (BMI2 turns the mask into lane
// indices for a permute). Both outputs need 8 entries of room.
[[gnu::target("avx2,bmi2")]] inline uint32_t KeepDisplacedAvx2(const int64_t* s, uint32_t base,
                                                               const uint32_t* homes,
                                                               uint32_t* slot_out,
                                                               uint32_t* home_out) {
  const __m256i home = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(homes));
  const __m256i slot = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(base)),
                                        _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const unsigned at_home =
      static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(home, slot))));
  const unsigned keep = ~(at_home | SentinelMask4(s) | (SentinelMask4(s + 4) << 4)) & 0xffu;
  // Lane indices of keep's set bits, one byte each, lowest first.
  const uint64_t spread = _pdep_u64(keep, 0x0101010101010101ull) * 0xff;
  const uint64_t lanes = _pext_u64(0x0706050403020100ull, spread);
  const __m256i perm = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<int64_t>(lanes)));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(slot_out), _mm256_permutevar8x32_epi32(slot, perm));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(home_out), _mm256_permutevar8x32_epi32(home, perm));
  return static_cast<uint32_t>(std::popcount(keep));
}
#endif

int g_vector_override = -1;  // -1: use vector code when the CPU has it

Status Bad(std::string_view what) {
  return Status::Corruption(fmt::format("invalid longset image: {}", what));
}

}  // namespace

Status LongSet::CheckProbePaths(uint64_t max_steps) const {
  // The fast path below only says whether the image is sound; this walk, one member at
  // a time, names the first bad slot for the error reply.
  auto explain = [&]() -> Status {
    uint64_t steps = 0;
    for (uint32_t i = 0; i < capacity_; ++i) {
      const int64_t v = slots_[i];
      if (IsSentinel(v)) continue;
      uint64_t j = HomeOf(v);
      const uint32_t step = StepOf(v);
      while (slots_[j] != v) {
        if (slots_[j] == kEmptySlot) {
          return Status::Corruption(fmt::format(
              "invalid longset image: unreachable member {} at slot {} (empty slot {} on its "
              "path)",
              v, i, j));
        }
        if (++steps > max_steps) {
          return Status::Corruption("invalid longset image: probe sequences too long");
        }
        j = NextSlot(j, step, capacity_);
      }
      if (j != i) {
        return Status::Corruption(
            fmt::format("invalid longset image: duplicate member {} at slots {} and {}", v, j, i));
      }
    }
    return Status::Corruption("invalid longset image: probe sequences too long");
  };

  // Validation is bound by branch mispredictions and by the latency of random loads,
  // so it runs as branch-free passes over blocks of slots:
  //   1. hash every slot; keep the members not in their home slot (a member in its
  //      home slot is first on its own path by definition, and most are);
  //   2. compute the kept members' steps and prefetch their home slots;
  //   (1 and 2 hash four slots per AVX2 instruction sequence where the CPU has it)
  //   3. advance every kept path kRound slots per round, with no data-dependent branch,
  //      so the loads of many paths are in flight at once; paths still going carry
  //      over to the next round. A path ends at the first slot holding the member or
  //      empty: sound only if that is the member's own slot.
  // About 3x faster than walking one member at a time (bench/long_set_bench FromImage).
  const uint32_t cap = capacity_;
  const int64_t* s = slots_.get();
  constexpr uint32_t kBlock = 256;
  // The paths still being walked, as parallel arrays (+8: vector stores run over).
  uint32_t homes[kBlock + 8];
  uint32_t slot[kBlock + 8];  // where the member is stored
  uint32_t at[kBlock + 8];    // next slot to inspect
  uint32_t step[kBlock];
  int64_t value[kBlock];
#if defined(__x86_64__)
  const bool avx2 = longset_internal::VectorCodeEnabled();
#endif
  // Slots each path advances per round. With Brent's placement most displaced members
  // sit one or two steps from home: 2 took the fewest instructions (callgrind) of 1-4.
  constexpr int kRound = 2;
  uint64_t steps = 0;
  bool bad = false;
  for (uint64_t base = 0; base < cap; base += kBlock) {  // 64-bit: base + kBlock may pass 2^32
    const uint32_t first = static_cast<uint32_t>(base);
    const uint32_t end = static_cast<uint32_t>(std::min<uint64_t>(cap, base + kBlock));
    HashToSlots(s + first, end - first, seed1_, cap_magic_, cap, homes);
    uint32_t n = 0;
    uint32_t i = first;
#if defined(__x86_64__)
    if (avx2) {
      for (; i + 8 <= end; i += 8) {
        n += KeepDisplacedAvx2(s + i, i, homes + (i - first), slot + n, at + n);
      }
    }
#endif
    for (; i < end; ++i) {
      const uint32_t home = homes[i - first];
      slot[n] = i;
      at[n] = home;
      n += static_cast<uint32_t>(!IsSentinel(s[i]) & (home != i));
    }
    for (uint32_t k = 0; k < n; ++k) {
      __builtin_prefetch(s + at[k]);
      value[k] = s[slot[k]];
    }
    HashToSlots(value, n, seed2_, step_magic_, cap - 1, step);
    for (uint32_t k = 0; k < n; ++k) ++step[k];
    while (n > 0) {
      uint32_t going = 0;
      for (uint32_t k = 0; k < n; ++k) {
        const int64_t v = value[k];
        const uint32_t own_slot = slot[k];
        const uint32_t st = step[k];
        // stop: slots that end the walk (v or empty); own: the member's own slot. The walk
        // is sound iff the first stop is its own slot. Unrolled, all in registers.
        uint64_t a = at[k];
        unsigned stop = 0;
        unsigned own = 0;
#pragma GCC unroll 2
        for (int q = 0; q < kRound; ++q) {
          const int64_t x = s[a];
          stop |= static_cast<unsigned>((x == v) | (x == kEmptySlot)) << q;
          own |= static_cast<unsigned>(a == own_slot) << q;
          a = NextSlot(a, st, cap);
        }
        const bool done = stop != 0;
        bad |= done & ((stop & -stop & own) == 0);  // ended at an empty slot or an earlier copy
        value[going] = v;
        slot[going] = own_slot;
        step[going] = st;
        at[going] = static_cast<uint32_t>(a);
        going += static_cast<uint32_t>(!done);
      }
      steps += kRound * uint64_t{n};
      n = going;
      if (steps > max_steps) return explain();
    }
    if (bad) return explain();
  }
  return Status::OK();
}

namespace longset_internal {

bool VectorCodeEnabled() {
#if defined(__x86_64__)
  static const bool cpu = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2");
  return cpu && g_vector_override != 0;
#else
  return false;
#endif
}

void SetVectorCodeForTesting(bool enabled) { g_vector_override = enabled ? 1 : 0; }

}  // namespace longset_internal

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
  if (version != kVersion && version != kVersionSplitMix && version != kVersionXxh64) {
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
  if (version != kVersion) return FromOlderImage(image, flags, count, options, out);

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

Status LongSet::FromOlderImage(std::string_view image, uint64_t flags, uint64_t count,
                               const LongSetOptions& options, std::unique_ptr<LongSet>* out) {
  // Versions 1 and 2 placed members by other hashes, so their slots cannot be adopted:
  // the members are re-inserted into a fresh table under the image's seeds. Probe paths
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
