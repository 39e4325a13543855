// LongSet: a set of signed 64-bit integers kept in one flat int64 slot array with
// double-hash open addressing (slot(n) = (h1 + n*h2) mod capacity, capacity prime), so a
// member costs about 8 / fill bytes. It is the "longset" encoding of an all-integer set.
// The image format it loads and dumps is described in long_set_image.h and
// docs/formats.md; design notes and measurements are in docs/longset.md.
// Not thread-safe: a LongSet is owned by the command thread like every other value.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/status.h"

namespace feedkv {

// Tuning knobs, one per config directive. Passed to every mutating call rather than
// stored in the set, so CONFIG SET applies to existing sets at their next insert.
struct LongSetOptions {
  // longset-max-fill: the largest share of slots members may fill (tombstones get a
  // little slack above it, see UsedSlotLimit). Higher saves memory and costs probes.
  // Valid range [0.05, 0.99].
  double max_fill = 0.9;
  // longset-growth-factor: a grow re-sizes to growth_factor x the member count at
  // max_fill, so right after a grow fill is max_fill / growth_factor. Range [1.05, 4].
  double growth_factor = 1.3;
  // longset-auto-grow: false is cache mode, where an insert past max fill fails with
  // Status::Full instead of growing and the client rebuilds the set itself.
  bool auto_grow = true;

  // The valid ranges (CONFIG SET, the packers and Validate all use these).
  static constexpr double kMinMaxFill = 0.05;
  static constexpr double kMaxMaxFill = 0.99;
  static constexpr double kMinGrowth = 1.05;
  static constexpr double kMaxGrowth = 4.0;

  // InvalidArgument naming the directive when a value is out of range.
  Status Validate() const;
};

// Probe-length statistics over the members stored in slots (the two sentinel-valued
// members live in flags and need no probe).
struct LongSetProbeStats {
  size_t members = 0;      // members stored in slots
  size_t tombstones = 0;   // deleted slots not yet reclaimed
  double fill = 0;         // (members + tombstones) / capacity
  double mean_probe = 0;   // mean slots inspected by a successful lookup
  uint32_t max_probe = 0;  // worst successful lookup
};

class LongSet {
 public:
  // Slot markers. Both values are still valid members: they are recorded in flag bits
  // (kFlagHasZero, kFlagHasMin) instead of in a slot. 0 marks an empty slot so a fresh
  // table is zero memory (calloc); INT64_MIN is the least likely id to be a real member.
  static constexpr int64_t kEmptySlot = 0;
  static constexpr int64_t kTombstoneSlot = std::numeric_limits<int64_t>::min();
  static constexpr uint16_t kFlagHasZero = 1u << 0;
  static constexpr uint16_t kFlagHasMin = 1u << 1;
  static constexpr uint16_t kKnownFlags = kFlagHasZero | kFlagHasMin;

  // Capacities are primes in [kMinCapacity, kMaxCapacity]. A prime makes every step in
  // [1, capacity-1] coprime with the capacity, and the 32-bit bound lets slot
  // arithmetic use Lemire's fastmod instead of a 64-bit division.
  static constexpr uint64_t kMinCapacity = 7;
  static constexpr uint64_t kMaxCapacity = 4294967291ull;  // largest prime < 2^32

  static constexpr uint64_t kDefaultSeed1 = 0x6665656b766c7331ull;  // "feedkvls1"-ish
  static constexpr uint64_t kDefaultSeed2 = 0x9e3779b97f4a7c15ull;

  // An empty set of capacity kMinCapacity. The seeds choose the hash functions; the
  // command layer may pick random ones per key to resist crafted collisions.
  LongSet() : LongSet(kDefaultSeed1, kDefaultSeed2) {}
  LongSet(uint64_t seed1, uint64_t seed2);

  // Copies are deep. A moved-from LongSet may only be destroyed or assigned to.
  LongSet(const LongSet& other);
  LongSet& operator=(const LongSet& other);
  LongSet(LongSet&&) noexcept = default;
  LongSet& operator=(LongSet&&) noexcept = default;
  ~LongSet() = default;

