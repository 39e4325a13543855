#include "server/ops/feed_ops.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "server/ops/feed_reads.h"
#include "server/monotonic_clock.h"
#include "server/ops/set_ops.h"
#include "server/server.h"
#include "storage/database.h"
#include "storage/set_value.h"

namespace feedkv::server::feed_ops {

namespace {

// A FEED.* command's keyspace event (class d, docs/pubsub.md): the command's
// name on the user id it names, once per command that changed something.
void NotifyFeed(CommandContext& ctx) { ctx.Notify(kNotifyModule, ctx.spec.name, ctx.arg(1)); }

// Adds `id` to the longset at `key` (created when missing); whether it was new.
StatusOr<bool> AddId(CommandContext& ctx, const std::string& key, int64_t id) {
  Entry* e;
  SetValue* set;
  if (Status st = set_ops::FindForWrite(ctx, key, set_ops::Accept::kAnySet, &e, &set); !st.ok()) return st;
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

// WrongType when `key` holds something other than a set: checked before a
// command's first change, so a follow changes both sets or neither.
Status CheckIdSet(CommandContext& ctx, const std::string& key) {
  Entry* e;
  SetValue* set;
  return set_ops::FindForWrite(ctx, key, set_ops::Accept::kAnySet, &e, &set);
}

StatusOr<bool> RemoveId(CommandContext& ctx, const std::string& key, int64_t id) {
  Entry* e;
  SetValue* set;
  if (Status st = set_ops::FindForWrite(ctx, key, set_ops::Accept::kAnySet, &e, &set); !st.ok()) return st;
  if (set == nullptr || !set->RemoveInt(id)) return false;
  set_ops::AfterRemoval(ctx, key, e, set);
  ctx.Touched(ctx.client.db, key);
  return true;
}

// The timeline at `key`, created empty when missing (a write never replaces
// another type's key).
StatusOr<FeedTimeline*> TimelineForWrite(CommandContext& ctx, const std::string& key, FeedTimeline::Kind kind,
                                         Entry** entry) {
  Entry* e = ctx.db().Find(key);
  if (e != nullptr && e->has_expire) e = ctx.db().Lookup(key, ctx.now_ms());
  if (e == nullptr) {
    e = ctx.db().SetObject(key, std::make_unique<FeedTimeline>(kind), kNoExpire, false);
  } else if (e->type != ValueType::kFeed ||
             static_cast<FeedTimeline*>(Database::GetObject(e))->kind() != kind) {
    return Status::WrongType();
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
// that readers must pull. (Another type at that key is left alone.)
void SyncPullAuthor(CommandContext& ctx, int64_t author, const FeedTimeline* outbox) {
  const std::string key(kPullAuthorsKey);
  if (outbox != nullptr && outbox->unpushed() > 0) {
    AddId(ctx, key, author).status().PermitUnchecked();
  } else {
    RemoveId(ctx, key, author).status().PermitUnchecked();
  }
}

// Copies a push-mode author's newest fanned-out posts into uid's inbox, if uid has one.
void Backfill(CommandContext& ctx, int64_t uid, int64_t target) {
  const ServerConfig& cfg = ctx.server.cfg();
  FeedTimeline* inbox = FindTimeline(ctx, FeedKey(uid, "inbox"), FeedTimeline::Kind::kInbox);
  const FeedTimeline* outbox = FindTimeline(ctx, FeedKey(target, "outbox"), FeedTimeline::Kind::kOutbox);
  if (inbox == nullptr || outbox == nullptr || cfg.feed_follow_backfill <= 0) return;
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

// Inserts the post into the inbox of each of the author's followers that has one.
int64_t FanOut(CommandContext& ctx, int64_t author, int64_t post, int64_t ts) {
  const SetValue* followers = FindIdSet(ctx, FeedKey(author, "followers"));
  if (followers == nullptr || !followers->is_longset()) return 0;
  const auto cap = static_cast<size_t>(ctx.server.cfg().feed_inbox_max_len);
  int64_t written = 0;
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
  return written;
}

}  // namespace

StatusOr<bool> Follow(CommandContext& ctx, int64_t uid, int64_t target) {
  if (Status st = CheckIdSet(ctx, FeedKey(target, "followers")); !st.ok()) return st;
  StatusOr<bool> added = AddId(ctx, FeedKey(uid, "following"), target);
  if (!added.ok() || !*added) return added;
  AddId(ctx, FeedKey(target, "followers"), uid).status().PermitUnchecked();
  ctx.Dirty();
  NotifyFeed(ctx);
  Backfill(ctx, uid, target);
  return true;
}

StatusOr<bool> Unfollow(CommandContext& ctx, int64_t uid, int64_t target) {
  if (Status st = CheckIdSet(ctx, FeedKey(target, "followers")); !st.ok()) return st;
  StatusOr<bool> removed = RemoveId(ctx, FeedKey(uid, "following"), target);
  if (!removed.ok() || !*removed) return removed;
  RemoveId(ctx, FeedKey(target, "followers"), uid).status().PermitUnchecked();
  ctx.Dirty();
  NotifyFeed(ctx);
  return true;
}

StatusOr<int64_t> Publish(CommandContext& ctx, int64_t author, int64_t post, int64_t ts) {
  const ServerConfig& cfg = ctx.server.cfg();
  const std::string outbox_key = FeedKey(author, "outbox");
  Entry* e;
  StatusOr<FeedTimeline*> found = TimelineForWrite(ctx, outbox_key, FeedTimeline::Kind::kOutbox, &e);
  if (!found.ok()) return found.status();
  FeedTimeline* outbox = *found;
  const bool push = PushMode(ctx, author, outbox);
  if (!outbox->Insert(FeedEntry{ts, post, push ? FeedTimeline::kPushed : 0},
                      static_cast<size_t>(cfg.feed_outbox_max_len))) {
    if (outbox->empty()) ctx.db().Delete(outbox_key);
    return int64_t{0};  // already published
  }
  ctx.db().UpdateObjectMemory(e);
  ctx.Touched(ctx.client.db, outbox_key);
  ctx.Dirty();
  NotifyFeed(ctx);
  SyncPullAuthor(ctx, author, outbox);
  if (!push) return int64_t{0};
  const int64_t start = MonotonicClock::NowNs();
  const int64_t written = FanOut(ctx, author, post, ts);
  FeedStats& st = ctx.server.stats().feeds;
  st.fanout_writes += static_cast<uint64_t>(written);
  st.fanout_usec_max = std::max(st.fanout_usec_max, (MonotonicClock::NowNs() - start) / 1000);
  return written;
}

StatusOr<bool> Delete(CommandContext& ctx, int64_t author, int64_t post) {
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
  StatusOr<bool> recorded = AddId(ctx, deleted_key, post);
  if (!recorded.ok()) return recorded.status();
  if (had || *recorded) {
    ctx.Dirty();
    NotifyFeed(ctx);
    ExpireFromNow(ctx, deleted_key, ctx.server.cfg().feed_delete_ttl);
  }
  return had;
}

Status SetMode(CommandContext& ctx, int64_t author, FeedTimeline::Mode mode) {
  const std::string key = FeedKey(author, "outbox");
  Entry* e;
  StatusOr<FeedTimeline*> outbox = TimelineForWrite(ctx, key, FeedTimeline::Kind::kOutbox, &e);
  if (!outbox.ok()) return outbox.status();
  if ((*outbox)->mode() != mode) {
    (*outbox)->set_mode(mode);
    ctx.Touched(ctx.client.db, key);
    ctx.Dirty();
    NotifyFeed(ctx);
  }
  return Status::OK();
}

StatusOr<size_t> Activate(CommandContext& ctx, int64_t uid) {
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
  return merged.size();
}

Status MarkRead(CommandContext& ctx, int64_t uid, int64_t ts, int64_t id) {
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
  return Status::OK();
}

}  // namespace feedkv::server::feed_ops
