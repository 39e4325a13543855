// StreamValue: Redis's stream type — an append-only log of entries, each a
// 128-bit ID (milliseconds-sequence) and a list of field/value pairs — with its
// consumer groups (storage/stream_group.h).
//
// Entries live in nodes, as Redis's rax of listpacks: a node is one contiguous
// buffer of entries appended in ID order, keyed in an ordered map by the ID of
// its first entry (its master ID). An entry is
//   flags (1 byte: bit 0 deleted, bit 1 same fields) | varint ms - master.ms |
//   varint seq | [varint item count] | per item varint length, bytes
// where an entry with the same field names as the node's first entry (what an
// application writing one kind of event produces) stores only its values, as
// Redis's SAMEFIELDS entries do. So a small entry costs its values plus a few
// bytes, and a range read walks whole buffers. A node that stops taking
// appends is trimmed to its size. Appending goes to the last node until it holds
// stream-node-max-entries entries (deleted ones count) or would pass
// stream-node-max-bytes; then a new node starts. XDEL marks an entry deleted
// in place; a node whose entries are all deleted is dropped. Trimming drops
// whole nodes from the head and, when exact, marks entries of the first node
// left — Redis's streamTrim, so MAXLEN ~ keeps what Redis keeps.
//
// Besides the entries a stream keeps Redis 7's metadata: the last ID ever
// added (IDs only grow, even after deletions), the first live ID, the largest
// deleted ID and the number of entries ever added — what XINFO shows and
// consumer-group lag is computed from.
//
// Not thread-safe; owned by the command thread like every keyspace value.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "storage/object.h"
#include "storage/status.h"
#include "storage/stream_group.h"

namespace feedkv {

// Node limits (stream-node-max-bytes, stream-node-max-entries); 0 is no limit.
struct StreamLimits {
  size_t node_max_bytes = 4096;
  size_t node_max_entries = 100;
};

// One entry as a reader sees it: views into the node, valid until the stream
// changes.
struct StreamEntry {
  StreamId id;
  std::span<const std::string_view> items;  // field, value, field, value...
};

class StreamValue final : public Object {
 public:
  StreamValue() = default;

  ValueType type() const override { return ValueType::kStream; }
  std::string_view encoding() const override { return "stream"; }
  size_t MemoryUsage() const override;
  std::unique_ptr<Object> Clone() const override;
  void SerializeTo(std::string* out) const override;
  uint64_t Digest() const override;
  static Status Decode(std::string_view in, std::unique_ptr<StreamValue>* out);

  // Live entries.
  uint64_t length() const { return length_; }
  // The largest ID ever added (0-0 for a stream never added to), which every
  // new ID must exceed.
  StreamId last_id() const { return last_id_; }
  // The first live entry's ID, 0-0 when empty.
  StreamId first_id() const { return first_id_; }
  StreamId max_deleted_id() const { return max_deleted_id_; }
  uint64_t entries_added() const { return entries_added_; }
  size_t node_count() const { return nodes_.size(); }

  // Appends an entry with `id` > last_id(); `items` alternate field, value.
  void Append(StreamId id, std::span<const std::string_view> items, const StreamLimits& limits);
  // XSETID: moves last_id (never below the last entry) and, when given, the
  // counters. The caller checked Redis's rules.
  void SetLastId(StreamId id, uint64_t entries_added, StreamId max_deleted);

  // Calls fn for each live entry with start <= id <= end, in ID order (or
  // reverse), until fn returns false.
  void ForRange(StreamId start, StreamId end, bool reverse,
                const std::function<bool(const StreamEntry&)>& fn) const;
  // The live entry with `id`, if any; its items go to *items.
  bool Get(StreamId id, std::vector<std::string>* items) const;
  // The ID of the last (or first) live entry; false when empty.
  bool EdgeId(bool first, StreamId* id) const;
  // The first entry's ID counting deleted ones still stored (Redis's
  // streamGetEdgeID without skipping tombstones); Max() when empty.
  StreamId FirstIdWithTombstones() const;

  // XDEL of one ID: true when a live entry was deleted.
  bool Delete(StreamId id);
  // Trimming, as Redis's streamTrim: by length (keep at most maxlen) or by ID
  // (drop entries below minid). approx drops whole nodes only; limit (0: none)
  // caps the entries dropped. Returns the entries dropped.
  uint64_t TrimMaxLen(uint64_t maxlen, bool approx, uint64_t limit);
  uint64_t TrimMinId(StreamId minid, bool approx, uint64_t limit);

  // Consumer groups by name, in name order (XINFO GROUPS order).
  StreamGroup* FindGroup(std::string_view name);
  const StreamGroup* FindGroup(std::string_view name) const;
  // Null when a group of that name exists.
  StreamGroup* CreateGroup(std::string_view name, StreamId last_id, int64_t entries_read);
  bool DestroyGroup(std::string_view name);
  const std::map<std::string, std::unique_ptr<StreamGroup>, std::less<>>& groups() const { return groups_; }

  // Consumer-group lag support (Redis 7's streamEstimateDistanceFromFirstEverEntry
  // and streamRangeHasTombstones): how many entries were added up to `id`, or -1
  // when that cannot be known; whether a deleted entry may lie in [start, end].
  int64_t EntriesAddedBefore(StreamId id) const;
  bool RangeHasTombstones(StreamId start, StreamId end) const;

 private:
  struct Node {
    std::string data;
    uint32_t live = 0;
    uint32_t deleted = 0;
    uint32_t master_nfields = 0;  // fields of the first entry
  };
  using NodeMap = std::map<StreamId, Node>;

  // The field names of a node's first entry, which later entries may share.
  static void MasterFields(const Node& node, std::vector<std::string_view>* fields);
  // Decodes the entry at data[*pos] of a node keyed `master`, advancing *pos.
  // *flags_pos is the offset of its flags byte. With `items`, `master_fields`
  // must be the node's MasterFields.
  static void DecodeAt(const Node& node, StreamId master, size_t* pos, StreamId* id, size_t* flags_pos,
                       std::vector<std::string_view>* items,
                       const std::vector<std::string_view>* master_fields = nullptr);
  void DropNode(NodeMap::iterator it);
  void RefreshFirstId();
  uint64_t Trim(bool by_len, uint64_t maxlen, StreamId minid, bool approx, uint64_t limit);

  NodeMap nodes_;
  uint64_t length_ = 0;
  StreamId last_id_;
  StreamId first_id_;
  StreamId max_deleted_id_;
  uint64_t entries_added_ = 0;
  size_t data_bytes_ = 0;  // sum of node buffer capacities
  std::map<std::string, std::unique_ptr<StreamGroup>, std::less<>> groups_;
};

}  // namespace feedkv
