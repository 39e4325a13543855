#include "storage/eviction_pool.h"

#include <utility>

namespace feedkv {

void EvictionPool::Remove(size_t i) {
  for (size_t j = i; j + 1 < size_; j++) std::swap(slots_[j], slots_[j + 1]);
  size_--;
}

void EvictionPool::Offer(uint64_t score, int db, std::string_view key) {
  for (size_t i = 0; i < size_; i++) {
    if (slots_[i].db == db && slots_[i].key == key) {
      Remove(i);
      break;
    }
  }
  // Worse than every candidate of a full pool: not kept.
  if (size_ == kSize && score <= slots_[0].score) return;
  if (size_ == kSize) Remove(0);
  size_t pos = size_;
  while (pos > 0 && slots_[pos - 1].score > score) pos--;
  // Shift the better candidates up one slot; the string moves keep their
  // buffers, so a warm pool allocates only for keys longer than before.
  for (size_t j = size_; j > pos; j--) std::swap(slots_[j], slots_[j - 1]);
  slots_[pos].score = score;
  slots_[pos].db = db;
  slots_[pos].key.assign(key);
  size_++;
}

bool EvictionPool::PopBest(int* db, std::string* key) {
  if (size_ == 0) return false;
  Candidate& best = slots_[size_ - 1];
  *db = best.db;
  key->swap(best.key);
  size_--;
  return true;
}

}  // namespace feedkv
