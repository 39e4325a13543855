#include "storage/stream_value.h"

#include <xxhash.h>

#include <algorithm>

#include "storage/int_text.h"
#include "storage/varint.h"

namespace feedkv {

namespace {

constexpr uint8_t kDeleted = 1;
constexpr uint8_t kSameFields = 2;
// std::map node overhead (links, colour) per node, for MemoryUsage.
constexpr size_t kTreeNodeBytes = 48;

// A varint at data[*pos]; the buffer was written by PutVarint, so it is whole.
uint64_t ReadVarint(const std::string& data, size_t* pos) {
  std::string_view in(data.data() + *pos, data.size() - *pos);
  const size_t before = in.size();
  uint64_t v = 0;
  GetVarint(&in, &v);
  *pos += before - in.size();
  return v;
}

}  // namespace

bool ParseStreamId(std::string_view s, uint64_t missing_seq, StreamId* id, bool* seq_star) {
  // Redis parses into a 128-byte buffer: longer text is invalid.
  if (s.empty() || s.size() > 127) return false;
  // Redis's string2ull: a canonical integer (negative ones refused), else
  // strtoull's rules — leading white space, a sign (a minus negates modulo
  // 2^64), digits to the end, no overflow.
  auto parse_u64 = [](std::string_view t, uint64_t* out) {
    int64_t canonical;
    if (ParseCanonicalInt64(t, &canonical)) {
      if (canonical < 0) return false;
      *out = static_cast<uint64_t>(canonical);
      return true;
    }
    size_t i = 0;
    while (i < t.size() && (t[i] == ' ' || (t[i] >= '\t' && t[i] <= '\r'))) ++i;
    bool negative = false;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) negative = t[i++] == '-';
    if (i == t.size()) return false;
    uint64_t v = 0;
    for (; i < t.size(); ++i) {
      const char c = t[i];
      if (c < '0' || c > '9') return false;
      const auto d = static_cast<uint64_t>(c - '0');
      if (v > (UINT64_MAX - d) / 10) return false;
      v = v * 10 + d;
    }
    *out = negative ? 0 - v : v;
    return true;
  };
  const size_t dash = s.find('-');
  uint64_t ms = 0, seq = missing_seq;
  if (!parse_u64(s.substr(0, dash), &ms)) return false;
  if (seq_star != nullptr) *seq_star = false;
  if (dash != std::string_view::npos) {
    std::string_view rest = s.substr(dash + 1);
    if (seq_star != nullptr && rest == "*") {
      *seq_star = true;
      seq = 0;
    } else if (!parse_u64(rest, &seq)) {
      return false;
    }
  }
  *id = {ms, seq};
  return true;
}

void StreamValue::MasterFields(const Node& node, std::vector<std::string_view>* fields) {
  fields->clear();
  const std::string& d = node.data;
  if (d.empty()) return;
  size_t pos = 1;
  ReadVarint(d, &pos);
  ReadVarint(d, &pos);
  const uint64_t n = ReadVarint(d, &pos);
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t len = ReadVarint(d, &pos);
    if (i % 2 == 0) fields->emplace_back(d.data() + pos, len);
    pos += len;
  }
}

void StreamValue::DecodeAt(const Node& node, StreamId master, size_t* pos, StreamId* id, size_t* flags_pos,
                           std::vector<std::string_view>* items,
                           const std::vector<std::string_view>* master_fields) {
  const std::string& d = node.data;
  *flags_pos = *pos;
  const auto flags = static_cast<uint8_t>(d[*pos]);
  ++*pos;
  id->ms = master.ms + ReadVarint(d, pos);
  id->seq = ReadVarint(d, pos);
  const bool same = (flags & kSameFields) != 0;
  const uint64_t n = same ? 2 * uint64_t{node.master_nfields} : ReadVarint(d, pos);
  if (items != nullptr) items->clear();
  for (uint64_t i = 0; i < n; ++i) {
    if (same && i % 2 == 0) {
      if (items != nullptr) items->push_back((*master_fields)[i / 2]);
      continue;
    }
    const uint64_t len = ReadVarint(d, pos);
    if (items != nullptr) items->emplace_back(d.data() + *pos, len);
    *pos += len;
  }
}

