// HyperLogLog commands: PFADD, PFCOUNT, PFMERGE and PFDEBUG, with Redis 7.0's
// replies and error texts (hyperloglog.c). Each parses, calls server/ops/hll_ops
// and replies. An HLL is an ordinary string in Redis's
// format (storage/hyperloglog.h), so GET/SET/DUMP/RESTORE move it between Redis and
// feedkv unchanged.
#include <optional>
#include <string>

#include <fmt/format.h>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/ops/hll_ops.h"
#include "storage/hyperloglog.h"

namespace feedkv::server {

namespace {

// PFADD key [element ...]
void PfAdd(CommandContext& ctx) {
  bool changed;
  if (!ctx.Found(hll_ops::Add(ctx, ctx.arg(1), ctx.args.subspan(2)), &changed)) return;
  ctx.reply.Integer(changed ? 1 : 0);
}

// PFCOUNT key [key ...]: one key's count is cached in it; several keys' union is not.
void PfCount(CommandContext& ctx) {
  uint64_t count;
  if (!ctx.Found(ctx.argc() > 2 ? hll_ops::CountUnion(ctx, ctx.args.subspan(1)) : hll_ops::Count(ctx, ctx.arg(1)),
                 &count)) {
    return;
  }
  ctx.reply.Integer(static_cast<int64_t>(count));
}

// PFMERGE destkey [sourcekey ...]
void PfMerge(CommandContext& ctx) {
  if (Status st = hll_ops::Merge(ctx, ctx.arg(1), ctx.args.subspan(2)); !st.ok()) return ctx.Error(st);
  ctx.reply.Ok();
}

// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key
void PfDebug(CommandContext& ctx) {
  const std::string_view sub = ctx.arg(1), key = ctx.arg(2);
  std::optional<std::string_view> hll;
  if (!ctx.Found(hll_ops::Peek(ctx, key), &hll)) return;
  if (!hll) return ctx.Error(protocol::err::kHllNoKey);
  if (EqualsIgnoreCase(sub, "getreg") || EqualsIgnoreCase(sub, "todense")) {
    bool converted;
    if (!ctx.Found(hll_ops::ToDense(ctx, key), &converted)) return;
    if (EqualsIgnoreCase(sub, "todense")) return ctx.reply.Integer(converted ? 1 : 0);
    if (!ctx.Found(hll_ops::Peek(ctx, key), &hll)) return;
    hll::Registers regs;
    hll::Decode(*hll, regs);
    ctx.reply.ArrayHeader(hll::kRegisters);
    for (uint8_t r : regs) ctx.reply.Integer(r);
  } else if (EqualsIgnoreCase(sub, "decode")) {
    if (!hll::IsSparse(*hll)) return ctx.Error(protocol::err::kHllNotSparse);
    std::string text;
    hll::DescribeSparse(*hll, &text);
    ctx.reply.Bulk(text);
  } else if (EqualsIgnoreCase(sub, "encoding")) {
    ctx.reply.Simple(hll::IsSparse(*hll) ? "sparse" : "dense");
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
    {"pfcount", -2, kReadOnly | kMayReplicate, 1, -1, 1, PfCount, "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).", "hyperloglog", {}, {kKeyRW | kKeyAccess}},
    {"pfmerge", -2, kWrite | kDenyOom, 1, -1, 1, PfMerge, "Merge N different HyperLogLogs into a single one.", "hyperloglog", {}, {kKeyRW | kKeyAccess | kKeyInsert, kKeyRO | kKeyAccess}},
    {"pfselftest", 1, kAdmin, 0, 0, 0, PfSelfTest, "An internal command for testing HyperLogLog values", "hyperloglog", {}, {}},
    {"pfdebug", 3, kWrite | kDenyOom | kAdmin, 2, 2, 1, PfDebug, "Internal commands for debugging HyperLogLog values", "hyperloglog", {}, {kKeyRW | kKeyAccess}},
};

}  // namespace

std::span<const CommandSpec> HyperLogLogCommands() { return kCommands; }

}  // namespace feedkv::server
