// Schema counters: COUNTER.CREATE/DROP/SPACES/INCRBY/SET/GET/MGET/DEL/INFO.
// A counter space is server-wide (not per SELECT database). Counters are
// unsigned 64-bit at most; values above INT64_MAX are replied as bulk strings
// (RESP integers are signed). See docs/counters.md.
#include <fmt/format.h>

#include <charconv>

#include "protocol/error_text.h"
#include "server/cold_tier.h"
#include "server/command_context.h"
#include "server/ops/counter_ops.h"
#include "server/server.h"
#include "storage/counter_space.h"

namespace feedkv::server {

namespace {

// The space named by argument 1, or nullptr after replying an error.
CounterSpace* SpaceArg(CommandContext& ctx) {
  StatusOr<CounterSpace*> space = counter_ops::FindSpace(ctx, ctx.arg(1));
  if (!space.ok()) {
    ctx.Error(space.status());
    return nullptr;
  }
  return *space;
}

bool FieldArg(CommandContext& ctx, const CounterSpace& space, size_t i, size_t* field) {
  int f = space.schema().FieldIndex(ctx.arg(i));
  if (f < 0) {
    ctx.Error(fmt::format(protocol::err::kNoSuchCounterField, ctx.arg(i), ctx.arg(1)));
    return false;
  }
  *field = static_cast<size_t>(f);
  return true;
}

bool UnsignedArg(CommandContext& ctx, size_t i, uint64_t* out) {
  std::string_view s = ctx.arg(i);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  if (s.empty() || s[0] == '+' || ec != std::errc() || p != s.data() + s.size()) {
    ctx.Error(protocol::err::kNotInteger);
    return false;
  }
  return true;
}

void ReplyCounter(CommandContext& ctx, uint64_t v) {
  if (v <= static_cast<uint64_t>(INT64_MAX)) {
    ctx.reply.Integer(static_cast<int64_t>(v));
  } else {
    ctx.reply.Bulk(std::to_string(v));
  }
}

void Create(CommandContext& ctx) {
  std::vector<std::string_view> specs(ctx.args.begin() + 2, ctx.args.end());
  CounterSchema schema;
  Status s = CounterSchema::Parse(specs, &schema);
  if (!s.ok()) {
    ctx.Error(protocol::err::kInvalidCounterSchemaPrefix + s.message());
    return;
  }
  s = counter_ops::Create(ctx, ctx.arg(1), std::move(schema));
  if (!s.ok()) {
    ctx.Error(s);
    return;
  }
  ctx.reply.Ok();
}

void Drop(CommandContext& ctx) { ctx.reply.Integer(counter_ops::Drop(ctx, ctx.arg(1)) ? 1 : 0); }

void Spaces(CommandContext& ctx) {
  auto& spaces = ctx.server.counter_spaces();
  ctx.reply.ArrayHeader(spaces.size());
  for (const auto& [name, space] : spaces) ctx.reply.Bulk(name);
}

void IncrBy(CommandContext& ctx) {
  CounterSpace* space = SpaceArg(ctx);
  if (!space) return;
  int64_t id, delta;
  size_t field;
  if (!ctx.IdArg(2, &id) || !FieldArg(ctx, *space, 3, &field) || !ctx.IntArg(4, &delta)) return;
  StatusOr<uint64_t> value = counter_ops::IncrBy(ctx, ctx.arg(1), *space, id, field, delta);
  if (!value.ok()) {
    ctx.Error(value.status());
    return;
  }
  ReplyCounter(ctx, *value);
}

void Set(CommandContext& ctx) {
  CounterSpace* space = SpaceArg(ctx);
  if (!space) return;
  int64_t id;
  size_t field;
  uint64_t value;
  if (!ctx.IdArg(2, &id) || !FieldArg(ctx, *space, 3, &field) || !UnsignedArg(ctx, 4, &value)) return;
  Status s = counter_ops::Set(ctx, ctx.arg(1), *space, id, field, value);
  if (!s.ok()) {
    ctx.Error(s);
    return;
  }
  ctx.reply.Ok();
}

// Replies one id's counters: all fields as a map (flat array in RESP2), or
// the listed fields as an array.
void ReplyCounters(CommandContext& ctx, const CounterSpace& space, int64_t id,
                   const std::vector<size_t>& fields, std::vector<uint64_t>* scratch) {
  const CounterSchema& schema = space.schema();
  scratch->resize(schema.num_fields());
  space.Get(id, scratch->data());
  if (fields.empty()) {
    ctx.reply.MapHeader(schema.num_fields());
    for (size_t f = 0; f < schema.num_fields(); f++) {
      ctx.reply.Bulk(schema.field_name(f));
      ReplyCounter(ctx, (*scratch)[f]);
    }
  } else {
    ctx.reply.ArrayHeader(fields.size());
    for (size_t f : fields) ReplyCounter(ctx, (*scratch)[f]);
  }
}

void Get(CommandContext& ctx) {
  CounterSpace* space = SpaceArg(ctx);
  if (!space) return;
  int64_t id;
  if (!ctx.IdArg(2, &id)) return;
  std::vector<size_t> fields;
  for (size_t i = 3; i < ctx.argc(); i++) {
    size_t f;
    if (!FieldArg(ctx, *space, i, &f)) return;
    fields.push_back(f);
  }
  std::vector<uint64_t> scratch;
  ReplyCounters(ctx, *space, id, fields, &scratch);
}

void MGet(CommandContext& ctx) {
  CounterSpace* space = SpaceArg(ctx);
  if (!space) return;
  std::vector<int64_t> ids;
  std::vector<size_t> fields;
  size_t i = 2;
  for (; i < ctx.argc() && !EqualsIgnoreCase(ctx.arg(i), "FIELDS"); i++) {
    int64_t id;
    if (!ctx.IdArg(i, &id)) return;
    ids.push_back(id);
  }
  if (i < ctx.argc()) {
    if (i + 1 == ctx.argc()) {
      ctx.SyntaxError();
      return;
    }
    for (i++; i < ctx.argc(); i++) {
      size_t f;
      if (!FieldArg(ctx, *space, i, &f)) return;
      fields.push_back(f);
    }
  }
  if (ids.empty()) {
    ctx.Error(protocol::err::kCounterMgetArity);
    return;
  }
  std::vector<uint64_t> scratch;
  ctx.reply.ArrayHeader(ids.size());
  for (int64_t id : ids) ReplyCounters(ctx, *space, id, fields, &scratch);
}

void Del(CommandContext& ctx) {
  CounterSpace* space = SpaceArg(ctx);
  if (!space) return;
  int64_t id;
  if (!ctx.IdArg(2, &id)) return;
  ctx.reply.Integer(counter_ops::Del(ctx, ctx.arg(1), *space, id) ? 1 : 0);
}

// COUNTER.SPILL space [table]: moves a table (by default the oldest hot one
// that is not the newest) to the cold tier; replies once it is cold.
void Spill(CommandContext& ctx) {
  CounterSpace* space = SpaceArg(ctx);
  if (!space) return;
  int64_t table = -1;
  if (ctx.argc() > 3) {
    ctx.SyntaxError();
    return;
  }
  if (ctx.argc() == 3) {
    if (!ctx.IntArg(2, &table)) return;
    if (table < 0) {
      ctx.Error(protocol::err::kOutOfRange);
      return;
    }
  }
  ColdTier* cold = ctx.server.cold_tier();
  if (cold == nullptr) {
    ctx.Error(protocol::err::kColdTierUnavailable);
    return;
  }
  const uint64_t token = cold->NextToken();
  auto result = std::make_shared<Status>();
  Server& server = ctx.server;
  Status s = cold->StartSpill(std::string(ctx.arg(1)), static_cast<int>(std::min<int64_t>(table, INT32_MAX)),
                              [&server, token, result](const Status& st) {
                                *result = st;
                                server.waiting().AsyncDone(token);
                              });
  if (!s.ok()) {
    ctx.Error(protocol::err::kErrPrefix + s.message());
    return;
  }
  WaitCondition cond;
  cond.what = WaitFor::kAsyncDone;
  cond.token = token;
  ctx.server.waiting().Park(ctx.client, std::move(cond), 0, [result](Client& c, WaitEnd) {
    protocol::ReplyWriter w(&c.out, c.resp);
    if (result->ok()) {
      w.Ok();
    } else {
      w.Error(protocol::err::kSpillFailedPrefix + result->message());
    }
  });
}

void InfoCmd(CommandContext& ctx) {
  CounterSpace* space = SpaceArg(ctx);
  if (!space) return;
  CounterSpaceStats st = space->Stats();
  auto& r = ctx.reply;
  r.MapHeader(16);
  r.Bulk("schema");
  r.Bulk(space->schema().ToString());
  r.Bulk("slot_bytes");
  r.Integer(static_cast<int64_t>(space->schema().slot_bytes()));
  r.Bulk("keys");
  r.Integer(static_cast<int64_t>(st.num_keys));
  r.Bulk("table_keys");
  r.Integer(static_cast<int64_t>(st.table_keys));
  r.Bulk("aux_keys");
  r.Integer(static_cast<int64_t>(st.aux_keys));
  r.Bulk("extend_keys");
  r.Integer(static_cast<int64_t>(st.extend_keys));
  r.Bulk("memory_bytes");
  r.Integer(static_cast<int64_t>(st.memory_bytes));
  r.Bulk("bytes_per_key");
  r.Double(st.bytes_per_key);
  r.Bulk("mean_probes");
  r.Double(st.mean_probes);
  r.Bulk("max_probes");
  r.Integer(st.max_probes);
  r.Bulk("table_size");
  r.Integer(static_cast<int64_t>(space->options().table_bytes));
  r.Bulk("growths");
  r.Integer(static_cast<int64_t>(st.growths));
  r.Bulk("growing");
  r.Integer(st.growing ? 1 : 0);
  r.Bulk("cold_keys");
  r.Integer(static_cast<int64_t>(st.cold_keys));
  r.Bulk("warm_keys");
  r.Integer(static_cast<int64_t>(st.warm_entries));
  r.Bulk("tables");
  r.ArrayHeader(st.tables.size());
  for (const CounterTableStats& t : st.tables) {
    r.MapHeader(8);
    r.Bulk("state");
    r.Bulk(TableTierName(t.tier));
    r.Bulk("first_id");
    r.Integer(t.first_id);
    r.Bulk("last_id");
    r.Integer(t.last_id);
    r.Bulk("capacity");
    r.Integer(static_cast<int64_t>(t.capacity));
    r.Bulk("used");
    r.Integer(static_cast<int64_t>(t.used));
    r.Bulk("fill");
    r.Double(t.fill);
    r.Bulk("mean_probes");
    r.Double(t.mean_probes);
    r.Bulk("max_probes");
    r.Integer(t.max_probes);
  }
}

constexpr uint32_t kW = kWrite | kDenyOom | kFast;
constexpr uint32_t kR = kReadOnly | kFast;
// The id is each command's routing key (cluster slot, COMMAND GETKEYS), not a
// keyspace key: counter spaces are server-wide, so WATCH never sees it.
constexpr uint16_t kIdRW = kKeyRW | kKeyUpdate | kKeyNotKey;
constexpr uint16_t kIdRO = kKeyRO | kKeyAccess | kKeyNotKey;
constexpr uint16_t kIdRM = kKeyRM | kKeyDelete | kKeyNotKey;

const CommandSpec kCommands[] = {
    {"counter.create", -3, kWrite | kDenyOom, 0, 0, 0, Create, "Creates a counter space with a schema of field:bits.", "counters"},
    {"counter.drop", 2, kWrite, 0, 0, 0, Drop, "Deletes a counter space and all its counters.", "counters"},
    {"counter.spaces", 1, kReadOnly, 0, 0, 0, Spaces, "Lists the counter spaces.", "counters"},
    {"counter.incrby", 5, kW, 2, 2, 1, IncrBy, "Adds a delta to one counter of an id; returns the new value.", "counters", {}, {kIdRW}},
    {"counter.set", 5, kW, 2, 2, 1, Set, "Sets one counter of an id.", "counters", {}, {kIdRW}},
    {"counter.get", -3, kR, 2, 2, 1, Get, "Returns all (or the listed) counters of an id.", "counters", {}, {kIdRO}},
    // Its ids run up to the optional FIELDS keyword (ids are integers, never "fields").
    {"counter.mget", -3, kReadOnly, 2, -1, 1, MGet, "Returns the counters of several ids.", "counters", {}, {kIdRO}, "fields"},
    {"counter.del", 3, kWrite | kFast, 2, 2, 1, Del, "Deletes all counters of an id.", "counters", {}, {kIdRM}},
    {"counter.spill", -2, kAdmin | kNoMulti, 0, 0, 0, Spill, "Moves a table of a counter space to the cold tier on disk; replies when it is there.", "counters"},
    {"counter.info", 2, kReadOnly, 0, 0, 0, InfoCmd, "Returns the tables, dictionaries and probe statistics of a counter space.", "counters"},
};

}  // namespace

std::span<const CommandSpec> CounterCommands() { return kCommands; }

}  // namespace feedkv::server
