// Hash commands: HSET, HMSET, HSETNX, HGET, HMGET, HDEL, HLEN, HSTRLEN, HEXISTS,
// HKEYS, HVALS, HGETALL, HINCRBY, HINCRBYFLOAT, HRANDFIELD, HSCAN. Semantics,
// replies and error texts follow Redis 7.0's t_hash.c. Handlers parse, call a hash
// operation (server/ops/hash_ops.h) or read the hash it finds, reply; the structure
// is in storage/hash_value.h.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/commands/scan_args.h"
#include "server/glob.h"
#include "server/ops/hash_ops.h"
#include "server/server.h"
#include "storage/float_text.h"
#include "storage/hash_value.h"

namespace feedkv::server {

namespace {

// HSET key field value [field value ...]; HMSET is the same with an OK reply.
void HSetGeneric(CommandContext& ctx, bool ok_reply) {
  if (ctx.argc() % 2 != 0) return ctx.Error(fmt::format(protocol::err::kWrongArity, ctx.spec.name));
  StatusOr<size_t> added = hash_ops::Set(ctx, ctx.arg(1), ctx.args.subspan(2));
  if (!added.ok()) return ctx.Error(added.status());
  if (ok_reply) return ctx.reply.Ok();
  ctx.reply.Integer(static_cast<int64_t>(*added));
}

void HSet(CommandContext& ctx) { HSetGeneric(ctx, false); }
void HMSet(CommandContext& ctx) { HSetGeneric(ctx, true); }

void HSetNx(CommandContext& ctx) {
  StatusOr<bool> set = hash_ops::SetIfAbsent(ctx, ctx.arg(1), ctx.arg(2), ctx.arg(3));
  if (!set.ok()) return ctx.Error(set.status());
  ctx.reply.Integer(*set ? 1 : 0);
}

void HGet(CommandContext& ctx) {
  const HashValue* h;
  if (!ctx.Found(hash_ops::Find(ctx, ctx.arg(1)), &h)) return;
  std::string_view v;
  if (h == nullptr || !h->Get(ctx.arg(2), &v)) return ctx.reply.Null();
  ctx.reply.Bulk(v);
}

void HMGet(CommandContext& ctx) {
  const HashValue* h;
  if (!ctx.Found(hash_ops::Find(ctx, ctx.arg(1)), &h)) return;
  ctx.reply.ArrayHeader(ctx.argc() - 2);
  for (size_t i = 2; i < ctx.argc(); ++i) {
    std::string_view v;
    if (h != nullptr && h->Get(ctx.arg(i), &v)) {
      ctx.reply.Bulk(v);
    } else {
      ctx.reply.Null();
    }
  }
}

void HDel(CommandContext& ctx) {
  StatusOr<size_t> removed = hash_ops::Remove(ctx, ctx.arg(1), ctx.args.subspan(2));
  if (!removed.ok()) return ctx.Error(removed.status());
  ctx.reply.Integer(static_cast<int64_t>(*removed));
}

void HLen(CommandContext& ctx) {
  const HashValue* h;
  if (!ctx.Found(hash_ops::Find(ctx, ctx.arg(1)), &h)) return;
  ctx.reply.Integer(h == nullptr ? 0 : static_cast<int64_t>(h->size()));
}

void HStrLen(CommandContext& ctx) {
  const HashValue* h;
  if (!ctx.Found(hash_ops::Find(ctx, ctx.arg(1)), &h)) return;
  std::string_view v;
  ctx.reply.Integer(h != nullptr && h->Get(ctx.arg(2), &v) ? static_cast<int64_t>(v.size()) : 0);
}

void HExists(CommandContext& ctx) {
  const HashValue* h;
  if (!ctx.Found(hash_ops::Find(ctx, ctx.arg(1)), &h)) return;
  std::string_view v;
  ctx.reply.Integer(h != nullptr && h->Get(ctx.arg(2), &v) ? 1 : 0);
}

// HKEYS / HVALS / HGETALL.
void HGetAllGeneric(CommandContext& ctx, bool fields, bool values) {
  const HashValue* h;
  if (!ctx.Found(hash_ops::Find(ctx, ctx.arg(1)), &h)) return;
  const size_t n = h == nullptr ? 0 : h->size();
  if (fields && values) {
    ctx.reply.MapHeader(n);
  } else {
    ctx.reply.ArrayHeader(n);
  }
  if (h == nullptr) return;
  h->ForEach([&](std::string_view f, std::string_view v) {
    if (fields) ctx.reply.Bulk(f);
    if (values) ctx.reply.Bulk(v);
  });
}

void HKeys(CommandContext& ctx) { HGetAllGeneric(ctx, true, false); }
void HVals(CommandContext& ctx) { HGetAllGeneric(ctx, false, true); }
void HGetAll(CommandContext& ctx) { HGetAllGeneric(ctx, true, true); }

void HIncrBy(CommandContext& ctx) {
  int64_t incr;
  if (!ctx.IntArg(3, &incr)) return;
  StatusOr<int64_t> value = hash_ops::IncrBy(ctx, ctx.arg(1), ctx.arg(2), incr);
  if (!value.ok()) return ctx.Error(value.status());
  ctx.reply.Integer(*value);
}

void HIncrByFloat(CommandContext& ctx) {
  long double incr;
  if (!ParseLongDouble(ctx.arg(3), &incr)) return ctx.Error(protocol::err::kNotFloat);
  if (std::isnan(incr) || std::isinf(incr)) return ctx.Error(protocol::err::kValueNaNOrInfinity);
  StatusOr<std::string> value = hash_ops::IncrByFloat(ctx, ctx.arg(1), ctx.arg(2), incr);
  if (!value.ok()) return ctx.Error(value.status());
  ctx.reply.Bulk(*value);
}

void ReplyField(protocol::ReplyWriter& r, const HashField& f, bool withvalues) {
  if (withvalues && r.resp() >= 3) r.ArrayHeader(2);
  r.Bulk(f.first);
  if (withvalues) r.Bulk(f.second);
}

// HRANDFIELD key [count [WITHVALUES]]
void HRandField(CommandContext& ctx) {
  const HashValue* h;
  if (ctx.argc() == 2) {
    if (!ctx.Found(hash_ops::Find(ctx, ctx.arg(1)), &h)) return;
    if (h == nullptr) return ctx.reply.Null();
    return ctx.reply.Bulk(h->Random(ctx.server.Random()).first);
  }
  int64_t count;
  if (!ctx.IntArg(2, &count)) return;
  if (count == INT64_MIN) return ctx.Error(protocol::err::kCountRange);
  if (ctx.argc() > 4 || (ctx.argc() == 4 && !EqualsIgnoreCase(ctx.arg(3), "withvalues"))) {
    return ctx.SyntaxError();
  }
  const bool withvalues = ctx.argc() == 4;
  if (withvalues && (count < -INT64_MAX / 2 || count > INT64_MAX / 2)) {
    return ctx.Error(protocol::err::kValueOutOfRange);
  }
  if (!ctx.Found(hash_ops::Find(ctx, ctx.arg(1)), &h)) return;
  if (h == nullptr || count == 0) return ctx.reply.ArrayHeader(0);
  protocol::ReplyWriter& r = ctx.reply;
  const size_t size = h->size();
  if (count < 0) {
    // Repeats allowed: count independent picks.
    // A client with a hard output limit is stopped by it, as in Redis; without
    // one, a reply this big would exhaust memory, so it is refused.
    if (-count > 100'000'000 && !ctx.ReplyLimited()) return ctx.Error(protocol::err::kCountTooLarge);
    const auto n = static_cast<size_t>(-count);
    r.ArrayHeader(withvalues && r.resp() < 3 ? n * 2 : n);
    for (size_t i = 0; i < n && !ctx.ReplyOverLimit(); ++i) ReplyField(r, h->Random(ctx.server.Random()), withvalues);
    return;
  }
  std::vector<HashField> all;
  all.reserve(size);
  h->ForEach([&](std::string_view f, std::string_view v) { all.emplace_back(f, v); });
  auto want = static_cast<size_t>(count);
  if (want < size) {
    // Distinct fields: a partial Fisher-Yates shuffle.
    for (size_t i = 0; i < want; ++i) std::swap(all[i], all[i + ctx.server.Random() % (size - i)]);
    all.resize(want);
  }
  r.ArrayHeader(withvalues && r.resp() < 3 ? all.size() * 2 : all.size());
  for (const HashField& f : all) ReplyField(r, f, withvalues);
}

// HSCAN key cursor [MATCH pattern] [COUNT count]
void HScan(CommandContext& ctx) {
  uint64_t cursor;
  if (!ParseScanCursor(ctx, 2, &cursor)) return;
  const HashValue* h;
  if (!ctx.Found(hash_ops::Find(ctx, ctx.arg(1)), &h)) return;
  if (h == nullptr) return ReplyEmptyScan(ctx);
  ScanOptions opt;
  if (!ParseScanOptions(ctx, 3, &opt)) return;
  std::vector<HashField> batch;
  const uint64_t next = h->Scan(cursor, static_cast<size_t>(opt.count), &batch);
  if (opt.has_pattern) {
    std::erase_if(batch, [&](const HashField& f) { return !GlobMatch(opt.pattern, f.first, false); });
  }
  ctx.reply.ArrayHeader(2);
  ctx.reply.Bulk(std::to_string(next));
  ctx.reply.ArrayHeader(batch.size() * 2);
  for (const HashField& f : batch) {
    ctx.reply.Bulk(f.first);
    ctx.reply.Bulk(f.second);
  }
}

constexpr uint32_t kW = kWrite | kDenyOom;

const CommandSpec kCommands[] = {
    {"hset", -4, kW | kFast, 1, 1, 1, HSet, "Set the string value of a hash field", "hash", {}, {kKeyRW | kKeyUpdate}},
    {"hmset", -4, kW | kFast, 1, 1, 1, HMSet, "Set multiple hash fields to multiple values", "hash", {}, {kKeyRW | kKeyUpdate}},
    {"hsetnx", 4, kW | kFast, 1, 1, 1, HSetNx, "Set the value of a hash field, only if the field does not exist", "hash", {}, {kKeyRW | kKeyInsert}},
    {"hget", 3, kReadOnly | kFast, 1, 1, 1, HGet, "Get the value of a hash field", "hash", {}, {kKeyRO | kKeyAccess}},
    {"hmget", -3, kReadOnly | kFast, 1, 1, 1, HMGet, "Get the values of all the given hash fields", "hash", {}, {kKeyRO | kKeyAccess}},
    {"hdel", -3, kWrite | kFast, 1, 1, 1, HDel, "Delete one or more hash fields", "hash", {}, {kKeyRW | kKeyDelete}},
    {"hlen", 2, kReadOnly | kFast, 1, 1, 1, HLen, "Get the number of fields in a hash", "hash", {}, {kKeyRO}},
    {"hstrlen", 3, kReadOnly | kFast, 1, 1, 1, HStrLen, "Get the length of the value of a hash field", "hash", {}, {kKeyRO}},
    {"hexists", 3, kReadOnly | kFast, 1, 1, 1, HExists, "Determine if a hash field exists", "hash", {}, {kKeyRO}},
    {"hkeys", 2, kReadOnly, 1, 1, 1, HKeys, "Get all the fields in a hash", "hash", {}, {kKeyRO}},
    {"hvals", 2, kReadOnly, 1, 1, 1, HVals, "Get all the values in a hash", "hash", {}, {kKeyRO | kKeyAccess}},
    {"hgetall", 2, kReadOnly, 1, 1, 1, HGetAll, "Get all the fields and values in a hash", "hash", {}, {kKeyRO | kKeyAccess}},
    {"hincrby", 4, kW | kFast, 1, 1, 1, HIncrBy, "Increment the integer value of a hash field by the given number", "hash", {}, {kKeyRW | kKeyAccess | kKeyUpdate}},
    {"hincrbyfloat", 4, kW | kFast, 1, 1, 1, HIncrByFloat, "Increment the float value of a hash field by the given amount", "hash", {}, {kKeyRW | kKeyAccess | kKeyUpdate}},
    {"hrandfield", -2, kReadOnly | kRandom, 1, 1, 1, HRandField, "Get one or multiple random fields from a hash", "hash", {}, {kKeyRO | kKeyAccess}},
    {"hscan", -3, kReadOnly | kRandom, 1, 1, 1, HScan, "Incrementally iterate hash fields and associated values", "hash", {}, {kKeyRO | kKeyAccess}},
};

}  // namespace

std::span<const CommandSpec> HashCommands() { return kCommands; }

}  // namespace feedkv::server
