// CounterWarmCache: the counter keys of cold id ranges that are in memory,
// either loaded from the cold tier for a command or written since
// (docs/counters.md, "Cold tables").
//
// An entry holds a key's counters at full width (all zeros: absent in the cold
// tier too, so a miss is cached like a hit), whether memory is newer than the
// cold tier (dirty), and its place in a least-recently-used list. Trim drops
// clean entries, oldest use first, until the cache fits its budget; dirty
// entries stay until written back. Write-back runs elsewhere (the cold writer
// thread): TakeDirty hands out copies with a version each, and WrittenBack
// makes an entry clean only if no write changed it since — a write that races
// its own write-back leaves the entry dirty, and a failed write-back changes
// nothing, so no increment is ever dropped.
//
// Not thread-safe; owned by the command thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <list>
#include <span>
#include <unordered_map>
#include <vector>

namespace feedkv {

class CounterWarmCache {
 public:
  // One dirty entry handed to the writer.
  struct WriteBack {
    int64_t id = 0;
    uint64_t version = 0;
    std::vector<uint64_t> counters;  // all zeros: delete the row
  };

  explicit CounterWarmCache(size_t num_fields) : num_fields_(num_fields) {}
  CounterWarmCache(const CounterWarmCache&) = delete;
  CounterWarmCache& operator=(const CounterWarmCache&) = delete;

  size_t num_fields() const { return num_fields_; }
  size_t size() const { return entries_.size(); }
  size_t dirty() const { return dirty_; }
  bool Contains(int64_t id) const { return entries_.count(id) != 0; }

  // The counters of id (num_fields() of them), or nullptr if not cached.
  // A use: the entry becomes the most recently used.
  const uint64_t* Find(int64_t id);
  // Caches what the cold tier holds for id (nullptr: nothing). If id is
  // cached already, memory is at least as new and nothing changes.
  void InsertLoaded(int64_t id, const uint64_t* counters);
  // The counters of id for a write: the entry becomes dirty and most recently
  // used. A new entry (all zeros) is made if id is not cached, which is right
  // only when the caller knows the cold tier holds nothing newer for id.
  uint64_t* Mutable(int64_t id);

  // Up to `max` dirty entries not already handed out at their current version,
  // in the order they became dirty; with `eligible`, only ids it accepts (the
  // others stay queued).
  std::vector<WriteBack> TakeDirty(size_t max, const std::function<bool(int64_t)>& eligible = {});
  // The writer stored (ok) or failed to store these. Stored entries whose
  // version is unchanged become clean; everything else stays dirty and is
  // handed out again by a later TakeDirty.
  void WrittenBack(std::span<const WriteBack> written, bool ok);

  // Drops clean entries, least recently used first, until MemoryUsage() is at
  // most `budget`, looking at no more than `max_visits` entries (so a cache
  // full of dirty entries costs a bounded step). Returns how many it dropped.
  size_t Trim(size_t budget, size_t max_visits = std::numeric_limits<size_t>::max());
  // Forgets id, dirty or not (its counters went back to a hot table).
  void Erase(int64_t id);
  // Drops every entry, dirty ones too (the space is being dropped or replaced).
  void Clear();

  // Bytes held: entries, their counters, the LRU and dirty lists.
  size_t MemoryUsage() const { return entries_.size() * EntryBytes(); }

  // f(int64_t id, const uint64_t* counters, bool dirty) for every entry.
  template <class F>
  void ForEach(F&& f) const {
    for (const auto& [id, e] : entries_) f(id, e.counters.data(), e.dirty);
  }

 private:
  struct Entry {
    std::vector<uint64_t> counters;
    std::list<int64_t>::iterator lru;
    uint64_t version = 0;        // bumped by every Mutable
    uint64_t handed_out = 0;     // the version last given to TakeDirty (0: none)
    bool dirty = false;
    bool queued = false;         // in dirty_queue_
  };
  size_t EntryBytes() const;
  void Touch(Entry& e);

  size_t num_fields_;
  std::unordered_map<int64_t, Entry> entries_;
  std::list<int64_t> lru_;            // front: most recently used
  std::list<int64_t> dirty_queue_;    // in the order entries became dirty
  size_t dirty_ = 0;
};

}  // namespace feedkv
