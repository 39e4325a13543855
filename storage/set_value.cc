// SetValue and StringSet. See set_value.h for the encodings and docs/longset.md for
// the measurements behind them.
#include "storage/set_value.h"

#include <malloc.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <random>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "storage/hash_order_scan.h"
#include "storage/varint.h"

namespace feedkv {

namespace {

constexpr int64_t kMinInt64 = std::numeric_limits<int64_t>::min();

// What glibc malloc really spends on a block of n bytes (chunk header, 16-byte
// rounding, 32-byte minimum): the unit Database uses for its own blocks.
size_t ChunkBytes(size_t n) { return std::max<size_t>(32, (n + 8 + 15) & ~size_t{15}); }

uint64_t NextRandom() {
  // Per thread: DecodeObject may run on a loading thread.
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng();
}

uint64_t Mix64(uint64_t* state) {  // splitmix64
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

bool IsSlotSentinel(int64_t v) { return v == LongSet::kEmptySlot || v == LongSet::kTombstoneSlot; }

// Members of ls held in slots (not in the two sentinel flags).
size_t SlotMembers(const LongSet& ls) {
  return ls.size() - (ls.Contains(LongSet::kEmptySlot) ? 1 : 0) -
         (ls.Contains(LongSet::kTombstoneSlot) ? 1 : 0);
}

constexpr char kTagLongSet = 0;
constexpr char kTagHashtable = 1;

// ---- StringSet member blocks: [1-byte length | 0xff + 8-byte length][bytes] ----

constexpr uint64_t kAddrMask = (uint64_t{1} << 48) - 1;
constexpr unsigned char kLongLength = 0xff;
constexpr uint32_t kMinStringCapacity = 8;

size_t BlockHeader(size_t len) { return len < kLongLength ? 1 : 9; }

char* NewBlock(std::string_view s) {
  const size_t header = BlockHeader(s.size());
  auto* p = static_cast<char*>(std::malloc(header + s.size()));
  if (p == nullptr) throw std::bad_alloc();
  if (header == 1) {
    p[0] = static_cast<char>(s.size());
  } else {
    p[0] = static_cast<char>(kLongLength);
    const uint64_t n = s.size();
    std::memcpy(p + 1, &n, 8);
  }
  if (!s.empty()) std::memcpy(p + header, s.data(), s.size());
  // Slots keep a tag in the top 16 bits; user-space addresses on the platforms we
  // build for (x86-64, aarch64 with 48-bit VA) never use them.
  if ((reinterpret_cast<uintptr_t>(p) & ~kAddrMask) != 0) std::abort();
  return p;
}

char* BlockPtr(uint64_t slot) { return reinterpret_cast<char*>(slot & kAddrMask); }

size_t BlockCost(const char* p) { return malloc_usable_size(const_cast<char*>(p)) + 8; }

uint64_t* AllocSlots(uint64_t n) {
  auto* p = static_cast<uint64_t*>(std::calloc(n, sizeof(uint64_t)));
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

uint64_t CapacityForStrings(size_t n) {
  // Load at most 0.8.
  uint64_t cap = kMinStringCapacity;
  while (n * 5 > cap * 4) cap *= 2;
  return cap;
}

}  // namespace

// ------------------------------------------------------------------------------------
// StringSet

StringSet::StringSet() : seed_(NextRandom()) {
  slots_ = AllocSlots(kMinStringCapacity);
  mask_ = kMinStringCapacity - 1;
}

StringSet::~StringSet() {
  FreeBlocks();
  std::free(slots_);
}

StringSet::StringSet(const StringSet& other) : seed_(other.seed_) {
  slots_ = AllocSlots(other.capacity());
  mask_ = other.mask_;
  for (uint64_t i = 0; i <= mask_; ++i) {
    if (other.slots_[i] == 0) continue;
    char* p = NewBlock(BlockView(other.slots_[i]));
    slots_[i] = (other.slots_[i] & ~kAddrMask) | reinterpret_cast<uintptr_t>(p);
    block_bytes_ += BlockCost(p);
    ++size_;
  }
}

StringSet::StringSet(StringSet&& other) noexcept
    : slots_(other.slots_),
      mask_(other.mask_),
      size_(other.size_),
      seed_(other.seed_),
      block_bytes_(other.block_bytes_) {
  other.slots_ = nullptr;
  other.mask_ = 0;
  other.size_ = 0;
  other.block_bytes_ = 0;
}

StringSet& StringSet::operator=(StringSet&& other) noexcept {
  if (this != &other) {
    FreeBlocks();
    std::free(slots_);
    slots_ = std::exchange(other.slots_, nullptr);
    mask_ = std::exchange(other.mask_, 0);
    size_ = std::exchange(other.size_, 0);
    seed_ = other.seed_;
    block_bytes_ = std::exchange(other.block_bytes_, 0);
  }
  return *this;
}

void StringSet::FreeBlocks() {
  if (slots_ == nullptr) return;
  for (uint64_t i = 0; i <= mask_; ++i) {
    if (slots_[i] != 0) std::free(BlockPtr(slots_[i]));
  }
}

std::string_view StringSet::BlockView(uint64_t slot) {
  const char* p = BlockPtr(slot);
  const auto first = static_cast<unsigned char>(p[0]);
  if (first != kLongLength) return std::string_view(p + 1, first);
  uint64_t n;
  std::memcpy(&n, p + 1, 8);
  return std::string_view(p + 9, n);
}

uint64_t StringSet::Hash(std::string_view s) const {
  return XXH3_64bits_withSeed(s.data(), s.size(), seed_);
}

uint64_t StringSet::Find(std::string_view s, uint64_t hash) const {
  const uint64_t tag = hash >> 48;
  for (uint64_t i = hash & mask_;; i = (i + 1) & mask_) {
    const uint64_t slot = slots_[i];
    if (slot == 0) return capacity();  // load < 1: an empty slot always ends the run
    if ((slot >> 48) == tag && BlockView(slot) == s) return i;
  }
}

bool StringSet::Contains(std::string_view s) const { return Find(s, Hash(s)) != capacity(); }

void StringSet::Rehash(uint64_t new_capacity) {
  uint64_t* old = slots_;
  const uint64_t old_capacity = capacity();
  slots_ = AllocSlots(new_capacity);
  mask_ = static_cast<uint32_t>(new_capacity - 1);
  for (uint64_t i = 0; i < old_capacity; ++i) {
    if (old[i] == 0) continue;
    uint64_t j = Hash(BlockView(old[i])) & mask_;
    while (slots_[j] != 0) j = (j + 1) & mask_;
    slots_[j] = old[i];
  }
  std::free(old);
}

void StringSet::Reserve(size_t n) {
  const uint64_t cap = CapacityForStrings(n);
  if (cap > capacity()) Rehash(cap);
}

bool StringSet::Add(std::string_view s) {
  const uint64_t hash = Hash(s);
  if (Find(s, hash) != capacity()) return false;
  if ((uint64_t{size_} + 1) * 5 > capacity() * 4) Rehash(capacity() * 2);
  uint64_t i = hash & mask_;
  while (slots_[i] != 0) i = (i + 1) & mask_;
  char* p = NewBlock(s);
  slots_[i] = ((hash >> 48) << 48) | reinterpret_cast<uintptr_t>(p);
  block_bytes_ += BlockCost(p);
  ++size_;
  return true;
}

bool StringSet::Remove(std::string_view s) {
  uint64_t hole = Find(s, Hash(s));
  if (hole == capacity()) return false;
  char* p = BlockPtr(slots_[hole]);
  block_bytes_ -= BlockCost(p);
  std::free(p);
  --size_;
  // Backward-shift deletion: pull later members of the run into the hole when the
  // hole lies on their probe path, so lookups never need tombstones.
  for (uint64_t k = (hole + 1) & mask_; slots_[k] != 0; k = (k + 1) & mask_) {
    const uint64_t home = Hash(BlockView(slots_[k])) & mask_;
    if (((k - home) & mask_) >= ((k - hole) & mask_)) {
      slots_[hole] = slots_[k];
      hole = k;
    }
  }
  slots_[hole] = 0;
  if (capacity() > kMinStringCapacity && uint64_t{size_} * 8 < capacity()) {
    Rehash(std::max<uint64_t>(kMinStringCapacity, CapacityForStrings(size_ * 2)));
  }
  return true;
}

size_t StringSet::MemoryUsage() const { return ChunkBytes(capacity() * sizeof(uint64_t)) + block_bytes_; }

std::string_view StringSet::RandomMember(uint64_t random) const {
  // Load stays >= 1/8 (Remove shrinks below it), so rejection sampling, exactly uniform,
  // practically always succeeds within 64 tries; then walk from the last pick.
  uint64_t state = random;
  uint64_t i = 0;
  for (int tries = 0; tries < 64; ++tries) {
    i = Mix64(&state) & mask_;
    if (slots_[i] != 0) return BlockView(slots_[i]);
  }
  while (slots_[i] == 0) i = (i + 1) & mask_;
  return BlockView(slots_[i]);
}

// ------------------------------------------------------------------------------------
// SetValue

SetValue::SetValue() : rep_(LongSet(NextRandom(), NextRandom())) {}

Status SetValue::FromInts(std::span<const int64_t> ids, const LongSetOptions& options,
                          std::unique_ptr<SetValue>* out) {
  // Sized for every argument, filled, then shrunk if many were duplicates: cheaper than
  // LongSet::Build's sort, and a command's ids are rarely repeated.
  LongSetOptions grow = options;
  grow.auto_grow = true;
  auto set = std::make_unique<SetValue>();
  LongSet& ls = set->longset();
  Status st = ls.Reserve(ids.size(), grow);
  if (!st.ok()) return st;
  for (int64_t v : ids) {
    bool added = false;
    st = ls.Add(v, grow, &added);
    if (!st.ok()) return st;
  }
  ls.MaybeShrink(grow);
  *out = std::move(set);
  return Status::OK();
}

Status SetValue::FromMembers(std::span<const std::string_view> members,
                             const LongSetOptions& options, std::unique_ptr<SetValue>* out) {
  std::vector<int64_t> ids(members.size());
  for (size_t i = 0; i < members.size(); ++i) {
    if (!ParseCanonicalInt64(members[i], &ids[i])) {
      StringSet ss;
      ss.Reserve(members.size());
      for (std::string_view m : members) ss.Add(m);
      *out = std::make_unique<SetValue>(std::move(ss));
      return Status::OK();
    }
  }
  return FromInts(ids, options, out);
}

size_t SetValue::size() const {
  return is_longset() ? longset().size() : strings().size();
}

size_t SetValue::MemoryUsage() const {
  size_t bytes = ChunkBytes(sizeof(SetValue));
  if (is_longset()) {
    bytes += ChunkBytes(longset().capacity() * sizeof(int64_t));
  } else {
    bytes += strings().MemoryUsage();
  }
  return bytes;
}

std::unique_ptr<Object> SetValue::Clone() const {
  if (is_longset()) return std::make_unique<SetValue>(LongSet(longset()));
  return std::make_unique<SetValue>(StringSet(strings()));
}

void SetValue::SerializeTo(std::string* out) const {
  if (is_longset()) {
    std::string image;
    longset().SerializeImage(&image);
    out->push_back(kTagLongSet);
    out->append(image);
    return;
  }
  out->push_back(kTagHashtable);
  PutVarint(out, strings().size());
  strings().ForEach([&](std::string_view s) {
    PutVarint(out, s.size());
    out->append(s);
  });
}

Status SetValue::Decode(std::string_view bytes, std::unique_ptr<SetValue>* out) {
  if (bytes.empty()) return Status::Corruption("set: no encoding tag");
  const char tag = bytes.front();
  bytes.remove_prefix(1);
  if (tag == kTagLongSet) {
    LongSetOptions loose;  // a snapshot may predate a lower longset-max-fill
    loose.max_fill = 0.99;
    std::unique_ptr<LongSet> ls;
    Status st = LongSet::FromImage(bytes, loose, &ls);
    if (!st.ok()) return Status::Corruption("set: " + st.message());
    if (ls->empty()) return Status::Corruption("set: empty longset");
    *out = std::make_unique<SetValue>(std::move(*ls));
    return Status::OK();
  }
  if (tag != kTagHashtable) return Status::Corruption("set: unknown encoding tag");
  uint64_t count = 0;
  if (!GetVarint(&bytes, &count)) return Status::Corruption("set: bad member count");
  // Every member takes at least its one length byte, so a count above the bytes left
  // is a lie; checking first keeps Reserve from trusting it.
  if (count == 0 || count > bytes.size()) return Status::Corruption("set: bad member count");
  StringSet ss;
  ss.Reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t len = 0;
    if (!GetVarint(&bytes, &len) || len > bytes.size()) {
      return Status::Corruption("set: truncated member");
    }
    if (!ss.Add(bytes.substr(0, len))) return Status::Corruption("set: duplicate member");
    bytes.remove_prefix(len);
  }
  if (!bytes.empty()) return Status::Corruption("set: trailing bytes");
  *out = std::make_unique<SetValue>(std::move(ss));
  return Status::OK();
}

uint64_t SetValue::Digest() const {
  uint64_t sum = 0;
  char buf[24];
  ForEach([&](const SetMember& m) {
    const std::string_view text = m.Text(buf);
    sum += XXH64(text.data(), text.size(), 0);
  });
  return sum;
}

void SetValue::ConvertToHashtable() {
  if (!is_longset()) return;
  StringSet ss;
  ss.Reserve(longset().size());
  char buf[24];
  longset().ForEach([&](int64_t v) { ss.Add(FormatInt64(v, buf)); });
  rep_ = std::move(ss);
}

Status SetValue::AddInts(std::span<const int64_t> ids, const LongSetOptions& options,
                         size_t* added) {
  *added = 0;
  if (!is_longset()) {
    auto& ss = std::get<StringSet>(rep_);
    char buf[24];
    for (int64_t v : ids) *added += ss.Add(FormatInt64(v, buf)) ? 1 : 0;
    return Status::OK();
  }
  LongSet& ls = longset();
  // Decide up front, so a failure changes nothing.
  if (!options.auto_grow) {
    std::vector<int64_t> fresh;
    for (int64_t v : ids) {
      if (!IsSlotSentinel(v) && !ls.Contains(v)) fresh.push_back(v);
    }
    std::sort(fresh.begin(), fresh.end());
    fresh.erase(std::unique(fresh.begin(), fresh.end()), fresh.end());
    if (SlotMembers(ls) + fresh.size() > LongSet::SlotLimit(ls.capacity(), options.max_fill)) {
      return Status::Full("longset is full");
    }
  } else if (ls.size() + ids.size() > LongSet::SlotLimit(LongSet::kMaxCapacity, options.max_fill)) {
    return Status::Full("longset reached its maximum capacity");
  }
  for (int64_t v : ids) {
    bool was_added = false;
    Status st = ls.Add(v, options, &was_added);
    if (!st.ok()) return st;  // not reached after the checks above
    *added += was_added ? 1 : 0;
  }
  return Status::OK();
}

Status SetValue::AddMembers(std::span<const std::string_view> members,
                            const LongSetOptions& options, size_t* added) {
  *added = 0;
  if (is_longset()) {
    int64_t few[8];  // SADD of a handful of members: no allocation
    std::vector<int64_t> many;
    if (members.size() > std::size(few)) many.resize(members.size());
    int64_t* ids = many.empty() ? few : many.data();
    bool all_ints = true;
    for (size_t i = 0; i < members.size() && all_ints; ++i) {
      all_ints = ParseCanonicalInt64(members[i], &ids[i]);
    }
    if (all_ints) return AddInts(std::span<const int64_t>(ids, members.size()), options, added);
    ConvertToHashtable();
  }
  auto& ss = std::get<StringSet>(rep_);
  for (std::string_view m : members) *added += ss.Add(m) ? 1 : 0;
  return Status::OK();
}

bool SetValue::WouldBeFull(const SetMember& m, const LongSetOptions& options) const {
  if (!is_longset() || options.auto_grow) return false;
  int64_t v = m.i;
  if (!m.is_int && !ParseCanonicalInt64(m.s, &v)) return false;  // converts instead
  const LongSet& ls = longset();
  if (IsSlotSentinel(v) || ls.Contains(v)) return false;
  return SlotMembers(ls) + 1 > LongSet::SlotLimit(ls.capacity(), options.max_fill);
}

Status SetValue::AddMember(const SetMember& m, const LongSetOptions& options, bool* added) {
  size_t n = 0;
  Status st;
  if (m.is_int) {
    const int64_t v = m.i;
    st = AddInts(std::span<const int64_t>(&v, 1), options, &n);
  } else {
    const std::string_view s = m.s;
    st = AddMembers(std::span<const std::string_view>(&s, 1), options, &n);
  }
  *added = n != 0;
  return st;
}

bool SetValue::Remove(std::string_view member) {
  if (!is_longset()) return std::get<StringSet>(rep_).Remove(member);
  int64_t v;
  return ParseCanonicalInt64(member, &v) && longset().Remove(v);
}

bool SetValue::RemoveInt(int64_t v) {
  if (is_longset()) return longset().Remove(v);
  char buf[24];
  return std::get<StringSet>(rep_).Remove(FormatInt64(v, buf));
}

bool SetValue::RemoveMember(const SetMember& m) {
  // Copy first: m.s may view this set's own storage, which Remove frees.
  if (m.is_int) return RemoveInt(m.i);
  return Remove(std::string(m.s));
}

void SetValue::Compact(const LongSetOptions& options) {
  if (is_longset()) longset().MaybeShrink(options);
}

bool SetValue::Contains(std::string_view member) const {
  if (!is_longset()) return strings().Contains(member);
  int64_t v;
  return ParseCanonicalInt64(member, &v) && longset().Contains(v);
}

bool SetValue::ContainsInt(int64_t v) const {
  if (is_longset()) return longset().Contains(v);
  char buf[24];
  return strings().Contains(FormatInt64(v, buf));
}

bool SetValue::ContainsMember(const SetMember& m) const {
  return m.is_int ? ContainsInt(m.i) : Contains(m.s);
}

SetMember SetValue::RandomMember(uint64_t random) const {
  if (is_longset()) return SetMember::Int(longset().RandomMember(random));
  return SetMember::Str(strings().RandomMember(random));
}

void SetValue::Members(std::vector<SetMember>* out) const {
  out->reserve(out->size() + size());
  ForEach([&](const SetMember& m) { out->push_back(m); });
}

uint64_t SetValue::ScanKey(const SetMember& m) {
  int64_t v = m.i;
  if (m.is_int || ParseCanonicalInt64(m.s, &v)) return LongSet::ScanKey(v);
  return XXH3_64bits(m.s.data(), m.s.size());
}

uint64_t SetValue::Scan(uint64_t cursor, size_t count, std::vector<SetMember>* out) const {
  out->clear();
  if (is_longset()) {
    std::vector<int64_t> ids;
    const uint64_t next = longset().Scan(cursor, count, &ids);
    out->reserve(ids.size());
    for (int64_t v : ids) out->push_back(SetMember::Int(v));
    return next;
  }
  return HashOrderScan(size(), cursor, count, [&](auto f) { ForEach(f); }, ScanKey, out);
}

// ------------------------------------------------------------------------------------
// Set algebra

std::vector<size_t> set_internal::BySize(std::span<const SetValue* const> sets) {
  std::vector<size_t> order(sets.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  // A key named twice is one set: checking it again can only say yes. Without
  // this, LSINTER of one big set named 20,000 times costs 20,000 lookups per
  // member. Sorted by address to find repeats, then by size.
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return sets[a] != sets[b] ? std::less<const SetValue*>()(sets[a], sets[b]) : a < b;
  });
  order.erase(std::unique(order.begin(), order.end(),
                          [&](size_t a, size_t b) { return sets[a] == sets[b]; }),
              order.end());
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return sets[a]->size() != sets[b]->size() ? sets[a]->size() < sets[b]->size() : a < b;
  });
  return order;
}

