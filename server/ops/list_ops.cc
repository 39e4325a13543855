#include "server/ops/list_ops.h"

#include <algorithm>
#include <memory>

#include "protocol/error_text.h"
#include "server/commands/lookup.h"
#include "server/config.h"
#include "server/ops/index_range.h"
#include "server/server.h"
#include "storage/database.h"
#include "storage/int_text.h"

namespace feedkv::server::list_ops {

namespace {

// A new, empty list at `key`.
ListValue* Create(CommandContext& ctx, std::string_view key, Entry** entry) {
  *entry = ctx.db().SetObject(key, std::make_unique<ListValue>(), kNoExpire, false);
  return static_cast<ListValue*>(Database::GetObject(*entry));
}

// After elements left the list: an empty list is deleted (as Redis, with a "del"
// event after the command's own), else its memory count is brought up to date.
void AfterRemoval(CommandContext& ctx, std::string_view key, Entry* e, ListValue* l) {
  if (l->empty()) {
    ctx.db().Delete(key);
    ctx.Notify(kNotifyGeneric, "del", key);
  } else {
    ctx.db().UpdateObjectMemory(e);
  }
}

std::string_view PopEvent(bool front) { return front ? "lpop" : "rpop"; }
std::string_view PushEvent(bool front) { return front ? "lpush" : "rpush"; }

}  // namespace

int64_t Fill(const CommandContext& ctx) { return ctx.server.cfg().list_max_listpack_size; }

StatusOr<const ListValue*> Find(CommandContext& ctx, std::string_view key) {
  Entry* e;
  ListValue* l;
  if (Status st = FindTyped(ctx, key, ValueType::kList, true, &e, &l); !st.ok()) return st;
  return static_cast<const ListValue*>(l);
}

Status FindForWrite(CommandContext& ctx, std::string_view key, Entry** entry, ListValue** list) {
  return FindTyped(ctx, key, ValueType::kList, false, entry, list);
}

StatusOr<size_t> Push(CommandContext& ctx, std::string_view key, bool front,
                      std::span<const std::string_view> elements, bool only_existing) {
  Entry* e;
  ListValue* l;
  if (Status st = FindForWrite(ctx, key, &e, &l); !st.ok()) return st;
  if (l == nullptr) {
    if (only_existing) return size_t{0};
    l = Create(ctx, key, &e);
  }
  const int64_t fill = Fill(ctx);
  for (std::string_view element : elements) l->Push(front, element, fill);
  ctx.db().UpdateObjectMemory(e);
  ctx.Dirty(static_cast<int64_t>(elements.size()));
  ctx.Notify(kNotifyList, PushEvent(front), key);
  return l->size();
}

StatusOr<std::optional<std::string>> PopOne(CommandContext& ctx, std::string_view key, bool front) {
  Entry* e;
  ListValue* l;
  if (Status st = FindForWrite(ctx, key, &e, &l); !st.ok()) return st;
  if (l == nullptr) return std::optional<std::string>();
  std::optional<std::string> value(l->Pop(front));
  ctx.Dirty();
  ctx.Notify(kNotifyList, PopEvent(front), key);
  AfterRemoval(ctx, key, e, l);
  return value;
}

StatusOr<std::optional<std::vector<std::string>>> PopMany(CommandContext& ctx, std::string_view key,
                                                          bool front, size_t count) {
  Entry* e;
  ListValue* l;
  if (Status st = FindForWrite(ctx, key, &e, &l); !st.ok()) return st;
  if (l == nullptr) return std::optional<std::vector<std::string>>();
  std::vector<std::string> values;
  if (count == 0) return std::optional(std::move(values));
  values.reserve(std::min(count, l->size()));
  while (values.size() < count && !l->empty()) values.push_back(l->Pop(front));
  ctx.Dirty(static_cast<int64_t>(values.size()));
  ctx.Notify(kNotifyList, PopEvent(front), key);
  AfterRemoval(ctx, key, e, l);
  return std::optional(std::move(values));
}

StatusOr<std::vector<std::string>> PopServed(CommandContext& ctx, std::string_view key, bool front,
                                             size_t count, bool log_count) {
  Entry* e;
  ListValue* l;
  if (Status st = FindForWrite(ctx, key, &e, &l); !st.ok()) return st;
  std::vector<std::string> values;
  if (l == nullptr) return values;
  values.reserve(std::min(count, l->size()));
  while (values.size() < count && !l->empty()) values.push_back(l->Pop(front));
  std::vector<std::string> logged = {front ? "LPOP" : "RPOP", std::string(key)};
  if (log_count) logged.push_back(std::to_string(values.size()));
  ctx.PropagateAs(std::move(logged));
  ctx.Touched(ctx.client.db, key);
  ctx.Notify(kNotifyList, PopEvent(front), key);
  AfterRemoval(ctx, key, e, l);
  ctx.Dirty(static_cast<int64_t>(values.size()));
  return values;
}

StatusOr<int64_t> Insert(CommandContext& ctx, std::string_view key, bool after, std::string_view pivot,
                         std::string_view element) {
  Entry* e;
  ListValue* l;
  if (Status st = FindForWrite(ctx, key, &e, &l); !st.ok()) return st;
  if (l == nullptr) return int64_t{0};
  if (!l->InsertAtPivot(pivot, element, after, Fill(ctx))) return int64_t{-1};
  ctx.db().UpdateObjectMemory(e);
  ctx.Dirty();
  ctx.Notify(kNotifyList, "linsert", key);
  return static_cast<int64_t>(l->size());
}

Status Set(CommandContext& ctx, std::string_view key, std::string_view index_text, std::string_view element) {
  Entry* e;
  ListValue* l;
  if (Status st = FindForWrite(ctx, key, &e, &l); !st.ok()) return st;
  if (l == nullptr) return Status::NotFound(protocol::err::Message(protocol::err::kNoSuchKey));
  int64_t index;
  if (!ParseCanonicalInt64(index_text, &index)) {
    return Status::InvalidArgument(protocol::err::Message(protocol::err::kNotInteger));
  }
  size_t at;
  if (!ResolveIndex(index, l->size(), &at)) {
    return Status::OutOfRange(protocol::err::Message(protocol::err::kOutOfRange));
  }
  l->Set(at, element, Fill(ctx));
  ctx.db().UpdateObjectMemory(e);
  ctx.Dirty();
  ctx.Notify(kNotifyList, "lset", key);
  return Status::OK();
}

Status Trim(CommandContext& ctx, std::string_view key, int64_t start, int64_t stop) {
  Entry* e;
  ListValue* l;
  if (Status st = FindForWrite(ctx, key, &e, &l); !st.ok()) return st;
  if (l == nullptr) return Status::OK();
  size_t lo = 0, hi = 0;
  const size_t size = l->size();
  size_t removed;
  if (!ResolveRange(start, stop, size, &lo, &hi)) {
    removed = size;
    l->RemoveEnds(true, size);
  } else {
    removed = lo + (size - 1 - hi);
    l->RemoveEnds(true, lo);
    l->RemoveEnds(false, size - 1 - hi);
  }
  // Redis signals the key even when nothing was trimmed (WATCH sees it).
  ctx.Touched(ctx.client.db, key);
  ctx.Notify(kNotifyList, "ltrim", key);
  AfterRemoval(ctx, key, e, l);
  ctx.Dirty(static_cast<int64_t>(removed));
  return Status::OK();
}

StatusOr<size_t> RemoveEqual(CommandContext& ctx, std::string_view key, int64_t count,
                             std::string_view element) {
  Entry* e;
  ListValue* l;
  if (Status st = FindForWrite(ctx, key, &e, &l); !st.ok()) return st;
  if (l == nullptr) return size_t{0};
  const size_t removed = l->RemoveEqual(element, count);
  if (removed > 0) {
    ctx.Notify(kNotifyList, "lrem", key);
    AfterRemoval(ctx, key, e, l);
    ctx.Dirty(static_cast<int64_t>(removed));
  }
  return removed;
}

StatusOr<std::optional<std::string>> Move(CommandContext& ctx, std::string_view src_key,
                                          std::string_view dst_key, bool from_front, bool to_front) {
  Entry *src_e, *dst_e;
  ListValue *src, *dst;
  if (Status st = FindForWrite(ctx, src_key, &src_e, &src); !st.ok()) return st;
  if (src == nullptr) return std::optional<std::string>();
  if (Status st = FindForWrite(ctx, dst_key, &dst_e, &dst); !st.ok()) return st;
  std::optional<std::string> value(src->Pop(from_front));
  // Events as Redis: the push on the destination, then the pop on the source.
  if (src_key == dst_key) {
    src->Push(to_front, *value, Fill(ctx));
    ctx.db().UpdateObjectMemory(src_e);
    ctx.Notify(kNotifyList, PushEvent(to_front), dst_key);
    ctx.Notify(kNotifyList, PopEvent(from_front), src_key);
  } else {
    if (dst == nullptr) dst = Create(ctx, dst_key, &dst_e);
    dst->Push(to_front, *value, Fill(ctx));
    ctx.db().UpdateObjectMemory(dst_e);
    ctx.Notify(kNotifyList, PushEvent(to_front), dst_key);
    ctx.Notify(kNotifyList, PopEvent(from_front), src_key);
    AfterRemoval(ctx, src_key, src_e, src);
  }
  ctx.Dirty();
  return value;
}

}  // namespace feedkv::server::list_ops
