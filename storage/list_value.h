// ListValue: the value of a Redis list key, laid out as Redis's quicklist: a
// sequence of chunks, each one malloc block of elements back to back. An element
// is [len][bytes][len] — a length is one byte below 0xff, or 0xff and 4 bytes,
// written at both ends so a chunk can be walked from either side (Redis's
// listpack keeps a "backlen" for the same reason). Pushes and pops at both ends
// touch one end chunk; an index walks chunk counts from the nearer end, then one
// chunk. A chunk holds at most `list-max-listpack-size` (negative: 4 KB << (-n-1)
// bytes; positive: that many elements, at most 8 KB); an element bigger than the
// limit sits alone in its chunk. A list with one chunk keeps the chunk pointer in
// place of the chunk array, so a short list costs its object and one block.
//
// OBJECT ENCODING answers "quicklist", as Redis 7.0 for every list.
// Views returned by At/ForRange are valid until the list changes.
// Not thread-safe: owned by the command thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "storage/list_element.h"
#include "storage/object.h"
#include "storage/status.h"

namespace feedkv {

// list-max-listpack-size's default: chunks of up to 8 KB.
inline constexpr int64_t kDefaultListFill = -2;

// Redis's quicklist packed threshold (DEBUG QUICKLIST-PACKED-THRESHOLD): a
// pushed element of at least this many bytes starts a chunk of its own and
// keeps it alone (Redis's "plain node"). Process-wide, as Redis's; 1 GB by
// default. Returns false, changing nothing, above 4 GB - 1 MB; 0 restores 1 GB.
bool SetListPackedThreshold(uint64_t bytes);

class ListValue final : public Object {
 public:
  ListValue() = default;
  ~ListValue() override;
  ListValue(const ListValue&) = delete;
  ListValue& operator=(const ListValue&) = delete;

  // Object.
  ValueType type() const override { return ValueType::kList; }
  std::string_view encoding() const override { return "quicklist"; }
  size_t MemoryUsage() const override;
  std::unique_ptr<Object> Clone() const override;
  // varint count, then per element (head first): varint length, bytes.
  void SerializeTo(std::string* out) const override;
  // Order-dependent hash of the elements, for DEBUG DIGEST.
  uint64_t Digest() const override;
  // Decodes SerializeTo's form, validating every byte (an empty list is Corruption).
  // `fill` is list-max-listpack-size.
  static Status Decode(std::string_view bytes, int64_t fill, std::unique_ptr<ListValue>* out);

  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }

  // `fill` is list-max-listpack-size in every mutator that may add bytes.
  void Push(bool front, std::string_view value, int64_t fill);
  // Removes and returns the head (front) or tail element. REQUIRES: !empty().
  std::string Pop(bool front);
  // REQUIRES: index < size().
  std::string_view At(size_t index) const;
  // Replaces the element at index. REQUIRES: index < size().
  void Set(size_t index, std::string_view value, int64_t fill);
  // Inserts value before (after) the first element equal to pivot: false if none.
  bool InsertAtPivot(std::string_view pivot, std::string_view value, bool after, int64_t fill);
  // LREM: removes the first `count` elements equal to value (count < 0: the last
  // -count; 0: all). Returns how many were removed.
  size_t RemoveEqual(std::string_view value, int64_t count);
  // Removes n elements from the head (front) or tail; n <= size().
  void RemoveEnds(bool front, size_t n);

  // f(std::string_view) for elements [start, stop] (head to tail), or, when reverse,
  // for elements walked from the tail: the tail-side index start down to stop
  // (indexes counted from the tail). Returning false from f stops the walk.
  // REQUIRES: start <= stop < size().
  template <class F>
  void ForRange(size_t start, size_t stop, bool reverse, F&& f) const;

 private:
  // A chunk's header; its elements follow.
  struct Chunk {
    uint32_t bytes;  // of elements
    uint32_t count;
    char* data() { return reinterpret_cast<char*>(this + 1); }
    const char* data() const { return reinterpret_cast<const char*>(this + 1); }
  };
  // Where an element starts: a chunk and a byte offset in it.
  struct Pos {
    size_t chunk;
    size_t off;
  };

  Chunk* const* chunks() const { return cap_ == 0 ? &one_ : many_; }
  Chunk** chunks() { return cap_ == 0 ? &one_ : many_; }
  static size_t ChunkCost(const Chunk* c);
  // Whether c may take one more element of `add` bytes under the fill limit.
  static bool Fits(const Chunk* c, size_t add, int64_t fill);
  Chunk* NewChunk();
  // Reallocates chunk ci to hold `bytes` bytes of elements (sets its bytes).
  void Resize(size_t ci, size_t bytes);
  Pos Locate(size_t index) const;
  std::string_view At(Pos pos) const;
  void InsertChunk(size_t at, Chunk* c);
  void EraseChunk(size_t at);  // frees it
  // Writes value at pos (may leave the chunk past the fill limit).
  void InsertBytes(Pos pos, std::string_view value);
  // Removes the element at pos; frees the chunk if it empties.
  void EraseAt(Pos pos);
  // Splits chunk ci in two halves when it is past the fill limit.
  void SplitIfOver(size_t ci, int64_t fill);

  // One chunk: the pointer itself (cap_ == 0, nchunks_ <= 1), else an array.
  union {
    Chunk* one_ = nullptr;
    Chunk** many_;
  };
  uint32_t nchunks_ = 0;
  uint32_t cap_ = 0;
  uint64_t count_ = 0;  // elements
  size_t alloc_ = 0;    // malloc cost of the chunks, kept as they change
};

template <class F>
void ListValue::ForRange(size_t start, size_t stop, bool reverse, F&& f) const {
  size_t n = stop - start + 1;
  Chunk* const* cs = chunks();
  if (!reverse) {
    const Pos p = Locate(start);
    for (size_t ci = p.chunk, off = p.off; n > 0; ++ci, off = 0) {
      const char* q = cs[ci]->data() + off;
      const char* end = cs[ci]->data() + cs[ci]->bytes;
      for (; q < end && n > 0; --n) {
        if (!f(list_element::Read(q, &q))) return;
      }
    }
    return;
  }
  const Pos p = Locate(count_ - 1 - start);
  size_t ci = p.chunk;
  const char* q = cs[ci]->data() + p.off;
  list_element::Read(q, &q);  // q: just past the first element visited
  for (; n > 0; --n) {
    if (q == cs[ci]->data()) {
      --ci;
      q = cs[ci]->data() + cs[ci]->bytes;
    }
    if (!f(list_element::ReadBack(q, &q))) return;
  }
}

}  // namespace feedkv
