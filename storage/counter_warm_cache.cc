#include "storage/counter_warm_cache.h"

#include <algorithm>

namespace feedkv {

size_t CounterWarmCache::EntryBytes() const {
  // The map node (key, entry, next pointer, cached hash) and its bucket, the
  // counters, the LRU list node; the dirty list's nodes are few and ignored.
  return sizeof(std::pair<const int64_t, Entry>) + 2 * sizeof(void*) + sizeof(void*) +
         num_fields_ * sizeof(uint64_t) + sizeof(int64_t) + 2 * sizeof(void*);
}

void CounterWarmCache::Touch(Entry& e) { lru_.splice(lru_.begin(), lru_, e.lru); }

const uint64_t* CounterWarmCache::Find(int64_t id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return nullptr;
  Touch(it->second);
  return it->second.counters.data();
}

void CounterWarmCache::InsertLoaded(int64_t id, const uint64_t* counters) {
  auto [it, inserted] = entries_.try_emplace(id);
  if (!inserted) return;
  Entry& e = it->second;
  e.counters.assign(num_fields_, 0);
  if (counters != nullptr) std::copy(counters, counters + num_fields_, e.counters.begin());
  lru_.push_front(id);
  e.lru = lru_.begin();
}

uint64_t* CounterWarmCache::Mutable(int64_t id) {
  auto [it, inserted] = entries_.try_emplace(id);
  Entry& e = it->second;
  if (inserted) {
    e.counters.assign(num_fields_, 0);
    lru_.push_front(id);
    e.lru = lru_.begin();
  } else {
    Touch(e);
  }
  e.version++;
  if (!e.dirty) {
    e.dirty = true;
    dirty_++;
  }
  if (!e.queued) {
    dirty_queue_.push_back(id);
    e.queued = true;
  }
  return e.counters.data();
}

std::vector<CounterWarmCache::WriteBack> CounterWarmCache::TakeDirty(
    size_t max, const std::function<bool(int64_t)>& eligible) {
  std::vector<WriteBack> out;
  // Each queued id is looked at once per call (an ineligible one goes to the back).
  for (size_t n = dirty_queue_.size(); n > 0 && out.size() < max && !dirty_queue_.empty(); n--) {
    const int64_t id = dirty_queue_.front();
    dirty_queue_.pop_front();
    auto it = entries_.find(id);
    if (it == entries_.end()) continue;
    Entry& e = it->second;
    if (eligible && !eligible(id)) {
      dirty_queue_.push_back(id);
      continue;
    }
    e.queued = false;
    // Clean since, or in flight at this version already (WrittenBack re-queues
    // it if that write-back fails).
    if (!e.dirty || e.handed_out == e.version) continue;
    e.handed_out = e.version;
    out.push_back(WriteBack{id, e.version, e.counters});
  }
  return out;
}

void CounterWarmCache::WrittenBack(std::span<const WriteBack> written, bool ok) {
  for (const WriteBack& w : written) {
    auto it = entries_.find(w.id);
    if (it == entries_.end()) continue;
    Entry& e = it->second;
    if (e.handed_out == w.version) e.handed_out = 0;
    if (ok && e.version == w.version) {
      if (e.dirty) {
        e.dirty = false;
        dirty_--;
      }
      continue;
    }
    // Failed, or written again meanwhile: stays dirty, to be handed out again.
    if (e.dirty && !e.queued) {
      dirty_queue_.push_back(w.id);
      e.queued = true;
    }
  }
}

size_t CounterWarmCache::Trim(size_t budget, size_t max_visits) {
  size_t dropped = 0;
  auto it = lru_.end();
  size_t visits = 0;
  while (it != lru_.begin() && MemoryUsage() > budget && visits < max_visits) {
    --it;
    visits++;
    auto e = entries_.find(*it);
    if (e->second.dirty) continue;
    entries_.erase(e);
    it = lru_.erase(it);
    dropped++;
  }
  return dropped;
}

void CounterWarmCache::Erase(int64_t id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  if (it->second.dirty) dirty_--;
  lru_.erase(it->second.lru);
  entries_.erase(it);  // a stale dirty_queue_ node is skipped by TakeDirty
}

void CounterWarmCache::Clear() {
  entries_.clear();
  lru_.clear();
  dirty_queue_.clear();
  dirty_ = 0;
}

}  // namespace feedkv
