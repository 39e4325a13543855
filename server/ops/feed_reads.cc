// The FEED.* commands' keys, lookups and timeline merge. See feed_reads.h.
#include "server/ops/feed_reads.h"

#include <algorithm>
#include <charconv>
#include <queue>

#include "server/server.h"
#include "storage/database.h"

namespace feedkv::server {

std::string FeedKey(int64_t uid, std::string_view part) {
  char buf[24];
  char* end = std::to_chars(buf, buf + sizeof(buf), uid).ptr;
  std::string key = "feed:{";
  key.append(buf, end);
  key += "}:";
  key += part;
  return key;
}

namespace {
Entry* FindLive(CommandContext& ctx, std::string_view key) {
  Entry* e = ctx.db().Find(key);
  if (e != nullptr && e->has_expire) e = ctx.db().Lookup(key, ctx.now_ms());
  return e;
}
}  // namespace

FeedTimeline* FindTimeline(CommandContext& ctx, std::string_view key, FeedTimeline::Kind kind) {
  Entry* e = FindLive(ctx, key);
  if (e == nullptr || e->type != ValueType::kFeed) return nullptr;
  auto* t = static_cast<FeedTimeline*>(Database::GetObject(e));
  return t->kind() == kind ? t : nullptr;
}

SetValue* FindIdSet(CommandContext& ctx, std::string_view key) {
  Entry* e = FindLive(ctx, key);
  if (e == nullptr || e->type != ValueType::kSet) return nullptr;
  return static_cast<SetValue*>(Database::GetObject(e));
}

bool ReadMark(CommandContext& ctx, int64_t uid, int64_t* ts, int64_t* id) {
  const std::string key = FeedKey(uid, "mark");
  Entry* e = FindLive(ctx, key);
  if (e == nullptr || e->type != ValueType::kString) return false;
  std::string scratch;
  return ParseFeedEntryId(Database::StringValue(e, &scratch), ts, id);
}

bool PushMode(CommandContext& ctx, int64_t author, const FeedTimeline* outbox) {
  if (outbox != nullptr && outbox->mode() != FeedTimeline::Mode::kAuto) {
    return outbox->mode() == FeedTimeline::Mode::kPush;
  }
  const SetValue* followers = FindIdSet(ctx, FeedKey(author, "followers"));
  const size_t n = followers != nullptr ? followers->size() : 0;
  return static_cast<int64_t>(n) <= ctx.server.cfg().feed_push_max_followers;
}

namespace {

// A source's window of entries and its walk position.
struct Cursor {
  const FeedSource* src;
  size_t lo, hi;  // the window [lo, hi) of entries in range
  size_t pos;     // the next entry: walking down, pos - 1; walking up, pos

  bool Accepts(const FeedEntry& e) const {
    if (src->pushed < 0) return true;
    const bool pushed = (e.aux & FeedTimeline::kPushed) != 0;
    return pushed == (src->pushed == 1);
  }
  MergedEntry At(size_t i) const {
    const FeedEntry& e = src->timeline->at(i);
    return MergedEntry{e.ts, e.id, src->author >= 0 ? src->author : e.aux};
  }
};

bool Newer(const MergedEntry& a, const MergedEntry& b) {
  if (a.ts != b.ts) return a.ts > b.ts;
  if (a.id != b.id) return a.id > b.id;
  return a.author > b.author;
}

}  // namespace

std::vector<MergedEntry> MergeFeed(const std::vector<FeedSource>& sources, const PageRequest& req,
                                   const std::function<bool(const MergedEntry&)>& skip,
                                   uint64_t* skipped) {
  std::vector<Cursor> cursors;
  cursors.reserve(sources.size());
  for (const FeedSource& s : sources) {
    const FeedTimeline* t = s.timeline;
    if (t == nullptr || t->empty()) continue;
    const size_t cap = t->kind() == FeedTimeline::Kind::kInbox ? req.cap_inbox : req.cap_outbox;
    Cursor c{&s, t->size() > cap ? t->size() - cap : 0, t->size(), 0};
    if (req.has_cursor) {
      size_t at = t->LowerBound(req.ts, req.id);  // first entry not older than the cursor
      if (req.after) {
        if (at < t->size() && t->at(at).ts == req.ts && t->at(at).id == req.id) ++at;
        c.lo = std::max(c.lo, at);
      } else {
        c.hi = std::min(c.hi, at);
      }
    }
    if (c.lo >= c.hi) continue;
    c.pos = req.after ? c.lo : c.hi;
    cursors.push_back(c);
  }
  // Walking down (newest first) or up (oldest first, for AFTER), one heap of the
  // sources' next entries.
  const bool up = req.has_cursor && req.after;
  auto next = [&](Cursor& c, MergedEntry* out) {
    while (up ? c.pos < c.hi : c.pos > c.lo) {
      const size_t i = up ? c.pos++ : --c.pos;
      if (c.Accepts(c.src->timeline->at(i))) {
        *out = c.At(i);
        return true;
      }
    }
    return false;
  };
  using Item = std::pair<MergedEntry, size_t>;
  auto worse = [up](const Item& a, const Item& b) { return up ? Newer(a.first, b.first) : Newer(b.first, a.first); };
  std::priority_queue<Item, std::vector<Item>, decltype(worse)> heap(worse);
  for (size_t k = 0; k < cursors.size(); ++k) {
    MergedEntry e;
    if (next(cursors[k], &e)) heap.push({e, k});
  }
  std::vector<MergedEntry> out;
  bool have_last = false;
  MergedEntry last{};
  while (!heap.empty() && out.size() < req.limit) {
    auto [e, k] = heap.top();
    heap.pop();
    MergedEntry n;
    if (next(cursors[k], &n)) heap.push({n, k});
    if (have_last && e.ts == last.ts && e.id == last.id && e.author == last.author) continue;
    have_last = true;
    last = e;
    if (skip && skip(e)) {
      ++*skipped;
      continue;
    }
    out.push_back(e);
  }
  if (up) std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace feedkv::server
