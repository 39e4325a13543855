// FEED.* writes: FEED.FOLLOW, FEED.UNFOLLOW, FEED.PUBLISH, FEED.DELETE, FEED.MODE,
// FEED.ACTIVATE, FEED.MARKREAD. A user's feed is a few ordinary keys (see
// feed_helpers.h); every write is deterministic given the dataset, so it is logged
// as received and replays and replicates to the same state. What depends on the
// clock (the idle expiry of an inbox, the lifetime of deleted ids) is logged as an
// explicit PEXPIREAT beside the command. The reads are in cmd_feed_read.cc;
// docs/feeds.md has the model and the measurements.
#include <algorithm>
#include <string>
#include <vector>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/commands/feed_helpers.h"
#include "server/ops/set_ops.h"
#include "server/monotonic_clock.h"
#include "server/server.h"
#include "storage/database.h"
#include "storage/feed_timeline.h"
#include "storage/set_value.h"

namespace feedkv::server {

namespace {

// A FEED.* command's keyspace event (class d, docs/pubsub.md): the command's
// name on the user id it names, once per command that changed something.
void NotifyFeed(CommandContext& ctx) { ctx.Notify(kNotifyModule, ctx.spec.name, ctx.arg(1)); }

// Adds `id` to the longset at `key` (created when missing); true if it was new.
bool AddId(CommandContext& ctx, const std::string& key, int64_t id) {
  Entry* e;
  SetValue* set;
  if (Status st = set_ops::FindForWrite(ctx, key, set_ops::Accept::kAnySet, &e, &set); !st.ok()) {
    ctx.Error(st);
    return false;
  }
  if (set == nullptr) {
    std::unique_ptr<SetValue> fresh;
    if (!SetValue::FromInts(std::span<const int64_t>(&id, 1), set_ops::Options(ctx), &fresh).ok()) return false;
    ctx.db().SetObject(key, std::move(fresh), kNoExpire, false);
    ctx.Touched(ctx.client.db, key);
    return true;
  }
  size_t added = 0;
  if (!set->AddInts(std::span<const int64_t>(&id, 1), set_ops::Options(ctx), &added).ok() || added == 0) return false;
  ctx.db().UpdateObjectMemory(e);
  ctx.Touched(ctx.client.db, key);
  return true;
}

bool RemoveId(CommandContext& ctx, const std::string& key, int64_t id) {
  Entry* e;
  SetValue* set;
  if (Status st = set_ops::FindForWrite(ctx, key, set_ops::Accept::kAnySet, &e, &set); !st.ok()) {
    ctx.Error(st);
    return false;
  }
  if (set == nullptr || !set->RemoveInt(id)) return false;
  set_ops::AfterRemoval(ctx, key, e, set);
  ctx.Touched(ctx.client.db, key);
  return true;
}

// The timeline at `key`, created empty when missing; null after replying WRONGTYPE
// (a write never replaces another type's key).
FeedTimeline* TimelineForWrite(CommandContext& ctx, const std::string& key, FeedTimeline::Kind kind,
                               Entry** entry) {
  Entry* e = ctx.db().Find(key);
  if (e != nullptr && e->has_expire) e = ctx.db().Lookup(key, ctx.now_ms());
  if (e == nullptr) {
    e = ctx.db().SetObject(key, std::make_unique<FeedTimeline>(kind), kNoExpire, false);
  } else if (e->type != ValueType::kFeed ||
             static_cast<FeedTimeline*>(Database::GetObject(e))->kind() != kind) {
    ctx.WrongType();
    return nullptr;
  }
  *entry = e;
  return static_cast<FeedTimeline*>(Database::GetObject(e));
}

// Sets `key`'s expire `seconds` from now and logs it as PEXPIREAT after the
// command itself (replayed, the command sets none: the clock stands still there).
void ExpireFromNow(CommandContext& ctx, const std::string& key, int64_t seconds) {
  if (ctx.from_log || seconds <= 0) return;
  const int64_t at = ctx.now_ms() + seconds * 1000;
  ctx.db().SetExpire(key, at);
  if (ctx.rewritten().empty()) ctx.PropagateAs(std::vector<std::string>(ctx.args.begin(), ctx.args.end()));
  ctx.PropagateAs({"PEXPIREAT", key, std::to_string(at)});
}

// Keeps feed:pull-authors in step with whether the author's outbox holds posts
// that readers must pull.
void SyncPullAuthor(CommandContext& ctx, int64_t author, const FeedTimeline* outbox) {
  const std::string key(kPullAuthorsKey);
  if (outbox != nullptr && outbox->unpushed() > 0) {
    AddId(ctx, key, author);
  } else {
    RemoveId(ctx, key, author);
  }
}

// FEED.FOLLOW uid target
void FeedFollow(CommandContext& ctx) {
  int64_t uid, target;
  if (!ctx.IntArg(1, &uid) || !ctx.IntArg(2, &target)) return;
  if (uid == target) return ctx.Error(protocol::err::kFeedSelfFollow);
  const std::string following = FeedKey(uid, "following");
  if (!AddId(ctx, following, target)) {
    if (!ctx.failed()) ctx.reply.Integer(0);
    return;
  }
  AddId(ctx, FeedKey(target, "followers"), uid);
  ctx.Dirty();
  NotifyFeed(ctx);
  // Backfill a push-mode author's newest posts into an existing inbox.
  const ServerConfig& cfg = ctx.server.cfg();
  FeedTimeline* inbox = FindTimeline(ctx, FeedKey(uid, "inbox"), FeedTimeline::Kind::kInbox);
  const FeedTimeline* outbox = FindTimeline(ctx, FeedKey(target, "outbox"), FeedTimeline::Kind::kOutbox);
  if (inbox != nullptr && outbox != nullptr && cfg.feed_follow_backfill > 0) {
    size_t left = static_cast<size_t>(cfg.feed_follow_backfill);
    std::vector<FeedEntry> posts;  // newest first
    for (size_t i = outbox->size(); i-- > 0 && left > 0;) {
      const FeedEntry& p = outbox->at(i);
      if (!(p.aux & FeedTimeline::kPushed)) continue;  // pulled at read time
      posts.push_back(FeedEntry{p.ts, p.id, target});
      --left;
    }
    std::reverse(posts.begin(), posts.end());
    if (inbox->Merge(posts, static_cast<size_t>(cfg.feed_inbox_max_len))) {
      const std::string key = FeedKey(uid, "inbox");
      ctx.db().UpdateObjectMemory(ctx.db().Find(key));
      ctx.Touched(ctx.client.db, key);
    }
  }
  ctx.reply.Integer(1);
}

// FEED.UNFOLLOW uid target
void FeedUnfollow(CommandContext& ctx) {
  int64_t uid, target;
  if (!ctx.IntArg(1, &uid) || !ctx.IntArg(2, &target)) return;
  if (!RemoveId(ctx, FeedKey(uid, "following"), target)) {
    if (!ctx.failed()) ctx.reply.Integer(0);
    return;
  }
  RemoveId(ctx, FeedKey(target, "followers"), uid);
  ctx.Dirty();
  NotifyFeed(ctx);
  ctx.reply.Integer(1);  // the inbox's entries from target are skipped at read time
}

// FEED.PUBLISH author post_id ts_ms
void FeedPublish(CommandContext& ctx) {
  int64_t author, post, ts;
  if (!ctx.IntArg(1, &author) || !ctx.IntArg(2, &post) || !ctx.IntArg(3, &ts)) return;
  const ServerConfig& cfg = ctx.server.cfg();
  const std::string outbox_key = FeedKey(author, "outbox");
  Entry* e;
  FeedTimeline* outbox = TimelineForWrite(ctx, outbox_key, FeedTimeline::Kind::kOutbox, &e);
  if (outbox == nullptr) return;
  const bool push = PushMode(ctx, author, outbox);
  if (!outbox->Insert(FeedEntry{ts, post, push ? FeedTimeline::kPushed : 0},
                      static_cast<size_t>(cfg.feed_outbox_max_len))) {
    if (outbox->empty()) ctx.db().Delete(outbox_key);
    return ctx.reply.Integer(0);  // already published
  }
  ctx.db().UpdateObjectMemory(e);
  ctx.Touched(ctx.client.db, outbox_key);
  ctx.Dirty();
  NotifyFeed(ctx);
  SyncPullAuthor(ctx, author, outbox);
  int64_t written = 0;
  if (push) {
    const int64_t start = MonotonicClock::NowNs();
    const SetValue* followers = FindIdSet(ctx, FeedKey(author, "followers"));
    if (followers != nullptr && followers->is_longset()) {
      const auto cap = static_cast<size_t>(cfg.feed_inbox_max_len);
      followers->longset().ForEach([&](int64_t f) {
        const std::string key = FeedKey(f, "inbox");
        Entry* ie = ctx.db().Find(key);
        // An inbox past its idle expiry goes now, its DEL logged before this command,
        // so a replica applies both in the same order.
        if (ie != nullptr && ie->has_expire) ie = ctx.db().Lookup(key, ctx.now_ms());
        if (ie == nullptr || ie->type != ValueType::kFeed) return;
        auto* inbox = static_cast<FeedTimeline*>(Database::GetObject(ie));
        if (inbox->kind() != FeedTimeline::Kind::kInbox) return;
        if (inbox->Insert(FeedEntry{ts, post, author}, cap)) {
          ctx.db().UpdateObjectMemory(ie);
          ctx.Touched(ctx.client.db, key);
          ++written;
        }
      });
    }
    FeedStats& st = ctx.server.stats().feeds;
    st.fanout_writes += static_cast<uint64_t>(written);
    st.fanout_usec_max = std::max(st.fanout_usec_max, (MonotonicClock::NowNs() - start) / 1000);
  }
  ctx.reply.Integer(written);
}

// FEED.DELETE author post_id
void FeedDelete(CommandContext& ctx) {
  int64_t author, post;
  if (!ctx.IntArg(1, &author) || !ctx.IntArg(2, &post)) return;
  const std::string outbox_key = FeedKey(author, "outbox");
  FeedTimeline* outbox = FindTimeline(ctx, outbox_key, FeedTimeline::Kind::kOutbox);
  FeedEntry removed;
  const bool had = outbox != nullptr && outbox->RemovePost(post, &removed);
  if (had) {
    ctx.Touched(ctx.client.db, outbox_key);
    ctx.db().UpdateObjectMemory(ctx.db().Find(outbox_key));
    SyncPullAuthor(ctx, author, outbox);
  }
  // Inbox copies are filtered at read time by this set, and age out of inboxes.
  const std::string deleted_key = FeedKey(author, "deleted");
  const bool recorded = AddId(ctx, deleted_key, post);
  if (ctx.failed()) return;
  if (had || recorded) {
    ctx.Dirty();
    NotifyFeed(ctx);
    ExpireFromNow(ctx, deleted_key, ctx.server.cfg().feed_delete_ttl);
  }
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
  const std::string key = FeedKey(author, "outbox");
  Entry* e;
  FeedTimeline* outbox = TimelineForWrite(ctx, key, FeedTimeline::Kind::kOutbox, &e);
  if (outbox == nullptr) return;
  if (outbox->mode() != mode) {
    outbox->set_mode(mode);
    ctx.Touched(ctx.client.db, key);
    ctx.Dirty();
    NotifyFeed(ctx);
  }
  ctx.reply.Ok();
}

// FEED.ACTIVATE uid: (re)builds the inbox from the fanned-out posts of the authors
// uid follows (posts that were not fanned out are pulled at read time).
void FeedActivate(CommandContext& ctx) {
  int64_t uid;
  if (!ctx.IntArg(1, &uid)) return;
  const ServerConfig& cfg = ctx.server.cfg();
  std::vector<FeedSource> sources;
  if (const SetValue* following = FindIdSet(ctx, FeedKey(uid, "following"));
      following != nullptr && following->is_longset()) {
    following->longset().ForEach([&](int64_t a) {
      if (sources.size() >= static_cast<size_t>(cfg.feed_pull_max_followings)) return;
      const FeedTimeline* ob = FindTimeline(ctx, FeedKey(a, "outbox"), FeedTimeline::Kind::kOutbox);
      if (ob != nullptr) sources.push_back(FeedSource{ob, a, 1});
    });
  }
  PageRequest req;
  req.limit = static_cast<size_t>(cfg.feed_inbox_max_len);
  req.cap_outbox = static_cast<size_t>(cfg.feed_outbox_max_len);
  uint64_t skipped = 0;
  const std::vector<MergedEntry> merged = MergeFeed(sources, req, nullptr, &skipped);
  auto inbox = std::make_unique<FeedTimeline>(FeedTimeline::Kind::kInbox);
  for (size_t i = merged.size(); i-- > 0;) {
    inbox->Insert(FeedEntry{merged[i].ts, merged[i].id, merged[i].author}, req.limit);
  }
  inbox->ReserveNext();
  const std::string key = FeedKey(uid, "inbox");
  ctx.db().SetObject(key, std::move(inbox), kNoExpire, false);
  ctx.Touched(ctx.client.db, key);
  ctx.Dirty();
  NotifyFeed(ctx);
  ctx.server.stats().feeds.inbox_rebuilds++;
  ExpireFromNow(ctx, key, cfg.feed_inbox_idle_ttl);
  ctx.reply.Integer(static_cast<int64_t>(merged.size()));
}

// FEED.MARKREAD uid <ts>-<id>: the read mark never moves back.
void FeedMarkRead(CommandContext& ctx) {
  int64_t uid, ts, id;
  if (!ctx.IntArg(1, &uid)) return;
  if (!ParseFeedEntryId(ctx.arg(2), &ts, &id)) return ctx.Error(protocol::err::kFeedBadEntryId);
  const std::string key = FeedKey(uid, "mark");
  Entry* e = ctx.db().Find(key);
  if (e != nullptr && e->has_expire) e = ctx.db().Lookup(key, ctx.now_ms());
  int64_t cur_ts, cur_id;
  std::string scratch;
  const bool has_mark = e != nullptr && e->type == ValueType::kString &&
                        ParseFeedEntryId(Database::StringValue(e, &scratch), &cur_ts, &cur_id);
  if (!has_mark || (cur_ts < ts || (cur_ts == ts && cur_id < id))) {
    ctx.db().SetString(key, FormatFeedEntryId(ts, id), kNoExpire, false);
    ctx.Touched(ctx.client.db, key);
    ctx.Dirty();
    NotifyFeed(ctx);
  }
  // Reading keeps an inbox alive.
  const std::string inbox_key = FeedKey(uid, "inbox");
  if (FindTimeline(ctx, inbox_key, FeedTimeline::Kind::kInbox) != nullptr) {
    ctx.Dirty();
    ExpireFromNow(ctx, inbox_key, ctx.server.cfg().feed_inbox_idle_ttl);
  }
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