  // Inserts v; *added tells whether it was new. Past max fill the table grows or, with
  // auto_grow=false, returns Full("longset is full") and changes nothing.
  // REQUIRES: added != nullptr.
  Status Add(int64_t v, const LongSetOptions& options, bool* added);
  // Removes v, leaving a tombstone; returns whether it was present. Never grows or
  // shrinks, but rebuilds in place (same capacity) once tombstones pass 1/4 of slots.
  bool Remove(int64_t v);
  bool Contains(int64_t v) const;

  // Makes room for n members in slots without a resize (bulk builds). Never shrinks.
  // Allowed in cache mode too: sizing is then the client's explicit request.
  Status Reserve(size_t n, const LongSetOptions& options);
  // Re-packs into a smaller table when fill fell below max_fill / growth_factor^2 after
  // removals. A no-op in cache mode (the client owns the size). Call once per write
  // command that removed members (SREM, SPOP). Returns whether it reallocated.
  bool MaybeShrink(const LongSetOptions& options);

  size_t size() const { return live_ + static_cast<size_t>(std::popcount(flags_)); }
  bool empty() const { return size() == 0; }
  uint64_t capacity() const { return capacity_; }
  size_t tombstones() const { return tombstones_; }
  uint64_t seed1() const { return seed1_; }
  uint64_t seed2() const { return seed2_; }
  // Bytes owned by this set: the object plus its slot array (for MEMORY USAGE / INFO).
  size_t MemoryUsage() const { return sizeof(LongSet) + capacity_ * sizeof(int64_t); }

  // Calls f(int64_t member) once per member, in no particular order. f must not modify
  // the set.
  template <class F>
  void ForEach(F&& f) const;

  // A member chosen uniformly (up to 2^-32 bias) by the caller's random 64-bit value.
  // REQUIRES: size() > 0.
  int64_t RandomMember(uint64_t random) const;

  // Cursor iteration (SSCAN) that is stable across inserts, removals and every resize:
  // members are ordered by ScanKey(v), a fixed bijective mix of the value, and a cursor
  // is a position in that order. Replaces *out with the max(count, ceil(capacity/64))
  // members whose keys come next and returns the cursor to continue from, or 0 when the
  // scan is over. A member present for the whole scan is returned exactly once. Each
  // call walks the whole table, so a full scan of a static set costs <= 65 walks.
  uint64_t Scan(uint64_t cursor, size_t count, std::vector<int64_t>* out) const;

  LongSetProbeStats Stats() const;
  // Slots Contains(v) inspects (0 for the sentinel values, which need none).
  uint32_t ProbeCount(int64_t v) const;

  // The canonical bulk build shared with tools/longset_image.py, so both produce the
  // same bytes: capacity = CapacityFor(distinct ids other than 0 and INT64_MIN), then
  // ids inserted in input order by Brent's placement (duplicates ignored). Full if too
  // many ids.
  static Status Build(std::span<const int64_t> ids, const LongSetOptions& options, uint64_t seed1,
                      uint64_t seed2, std::unique_ptr<LongSet>* out);

  // Replaces *out with the image of this set (see long_set_image.h).
  void SerializeImage(std::string* out) const;
  // Validates an image in O(capacity + total probe length) and adopts its slot array
  // with one memcpy. Corruption for a malformed image, InvalidArgument for a well-formed
  // one that options forbid (fill above max_fill). REQUIRES: out != nullptr.
  static Status FromImage(std::string_view image, const LongSetOptions& options,
                          std::unique_ptr<LongSet>* out);

