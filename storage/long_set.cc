// LongSet core: hashing, probing, growth and iteration. The image format lives in
// long_set_image.cc. See docs/longset.md for why the defaults are what they are.
#include "storage/long_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <new>

namespace feedkv {

namespace longset_internal {

namespace {

uint64_t MulMod(uint64_t a, uint64_t b, uint64_t m) {
  return static_cast<uint64_t>(static_cast<unsigned __int128>(a) * b % m);
}

uint64_t PowMod(uint64_t base, uint64_t exp, uint64_t m) {
  uint64_t result = 1;
  base %= m;
  while (exp != 0) {
    if (exp & 1) result = MulMod(result, base, m);
    base = MulMod(base, base, m);
    exp >>= 1;
  }
  return result;
}

// One Miller-Rabin round: false means n is certainly composite.
bool MillerRabinPasses(uint64_t n, uint64_t a) {
  uint64_t d = n - 1;
  int r = 0;
  while ((d & 1) == 0) {
    d >>= 1;
    ++r;
  }
  uint64_t x = PowMod(a, d, n);
  if (x == 1 || x == n - 1) return true;
  for (int i = 1; i < r; ++i) {
    x = MulMod(x, x, n);
    if (x == n - 1) return true;
  }
  return false;
}

}  // namespace


bool IsPrime(uint64_t n) {
  static constexpr uint64_t kSmall[] = {2,  3,  5,  7,  11, 13, 17, 19, 23,
                                        29, 31, 37, 41, 43, 47, 53, 59, 61};
  if (n < 2) return false;
  for (uint64_t p : kSmall) {
    if (n % p == 0) return n == p;
  }
  // {2, 7, 61} is a deterministic witness set below 4,759,123,141; above that the first
  // twelve primes are deterministic for all 64-bit n.
  if (n < 4759123141ull) {
    return MillerRabinPasses(n, 2) && MillerRabinPasses(n, 7) && MillerRabinPasses(n, 61);
  }
  for (uint64_t a : {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37}) {
    if (!MillerRabinPasses(n, a)) return false;
  }
  return true;
}

uint64_t NextPrime(uint64_t n) {
  if (n <= 2) return 2;
  if ((n & 1) == 0) ++n;
  while (n <= LongSet::kMaxCapacity && !IsPrime(n)) n += 2;
  return n <= LongSet::kMaxCapacity ? n : 0;
}

ProbeStart ProbeStartFor(int64_t v, uint64_t seed1, uint64_t seed2, uint32_t capacity) {
  return ProbeStart{
      FastMod(HashMemberInline(v, seed1), FastModMagic(capacity), capacity),
      1 + FastMod(HashMemberInline(v, seed2), FastModMagic(capacity - 1), capacity - 1)};
}

}  // namespace longset_internal

using longset_internal::FastMod;
using longset_internal::FastModMagic;
using longset_internal::HashMemberInline;
using longset_internal::NextSlot;

namespace {

// Out-of-range or NaN option values are clamped rather than trusted: the config layer
// rejects them with Validate(), but the table must stay sound whatever it is passed.
double ClampFill(double f) {
  if (!(f >= LongSetOptions::kMinMaxFill)) return LongSetOptions::kMinMaxFill;
  return f > LongSetOptions::kMaxMaxFill ? LongSetOptions::kMaxMaxFill : f;
}

double ClampGrowth(double g) {
  if (!(g >= LongSetOptions::kMinGrowth)) return LongSetOptions::kMinGrowth;
  return g > LongSetOptions::kMaxGrowth ? LongSetOptions::kMaxGrowth : g;
}

// splitmix64's finalizer: a bijection with full avalanche, fixed forever because scan
// cursors handed to clients are positions in its order.
constexpr uint64_t kScanMul1 = 0xbf58476d1ce4e5b9ull;
constexpr uint64_t kScanMul2 = 0x94d049bb133111ebull;

constexpr uint64_t InverseMod2To64(uint64_t a) {
  uint64_t x = a;  // correct to 3 bits for odd a; each Newton step doubles that
  for (int i = 0; i < 5; ++i) x *= 2 - a * x;
  return x;
}
static_assert(kScanMul1 * InverseMod2To64(kScanMul1) == 1);
static_assert(kScanMul2 * InverseMod2To64(kScanMul2) == 1);

constexpr uint64_t UndoXorShiftRight(uint64_t y, int shift) {
  uint64_t x = y;
  for (int s = shift; s < 64; s += shift) x ^= y >> s;
  return x;
}

uint64_t SplitMix64Next(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * kScanMul1;
  z = (z ^ (z >> 27)) * kScanMul2;
  return z ^ (z >> 31);
}

// Uniform index in [0, n) from 64 random bits (Lemire's multiply-shift).
uint64_t RangeFromRandom(uint64_t r, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(r) * n) >> 64);
}

}  // namespace

