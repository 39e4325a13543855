// FeedTimeline. See feed_timeline.h.
#include "storage/feed_timeline.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <new>
#include <random>

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

FeedTimeline::~FeedTimeline() {
  for (FeedEntry* c : chunks_) std::free(c);
}

size_t FeedTimeline::MemoryUsage() const {
  // malloc's 16-byte rounding plus its 8-byte header per block.
  constexpr size_t kChunkCost = (kChunk * sizeof(FeedEntry) + 8 + 15) / 16 * 16;
  return sizeof(FeedTimeline) + 16 + chunks_.capacity() * sizeof(FeedEntry*) +
         chunks_.size() * kChunkCost;
}

std::unique_ptr<Object> FeedTimeline::Clone() const {
  auto t = std::make_unique<FeedTimeline>(kind_);
  t->mode_ = mode_;
  for (size_t i = 0; i < size_; ++i) {
    t->Grow();
    t->slot(t->size_++) = at(i);
  }
  t->unpushed_ = unpushed_;
  return t;
}

void FeedTimeline::SerializeTo(std::string* out) const {
  out->push_back(static_cast<char>(kind_));
  out->push_back(static_cast<char>(mode_));
  PutVarint(out, size_);
  for (size_t i = 0; i < size_; ++i) {
    const FeedEntry& e = at(i);
    PutVarint(out, ZigZag(e.ts));
    PutVarint(out, ZigZag(e.id));
    PutVarint(out, ZigZag(e.aux));
  }
}

uint64_t FeedTimeline::Digest() const {
  uint64_t h = (static_cast<uint64_t>(kind_) << 1) ^ (static_cast<uint64_t>(mode_) << 3);
  for (size_t i = 0; i < size_; ++i) h = XXH64(&at(i), sizeof(FeedEntry), h);
  return h;
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
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t ts, id, aux;
    if (!GetVarint(&in, &ts) || !GetVarint(&in, &id) || !GetVarint(&in, &aux)) {
      return Status::Corruption("feed: truncated entry");
    }
    FeedEntry e{UnZigZag(ts), UnZigZag(id), UnZigZag(aux)};
    if (t->size_ > 0 && !t->at(t->size_ - 1).Before(e.ts, e.id)) {
      return Status::Corruption("feed: entries out of order");
    }
    if (t->kind_ == Kind::kOutbox && !(e.aux & kPushed)) ++t->unpushed_;
    t->Grow();
    t->slot(t->size_++) = e;
  }
  if (!in.empty()) return Status::Corruption("feed: trailing bytes");
  *out = std::move(t);
  return Status::OK();
}

