// ListValue. See list_value.h for the layout.
#include "storage/list_value.h"

#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include "storage/block_index.h"
#include "storage/varint.h"

namespace feedkv {

namespace {

using block_index::ChunkBytes;

// Redis's quicklist size classes for a negative list-max-listpack-size, and its
// safety limit for a positive one (a count limit never makes a chunk huge).
constexpr size_t kSafetyBytes = 8192;

size_t MaxChunkBytes(int64_t fill) {
  if (fill >= 0) return kSafetyBytes;
  const int64_t level = std::min<int64_t>(-fill - 1, 4);
  return size_t{4096} << level;
}

constexpr uint64_t kDefaultPackedThreshold = uint64_t{1} << 30;
std::atomic<uint64_t> packed_threshold{kDefaultPackedThreshold};

bool IsLargeElement(size_t bytes) { return bytes >= packed_threshold.load(std::memory_order_relaxed); }

size_t MaxChunkCount(int64_t fill) {
  if (fill < 0) return SIZE_MAX;
  return fill == 0 ? 1 : static_cast<size_t>(fill);
}

}  // namespace

bool SetListPackedThreshold(uint64_t bytes) {
  if (bytes > (uint64_t{1} << 32) - (uint64_t{1} << 20)) return false;
  packed_threshold.store(bytes == 0 ? kDefaultPackedThreshold : bytes, std::memory_order_relaxed);
  return true;
}

ListValue::~ListValue() {
  Chunk** cs = chunks();
  for (uint32_t i = 0; i < nchunks_; ++i) std::free(cs[i]);
  if (cap_ != 0) std::free(many_);
}

size_t ListValue::ChunkCost(const Chunk* c) { return ChunkBytes(sizeof(Chunk) + c->bytes); }

ListValue::Chunk* ListValue::NewChunk() {
  auto* c = static_cast<Chunk*>(std::malloc(sizeof(Chunk)));
  if (c == nullptr) throw std::bad_alloc();
  c->bytes = 0;
  c->count = 0;
  alloc_ += ChunkCost(c);
  return c;
}

void ListValue::Resize(size_t ci, size_t bytes) {
  Chunk*& c = chunks()[ci];
  alloc_ -= ChunkCost(c);
  auto* grown = static_cast<Chunk*>(std::realloc(c, sizeof(Chunk) + bytes));
  if (grown == nullptr) throw std::bad_alloc();
  c = grown;
  c->bytes = static_cast<uint32_t>(bytes);
  alloc_ += ChunkCost(c);
}

void ListValue::InsertChunk(size_t at, Chunk* c) {
  if (cap_ == 0 && nchunks_ == 0) {
    one_ = c;
    nchunks_ = 1;
    return;
  }
  if (cap_ == 0) {
    auto** arr = static_cast<Chunk**>(std::malloc(4 * sizeof(Chunk*)));
    if (arr == nullptr) throw std::bad_alloc();
    arr[0] = one_;
    many_ = arr;
    cap_ = 4;
  } else if (nchunks_ == cap_) {
    auto** arr = static_cast<Chunk**>(std::realloc(many_, size_t{cap_} * 2 * sizeof(Chunk*)));
    if (arr == nullptr) throw std::bad_alloc();
    many_ = arr;
    cap_ *= 2;
  }
  std::memmove(many_ + at + 1, many_ + at, (nchunks_ - at) * sizeof(Chunk*));
  many_[at] = c;
  ++nchunks_;
}

void ListValue::EraseChunk(size_t at) {
  Chunk** cs = chunks();
  alloc_ -= ChunkCost(cs[at]);
  std::free(cs[at]);
  if (cap_ == 0) {
    one_ = nullptr;
    nchunks_ = 0;
    return;
  }
  std::memmove(many_ + at, many_ + at + 1, (nchunks_ - at - 1) * sizeof(Chunk*));
  --nchunks_;
  if (nchunks_ <= 1) {
    // Back to the pointer in place: a list that shrank costs what a short one does.
    Chunk* only = nchunks_ == 1 ? many_[0] : nullptr;
    std::free(many_);
    cap_ = 0;
    one_ = only;
  }
}

size_t ListValue::MemoryUsage() const {
  return ChunkBytes(sizeof(ListValue)) + (cap_ != 0 ? ChunkBytes(size_t{cap_} * sizeof(Chunk*)) : 0) + alloc_;
}

std::unique_ptr<Object> ListValue::Clone() const {
  auto l = std::make_unique<ListValue>();
  Chunk* const* cs = chunks();
  for (uint32_t i = 0; i < nchunks_; ++i) {
    auto* c = static_cast<Chunk*>(std::malloc(sizeof(Chunk) + cs[i]->bytes));
    if (c == nullptr) throw std::bad_alloc();
    std::memcpy(c, cs[i], sizeof(Chunk) + cs[i]->bytes);
    l->alloc_ += ChunkCost(c);
    l->InsertChunk(i, c);
  }
  l->count_ = count_;
  return l;
}

void ListValue::SerializeTo(std::string* out) const {
  PutVarint(out, count_);
  if (count_ == 0) return;
  ForRange(0, count_ - 1, false, [&](std::string_view v) {
    PutVarint(out, v.size());
    out->append(v);
    return true;
  });
}

uint64_t ListValue::Digest() const {
  uint64_t h = 0x6c697374;  // "list"
  if (count_ == 0) return h;
  ForRange(0, count_ - 1, false, [&](std::string_view v) {
    h = XXH64(v.data(), v.size(), h + v.size());
    return true;
  });
  return h;
}

Status ListValue::Decode(std::string_view in, int64_t fill, std::unique_ptr<ListValue>* out) {
  out->reset();
  uint64_t count;
  if (!GetVarint(&in, &count) || count == 0 || count > in.size()) {
    return Status::Corruption("list: bad element count");
  }
  auto l = std::make_unique<ListValue>();
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t len;
    if (!GetVarint(&in, &len) || len > in.size() || len > UINT32_MAX) {
      return Status::Corruption("list: bad element length");
    }
    l->Push(false, in.substr(0, len), fill);
    in.remove_prefix(len);
  }
  if (!in.empty()) return Status::Corruption("list: trailing bytes");
  *out = std::move(l);
  return Status::OK();
}