Status LongSetOptions::Validate() const {
  if (!(max_fill >= kMinMaxFill && max_fill <= kMaxMaxFill)) {
    return Status::InvalidArgument(
        fmt::format("longset-max-fill must be between {} and {}", kMinMaxFill, kMaxMaxFill));
  }
  if (!(growth_factor >= kMinGrowth && growth_factor <= kMaxGrowth)) {
    return Status::InvalidArgument(
        fmt::format("longset-growth-factor must be between {} and {}", kMinGrowth, kMaxGrowth));
  }
  return Status::OK();
}

uint64_t LongSet::SlotLimit(uint64_t capacity, double max_fill) {
  if (capacity == 0) return 0;
  auto limit =
      static_cast<uint64_t>(std::floor(ClampFill(max_fill) * static_cast<double>(capacity)));
  return std::min(limit, capacity - 1);
}

uint64_t LongSet::UsedSlotLimit(uint64_t capacity, double max_fill) {
  const uint64_t members = SlotLimit(capacity, max_fill);
  return capacity == 0 ? 0 : members + (capacity - 1 - members) / 2;
}

uint64_t LongSet::CapacityFor(uint64_t n, double max_fill) {
  double want = std::ceil(static_cast<double>(n) / ClampFill(max_fill));
  if (want > static_cast<double>(kMaxCapacity)) return 0;
  uint64_t cap = longset_internal::NextPrime(std::max(kMinCapacity, static_cast<uint64_t>(want)));
  // Rounding in floor(max_fill * cap) can leave the first candidate one short.
  while (cap != 0 && SlotLimit(cap, max_fill) < n) cap = longset_internal::NextPrime(cap + 1);
  return cap;
}

uint64_t LongSet::ScanKey(int64_t v) {
  uint64_t z = static_cast<uint64_t>(v);
  z = (z ^ (z >> 30)) * kScanMul1;
  z = (z ^ (z >> 27)) * kScanMul2;
  return z ^ (z >> 31);
}

int64_t LongSet::ScanKeyToValue(uint64_t key) {
  uint64_t z = UndoXorShiftRight(key, 31);
  z = UndoXorShiftRight(z * InverseMod2To64(kScanMul2), 27);
  z = UndoXorShiftRight(z * InverseMod2To64(kScanMul1), 30);
  return static_cast<int64_t>(z);
}

LongSet::SlotArray LongSet::AllocateSlots(uint64_t capacity, bool zeroed) {
  // calloc, not new[]: large zeroed blocks come straight from mmap as untouched zero
  // pages, so Reserve() of a big table costs nothing until slots are written.
  void* p = zeroed ? std::calloc(capacity, sizeof(int64_t)) : std::malloc(capacity * sizeof(int64_t));
  if (p == nullptr) throw std::bad_alloc();
  return SlotArray(static_cast<int64_t*>(p));
}

LongSet::LongSet(uint64_t seed1, uint64_t seed2) : seed1_(seed1), seed2_(seed2) {
  slots_ = AllocateSlots(kMinCapacity);
  SetCapacity(kMinCapacity);
}

LongSet::LongSet(const LongSet& other)
    : seed1_(other.seed1_),
      seed2_(other.seed2_),
      live_(other.live_),
      tombstones_(other.tombstones_),
      flags_(other.flags_) {
  slots_ = AllocateSlots(other.capacity_);
  std::memcpy(slots_.get(), other.slots_.get(), other.capacity_ * sizeof(int64_t));
  SetCapacity(other.capacity_);
}

LongSet& LongSet::operator=(const LongSet& other) {
  if (this != &other) {
    LongSet copy(other);
    *this = std::move(copy);
  }
  return *this;
}

void LongSet::SetCapacity(uint64_t capacity) {
  // Invariant: capacity is an allowed prime, so every step in [1, cap-1] is coprime.
  capacity_ = static_cast<uint32_t>(capacity);
  cap_magic_ = FastModMagic(capacity_);
  step_magic_ = FastModMagic(capacity_ - 1);
}

