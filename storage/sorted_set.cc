// SortedSetValue. See sorted_set.h for the encodings.
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

using block_index::ChunkBytes;

char* NewItem(std::string_view member, double score) {
  char* p = block_index::AllocBlock(zset_item::HeaderSize(member.size()) + member.size());
  zset_item::Write(p, score, member);
  return p;
}

bool Before(double s1, std::string_view m1, double s2, std::string_view m2) {
  return s1 < s2 || (s1 == s2 && m1 < m2);
}

constexpr char kTagListpack = 0;
constexpr char kTagSkiplist = 1;

}  // namespace

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
