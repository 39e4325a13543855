// FEED.* reads: FEED.TIMELINE, FEED.UNREAD, FEED.INFO. Read-only, so replicas
// serve them. A page is one k-way merge (feed_reads.h) of the reader's own
// outbox, their inbox (entries of authors they still follow) and the outboxes of
// the authors they follow whose posts were not fanned out (pull mode); a reader
// without an inbox pulls every author they follow. Deleted posts are skipped.
#include <string>
#include <unordered_map>
#include <vector>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/ops/feed_reads.h"
#include "server/server.h"
#include "storage/database.h"
#include "storage/feed_timeline.h"
#include "storage/set_value.h"

namespace feedkv::server {

namespace {

// The sources of uid's timeline and the filter that drops deleted and unfollowed
// entries.
struct TimelinePlan {
  std::vector<FeedSource> sources;
  const SetValue* following = nullptr;
  bool has_inbox = false;
  size_t pulled = 0;
};

TimelinePlan PlanTimeline(CommandContext& ctx, int64_t uid) {
  const ServerConfig& cfg = ctx.server.cfg();
  TimelinePlan plan;
  plan.following = FindIdSet(ctx, FeedKey(uid, "following"));
  if (plan.following != nullptr && !plan.following->is_longset()) plan.following = nullptr;
  if (const FeedTimeline* own = FindTimeline(ctx, FeedKey(uid, "outbox"), FeedTimeline::Kind::kOutbox)) {
    plan.sources.push_back(FeedSource{own, uid, -1});
  }
  const FeedTimeline* inbox = FindTimeline(ctx, FeedKey(uid, "inbox"), FeedTimeline::Kind::kInbox);
  plan.has_inbox = inbox != nullptr;
  if (inbox != nullptr) plan.sources.push_back(FeedSource{inbox, -1, -1});
  if (plan.following == nullptr) return plan;
  auto pull = [&](int64_t author, int pushed) {
    if (plan.pulled >= static_cast<size_t>(cfg.feed_pull_max_followings)) return;
    const FeedTimeline* ob = FindTimeline(ctx, FeedKey(author, "outbox"), FeedTimeline::Kind::kOutbox);
    if (ob == nullptr) return;
    plan.sources.push_back(FeedSource{ob, author, pushed});
    ++plan.pulled;
  };
  if (inbox == nullptr) {
    // No inbox: every followed author's posts come from their outbox.
    plan.following->longset().ForEach([&](int64_t a) { pull(a, -1); });
    return plan;
  }
  // The inbox holds fanned-out posts; the rest come from the pull authors' outboxes.
  const SetValue* pull_authors = FindIdSet(ctx, std::string(kPullAuthorsKey));
  if (pull_authors == nullptr || !pull_authors->is_longset()) return plan;
  const LongSet& small = pull_authors->size() < plan.following->size() ? pull_authors->longset()
                                                                     : plan.following->longset();
  const LongSet& big = &small == &pull_authors->longset() ? plan.following->longset()
                                                          : pull_authors->longset();
  small.ForEach([&](int64_t a) {
    if (big.Contains(a)) pull(a, 0);
  });
  return plan;
}

// Runs a merge for uid with the deleted / unfollowed filter.
std::vector<MergedEntry> Merge(CommandContext& ctx, int64_t uid, const TimelinePlan& plan,
                               const PageRequest& req) {
  std::unordered_map<int64_t, const SetValue*> deleted;  // per author, looked up once
  auto skip = [&](const MergedEntry& e) {
    if (e.author != uid && (plan.following == nullptr || !plan.following->ContainsInt(e.author))) {
      return true;  // an inbox entry of an author no longer followed
    }
    auto [it, fresh] = deleted.try_emplace(e.author, nullptr);
    if (fresh) it->second = FindIdSet(ctx, FeedKey(e.author, "deleted"));
    return it->second != nullptr && it->second->ContainsInt(e.id);
  };
  uint64_t skipped = 0;
  std::vector<MergedEntry> page = MergeFeed(plan.sources, req, skip, &skipped);
  FeedStats& st = ctx.server.stats().feeds;
  st.deleted_filtered += skipped;
  st.pull_merges += plan.pulled;
  if (!plan.has_inbox) st.inbox_misses++;
  return page;
}

PageRequest BaseRequest(CommandContext& ctx) {
  const ServerConfig& cfg = ctx.server.cfg();
  PageRequest req;
  req.cap_inbox = static_cast<size_t>(cfg.feed_inbox_max_len);
  req.cap_outbox = static_cast<size_t>(cfg.feed_outbox_max_len);
  return req;
}

// FEED.TIMELINE uid [BEFORE <ts>-<id> | AFTER <ts>-<id>] [COUNT n]
void FeedTimelineCmd(CommandContext& ctx) {
  int64_t uid;
  if (!ctx.IntArg(1, &uid)) return;
  PageRequest req = BaseRequest(ctx);
  for (size_t i = 2; i < ctx.argc(); i += 2) {
    if (i + 1 >= ctx.argc()) return ctx.SyntaxError();
    const std::string_view opt = ctx.arg(i);
    if ((EqualsIgnoreCase(opt, "before") || EqualsIgnoreCase(opt, "after")) && !req.has_cursor) {
      if (!ParseFeedEntryId(ctx.arg(i + 1), &req.ts, &req.id)) return ctx.Error(protocol::err::kFeedBadEntryId);
      req.has_cursor = true;
      req.after = EqualsIgnoreCase(opt, "after");
    } else if (EqualsIgnoreCase(opt, "count")) {
      int64_t n;
      if (!ctx.IntArg(i + 1, &n)) return;
      if (n < 1) return ctx.Error(protocol::err::kCountNotPositive);
      req.limit = static_cast<size_t>(std::min<int64_t>(n, ctx.server.cfg().feed_max_page));
    } else {
      return ctx.SyntaxError();
    }
  }
  const TimelinePlan plan = PlanTimeline(ctx, uid);
  const std::vector<MergedEntry> page = Merge(ctx, uid, plan, req);
  ctx.server.stats().feeds.timeline_pages++;
  ctx.reply.ArrayHeader(page.size());
  for (const MergedEntry& e : page) {
    ctx.reply.ArrayHeader(2);
    ctx.reply.Bulk(FormatFeedEntryId(e.ts, e.id));
    ctx.reply.Integer(e.author);
  }
}

// FEED.UNREAD uid: entries newer than the read mark, up to feed-unread-cap.
void FeedUnread(CommandContext& ctx) {
  int64_t uid;
  if (!ctx.IntArg(1, &uid)) return;
  PageRequest req = BaseRequest(ctx);
  req.limit = static_cast<size_t>(ctx.server.cfg().feed_unread_cap);
  req.has_cursor = ReadMark(ctx, uid, &req.ts, &req.id);
  req.after = req.has_cursor;
  const TimelinePlan plan = PlanTimeline(ctx, uid);
  ctx.reply.Integer(static_cast<int64_t>(Merge(ctx, uid, plan, req).size()));
}

// FEED.INFO uid
void FeedInfo(CommandContext& ctx) {
  int64_t uid;
  if (!ctx.IntArg(1, &uid)) return;
  const SetValue* following = FindIdSet(ctx, FeedKey(uid, "following"));
  const SetValue* followers = FindIdSet(ctx, FeedKey(uid, "followers"));
  const FeedTimeline* outbox = FindTimeline(ctx, FeedKey(uid, "outbox"), FeedTimeline::Kind::kOutbox);
  const std::string inbox_key = FeedKey(uid, "inbox");
  const FeedTimeline* inbox = FindTimeline(ctx, inbox_key, FeedTimeline::Kind::kInbox);
  const ServerConfig& cfg = ctx.server.cfg();
  protocol::ReplyWriter& r = ctx.reply;
  r.MapHeader(8);
  r.Bulk("following");
  r.Integer(following != nullptr ? static_cast<int64_t>(following->size()) : 0);
  r.Bulk("followers");
  r.Integer(followers != nullptr ? static_cast<int64_t>(followers->size()) : 0);
  r.Bulk("mode");
  r.Bulk(PushMode(ctx, uid, outbox) ? "push" : "pull");
  r.Bulk("mode_setting");
  const auto mode = outbox != nullptr ? outbox->mode() : FeedTimeline::Mode::kAuto;
  r.Bulk(mode == FeedTimeline::Mode::kAuto ? "auto" : mode == FeedTimeline::Mode::kPush ? "push" : "pull");
  r.Bulk("inbox_len");
  if (inbox != nullptr) {
    r.Integer(static_cast<int64_t>(std::min<size_t>(inbox->size(), static_cast<size_t>(cfg.feed_inbox_max_len))));
  } else {
    r.Null();
  }
  r.Bulk("outbox_len");
  r.Integer(outbox != nullptr ? static_cast<int64_t>(std::min<size_t>(outbox->size(), static_cast<size_t>(cfg.feed_outbox_max_len))) : 0);
  r.Bulk("read_mark");
  int64_t ts, id;
  if (ReadMark(ctx, uid, &ts, &id)) {
    r.Bulk(FormatFeedEntryId(ts, id));
  } else {
    r.Null();
  }
  // When the inbox was last kept alive (FEED.ACTIVATE / FEED.MARKREAD): its idle
  // expire minus feed-inbox-idle-ttl.
  r.Bulk("last_active");
  const Entry* ie = inbox != nullptr ? ctx.db().Find(inbox_key) : nullptr;
  if (ie != nullptr && ie->has_expire) {
    r.Integer(ie->expire_ms() - cfg.feed_inbox_idle_ttl * 1000);
  } else {
    r.Null();
  }
}

constexpr KeyFlags kUserKey = {kKeyNotKey | kKeyRO | kKeyAccess};

const CommandSpec kCommands[] = {
    {"feed.timeline", -2, kReadOnly, 1, 1, 1, FeedTimelineCmd, "Returns one page of a user's timeline, newest first: their posts and those of the authors they follow.", "feed", {}, kUserKey},
    {"feed.unread", 2, kReadOnly | kFast, 1, 1, 1, FeedUnread, "Returns the number of timeline entries newer than a user's read mark.", "feed", {}, kUserKey},
    {"feed.info", 2, kReadOnly | kFast, 1, 1, 1, FeedInfo, "Returns a user's follow counts, fan-out mode, inbox and outbox lengths and read mark.", "feed", {}, kUserKey},
};

}  // namespace

std::span<const CommandSpec> FeedReadCommands() { return kCommands; }

}  // namespace feedkv::server
