// SortedSetValue and ZMemberIndex. See sorted_set.h for the encodings.
#include "storage/sorted_set.h"

#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <unordered_set>
#include <utility>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "storage/hash_order_scan.h"
#include "storage/varint.h"

namespace feedkv {

namespace {

constexpr uint64_t kAddrMask = (uint64_t{1} << 48) - 1;
constexpr uint32_t kMinSlots = 8;

size_t ChunkBytes(size_t n) { return std::max<size_t>(32, (n + 8 + 15) & ~size_t{15}); }

char* Ptr(uint64_t slot) { return reinterpret_cast<char*>(slot & kAddrMask); }

uint64_t* AllocSlots(uint64_t n) {
  auto* p = static_cast<uint64_t*>(std::calloc(n, sizeof(uint64_t)));
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

char* NewItem(std::string_view member, double score) {
  const size_t n = zset_item::HeaderSize(member.size()) + member.size();
  auto* p = static_cast<char*>(std::malloc(n));
  if (p == nullptr) throw std::bad_alloc();
  // The index keeps a tag in the top 16 bits of the address (as StringSet).
  if ((reinterpret_cast<uintptr_t>(p) & ~kAddrMask) != 0) std::abort();
  zset_item::Write(p, score, member);
  return p;
}

size_t ItemCost(const char* p) { return malloc_usable_size(const_cast<char*>(p)) + 8; }

uint64_t NewSeed() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng();
}

bool Before(double s1, std::string_view m1, double s2, std::string_view m2) {
  return s1 < s2 || (s1 == s2 && m1 < m2);
}

constexpr char kTagListpack = 0;
constexpr char kTagSkiplist = 1;

}  // namespace

// ------------------------------------------------------------------------------------
// ZMemberIndex

ZMemberIndex::ZMemberIndex() : slots_(AllocSlots(kMinSlots)), mask_(kMinSlots - 1), seed_(NewSeed()) {}

ZMemberIndex::~ZMemberIndex() {
  FreeAll();
  std::free(slots_);
}

ZMemberIndex::ZMemberIndex(ZMemberIndex&& o) noexcept
    : slots_(std::exchange(o.slots_, nullptr)),
      mask_(std::exchange(o.mask_, 0)),
      size_(std::exchange(o.size_, 0)),
      seed_(o.seed_),
      block_bytes_(std::exchange(o.block_bytes_, 0)) {}

ZMemberIndex& ZMemberIndex::operator=(ZMemberIndex&& o) noexcept {
  if (this != &o) {
    FreeAll();
    std::free(slots_);
    slots_ = std::exchange(o.slots_, nullptr);
    mask_ = std::exchange(o.mask_, 0);
    size_ = std::exchange(o.size_, 0);
    seed_ = o.seed_;
    block_bytes_ = std::exchange(o.block_bytes_, 0);
  }
  return *this;
}

void ZMemberIndex::FreeAll() {
  if (slots_ == nullptr) return;
  for (uint64_t i = 0; i <= mask_; ++i) {
    if (slots_[i] != 0) std::free(Ptr(slots_[i]));
  }
}

uint64_t ZMemberIndex::Hash(std::string_view s) const {
  return XXH3_64bits_withSeed(s.data(), s.size(), seed_);
}

uint64_t ZMemberIndex::Slot(std::string_view member, uint64_t hash) const {
  const uint64_t tag = hash >> 48;
  for (uint64_t i = hash & mask_;; i = (i + 1) & mask_) {
    const uint64_t slot = slots_[i];
    if (slot == 0) return uint64_t{mask_} + 1;
    if ((slot >> 48) == tag && zset_item::Member(Ptr(slot)) == member) return i;
  }
}

char* ZMemberIndex::Find(std::string_view member) const {
  const uint64_t i = Slot(member, Hash(member));
  return i > mask_ ? nullptr : Ptr(slots_[i]);
}

void ZMemberIndex::Insert(char* item) {
  if ((uint64_t{size_} + 1) * 5 > (uint64_t{mask_} + 1) * 4) Rehash((uint64_t{mask_} + 1) * 2);
  const uint64_t h = Hash(zset_item::Member(item));
  uint64_t i = h & mask_;
  while (slots_[i] != 0) i = (i + 1) & mask_;
  slots_[i] = ((h >> 48) << 48) | reinterpret_cast<uintptr_t>(item);
  ++size_;
  block_bytes_ += ItemCost(item);
}

char* ZMemberIndex::Remove(std::string_view member) {
  uint64_t i = Slot(member, Hash(member));
  if (i > mask_) return nullptr;
  char* item = Ptr(slots_[i]);
  block_bytes_ -= ItemCost(item);
  --size_;
  // Backward-shift deletion: pull later members of the run into the hole when
  // their home bucket allows it, so no tombstones are needed.
  for (uint64_t j = (i + 1) & mask_; slots_[j] != 0; j = (j + 1) & mask_) {
    const uint64_t home = Hash(zset_item::Member(Ptr(slots_[j]))) & mask_;
    // Move j to i when home is not cyclically in (i, j].
    const bool in_range = (i <= j) ? (home > i && home <= j) : (home > i || home <= j);
    if (!in_range) {
      slots_[i] = slots_[j];
      i = j;
    }
  }
  slots_[i] = 0;
  const uint64_t cap = uint64_t{mask_} + 1;
  if (cap > kMinSlots && uint64_t{size_} * 10 < cap) Rehash(cap / 2);
  return item;
}

void ZMemberIndex::Rehash(uint64_t capacity) {
  uint64_t* old = slots_;
  const uint64_t old_cap = uint64_t{mask_} + 1;
  slots_ = AllocSlots(capacity);
  mask_ = static_cast<uint32_t>(capacity - 1);
  for (uint64_t k = 0; k < old_cap; ++k) {
    if (old[k] == 0) continue;
    const uint64_t h = Hash(zset_item::Member(Ptr(old[k])));
    uint64_t i = h & mask_;
    while (slots_[i] != 0) i = (i + 1) & mask_;
    slots_[i] = old[k];
  }
  std::free(old);
}

size_t ZMemberIndex::MemoryUsage() const {
  return ChunkBytes((uint64_t{mask_} + 1) * sizeof(uint64_t)) + block_bytes_;
}

// ------------------------------------------------------------------------------------
// SortedSetValue

SortedSetValue::~SortedSetValue() { std::free(buf_); }

std::unique_ptr<SortedSetValue> SortedSetValue::Create(size_t size_hint, size_t max_len,
                                                       const ZsetLimits& limits) {
  auto z = std::make_unique<SortedSetValue>();
  if (size_hint > limits.max_listpack_entries || max_len > limits.max_listpack_value) {
    z->ConvertToSkiplist();
  }
  return z;
}

size_t SortedSetValue::MemoryUsage() const {
  size_t n = ChunkBytes(sizeof(SortedSetValue));
  if (buf_ != nullptr) n += ChunkBytes(bytes_);
  if (tree_) n += ChunkBytes(sizeof(Tree)) + tree_->index.MemoryUsage() + tree_->order.MemoryUsage();
  return n;
}

std::unique_ptr<Object> SortedSetValue::Clone() const {
  auto z = std::make_unique<SortedSetValue>();
  if (tree_) {
    z->ConvertToSkiplist();
    ForEach([&](const ZEntry& e) {
      char* item = NewItem(e.member, e.score);
      z->tree_->index.Insert(item);
      z->tree_->order.Insert(item);
    });
  } else if (bytes_ > 0) {
    z->buf_ = static_cast<char*>(std::malloc(bytes_));
    if (z->buf_ == nullptr) throw std::bad_alloc();
    std::memcpy(z->buf_, buf_, bytes_);
    z->bytes_ = bytes_;
    z->count_ = count_;
  }
  return z;
}

void SortedSetValue::SerializeTo(std::string* out) const {
  out->push_back(tree_ ? kTagSkiplist : kTagListpack);
  PutVarint(out, size());
  ForEach([&](const ZEntry& e) {
    char score[8];
    std::memcpy(score, &e.score, 8);  // little-endian hosts only (x86-64, aarch64)
    out->append(score, 8);
    PutVarint(out, e.member.size());
    out->append(e.member);
  });
}

uint64_t SortedSetValue::Digest() const {
  uint64_t sum = 0;
  ForEach([&](const ZEntry& e) {
    uint64_t bits;
    double s = e.score == 0 ? 0.0 : e.score;  // -0 and 0 are one score
    std::memcpy(&bits, &s, 8);
    sum += XXH64(e.member.data(), e.member.size(), bits);
  });
  return sum;
}

Status SortedSetValue::Decode(std::string_view in, std::unique_ptr<SortedSetValue>* out) {
  out->reset();
  if (in.empty() || (in[0] != kTagListpack && in[0] != kTagSkiplist)) {
    return Status::Corruption("sorted set: bad encoding tag");
  }
  const bool skiplist = in[0] == kTagSkiplist;
  in.remove_prefix(1);
  uint64_t count;
  if (!GetVarint(&in, &count) || count == 0 || count > in.size() / 9) {
    return Status::Corruption("sorted set: bad member count");
  }
  auto z = std::make_unique<SortedSetValue>();
  if (skiplist) z->ConvertToSkiplist();
  std::unordered_set<std::string_view> seen;
  double prev_score = 0;
  std::string_view prev_member;
  for (uint64_t i = 0; i < count; ++i) {
    if (in.size() < 8) return Status::Corruption("sorted set: truncated score");
    double score;
    std::memcpy(&score, in.data(), 8);
    in.remove_prefix(8);
    uint64_t len;
    if (!GetVarint(&in, &len) || len > in.size() || len > UINT32_MAX) {
      return Status::Corruption("sorted set: bad member length");
    }
    const std::string_view member = in.substr(0, len);
    in.remove_prefix(len);
    if (std::isnan(score)) return Status::Corruption("sorted set: NaN score");
    if (i > 0 && !Before(prev_score, prev_member, score, member)) {
      return Status::Corruption("sorted set: members out of order");
    }
    if (!seen.insert(member).second) return Status::Corruption("sorted set: duplicate member");
    prev_score = score;
    prev_member = member;
    if (skiplist) {
      char* item = NewItem(member, score);
      z->tree_->index.Insert(item);
      z->tree_->order.Insert(item);
    } else {
      // In order: append.
      const size_t n = zset_item::HeaderSize(member.size()) + member.size();
      char* grown = static_cast<char*>(std::realloc(z->buf_, z->bytes_ + n));
      if (grown == nullptr) throw std::bad_alloc();
      z->buf_ = grown;
      zset_item::Write(z->buf_ + z->bytes_, score, member);
      z->bytes_ += static_cast<uint32_t>(n);
      ++z->count_;
    }
  }
  if (!in.empty()) return Status::Corruption("sorted set: trailing bytes");
  *out = std::move(z);
  return Status::OK();
}

// ---- listpack helpers ----

size_t SortedSetValue::ListFind(std::string_view member) const {
  for (size_t off = 0; off < bytes_; off += zset_item::Size(buf_ + off)) {
    if (zset_item::Member(buf_ + off) == member) return off;
  }
  return bytes_;
}

void SortedSetValue::ListInsert(std::string_view member, double score) {
  // Redis's listpack keeps scores as text and writes -0 as "0": so does this one.
  if (score == 0) score = 0.0;
  size_t off = 0;
  while (off < bytes_ &&
         Before(zset_item::Score(buf_ + off), zset_item::Member(buf_ + off), score, member)) {
    off += zset_item::Size(buf_ + off);
  }
  const size_t n = zset_item::HeaderSize(member.size()) + member.size();
  char* grown = static_cast<char*>(std::realloc(buf_, bytes_ + n));
  if (grown == nullptr) throw std::bad_alloc();
  buf_ = grown;
  std::memmove(buf_ + off + n, buf_ + off, bytes_ - off);
  zset_item::Write(buf_ + off, score, member);
  bytes_ += static_cast<uint32_t>(n);
  ++count_;
}

void SortedSetValue::ListErase(size_t off) {
  const size_t n = zset_item::Size(buf_ + off);
  std::memmove(buf_ + off, buf_ + off + n, bytes_ - off - n);
  bytes_ -= static_cast<uint32_t>(n);
  --count_;
  if (bytes_ == 0) {
    std::free(buf_);
    buf_ = nullptr;
  } else if (char* shrunk = static_cast<char*>(std::realloc(buf_, bytes_))) {
    buf_ = shrunk;
  }
}

void SortedSetValue::ListOffsets(std::vector<uint32_t>* out) const {
  out->clear();
  out->reserve(count_);
  for (size_t off = 0; off < bytes_; off += zset_item::Size(buf_ + off)) {
    out->push_back(static_cast<uint32_t>(off));
  }
}

size_t SortedSetValue::ListSkip(size_t n) const {
  size_t off = 0;
  for (; n > 0; --n) off += zset_item::Size(buf_ + off);
  return off;
}

// ---- operations ----

bool SortedSetValue::Score(std::string_view member, double* score) const {
  if (tree_) {
    const char* it = tree_->index.Find(member);
    if (it == nullptr) return false;
    *score = zset_item::Score(it);
    return true;
  }
  const size_t off = ListFind(member);
  if (off == bytes_) return false;
  *score = zset_item::Score(buf_ + off);
  return true;
}

SortedSetValue::AddResult SortedSetValue::Add(std::string_view member, double score, int flags,
                                              const ZsetLimits& limits, double* new_score) {
  double current;
  if (Score(member, &current)) {
    if (flags & kNX) {
      *new_score = current;
      return AddResult::kSkipped;
    }
    if (flags & kIncr) {
      score += current;
      if (std::isnan(score)) return AddResult::kNaN;
    }
    // GT/LT refuse a move the wrong way (and count as not updated).
    if (((flags & kLT) && score >= current) || ((flags & kGT) && score <= current)) {
      *new_score = current;
      return AddResult::kSkipped;
    }
    *new_score = score;
    if (score == current) return AddResult::kUnchanged;
    if (tree_) {
      char* it = tree_->index.Find(member);
      tree_->order.Erase(current, member);
      zset_item::SetScore(it, score);
      tree_->order.Insert(it);
    } else {
      ListErase(ListFind(member));
      ListInsert(member, score);
    }
    return AddResult::kUpdated;
  }
  if (flags & kXX) return AddResult::kSkipped;
  *new_score = score;
  if (!tree_ && (count_ + 1 > limits.max_listpack_entries || member.size() > limits.max_listpack_value)) {
    ConvertToSkiplist();
  }
  if (tree_) {
    char* item = NewItem(member, score);
    tree_->index.Insert(item);
    tree_->order.Insert(item);
  } else {
    ListInsert(member, score);
  }
  return AddResult::kAdded;
}

bool SortedSetValue::Remove(std::string_view member) {
  if (tree_) {
    char* it = tree_->index.Remove(member);
    if (it == nullptr) return false;
    tree_->order.Erase(zset_item::Score(it), member);
    std::free(it);
    return true;
  }
  const size_t off = ListFind(member);
  if (off == bytes_) return false;
  ListErase(off);
  return true;
}

bool SortedSetValue::Rank(std::string_view member, size_t* rank, double* score) const {
  if (tree_) {
    const char* it = tree_->index.Find(member);
    if (it == nullptr) return false;
    *score = zset_item::Score(it);
    *rank = tree_->order.Rank(*score, member);
    return true;
  }
  size_t r = 0;
  for (size_t off = 0; off < bytes_; off += zset_item::Size(buf_ + off), ++r) {
    if (zset_item::Member(buf_ + off) == member) {
      *rank = r;
      *score = zset_item::Score(buf_ + off);
      return true;
    }
  }
  return false;
}

ZEntry SortedSetValue::At(size_t rank) const {
  if (tree_) {
    const char* it = ScoreTree::ItemAt(tree_->order.Seek(rank));
    return ZEntry{zset_item::Member(it), zset_item::Score(it)};
  }
  const size_t off = ListSkip(rank);
  return ZEntry{zset_item::Member(buf_ + off), zset_item::Score(buf_ + off)};
}

void SortedSetValue::RemoveRanks(size_t lo, size_t hi) {
  if (!tree_) {
    const size_t from = ListSkip(lo);
    size_t to = from;
    for (size_t r = lo; r <= hi; ++r) to += zset_item::Size(buf_ + to);
    std::memmove(buf_ + from, buf_ + to, bytes_ - to);
    bytes_ -= static_cast<uint32_t>(to - from);
    count_ -= static_cast<uint32_t>(hi - lo + 1);
    if (bytes_ == 0) {
      std::free(buf_);
      buf_ = nullptr;
    } else if (char* shrunk = static_cast<char*>(std::realloc(buf_, bytes_))) {
      buf_ = shrunk;
    }
    return;
  }
  // Collect first: erasing moves items between leaves.
  std::vector<std::string> doomed;
  doomed.reserve(hi - lo + 1);
  ForRanks(lo, hi, false, [&](const ZEntry& e) { doomed.emplace_back(e.member); });
  for (const std::string& m : doomed) Remove(m);
}

uint64_t SortedSetValue::Scan(uint64_t cursor, size_t count, std::vector<ZEntry>* out) const {
  out->clear();
  if (!tree_) {
    ForEach([&](const ZEntry& e) { out->push_back(e); });
    return 0;
  }
  return HashOrderScan(
      size(), cursor, count, [&](auto f) { ForEach(f); },
      [](const ZEntry& e) { return XXH3_64bits(e.member.data(), e.member.size()); }, out);
}

void SortedSetValue::ConvertToSkiplist() {
  if (tree_) return;
  auto t = std::make_unique<Tree>();
  for (size_t off = 0; off < bytes_; off += zset_item::Size(buf_ + off)) {
    char* item = NewItem(zset_item::Member(buf_ + off), zset_item::Score(buf_ + off));
    t->index.Insert(item);
    t->order.Insert(item);
  }
  std::free(buf_);
  buf_ = nullptr;
  bytes_ = 0;
  count_ = 0;
  tree_ = std::move(t);
}

}  // namespace feedkv
