// ScoreTree. See score_tree.h for the layout and its invariants.
#include "storage/score_tree.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <utility>

namespace feedkv {

namespace {

// 8 + 16 + 60 * 8 = 504 bytes: a leaf is one 512-byte malloc chunk.
constexpr uint32_t kLeafCap = 60;
constexpr uint32_t kInnerCap = 32;

size_t ChunkBytes(size_t n) { return std::max<size_t>(32, (n + 8 + 15) & ~size_t{15}); }

}  // namespace

struct ScoreTree::Node {
  uint32_t count = 0;
  bool leaf = true;
};

struct ScoreTree::Leaf : Node {
  Leaf* prev = nullptr;
  Leaf* next = nullptr;
  const char* items[kLeafCap];
};

struct ScoreTree::Inner : Node {
  Node* child[kInnerCap];
  size_t sizes[kInnerCap];
  SepKey sep[kInnerCap];  // sep[0] unused
};

static_assert(sizeof(void*) == 8);

ScoreTree::ScoreTree() : root_(new Leaf) { leaves_ = 1; }

ScoreTree::~ScoreTree() {
  if (root_ != nullptr) FreeNode(root_);
}

ScoreTree::ScoreTree(ScoreTree&& o) noexcept
    : root_(std::exchange(o.root_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      leaves_(std::exchange(o.leaves_, 0)),
      inners_(std::exchange(o.inners_, 0)),
      sep_bytes_(std::exchange(o.sep_bytes_, 0)) {}

ScoreTree& ScoreTree::operator=(ScoreTree&& o) noexcept {
  if (this != &o) {
    if (root_ != nullptr) FreeNode(root_);
    root_ = std::exchange(o.root_, nullptr);
    size_ = std::exchange(o.size_, 0);
    leaves_ = std::exchange(o.leaves_, 0);
    inners_ = std::exchange(o.inners_, 0);
    sep_bytes_ = std::exchange(o.sep_bytes_, 0);
  }
  return *this;
}

void ScoreTree::FreeNode(Node* n) {
  if (n->leaf) {
    delete static_cast<Leaf*>(n);
    return;
  }
  auto* in = static_cast<Inner*>(n);
  for (uint32_t i = 0; i < in->count; ++i) FreeNode(in->child[i]);
  delete in;
}

void ScoreTree::Clear() {
  if (root_ != nullptr) FreeNode(root_);
  root_ = new Leaf;
  size_ = 0;
  leaves_ = 1;
  inners_ = 0;
  sep_bytes_ = 0;
}

size_t ScoreTree::MemoryUsage() const {
  return leaves_ * ChunkBytes(sizeof(Leaf)) + inners_ * ChunkBytes(sizeof(Inner)) + sep_bytes_;
}

int ScoreTree::Compare(double s1, std::string_view m1, double s2, std::string_view m2) {
  if (s1 < s2) return -1;
  if (s1 > s2) return 1;
  const int c = m1.compare(m2);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

uint32_t ScoreTree::ChildFor(const Inner* in, double score, std::string_view member) {
  // Binary search for the last i >= 1 with sep[i] <= key; 0 when none.
  uint32_t lo = 1, hi = in->count;  // answer in [lo - 1, hi - 1]
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    if (Compare(in->sep[mid].score, in->sep[mid].member, score, member) <= 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo - 1;
}

size_t ScoreTree::NodeSize(const Node* n) {
  if (n->leaf) return n->count;
  const auto* in = static_cast<const Inner*>(n);
  size_t s = 0;
  for (uint32_t i = 0; i < in->count; ++i) s += in->sizes[i];
  return s;
}

namespace {
// Separator bytes beyond std::string's inline buffer.
size_t SepHeap(const std::string& s) { return s.size() > 15 ? ChunkBytes(s.size() + 1) : 0; }
}  // namespace

void ScoreTree::Insert(const char* item) {
  const double score = zset_item::Score(item);
  const std::string_view member = zset_item::Member(item);
  SepKey sep;
  Node* right = InsertBelow(root_, item, score, member, &sep);
  ++size_;
  if (right == nullptr) return;
  auto* top = new Inner;
  ++inners_;
  top->leaf = false;
  top->count = 2;
  top->child[0] = root_;
  top->child[1] = right;
  top->sizes[0] = NodeSize(root_);
  top->sizes[1] = NodeSize(right);
  sep_bytes_ += SepHeap(sep.member);
  top->sep[1] = std::move(sep);
  root_ = top;
}

ScoreTree::Node* ScoreTree::InsertBelow(Node* n, const char* item, double score,
                                        std::string_view member, SepKey* sep) {
  if (n->leaf) {
    auto* lf = static_cast<Leaf*>(n);
    const char** end = lf->items + lf->count;
    const char** pos = std::lower_bound(lf->items, end, item, [&](const char* a, const char*) {
      return Compare(zset_item::Score(a), zset_item::Member(a), score, member) < 0;
    });
    std::memmove(pos + 1, pos, static_cast<size_t>(end - pos) * sizeof(char*));
    *pos = item;
    if (++lf->count < kLeafCap) return nullptr;
    // Full: move the upper half to a new right sibling.
    auto* r = new Leaf;
    ++leaves_;
    const uint32_t keep = lf->count / 2;
    r->count = lf->count - keep;
    std::memcpy(r->items, lf->items + keep, r->count * sizeof(char*));
    lf->count = keep;
    r->next = lf->next;
    r->prev = lf;
    if (lf->next != nullptr) lf->next->prev = r;
    lf->next = r;
    sep->score = zset_item::Score(r->items[0]);
    sep->member.assign(zset_item::Member(r->items[0]));
    return r;
  }
  auto* in = static_cast<Inner*>(n);
  const uint32_t idx = ChildFor(in, score, member);
  ++in->sizes[idx];
  SepKey child_sep;
  Node* split = InsertBelow(in->child[idx], item, score, member, &child_sep);
  if (split == nullptr) return nullptr;
  // Insert the new child after idx.
  for (uint32_t i = in->count; i > idx + 1; --i) {
    in->child[i] = in->child[i - 1];
    in->sizes[i] = in->sizes[i - 1];
    in->sep[i] = std::move(in->sep[i - 1]);
  }
  in->child[idx + 1] = split;
  in->sizes[idx + 1] = NodeSize(split);
  in->sizes[idx] -= in->sizes[idx + 1];
  sep_bytes_ += SepHeap(child_sep.member);
  in->sep[idx + 1] = std::move(child_sep);
  if (++in->count < kInnerCap) return nullptr;
  auto* r = new Inner;
  ++inners_;
  r->leaf = false;
  const uint32_t keep = in->count / 2;
  r->count = in->count - keep;
  for (uint32_t i = 0; i < r->count; ++i) {
    r->child[i] = in->child[keep + i];
    r->sizes[i] = in->sizes[keep + i];
    r->sep[i] = std::move(in->sep[keep + i]);
  }
  in->count = keep;
  // The right node's first separator moves up.
  *sep = std::move(r->sep[0]);
  r->sep[0] = SepKey();
  return r;
}

bool ScoreTree::Erase(double score, std::string_view member) {
  if (!EraseBelow(root_, score, member)) return false;
  --size_;
  // A root with one child hands over to it.
  while (!root_->leaf && root_->count == 1) {
    auto* in = static_cast<Inner*>(root_);
    root_ = in->child[0];
    delete in;
    --inners_;
  }
  return true;
}

bool ScoreTree::EraseBelow(Node* n, double score, std::string_view member) {
  if (n->leaf) {
    auto* lf = static_cast<Leaf*>(n);
    const char** end = lf->items + lf->count;
    const char** pos = std::lower_bound(lf->items, end, nullptr, [&](const char* a, const char*) {
      return Compare(zset_item::Score(a), zset_item::Member(a), score, member) < 0;
    });
    if (pos == end || Compare(zset_item::Score(*pos), zset_item::Member(*pos), score, member) != 0) {
      return false;
    }
    std::memmove(pos, pos + 1, static_cast<size_t>(end - pos - 1) * sizeof(char*));
    --lf->count;
    return true;
  }
  auto* in = static_cast<Inner*>(n);
  const uint32_t idx = ChildFor(in, score, member);
  if (!EraseBelow(in->child[idx], score, member)) return false;
  --in->sizes[idx];
  Rebalance(in, idx);
  return true;
}

void ScoreTree::Rebalance(Inner* in, uint32_t idx) {
  Node* c = in->child[idx];
  const uint32_t cap = c->leaf ? kLeafCap : kInnerCap;
  if (c->count >= cap / 4 || in->count < 2) return;
  // Merge the pair (l, l + 1) that contains idx, preferring the smaller neighbour.
  uint32_t l;
  if (idx == 0) {
    l = 0;
  } else if (idx + 1 == in->count) {
    l = idx - 1;
  } else {
    l = in->child[idx - 1]->count <= in->child[idx + 1]->count ? idx - 1 : idx;
  }
  Node* left = in->child[l];
  Node* right = in->child[l + 1];
  if (left->count + right->count >= cap) return;
  if (left->leaf) {
    auto* a = static_cast<Leaf*>(left);
    auto* b = static_cast<Leaf*>(right);
    std::memcpy(a->items + a->count, b->items, b->count * sizeof(char*));
    a->count += b->count;
    a->next = b->next;
    if (b->next != nullptr) b->next->prev = a;
    delete b;
    --leaves_;
  } else {
    auto* a = static_cast<Inner*>(left);
    auto* b = static_cast<Inner*>(right);
    // The parent's separator for b sorts after all of a and not after b's first
    // child: it becomes the separator of b's first child inside a.
    for (uint32_t i = 0; i < b->count; ++i) {
      a->child[a->count + i] = b->child[i];
      a->sizes[a->count + i] = b->sizes[i];
      if (i == 0) {
        a->sep[a->count] = std::move(in->sep[l + 1]);
      } else {
        a->sep[a->count + i] = std::move(b->sep[i]);
      }
    }
    a->count += b->count;
    b->count = 0;  // children now belong to a
    delete b;
    --inners_;
  }
  in->sizes[l] += in->sizes[l + 1];
  sep_bytes_ -= std::min(sep_bytes_, left->leaf ? SepHeap(in->sep[l + 1].member) : 0);
  for (uint32_t i = l + 1; i + 1 < in->count; ++i) {
    in->child[i] = in->child[i + 1];
    in->sizes[i] = in->sizes[i + 1];
    in->sep[i] = std::move(in->sep[i + 1]);
  }
  --in->count;
  in->sep[in->count] = SepKey();
}

size_t ScoreTree::Rank(double score, std::string_view member) const {
  return CountWhile([&](double s, std::string_view m) { return Compare(s, m, score, member) < 0; });
}

const ScoreTree::Leaf* ScoreTree::DescendWhile(const void* ctx, bool (*before)(const void*, double, std::string_view),
                                               size_t* rank, uint32_t* pos) const {
  *rank = 0;
  const Node* n = root_;
  while (!n->leaf) {
    const auto* in = static_cast<const Inner*>(n);
    // The last child whose separator is still `before`: every key before that
    // separator lies in earlier children, so the boundary is in this one or at
    // its start.
    uint32_t lo = 1, hi = in->count;
    while (lo < hi) {
      const uint32_t mid = (lo + hi) / 2;
      if (before(ctx, in->sep[mid].score, in->sep[mid].member)) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    const uint32_t idx = lo - 1;
    for (uint32_t i = 0; i < idx; ++i) *rank += in->sizes[i];
    n = in->child[idx];
  }
  const auto* lf = static_cast<const Leaf*>(n);
  uint32_t lo = 0, hi = lf->count;
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    if (before(ctx, zset_item::Score(lf->items[mid]), zset_item::Member(lf->items[mid]))) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  *pos = lo;
  return lf;
}

size_t ScoreTree::CountWhileSlow(const void* ctx, bool (*before)(const void*, double, std::string_view)) const {
  size_t rank;
  uint32_t pos;
  DescendWhile(ctx, before, &rank, &pos);
  return rank + pos;
}

ScoreTree::Cursor ScoreTree::SeekWhileSlow(const void* ctx,
                                           bool (*before)(const void*, double, std::string_view)) const {
  size_t rank;
  uint32_t pos;
  const Leaf* lf = DescendWhile(ctx, before, &rank, &pos);
  // Past this leaf's last item: the boundary is the next item, at the start of the
  // next non-empty leaf (a later separator was not `before`).
  while (lf != nullptr && pos >= lf->count) {
    lf = lf->next;
    pos = 0;
  }
  return lf == nullptr ? Cursor{} : Cursor{lf, pos};
}

ScoreTree::Cursor ScoreTree::Seek(size_t rank) const {
  if (rank >= size_) return Cursor{};
  const Node* n = root_;
  while (!n->leaf) {
    const auto* in = static_cast<const Inner*>(n);
    uint32_t i = 0;
    while (rank >= in->sizes[i]) rank -= in->sizes[i++];
    n = in->child[i];
  }
  return Cursor{n, static_cast<uint32_t>(rank)};
}

const char* ScoreTree::ItemAt(const Cursor& c) {
  return static_cast<const Leaf*>(c.leaf)->items[c.pos];
}

void ScoreTree::Next(Cursor* c) {
  const auto* lf = static_cast<const Leaf*>(c->leaf);
  if (++c->pos < lf->count) return;
  // Skips empty leaves: one can stay under an inner node left with a single child.
  do {
    lf = lf->next;
  } while (lf != nullptr && lf->count == 0);
  c->leaf = lf;
  c->pos = 0;
}

void ScoreTree::Prev(Cursor* c) {
  const auto* lf = static_cast<const Leaf*>(c->leaf);
  if (c->pos > 0) {
    --c->pos;
    return;
  }
  do {
    lf = lf->prev;
  } while (lf != nullptr && lf->count == 0);
  c->leaf = lf;
  c->pos = lf != nullptr ? lf->count - 1 : 0;
}

}  // namespace feedkv