bool ListValue::Fits(const Chunk* c, size_t add, int64_t fill) {
  if (c->count == 0) return true;
  // A chunk holding one large element (a plain node) takes no other.
  const char* after;
  if (c->count == 1 && IsLargeElement(list_element::Read(c->data(), &after).size())) return false;
  return c->count + 1 <= MaxChunkCount(fill) && c->bytes + add <= MaxChunkBytes(fill);
}

void ListValue::Push(bool front, std::string_view value, int64_t fill) {
  const size_t need = list_element::Size(value.size());
  if (nchunks_ == 0 || IsLargeElement(value.size()) || !Fits(chunks()[front ? 0 : nchunks_ - 1], need, fill)) {
    InsertChunk(front ? 0 : nchunks_, NewChunk());
  }
  const size_t ci = front ? 0 : nchunks_ - 1;
  InsertBytes(Pos{ci, front ? 0 : chunks()[ci]->bytes}, value);
}

void ListValue::InsertBytes(Pos pos, std::string_view value) {
  const size_t need = list_element::Size(value.size());
  const size_t old = chunks()[pos.chunk]->bytes;
  Resize(pos.chunk, old + need);
  Chunk* c = chunks()[pos.chunk];
  std::memmove(c->data() + pos.off + need, c->data() + pos.off, old - pos.off);
  list_element::Write(c->data() + pos.off, value);
  ++c->count;
  ++count_;
}

std::string ListValue::Pop(bool front) {
  Pos pos{front ? 0 : nchunks_ - 1u, 0};
  if (!front) {
    const Chunk* c = chunks()[pos.chunk];
    const char* start;
    list_element::ReadBack(c->data() + c->bytes, &start);
    pos.off = static_cast<size_t>(start - c->data());
  }
  std::string v(At(pos));
  EraseAt(pos);
  return v;
}

std::string_view ListValue::At(Pos pos) const {
  const char* next;
  return list_element::Read(chunks()[pos.chunk]->data() + pos.off, &next);
}

std::string_view ListValue::At(size_t index) const { return At(Locate(index)); }

void ListValue::EraseAt(Pos pos) {
  Chunk* c = chunks()[pos.chunk];
  const char* next;
  list_element::Read(c->data() + pos.off, &next);
  const size_t n = static_cast<size_t>(next - (c->data() + pos.off));
  --count_;
  if (c->count == 1) return EraseChunk(pos.chunk);
  std::memmove(c->data() + pos.off, next, c->bytes - pos.off - n);
  --c->count;
  Resize(pos.chunk, c->bytes - n);
}

ListValue::Pos ListValue::Locate(size_t index) const {
  Chunk* const* cs = chunks();
  size_t ci;
  size_t i;
  if (index < count_ / 2) {
    ci = 0;
    i = index;
    while (i >= cs[ci]->count) i -= cs[ci++]->count;
  } else {
    size_t from_back = count_ - 1 - index;
    ci = nchunks_ - 1;
    while (from_back >= cs[ci]->count) from_back -= cs[ci--]->count;
    i = cs[ci]->count - 1 - from_back;
  }
  const Chunk* c = cs[ci];
  const char* q;
  if (i < c->count / 2) {
    q = c->data();
    for (size_t k = 0; k < i; ++k) list_element::Read(q, &q);
  } else {
    q = c->data() + c->bytes;
    for (size_t k = c->count; k > i; --k) list_element::ReadBack(q, &q);
  }
  return Pos{ci, static_cast<size_t>(q - c->data())};
}

