#include "storage/key_table.h"

#include <sys/mman.h>
#include <unistd.h>
// Every command hashes its key: XXH3 compiled into this file (as counter_table.cc does)
// instead of a call through the shared library's PLT for a few-byte input.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdlib>

#include "storage/database.h"

namespace feedkv {

namespace {

// The pages of an old array this big are returned to the OS in pieces of
// kReleaseBytes as the rehash passes them: freeing a populated 128 MiB array
// in one go (munmap) takes ~10 ms, after this it costs little.
constexpr size_t kReleaseMinBytes = size_t{1} << 20;
constexpr size_t kReleaseBytes = size_t{256} << 10;
// As Redis: a rehash step looks at no more than 10 empty buckets per bucket
// it is asked to move, so a sparse old table cannot make one step long.
constexpr size_t kEmptyVisitsPerBucket = 10;
// Shrink below this fill (percent), as Redis's HASHTABLE_MIN_FILL.
constexpr size_t kMinFillPercent = 10;
// While resizing is discouraged, grow only past this many keys per bucket
// (Redis's dict_force_resize_ratio).
constexpr size_t kForceResizeRatio = 5;

}  // namespace

uint64_t KeyTable::Hash(std::string_view key) { return XXH3_64bits(key.data(), key.size()); }

KeyTable::KeyTable() : t0_(Allocate(kMinBuckets)) {}

KeyTable::~KeyTable() {
  Free(&t0_);
  Free(&t1_);
}

KeyTable::Array KeyTable::Allocate(size_t nbuckets) {
  // From malloc, so that the allocator's figure (INFO used_memory) counts
  // it. glibc serves big arrays by mmap: zeroed pages on demand, no memset.
  Array a;
  a.size = nbuckets;
  a.buckets = static_cast<Entry**>(std::calloc(nbuckets, sizeof(Entry*)));
  if (a.buckets == nullptr) std::abort();
  return a;
}

void KeyTable::Free(Array* a) {
  std::free(a->buckets);
  *a = Array{};
}

void KeyTable::ReleaseRehashed() {
  const size_t bytes = t0_.size * sizeof(Entry*);
  if (bytes < kReleaseMinBytes) return;
  // Whole pages strictly inside the array and below the cursor: the
  // allocator's own header (before the array) is never touched, and the
  // pages read back as zeros (null buckets) should anything look.
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t base = reinterpret_cast<uintptr_t>(t0_.buckets);
  const uintptr_t first = (base + page - 1) & ~(page - 1);
  const uintptr_t done = (base + rehash_idx_ * sizeof(Entry*)) & ~(page - 1);
  if (done < first || done - first < t0_.released + kReleaseBytes) return;
  madvise(reinterpret_cast<void*>(first + t0_.released), done - first - t0_.released,
          MADV_DONTNEED);
  t0_.released = done - first;
}

Entry** KeyTable::FindLink(std::string_view key, uint64_t hash) {
  size_t i0 = hash & (t0_.size - 1);
  if (!rehashing() || i0 >= rehash_idx_) {
    Entry** link = &t0_.buckets[i0];
    for (; *link != nullptr; link = &(*link)->next) {
      if ((*link)->key_len == key.size() && (*link)->key() == key) return link;
    }
    if (!rehashing()) return link;
  }
  Entry** link = &t1_.buckets[hash & (t1_.size - 1)];
  for (; *link != nullptr; link = &(*link)->next) {
    if ((*link)->key_len == key.size() && (*link)->key() == key) return link;
  }
  return link;
}

Entry* KeyTable::Find(std::string_view key, uint64_t hash) const {
  return *const_cast<KeyTable*>(this)->FindLink(key, hash);
}

void KeyTable::MaybeResize(size_t keys) {
  if (rehashing()) return;
  if (resize_discouraged_) {
    if (keys > t0_.size * kForceResizeRatio) StartResize(std::bit_ceil(keys));
    return;
  }
  if (keys > t0_.size) {
    StartResize(std::bit_ceil(keys));
  } else if (t0_.size > kMinBuckets && keys * 100 <= t0_.size * kMinFillPercent) {
    StartResize(std::max(kMinBuckets, std::bit_ceil(keys)));
  }
}

KeyTable::ArrayStats KeyTable::Stats(int which) const {
  ArrayStats st;
  const Array& a = which == 0 ? t0_ : t1_;
  st.size = a.size;
  constexpr size_t kLast = std::size(ArrayStats{}.chain_counts) - 1;
  for (size_t i = 0; i < a.size; i++) {
    const Entry* const* head = Head(a, i);
    size_t len = 0;
    for (const Entry* e = head != nullptr ? *head : nullptr; e != nullptr; e = e->next) len++;
    st.chain_counts[std::min(len, kLast)]++;
    if (len == 0) continue;
    st.used_slots++;
    st.elements += len;
    st.max_chain = std::max(st.max_chain, len);
  }
  return st;
}

void KeyTable::StartResize(size_t nbuckets) {
  t1_ = Allocate(nbuckets);
  rehash_idx_ = 0;
  // The first step at once, as Redis's add into a table it just resized
  // lands in the new one: the new array is never empty while rehashing.
  Rehash(1);
}

bool KeyTable::Rehash(size_t n) {
  size_t empty_visits = n * kEmptyVisitsPerBucket;
  const uint64_t m1 = t1_.size - 1;
  while (n > 0 && rehash_idx_ < t0_.size) {
    Entry* e = t0_.buckets[rehash_idx_];
    if (e == nullptr) {
      rehash_idx_++;
      if (--empty_visits == 0) break;
      continue;
    }
    while (e != nullptr) {
      Entry* next = e->next;
      Entry** slot = &t1_.buckets[Hash(e->key()) & m1];
      e->next = *slot;
      *slot = e;
      e = next;
    }
    t0_.buckets[rehash_idx_++] = nullptr;
    n--;
  }
  if (rehash_idx_ == t0_.size) {
    Free(&t0_);
    t0_ = t1_;
    t1_ = Array{};
    rehash_idx_ = 0;
    return false;
  }
  ReleaseRehashed();
  return true;
}

bool KeyTable::RehashFor(int64_t budget_us) {
  if (!rehashing()) return false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(budget_us);
  // 100 buckets between clock reads, as Redis's dictRehashMilliseconds.
  while (Rehash(100)) {
    if (std::chrono::steady_clock::now() >= deadline) return true;
  }
  return false;
}

Entry* KeyTable::Random(uint64_t seed) const {
  // Pick a random non-empty bucket among the live ones of both arrays, then
  // a random element of its chain. Bucket indexes come from a fully mixed
  // sequence (an LCG's low bits cycle too briefly to reach every bucket); a
  // sparse table falls back to a linear walk.
  const size_t lo = rehash_idx_, span = t0_.size + t1_.size - lo;
  auto bucket = [&](size_t i) {  // i in [0, span)
    size_t b = lo + i;
    return b < t0_.size ? t0_.buckets[b] : t1_.buckets[b - t0_.size];
  };
  uint64_t x = seed;
  auto next = [&x] { return SplitMix64(&x); };
  size_t i = next() % span;
  for (int tries = 0; tries < 64 && bucket(i) == nullptr; tries++) i = next() % span;
  for (size_t walked = 0; bucket(i) == nullptr; walked++) {
    if (walked == span) return nullptr;
    i = i + 1 == span ? 0 : i + 1;
  }
  Entry* head = bucket(i);
  size_t len = 0;
  for (const Entry* e = head; e != nullptr; e = e->next) len++;
  size_t pick = (next() >> 33) % len;
  while (pick-- > 0) head = head->next;
  return head;
}

void KeyTable::Clear(void (*free_entry)(Entry*)) {
  ForEachHead([&](Entry* head) {
    while (head != nullptr) {
      Entry* next = head->next;
      free_entry(head);
      head = next;
    }
  });
  Free(&t0_);
  Free(&t1_);
  rehash_idx_ = 0;
  t0_ = Allocate(kMinBuckets);
}

void KeyTable::Swap(KeyTable& other) {
  std::swap(t0_, other.t0_);
  std::swap(t1_, other.t1_);
  std::swap(rehash_idx_, other.rehash_idx_);
}

}  // namespace feedkv
