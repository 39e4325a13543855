#include "storage/stream_rdb.h"

#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "storage/int_text.h"

namespace feedkv {

namespace {

namespace rp = redis_payload;

constexpr int64_t kFlagDeleted = 1;
constexpr int64_t kFlagSameFields = 2;
constexpr size_t kNodeEntries = 100;

std::string RawId(StreamId id) {
  std::string out(16, '\0');
  for (int i = 0; i < 8; ++i) {
    out[static_cast<size_t>(i)] = static_cast<char>((id.ms >> (56 - 8 * i)) & 0xff);
    out[static_cast<size_t>(8 + i)] = static_cast<char>((id.seq >> (56 - 8 * i)) & 0xff);
  }
  return out;
}

StreamId FromRawId(std::string_view raw) {
  StreamId id;
  for (int i = 0; i < 8; ++i) {
    id.ms = (id.ms << 8) | static_cast<uint8_t>(raw[static_cast<size_t>(i)]);
    id.seq = (id.seq << 8) | static_cast<uint8_t>(raw[static_cast<size_t>(8 + i)]);
  }
  return id;
}

std::string MsTime(int64_t t) {
  std::string out(8, '\0');
  const auto u = static_cast<uint64_t>(t);
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>((u >> (8 * i)) & 0xff);
  return out;
}

bool ReadMsTime(rp::Reader* r, int64_t* t) {
  std::string_view raw;
  if (!r->Raw(8, &raw)) return false;
  uint64_t u = 0;
  for (int i = 7; i >= 0; --i) u = (u << 8) | static_cast<uint8_t>(raw[static_cast<size_t>(i)]);
  *t = static_cast<int64_t>(u);
  return true;
}

bool ReadId(rp::Reader* r, StreamId* id) { return r->Length(&id->ms) && r->Length(&id->seq); }

// One node's listpack from live entries that share its first entry as master.
std::string NodeListpack(const std::vector<std::pair<StreamId, std::vector<std::string_view>>>& entries) {
  rp::ListpackWriter lp;
  const StreamId master = entries.front().first;
  const std::vector<std::string_view>& items0 = entries.front().second;
  lp.Integer(static_cast<int64_t>(entries.size()));
  lp.Integer(0);
  lp.Integer(static_cast<int64_t>(items0.size() / 2));
  for (size_t i = 0; i < items0.size(); i += 2) lp.String(items0[i]);
  lp.Integer(0);
  for (const auto& [id, items] : entries) {
    bool same = items.size() == items0.size();
    for (size_t i = 0; same && i < items.size(); i += 2) same = items[i] == items0[i];
    lp.Integer(same ? kFlagSameFields : 0);
    lp.Integer(static_cast<int64_t>(id.ms - master.ms));
    lp.Integer(static_cast<int64_t>(id.seq - master.seq));
    if (!same) lp.Integer(static_cast<int64_t>(items.size() / 2));
    for (size_t i = 0; i < items.size(); ++i) {
      if (!same || i % 2 == 1) lp.String(items[i]);
    }
    lp.Integer(static_cast<int64_t>(3 + (same ? items.size() / 2 : 1 + items.size())));
  }
  return lp.Finish();
}

}  // namespace

void WriteRedisStream(const StreamValue& s, rp::Writer* w) {
  std::vector<std::vector<std::pair<StreamId, std::vector<std::string_view>>>> nodes;
  s.ForRange({}, StreamId::Max(), false, [&](const StreamEntry& e) {
    if (nodes.empty() || nodes.back().size() == kNodeEntries) nodes.emplace_back();
    nodes.back().emplace_back(e.id, std::vector<std::string_view>(e.items.begin(), e.items.end()));
    return true;
  });
  w->Length(nodes.size());
  for (const auto& node : nodes) {
    w->String(RawId(node.front().first));
    w->String(NodeListpack(node));
  }
  w->Length(s.length());
  w->Length(s.last_id().ms);
  w->Length(s.last_id().seq);
  w->Length(s.first_id().ms);
  w->Length(s.first_id().seq);
  w->Length(s.max_deleted_id().ms);
  w->Length(s.max_deleted_id().seq);
  w->Length(s.entries_added());
  w->Length(s.groups().size());
  for (const auto& [name, g] : s.groups()) {
    w->String(name);
    w->Length(g->last_id.ms);
    w->Length(g->last_id.seq);
    w->Length(static_cast<uint64_t>(g->entries_read));
    w->Length(g->pel().size());
    for (const auto& [id, nack] : g->pel()) {
      w->Raw(RawId(id));
      w->Raw(MsTime(nack.delivery_time_ms));
      w->Length(nack.delivery_count);
    }
    w->Length(g->consumers().size());
    for (const auto& [cname, c] : g->consumers()) {
      w->String(cname);
      w->Raw(MsTime(c->seen_time_ms));
      w->Length(c->pending.size());
      for (const auto& row : c->pending) w->Raw(RawId(row.key));
    }
  }
}

namespace {

// The live entries of one node's listpack, appended to `s` in order.
bool ReadNode(std::string_view key, std::string_view lp, StreamValue* s) {
  std::vector<std::string> el;
  if (!rp::ForEachListpackEntry(lp, [&](std::string_view v) { el.emplace_back(v); })) return false;
  size_t i = 0;
  auto next_int = [&](int64_t* v) { return i < el.size() && ParseCanonicalInt64(el[i++], v); };
  const StreamId master = FromRawId(key);
  int64_t live, deleted, nmaster, zero;
  if (!next_int(&live) || !next_int(&deleted) || !next_int(&nmaster) || nmaster < 0 ||
      static_cast<uint64_t>(nmaster) > el.size()) {
    return false;
  }
  const size_t master_at = i;
  i += static_cast<size_t>(nmaster);
  if (!next_int(&zero) || zero != 0) return false;
  std::vector<std::string_view> items;
  int64_t seen_live = 0;
  while (i < el.size()) {
    int64_t flags, dms, dseq, nf, lpcount;
    if (!next_int(&flags) || !next_int(&dms) || !next_int(&dseq)) return false;
    const StreamId id{master.ms + static_cast<uint64_t>(dms), master.seq + static_cast<uint64_t>(dseq)};
    items.clear();
    if (flags & kFlagSameFields) {
      if (i + static_cast<size_t>(nmaster) > el.size()) return false;
      for (int64_t f = 0; f < nmaster; ++f) {
        items.push_back(el[master_at + static_cast<size_t>(f)]);
        items.push_back(el[i++]);
      }
    } else {
      if (!next_int(&nf) || nf < 0 || static_cast<uint64_t>(nf) * 2 > el.size() - i) return false;
      for (int64_t f = 0; f < 2 * nf; ++f) items.push_back(el[i++]);
    }
    if (!next_int(&lpcount)) return false;
    if (flags & kFlagDeleted) continue;
    if (s->length() > 0 && id <= s->last_id()) return false;
    s->Append(id, items, StreamLimits{});
    ++seen_live;
  }
  return seen_live == live;
}

}  // namespace

bool ReadRedisStream(rp::Reader* r, uint8_t rdb_type, std::unique_ptr<StreamValue>* out) {
  const bool v2 = rdb_type == rp::kStreamListpacks2;
  auto s = std::make_unique<StreamValue>();
  uint64_t nodes;
  if (!r->Length(&nodes)) return false;
  for (uint64_t n = 0; n < nodes; ++n) {
    std::string key, lp;
    if (!r->String(&key) || key.size() != 16 || !r->String(&lp) || !ReadNode(key, lp, s.get())) return false;
  }
  uint64_t length, added;
  StreamId last, first, max_deleted;
  if (!r->Length(&length) || !ReadId(r, &last) || length != s->length()) return false;
  if (v2) {
    if (!ReadId(r, &first) || !ReadId(r, &max_deleted) || !r->Length(&added)) return false;
  } else {
    added = length;
  }
  if (s->length() > 0) {
    StreamId top;
    s->EdgeId(false, &top);
    if (last < top) return false;
  }
  s->SetLastId(last, added, max_deleted);
  uint64_t ngroups;
  if (!r->Length(&ngroups)) return false;
  for (uint64_t gi = 0; gi < ngroups; ++gi) {
    std::string name;
    StreamId glast;
    if (!r->String(&name) || !ReadId(r, &glast)) return false;
    int64_t entries_read;
    if (v2) {
      uint64_t u;
      if (!r->Length(&u)) return false;
      entries_read = static_cast<int64_t>(u);
    } else {
      entries_read = s->EntriesAddedBefore(glast);
    }
    StreamGroup* g = s->CreateGroup(name, glast, entries_read);
    if (g == nullptr) return false;
    struct Pending {
      int64_t time;
      uint64_t count;
      bool owned = false;
    };
    std::map<StreamId, Pending> pel;
    uint64_t npel;
    if (!r->Length(&npel)) return false;
    for (uint64_t k = 0; k < npel; ++k) {
      std::string_view raw;
      Pending p;
      if (!r->Raw(16, &raw) || !ReadMsTime(r, &p.time) || !r->Length(&p.count)) return false;
      if (!pel.emplace(FromRawId(raw), p).second) return false;
    }
    uint64_t nconsumers;
    if (!r->Length(&nconsumers)) return false;
    for (uint64_t k = 0; k < nconsumers; ++k) {
      std::string cname;
      int64_t seen;
      uint64_t nowned;
      if (!r->String(&cname) || !ReadMsTime(r, &seen) || !r->Length(&nowned)) return false;
      StreamConsumer* c = g->CreateConsumer(cname, seen);
      if (c == nullptr) return false;
      for (uint64_t o = 0; o < nowned; ++o) {
        std::string_view raw;
        if (!r->Raw(16, &raw)) return false;
        auto it = pel.find(FromRawId(raw));
        if (it == pel.end() || it->second.owned) return false;
        it->second.owned = true;
        g->SetPending(it->first, c, it->second.time, it->second.count);
      }
    }
    // Every pending entry belongs to a consumer, as Redis's deep sanitization checks.
    for (const auto& [id, p] : pel) {
      if (!p.owned) return false;
    }
  }
  *out = std::move(s);
  return true;
}

}  // namespace feedkv