size_t FeedTimeline::LowerBound(int64_t ts, int64_t id) const {
  size_t lo = 0, hi = size_;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (at(mid).Before(ts, id)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

void FeedTimeline::Grow() {
  if (head_ + size_ < chunks_.size() * kChunk) return;
  if (chunks_.empty()) {
    // The first entry goes at a random place in the first chunk, so timelines fed
    // the same posts in lockstep (the inboxes of one author's followers) need their
    // next chunk on different publishes: a fan-out allocates ~followers/kChunk
    // chunks each time instead of all of them every kChunk-th time.
    thread_local std::mt19937 rng{std::random_device{}()};
    head_ = rng() % kChunk;
  }
  auto* c = static_cast<FeedEntry*>(std::malloc(kChunk * sizeof(FeedEntry)));
  if (c == nullptr) throw std::bad_alloc();
  chunks_.push_back(c);
}

void FeedTimeline::ShrinkTail() {
  if (size_ == 0) {
    for (FeedEntry* c : chunks_) std::free(c);
    chunks_.clear();
    head_ = 0;
    return;
  }
  while ((chunks_.size() - 1) * kChunk >= head_ + size_) {
    std::free(chunks_.back());
    chunks_.pop_back();
  }
}

bool FeedTimeline::Insert(const FeedEntry& e, size_t cap) {
  size_t i = size_;
  if (size_ > 0 && !at(size_ - 1).Before(e.ts, e.id)) {
    i = LowerBound(e.ts, e.id);  // not the newest: rare (clock skew, backfill)
    if (i < size_ && at(i).ts == e.ts && at(i).id == e.id) return false;
    if (i == 0 && size_ >= cap) return false;  // older than everything a full timeline keeps
  }
  Grow();
  for (size_t k = size_; k > i; --k) slot(k) = slot(k - 1);
  slot(i) = e;
  ++size_;
  if (kind_ == Kind::kOutbox && !(e.aux & kPushed)) ++unpushed_;
  Trim(cap);
  return true;
}

bool FeedTimeline::Merge(const std::vector<FeedEntry>& oldest_first, size_t cap) {
  if (oldest_first.size() <= 4) {
    bool changed = false;
    for (auto it = oldest_first.rbegin(); it != oldest_first.rend(); ++it) changed |= Insert(*it, cap);
    return changed;
  }
  std::vector<FeedEntry> merged;
  merged.reserve(size_ + oldest_first.size());
  size_t i = 0, j = 0, added = 0;
  while (i < size_ || j < oldest_first.size()) {
    if (j == oldest_first.size() || (i < size_ && !oldest_first[j].Before(at(i).ts, at(i).id))) {
      const FeedEntry& mine = at(i++);
      // Skip batch entries equal to an entry already here (the existing one stays).
      while (j < oldest_first.size() && oldest_first[j].ts == mine.ts && oldest_first[j].id == mine.id) ++j;
      merged.push_back(mine);
    } else {
      const FeedEntry& e = oldest_first[j++];
      if (merged.empty() || merged.back().Before(e.ts, e.id)) {  // drop batch duplicates
        merged.push_back(e);
        ++added;
      }
    }
  }
  const size_t keep_from = merged.size() > cap ? merged.size() - cap : 0;
  // Nothing new survives the cap: the timeline is unchanged (as Insert would leave it).
  bool changed = false;
  for (size_t k = keep_from; k < merged.size() && !changed; ++k) {
    changed = k - keep_from >= size_ || merged[k].ts != at(k - keep_from).ts ||
              merged[k].id != at(k - keep_from).id;
  }
  changed |= merged.size() - keep_from != size_;
  if (!changed || added == 0) return false;
  for (FeedEntry* c : chunks_) std::free(c);
  chunks_.clear();
  head_ = 0;
  size_ = 0;
  unpushed_ = 0;
  for (size_t k = keep_from; k < merged.size(); ++k) {
    Grow();
    slot(size_++) = merged[k];
    if (kind_ == Kind::kOutbox && !(merged[k].aux & kPushed)) ++unpushed_;
  }
  return true;
}

void FeedTimeline::Trim(size_t cap) {
  if (size_ <= cap) return;
  const size_t drop = size_ - cap;
  if (kind_ == Kind::kOutbox) {
    for (size_t k = 0; k < drop; ++k) unpushed_ -= (at(k).aux & kPushed) ? 0 : 1;
  }
  head_ += drop;
  size_ -= drop;
  // Chunks whose entries all aged out go (at most a few pointers move).
  const size_t gone = head_ / kChunk;
  if (gone > 0) {
    for (size_t k = 0; k < gone; ++k) std::free(chunks_[k]);
    chunks_.erase(chunks_.begin(), chunks_.begin() + static_cast<std::ptrdiff_t>(gone));
    head_ -= gone * kChunk;
  }
}

bool FeedTimeline::Remove(int64_t ts, int64_t id) {
  const size_t i = LowerBound(ts, id);
  if (i >= size_ || at(i).ts != ts || at(i).id != id) return false;
  if (kind_ == Kind::kOutbox && !(at(i).aux & kPushed)) --unpushed_;
  for (size_t k = i; k + 1 < size_; ++k) slot(k) = slot(k + 1);
  --size_;
  ShrinkTail();
  return true;
}

bool FeedTimeline::RemovePost(int64_t id, FeedEntry* removed) {
  for (size_t i = size_; i-- > 0;) {
    if (at(i).id == id) {
      *removed = at(i);
      return Remove(removed->ts, removed->id);
    }
  }
  return false;
}

}  // namespace feedkv
