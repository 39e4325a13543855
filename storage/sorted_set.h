// SortedSetValue: the value of a Redis sorted-set key: members (byte strings) each
// with a double score, ordered by (score, member bytes) as Redis orders them. Two
// encodings, named as Redis names them for OBJECT ENCODING:
//   - "listpack": a small set is one malloc block of entries in order, each
//     [score][length][bytes] (storage/zset_item.h), searched linearly, as Redis's
//     listpack. Up to zset-max-listpack-entries members of at most
//     zset-max-listpack-value bytes.
//   - "skiplist": a bigger set keeps one block per member, found by member through
//     an open-addressing index of tagged pointers (ZMemberIndex) and by order
//     through a counted B+tree (ScoreTree). About 32 + 13 + 11 bytes per short
//     member, against ~120 for Redis's dict + skiplist.
// A set converts from listpack to skiplist when it outgrows the limits, and never
// back (as Redis).
//
// Handlers see members as ZEntry: a view into the set's storage, valid until the
// set changes. Not thread-safe: owned by the command thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "storage/block_index.h"
#include "storage/object.h"
#include "storage/score_tree.h"
#include "storage/status.h"
#include "storage/zset_item.h"

namespace feedkv {

struct ZEntry {
  std::string_view member;
  double score = 0;
};

// When a sorted set outgrows the listpack encoding (zset-max-listpack-*).
struct ZsetLimits {
  size_t max_listpack_entries = 128;
  size_t max_listpack_value = 64;
};

// The member -> block index of a skiplist-encoded set (storage/block_index.h).
struct ZsetItemKey {
  static std::string_view Key(const char* item) { return zset_item::Member(item); }
};
using ZMemberIndex = BlockIndex<ZsetItemKey>;

class SortedSetValue final : public Object {
 public:
  SortedSetValue() = default;
  ~SortedSetValue() override;
  SortedSetValue(const SortedSetValue&) = delete;
  SortedSetValue& operator=(const SortedSetValue&) = delete;

  // An empty set whose encoding suits `size_hint` members of up to `max_len` bytes.
  static std::unique_ptr<SortedSetValue> Create(size_t size_hint, size_t max_len,
                                                const ZsetLimits& limits);

  // Object.
  ValueType type() const override { return ValueType::kZset; }
  std::string_view encoding() const override { return tree_ ? "skiplist" : "listpack"; }
  size_t MemoryUsage() const override;
  std::unique_ptr<Object> Clone() const override;
  // u8 encoding (0 listpack, 1 skiplist), varint count, then in order per member:
  // 8-byte score (IEEE, little-endian), varint length, bytes.
  void SerializeTo(std::string* out) const override;
  // Sum of a hash of each (member, score): independent of order and encoding.
  uint64_t Digest() const override;
  // Decodes SerializeTo's form, validating every byte: empty sets, NaN scores,
  // duplicate members and out-of-order entries are Corruption.
  static Status Decode(std::string_view bytes, std::unique_ptr<SortedSetValue>* out);

  size_t size() const { return tree_ ? tree_->size() : count_; }
  bool empty() const { return size() == 0; }
  bool is_listpack() const { return tree_ == nullptr; }

  bool Score(std::string_view member, double* score) const;

  // ZADD's flags.
  static constexpr int kNX = 1, kXX = 2, kGT = 4, kLT = 8, kIncr = 16;
  enum class AddResult { kAdded, kUpdated, kUnchanged, kSkipped, kNaN };
  // Adds or updates one member under ZADD's rules; *new_score is its score after.
  // kSkipped: NX/XX/GT/LT refused the change. kNaN: INCR reached NaN, nothing changed.
  AddResult Add(std::string_view member, double score, int flags, const ZsetLimits& limits,
                double* new_score);
  // Returns whether the member was there.
  bool Remove(std::string_view member);

  // The member's rank in ascending order; false when absent.
  bool Rank(std::string_view member, size_t* rank, double* score) const;
  // The number of leading members (ascending) for which before(score, member)
  // holds; `before` must be monotone over the order.
  template <class Pred>
  size_t CountWhile(Pred&& before) const;
  ZEntry At(size_t rank) const;  // REQUIRES: rank < size()

