// BlockIndex: the by-name index of a big container whose elements are each one
// malloc'd block that starts with (or contains) its name: a sorted set's members
// (zset_item), a hash's fields (hash_item). One 8-byte slot per bucket (open
// addressing, linear probing, load <= 0.8, backward-shift deletion so there are no
// tombstones) holds the block's address with a 16-bit tag of the name's hash in the
// top bits, so most failed comparisons never touch the block. The index owns the
// blocks and frees them.
//
// KeyOf::Key(const char* block) returns the block's name. Not thread-safe: owned by
// the command thread, as the value that holds it.
#pragma once

#include <malloc.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <random>
#include <string_view>
#include <utility>

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

namespace feedkv {

namespace block_index {

inline constexpr uint64_t kAddrMask = (uint64_t{1} << 48) - 1;
inline constexpr uint32_t kMinSlots = 8;

// What the allocator charges for an n-byte request (16-byte classes, 8-byte header).
inline size_t ChunkBytes(size_t n) { return std::max<size_t>(32, (n + 8 + 15) & ~size_t{15}); }

inline char* Ptr(uint64_t slot) { return reinterpret_cast<char*>(slot & kAddrMask); }

// A block of n bytes whose address leaves the top 16 bits free for the tag.
inline char* AllocBlock(size_t n) {
  auto* p = static_cast<char*>(std::malloc(n));
  if (p == nullptr) throw std::bad_alloc();
  if ((reinterpret_cast<uintptr_t>(p) & ~kAddrMask) != 0) std::abort();
  return p;
}

inline size_t BlockCost(const char* p) { return malloc_usable_size(const_cast<char*>(p)) + 8; }

inline uint64_t NewSeed() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng();
}

}  // namespace block_index