  // Most members that fit in `capacity` slots at max_fill (at least one slot stays
  // empty so a miss always ends at an empty slot).
  static uint64_t SlotLimit(uint64_t capacity, double max_fill);
  // Most members plus tombstones: tombstones may take half of the slots SlotLimit
  // leaves free before a rebuild, so churn at the member limit (cache mode) rebuilds
  // once per (capacity - SlotLimit)/2 removals instead of once per removal.
  static uint64_t UsedSlotLimit(uint64_t capacity, double max_fill);
  // Smallest allowed capacity whose SlotLimit holds n members; 0 if n is too large.
  static uint64_t CapacityFor(uint64_t n, double max_fill);
  // The scan order key and its inverse (a bijection on 64 bits).
  static uint64_t ScanKey(int64_t v);
  static int64_t ScanKeyToValue(uint64_t key);

 private:
  struct FreeDeleter {
    void operator()(int64_t* p) const { std::free(p); }
  };
  using SlotArray = std::unique_ptr<int64_t[], FreeDeleter>;

  // FromImage for an image of an older version (members placed by another hash):
  // re-inserts its members.
  static Status FromOlderImage(std::string_view image, uint64_t flags, uint64_t count,
                               const LongSetOptions& options, std::unique_ptr<LongSet>* out);

  static SlotArray AllocateSlots(uint64_t capacity, bool zeroed = true);
  static bool IsSentinel(int64_t v) { return v == kEmptySlot || v == kTombstoneSlot; }
  static uint16_t SentinelFlag(int64_t v) { return v == kEmptySlot ? kFlagHasZero : kFlagHasMin; }

  // Index of v's slot, or capacity_ when absent. REQUIRES: !IsSentinel(v).
  uint64_t FindSlot(int64_t v) const;
  // Image validation: every slotted member must be the first slot holding its value on
  // its own probe path, with no empty slot before it. That is exactly what Contains()
  // and Remove() assume, and it rules out duplicates (a second copy is never first).
  // Corruption naming the first bad slot, or when the walks exceed max_steps in total.
  Status CheckProbePaths(uint64_t max_steps) const;
  // Moves every member into a fresh zeroed table of new_capacity (drops tombstones).
  void Rehash(uint64_t new_capacity);
  void SetCapacity(uint64_t capacity);
  // Stores v, absent, in a table with a free slot and no tombstones on its path that
  // matter (used by Rehash): at its first empty slot, or one Brent move earlier.
  void PlaceNew(int64_t v);
  void PlaceNewAt(int64_t v, uint64_t home);
  // Writes absent v, whose path (home, step) first meets an empty slot at probe index
  // empty_n (slot empty_slot) with only members before it, there or by a Brent move
  // (see long_set.cc). Does not count v in live_.
  void StoreNew(int64_t v, uint64_t home, uint32_t step, uint64_t empty_n, uint64_t empty_slot);
  // h1: v's home slot. h2: the stride of v's probe path, in [1, capacity-1].
  uint32_t HomeOf(int64_t v) const;
  uint32_t StepOf(int64_t v) const;
  // Brent's search looks at most this deep into a new member's path: the first
  // kBrentRounds-1 move totals. Part of the canonical build (tools/longset_image.py).
  static constexpr uint64_t kBrentRounds = 32;

