#include "server/ops/hll_ops.h"

#include <string>

#include "protocol/error_text.h"
#include "server/server.h"
#include "storage/database.h"

namespace feedkv::server::hll_ops {

namespace {

Status NotAnHll() { return Status::WrongType(protocol::err::Message(protocol::err::kHllNotValid)); }
Status Corrupt() { return Status::InvalidObject(protocol::err::Message(protocol::err::kHllCorrupt)); }

// The HLL's entry and bytes at `key` (a null entry when missing). `read` counts a
// keyspace hit or miss, as Redis's PFCOUNT/PFMERGE sources do and PFADD does not.
Status Lookup(CommandContext& ctx, std::string_view key, bool read, Entry** entry, std::string_view* bytes) {
  Entry* e = read ? ctx.LookupRead(ctx.db(), key, ctx.now_ms()) : ctx.db().Lookup(key, ctx.now_ms());
  *entry = e;
  if (e == nullptr) return Status::OK();
  if (e->type != ValueType::kString) return Status::WrongType();
  // An integer-encoded value is never an HLL (as Redis's sdsEncodedObject test), so
  // the view below never needs its scratch buffer.
  if (e->encoding == kEncInt) return NotAnHll();
  char unused[Database::kIntBufSize];
  *bytes = Database::StringValue(e, unused);
  if (!hll::LooksValid(*bytes)) return NotAnHll();
  return Status::OK();
}

size_t SparseMaxBytes(const CommandContext& ctx) { return static_cast<size_t>(ctx.server.cfg().hll_sparse_max_bytes); }

// Stores a changed HLL back, keeping the key's TTL, raw-encoded as Redis keeps an
// HLL (OBJECT ENCODING "raw", however short).
void Store(CommandContext& ctx, std::string_view key, const std::string& hll) {
  ctx.db().SetString(key, hll, kNoExpire, true);
  ctx.db().StringBytesForWrite(key, 0);
}

StatusOr<std::optional<std::string_view>> Find(CommandContext& ctx, std::string_view key, bool read) {
  Entry* e;
  std::string_view bytes;
  if (Status st = Lookup(ctx, key, read, &e, &bytes); !st.ok()) return st;
  if (e == nullptr) return std::optional<std::string_view>();
  return std::optional<std::string_view>(bytes);
}

}  // namespace

StatusOr<std::optional<std::string_view>> Find(CommandContext& ctx, std::string_view key) {
  return Find(ctx, key, true);
}

StatusOr<std::optional<std::string_view>> Peek(CommandContext& ctx, std::string_view key) {
  return Find(ctx, key, false);
}

StatusOr<bool> Add(CommandContext& ctx, std::string_view key, std::span<const std::string_view> elements) {
  Entry* e;
  std::string_view bytes;
  if (Status st = Lookup(ctx, key, false, &e, &bytes); !st.ok()) return st;
  std::string hll = e != nullptr ? std::string(bytes) : hll::NewSparse();
  const int changed = hll::Add(&hll, elements.data(), elements.size(), SparseMaxBytes(ctx));
  if (changed < 0) return Corrupt();
  const int updated = changed + (e == nullptr ? 1 : 0);
  if (updated == 0) return false;
  hll::InvalidateCache(&hll);
  Store(ctx, key, hll);
  ctx.Dirty(updated);
  ctx.Notify(kNotifyString, "pfadd", key);
  return true;
}

StatusOr<uint64_t> Count(CommandContext& ctx, std::string_view key) {
  Entry* e;
  std::string_view bytes;
  if (Status st = Lookup(ctx, key, true, &e, &bytes); !st.ok()) return st;
  if (e == nullptr) return uint64_t{0};
  uint64_t count;
  if (hll::CachedCount(bytes, &count)) return count;
  if (!hll::CountOf(bytes, &count)) return Corrupt();
  // In place when the value is a heap string (as PFADD leaves it): the same size,
  // so nothing to account, and no second lookup.
  std::string* stored = e->encoding == kEncRaw ? e->v.raw : ctx.db().StringBytesForWrite(key, 0);
  hll::SetCachedCount(stored, count);
  ctx.Touched(ctx.client.db, key);
  ctx.Dirty();
  return count;
}

StatusOr<uint64_t> CountUnion(CommandContext& ctx, std::span<const std::string_view> keys) {
  hll::Registers max = {};
  for (std::string_view key : keys) {
    Entry* e;
    std::string_view bytes;
    if (Status st = Lookup(ctx, key, true, &e, &bytes); !st.ok()) return st;
    if (e != nullptr && !hll::MergeInto(bytes, max)) return Corrupt();
  }
  return hll::Count(max);
}

Status Merge(CommandContext& ctx, std::string_view dest, std::span<const std::string_view> sources) {
  hll::Registers max = {};
  bool any_dense = false;
  Entry* e;
  std::string_view bytes;
  // The destination's own registers count, and are read first, as Redis reads its keys in order.
  for (size_t j = 0; j <= sources.size(); ++j) {
    if (Status st = Lookup(ctx, j == 0 ? dest : sources[j - 1], true, &e, &bytes); !st.ok()) return st;
    if (e == nullptr) continue;
    any_dense |= !hll::IsSparse(bytes);
    if (!hll::MergeInto(bytes, max)) return Corrupt();
  }
  if (Status st = Lookup(ctx, dest, false, &e, &bytes); !st.ok()) return st;
  std::string hll = e != nullptr ? std::string(bytes) : hll::NewSparse();
  if (any_dense && !hll::ToDense(&hll)) return Corrupt();
  if (!hll::SetRegisters(&hll, max, SparseMaxBytes(ctx))) return Corrupt();
  hll::InvalidateCache(&hll);
  Store(ctx, dest, hll);
  ctx.Touched(ctx.client.db, dest);
  ctx.Dirty();
  ctx.Notify(kNotifyString, "pfadd", dest);
  return Status::OK();
}

StatusOr<bool> ToDense(CommandContext& ctx, std::string_view key) {
  Entry* e;
  std::string_view bytes;
  if (Status st = Lookup(ctx, key, false, &e, &bytes); !st.ok()) return st;
  if (e == nullptr) return Status::NotFound(protocol::err::Message(protocol::err::kHllNoKey));
  if (!hll::IsSparse(bytes)) return false;
  std::string hll(bytes);
  if (!hll::ToDense(&hll)) return Corrupt();
  Store(ctx, key, hll);
  ctx.Touched(ctx.client.db, key);
  ctx.Dirty();
  return true;
}

}  // namespace feedkv::server::hll_ops
