#include "server/ops/hash_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "protocol/error_text.h"
#include "server/commands/lookup.h"
#include "server/config.h"
#include "server/server.h"
#include "storage/database.h"
#include "storage/float_text.h"
#include "storage/int_text.h"

namespace feedkv::server::hash_ops {

namespace {

// The hash at `key` for a write: null when missing, WrongType for another type.
Status FindForWrite(CommandContext& ctx, std::string_view key, Entry** entry, HashValue** hash) {
  return FindTyped(ctx, key, ValueType::kHash, false, entry, hash);
}

// A new, empty hash at `key`, sized for `hint` fields of up to `max_len` bytes.
HashValue* Create(CommandContext& ctx, std::string_view key, size_t hint, size_t max_len, Entry** entry) {
  *entry = ctx.db().SetObject(key, HashValue::Create(hint, max_len, Limits(ctx)), kNoExpire, false);
  return static_cast<HashValue*>(Database::GetObject(*entry));
}

// Sets one field after an increment, creating the hash when missing, with its books.
void Store(CommandContext& ctx, std::string_view key, Entry* e, HashValue* h, std::string_view field,
           std::string_view text, std::string_view event) {
  if (h == nullptr) h = Create(ctx, key, 1, std::max(field.size(), text.size()), &e);
  h->Set(field, text, Limits(ctx));
  ctx.db().UpdateObjectMemory(e);
  ctx.Dirty();
  ctx.Notify(kNotifyHash, event, key);
}

}  // namespace

HashLimits Limits(const CommandContext& ctx) {
  const ServerConfig& c = ctx.server.cfg();
  return HashLimits{static_cast<size_t>(c.hash_max_listpack_entries),
                    static_cast<size_t>(c.hash_max_listpack_value)};
}

StatusOr<const HashValue*> Find(CommandContext& ctx, std::string_view key) {
  Entry* e;
  HashValue* h;
  if (Status st = FindTyped(ctx, key, ValueType::kHash, true, &e, &h); !st.ok()) return st;
  return static_cast<const HashValue*>(h);
}

StatusOr<size_t> Set(CommandContext& ctx, std::string_view key, std::span<const std::string_view> pairs) {
  Entry* e;
  HashValue* h;
  if (Status st = FindForWrite(ctx, key, &e, &h); !st.ok()) return st;
  if (h == nullptr) {
    size_t max_len = 0;
    for (std::string_view s : pairs) max_len = std::max(max_len, s.size());
    h = Create(ctx, key, pairs.size() / 2, max_len, &e);
  }
  const HashLimits limits = Limits(ctx);
  size_t added = 0;
  for (size_t i = 0; i + 1 < pairs.size(); i += 2) added += h->Set(pairs[i], pairs[i + 1], limits);
  ctx.db().UpdateObjectMemory(e);
  ctx.Dirty(static_cast<int64_t>(pairs.size() / 2));
  ctx.Notify(kNotifyHash, "hset", key);
  return added;
}

StatusOr<bool> SetIfAbsent(CommandContext& ctx, std::string_view key, std::string_view field,
                           std::string_view value) {
  Entry* e;
  HashValue* h;
  if (Status st = FindForWrite(ctx, key, &e, &h); !st.ok()) return st;
  std::string_view old;
  if (h != nullptr && h->Get(field, &old)) return false;
  Store(ctx, key, e, h, field, value, "hset");
  return true;
}

StatusOr<size_t> Remove(CommandContext& ctx, std::string_view key, std::span<const std::string_view> fields) {
  Entry* e;
  HashValue* h;
  if (Status st = FindForWrite(ctx, key, &e, &h); !st.ok()) return st;
  if (h == nullptr) return size_t{0};
  size_t removed = 0;
  for (size_t i = 0; i < fields.size() && !h->empty(); ++i) removed += h->Remove(fields[i]);
  if (removed == 0) return removed;
  ctx.Notify(kNotifyHash, "hdel", key);
  if (h->empty()) {
    ctx.db().Delete(key);
    ctx.Notify(kNotifyGeneric, "del", key);
  } else {
    ctx.db().UpdateObjectMemory(e);
  }
  ctx.Dirty(static_cast<int64_t>(removed));
  return removed;
}

StatusOr<int64_t> IncrBy(CommandContext& ctx, std::string_view key, std::string_view field, int64_t incr) {
  Entry* e;
  HashValue* h;
  if (Status st = FindForWrite(ctx, key, &e, &h); !st.ok()) return st;
  int64_t value = 0;
  std::string_view old;
  if (h != nullptr && h->Get(field, &old) && !ParseCanonicalInt64(old, &value)) {
    return Status::InvalidArgument(protocol::err::Message(protocol::err::kHashValueNotInteger));
  }
  if ((incr < 0 && value < 0 && incr < INT64_MIN - value) || (incr > 0 && value > 0 && incr > INT64_MAX - value)) {
    return Status::OutOfRange(protocol::err::Message(protocol::err::kOverflow));
  }
  value += incr;
  char buf[32];
  Store(ctx, key, e, h, field, FormatInt64(value, buf), "hincrby");
  return value;
}

StatusOr<std::string> IncrByFloat(CommandContext& ctx, std::string_view key, std::string_view field,
                                  long double incr) {
  Entry* e;
  HashValue* h;
  if (Status st = FindForWrite(ctx, key, &e, &h); !st.ok()) return st;
  long double value = 0;
  std::string_view old;
  if (h != nullptr && h->Get(field, &old) && !ParseLongDouble(old, &value)) {
    return Status::InvalidArgument(protocol::err::Message(protocol::err::kHashValueNotFloat));
  }
  value += incr;
  if (std::isnan(value) || std::isinf(value)) {
    return Status::OutOfRange(protocol::err::Message(protocol::err::kIncrNaN));
  }
  std::string text = FormatLongDouble(value);
  Store(ctx, key, e, h, field, text, "hincrbyfloat");
  ctx.PropagateAs({"HSET", std::string(key), std::string(field), text});
  return text;
}

}  // namespace feedkv::server::hash_ops
