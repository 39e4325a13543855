// Stream consumer groups: XGROUP (CREATE, SETID, DESTROY, CREATECONSUMER,
// DELCONSUMER), XACK, XPENDING, XCLAIM, XAUTOCLAIM and XINFO (STREAM, GROUPS,
// CONSUMERS). XREADGROUP is with XREAD (cmd_stream_reads.cc). Semantics,
// replies and error texts follow Redis 7.0's t_stream.c; the structures are
// storage/stream_group.h.
//
// What is logged: XCLAIM and XAUTOCLAIM are logged as one idempotent XCLAIM per
// entry they claimed or dropped (... 0 id TIME t RETRYCOUNT n FORCE JUSTID
// LASTID g), and a moved group ID as XGROUP SETID, as Redis propagates them;
// the other commands as they were sent.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/commands/stream_args.h"
#include "server/ops/stream_ops.h"
#include "server/server.h"
#include "storage/database.h"

namespace feedkv::server {

namespace {

// XGROUP CREATE key group id|$ [MKSTREAM] [ENTRIESREAD n] / SETID key group id|$ [ENTRIESREAD n] /
// DESTROY key group / CREATECONSUMER key group consumer / DELCONSUMER key group consumer
void XGroup(CommandContext& ctx) {
  const std::string_view sub = ctx.arg(1);
  if (EqualsIgnoreCase(sub, "help")) {
    if (ctx.argc() != 2) return ctx.SubcommandError();
    return ctx.ReplyHelp({
        "CREATE <key> <groupname> <id|$> [option]",
        "    Create a new consumer group. Options are:",
        "    * MKSTREAM",
        "      Create the empty stream if it does not exist.",
        "    * ENTRIESREAD entries_read",
        "      Set the group's entries_read counter (internal use).",
        "CREATECONSUMER <key> <groupname> <consumer>",
        "    Create a new consumer in the specified group.",
        "DELCONSUMER <key> <groupname> <consumer>",
        "    Remove the specified consumer.",
        "DESTROY <key> <groupname>",
        "    Remove the specified group.",
        "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
        "    Set the current group ID and entries_read counter.",
    });
  }
  const bool create = EqualsIgnoreCase(sub, "create");
  const bool setid = EqualsIgnoreCase(sub, "setid");
  bool mkstream = false;
  int64_t entries_read = -1;
  for (size_t i = 5; i < ctx.argc();) {
    if (create && EqualsIgnoreCase(ctx.arg(i), "mkstream")) {
      mkstream = true;
      ++i;
    } else if ((create || setid) && EqualsIgnoreCase(ctx.arg(i), "entriesread") && i + 1 < ctx.argc()) {
      if (!ctx.IntArg(i + 1, &entries_read)) return;
      if (entries_read < 0 && entries_read != -1) return ctx.Error(protocol::err::kStreamEntriesReadRange);
      i += 2;
    } else {
      return ctx.SubcommandError();
    }
  }
  const std::string_view key = ctx.arg(2), name = ctx.arg(3);
  Entry* e;
  StreamValue* s;
  if (Status st = stream_ops::FindForWrite(ctx, key, &e, &s); !st.ok()) return ctx.Error(st);
  StreamGroup* g = nullptr;
  if (!mkstream) {
    if (s == nullptr) return ctx.Error(protocol::err::kStreamNeedsKey);
    g = s->FindGroup(name);
    if (g == nullptr && !create && !EqualsIgnoreCase(sub, "destroy")) {
      return ctx.Error(fmt::format(protocol::err::kStreamNoGroupIn, name, key));
    }
  }
  if (create) {
    if (ctx.argc() > 8) return ctx.SubcommandError();
    StreamId id;
    if (ctx.arg(4) == "$") {
      id = s == nullptr ? StreamId{} : s->last_id();
    } else if (!StreamIdArg(ctx, 4, 0, true, &id)) {
      return;
    }
    if (s == nullptr) s = stream_ops::Create(ctx, key, &e);
    if (s->CreateGroup(name, id, entries_read) == nullptr) return ctx.Error(protocol::err::kStreamBusyGroup);
    ctx.Dirty();
    ctx.Notify(kNotifyStream, "xgroup-create", key);
  } else if (setid) {
    if (ctx.argc() != 5 && ctx.argc() != 7) return ctx.SubcommandError();
    StreamId id;
    if (ctx.arg(4) == "$") {
      id = s->last_id();
    } else if (!StreamIdArg(ctx, 4, 0, false, &id)) {
      return;
    }
    g->last_id = id;
    g->entries_read = entries_read;
    ctx.Dirty();
    ctx.Notify(kNotifyStream, "xgroup-setid", key);
  } else if (EqualsIgnoreCase(sub, "destroy")) {
    if (g == nullptr) return ctx.reply.Integer(0);
    s->DestroyGroup(name);
    ctx.Dirty();
    ctx.Notify(kNotifyStream, "xgroup-destroy", key);
    ctx.db().UpdateObjectMemory(e);
    return ctx.reply.Integer(1);
  } else if (EqualsIgnoreCase(sub, "createconsumer")) {
    StreamConsumer* c = stream_ops::CreateConsumer(ctx, key, g, ctx.arg(4));
    ctx.db().UpdateObjectMemory(e);
    return ctx.reply.Integer(c != nullptr ? 1 : 0);
  } else {  // delconsumer
    const int64_t pending = g->DeleteConsumer(ctx.arg(4));
    if (pending >= 0) {
      ctx.Dirty();
      ctx.Notify(kNotifyStream, "xgroup-delconsumer", key);
      ctx.db().UpdateObjectMemory(e);
    }
    return ctx.reply.Integer(pending < 0 ? 0 : pending);
  }
  ctx.db().UpdateObjectMemory(e);
  ctx.reply.Ok();
}

// The group `group` of the stream at `key`, for a command that answers
// "NOGROUP No such key 'k' or consumer group 'g'" when either is missing.
// False after an error reply.
bool FindGroupOrReply(CommandContext& ctx, std::string_view key, std::string_view group, Entry** e,
                      StreamValue** s, StreamGroup** g) {
  if (Status st = stream_ops::FindForWrite(ctx, key, e, s); !st.ok()) {
    ctx.Error(st);
    return false;
  }
  *g = *s == nullptr ? nullptr : (*s)->FindGroup(group);
  if (*g == nullptr) {
    ctx.Error(fmt::format(protocol::err::kStreamNoGroupKey, key, group));
    return false;
  }
  return true;
}

// XACK key group id [id ...]
void XAck(CommandContext& ctx) {
  Entry* e;
  StreamValue* s;
  if (Status st = stream_ops::FindForWrite(ctx, ctx.arg(1), &e, &s); !st.ok()) return ctx.Error(st);
  StreamGroup* g = s == nullptr ? nullptr : s->FindGroup(ctx.arg(2));
  if (g == nullptr) return ctx.reply.Integer(0);
  std::vector<StreamId> ids(ctx.argc() - 3);
  for (size_t j = 3; j < ctx.argc(); ++j) {
    if (!StreamIdArg(ctx, j, 0, true, &ids[j - 3])) return;
  }
  int64_t acked = 0;
  for (StreamId id : ids) acked += g->Ack(id) ? 1 : 0;
  if (acked > 0) {
    ctx.Dirty(acked);
    ctx.db().UpdateObjectMemory(e);
  }
  ctx.reply.Integer(acked);
}

// XPENDING key group [[IDLE min-idle] start end count [consumer]]
void XPending(CommandContext& ctx) {
  const size_t argc = ctx.argc();
  if (argc != 3 && (argc < 6 || argc > 9)) return ctx.SyntaxError();
  int64_t min_idle = 0, count = 0;
  StreamId start, end;
  std::string_view consumer_name;
  bool has_consumer = false;
  if (argc >= 6) {
    size_t at = 3;
    if (EqualsIgnoreCase(ctx.arg(3), "idle")) {
      if (!ctx.IntArg(4, &min_idle)) return;
      if (argc < 8) return ctx.SyntaxError();
      at += 2;
    }
    if (!ctx.IntArg(at + 2, &count)) return;
    if (count < 0) count = 0;
    bool ex;
    if (!StreamIntervalArg(ctx, at, 0, &start, &ex)) return;
    if (ex && !start.Incr()) return ctx.Error(protocol::err::kStreamBadStart);
    if (!StreamIntervalArg(ctx, at + 1, UINT64_MAX, &end, &ex)) return;
    if (ex && !end.Decr()) return ctx.Error(protocol::err::kStreamBadEnd);
    if (at + 3 < argc) {
      consumer_name = ctx.arg(at + 3);
      has_consumer = true;
    }
  }
  const StreamValue* s;
  if (!ctx.Found(stream_ops::Find(ctx, ctx.arg(1)), &s)) return;
  const StreamGroup* g = s == nullptr ? nullptr : s->FindGroup(ctx.arg(2));
  if (g == nullptr) return ctx.Error(fmt::format(protocol::err::kStreamNoGroupKey, ctx.arg(1), ctx.arg(2)));
  protocol::ReplyWriter& r = ctx.reply;
  if (argc == 3) {
    r.ArrayHeader(4);
    r.Integer(static_cast<int64_t>(g->pel().size()));
    if (g->pel().empty()) {
      r.Null();
      r.Null();
      return r.NullArray();
    }
    ReplyStreamId(r, g->pel().front().key);
    ReplyStreamId(r, g->pel().back().key);
    size_t with_pending = 0;
    for (const auto& [name, c] : g->consumers()) with_pending += c->pending.empty() ? 0 : 1;
    r.ArrayHeader(with_pending);
    for (const auto& [name, c] : g->consumers()) {
      if (c->pending.empty()) continue;
      r.ArrayHeader(2);
      r.Bulk(name);
      r.Bulk(std::to_string(c->pending.size()));
    }
    return;
  }
  std::vector<std::pair<StreamId, const StreamNack*>> rows;
  const int64_t now = NowMs();
  auto take = [&](StreamId id) {
    if (count == 0 || id > end) return false;
    const StreamNack& nack = *g->pel().Find(id);
    if (min_idle != 0 && now - nack.delivery_time_ms < min_idle) return true;
    rows.emplace_back(id, &nack);
    --count;
    return true;
  };
  if (has_consumer) {
    const StreamConsumer* c = g->FindConsumer(consumer_name);
    if (c == nullptr) return r.ArrayHeader(0);
    for (auto it = c->pending.lower_bound(start); it != c->pending.end() && take(it->key); ++it) {
    }
  } else {
    for (auto it = g->pel().lower_bound(start); it != g->pel().end() && take(it->key); ++it) {
    }
  }
  r.ArrayHeader(rows.size());
  for (const auto& [id, nack] : rows) {
    r.ArrayHeader(4);
    ReplyStreamId(r, id);
    r.Bulk(nack->consumer->name);
    r.Integer(std::max<int64_t>(0, now - nack->delivery_time_ms));
    r.Integer(static_cast<int64_t>(nack->delivery_count));
  }
}

// The idempotent XCLAIM Redis logs for a claim (or a drop) of `id`.
void PropagateClaim(CommandContext& ctx, const StreamGroup& g, StreamId id, const StreamNack& nack) {
  ctx.PropagateAs(stream_ops::ClaimRecord(ctx.arg(1), ctx.arg(2), id, nack, g.last_id));
  ctx.Dirty();
}

// One claimed entry's reply: its ID (JUSTID) or the entry.
void ReplyClaimed(protocol::ReplyWriter& r, const StreamValue& s, StreamId id, bool justid) {
  if (justid) return ReplyStreamId(r, id);
  std::vector<std::string> items;
  s.Get(id, &items);
  std::vector<std::string_view> views(items.begin(), items.end());
  ReplyStreamEntry(r, StreamEntry{id, views});
}

// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-ms]
//        [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID id]
void XClaim(CommandContext& ctx) {
  Entry* e;
  StreamValue* s;
  StreamGroup* g;
  if (!FindGroupOrReply(ctx, ctx.arg(1), ctx.arg(2), &e, &s, &g)) return;
  int64_t min_idle;
  if (!ParseCanonicalInt64(ctx.arg(4), &min_idle)) {
    return ctx.Error("ERR Invalid min-idle-time argument for XCLAIM");
  }
  if (min_idle < 0) min_idle = 0;
  std::vector<StreamId> ids;
  size_t j = 5;
  for (StreamId id; j < ctx.argc() && ctx.arg(j) != "-" && ctx.arg(j) != "+" &&
                    ParseStreamId(ctx.arg(j), 0, &id);
       ++j) {
    ids.push_back(id);
  }
  const int64_t now = NowMs();
  int64_t delivery_time = -1, retry_count = -1;
  bool force = false, justid = false;
  StreamId last_id;
  for (; j < ctx.argc(); ++j) {
    const std::string_view opt = ctx.arg(j);
    const bool more = j + 1 < ctx.argc();
    if (EqualsIgnoreCase(opt, "force")) {
      force = true;
    } else if (EqualsIgnoreCase(opt, "justid")) {
      justid = true;
    } else if (EqualsIgnoreCase(opt, "idle") && more) {
      if (!ParseCanonicalInt64(ctx.arg(++j), &delivery_time)) {
        return ctx.Error("ERR Invalid IDLE option argument for XCLAIM");
      }
      delivery_time = now - delivery_time;
    } else if (EqualsIgnoreCase(opt, "time") && more) {
      if (!ParseCanonicalInt64(ctx.arg(++j), &delivery_time)) {
        return ctx.Error("ERR Invalid TIME option argument for XCLAIM");
      }
    } else if (EqualsIgnoreCase(opt, "retrycount") && more) {
      if (!ParseCanonicalInt64(ctx.arg(++j), &retry_count)) {
        return ctx.Error("ERR Invalid RETRYCOUNT option argument for XCLAIM");
      }
    } else if (EqualsIgnoreCase(opt, "lastid") && more) {
      if (!StreamIdArg(ctx, ++j, 0, true, &last_id)) return;
    } else {
      return ctx.Error(fmt::format(protocol::err::kStreamBadClaimOption, opt));
    }
  }
  bool propagate_last_id = false;
  if (last_id > g->last_id) {
    g->last_id = last_id;
    propagate_last_id = true;
  }
  if (delivery_time == -1 || delivery_time < 0 || delivery_time > now) delivery_time = now;
  StreamConsumer* consumer = nullptr;
  std::vector<StreamId> claimed;
  std::vector<std::string> scratch;
  for (StreamId id : ids) {
    StreamNack* nack = g->FindPending(id);
    if (!s->Get(id, &scratch)) {
      if (nack != nullptr) {
        PropagateClaim(ctx, *g, id, *nack);
        propagate_last_id = false;
        g->Ack(id);
      }
      continue;
    }
    if (nack == nullptr && !force) continue;
    if (nack != nullptr && min_idle != 0 && now - nack->delivery_time_ms < min_idle) continue;
    if (consumer == nullptr) {
      consumer = stream_ops::FindOrCreateConsumer(ctx, ctx.arg(1), g, ctx.arg(3));
    }
    // A forced claim starts a new pending entry at one delivery, as Redis's.
    const uint64_t base = nack == nullptr ? 1 : nack->delivery_count;
    const uint64_t count = retry_count >= 0 ? static_cast<uint64_t>(retry_count) : base + (justid ? 0 : 1);
    g->SetPending(id, consumer, delivery_time, count);
    claimed.push_back(id);
    PropagateClaim(ctx, *g, id, *g->FindPending(id));
    propagate_last_id = false;
  }
  if (propagate_last_id) {
    ctx.PropagateAs({"XGROUP", "SETID", std::string(ctx.arg(1)), std::string(ctx.arg(2)), g->last_id.ToString(),
                     "ENTRIESREAD", std::to_string(g->entries_read)});
    ctx.Dirty();
  }
  ctx.db().UpdateObjectMemory(e);
  ctx.reply.ArrayHeader(claimed.size());
  for (StreamId id : claimed) ReplyClaimed(ctx.reply, *s, id, justid);
}

// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
void XAutoClaim(CommandContext& ctx) {
  int64_t min_idle;
  if (!ParseCanonicalInt64(ctx.arg(4), &min_idle)) {
    return ctx.Error("ERR Invalid min-idle-time argument for XAUTOCLAIM");
  }
  if (min_idle < 0) min_idle = 0;
  StreamId start;
  bool ex;
  if (!StreamIntervalArg(ctx, 5, 0, &start, &ex)) return;
  if (ex && !start.Incr()) return ctx.Error(protocol::err::kStreamBadStart);
  int64_t count = 100;
  bool justid = false;
  for (size_t j = 6; j < ctx.argc(); ++j) {
    if (EqualsIgnoreCase(ctx.arg(j), "count") && j + 1 < ctx.argc()) {
      constexpr int64_t kMaxCount = INT64_MAX / 16;
      if (!ParseCanonicalInt64(ctx.arg(j + 1), &count) || count < 1 || count > kMaxCount) {
        return ctx.Error("ERR COUNT must be > 0");
      }
      ++j;
    } else if (EqualsIgnoreCase(ctx.arg(j), "justid")) {
      justid = true;
    } else {
      return ctx.SyntaxError();
    }
  }
  Entry* e;
  StreamValue* s;
  StreamGroup* g;
  if (!FindGroupOrReply(ctx, ctx.arg(1), ctx.arg(2), &e, &s, &g)) return;
  // Redis allocates count IDs up front and fails on a count it cannot allocate.
  if (count > (int64_t{1} << 40)) return ctx.Error(protocol::err::kStreamCountTooHigh);
  const int64_t now = NowMs();
  const int64_t attempts = count * 10;
  StreamConsumer* consumer = nullptr;
  std::vector<StreamId> claimed, dropped;
  std::vector<std::string> scratch;
  // The rows this call may visit (count * 10 at most, as Redis's attempts), and
  // the cursor after them; visited before anything changes the list.
  std::vector<StreamId> visit;
  auto it = g->pel().lower_bound(start);
  for (; it != g->pel().end() && static_cast<int64_t>(visit.size()) < attempts; ++it) visit.push_back(it->key);
  StreamId next = it == g->pel().end() ? StreamId{} : it->key;
  size_t visited = 0;
  for (StreamId id : visit) {
    if (count == 0) break;
    ++visited;
    StreamNack* nack = g->FindPending(id);
    if (!s->Get(id, &scratch)) {
      PropagateClaim(ctx, *g, id, *nack);
      g->Ack(id);
      dropped.push_back(id);
      --count;
      continue;
    }
    if (min_idle != 0 && now - nack->delivery_time_ms < min_idle) continue;
    if (consumer == nullptr) consumer = stream_ops::FindOrCreateConsumer(ctx, ctx.arg(1), g, ctx.arg(3));
    g->SetPending(id, consumer, now, nack->delivery_count + (justid ? 0 : 1));
    claimed.push_back(id);
    --count;
    PropagateClaim(ctx, *g, id, *g->FindPending(id));
  }
  // Stopped by COUNT: the cursor is the first row not visited.
  if (visited < visit.size()) next = visit[visited];
  ctx.db().UpdateObjectMemory(e);
  protocol::ReplyWriter& r = ctx.reply;
  r.ArrayHeader(3);
  ReplyStreamId(r, next);
  r.ArrayHeader(claimed.size());
  for (StreamId id : claimed) ReplyClaimed(r, *s, id, justid);
  r.ArrayHeader(dropped.size());
  for (StreamId id : dropped) ReplyStreamId(r, id);
}

}  // namespace

void XInfo(CommandContext& ctx);  // cmd_stream_info.cc

namespace {

const SubcommandSpec kXGroupSubs[] = {
    {"create", -5, kWrite | kDenyOom, "Create a consumer group.", 2, 2, 1, {kKeyRW | kKeyInsert}},
    {"setid", -5, kWrite, "Set a consumer group to an arbitrary last delivered ID value.", 2, 2, 1, {kKeyRW | kKeyUpdate}},
    {"destroy", 4, kWrite, "Destroy a consumer group.", 2, 2, 1, {kKeyRW | kKeyDelete}},
    {"createconsumer", 5, kWrite | kDenyOom, "Create a consumer in a consumer group.", 2, 2, 1, {kKeyRW | kKeyInsert}},
    {"delconsumer", 5, kWrite, "Delete a consumer from a consumer group.", 2, 2, 1, {kKeyRW | kKeyDelete}},
    {"help", 2, kLoading | kStale, "Show helpful text about the different subcommands"},
};

const SubcommandSpec kXInfoSubs[] = {
    {"stream", -3, kReadOnly, "Get information about a stream", 2, 2, 1, {kKeyRO | kKeyAccess}},
    {"groups", 3, kReadOnly, "List the consumer groups of a stream", 2, 2, 1, {kKeyRO | kKeyAccess}},
    {"consumers", 4, kReadOnly, "List the consumers in a consumer group", 2, 2, 1, {kKeyRO | kKeyAccess}},
    {"help", 2, kLoading | kStale, "Show helpful text about the different subcommands"},
};

const CommandSpec kCommands[] = {
    {"xgroup", -2, 0, 0, 0, 0, XGroup, "A container for consumer groups commands", "stream", kXGroupSubs},
    {"xack", -4, kWrite | kFast, 1, 1, 1, XAck, "Marks a pending message as correctly processed, effectively removing it from the pending entries list of the consumer group. Return value of the command is the number of messages successfully acknowledged, that is, the IDs we were actually able to resolve in the PEL.", "stream", {}, {kKeyRW | kKeyUpdate}},
    {"xpending", -3, kReadOnly, 1, 1, 1, XPending, "Return information and entries from a stream consumer group pending entries list, that are messages fetched but never acknowledged.", "stream", {}, {kKeyRO | kKeyAccess}},
    {"xclaim", -6, kWrite | kFast, 1, 1, 1, XClaim, "Changes (or acquires) ownership of a message in a consumer group, as if the message was delivered to the specified consumer.", "stream", {}, {kKeyRW | kKeyUpdate}},
    {"xautoclaim", -6, kWrite | kFast, 1, 1, 1, XAutoClaim, "Changes (or acquires) ownership of messages in a consumer group, as if the messages were delivered to the specified consumer.", "stream", {}, {kKeyRW | kKeyDelete}},
    {"xinfo", -2, 0, 0, 0, 0, XInfo, "A container for stream introspection commands", "stream", kXInfoSubs},
};

}  // namespace

std::span<const CommandSpec> StreamGroupCommands() { return kCommands; }

}  // namespace feedkv::server