void StreamValue::Append(StreamId id, std::span<const std::string_view> items, const StreamLimits& limits) {
  size_t item_bytes = 0;
  for (std::string_view s : items) item_bytes += s.size();
  bool new_node = nodes_.empty();
  if (!new_node) {
    Node& tail = nodes_.rbegin()->second;
    new_node = (limits.node_max_bytes != 0 && tail.data.size() + item_bytes >= limits.node_max_bytes) ||
               (limits.node_max_entries != 0 && tail.live + tail.deleted >= limits.node_max_entries);
    if (new_node) {
      // The node takes no more appends: give back its spare capacity.
      data_bytes_ -= tail.data.capacity();
      tail.data.shrink_to_fit();
      data_bytes_ += tail.data.capacity();
    }
  }
  auto it = new_node ? nodes_.emplace_hint(nodes_.end(), id, Node{}) : std::prev(nodes_.end());
  Node& node = it->second;
  bool same = false;
  if (node.data.empty()) {
    node.master_nfields = static_cast<uint32_t>(items.size() / 2);
  } else if (items.size() == 2 * size_t{node.master_nfields}) {
    // Compare with the first entry's field names where they lie.
    const std::string& d = node.data;
    size_t pos = 1;
    ReadVarint(d, &pos);
    ReadVarint(d, &pos);
    const uint64_t n = ReadVarint(d, &pos);
    same = true;
    for (uint64_t i = 0; same && i < n; ++i) {
      const uint64_t len = ReadVarint(d, &pos);
      if (i % 2 == 0) same = std::string_view(d.data() + pos, len) == items[i];
      pos += len;
    }
  }
  const size_t cap_before = node.data.capacity();
  node.data.push_back(static_cast<char>(same ? kSameFields : 0));
  PutVarint(&node.data, id.ms - it->first.ms);
  PutVarint(&node.data, id.seq);
  if (!same) PutVarint(&node.data, items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    if (same && i % 2 == 0) continue;
    PutVarint(&node.data, items[i].size());
    node.data.append(items[i]);
  }
  data_bytes_ += node.data.capacity() - cap_before;
  ++node.live;
  if (length_ == 0) first_id_ = id;
  ++length_;
  last_id_ = id;
  ++entries_added_;
}

void StreamValue::SetLastId(StreamId id, uint64_t entries_added, StreamId max_deleted) {
  last_id_ = id;
  entries_added_ = entries_added;
  max_deleted_id_ = max_deleted;
}

void StreamValue::ForRange(StreamId start, StreamId end, bool reverse,
                           const std::function<bool(const StreamEntry&)>& fn) const {
  if (start > end || nodes_.empty()) return;
  std::vector<std::string_view> items, fields;
  StreamEntry entry;
  size_t flags_pos;
  if (!reverse) {
    auto it = nodes_.upper_bound(start);
    if (it != nodes_.begin()) --it;
    for (; it != nodes_.end() && it->first <= end; ++it) {
      const Node& node = it->second;
      MasterFields(node, &fields);
      for (size_t pos = 0; pos < node.data.size();) {
        DecodeAt(node, it->first, &pos, &entry.id, &flags_pos, &items, &fields);
        if (entry.id > end) return;
        if ((node.data[flags_pos] & kDeleted) || entry.id < start) continue;
        entry.items = items;
        if (!fn(entry)) return;
      }
    }
    return;
  }
  auto it = nodes_.upper_bound(end);
  std::vector<size_t> offsets;
  while (it != nodes_.begin()) {
    --it;
    const Node& node = it->second;
    offsets.clear();
    for (size_t pos = 0; pos < node.data.size();) {
      offsets.push_back(pos);
      DecodeAt(node, it->first, &pos, &entry.id, &flags_pos, nullptr);
    }
    MasterFields(node, &fields);
    for (auto o = offsets.rbegin(); o != offsets.rend(); ++o) {
      size_t pos = *o;
      DecodeAt(node, it->first, &pos, &entry.id, &flags_pos, &items, &fields);
      if (entry.id < start) return;
      if ((node.data[flags_pos] & kDeleted) || entry.id > end) continue;
      entry.items = items;
      if (!fn(entry)) return;
    }
  }
}

