// XREAD and XREADGROUP: entries after given IDs from one or more streams (for
// XREADGROUP: new entries for a consumer group, or a consumer's pending ones),
// optionally waiting (BLOCK) until one of them grows. Semantics, replies, error
// texts and what is logged follow Redis 7.0's xreadCommand. A blocked XREAD parks on its keys (blocking.h) and
// runs again when one changes, with any "$" replaced by the last ID it saw,
// so it serves only entries added after it blocked.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/commands/blocking.h"
#include "server/commands/stream_args.h"
#include "server/ops/stream_ops.h"
#include "server/server.h"

namespace feedkv::server {

namespace {

// How many entries a blocked read serves when it gave no COUNT (Redis's
// XREAD_BLOCKED_DEFAULT_COUNT).
constexpr int64_t kBlockedDefaultCount = 1000;

struct ReadArgs {
  bool group_read = false;  // XREADGROUP
  bool group_given = false;
  std::string_view group, consumer;
  bool noack = false;
  int64_t block_ms = -1;  // -1: no BLOCK
  int64_t count = 0;      // 0: no limit
  size_t streams_at = 0;  // index of the first key
  size_t nstreams = 0;
};

// The options before STREAMS. False after an error reply.
bool ParseReadArgs(CommandContext& ctx, ReadArgs* a) {
  for (size_t i = 1; i < ctx.argc(); ++i) {
    const size_t more = ctx.argc() - i - 1;
    const std::string_view o = ctx.arg(i);
    if (EqualsIgnoreCase(o, "block") && more > 0) {
      if (ctx.client.script_caller != nullptr) {
        ctx.Error(fmt::format(protocol::err::kStreamBlockInScript, ctx.arg(0)));
        return false;
      }
      if (!ctx.TimeoutMsArg(++i, &a->block_ms)) return false;
    } else if (EqualsIgnoreCase(o, "count") && more > 0) {
      if (!ctx.IntArg(++i, &a->count)) return false;
      if (a->count < 0) a->count = 0;
    } else if (EqualsIgnoreCase(o, "streams") && more > 0) {
      a->streams_at = i + 1;
      if ((ctx.argc() - a->streams_at) % 2 != 0) {
        ctx.Error(protocol::err::kStreamUnbalanced);
        return false;
      }
      a->nstreams = (ctx.argc() - a->streams_at) / 2;
      break;
    } else if (EqualsIgnoreCase(o, "group") && more >= 2) {
      if (!a->group_read) {
        ctx.Error(protocol::err::kStreamGroupOnXread);
        return false;
      }
      a->group_given = true;
      a->group = ctx.arg(i + 1);
      a->consumer = ctx.arg(i + 2);
      i += 2;
    } else if (EqualsIgnoreCase(o, "noack")) {
      if (!a->group_read) {
        ctx.Error(protocol::err::kStreamNoackOnXread);
        return false;
      }
      a->noack = true;
    } else {
      ctx.SyntaxError();
      return false;
    }
  }
  if (a->streams_at == 0) {
    ctx.SyntaxError();
    return false;
  }
  if (a->group_read && !a->group_given) {
    ctx.Error(protocol::err::kStreamMissingGroup);
    return false;
  }
  return true;
}

// One served stream of XREADGROUP: delivers entries after the group's last ID
// to the consumer (or, for a history read, the consumer's own pending entries
// from `after`), recording what Redis records and logging it as Redis does.
void ServeGroup(CommandContext& ctx, const ReadArgs& a, std::string_view key, StreamValue* s, StreamGroup* g,
                StreamId after, bool history, size_t count) {
  protocol::ReplyWriter& r = ctx.reply;
  const bool existed = g->FindConsumer(a.consumer) != nullptr;
  StreamConsumer* consumer = stream_ops::FindOrCreateConsumer(ctx, key, g, a.consumer);
  // Redis logs a consumer XREADGROUP creates only for a NOACK read (an XCLAIM
  // creates it otherwise); feedkv logs it too when nothing else would.
  auto log_consumer = [&] {
    ctx.PropagateAs({"XGROUP", "CREATECONSUMER", std::string(key), std::string(a.group), std::string(a.consumer)});
  };
  if (!existed && a.noack) log_consumer();
  const int64_t now = NowMs();
  StreamId start = after;
  start.Incr();
  if (history) {
    std::vector<StreamId> ids;
    for (auto it = consumer->pending.lower_bound(start);
         it != consumer->pending.end() && (count == 0 || ids.size() < count); ++it) {
      ids.push_back(it->key);
    }
    r.ArrayHeader(ids.size());
    std::vector<std::string> items;
    for (StreamId id : ids) {
      if (!s->Get(id, &items)) {
        r.ArrayHeader(2);
        ReplyStreamId(r, id);
        r.NullArray();
        continue;
      }
      std::vector<std::string_view> views(items.begin(), items.end());
      ReplyStreamEntry(r, StreamEntry{id, views});
      StreamNack* nack = g->FindPending(id);
      nack->delivery_time_ms = now;
      ++nack->delivery_count;
    }
    if (!existed) log_consumer();
    return;
  }
  std::vector<std::pair<StreamId, std::vector<std::string_view>>> found;
  s->ForRange(start, StreamId::Max(), false, [&](const StreamEntry& e) {
    found.emplace_back(e.id, std::vector<std::string_view>(e.items.begin(), e.items.end()));
    return count == 0 || found.size() < count;
  });
  r.ArrayHeader(found.size());
  for (const auto& [id, items] : found) {
    if (id > g->last_id) {
      // Redis's entries_read bookkeeping: exact while no deletion lies ahead.
      if (g->entries_read != -1 && !s->RangeHasTombstones(id, StreamId::Max())) {
        ++g->entries_read;
      } else if (s->entries_added() != 0) {
        g->entries_read = s->EntriesAddedBefore(id);
      }
      g->last_id = id;
    }
    ReplyStreamEntry(r, StreamEntry{id, items});
    if (!a.noack) {
      g->SetPending(id, consumer, now, 1);
      ctx.PropagateAs(stream_ops::ClaimRecord(key, a.group, id, *g->FindPending(id), g->last_id));
      ctx.Dirty();
    }
  }
  if (!existed && !a.noack && found.empty()) log_consumer();
  if (a.noack && !found.empty()) {
    ctx.PropagateAs({"XGROUP", "SETID", std::string(key), std::string(a.group), g->last_id.ToString(),
                     "ENTRIESREAD", std::to_string(g->entries_read)});
    ctx.Dirty();
  }
}

// XREAD [COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]
// XREADGROUP GROUP group consumer [COUNT count] [BLOCK milliseconds] [NOACK] STREAMS key [key ...] id [id ...]
void ReadGeneric(CommandContext& ctx, bool group_read) {
  ReadArgs a;
  a.group_read = group_read;
  if (!ParseReadArgs(ctx, &a)) return;
  std::vector<StreamId> after(a.nstreams);
  std::vector<StreamValue*> streams(a.nstreams);
  std::vector<StreamGroup*> groups(a.nstreams);
  std::vector<Entry*> entries(a.nstreams);
  const bool retry = IsRetry(ctx);
  bool resolved_dollar = false;
  for (size_t k = 0; k < a.nstreams; ++k) {
    const std::string_view key = ctx.arg(a.streams_at + k);
    const size_t id_arg = a.streams_at + a.nstreams + k;
    if (group_read) {
      // Run again after blocking, a read whose key or group went away answers
      // Redis's unblocking errors.
      Status st = stream_ops::FindForWrite(ctx, key, &entries[k], &streams[k]);
      if (retry && (!st.ok() || streams[k] == nullptr)) return ctx.Error(protocol::err::kStreamUnblockedKeyGone);
      if (!st.ok()) return ctx.Error(st);
      groups[k] = streams[k] == nullptr ? nullptr : streams[k]->FindGroup(a.group);
      if (groups[k] == nullptr && retry) return ctx.Error(protocol::err::kStreamUnblockedGroupGone);
      if (groups[k] == nullptr) return ctx.Error(fmt::format(protocol::err::kStreamNoGroupRead, key, a.group));
    } else {
      StatusOr<const StreamValue*> found = stream_ops::Find(ctx, key);
      // A blocked XREAD keeps waiting while its key holds another type.
      if (!found.ok() && retry) found = static_cast<const StreamValue*>(nullptr);
      const StreamValue* s;
      if (!ctx.Found(std::move(found), &s)) return;
      streams[k] = const_cast<StreamValue*>(s);
    }
    if (ctx.arg(id_arg) == "$") {
      if (group_read) return ctx.Error(protocol::err::kStreamDollarInGroup);
      after[k] = streams[k] == nullptr ? StreamId{} : streams[k]->last_id();
      resolved_dollar = true;
    } else if (ctx.arg(id_arg) == ">") {
      if (!group_read) return ctx.Error(protocol::err::kStreamGtOnXread);
      after[k] = StreamId::Max();
    } else if (!StreamIdArg(ctx, id_arg, 0, true, &after[k])) {
      return;
    }
  }
  // Which streams have something to serve: a history read always does; a new
  // read when an entry lies after the group's (or the given) ID.
  std::vector<size_t> serve;
  std::vector<bool> history(a.nstreams, false);
  for (size_t k = 0; k < a.nstreams; ++k) {
    const StreamValue* s = streams[k];
    if (group_read && after[k] != StreamId::Max()) {
      history[k] = true;
      serve.push_back(k);
      continue;
    }
    if (group_read) after[k] = groups[k]->last_id;
    StreamId top;
    if (s != nullptr && s->length() > 0 && s->EdgeId(false, &top) && top > after[k]) serve.push_back(k);
  }
  if (!serve.empty()) {
    int64_t count = a.count;
    if (count == 0 && retry) count = kBlockedDefaultCount;
    protocol::ReplyWriter& r = ctx.reply;
    if (r.resp() >= 3) {
      r.MapHeader(serve.size());
    } else {
      r.ArrayHeader(serve.size());
    }
    for (size_t k : serve) {
      if (r.resp() < 3) r.ArrayHeader(2);
      const std::string_view key = ctx.arg(a.streams_at + k);
      r.Bulk(key);
      if (group_read) {
        ServeGroup(ctx, a, key, streams[k], groups[k], after[k], history[k], static_cast<size_t>(count));
        ctx.db().UpdateObjectMemory(entries[k]);
        continue;
      }
      StreamId start = after[k];
      start.Incr();
      ReplyStreamRange(r, *streams[k], start, StreamId::Max(), static_cast<size_t>(count), false);
    }
    return;
  }
  if (a.block_ms < 0) return ctx.reply.NullArray();
  std::vector<std::string> keys;
  for (size_t k = 0; k < a.nstreams; ++k) keys.emplace_back(ctx.arg(a.streams_at + k));
  std::vector<std::string> argv;
  if (resolved_dollar) {
    // Runs again reading after the IDs "$" stood for now.
    argv.assign(ctx.args.begin(), ctx.args.end());
    for (size_t k = 0; k < a.nstreams; ++k) {
      std::string& id = argv[a.streams_at + a.nstreams + k];
      if (id == "$") id = after[k].ToString();
    }
  }
  const int64_t deadline = a.block_ms > 0 ? NowMs() + a.block_ms : 0;
  ParkOnKeys(ctx, std::move(keys), deadline, TimeoutReply::kNullArray, std::move(argv));
}

void XRead(CommandContext& ctx) { ReadGeneric(ctx, false); }
void XReadGroup(CommandContext& ctx) { ReadGeneric(ctx, true); }

// The keys of XREAD / XREADGROUP: the first half of the arguments after
// STREAMS (option values before it are skipped, so a key named "streams" in
// them is not taken for the keyword).
std::vector<int> ReadKeys(std::span<const std::string_view> argv) {
  std::vector<int> keys;
  const int argc = static_cast<int>(argv.size());
  for (int i = 1; i < argc; ++i) {
    const std::string_view o = argv[static_cast<size_t>(i)];
    if (EqualsIgnoreCase(o, "block") || EqualsIgnoreCase(o, "count")) {
      ++i;
    } else if (EqualsIgnoreCase(o, "group")) {
      i += 2;
    } else if (EqualsIgnoreCase(o, "streams")) {
      const int n = argc - i - 1;
      if (n <= 0 || n % 2 != 0) return {};
      for (int k = i + 1; k <= i + n / 2; ++k) keys.push_back(k);
      return keys;
    }
  }
  return keys;
}

const CommandSpec kCommands[] = {
    {"xreadgroup", -7, kWrite | kBlocking, 0, 0, 0, XReadGroup, "Return new entries from a stream using a consumer group, or access the history of the pending entries for a given consumer. Can block.", "stream", {}, {kKeyRO | kKeyAccess}, {}, 0, ReadKeys},
    {"xread", -4, kReadOnly | kBlocking, 0, 0, 0, XRead, "Return never seen elements in multiple streams, with IDs greater than the ones reported by the caller for each stream. Can block.", "stream", {}, {kKeyRO | kKeyAccess}, {}, 0, ReadKeys},
};

}  // namespace

std::span<const CommandSpec> StreamReadCommands() { return kCommands; }

}  // namespace feedkv::server
