// SortedChunks<K, V>: an ordered map kept as a sorted vector of chunks, each a
// sorted vector of up to kMaxRows rows. A stream's pending lists use it: one
// row costs its key and value (40 bytes for a pending entry, 16 for a consumer's
// ID) instead of a red-black tree node's 32 bytes of links and its malloc
// header on top, and reading in order walks contiguous memory.
//
// A lookup is two binary searches. An insert moves at most a chunk's rows; a
// full chunk splits in half, except that an insert past the last key starts a
// new chunk, so keys that arrive in order (stream IDs delivered in order) fill
// every chunk. A chunk's vector grows by doubling up to kMaxRows rows, so a
// small map stays small. Erasing an emptied chunk moves the chunk vector, which
// holds one handle (three pointers) per chunk.
//
// Not thread-safe. References to values stay valid until the next insert or
// erase.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace feedkv {

template <class K, class V, size_t kMaxRows = 128>
class SortedChunks {
 public:
  struct Row {
    K key;
    [[no_unique_address]] V value;
  };

  // A forward iterator over the rows in key order; invalidated by any insert
  // or erase.
  class const_iterator {
   public:
    const_iterator() = default;
    const Row& operator*() const { return (*chunks_)[ci_][ri_]; }
    const Row* operator->() const { return &(*chunks_)[ci_][ri_]; }
    const_iterator& operator++() {
      if (++ri_ == (*chunks_)[ci_].size()) {
        ++ci_;
        ri_ = 0;
      }
      return *this;
    }
    bool operator==(const const_iterator& o) const { return ci_ == o.ci_ && ri_ == o.ri_; }

   private:
    friend class SortedChunks;
    const_iterator(const std::vector<std::vector<Row>>* chunks, size_t ci, size_t ri)
        : chunks_(chunks), ci_(ci), ri_(ri) {
      if (ci_ < chunks_->size() && ri_ == (*chunks_)[ci_].size()) {
        ++ci_;
        ri_ = 0;
      }
    }
    const std::vector<std::vector<Row>>* chunks_ = nullptr;
    size_t ci_ = 0;
    size_t ri_ = 0;
  };
  const_iterator begin() const { return const_iterator(&chunks_, 0, 0); }
  const_iterator end() const { return const_iterator(&chunks_, chunks_.size(), 0); }
  // The first row with key >= k.
  const_iterator lower_bound(const K& k) const {
    if (chunks_.empty()) return end();
    const size_t ci = ChunkFor(k);
    const auto& chunk = chunks_[ci];
    const auto pos = std::lower_bound(chunk.begin(), chunk.end(), k, KeyLess);
    return const_iterator(&chunks_, ci, static_cast<size_t>(pos - chunk.begin()));
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const Row& front() const { return chunks_.front().front(); }
  const Row& back() const { return chunks_.back().back(); }

  V* Find(const K& k) {
    auto [c, r] = Locate(k);
    return r != nullptr && r->key == k ? &r->value : nullptr;
  }
  const V* Find(const K& k) const { return const_cast<SortedChunks*>(this)->Find(k); }

  // The value at k, inserted as `v` when missing; second: whether it was inserted.
  std::pair<V*, bool> Insert(const K& k, V v) {
    if (chunks_.empty()) {
      chunks_.emplace_back().push_back(Row{k, std::move(v)});
      ++size_;
      return {&chunks_.back().back().value, true};
    }
    size_t ci = ChunkFor(k);
    std::vector<Row>* chunk = &chunks_[ci];
    auto pos = std::lower_bound(chunk->begin(), chunk->end(), k, KeyLess);
    if (pos != chunk->end() && pos->key == k) return {&pos->value, false};
    if (chunk->size() == kMaxRows) {
      if (ci + 1 == chunks_.size() && pos == chunk->end()) {
        // Past the last key: a new chunk, the full one stays full.
        chunks_.emplace_back().reserve(kMaxRows / 8);
        chunk = &chunks_.back();
        pos = chunk->end();
      } else {
        std::vector<Row> upper;
        upper.reserve(kMaxRows / 2 + 1);
        const auto mid = chunk->begin() + kMaxRows / 2;
        upper.assign(std::make_move_iterator(mid), std::make_move_iterator(chunk->end()));
        chunk->erase(mid, chunk->end());
        chunks_.insert(chunks_.begin() + static_cast<std::ptrdiff_t>(ci) + 1, std::move(upper));
        if (!KeyLess(chunks_[ci + 1].front(), k)) {
          chunk = &chunks_[ci];
        } else {
          chunk = &chunks_[ci + 1];
        }
        pos = std::lower_bound(chunk->begin(), chunk->end(), k, KeyLess);
      }
    }
    pos = chunk->insert(pos, Row{k, std::move(v)});
    ++size_;
    return {&pos->value, true};
  }

  bool Erase(const K& k) {
    if (chunks_.empty()) return false;
    const size_t ci = ChunkFor(k);
    std::vector<Row>& chunk = chunks_[ci];
    auto pos = std::lower_bound(chunk.begin(), chunk.end(), k, KeyLess);
    if (pos == chunk.end() || pos->key != k) return false;
    chunk.erase(pos);
    --size_;
    if (chunk.empty()) chunks_.erase(chunks_.begin() + static_cast<std::ptrdiff_t>(ci));
    return true;
  }

  // An estimate (chunks are full but the last when keys come in order, half
  // full at worst): the rows plus each chunk's handle and malloc header.
  size_t MemoryUsage() const {
    return size_ * sizeof(Row) + chunks_.capacity() * sizeof(std::vector<Row>) + chunks_.size() * 16;
  }

 private:
  static bool KeyLess(const Row& r, const K& k) { return r.key < k; }
  // The chunk whose range holds k: the last chunk starting at or before k, or
  // the first chunk.
  size_t ChunkFor(const K& k) const {
    auto it = std::upper_bound(chunks_.begin(), chunks_.end(), k,
                               [](const K& key, const std::vector<Row>& c) { return key < c.front().key; });
    return it == chunks_.begin() ? 0 : static_cast<size_t>(it - chunks_.begin()) - 1;
  }
  std::pair<std::vector<Row>*, Row*> Locate(const K& k) {
    if (chunks_.empty()) return {nullptr, nullptr};
    std::vector<Row>& chunk = chunks_[ChunkFor(k)];
    auto pos = std::lower_bound(chunk.begin(), chunk.end(), k, KeyLess);
    return {&chunk, pos == chunk.end() ? nullptr : &*pos};
  }

  std::vector<std::vector<Row>> chunks_;
  size_t size_ = 0;
};

}  // namespace feedkv