bool StreamValue::Get(StreamId id, std::vector<std::string>* items) const {
  bool found = false;
  ForRange(id, id, false, [&](const StreamEntry& e) {
    items->assign(e.items.begin(), e.items.end());
    found = true;
    return false;
  });
  return found;
}

bool StreamValue::EdgeId(bool first, StreamId* id) const {
  bool found = false;
  ForRange({}, StreamId::Max(), !first, [&](const StreamEntry& e) {
    *id = e.id;
    found = true;
    return false;
  });
  return found;
}

StreamId StreamValue::FirstIdWithTombstones() const {
  if (nodes_.empty()) return StreamId::Max();
  return nodes_.begin()->first;
}

void StreamValue::DropNode(NodeMap::iterator it) {
  data_bytes_ -= it->second.data.capacity();
  nodes_.erase(it);
}

void StreamValue::RefreshFirstId() {
  if (length_ == 0 || !EdgeId(true, &first_id_)) first_id_ = {};
}

bool StreamValue::Delete(StreamId id) {
  auto it = nodes_.upper_bound(id);
  if (it == nodes_.begin()) return false;
  --it;
  Node& node = it->second;
  StreamId cur;
  size_t flags_pos;
  for (size_t pos = 0; pos < node.data.size();) {
    DecodeAt(node, it->first, &pos, &cur, &flags_pos, nullptr);
    if (cur > id) return false;
    if (cur < id) continue;
    if (node.data[flags_pos] & kDeleted) return false;
    node.data[flags_pos] = static_cast<char>(node.data[flags_pos] | kDeleted);
    --node.live;
    ++node.deleted;
    --length_;
    if (id > max_deleted_id_) max_deleted_id_ = id;
    if (node.live == 0) DropNode(it);
    if (id == first_id_) RefreshFirstId();
    return true;
  }
  return false;
}

uint64_t StreamValue::TrimMaxLen(uint64_t maxlen, bool approx, uint64_t limit) {
  return Trim(true, maxlen, {}, approx, limit);
}

uint64_t StreamValue::TrimMinId(StreamId minid, bool approx, uint64_t limit) {
  return Trim(false, 0, minid, approx, limit);
}

uint64_t StreamValue::Trim(bool by_len, uint64_t maxlen, StreamId minid, bool approx, uint64_t limit) {
  uint64_t dropped = 0;
  auto it = nodes_.begin();
  while (it != nodes_.end()) {
    if (by_len && length_ <= maxlen) break;
    Node& node = it->second;
    const uint64_t entries = node.live;
    if (limit != 0 && dropped + entries > limit) break;
    StreamId cur;
    size_t flags_pos;
    bool remove_node;
    if (by_len) {
      remove_node = length_ - entries >= maxlen;
    } else {
      // The node's last entry, deleted or not, as Redis's lpGetEdgeStreamID.
      for (size_t pos = 0; pos < node.data.size();) DecodeAt(node, it->first, &pos, &cur, &flags_pos, nullptr);
      remove_node = cur < minid;
    }
    if (remove_node) {
      length_ -= entries;
      dropped += entries;
      auto next = std::next(it);
      DropNode(it);
      it = next;
      continue;
    }
    if (approx) break;
    for (size_t pos = 0; pos < node.data.size();) {
      DecodeAt(node, it->first, &pos, &cur, &flags_pos, nullptr);
      if (by_len ? length_ <= maxlen : cur >= minid) break;
      if (node.data[flags_pos] & kDeleted) continue;
      node.data[flags_pos] = static_cast<char>(node.data[flags_pos] | kDeleted);
      --node.live;
      ++node.deleted;
      --length_;
      ++dropped;
    }
    // A node left with no live entry stays, as in Redis (appends may still go
    // to it), until a trim drops it whole.
    break;
  }
  if (length_ == 0) {
    first_id_ = {};
  } else if (dropped != 0) {
    RefreshFirstId();
  }
  return dropped;
}

StreamGroup* StreamValue::FindGroup(std::string_view name) {
  auto it = groups_.find(name);
  return it == groups_.end() ? nullptr : it->second.get();
}

const StreamGroup* StreamValue::FindGroup(std::string_view name) const {
  auto it = groups_.find(name);
  return it == groups_.end() ? nullptr : it->second.get();
}

