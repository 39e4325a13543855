// Stream commands without consumer groups: XADD, XLEN, XRANGE, XREVRANGE, XDEL,
// XTRIM, XSETID and XREAD (with BLOCK). Semantics, replies and error texts
// follow Redis 7.0's t_stream.c; the structure is storage/stream_value.h.
//
// What is logged: XADD with the ID it generated and an approximate trim as
// the exact trim it did (MAXLEN = <length left> / MINID = <first ID left>), as
// Redis rewrites them, so the AOF and replicas build the same stream.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/commands/blocking.h"
#include "server/commands/stream_args.h"
#include "server/ops/stream_ops.h"
#include "server/server.h"
#include "storage/database.h"
#include "storage/int_text.h"

namespace feedkv::server {

namespace {

// XADD / XTRIM options: [MAXLEN|MINID [=|~] threshold [LIMIT count]] and, for
// XADD, [NOMKSTREAM] and the ID.
struct AddTrimArgs {
  enum class Strategy { kNone, kMaxLen, kMinId } strategy = Strategy::kNone;
  bool approx = false;
  int64_t maxlen = 0;
  StreamId minid;
  int64_t limit = 0;
  size_t threshold_arg = 0;  // index of the MAXLEN/MINID value
  bool nomkstream = false;
  bool id_given = false;
  bool seq_given = true;
  StreamId id;
};

// Redis's streamParseAddOrTrimArgsOrReply: the ID's index (XADD), or 0 after
// an error reply.
size_t ParseAddTrimArgs(CommandContext& ctx, bool xadd, AddTrimArgs* a) {
  size_t i = 2;
  bool limit_given = false;
  for (; i < ctx.argc(); ++i) {
    const size_t more = ctx.argc() - 1 - i;
    const std::string_view opt = ctx.arg(i);
    const bool maxlen = EqualsIgnoreCase(opt, "maxlen");
    if (xadd && opt == "*") break;
    if ((maxlen || EqualsIgnoreCase(opt, "minid")) && more > 0) {
      if (a->strategy != AddTrimArgs::Strategy::kNone) {
        ctx.Error(protocol::err::kStreamTrimBoth);
        return 0;
      }
      a->approx = false;
      const std::string_view next = ctx.arg(i + 1);
      if (more >= 2 && (next == "~" || next == "=")) {
        a->approx = next == "~";
        ++i;
      }
      if (maxlen) {
        if (!ctx.IntArg(i + 1, &a->maxlen)) return 0;
        if (a->maxlen < 0) {
          ctx.Error(protocol::err::kStreamMaxlenNegative);
          return 0;
        }
      } else if (!StreamIdArg(ctx, i + 1, 0, true, &a->minid)) {
        return 0;
      }
      ++i;
      a->strategy = maxlen ? AddTrimArgs::Strategy::kMaxLen : AddTrimArgs::Strategy::kMinId;
      a->threshold_arg = i;
    } else if (EqualsIgnoreCase(opt, "limit") && more > 0) {
      if (!ctx.IntArg(i + 1, &a->limit)) return 0;
      if (a->limit < 0) {
        ctx.Error(protocol::err::kStreamLimitNegative);
        return 0;
      }
      limit_given = true;
      ++i;
    } else if (xadd && EqualsIgnoreCase(opt, "nomkstream")) {
      a->nomkstream = true;
    } else if (xadd) {
      bool seq_star = false;
      if (!ParseStreamId(opt, 0, &a->id, &seq_star)) {
        ctx.Error(protocol::err::kStreamBadId);
        return 0;
      }
      a->seq_given = !seq_star;
      a->id_given = true;
      break;
    } else {
      ctx.SyntaxError();
      return 0;
    }
  }
  if (a->limit != 0 && a->strategy == AddTrimArgs::Strategy::kNone) {
    ctx.Error(protocol::err::kStreamLimitNoStrategy);
    return 0;
  }
  if (!xadd && a->strategy == AddTrimArgs::Strategy::kNone) {
    ctx.Error(protocol::err::kStreamXtrimNoStrategy);
    return 0;
  }
  if (ctx.from_log) {
    // The log holds the exact trim Redis rewrote it to: no work cap.
    a->limit = 0;
  } else if (limit_given) {
    if (!a->approx) {
      ctx.Error(protocol::err::kStreamLimitNoApprox);
      return 0;
    }
  } else if (a->approx) {
    // At most 100 nodes' worth of entries per trim, as Redis.
    a->limit = 100 * ctx.server.cfg().stream_node_max_entries;
    if (a->limit <= 0) a->limit = 10000;
    if (a->limit > 1000000) a->limit = 1000000;
  } else {
    a->limit = 0;
  }
  return i;
}

uint64_t DoTrim(StreamValue* s, const AddTrimArgs& a) {
  if (a.strategy == AddTrimArgs::Strategy::kMaxLen) {
    return s->TrimMaxLen(static_cast<uint64_t>(a.maxlen), a.approx, static_cast<uint64_t>(a.limit));
  }
  return s->TrimMinId(a.minid, a.approx, static_cast<uint64_t>(a.limit));
}

// Rewrites an approximate trim in `argv` as the exact one it did.
void RewriteApproxTrim(std::vector<std::string>* argv, const StreamValue& s, const AddTrimArgs& a) {
  (*argv)[a.threshold_arg - 1] = "=";
  (*argv)[a.threshold_arg] = a.strategy == AddTrimArgs::Strategy::kMaxLen ? std::to_string(s.length())
                                                                         : s.FirstIdWithTombstones().ToString();
}

// The ID XADD appends under, as Redis's streamAppendItem; false when it is not
// above the stream's last ID.
bool NextId(const StreamValue* s, const AddTrimArgs& a, int64_t now_ms, StreamId* id) {
  const StreamId last = s == nullptr ? StreamId{} : s->last_id();
  if (!a.id_given) {
    const auto ms = static_cast<uint64_t>(now_ms);
    if (ms > last.ms) {
      *id = {ms, 0};
    } else {
      *id = last;
      id->Incr();
    }
    return true;
  }
  if (!a.seq_given) {
    if (a.id.ms == last.ms) {
      if (last.seq == UINT64_MAX) return false;
      *id = {last.ms, last.seq + 1};
      return true;
    }
    *id = {a.id.ms, 0};
    return a.id.ms > last.ms;
  }
  *id = a.id;
  return a.id > last;
}

// XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value [field value ...]
void XAdd(CommandContext& ctx) {
  AddTrimArgs a;
  const size_t id_pos = ParseAddTrimArgs(ctx, true, &a);
  if (id_pos == 0) return;
  const size_t field_pos = id_pos + 1;
  if (ctx.argc() < field_pos + 2 || (ctx.argc() - field_pos) % 2 == 1) {
    return ctx.Error(fmt::format(protocol::err::kWrongArity, "xadd"));
  }
  if (a.id_given && a.seq_given && a.id.is_zero()) return ctx.Error(protocol::err::kStreamIdZero);
  Entry* e;
  StreamValue* s;
  if (Status st = stream_ops::FindForWrite(ctx, ctx.arg(1), &e, &s); !st.ok()) return ctx.Error(st);
  if (s == nullptr && a.nomkstream) return ctx.reply.Null();
  if (s != nullptr && s->last_id() == StreamId::Max()) return ctx.Error(protocol::err::kStreamExhausted);
  StreamId id;
  if (!NextId(s, a, ctx.from_log ? 0 : NowMs(), &id)) return ctx.Error(protocol::err::kStreamIdTooSmall);
  if (s == nullptr) s = stream_ops::Create(ctx, ctx.arg(1), &e);
  s->Append(id, ctx.args.subspan(field_pos), stream_ops::Limits(ctx));
  const std::string id_text = id.ToString();
  ctx.reply.Bulk(id_text);
  ctx.Notify(kNotifyStream, "xadd", ctx.arg(1));
  ctx.Dirty();
  bool rewrite = !a.id_given || !a.seq_given;
  if (a.strategy != AddTrimArgs::Strategy::kNone) {
    if (DoTrim(s, a) > 0) ctx.Notify(kNotifyStream, "xtrim", ctx.arg(1));
    rewrite = rewrite || a.approx;
  }
  ctx.db().UpdateObjectMemory(e);
  if (rewrite) {
    std::vector<std::string> argv(ctx.args.begin(), ctx.args.end());
    argv[id_pos] = id_text;
    if (a.approx) RewriteApproxTrim(&argv, *s, a);
    ctx.PropagateAs(std::move(argv));
  }
}

// XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]
void XTrim(CommandContext& ctx) {
  AddTrimArgs a;
  if (ParseAddTrimArgs(ctx, false, &a) == 0) return;
  Entry* e;
  StreamValue* s;
  if (Status st = stream_ops::FindForWrite(ctx, ctx.arg(1), &e, &s); !st.ok()) return ctx.Error(st);
  if (s == nullptr) return ctx.reply.Integer(0);
  const uint64_t dropped = DoTrim(s, a);
  if (dropped > 0) {
    ctx.Notify(kNotifyStream, "xtrim", ctx.arg(1));
    ctx.db().UpdateObjectMemory(e);
    ctx.Dirty(static_cast<int64_t>(dropped));
    if (a.approx) {
      std::vector<std::string> argv(ctx.args.begin(), ctx.args.end());
      RewriteApproxTrim(&argv, *s, a);
      ctx.PropagateAs(std::move(argv));
    }
  }
  ctx.reply.Integer(static_cast<int64_t>(dropped));
}

void XLen(CommandContext& ctx) {
  const StreamValue* s;
  if (!ctx.Found(stream_ops::Find(ctx, ctx.arg(1)), &s)) return;
  ctx.reply.Integer(s == nullptr ? 0 : static_cast<int64_t>(s->length()));
}

// XRANGE key start end [COUNT n] / XREVRANGE key end start [COUNT n]
void XRangeGeneric(CommandContext& ctx, bool reverse) {
  const size_t start_arg = reverse ? 3 : 2;
  const size_t end_arg = reverse ? 2 : 3;
  StreamId start, end;
  bool start_ex, end_ex;
  if (!StreamIntervalArg(ctx, start_arg, 0, &start, &start_ex)) return;
  if (start_ex && !start.Incr()) return ctx.Error(protocol::err::kStreamBadStart);
  if (!StreamIntervalArg(ctx, end_arg, UINT64_MAX, &end, &end_ex)) return;
  if (end_ex && !end.Decr()) return ctx.Error(protocol::err::kStreamBadEnd);
  int64_t count = -1;
  for (size_t j = 4; j < ctx.argc(); ++j) {
    if (EqualsIgnoreCase(ctx.arg(j), "count") && j + 1 < ctx.argc()) {
      if (!ctx.IntArg(++j, &count)) return;
      if (count < 0) count = 0;
    } else {
      return ctx.SyntaxError();
    }
  }
  const StreamValue* s;
  if (!ctx.Found(stream_ops::Find(ctx, ctx.arg(1)), &s)) return;
  if (s == nullptr) return ctx.reply.ArrayHeader(0);
  if (count == 0) return ctx.reply.NullArray();
  ReplyStreamRange(ctx.reply, *s, start, end, count < 0 ? 0 : static_cast<size_t>(count), reverse);
}

void XRange(CommandContext& ctx) { XRangeGeneric(ctx, false); }
void XRevRange(CommandContext& ctx) { XRangeGeneric(ctx, true); }

// XDEL key id [id ...]
void XDel(CommandContext& ctx) {
  Entry* e;
  StreamValue* s;
  if (Status st = stream_ops::FindForWrite(ctx, ctx.arg(1), &e, &s); !st.ok()) return ctx.Error(st);
  if (s == nullptr) return ctx.reply.Integer(0);
  std::vector<StreamId> ids(ctx.argc() - 2);
  for (size_t j = 2; j < ctx.argc(); ++j) {
    if (!StreamIdArg(ctx, j, 0, true, &ids[j - 2])) return;
  }
  int64_t deleted = 0;
  for (StreamId id : ids) deleted += s->Delete(id) ? 1 : 0;
  if (deleted > 0) {
    ctx.Notify(kNotifyStream, "xdel", ctx.arg(1));
    ctx.db().UpdateObjectMemory(e);
    ctx.Dirty(deleted);
  }
  ctx.reply.Integer(deleted);
}

// XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]
void XSetId(CommandContext& ctx) {
  StreamId id, max_deleted;
  int64_t entries_added = -1;
  if (!StreamIdArg(ctx, 2, 0, true, &id)) return;
  for (size_t i = 3; i < ctx.argc(); i += 2) {
    const bool more = i + 1 < ctx.argc();
    if (EqualsIgnoreCase(ctx.arg(i), "entriesadded") && more) {
      if (!ctx.IntArg(i + 1, &entries_added)) return;
      if (entries_added < 0) return ctx.Error(protocol::err::kStreamEntriesAddedRange);
    } else if (EqualsIgnoreCase(ctx.arg(i), "maxdeletedid") && more) {
      if (!StreamIdArg(ctx, i + 1, 0, true, &max_deleted)) return;
      if (id < max_deleted) return ctx.Error(protocol::err::kStreamSetIdBelowDeleted);
    } else {
      return ctx.SyntaxError();
    }
  }
  Entry* e;
  StreamValue* s;
  if (Status st = stream_ops::FindForWrite(ctx, ctx.arg(1), &e, &s); !st.ok()) return ctx.Error(st);
  if (s == nullptr) return ctx.Error(protocol::err::kNoSuchKey);
  if (s->length() > 0) {
    StreamId top;
    s->EdgeId(false, &top);
    if (id < top) return ctx.Error(protocol::err::kStreamSetIdBelowTop);
    if (entries_added != -1 && s->length() > static_cast<uint64_t>(entries_added)) {
      return ctx.Error(protocol::err::kStreamSetIdBelowLength);
    }
  }
  s->SetLastId(id, entries_added == -1 ? s->entries_added() : static_cast<uint64_t>(entries_added),
               max_deleted.is_zero() ? s->max_deleted_id() : max_deleted);
  ctx.reply.Ok();
  ctx.Dirty();
  ctx.Notify(kNotifyStream, "xsetid", ctx.arg(1));
}

constexpr uint32_t kW = kWrite | kDenyOom;

const CommandSpec kCommands[] = {
    {"xadd", -5, kW | kFast, 1, 1, 1, XAdd, "Appends a new entry to a stream", "stream", {}, {kKeyRW | kKeyUpdate}},
    {"xlen", 2, kReadOnly | kFast, 1, 1, 1, XLen, "Return the number of entries in a stream", "stream", {}, {kKeyRO}},
    {"xrange", -4, kReadOnly, 1, 1, 1, XRange, "Return a range of elements in a stream, with IDs matching the specified IDs interval", "stream", {}, {kKeyRO | kKeyAccess}},
    {"xrevrange", -4, kReadOnly, 1, 1, 1, XRevRange, "Return a range of elements in a stream, with IDs matching the specified IDs interval, in reverse order (from greater to smaller IDs) compared to XRANGE", "stream", {}, {kKeyRO | kKeyAccess}},
    {"xdel", -3, kWrite | kFast, 1, 1, 1, XDel, "Removes the specified entries from the stream. Returns the number of items actually deleted, that may be different from the number of IDs passed in case certain IDs do not exist.", "stream", {}, {kKeyRW | kKeyDelete}},
    {"xtrim", -4, kWrite, 1, 1, 1, XTrim, "Trims the stream to (approximately if '~' is passed) a certain size", "stream", {}, {kKeyRW | kKeyDelete}},
    {"xsetid", -3, kW | kFast, 1, 1, 1, XSetId, "An internal command for replicating stream values", "stream", {}, {kKeyRW | kKeyUpdate}},
};

}  // namespace

std::span<const CommandSpec> StreamCommands() { return kCommands; }

}  // namespace feedkv::server
