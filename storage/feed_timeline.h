// FeedTimeline: the value of a feed key — a user's outbox (own posts) or inbox
// (posts delivered by the authors they follow). Entries are fixed-size and
// int64-exact: (ts_ms, post_id, aux), where aux is the author for an inbox and
// flags for an outbox (kPushed: the post was fanned out to inboxes). They are
// kept oldest first in fixed chunks of kChunk entries (as Redis's quicklist keeps
// list nodes): a publish writes at the end and, once the timeline holds its cap,
// the oldest entry goes by moving a head offset; a chunk is allocated every
// kChunk publishes (at a random phase per timeline, so inboxes fed in lockstep do
// not all allocate on the same publish) and freed when its entries have all aged out. Nothing is ever
// copied on the publish path, so a fan-out to thousands of inboxes that grow and
// trim in lockstep costs the same every time (a contiguous array that doubled and
// trimmed by memmove made every 64th such publish take 20-100 ms).
//
// An entry id is written "<ts>-<id>" (the stream-id shape), which makes page
// cursors exact and tie-free. 24 bytes per entry, against ~110 for a member of
// a Redis sorted-set inbox. TYPE answers "feed"; OBJECT ENCODING "timeline".
// Not thread-safe: owned by the command thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "storage/object.h"
#include "storage/status.h"

namespace feedkv {

struct FeedEntry {
  int64_t ts = 0;
  int64_t id = 0;
  int64_t aux = 0;  // inbox: author id; outbox: flags

  // (ts, id) order: the order of a timeline, oldest first.
  bool Before(int64_t ts2, int64_t id2) const { return ts < ts2 || (ts == ts2 && id < id2); }
};

// Parses "<ts>-<id>" (both int64, as XADD ids but signed); false when malformed.
bool ParseFeedEntryId(std::string_view s, int64_t* ts, int64_t* id);
std::string FormatFeedEntryId(int64_t ts, int64_t id);

class FeedTimeline final : public Object {
 public:
  enum class Kind : uint8_t { kOutbox = 0, kInbox = 1 };
  // Outbox flags (FeedEntry::aux).
  static constexpr int64_t kPushed = 1;
  // An author's push/pull choice (FEED.MODE); kAuto follows feed-push-max-followers.
  enum class Mode : uint8_t { kAuto = 0, kPush = 1, kPull = 2 };

  static constexpr size_t kChunk = 64;  // 1,536 bytes

  explicit FeedTimeline(Kind kind) : kind_(kind) {}
  ~FeedTimeline() override;
  FeedTimeline(const FeedTimeline&) = delete;
  FeedTimeline& operator=(const FeedTimeline&) = delete;

  // Object.
  ValueType type() const override { return ValueType::kFeed; }
  std::string_view encoding() const override { return "timeline"; }
  size_t MemoryUsage() const override;
  std::unique_ptr<Object> Clone() const override;
  // u8 kind, u8 mode, varint count, then per entry (oldest first) three
  // zigzag varints: ts, id, aux.
  void SerializeTo(std::string* out) const override;
  uint64_t Digest() const override;
  static Status Decode(std::string_view bytes, std::unique_ptr<FeedTimeline>* out);

  Kind kind() const { return kind_; }
  Mode mode() const { return mode_; }
  void set_mode(Mode m) { mode_ = m; }

  // Entry i, oldest first. REQUIRES: i < size().
  const FeedEntry& at(size_t i) const {
    const size_t p = head_ + i;
    return chunks_[p / kChunk][p % kChunk];
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Inserts in order; false (nothing changed) when (ts, id) is already there. Then
  // drops the oldest entries past `cap`.
  bool Insert(const FeedEntry& e, size_t cap);
  // Inserts a batch, oldest first, as Insert would one by one, in one merging pass
  // (a follow's backfill can be as long as the inbox). False when nothing changed.
  bool Merge(const std::vector<FeedEntry>& oldest_first, size_t cap);
  // Removes the entry (ts, id) / the newest entry with this post id; false if absent.
  bool Remove(int64_t ts, int64_t id);
  bool RemovePost(int64_t id, FeedEntry* removed);
  // Allocates room for the next entry now (FEED.ACTIVATE: an inbox's first chunk is
  // paid for when it is created, not by the first publish that reaches it).
  void ReserveNext() { Grow(); }
  // Drops all but the newest `cap` entries.
  void Trim(size_t cap);
  // Index of the first entry not before (ts, id): entries [0, i) are older.
  size_t LowerBound(int64_t ts, int64_t id) const;
  // Entries whose outbox flags lack kPushed (what readers must pull).
  size_t unpushed() const { return unpushed_; }

 private:
  FeedEntry& slot(size_t i) {
    const size_t p = head_ + i;
    return chunks_[p / kChunk][p % kChunk];
  }
  // Makes room for one more entry at the end.
  void Grow();
  // Frees the last chunk when no entry uses it.
  void ShrinkTail();

  Kind kind_;
  Mode mode_ = Mode::kAuto;
  size_t unpushed_ = 0;
  std::vector<FeedEntry*> chunks_;  // each kChunk entries
  size_t head_ = 0;                 // offset of the oldest entry in chunks_[0]
  size_t size_ = 0;
};

}  // namespace feedkv
