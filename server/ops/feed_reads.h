// The feed reads of the operation layer, shared by the FEED.* read commands
// (server/commands/cmd_feed_read.cc) and the write operations (feed_ops.h): the keys
// a user's feed lives under, their lookups, and the k-way merge that builds a
// timeline page (and an inbox at FEED.ACTIVATE). A lookup never counts a keyspace
// hit or miss and never fails: a key of another type reads as absent.
//
// Command thread only, like the Database it reads.
//
// Keys, all ordinary keyspace keys (TYPE, SCAN, DEL, EXPIRE, persistence and
// replication see them), hash-tagged by the user id so one user's keys share a
// cluster slot:
//   feed:{uid}:following, feed:{uid}:followers   longsets of user ids
//   feed:{uid}:outbox                            FeedTimeline, own posts
//   feed:{uid}:inbox                             FeedTimeline, delivered posts
//   feed:{uid}:mark                              string "<ts>-<id>", the read mark
//   feed:{uid}:deleted                           longset of deleted post ids (TTL)
//   feed:pull-authors                            longset: authors whose outbox holds
//                                                posts that were not fanned out
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "server/command_context.h"
#include "storage/feed_timeline.h"
#include "storage/set_value.h"

namespace feedkv::server {

std::string FeedKey(int64_t uid, std::string_view part);
inline constexpr std::string_view kPullAuthorsKey = "feed:pull-authors";

// The feed timeline at `key` of the given kind, or null (missing, or another type:
// a feed command never fails on a key an application reused; it treats it as
// absent, except where the command writes it).
FeedTimeline* FindTimeline(CommandContext& ctx, std::string_view key, FeedTimeline::Kind kind);
// The longset at `key`, or null.
SetValue* FindIdSet(CommandContext& ctx, std::string_view key);
// The read mark of uid (feed:{uid}:mark, "<ts>-<id>"): false when none is set.
bool ReadMark(CommandContext& ctx, int64_t uid, int64_t* ts, int64_t* id);

// Whether `author` fans out now: FEED.MODE, else followers <= feed-push-max-followers.
bool PushMode(CommandContext& ctx, int64_t author, const FeedTimeline* outbox);

// One input of a merge: the newest `cap` entries of a timeline, each attributed to
// `author` (or, for an inbox, to its entry's aux), optionally only entries with or
// without the kPushed flag.
struct FeedSource {
  const FeedTimeline* timeline = nullptr;
  int64_t author = -1;   // -1: the entry's aux is its author (inbox)
  int pushed = -1;       // -1: every entry; 0: only unpushed; 1: only pushed
};

struct MergedEntry {
  int64_t ts, id, author;
};

// A timeline page: the entries of `sources`, newest first, strictly older than
// the cursor or, with `after`, the `limit` entries just newer than it (still
// newest first). Entries for which skip(entry) holds are left out and counted in
// *skipped; equal (ts, id, author) entries from two sources count once. Each
// source contributes at most its newest `cap` entries (inbox or outbox cap).
struct PageRequest {
  bool has_cursor = false;
  bool after = false;
  int64_t ts = 0, id = 0;
  size_t limit = 20;
  size_t cap_inbox = 800, cap_outbox = 800;
};
std::vector<MergedEntry> MergeFeed(const std::vector<FeedSource>& sources, const PageRequest& req,
                                   const std::function<bool(const MergedEntry&)>& skip,
                                   uint64_t* skipped);

}  // namespace feedkv::server