namespace {

LongSetOptions Growing(const LongSetOptions& options) {
  LongSetOptions o = options;
  o.auto_grow = true;  // a new value is sized by the server, never Full
  return o;
}

void AddOrIgnore(SetValue* set, const SetMember& m, const LongSetOptions& options) {
  bool added = false;
  set->AddMember(m, options, &added).PermitUnchecked();  // Growing(): only past 2^32 slots
}

}  // namespace

std::unique_ptr<SetValue> SetUnion(std::span<const SetValue* const> sets,
                                   const LongSetOptions& options) {
  const LongSetOptions o = Growing(options);
  const SetValue* largest = nullptr;
  for (const SetValue* s : sets) {
    if (largest == nullptr || s->size() > largest->size()) largest = s;
  }
  if (largest == nullptr) return nullptr;
  // Start from a copy of the largest set (one memcpy for a longset), add the rest.
  std::unique_ptr<SetValue> out;
  if (largest->is_longset()) {
    out = std::make_unique<SetValue>(LongSet(largest->longset()));
  } else {
    out = std::make_unique<SetValue>();
  }
  for (const SetValue* s : sets) {
    if (s == largest && largest->is_longset()) continue;
    s->ForEach([&](const SetMember& m) { AddOrIgnore(out.get(), m, o); });
  }
  if (out->empty()) return nullptr;
  out->Compact(o);
  return out;
}

std::unique_ptr<SetValue> SetDiff(std::span<const SetValue* const> sets,
                                  const LongSetOptions& options) {
  if (sets.empty()) return nullptr;
  const LongSetOptions o = Growing(options);
  auto out = std::make_unique<SetValue>();
  sets[0]->ForEach([&](const SetMember& m) {
    for (size_t k = 1; k < sets.size(); ++k) {
      if (sets[k]->ContainsMember(m)) return;
    }
    AddOrIgnore(out.get(), m, o);
  });
  if (out->empty()) return nullptr;
  return out;
}

std::unique_ptr<SetValue> SetInter(std::span<const SetValue* const> sets,
                                   const LongSetOptions& options) {
  const LongSetOptions o = Growing(options);
  auto out = std::make_unique<SetValue>();
  ForEachInter(sets, 0, [&](const SetMember& m) { AddOrIgnore(out.get(), m, o); });
  if (out->empty()) return nullptr;
  return out;
}

}  // namespace feedkv