uint64_t LongSet::FindSlot(int64_t v) const {
  const uint64_t cap = capacity_;
  const int64_t* s = slots_.get();
  uint64_t i = HomeOf(v);
  if (s[i] == v) return i;
  if (s[i] == kEmptySlot) return cap;
  // Most lookups end at the home slot, so the second hash is computed only now.
  const uint32_t step = StepOf(v);
  for (uint64_t n = 1; n < cap; ++n) {
    i = NextSlot(i, step, capacity_);
    if (s[i] == v) return i;
    if (s[i] == kEmptySlot) return cap;
  }
  return cap;
}

void LongSet::PlaceNew(int64_t v) {
  PlaceNewAt(v, HomeOf(v));
}

void LongSet::PlaceNewAt(int64_t v, uint64_t home) {
  const int64_t* s = slots_.get();
  uint64_t i = home;
  uint64_t n = 0;
  uint32_t step = 0;
  if (s[i] != kEmptySlot) {
    step = StepOf(v);
    do {
      i = NextSlot(i, step, capacity_);
      ++n;
    } while (s[i] != kEmptySlot);  // terminates: a free slot exists and the walk visits all
  }
  StoreNew(v, home, step, n, i);
  ++live_;
}

void LongSet::StoreNew(int64_t v, uint64_t home, uint32_t step, uint64_t empty_n,
                       uint64_t empty_slot) {
  // Brent's variation (Knuth, TAOCP 6.4, Algorithm D's exercise): instead of putting v
  // at probe index empty_n, move the member y at index i < empty_n of v's path j steps
  // further along y's own path to an empty slot and give v y's slot, when i + j <
  // empty_n. Rounds t = i + j = 1, 2, ... try the cheapest totals first (smallest i
  // within a round). y's new path runs through occupied slots only (every earlier
  // candidate was occupied), so both stay reachable. At fill 0.9 this cuts the mean
  // successful probe count from 2.6 to 1.8, which every hit and every image validation
  // walks. The search is bounded (kBrentRounds) to keep an insert O(1); the
  // Python builder (tools/longset_image.py) mirrors it exactly.
  int64_t* s = slots_.get();
  const uint64_t rounds = std::min<uint64_t>(empty_n, kBrentRounds);
  uint64_t path[kBrentRounds];   // v's path: slot of probe index i
  uint64_t moved[kBrentRounds];  // where y_i would go after (t - i) steps
  uint32_t ystep[kBrentRounds];
  for (uint64_t t = 1; t < rounds; ++t) {
    const uint64_t fresh = t - 1;  // y at this index joins the search with j = 1
    path[fresh] = fresh == 0 ? home : NextSlot(path[fresh - 1], step, capacity_);
    ystep[fresh] = StepOf(s[path[fresh]]);
    moved[fresh] = path[fresh];
    for (uint64_t k = 0; k < t; ++k) {
      moved[k] = NextSlot(moved[k], ystep[k], capacity_);
      if (s[moved[k]] == kEmptySlot) {
        s[moved[k]] = s[path[k]];
        s[path[k]] = v;
        return;
      }
    }
  }
  s[empty_slot] = v;
}

void LongSet::Rehash(uint64_t new_capacity) {
  SlotArray old = std::move(slots_);
  const uint64_t old_capacity = capacity_;
  slots_ = AllocateSlots(new_capacity);
  SetCapacity(new_capacity);
  live_ = 0;
  tombstones_ = 0;
  // Each placement is a cache miss in a large table. Hashing a batch ahead and
  // prefetching the home slots lets those misses overlap instead of queueing.
  constexpr int kBatch = 16;
  int64_t values[kBatch];
  uint64_t homes[kBatch];
  int pending = 0;
  for (uint64_t i = 0; i < old_capacity; ++i) {
    if (IsSentinel(old[i])) continue;
    values[pending] = old[i];
    homes[pending] = HomeOf(old[i]);
    __builtin_prefetch(&slots_[homes[pending]], 1);
    if (++pending == kBatch) {
      for (int k = 0; k < kBatch; ++k) PlaceNewAt(values[k], homes[k]);
      pending = 0;
    }
  }
  for (int k = 0; k < pending; ++k) PlaceNewAt(values[k], homes[k]);
}

bool LongSet::Contains(int64_t v) const {
  if (IsSentinel(v)) return (flags_ & SentinelFlag(v)) != 0;
  return FindSlot(v) != capacity_;
}

