// The feed write operations: the layer between the FEED.* write commands (server/
// commands/cmd_feed.cc) and the keys a user's feed lives under (server/ops/
// feed_reads.h: follow longsets, outbox and inbox timelines, the read mark, the
// deleted-post set), as server/ops/set_ops.h is for sets. An operation changes those
// keys together and keeps the keyspace's books (dirty count, one keyspace event per
// command that changed something, memory, WATCH) and the log's form: a command is
// logged as received, and what depends on the clock (an inbox's idle expiry, the
// lifetime of deleted ids) as an explicit PEXPIREAT after it. It returns a value or
// a Status (WrongType when a write would replace a key of another type) and never
// writes a reply.
//
// Command thread only, like the Database it changes.
#pragma once

#include <cstdint>

#include "server/command_context.h"
#include "storage/feed_timeline.h"
#include "storage/status.h"

namespace feedkv::server::feed_ops {

// FEED.FOLLOW: uid follows target (both follow sets change); false when it already
// did. Backfills uid's inbox, if it has one, from a push-mode author's newest posts.
StatusOr<bool> Follow(CommandContext& ctx, int64_t uid, int64_t target);
// FEED.UNFOLLOW: false when uid did not follow target. The inbox keeps target's
// entries; reads skip them.
StatusOr<bool> Unfollow(CommandContext& ctx, int64_t uid, int64_t target);

// FEED.PUBLISH: adds the post to the author's outbox and, in push mode, to the inbox
// of each follower that has one; how many inboxes it reached (0 when the post was
// already published).
StatusOr<int64_t> Publish(CommandContext& ctx, int64_t author, int64_t post, int64_t ts);
// FEED.DELETE: removes the post from the outbox (whether it was there) and records it
// as deleted, so reads skip its inbox copies.
StatusOr<bool> Delete(CommandContext& ctx, int64_t author, int64_t post);
// FEED.MODE: the author's fan-out mode (the outbox is created when missing).
Status SetMode(CommandContext& ctx, int64_t author, FeedTimeline::Mode mode);
// FEED.ACTIVATE: rebuilds uid's inbox from the fanned-out posts of the authors uid
// follows; the number of entries.
StatusOr<size_t> Activate(CommandContext& ctx, int64_t uid);
// FEED.MARKREAD: moves uid's read mark to (ts, id) unless it is already past it;
// keeps the inbox alive.
Status MarkRead(CommandContext& ctx, int64_t uid, int64_t ts, int64_t id);

}  // namespace feedkv::server::feed_ops
