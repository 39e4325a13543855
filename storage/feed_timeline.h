// FeedTimeline: the value of a feed key — a user's outbox (own posts) or inbox
// (posts delivered by the authors they follow). Entries are fixed-size and
// int64-exact: (ts_ms, post_id, aux), where aux is the author for an inbox and
// flags for an outbox (kPushed: the post was fanned out to inboxes). They are
// kept in one array in ascending (ts, id) order, so a publish appends at the end;
// the oldest are trimmed once the array passes its cap by an eighth, so a full
// timeline's trim costs one memmove per cap/8 inserts, not one per insert.
// Readers see only the newest `cap` entries.
//
// An entry id is written "<ts>-<id>" (the stream-id shape), which makes page
// cursors exact and tie-free. 24 bytes per entry, against ~100 for a member of
// a Redis sorted set inbox. TYPE answers "feed"; OBJECT ENCODING "timeline".
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

  explicit FeedTimeline(Kind kind) : kind_(kind) {}

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

  // The newest min(size, cap) entries, oldest first. Views valid until a change.
  const FeedEntry* data() const { return entries_.data(); }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

  // Inserts in order; false (nothing changed) when (ts, id) is already there. Trims
  // the oldest entries once the timeline holds cap + cap/8 + 1 of them.
  bool Insert(const FeedEntry& e, size_t cap);
  // Removes the entry (ts, id) / the first entry with this post id; false if absent.
  bool Remove(int64_t ts, int64_t id);
  bool RemovePost(int64_t id, FeedEntry* removed);
  // Room for n entries (a timeline built at once: FEED.ACTIVATE).
  void Reserve(size_t n);
  // Drops all but the newest `cap` entries.
  void Trim(size_t cap);
  // Index of the first entry not before (ts, id): entries [0, i) are older.
  size_t LowerBound(int64_t ts, int64_t id) const;
  // Entries whose outbox flags lack kPushed (what readers must pull).
  size_t unpushed() const { return unpushed_; }

 private:
  Kind kind_;
  Mode mode_ = Mode::kAuto;
  size_t unpushed_ = 0;
  std::vector<FeedEntry> entries_;
};

}  // namespace feedkv
