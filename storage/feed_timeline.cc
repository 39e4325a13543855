// FeedTimeline. See feed_timeline.h.
#include "storage/feed_timeline.h"

#include <algorithm>
#include <charconv>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "storage/int_text.h"
#include "storage/varint.h"

namespace feedkv {

namespace {

uint64_t ZigZag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

}  // namespace

bool ParseFeedEntryId(std::string_view s, int64_t* ts, int64_t* id) {
  // The separator is the first '-' after the first character (ts may be negative).
  const size_t dash = s.find('-', 1);
  if (dash == std::string_view::npos) return false;
  return ParseCanonicalInt64(s.substr(0, dash), ts) && ParseCanonicalInt64(s.substr(dash + 1), id);
}

std::string FormatFeedEntryId(int64_t ts, int64_t id) {
  char buf[48];
  char* p = std::to_chars(buf, buf + 24, ts).ptr;
  *p++ = '-';
  p = std::to_chars(p, buf + sizeof(buf), id).ptr;
  return std::string(buf, p);
}

size_t FeedTimeline::MemoryUsage() const {
  return sizeof(FeedTimeline) + 16 + entries_.capacity() * sizeof(FeedEntry);
}

std::unique_ptr<Object> FeedTimeline::Clone() const {
  auto t = std::make_unique<FeedTimeline>(kind_);
  t->mode_ = mode_;
  t->unpushed_ = unpushed_;
  t->entries_ = entries_;
  return t;
}

void FeedTimeline::SerializeTo(std::string* out) const {
  out->push_back(static_cast<char>(kind_));
  out->push_back(static_cast<char>(mode_));
  PutVarint(out, entries_.size());
  for (const FeedEntry& e : entries_) {
    PutVarint(out, ZigZag(e.ts));
    PutVarint(out, ZigZag(e.id));
    PutVarint(out, ZigZag(e.aux));
  }
}

uint64_t FeedTimeline::Digest() const {
  uint64_t h = XXH64(entries_.data(), entries_.size() * sizeof(FeedEntry), 0);
  return h ^ (static_cast<uint64_t>(kind_) << 1) ^ (static_cast<uint64_t>(mode_) << 3);
}

Status FeedTimeline::Decode(std::string_view in, std::unique_ptr<FeedTimeline>* out) {
  out->reset();
  if (in.size() < 2 || static_cast<uint8_t>(in[0]) > 1 || static_cast<uint8_t>(in[1]) > 2) {
    return Status::Corruption("feed: bad kind or mode");
  }
  auto t = std::make_unique<FeedTimeline>(static_cast<Kind>(in[0]));
  t->mode_ = static_cast<Mode>(in[1]);
  in.remove_prefix(2);
  uint64_t n;
  if (!GetVarint(&in, &n) || n > in.size() / 3) return Status::Corruption("feed: bad entry count");
  t->entries_.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t ts, id, aux;
    if (!GetVarint(&in, &ts) || !GetVarint(&in, &id) || !GetVarint(&in, &aux)) {
      return Status::Corruption("feed: truncated entry");
    }
    FeedEntry e{UnZigZag(ts), UnZigZag(id), UnZigZag(aux)};
    if (!t->entries_.empty() && !t->entries_.back().Before(e.ts, e.id)) {
      return Status::Corruption("feed: entries out of order");
    }
    if (t->kind_ == Kind::kOutbox && !(e.aux & kPushed)) ++t->unpushed_;
    t->entries_.push_back(e);
  }
  if (!in.empty()) return Status::Corruption("feed: trailing bytes");
  *out = std::move(t);
  return Status::OK();
}

size_t FeedTimeline::LowerBound(int64_t ts, int64_t id) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), 0,
                             [&](const FeedEntry& e, int) { return e.Before(ts, id); });
  return static_cast<size_t>(it - entries_.begin());
}

bool FeedTimeline::Insert(const FeedEntry& e, size_t cap) {
  size_t i = entries_.size();
  if (i > 0 && !entries_.back().Before(e.ts, e.id)) {
    i = LowerBound(e.ts, e.id);  // not the newest: rare (clock skew, backfill)
    if (i < entries_.size() && entries_[i].ts == e.ts && entries_[i].id == e.id) return false;
  }
  if (entries_.size() == entries_.capacity()) {
    // Grow by doubling, but never past what the cap lets the timeline hold.
    entries_.reserve(std::min(std::max<size_t>(8, entries_.size() * 2), cap + cap / 8 + 1));
  }
  entries_.insert(entries_.begin() + static_cast<std::ptrdiff_t>(i), e);
  if (kind_ == Kind::kOutbox && !(e.aux & kPushed)) ++unpushed_;
  if (entries_.size() > cap + cap / 8) Trim(cap);
  return true;
}

void FeedTimeline::Reserve(size_t n) { entries_.reserve(n); }

void FeedTimeline::Trim(size_t cap) {
  if (entries_.size() <= cap) return;
  const size_t drop = entries_.size() - cap;
  if (kind_ == Kind::kOutbox) {
    for (size_t i = 0; i < drop; ++i) unpushed_ -= (entries_[i].aux & kPushed) ? 0 : 1;
  }
  entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(drop));
}

bool FeedTimeline::Remove(int64_t ts, int64_t id) {
  const size_t i = LowerBound(ts, id);
  if (i >= entries_.size() || entries_[i].ts != ts || entries_[i].id != id) return false;
  if (kind_ == Kind::kOutbox && !(entries_[i].aux & kPushed)) --unpushed_;
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
  return true;
}

bool FeedTimeline::RemovePost(int64_t id, FeedEntry* removed) {
  for (size_t i = entries_.size(); i-- > 0;) {
    if (entries_[i].id == id) {
      *removed = entries_[i];
      return Remove(removed->ts, removed->id);
    }
  }
  return false;
}

}  // namespace feedkv