  // Calls f(const ZEntry&) for ascending ranks lo..hi (inclusive), or hi down to lo
  // when `reverse`. REQUIRES: lo <= hi < size(). f must not change the set.
  template <class F>
  void ForRanks(size_t lo, size_t hi, bool reverse, F&& f) const;
  // Calls f(const ZEntry&) for the members with score >= min, ascending, until f
  // returns false (GEO's cell ranges: one seek, then a walk).
  template <class F>
  void ForScoresFrom(double min, F&& f) const;
  template <class F>
  void ForEach(F&& f) const {
    if (!empty()) ForRanks(0, size() - 1, false, f);
  }
  // Removes ranks lo..hi (inclusive). REQUIRES: lo <= hi < size().
  void RemoveRanks(size_t lo, size_t hi);

  // ZSCAN: a listpack set answers everything at once (cursor 0), as Redis; a skiplist
  // set is walked in the order of a fixed hash of each member (HashOrderScan), so a
  // scan survives any change between calls. Replaces *out; returns the next cursor.
  uint64_t Scan(uint64_t cursor, size_t count, std::vector<ZEntry>* out) const;
  // A uniformly chosen member. REQUIRES: !empty().
  ZEntry Random(uint64_t random) const { return At(random % size()); }

  // listpack -> skiplist. No-op for a skiplist.
  void ConvertToSkiplist();

 private:
  // listpack: offset of the member's entry, or bytes_ when absent.
  size_t ListFind(std::string_view member) const;
  void ListInsert(std::string_view member, double score);
  void ListErase(size_t offset);
  // Offsets of every entry, in order.
  void ListOffsets(std::vector<uint32_t>* out) const;
  size_t ListSkip(size_t n) const;  // offset of entry n

  // listpack
  char* buf_ = nullptr;
  uint32_t bytes_ = 0;
  uint32_t count_ = 0;
  // skiplist
  struct Tree {
    ZMemberIndex index;
    ScoreTree order;
    size_t size() const { return order.size(); }
  };
  std::unique_ptr<Tree> tree_;
};

template <class Pred>
size_t SortedSetValue::CountWhile(Pred&& before) const {
  if (tree_) return tree_->order.CountWhile(before);
  size_t n = 0;
  for (size_t off = 0; off < bytes_; off += zset_item::Size(buf_ + off), ++n) {
    if (!before(zset_item::Score(buf_ + off), zset_item::Member(buf_ + off))) break;
  }
  return n;
}

template <class F>
void SortedSetValue::ForScoresFrom(double min, F&& f) const {
  if (tree_) {
    ScoreTree::Cursor c = tree_->order.SeekWhile([min](double s, std::string_view) { return s < min; });
    for (; c.valid(); ScoreTree::Next(&c)) {
      const char* it = ScoreTree::ItemAt(c);
      if (!f(ZEntry{zset_item::Member(it), zset_item::Score(it)})) return;
    }
    return;
  }
  for (size_t off = 0; off < bytes_; off += zset_item::Size(buf_ + off)) {
    const double score = zset_item::Score(buf_ + off);
    if (score < min) continue;
    if (!f(ZEntry{zset_item::Member(buf_ + off), score})) return;
  }
}

template <class F>
void SortedSetValue::ForRanks(size_t lo, size_t hi, bool reverse, F&& f) const {
  if (tree_) {
    ScoreTree::Cursor c = tree_->order.Seek(reverse ? hi : lo);
    for (size_t n = hi - lo + 1; n > 0 && c.valid(); --n) {
      const char* it = ScoreTree::ItemAt(c);
      f(ZEntry{zset_item::Member(it), zset_item::Score(it)});
      if (reverse) {
        ScoreTree::Prev(&c);
      } else {
        ScoreTree::Next(&c);
      }
    }
    return;
  }
  if (!reverse) {
    size_t off = ListSkip(lo);
    for (size_t r = lo; r <= hi; ++r) {
      f(ZEntry{zset_item::Member(buf_ + off), zset_item::Score(buf_ + off)});
      off += zset_item::Size(buf_ + off);
    }
    return;
  }
  std::vector<uint32_t> offsets;
  ListOffsets(&offsets);
  for (size_t r = hi + 1; r-- > lo;) {
    f(ZEntry{zset_item::Member(buf_ + offsets[r]), zset_item::Score(buf_ + offsets[r])});
  }
}

}  // namespace feedkv
