#include "server/ops/string_ops.h"

#include <cmath>
#include <limits>

#include "protocol/error_text.h"
#include "server/server.h"
#include "storage/database.h"
#include "storage/float_text.h"

namespace feedkv::server::string_ops {

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

// The string at `key` for a change (no hit/miss counted): null when missing,
// WrongType for another type.
Status FindForWrite(CommandContext& ctx, std::string_view key, Entry** entry) {
  *entry = ctx.db().Lookup(key, ctx.now_ms());
  if (*entry != nullptr && (*entry)->type != ValueType::kString) return Status::WrongType();
  return Status::OK();
}

// Redis's checkStringLength: the result of APPEND/SETRANGE may not pass
// proto-max-bulk-len. Commands replayed from the log are exempt.
Status CheckStringLength(const CommandContext& ctx, uint64_t size, uint64_t append) {
  if (ctx.from_log) return Status::OK();
  const uint64_t total = size + append;
  if (total < size || total > static_cast<uint64_t>(ctx.server.cfg().proto_max_bulk_len)) {
    return Status::OutOfRange(protocol::err::Message(protocol::err::kStringTooLong));
  }
  return Status::OK();
}

size_t StringLength(const Entry* e) {
  char buf[Database::kIntBufSize];
  return Database::StringValue(e, buf).size();
}

}  // namespace

StatusOr<std::optional<std::string_view>> Find(CommandContext& ctx, std::string_view key,
                                               char (&scratch)[Database::kIntBufSize]) {
  const Entry* e = ctx.LookupRead(ctx.db(), key, ctx.now_ms());
  if (e == nullptr) return std::optional<std::string_view>();
  if (e->type != ValueType::kString) return Status::WrongType();
  return std::optional<std::string_view>(Database::StringValue(e, scratch));
}

void Set(CommandContext& ctx, std::string_view key, std::string_view value, int64_t expire_at, bool keep_ttl) {
  ctx.db().SetString(key, value, expire_at, keep_ttl);
  ctx.Dirty();
  ctx.Notify(kNotifyString, "set", key);
  if (expire_at != kNoExpire) ctx.Notify(kNotifyGeneric, "expire", key);
}

bool Exists(CommandContext& ctx, std::string_view key) { return ctx.db().Lookup(key, ctx.now_ms()) != nullptr; }

void ChangeExpiry(CommandContext& ctx, std::string_view key, const ExpiryChange& change) {
  Database& db = ctx.db();
  if (change.kind == ExpiryChange::kExpireAt && change.absolute && change.at <= ctx.now_ms() && !ctx.from_log) {
    // An absolute time already in the past deletes the key.
    return Delete(ctx, key);
  }
  if (change.kind == ExpiryChange::kExpireAt) {
    db.SetExpire(key, change.at);
    ctx.Dirty();
    ctx.Notify(kNotifyGeneric, "expire", key);
    ctx.PropagateAs({"PEXPIREAT", std::string(key), std::to_string(change.at)});
  } else if (change.kind == ExpiryChange::kPersist) {
    const Entry* e = db.Lookup(key, ctx.now_ms());
    if (e == nullptr || !e->has_expire) return;
    db.SetExpire(key, kNoExpire);
    ctx.Dirty();
    ctx.Notify(kNotifyGeneric, "persist", key);
    ctx.PropagateAs({"PERSIST", std::string(key)});
  }
}

void Delete(CommandContext& ctx, std::string_view key) {
  ctx.db().Delete(key);
  ctx.Dirty();
  ctx.Notify(kNotifyGeneric, "del", key);
  ctx.PropagateAs({"DEL", std::string(key)});
}

StatusOr<int64_t> IncrBy(CommandContext& ctx, std::string_view key, int64_t incr) {
  Entry* e;
  if (Status st = FindForWrite(ctx, key, &e); !st.ok()) return st;
  int64_t value = 0;
  if (e != nullptr && !Database::StringAsInteger(e, &value)) {
    return Status::InvalidArgument(protocol::err::Message(protocol::err::kNotInteger));
  }
  if ((incr < 0 && value < 0 && incr < kInt64Min - value) || (incr > 0 && value > 0 && incr > kInt64Max - value)) {
    return Status::OutOfRange(protocol::err::Message(protocol::err::kOverflow));
  }
  value += incr;
  if (e == nullptr || !Database::UpdateIntegerInPlace(e, value)) ctx.db().SetInteger(key, value, kNoExpire, true);
  ctx.Dirty();
  ctx.Notify(kNotifyString, "incrby", key);
  return value;
}

StatusOr<std::string> IncrByFloat(CommandContext& ctx, std::string_view key, std::string_view incr_text) {
  Entry* e;
  if (Status st = FindForWrite(ctx, key, &e); !st.ok()) return st;
  long double value = 0, incr;
  char buf[Database::kIntBufSize];
  if ((e != nullptr && !ParseLongDouble(Database::StringValue(e, buf), &value)) ||
      !ParseLongDouble(incr_text, &incr)) {
    return Status::InvalidArgument(protocol::err::Message(protocol::err::kNotFloat));
  }
  value += incr;
  if (std::isnan(value) || std::isinf(value)) {
    return Status::OutOfRange(protocol::err::Message(protocol::err::kIncrNaN));
  }
  std::string text = FormatLongDouble(value);
  ctx.db().SetString(key, text, kNoExpire, true, /*int_encode=*/false);
  ctx.Dirty();
  ctx.Notify(kNotifyString, "incrbyfloat", key);
  ctx.PropagateAs({"SET", std::string(key), text, "KEEPTTL"});
  return text;
}

StatusOr<size_t> Append(CommandContext& ctx, std::string_view key, std::string_view tail) {
  Entry* e;
  if (Status st = FindForWrite(ctx, key, &e); !st.ok()) return st;
  size_t len;
  if (e == nullptr) {
    ctx.db().SetString(key, tail, kNoExpire, false);
    len = tail.size();
  } else {
    if (Status st = CheckStringLength(ctx, StringLength(e), tail.size()); !st.ok()) return st;
    len = ctx.db().AppendString(key, tail);
  }
  ctx.Dirty();
  ctx.Notify(kNotifyString, "append", key);
  return len;
}

StatusOr<size_t> SetRange(CommandContext& ctx, std::string_view key, uint64_t offset, std::string_view value) {
  Entry* e;
  if (Status st = FindForWrite(ctx, key, &e); !st.ok()) return st;
  if (value.empty()) return e == nullptr ? size_t{0} : StringLength(e);
  if (Status st = CheckStringLength(ctx, offset, value.size()); !st.ok()) return st;
  if (e == nullptr) ctx.db().SetString(key, "", kNoExpire, false);
  const size_t len = ctx.db().SetRange(key, static_cast<size_t>(offset), value);
  ctx.Dirty();
  ctx.Notify(kNotifyString, "setrange", key);
  return len;
}

}  // namespace feedkv::server::string_ops