template <class KeyOf>
class BlockIndex {
 public:
  BlockIndex() : slots_(AllocSlots(block_index::kMinSlots)), mask_(block_index::kMinSlots - 1),
                 seed_(block_index::NewSeed()) {}
  ~BlockIndex() {
    FreeAll();
    std::free(slots_);
  }
  BlockIndex(const BlockIndex&) = delete;
  BlockIndex& operator=(const BlockIndex&) = delete;
  BlockIndex(BlockIndex&& o) noexcept
      : slots_(std::exchange(o.slots_, nullptr)),
        mask_(std::exchange(o.mask_, 0)),
        size_(std::exchange(o.size_, 0)),
        seed_(o.seed_),
        block_bytes_(std::exchange(o.block_bytes_, 0)) {}
  BlockIndex& operator=(BlockIndex&& o) noexcept {
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

  char* Find(std::string_view name) const {
    const uint64_t i = Slot(name, Hash(name));
    return i > mask_ ? nullptr : block_index::Ptr(slots_[i]);
  }

  // Takes ownership of a block (from block_index::AllocBlock). REQUIRES: its name is absent.
  void Insert(char* block) {
    if ((uint64_t{size_} + 1) * 5 > (uint64_t{mask_} + 1) * 4) Rehash((uint64_t{mask_} + 1) * 2);
    const uint64_t h = Hash(KeyOf::Key(block));
    uint64_t i = h & mask_;
    while (slots_[i] != 0) i = (i + 1) & mask_;
    slots_[i] = ((h >> 48) << 48) | reinterpret_cast<uintptr_t>(block);
    ++size_;
    block_bytes_ += block_index::BlockCost(block);
  }

  // Swaps the block of `name` (present) for `block`, which has the same name:
  // a value that changed size moved. Returns the old block (the caller frees it).
  char* Replace(char* block) {
    const std::string_view name = KeyOf::Key(block);
    const uint64_t h = Hash(name);
    const uint64_t i = Slot(name, h);
    char* old = block_index::Ptr(slots_[i]);
    block_bytes_ += block_index::BlockCost(block) - block_index::BlockCost(old);
    slots_[i] = ((h >> 48) << 48) | reinterpret_cast<uintptr_t>(block);
    return old;
  }

  // Unlinks the block named `name` and returns it (the caller frees it), or nullptr.
  char* Remove(std::string_view name) {
    uint64_t i = Slot(name, Hash(name));
    if (i > mask_) return nullptr;
    char* block = block_index::Ptr(slots_[i]);
    block_bytes_ -= block_index::BlockCost(block);
    --size_;
    // Backward shift: pull later blocks of the run into the hole when their home
    // bucket allows it.
    for (uint64_t j = (i + 1) & mask_; slots_[j] != 0; j = (j + 1) & mask_) {
      const uint64_t home = Hash(KeyOf::Key(block_index::Ptr(slots_[j]))) & mask_;
      // Move j to i when home is not cyclically in (i, j].
      const bool in_range = (i <= j) ? (home > i && home <= j) : (home > i || home <= j);
      if (!in_range) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = 0;
    const uint64_t cap = uint64_t{mask_} + 1;
    if (cap > block_index::kMinSlots && uint64_t{size_} * 10 < cap) Rehash(cap / 2);
    return block;
  }

  // A block chosen uniformly from `random` bits. REQUIRES: size() > 0. The load
  // stays >= 0.1 (Remove shrinks), so this probes ~10 slots at most on average.
  const char* Random(uint64_t random) const {
    for (uint64_t i = random;; i = i * 6364136223846793005ULL + 1442695040888963407ULL) {
      const uint64_t slot = slots_[(i >> 16) & mask_];
      if (slot != 0) return block_index::Ptr(slot);
    }
  }

  // f(const char* block) for every block, in slot order. f must not change the index.
  template <class F>
  void ForEach(F&& f) const {
    for (uint64_t i = 0; i <= mask_; ++i) {
      if (slots_[i] != 0) f(static_cast<const char*>(block_index::Ptr(slots_[i])));
    }
  }

  size_t size() const { return size_; }
  // Slot array and blocks, as the allocator counts them.
  size_t MemoryUsage() const {
    return block_index::ChunkBytes((uint64_t{mask_} + 1) * sizeof(uint64_t)) + block_bytes_;
  }

 private:
  static uint64_t* AllocSlots(uint64_t n) {
    auto* p = static_cast<uint64_t*>(std::calloc(n, sizeof(uint64_t)));
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
  uint64_t Hash(std::string_view s) const { return XXH3_64bits_withSeed(s.data(), s.size(), seed_); }
  // The slot holding `name`, or capacity when absent.
  uint64_t Slot(std::string_view name, uint64_t hash) const {
    const uint64_t tag = hash >> 48;
    for (uint64_t i = hash & mask_;; i = (i + 1) & mask_) {
      const uint64_t slot = slots_[i];
      if (slot == 0) return uint64_t{mask_} + 1;
      if ((slot >> 48) == tag && KeyOf::Key(block_index::Ptr(slot)) == name) return i;
    }
  }
  void Rehash(uint64_t capacity) {
    uint64_t* old = slots_;
    const uint64_t old_cap = uint64_t{mask_} + 1;
    slots_ = AllocSlots(capacity);
    mask_ = static_cast<uint32_t>(capacity - 1);
    for (uint64_t k = 0; k < old_cap; ++k) {
      if (old[k] == 0) continue;
      const uint64_t h = Hash(KeyOf::Key(block_index::Ptr(old[k])));
      uint64_t i = h & mask_;
      while (slots_[i] != 0) i = (i + 1) & mask_;
      slots_[i] = old[k];
    }
    std::free(old);
  }
  void FreeAll() {
    if (slots_ == nullptr) return;
    for (uint64_t i = 0; i <= mask_; ++i) {
      if (slots_[i] != 0) std::free(block_index::Ptr(slots_[i]));
    }
  }

  uint64_t* slots_ = nullptr;
  uint32_t mask_ = 0;
  uint32_t size_ = 0;
  uint64_t seed_ = 0;
  size_t block_bytes_ = 0;
};

}  // namespace feedkv