StreamGroup* StreamValue::CreateGroup(std::string_view name, StreamId last_id, int64_t entries_read) {
  if (groups_.contains(name)) return nullptr;
  auto g = std::make_unique<StreamGroup>(std::string(name), last_id, entries_read);
  StreamGroup* raw = g.get();
  groups_.emplace(std::string(name), std::move(g));
  return raw;
}

bool StreamValue::DestroyGroup(std::string_view name) {
  auto it = groups_.find(name);
  if (it == groups_.end()) return false;
  groups_.erase(it);
  return true;
}

bool StreamValue::RangeHasTombstones(StreamId start, StreamId end) const {
  if (length_ == 0 || max_deleted_id_.is_zero()) return false;
  if (first_id_ > max_deleted_id_) return false;
  return start <= max_deleted_id_ && max_deleted_id_ <= end;
}

int64_t StreamValue::EntriesAddedBefore(StreamId id) const {
  if (entries_added_ == 0) return 0;
  const auto added = static_cast<int64_t>(entries_added_);
  if (length_ == 0 && id <= last_id_) return added;
  if (id == last_id_) return added;
  if (id > last_id_) return -1;
  if (max_deleted_id_.is_zero() || max_deleted_id_ < first_id_) {
    if (id < first_id_) return added - static_cast<int64_t>(length_);
    if (id == first_id_) return added - static_cast<int64_t>(length_) + 1;
  }
  return -1;
}

size_t StreamValue::MemoryUsage() const {
  size_t bytes = sizeof(*this) + data_bytes_ + nodes_.size() * (kTreeNodeBytes + sizeof(NodeMap::value_type));
  for (const auto& [name, g] : groups_) bytes += kTreeNodeBytes + sizeof(std::string) + name.capacity() + g->MemoryUsage();
  return bytes;
}

std::unique_ptr<Object> StreamValue::Clone() const {
  auto copy = std::make_unique<StreamValue>();
  copy->nodes_ = nodes_;
  copy->length_ = length_;
  copy->last_id_ = last_id_;
  copy->first_id_ = first_id_;
  copy->max_deleted_id_ = max_deleted_id_;
  copy->entries_added_ = entries_added_;
  copy->data_bytes_ = 0;
  for (const auto& [id, node] : copy->nodes_) copy->data_bytes_ += node.data.capacity();
  for (const auto& [name, g] : groups_) {
    StreamGroup* cg = copy->CreateGroup(name, g->last_id, g->entries_read);
    for (const auto& [cname, c] : g->consumers()) cg->CreateConsumer(cname, c->seen_time_ms);
    for (const auto& [id, nack] : g->pel()) {
      cg->SetPending(id, cg->FindConsumer(nack.consumer->name), nack.delivery_time_ms, nack.delivery_count);
    }
  }
  return copy;
}

// Snapshot form: version 1 | length | last, max-deleted IDs | entries added |
// each live entry (ID, item count, items) | groups: name, last ID, entries
// read + 1, consumers (name, seen time), pending entries (ID, consumer index,
// delivery time, count). Nodes are rebuilt at the default limits on load.
namespace {
void PutId(std::string* out, StreamId id) {
  PutVarint(out, id.ms);
  PutVarint(out, id.seq);
}
void PutString(std::string* out, std::string_view s) {
  PutVarint(out, s.size());
  out->append(s);
}
bool GetId(std::string_view* in, StreamId* id) { return GetVarint(in, &id->ms) && GetVarint(in, &id->seq); }
bool GetString(std::string_view* in, std::string_view* s) {
  uint64_t len;
  if (!GetVarint(in, &len) || len > in->size()) return false;
  *s = in->substr(0, len);
  in->remove_prefix(len);
  return true;
}
}  // namespace

