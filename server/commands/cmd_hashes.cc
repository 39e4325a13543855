// Hash commands: HSET, HMSET, HSETNX, HGET, HMGET, HDEL, HLEN, HSTRLEN, HEXISTS,
// HKEYS, HVALS, HGETALL, HINCRBY, HINCRBYFLOAT, HRANDFIELD, HSCAN. Semantics,
// replies and error texts follow Redis 7.0's t_hash.c; the structure is in
// storage/hash_value.h.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/commands/lookup.h"
#include "server/commands/scan_args.h"
#include "server/glob.h"
#include "server/server.h"
#include "storage/database.h"
#include "storage/float_text.h"
#include "storage/hash_value.h"
#include "storage/int_text.h"

namespace feedkv::server {

namespace {

HashLimits HLimits(const CommandContext& ctx) {
  const ServerConfig& c = ctx.server.cfg();
  return HashLimits{static_cast<size_t>(c.hash_max_listpack_entries),
                    static_cast<size_t>(c.hash_max_listpack_value)};
}

bool LookupHash(CommandContext& ctx, std::string_view key, bool read, Entry** entry, HashValue** hash) {
  return LookupTyped(ctx, key, ValueType::kHash, read, entry, hash);
}

// The hash at `key` for a write, created empty (sized for `hint` fields of up to
// `max_len` bytes) when missing; null after a WRONGTYPE reply.
HashValue* HashForWrite(CommandContext& ctx, std::string_view key, size_t hint, size_t max_len, Entry** entry) {
  HashValue* h;
  if (!LookupHash(ctx, key, false, entry, &h)) return nullptr;
  if (h == nullptr) {
    *entry = ctx.db().SetObject(key, HashValue::Create(hint, max_len, HLimits(ctx)), kNoExpire, false);
    h = static_cast<HashValue*>(Database::GetObject(*entry));
  }
  return h;
}

// HSET key field value [field value ...]; HMSET is the same with an OK reply.
void HSetGeneric(CommandContext& ctx, bool ok_reply) {
  if (ctx.argc() % 2 != 0) return ctx.Error(fmt::format(protocol::err::kWrongArity, ctx.spec.name));
  size_t max_len = 0;
  for (size_t i = 2; i < ctx.argc(); ++i) max_len = std::max(max_len, ctx.arg(i).size());
  Entry* e;
  HashValue* h = HashForWrite(ctx, ctx.arg(1), (ctx.argc() - 2) / 2, max_len, &e);
  if (h == nullptr) return;
  const HashLimits limits = HLimits(ctx);
  int64_t added = 0;
  for (size_t i = 2; i < ctx.argc(); i += 2) added += h->Set(ctx.arg(i), ctx.arg(i + 1), limits);
  ctx.db().UpdateObjectMemory(e);
  ctx.Dirty(static_cast<int64_t>(ctx.argc() - 2) / 2);
  ctx.Notify(kNotifyHash, "hset", ctx.arg(1));
  if (ok_reply) return ctx.reply.Ok();
  ctx.reply.Integer(added);
}

void HSet(CommandContext& ctx) { HSetGeneric(ctx, false); }
void HMSet(CommandContext& ctx) { HSetGeneric(ctx, true); }

void HSetNx(CommandContext& ctx) {
  Entry* e;
  HashValue* h;
  if (!LookupHash(ctx, ctx.arg(1), false, &e, &h)) return;
  std::string_view old;
  if (h != nullptr && h->Get(ctx.arg(2), &old)) return ctx.reply.Integer(0);
  h = HashForWrite(ctx, ctx.arg(1), 1, std::max(ctx.arg(2).size(), ctx.arg(3).size()), &e);
  h->Set(ctx.arg(2), ctx.arg(3), HLimits(ctx));
  ctx.db().UpdateObjectMemory(e);
  ctx.Dirty();
  ctx.Notify(kNotifyHash, "hset", ctx.arg(1));
  ctx.reply.Integer(1);
}

void HGet(CommandContext& ctx) {
  Entry* e;
  HashValue* h;
  if (!LookupHash(ctx, ctx.arg(1), true, &e, &h)) return;
  std::string_view v;
  if (h == nullptr || !h->Get(ctx.arg(2), &v)) return ctx.reply.Null();
  ctx.reply.Bulk(v);
}

void HMGet(CommandContext& ctx) {
  Entry* e;
  HashValue* h;
  if (!LookupHash(ctx, ctx.arg(1), true, &e, &h)) return;
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
  Entry* e;
  HashValue* h;
  if (!LookupHash(ctx, ctx.arg(1), false, &e, &h)) return;
  int64_t removed = 0;
  if (h != nullptr) {
    for (size_t i = 2; i < ctx.argc() && !h->empty(); ++i) removed += h->Remove(ctx.arg(i));
    if (removed > 0) {
      ctx.Notify(kNotifyHash, "hdel", ctx.arg(1));
      if (h->empty()) {
        ctx.db().Delete(ctx.arg(1));
        ctx.Notify(kNotifyGeneric, "del", ctx.arg(1));
      } else {
        ctx.db().UpdateObjectMemory(e);
      }
      ctx.Dirty(removed);
    }
  }
  ctx.reply.Integer(removed);
}

void HLen(CommandContext& ctx) {
  Entry* e;
  HashValue* h;
  if (!LookupHash(ctx, ctx.arg(1), true, &e, &h)) return;
  ctx.reply.Integer(h == nullptr ? 0 : static_cast<int64_t>(h->size()));
}

void HStrLen(CommandContext& ctx) {
  Entry* e;
  HashValue* h;
  if (!LookupHash(ctx, ctx.arg(1), true, &e, &h)) return;
  std::string_view v;
  ctx.reply.Integer(h != nullptr && h->Get(ctx.arg(2), &v) ? static_cast<int64_t>(v.size()) : 0);
}

void HExists(CommandContext& ctx) {
  Entry* e;
  HashValue* h;
  if (!LookupHash(ctx, ctx.arg(1), true, &e, &h)) return;
  std::string_view v;
  ctx.reply.Integer(h != nullptr && h->Get(ctx.arg(2), &v) ? 1 : 0);
}

// HKEYS / HVALS / HGETALL.
void HGetAllGeneric(CommandContext& ctx, bool fields, bool values) {
  Entry* e;
  HashValue* h;
  if (!LookupHash(ctx, ctx.arg(1), true, &e, &h)) return;
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
  Entry* e;
  HashValue* h;
  if (!LookupHash(ctx, ctx.arg(1), false, &e, &h)) return;
  int64_t value = 0;
  std::string_view old;
  if (h != nullptr && h->Get(ctx.arg(2), &old)) {
    if (!ParseCanonicalInt64(old, &value)) return ctx.Error(protocol::err::kHashValueNotInteger);
  }
  if ((incr < 0 && value < 0 && incr < INT64_MIN - value) || (incr > 0 && value > 0 && incr > INT64_MAX - value)) {
    return ctx.Error(protocol::err::kOverflow);
  }
  value += incr;
  char buf[32];
  const std::string_view text = FormatInt64(value, buf);
  if (h == nullptr) h = HashForWrite(ctx, ctx.arg(1), 1, std::max(ctx.arg(2).size(), text.size()), &e);
  h->Set(ctx.arg(2), text, HLimits(ctx));
  ctx.db().UpdateObjectMemory(e);
  ctx.Dirty();
  ctx.Notify(kNotifyHash, "hincrby", ctx.arg(1));
  ctx.reply.Integer(value);
}

void HIncrByFloat(CommandContext& ctx) {
  long double incr;
  if (!ParseLongDouble(ctx.arg(3), &incr)) return ctx.Error(protocol::err::kNotFloat);
  if (std::isnan(incr) || std::isinf(incr)) return ctx.Error(protocol::err::kValueNaNOrInfinity);
  Entry* e;
  HashValue* h;
  if (!LookupHash(ctx, ctx.arg(1), false, &e, &h)) return;
  long double value = 0;
  std::string_view old;
  if (h != nullptr && h->Get(ctx.arg(2), &old)) {
    if (!ParseLongDouble(old, &value)) return ctx.Error(protocol::err::kHashValueNotFloat);
  }
  value += incr;
  if (std::isnan(value) || std::isinf(value)) return ctx.Error(protocol::err::kIncrNaN);
  std::string text = FormatLongDouble(value);
  if (h == nullptr) h = HashForWrite(ctx, ctx.arg(1), 1, std::max(ctx.arg(2).size(), text.size()), &e);
  h->Set(ctx.arg(2), text, HLimits(ctx));
  ctx.db().UpdateObjectMemory(e);
  ctx.Dirty();
  ctx.Notify(kNotifyHash, "hincrbyfloat", ctx.arg(1));
  ctx.reply.Bulk(text);
  // The result, not the increment, so float formatting never diverges (as Redis).
  ctx.PropagateAs({"HSET", std::string(ctx.arg(1)), std::string(ctx.arg(2)), std::move(text)});
}

void ReplyField(protocol::ReplyWriter& r, const HashField& f, bool withvalues) {
  if (withvalues && r.resp() >= 3) r.ArrayHeader(2);
  r.Bulk(f.first);
  if (withvalues) r.Bulk(f.second);
}

// HRANDFIELD key [count [WITHVALUES]]
void HRandField(CommandContext& ctx) {
  Entry* e;
  HashValue* h;
  if (ctx.argc() == 2) {
    if (!LookupHash(ctx, ctx.arg(1), true, &e, &h)) return;
    if (h == nullptr) return ctx.reply.Null();
    return ctx.reply.Bulk(h->Random(ctx.server.Random()).first);
  }
  int64_t count;
  if (!ctx.IntArg(2, &count)) return;
  if (count == INT64_MIN) return ctx.Error(fmt::format(protocol::err::kValueNotBetween, -INT64_MAX, INT64_MAX));
  if (ctx.argc() > 4 || (ctx.argc() == 4 && !EqualsIgnoreCase(ctx.arg(3), "withvalues"))) {
    return ctx.SyntaxError();
  }
  const bool withvalues = ctx.argc() == 4;
  if (withvalues && (count < -INT64_MAX / 2 || count > INT64_MAX / 2)) {
    return ctx.Error(protocol::err::kValueOutOfRange);
  }
  if (!LookupHash(ctx, ctx.arg(1), true, &e, &h)) return;
  if (h == nullptr || count == 0) return ctx.reply.ArrayHeader(0);
  protocol::ReplyWriter& r = ctx.reply;
  const size_t size = h->size();
  if (count < 0) {
    // Repeats allowed: count independent picks.
    if (-count > 100'000'000) return ctx.Error(protocol::err::kCountTooLarge);
    const auto n = static_cast<size_t>(-count);
    r.ArrayHeader(withvalues && r.resp() < 3 ? n * 2 : n);
    for (size_t i = 0; i < n; ++i) ReplyField(r, h->Random(ctx.server.Random()), withvalues);
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
  Entry* e;
  HashValue* h;
  if (!LookupHash(ctx, ctx.arg(1), true, &e, &h)) return;
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