Status LongSet::Add(int64_t v, const LongSetOptions& options, bool* added) {
  if (IsSentinel(v)) {
    const uint16_t flag = SentinelFlag(v);
    *added = (flags_ & flag) == 0;
    flags_ |= flag;
    return Status::OK();
  }
  const uint64_t cap = capacity_;
  int64_t* s = slots_.get();
  const uint64_t home = HomeOf(v);
  uint64_t i = home;
  uint32_t step = 0;
  uint64_t tombstone = cap;  // first tombstone on the path: reusing it keeps fill unchanged
  bool found_empty = false;
  uint64_t n = 0;
  for (; n < cap; ++n) {
    const int64_t x = s[i];
    if (x == v) {
      *added = false;
      return Status::OK();
    }
    if (x == kEmptySlot) {
      found_empty = true;
      break;
    }
    if (x == kTombstoneSlot && tombstone == cap) tombstone = i;
    if (step == 0) step = StepOf(v);
    i = NextSlot(i, step, capacity_);
  }
  if (tombstone != cap) {
    s[tombstone] = v;
    --tombstones_;
    ++live_;
    *added = true;
    return Status::OK();
  }
  const double max_fill = ClampFill(options.max_fill);
  const uint64_t need = uint64_t{live_} + 1;
  if (found_empty && need <= SlotLimit(cap, max_fill) &&
      need + tombstones_ <= UsedSlotLimit(cap, max_fill)) {
    StoreNew(v, home, step, n, i);
    ++live_;
    *added = true;
    return Status::OK();
  }

  // Out of room. Re-size for the live members only: tombstones vanish in a rebuild.
  uint64_t target = cap;
  if (need > SlotLimit(cap, max_fill)) {
    if (!options.auto_grow) return Status::Full("longset is full");
    const double grown = std::ceil(static_cast<double>(need) * ClampGrowth(options.growth_factor));
    target = CapacityFor(static_cast<uint64_t>(std::min(grown, 1e19)), max_fill);
    if (target == 0) target = CapacityFor(need, max_fill);  // near kMaxCapacity: grow less
    if (target == 0) return Status::Full("longset reached its maximum capacity");
  } else if (options.auto_grow) {
    // Tombstones filled the table. A same-size rebuild frees only the tombstones, so
    // it must free enough of them to pay for itself: rebuild in place while members
    // fill at most the midpoint between max_fill and the post-grow fill
    // max_fill/growth, which keeps rebuilds amortised O(1) per operation; above that,
    // grow to the post-grow fill (memory per member stays at the post-grow level).
    const double growth = ClampGrowth(options.growth_factor);
    const double midpoint = (max_fill + max_fill / growth) / 2;
    if (static_cast<double>(need) > midpoint * static_cast<double>(cap)) {
      const double grown = std::ceil(static_cast<double>(need) * growth);
      target = CapacityFor(static_cast<uint64_t>(std::min(grown, 1e19)), max_fill);
      if (target < cap) target = cap;  // also covers 0 (past kMaxCapacity)
    }
  }
  // In cache mode with room for members, the only option left is a same-size rebuild.
  Rehash(target);
  PlaceNew(v);
  *added = true;
  return Status::OK();
}

bool LongSet::Remove(int64_t v) {
  if (IsSentinel(v)) {
    const uint16_t flag = SentinelFlag(v);
    const bool had = (flags_ & flag) != 0;
    flags_ &= static_cast<uint16_t>(~flag);
    return had;
  }
  const uint64_t i = FindSlot(v);
  if (i == capacity_) return false;
  // A tombstone, not an empty slot: other members' probe paths may run through here.
  slots_[i] = kTombstoneSlot;
  --live_;
  ++tombstones_;
  // Tombstones lengthen every miss. Rebuilding after capacity/4 of them is O(capacity)
  // work paid for by at least capacity/4 removals.
  if (tombstones_ > capacity_ / 4) Rehash(capacity_);
  return true;
}

Status LongSet::Reserve(size_t n, const LongSetOptions& options) {
  const uint64_t target = CapacityFor(n, options.max_fill);
  if (target == 0) return Status::Full("longset reached its maximum capacity");
  if (target > capacity_) Rehash(target);
  return Status::OK();
}

Status LongSet::Build(std::span<const int64_t> ids, const LongSetOptions& options, uint64_t seed1,
                      uint64_t seed2, std::unique_ptr<LongSet>* out) {
  std::vector<int64_t> distinct;
  distinct.reserve(ids.size());
  for (int64_t v : ids) {
    if (!IsSentinel(v)) distinct.push_back(v);
  }
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  auto set = std::make_unique<LongSet>(seed1, seed2);
  LongSetOptions build = options;
  build.auto_grow = false;  // the reserved table must hold everything: growth is a bug
  Status st = set->Reserve(distinct.size(), build);
  if (!st.ok()) return st;
  for (int64_t v : ids) {
    bool added = false;
    st = set->Add(v, build, &added);
    if (!st.ok()) return st;
  }
  *out = std::move(set);
  return Status::OK();
}

