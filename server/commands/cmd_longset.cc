// LongSet commands: LSSET, LSDUMP, LSADD, LSREM, LSISMEMBER, LSMISMEMBER, LSCARD,
// LSMEMBERS, LSSCAN, LSINTER, LSINTERCARD, LSDIFF, LSINFO. They address a set in the
// longset encoding directly: members are int64s in canonical decimal on the way in and
// RESP integers on the way out; a set in the hashtable encoding (or any other type)
// gets WRONGTYPE. The same keys answer the S* commands (cmd_sets.cc); the rows both
// families have share one handler (set_family.h, with IdMembers), so only the
// whole-value commands live here.
#include <memory>
#include <string>

#include "server/command_context.h"
#include "server/commands/set_family.h"
#include "server/config.h"
#include "server/ops/set_ops.h"
#include "server/ops/store_result.h"
#include "server/server.h"
#include "storage/database.h"
#include "storage/long_set_image.h"
#include "storage/set_value.h"

namespace feedkv::server {

namespace {

using namespace set_family;  // NOLINT: the shared handlers, one per row

// ---- whole-value commands ----

void LsSet(CommandContext& ctx) {
  std::unique_ptr<LongSet> ls;
  Status st = LongSet::FromImage(ctx.arg(2), set_ops::Options(ctx), &ls);
  if (!st.ok()) return ctx.Error(st);
  std::unique_ptr<Object> value;  // null for an empty image: empty sets do not exist
  if (!ls->empty()) value = std::make_unique<SetValue>(std::move(*ls));
  StoreResult(ctx, ctx.arg(1), std::move(value), 0, kNotifySet);
  ctx.reply.Ok();
}

void LsDump(CommandContext& ctx) {
  const SetValue* set;
  if (!ctx.Found(set_ops::Find(ctx, ctx.arg(1), set_ops::Accept::kLongSetOnly), &set)) return;
  if (set == nullptr) return ctx.reply.Null();
  std::string image;
  set->longset().SerializeImage(&image);
  ctx.reply.Bulk(image);
}

void LsInfo(CommandContext& ctx) {
  const SetValue* set;
  if (!ctx.Found(set_ops::Find(ctx, ctx.arg(1), set_ops::Accept::kLongSetOnly), &set)) return;
  if (set == nullptr) return ctx.reply.Null();
  const LongSet& ls = set->longset();
  const LongSetProbeStats st = ls.Stats();
  auto& r = ctx.reply;
  r.MapHeader(9);
  r.Bulk("capacity");
  r.Integer(static_cast<int64_t>(ls.capacity()));
  r.Bulk("count");
  r.Integer(static_cast<int64_t>(ls.size()));
  r.Bulk("tombstones");
  r.Integer(static_cast<int64_t>(st.tombstones));
  r.Bulk("fill");
  r.Double(st.fill);
  r.Bulk("max-fill");
  r.Double(ctx.server.cfg().longset_max_fill);
  r.Bulk("mean-probe");
  r.Double(st.mean_probe);
  r.Bulk("max-probe");
  r.Integer(st.max_probe);
  r.Bulk("memory");
  r.Integer(static_cast<int64_t>(set->MemoryUsage()));
  r.Bulk("image-bytes");
  r.Integer(static_cast<int64_t>(longset_image::kHeaderSize + ls.capacity() * longset_image::kSlotSize));
}

constexpr uint32_t kW = kWrite | kDenyOom;

const CommandSpec kCommands[] = {
    {"lsset", 3, kW, 1, 1, 1, LsSet, "Replaces a key's value with a longset built from a client-made table image.", "longset", {}, {kKeyOW | kKeyUpdate}},
    {"lsdump", 2, kReadOnly, 1, 1, 1, LsDump, "Returns a longset's table image (LSSET's input).", "longset"},
    {"lsadd", -3, kW | kFast, 1, 1, 1, Add<IdMembers>, "Adds integer members to a longset. Creates the key if it doesn't exist.", "longset", {}, {kKeyRW | kKeyInsert}},
    {"lsrem", -3, kWrite | kFast, 1, 1, 1, Remove<IdMembers>, "Removes integer members from a longset. Deletes the key when it empties.", "longset", {}, {kKeyRW | kKeyDelete}},
    {"lsismember", 3, kReadOnly | kFast, 1, 1, 1, IsMember<IdMembers>, "Determines whether an integer belongs to a longset.", "longset", {}, {kKeyRO}},
    {"lsmismember", -3, kReadOnly | kFast, 1, 1, 1, MIsMember<IdMembers>, "Determines whether several integers belong to a longset.", "longset"},
    {"lscard", 2, kReadOnly | kFast, 1, 1, 1, Card<IdMembers>, "Returns the number of members of a longset.", "longset", {}, {kKeyRO}},
    {"lsmembers", 2, kReadOnly, 1, 1, 1, Members<IdMembers>, "Returns all members of a longset, as integers.", "longset"},
    {"lsscan", -3, kReadOnly, 1, 1, 1, Scan<IdMembers, false>, "Iterates over the members of a longset, stable across growth.", "longset"},
    {"lsinter", -2, kReadOnly, 1, -1, 1, Inter<IdMembers>, "Returns the intersection of longsets, as integers.", "longset"},
    {"lsintercard", -3, kReadOnly | kKeyNum, 1, 1, 1, InterCard<IdMembers>, "Returns the number of members of the intersection of longsets.", "longset"},
    {"lsdiff", -2, kReadOnly, 1, -1, 1, Diff<IdMembers>, "Returns the members of the first longset that are in none of the others.", "longset"},
    {"lsinfo", 2, kReadOnly, 1, 1, 1, LsInfo, "Returns a longset's table statistics: capacity, count, tombstones, fill, probe lengths.", "longset"},
};

}  // namespace

std::span<const CommandSpec> LongSetCommands() { return kCommands; }

}  // namespace feedkv::server
