// FEED.* writes: FEED.FOLLOW, FEED.UNFOLLOW, FEED.PUBLISH, FEED.DELETE, FEED.MODE,
// FEED.ACTIVATE, FEED.MARKREAD. Each parses, calls server/ops/feed_ops and replies.
// A user's feed is a few ordinary keys (see feed_reads.h); every write is
// deterministic given the dataset, so it is logged as received and replays and
// replicates to the same state. What depends on the clock (the idle expiry of an
// inbox, the lifetime of deleted ids) is logged as an explicit PEXPIREAT beside the
// command. The reads are in cmd_feed_read.cc; docs/feeds.md has the model and the
// measurements.
#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/ops/feed_ops.h"
#include "storage/feed_timeline.h"

namespace feedkv::server {

namespace {

// FEED.FOLLOW uid target
void FeedFollow(CommandContext& ctx) {
  int64_t uid, target;
  if (!ctx.IntArg(1, &uid) || !ctx.IntArg(2, &target)) return;
  if (uid == target) return ctx.Error(protocol::err::kFeedSelfFollow);
  bool followed;
  if (!ctx.Found(feed_ops::Follow(ctx, uid, target), &followed)) return;
  ctx.reply.Integer(followed ? 1 : 0);
}

// FEED.UNFOLLOW uid target
void FeedUnfollow(CommandContext& ctx) {
  int64_t uid, target;
  if (!ctx.IntArg(1, &uid) || !ctx.IntArg(2, &target)) return;
  bool unfollowed;
  if (!ctx.Found(feed_ops::Unfollow(ctx, uid, target), &unfollowed)) return;
  ctx.reply.Integer(unfollowed ? 1 : 0);
}

// FEED.PUBLISH author post_id ts_ms: the number of inboxes written (0 when the post
// was already there).
void FeedPublish(CommandContext& ctx) {
  int64_t author, post, ts;
  if (!ctx.IntArg(1, &author) || !ctx.IntArg(2, &post) || !ctx.IntArg(3, &ts)) return;
  int64_t inboxes;
  if (!ctx.Found(feed_ops::Publish(ctx, author, post, ts), &inboxes)) return;
  ctx.reply.Integer(inboxes);
}

// FEED.DELETE author post_id
void FeedDelete(CommandContext& ctx) {
  int64_t author, post;
  if (!ctx.IntArg(1, &author) || !ctx.IntArg(2, &post)) return;
  bool had;
  if (!ctx.Found(feed_ops::Delete(ctx, author, post), &had)) return;
  ctx.reply.Integer(had ? 1 : 0);
}

// FEED.MODE author PUSH|PULL|AUTO
void FeedMode(CommandContext& ctx) {
  int64_t author;
  if (!ctx.IntArg(1, &author)) return;
  FeedTimeline::Mode mode;
  if (EqualsIgnoreCase(ctx.arg(2), "push")) {
    mode = FeedTimeline::Mode::kPush;
  } else if (EqualsIgnoreCase(ctx.arg(2), "pull")) {
    mode = FeedTimeline::Mode::kPull;
  } else if (EqualsIgnoreCase(ctx.arg(2), "auto")) {
    mode = FeedTimeline::Mode::kAuto;
  } else {
    return ctx.SyntaxError();
  }
  if (Status st = feed_ops::SetMode(ctx, author, mode); !st.ok()) return ctx.Error(st);
  ctx.reply.Ok();
}

// FEED.ACTIVATE uid: (re)builds the inbox from the fanned-out posts of the authors
// uid follows (posts that were not fanned out are pulled at read time).
void FeedActivate(CommandContext& ctx) {
  int64_t uid;
  if (!ctx.IntArg(1, &uid)) return;
  size_t entries;
  if (!ctx.Found(feed_ops::Activate(ctx, uid), &entries)) return;
  ctx.reply.Integer(static_cast<int64_t>(entries));
}

// FEED.MARKREAD uid <ts>-<id>: the read mark never moves back.
void FeedMarkRead(CommandContext& ctx) {
  int64_t uid, ts, id;
  if (!ctx.IntArg(1, &uid)) return;
  if (!ParseFeedEntryId(ctx.arg(2), &ts, &id)) return ctx.Error(protocol::err::kFeedBadEntryId);
  if (Status st = feed_ops::MarkRead(ctx, uid, ts, id); !st.ok()) return ctx.Error(st);
  ctx.reply.Ok();
}

constexpr uint32_t kW = kWrite | kDenyOom;
constexpr KeyFlags kUserKey = {kKeyNotKey | kKeyRW | kKeyUpdate};

const CommandSpec kCommands[] = {
    {"feed.follow", 3, kW | kFast, 1, 1, 1, FeedFollow, "Makes a user follow another: both follow sets change in one step; backfills the inbox from a push-mode author.", "feed", {}, kUserKey},
    {"feed.unfollow", 3, kWrite | kFast, 1, 1, 1, FeedUnfollow, "Makes a user stop following another.", "feed", {}, kUserKey},
    {"feed.publish", 4, kW, 1, 1, 1, FeedPublish, "Appends a post to its author's outbox and fans it out to the inboxes of a push-mode author's followers.", "feed", {}, kUserKey},
    {"feed.delete", 3, kWrite | kFast, 1, 1, 1, FeedDelete, "Deletes a post from its author's outbox; timelines skip its copies.", "feed", {}, kUserKey},
    {"feed.mode", 3, kW | kFast, 1, 1, 1, FeedMode, "Sets an author's fan-out mode: PUSH, PULL or AUTO.", "feed", {}, kUserKey},
    {"feed.activate", 2, kW, 1, 1, 1, FeedActivate, "Builds or rebuilds a user's inbox from the authors they follow.", "feed", {}, kUserKey},
    {"feed.markread", 3, kW | kFast, 1, 1, 1, FeedMarkRead, "Moves a user's read mark forward.", "feed", {}, kUserKey},
};

}  // namespace

std::span<const CommandSpec> FeedCommands() { return kCommands; }

}  // namespace feedkv::server
