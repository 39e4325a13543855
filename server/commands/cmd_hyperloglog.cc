// HyperLogLog commands: PFADD, PFCOUNT, PFMERGE and PFDEBUG, with Redis 7.0's
// replies and error texts (hyperloglog.c). An HLL is an ordinary string in Redis's
// format (storage/hyperloglog.h), so GET/SET/DUMP/RESTORE move it between Redis and
// feedkv unchanged.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/server.h"
#include "storage/database.h"
#include "storage/hyperloglog.h"

namespace feedkv::server {

namespace {

// The HLL string at `key`, viewed (valid until the key changes): false after an
// error reply (another type, or a string that is not an HLL); *found false when
// the key is missing.
bool LookupHll(CommandContext& ctx, std::string_view key, bool read, std::string_view* out, bool* found,
               Entry** entry = nullptr) {
  Entry* e = read ? ctx.LookupRead(ctx.db(), key, ctx.now_ms()) : ctx.db().Lookup(key, ctx.now_ms());
  if (entry != nullptr) *entry = e;
  *found = e != nullptr;
  if (e == nullptr) return true;
  if (e->type != ValueType::kString) {
    ctx.WrongType();
    return false;
  }
  // An integer-encoded value is never an HLL (as Redis's sdsEncodedObject test), so
  // the view below never needs a scratch buffer.
  if (e->encoding == kEncInt) {
    ctx.Error(protocol::err::kHllNotValid);
    return false;
  }
  char unused[Database::kIntBufSize];
  *out = Database::StringValue(e, unused);
  if (!hll::LooksValid(*out)) {
    ctx.Error(protocol::err::kHllNotValid);
    return false;
  }
  return true;
}

// The same, copied for editing.
bool LookupHll(CommandContext& ctx, std::string_view key, bool read, std::string* out, bool* found) {
  std::string_view view;
  if (!LookupHll(ctx, key, read, &view, found)) return false;
  out->assign(view);
  return true;
}

size_t SparseMaxBytes(const CommandContext& ctx) {
  return static_cast<size_t>(ctx.server.cfg().hll_sparse_max_bytes);
}

// Stores a changed HLL back, keeping the key's TTL, raw-encoded as Redis keeps an
// HLL (OBJECT ENCODING "raw", however short).
void StoreHll(CommandContext& ctx, std::string_view key, const std::string& hll) {
  ctx.db().SetString(key, hll, kNoExpire, true);
  ctx.db().StringBytesForWrite(key, 0);
}

// PFADD key [element ...]
void PfAdd(CommandContext& ctx) {
  const std::string_view key = ctx.arg(1);
  std::string hll;
  bool found;
  if (!LookupHll(ctx, key, false, &hll, &found)) return;
  int updated = 0;
  if (!found) {
    hll = hll::NewSparse();
    updated = 1;
  }
  std::vector<std::string_view> elements(ctx.args.begin() + 2, ctx.args.end());
  const int r = hll::Add(&hll, elements.data(), elements.size(), SparseMaxBytes(ctx));
  if (r < 0) return ctx.Error(protocol::err::kHllCorrupt);
  updated += r;
  if (updated > 0) {
    hll::InvalidateCache(&hll);
    StoreHll(ctx, key, hll);
    ctx.Dirty(updated);
    ctx.Notify(kNotifyString, "pfadd", key);
  }
  ctx.reply.Integer(updated > 0 ? 1 : 0);
}

// PFCOUNT key [key ...]
void PfCount(CommandContext& ctx) {
  if (ctx.argc() > 2) {
    hll::Registers max = {};
    for (size_t j = 1; j < ctx.argc(); ++j) {
      std::string_view hll;
      bool found;
      if (!LookupHll(ctx, ctx.arg(j), true, &hll, &found)) return;
      if (found && !hll::MergeInto(hll, max)) return ctx.Error(protocol::err::kHllCorrupt);
    }
    return ctx.reply.Integer(static_cast<int64_t>(hll::Count(max)));
  }
  const std::string_view key = ctx.arg(1);
  std::string_view hll;
  bool found;
  Entry* e;
  if (!LookupHll(ctx, key, true, &hll, &found, &e)) return;
  if (!found) return ctx.reply.Integer(0);
  uint64_t count;
  if (!hll::CachedCount(hll, &count)) {
    if (!hll::CountOf(hll, &count)) return ctx.Error(protocol::err::kHllCorrupt);
    // The count is cached in the string, as Redis: a change WATCH sees.
    // In place when the value is a heap string (as PFADD leaves it): the same
    // size, so nothing to account, and no second lookup.
    std::string* bytes = e->encoding == kEncRaw ? e->v.raw : ctx.db().StringBytesForWrite(key, 0);
    hll::SetCachedCount(bytes, count);
    ctx.Touched(ctx.client.db, key);
    ctx.Dirty();
  }
  ctx.reply.Integer(static_cast<int64_t>(count));
}

// PFMERGE destkey [sourcekey ...]: the destination's registers take the maximum
// of every HLL named, the destination's own included.
void PfMerge(CommandContext& ctx) {
  hll::Registers max = {};
  bool any_dense = false;
  for (size_t j = 1; j < ctx.argc(); ++j) {
    std::string_view hll;
    bool found;
    if (!LookupHll(ctx, ctx.arg(j), true, &hll, &found)) return;
    if (!found) continue;
    any_dense |= !hll::IsSparse(hll);
    if (!hll::MergeInto(hll, max)) return ctx.Error(protocol::err::kHllCorrupt);
  }
  const std::string_view dest = ctx.arg(1);
  std::string hll;
  bool found;
  if (!LookupHll(ctx, dest, false, &hll, &found)) return;
  if (!found) hll = hll::NewSparse();
  if (any_dense && !hll::ToDense(&hll)) return ctx.Error(protocol::err::kHllCorrupt);
  if (!hll::SetRegisters(&hll, max, SparseMaxBytes(ctx))) return ctx.Error(protocol::err::kHllCorrupt);
  hll::InvalidateCache(&hll);
  StoreHll(ctx, dest, hll);
  ctx.Touched(ctx.client.db, dest);
  ctx.Dirty();
  ctx.Notify(kNotifyString, "pfadd", dest);
  ctx.reply.Ok();
}

// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key
void PfDebug(CommandContext& ctx) {
  const std::string_view sub = ctx.arg(1), key = ctx.arg(2);
  std::string hll;
  bool found;
  if (!LookupHll(ctx, key, false, &hll, &found)) return;
  if (!found) return ctx.Error(protocol::err::kHllNoKey);
  if (EqualsIgnoreCase(sub, "getreg") || EqualsIgnoreCase(sub, "todense")) {
    const bool converts = hll::IsSparse(hll);
    if (converts) {
      if (!hll::ToDense(&hll)) return ctx.Error(protocol::err::kHllCorrupt);
      StoreHll(ctx, key, hll);
      ctx.Touched(ctx.client.db, key);
      ctx.Dirty();
    }
    if (EqualsIgnoreCase(sub, "todense")) return ctx.reply.Integer(converts ? 1 : 0);
    hll::Registers regs;
    hll::Decode(hll, regs);
    ctx.reply.ArrayHeader(hll::kRegisters);
    for (uint8_t r : regs) ctx.reply.Integer(r);
  } else if (EqualsIgnoreCase(sub, "decode")) {
    if (!hll::IsSparse(hll)) return ctx.Error(protocol::err::kHllNotSparse);
    std::string text;
    hll::DescribeSparse(hll, &text);
    ctx.reply.Bulk(text);
  } else if (EqualsIgnoreCase(sub, "encoding")) {
    ctx.reply.Simple(hll::IsSparse(hll) ? "sparse" : "dense");
  } else {
    ctx.Error(fmt::format(protocol::err::kHllDebugUnknown, sub));
  }
}

// PFSELFTEST
void PfSelfTest(CommandContext& ctx) {
  const std::string failed = hll::SelfTest();
  if (!failed.empty()) return ctx.Error(failed);
  ctx.reply.Ok();
}

const CommandSpec kCommands[] = {
    {"pfadd", -2, kWrite | kDenyOom | kFast, 1, 1, 1, PfAdd, "Adds the specified elements to the specified HyperLogLog.", "hyperloglog", {}, {kKeyRW | kKeyInsert}},
    {"pfcount", -2, kReadOnly, 1, -1, 1, PfCount, "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).", "hyperloglog", {}, {kKeyRW | kKeyAccess}},
    {"pfmerge", -2, kWrite | kDenyOom, 1, -1, 1, PfMerge, "Merge N different HyperLogLogs into a single one.", "hyperloglog", {}, {kKeyRW | kKeyAccess | kKeyInsert, kKeyRO | kKeyAccess}},
    {"pfselftest", 1, kAdmin, 0, 0, 0, PfSelfTest, "An internal command for testing HyperLogLog values", "hyperloglog", {}, {}},
    {"pfdebug", 3, kWrite | kDenyOom | kAdmin, 2, 2, 1, PfDebug, "Internal commands for debugging HyperLogLog values", "hyperloglog", {}, {kKeyRW | kKeyAccess}},
};

}  // namespace

std::span<const CommandSpec> HyperLogLogCommands() { return kCommands; }

}  // namespace feedkv::server
