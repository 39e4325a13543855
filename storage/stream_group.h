// StreamGroup: one consumer group of a stream (storage/stream_value.h), as
// Redis's streamCG: the last ID delivered to the group, how many entries it
// has read (for lag; -1 when unknown), its consumers, and its pending entries
// list (PEL) — every ID delivered to a consumer and not yet acknowledged, with
// when it was last delivered, how many times, and to whom. Each consumer keeps
// the IDs of its own pending entries, so XPENDING for one consumer and
// XINFO's per-consumer counts read only that consumer's share. Both lists are
// SortedChunks (storage/sorted_chunks.h): 40 bytes per pending entry in the
// group's, 16 in its consumer's.
//
// Not thread-safe; owned by its stream.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "storage/sorted_chunks.h"
#include "storage/stream_id.h"

namespace feedkv {

struct NoValue {};

struct StreamConsumer {
  std::string name;
  int64_t seen_time_ms = 0;  // last interaction (read, claim)
  SortedChunks<StreamId, NoValue> pending;  // rows: .key is the ID
};

struct StreamNack {
  int64_t delivery_time_ms = 0;
  uint64_t delivery_count = 1;
  StreamConsumer* consumer = nullptr;
};

class StreamGroup {
 public:
  StreamGroup(std::string name, StreamId last_id, int64_t entries_read)
      : last_id(last_id), entries_read(entries_read), name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  StreamId last_id;
  int64_t entries_read;  // -1: unknown (Redis's SCG_INVALID_ENTRIES_READ)

  using PendingList = SortedChunks<StreamId, StreamNack>;
  const PendingList& pel() const { return pel_; }
  StreamNack* FindPending(StreamId id);
  const std::map<std::string, std::unique_ptr<StreamConsumer>, std::less<>>& consumers() const {
    return consumers_;
  }
  StreamConsumer* FindConsumer(std::string_view name) const;
  // Null when a consumer of that name exists.
  StreamConsumer* CreateConsumer(std::string_view name, int64_t now_ms);
  // Removes a consumer and its pending entries; how many were pending, or -1
  // when there is no such consumer.
  int64_t DeleteConsumer(std::string_view name);

  // Records a delivery of `id` to `c`: a new pending entry, or an existing one
  // moved to `c` (XCLAIM) with its time and count set.
  void SetPending(StreamId id, StreamConsumer* c, int64_t delivery_time_ms, uint64_t delivery_count);
  // XACK / a claim of a deleted entry: true when `id` was pending.
  bool Ack(StreamId id);

  size_t MemoryUsage() const;

 private:
  std::string name_;
  PendingList pel_;
  std::map<std::string, std::unique_ptr<StreamConsumer>, std::less<>> consumers_;
};

}  // namespace feedkv