  SlotArray slots_;
  uint64_t seed1_;
  uint64_t seed2_;
  // Lemire fastmod constants for capacity_ and capacity_-1 (home slot and step).
  uint64_t cap_magic_ = 0;
  uint64_t step_magic_ = 0;
  uint32_t capacity_ = 0;
  uint32_t live_ = 0;        // members stored in slots
  uint32_t tombstones_ = 0;  // slots holding kTombstoneSlot
  uint16_t flags_ = 0;       // kFlagHasZero | kFlagHasMin
};

template <class F>
void LongSet::ForEach(F&& f) const {
  if (flags_ & kFlagHasZero) f(int64_t{0});
  if (flags_ & kFlagHasMin) f(kTombstoneSlot);
  const int64_t* s = slots_.get();
  for (uint64_t i = 0; i < capacity_; ++i) {
    if (!IsSentinel(s[i])) f(s[i]);
  }
}

// Building blocks shared with the image code, the tests and the benchmark.
namespace longset_internal {

// Deterministic Miller-Rabin for n < 2^32 (bases 2, 7, 61).
bool IsPrime(uint64_t n);
// Smallest prime >= n, or 0 past kMaxCapacity.
uint64_t NextPrime(uint64_t n);

// Lemire-Kaser-Kurz fastmod: a % d for 32-bit a and d >= 2 without a division.
inline uint64_t FastModMagic(uint32_t d) { return ~uint64_t{0} / d + 1; }
inline uint32_t FastMod(uint32_t a, uint64_t magic, uint32_t d) {
  uint64_t low = magic * a;
  return static_cast<uint32_t>((static_cast<unsigned __int128>(low) * d) >> 64);
}

// The member hash (image version 3): XXH3-64 of the member's 8 little-endian bytes with
// `seed`, exactly XXH3_64bits_withSeed (xxHash 0.8), folded to 32 bits. For an 8-byte
// input XXH3 is a rotate, an xor with a seed-derived constant and Evensen's rrmxmx (two
// multiplies); written out here so probe loops keep it inline, and checked against
// libxxhash by LongSetHash.MatchesLibXxh3. kXxh3SecretMix is XXH3's default secret
// bytes [8, 16) XOR [16, 24), read little-endian.
inline constexpr uint64_t kXxh3SecretMix = 0x1cad21f72c81017cull ^ 0xdb979083e96dd4deull;
inline constexpr uint64_t kXxh3PrimeMx2 = 0x9fb21c651e98df25ull;
// The seed-dependent constant XXH3 xors into an input of 4-8 bytes.
inline constexpr uint64_t Xxh3Bitflip(uint64_t seed) {
  return kXxh3SecretMix - (seed ^ (uint64_t{__builtin_bswap32(static_cast<uint32_t>(seed))} << 32));
}
[[gnu::always_inline]] inline uint32_t HashMemberInline(int64_t v, uint64_t seed) {
  // XXH3 reads the low and high 32-bit words and swaps them: a rotate by 32.
  uint64_t h = std::rotl(static_cast<uint64_t>(v), 32) ^ Xxh3Bitflip(seed);
  h ^= std::rotl(h, 49) ^ std::rotl(h, 24);
  h *= kXxh3PrimeMx2;
  h ^= (h >> 35) + 8;  // + the input length
  h *= kXxh3PrimeMx2;
  h ^= h >> 28;
  return static_cast<uint32_t>(h ^ (h >> 32));
}
inline uint32_t HashMember(int64_t v, uint64_t seed) { return HashMemberInline(v, seed); }

// Whether image validation runs its AVX2/BMI2 code: when the CPU has both, unless a
// test turned it off. SetVectorCodeForTesting(false) makes whole images go through the
// scalar code; not thread-safe (tests only).
bool VectorCodeEnabled();
void SetVectorCodeForTesting(bool enabled);

// One step along a probe path. 64-bit: j + step may pass 2^32.
inline uint64_t NextSlot(uint64_t j, uint32_t step, uint32_t cap) {
  j += step;
  return j >= cap ? j - cap : j;
}

// The probe sequence of v in a table of `capacity`: slot(n) = (home + n*step) % capacity.
struct ProbeStart {
  uint32_t home;
  uint32_t step;  // in [1, capacity-1]
};
ProbeStart ProbeStartFor(int64_t v, uint64_t seed1, uint64_t seed2, uint32_t capacity);

}  // namespace longset_internal

// In the header so every probe loop, in either .cc file, keeps them inline.
inline uint32_t LongSet::HomeOf(int64_t v) const {
  return longset_internal::FastMod(longset_internal::HashMemberInline(v, seed1_), cap_magic_,
                                   capacity_);
}

inline uint32_t LongSet::StepOf(int64_t v) const {
  return 1 + longset_internal::FastMod(longset_internal::HashMemberInline(v, seed2_), step_magic_,
                                       capacity_ - 1);
}

}  // namespace feedkv
