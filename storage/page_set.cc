#include "storage/page_set.h"

#include <algorithm>
#include <bit>
#include <utility>

namespace feedkv {

namespace {

// Rough cost of one std::unordered_map node: next pointer, key, value, malloc header.
constexpr size_t kNodeBytes = 32;

// Bits [lo, hi) of a word, 0 <= lo < hi <= 64.
uint64_t Mask(unsigned lo, unsigned hi) {
  const uint64_t upto = hi == 64 ? ~uint64_t{0} : (uint64_t{1} << hi) - 1;
  return upto & (~uint64_t{0} << lo);
}

}  // namespace

void PageSet::Add(uint64_t first, uint64_t end) {
  while (first < end) {
    const uint64_t w = first / 64;
    const unsigned lo = static_cast<unsigned>(first % 64);
    const unsigned hi = static_cast<unsigned>(std::min<uint64_t>(64, end - w * 64));
    const uint64_t mask = Mask(lo, hi);
    uint64_t& bits = words_[w];
    count_ += std::popcount(mask & ~bits);
    bits |= mask;
    first = w * 64 + hi;
  }
}

bool PageSet::Contains(uint64_t page) const {
  auto it = words_.find(page / 64);
  return it != words_.end() && ((it->second >> (page % 64)) & 1) != 0;
}

size_t PageSet::memory_bytes() const {
  return words_.bucket_count() * sizeof(void*) + words_.size() * kNodeBytes;
}

void PageSet::Runs(std::vector<Run>* out) const {
  out->clear();
  std::vector<std::pair<uint64_t, uint64_t>> sorted(words_.begin(), words_.end());
  std::sort(sorted.begin(), sorted.end());
  for (const auto& [w, word] : sorted) {
    uint64_t bits = word;
    while (bits != 0) {
      const unsigned lo = static_cast<unsigned>(std::countr_zero(bits));
      const unsigned len = static_cast<unsigned>(std::countr_one(bits >> lo));
      const uint64_t first = w * 64 + lo;
      if (!out->empty() && out->back().end == first) {
        out->back().end += len;  // continues a run from the previous word
      } else {
        out->push_back(Run{first, first + len});
      }
      bits &= ~Mask(lo, lo + len);
    }
  }
}

}  // namespace feedkv