bool LongSet::MaybeShrink(const LongSetOptions& options) {
  if (!options.auto_grow || capacity_ <= kMinCapacity) return false;
  const double max_fill = ClampFill(options.max_fill);
  const double growth = ClampGrowth(options.growth_factor);
  // Hysteresis: a resize leaves fill at max_fill/growth, so shrinking only below
  // max_fill/growth^2 needs many removals between two resizes.
  if (static_cast<double>(live_) >= max_fill / (growth * growth) * capacity_) return false;
  const uint64_t target = CapacityFor(static_cast<uint64_t>(std::ceil(live_ * growth)), max_fill);
  if (target == 0 || target >= capacity_) return false;
  Rehash(target);
  return true;
}

int64_t LongSet::RandomMember(uint64_t random) const {
  const int sentinels = std::popcount(flags_);
  uint64_t state = random;
  if (sentinels != 0) {
    const uint64_t pick = RangeFromRandom(SplitMix64Next(&state), size());
    if (pick < static_cast<uint64_t>(sentinels)) {
      if (pick == 0 && (flags_ & kFlagHasZero)) return 0;
      return kTombstoneSlot;
    }
  }
  // Rejection sampling is exactly uniform over the occupied slots; fill stays above
  // max_fill/growth^2 with auto-grow, so 64 tries practically never all miss.
  const int64_t* s = slots_.get();
  uint64_t i = 0;
  for (int tries = 0; tries < 64; ++tries) {
    i = RangeFromRandom(SplitMix64Next(&state), capacity_);
    if (!IsSentinel(s[i])) return s[i];
  }
  for (uint64_t n = 0; n < capacity_; ++n) {  // a very sparse cache-mode table
    if (!IsSentinel(s[i])) return s[i];
    if (++i == capacity_) i = 0;
  }
  return 0;  // unreachable when size() > 0
}

uint64_t LongSet::Scan(uint64_t cursor, size_t count, std::vector<int64_t>* out) const {
  out->clear();
  const size_t batch = std::max<size_t>({count, (size_t{capacity_} + 63) / 64, 1});
  // A max-heap of the smallest `batch` keys >= cursor seen so far.
  std::vector<uint64_t> heap;
  heap.reserve(std::min(batch, size()));
  bool more = false;
  ForEach([&](int64_t v) {
    const uint64_t key = ScanKey(v);
    if (key < cursor) return;
    if (heap.size() < batch) {
      heap.push_back(key);
      std::push_heap(heap.begin(), heap.end());
    } else {
      more = true;
      if (key < heap.front()) {
        std::pop_heap(heap.begin(), heap.end());
        heap.back() = key;
        std::push_heap(heap.begin(), heap.end());
      }
    }
  });
  std::sort_heap(heap.begin(), heap.end());
  out->reserve(heap.size());
  for (uint64_t key : heap) out->push_back(ScanKeyToValue(key));
  // A key left out is larger than every key returned, so heap.back() < UINT64_MAX and
  // the next cursor cannot wrap to 0 while members remain.
  return more ? heap.back() + 1 : 0;
}

uint32_t LongSet::ProbeCount(int64_t v) const {
  if (IsSentinel(v)) return 0;
  const uint64_t cap = capacity_;
  const int64_t* s = slots_.get();
  uint64_t i = HomeOf(v);
  const uint32_t step = StepOf(v);
  uint32_t probes = 1;
  while (s[i] != v && s[i] != kEmptySlot && probes < cap) {
    i = NextSlot(i, step, capacity_);
    ++probes;
  }
  return probes;
}

LongSetProbeStats LongSet::Stats() const {
  LongSetProbeStats st;
  st.members = live_;
  st.tombstones = tombstones_;
  st.fill = static_cast<double>(live_ + tombstones_) / capacity_;
  uint64_t total = 0;
  const int64_t* s = slots_.get();
  for (uint64_t i = 0; i < capacity_; ++i) {
    if (IsSentinel(s[i])) continue;
    const uint32_t p = ProbeCount(s[i]);
    total += p;
    st.max_probe = std::max(st.max_probe, p);
  }
  st.mean_probe = live_ ? static_cast<double>(total) / live_ : 0;
  return st;
}

}  // namespace feedkv
