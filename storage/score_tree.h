// ScoreTree: the order index of a big sorted set. A B+tree of pointers to member
// blocks (storage/zset_item.h), ordered by (score, member bytes), whose inner nodes
// keep the size of every subtree, so that finding a key's rank, the item at a rank
// and the first item of a score or lex range all take O(log n).
//
// Leaves hold up to kLeafCap - 1 item pointers and are chained both ways for range
// walks. Inner nodes hold their children, the children's sizes and, for every child
// but the first, a separator key: a copy of a (score, member) that sorts after every
// key of the child before it and not after any key of its own child. Separators
// are copies, not pointers, so removing an item never leaves one dangling; after
// removals a separator may be smaller than its child's first key, which the search
// tolerates. A node that falls below a quarter full merges with a neighbour when the
// two fit in one node.
//
// Per item the tree costs 8 bytes / fill (~11 at the 70% a random insert order
// leaves) — against ~40 for a Redis skiplist node — and the item blocks are owned
// by the caller (SortedSetValue's member index), not by the tree.
// Not thread-safe: owned by the command thread like every keyspace value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "storage/zset_item.h"

namespace feedkv {

class ScoreTree {
 public:
  ScoreTree();
  ~ScoreTree();
  ScoreTree(const ScoreTree&) = delete;
  ScoreTree& operator=(const ScoreTree&) = delete;
  ScoreTree(ScoreTree&& other) noexcept;
  ScoreTree& operator=(ScoreTree&& other) noexcept;

  size_t size() const { return size_; }

  // REQUIRES: no item with the same (score, member) is in the tree.
  void Insert(const char* item);
  // Removes the item with this key; returns whether there was one.
  bool Erase(double score, std::string_view member);
  // The number of items ordered before (score, member): its rank when present.
  size_t Rank(double score, std::string_view member) const;
  // The number of leading items for which before(score, member) holds. `before`
  // must be monotone over the order: true for a prefix, false after it.
  template <class Pred>
  size_t CountWhile(Pred&& before) const;

  // A position in the order, for walks in either direction.
  struct Cursor {
    const void* leaf = nullptr;
    uint32_t pos = 0;
    bool valid() const { return leaf != nullptr; }
  };
  // The item at `rank`; invalid cursor when rank >= size().
  Cursor Seek(size_t rank) const;
  // The first item for which before(score, member) is false (monotone as for
  // CountWhile): one descent, where CountWhile + Seek take two. Invalid when none.
  template <class Pred>
  Cursor SeekWhile(Pred&& before) const;
  static const char* ItemAt(const Cursor& c);
  static void Next(Cursor* c);
  static void Prev(Cursor* c);

  // Drops every node (not the items).
  void Clear();
  // Bytes held by the nodes (leaves, inner nodes and separator copies).
  size_t MemoryUsage() const;

 private:
  struct Node;
  struct Leaf;
  struct Inner;
  struct SepKey {
    double score = 0;
    std::string member;
  };
  static int Compare(double s1, std::string_view m1, double s2, std::string_view m2);
  // Inner-node routing: the last child whose separator is <= (score, member).
  static uint32_t ChildFor(const Inner* in, double score, std::string_view member);
  // Inserts below n; returns a new right sibling (and its separator) when n split.
  Node* InsertBelow(Node* n, const char* item, double score, std::string_view member,
                    SepKey* sep);
  bool EraseBelow(Node* n, double score, std::string_view member);
  // Merges child idx of `in` with a neighbour when it is under a quarter full and
  // the two fit in one node.
  void Rebalance(Inner* in, uint32_t idx);
  static size_t NodeSize(const Node* n);
  void FreeNode(Node* n);
  size_t CountWhileSlow(const void* pred_ctx, bool (*pred)(const void*, double, std::string_view)) const;
  Cursor SeekWhileSlow(const void* pred_ctx, bool (*pred)(const void*, double, std::string_view)) const;
  // Descends to the leaf where `before` stops holding: *rank counts the items in the
  // leaves left of it, *pos the leaf's own items that `before` holds for.
  const Leaf* DescendWhile(const void* ctx, bool (*before)(const void*, double, std::string_view), size_t* rank,
                           uint32_t* pos) const;

  Node* root_;
  size_t size_ = 0;
  size_t leaves_ = 0;
  size_t inners_ = 0;
  size_t sep_bytes_ = 0;
};

template <class Pred>
size_t ScoreTree::CountWhile(Pred&& before) const {
  auto thunk = [](const void* ctx, double s, std::string_view m) {
    return (*static_cast<const std::remove_reference_t<Pred>*>(ctx))(s, m);
  };
  return CountWhileSlow(&before, thunk);
}

template <class Pred>
ScoreTree::Cursor ScoreTree::SeekWhile(Pred&& before) const {
  auto thunk = [](const void* ctx, double s, std::string_view m) {
    return (*static_cast<const std::remove_reference_t<Pred>*>(ctx))(s, m);
  };
  return SeekWhileSlow(&before, thunk);
}

}  // namespace feedkv