void StreamValue::SerializeTo(std::string* out) const {
  out->push_back(1);
  PutVarint(out, length_);
  PutId(out, last_id_);
  PutId(out, max_deleted_id_);
  PutVarint(out, entries_added_);
  ForRange({}, StreamId::Max(), false, [&](const StreamEntry& e) {
    PutId(out, e.id);
    PutVarint(out, e.items.size());
    for (std::string_view s : e.items) PutString(out, s);
    return true;
  });
  PutVarint(out, groups_.size());
  for (const auto& [name, g] : groups_) {
    PutString(out, name);
    PutId(out, g->last_id);
    PutVarint(out, static_cast<uint64_t>(g->entries_read + 1));
    PutVarint(out, g->consumers().size());
    for (const auto& [cname, c] : g->consumers()) {
      PutString(out, cname);
      PutVarint(out, static_cast<uint64_t>(c->seen_time_ms));
    }
    PutVarint(out, g->pel().size());
    for (const auto& [id, nack] : g->pel()) {
      PutId(out, id);
      PutString(out, nack.consumer->name);
      PutVarint(out, static_cast<uint64_t>(nack.delivery_time_ms));
      PutVarint(out, nack.delivery_count);
    }
  }
}

Status StreamValue::Decode(std::string_view in, std::unique_ptr<StreamValue>* out) {
  out->reset();
  auto s = std::make_unique<StreamValue>();
  const Status bad = Status::Corruption("stream: bad snapshot form");
  uint64_t length, added;
  StreamId last, max_deleted;
  if (in.empty() || in[0] != 1) return bad;
  in.remove_prefix(1);
  if (!GetVarint(&in, &length) || !GetId(&in, &last) || !GetId(&in, &max_deleted) || !GetVarint(&in, &added)) {
    return bad;
  }
  std::vector<std::string_view> items;
  StreamId prev;
  for (uint64_t i = 0; i < length; ++i) {
    StreamId id;
    uint64_t n;
    if (!GetId(&in, &id) || !GetVarint(&in, &n) || n > in.size() || (i > 0 && id <= prev) || id > last) return bad;
    items.resize(n);
    for (uint64_t j = 0; j < n; ++j) {
      if (!GetString(&in, &items[j])) return bad;
    }
    s->Append(id, items, StreamLimits{});
    prev = id;
  }
  s->SetLastId(last, added, max_deleted);
  uint64_t ngroups;
  if (!GetVarint(&in, &ngroups) || ngroups > in.size()) return bad;
  for (uint64_t i = 0; i < ngroups; ++i) {
    std::string_view name;
    StreamId glast;
    uint64_t read_plus_one, nconsumers, npending;
    if (!GetString(&in, &name) || !GetId(&in, &glast) || !GetVarint(&in, &read_plus_one) ||
        !GetVarint(&in, &nconsumers) || nconsumers > in.size()) {
      return bad;
    }
    StreamGroup* g = s->CreateGroup(name, glast, static_cast<int64_t>(read_plus_one) - 1);
    if (g == nullptr) return bad;
    for (uint64_t j = 0; j < nconsumers; ++j) {
      std::string_view cname;
      uint64_t seen;
      if (!GetString(&in, &cname) || !GetVarint(&in, &seen) ||
          g->CreateConsumer(cname, static_cast<int64_t>(seen)) == nullptr) {
        return bad;
      }
    }
    if (!GetVarint(&in, &npending) || npending > in.size()) return bad;
    for (uint64_t j = 0; j < npending; ++j) {
      StreamId id;
      std::string_view cname;
      uint64_t time, count;
      if (!GetId(&in, &id) || !GetString(&in, &cname) || !GetVarint(&in, &time) || !GetVarint(&in, &count)) {
        return bad;
      }
      StreamConsumer* c = g->FindConsumer(cname);
      if (c == nullptr) return bad;
      g->SetPending(id, c, static_cast<int64_t>(time), count);
    }
  }
  if (!in.empty()) return bad;
  *out = std::move(s);
  return Status::OK();
}

uint64_t StreamValue::Digest() const {
  uint64_t h = 0x73747265616d;  // "stream"
  auto mix = [&](const void* p, size_t n) { h = XXH64(p, n, h + n); };
  mix(&last_id_, sizeof(last_id_));
  ForRange({}, StreamId::Max(), false, [&](const StreamEntry& e) {
    mix(&e.id, sizeof(e.id));
    for (std::string_view s : e.items) mix(s.data(), s.size());
    return true;
  });
  for (const auto& [name, g] : groups_) {
    mix(name.data(), name.size());
    mix(&g->last_id, sizeof(g->last_id));
    for (const auto& [id, nack] : g->pel()) {
      mix(&id, sizeof(id));
      mix(nack.consumer->name.data(), nack.consumer->name.size());
    }
  }
  return h;
}

}  // namespace feedkv
