#include "storage/page_set.h"

#include <algorithm>
#include <bit>
#include <utility>

namespace feedkv {

namespace {

// Bits [lo, hi) of a word, 0 <= lo < hi <= 64.
uint64_t Mask(unsigned lo, unsigned hi) {
  const uint64_t upto = hi == 64 ? ~uint64_t{0} : (uint64_t{1} << hi) - 1;
  return upto & (~uint64_t{0} << lo);
}

constexpr size_t kMinSlots = 16;

}  // namespace

void PageSet::Grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(std::max(kMinSlots, old.size() * 2), Slot{});
  for (const Slot& s : old) {
    if (s.key != 0) slots_[Find(s.key)] = s;
  }
}

void PageSet::Add(uint64_t first, uint64_t end) {
  while (first < end) {
    const uint64_t w = first / 64;
    const unsigned lo = static_cast<unsigned>(first % 64);
    const unsigned hi = static_cast<unsigned>(std::min<uint64_t>(64, end - w * 64));
    const uint64_t mask = Mask(lo, hi);
    uint64_t& bits = Word(w);
    // Usually the page is already there (a new key in a touched page): no popcount.
    if (const uint64_t fresh = mask & ~bits; fresh != 0) {
      count_ += std::popcount(fresh);
      bits |= fresh;
    }
    first = w * 64 + hi;
  }
}

bool PageSet::Contains(uint64_t page) const {
  if (slots_.empty()) return false;
  const Slot& s = slots_[Find(page / 64 + 1)];
  return s.key != 0 && ((s.bits >> (page % 64)) & 1) != 0;
}

void PageSet::Runs(std::vector<Run>* out) const {
  out->clear();
  std::vector<std::pair<uint64_t, uint64_t>> sorted;
  sorted.reserve(used_);
  for (const Slot& s : slots_) {
    if (s.key != 0) sorted.emplace_back(s.key - 1, s.bits);
  }
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