void ListValue::Set(size_t index, std::string_view value, int64_t fill) {
  const Pos pos = Locate(index);
  Chunk* c = chunks()[pos.chunk];
  const char* next;
  list_element::Read(c->data() + pos.off, &next);
  const size_t old_n = static_cast<size_t>(next - (c->data() + pos.off));
  const size_t new_n = list_element::Size(value.size());
  const size_t tail = c->bytes - pos.off - old_n;
  const size_t old_bytes = c->bytes;
  if (new_n > old_n) Resize(pos.chunk, old_bytes + new_n - old_n);
  c = chunks()[pos.chunk];
  std::memmove(c->data() + pos.off + new_n, c->data() + pos.off + old_n, tail);
  list_element::Write(c->data() + pos.off, value);
  if (new_n < old_n) Resize(pos.chunk, old_bytes + new_n - old_n);
  SplitIfOver(pos.chunk, fill);
}

bool ListValue::InsertAtPivot(std::string_view pivot, std::string_view value, bool after, int64_t fill) {
  Chunk* const* cs = chunks();
  for (size_t ci = 0; ci < nchunks_; ++ci) {
    const char* base = cs[ci]->data();
    for (const char* q = base; q < base + cs[ci]->bytes;) {
      const char* next;
      if (list_element::Read(q, &next) == pivot) {
        InsertBytes(Pos{ci, static_cast<size_t>((after ? next : q) - base)}, value);
        SplitIfOver(ci, fill);
        return true;
      }
      q = next;
    }
  }
  return false;
}

void ListValue::SplitIfOver(size_t ci, int64_t fill) {
  Chunk* c = chunks()[ci];
  if (c->count < 2 || (c->count <= MaxChunkCount(fill) && c->bytes <= MaxChunkBytes(fill))) return;
  // The tail half moves to a new chunk after this one.
  const uint32_t keep = c->count / 2;
  const char* q = c->data();
  for (uint32_t k = 0; k < keep; ++k) list_element::Read(q, &q);
  const auto off = static_cast<size_t>(q - c->data());
  const size_t moved = c->bytes - off;
  Chunk* tail = NewChunk();
  alloc_ -= ChunkCost(tail);
  auto* grown = static_cast<Chunk*>(std::realloc(tail, sizeof(Chunk) + moved));
  if (grown == nullptr) throw std::bad_alloc();
  tail = grown;
  std::memcpy(tail->data(), q, moved);
  tail->bytes = static_cast<uint32_t>(moved);
  tail->count = c->count - keep;
  alloc_ += ChunkCost(tail);
  c->count = keep;
  Resize(ci, off);
  InsertChunk(ci + 1, tail);
}

size_t ListValue::RemoveEqual(std::string_view value, int64_t count) {
  size_t matches = 0;
  if (count_ > 0) {
    ForRange(0, count_ - 1, false, [&](std::string_view v) {
      matches += v == value;
      return true;
    });
  }
  const uint64_t limit = count < 0 ? 0 - static_cast<uint64_t>(count) : static_cast<uint64_t>(count);
  const size_t remove = count == 0 ? matches : static_cast<size_t>(std::min<uint64_t>(limit, matches));
  if (remove == 0) return 0;
  size_t skip = count < 0 ? matches - remove : 0;  // matches kept before the first removed
  size_t left = remove;
  for (size_t ci = 0; ci < nchunks_ && left > 0;) {
    Chunk* c = chunks()[ci];
    // Compact the chunk in place: kept elements slide down over removed ones.
    char* w = c->data();
    const char* q = c->data();
    const char* end = c->data() + c->bytes;
    uint32_t kept = 0;
    while (q < end) {
      const char* next;
      const bool match = list_element::Read(q, &next) == value;
      if (match && skip == 0 && left > 0) {
        --left;
      } else {
        if (match && skip > 0) --skip;
        const auto n = static_cast<size_t>(next - q);
        if (w != q) std::memmove(w, q, n);
        w += n;
        ++kept;
      }
      q = next;
    }
    count_ -= c->count - kept;
    if (kept == 0) {
      EraseChunk(ci);
      continue;
    }
    c->count = kept;
    Resize(ci, static_cast<size_t>(w - c->data()));
    ++ci;
  }
  return remove;
}

void ListValue::RemoveEnds(bool front, size_t n) {
  while (n > 0) {
    const size_t ci = front ? 0 : nchunks_ - 1;
    Chunk* c = chunks()[ci];
    if (c->count <= n) {
      n -= c->count;
      count_ -= c->count;
      EraseChunk(ci);
      continue;
    }
    if (front) {
      const char* q = c->data();
      for (size_t k = 0; k < n; ++k) list_element::Read(q, &q);
      const auto off = static_cast<size_t>(q - c->data());
      std::memmove(c->data(), q, c->bytes - off);
      c->count -= static_cast<uint32_t>(n);
      Resize(ci, c->bytes - off);
    } else {
      const char* q = c->data() + c->bytes;
      for (size_t k = 0; k < n; ++k) list_element::ReadBack(q, &q);
      c->count -= static_cast<uint32_t>(n);
      Resize(ci, static_cast<size_t>(q - c->data()));
    }
    count_ -= n;
    n = 0;
  }
}

}  // namespace feedkv
