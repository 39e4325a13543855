// LongSet commands: LSSET, LSDUMP, LSADD, LSREM, LSISMEMBER, LSMISMEMBER, LSCARD,
// LSMEMBERS, LSSCAN, LSINTER, LSINTERCARD, LSDIFF, LSINFO. They address a set in the
// longset encoding directly: members are int64s in canonical decimal on the way in and
// RESP integers on the way out; a set in the hashtable encoding (or any other type)
// gets WRONGTYPE. The same keys answer the S* commands (cmd_sets.cc).
#include <charconv>
#include <string>
#include <vector>

#include "server/command_context.h"
#include "server/commands/set_helpers.h"
#include "server/config.h"
#include "server/server.h"
#include "storage/database.h"
#include "storage/long_set_image.h"
#include "storage/set_value.h"

namespace feedkv::server {

namespace {

bool GatherLongSets(CommandContext& ctx, size_t first, size_t last,
                    std::vector<const SetValue*>* sets) {
  for (size_t i = first; i <= last; ++i) {
    Entry* e;
    SetValue* s;
    if (!LookupLongSet(ctx, ctx.arg(i), true, &e, &s)) return false;
    sets->push_back(s);
  }
  return true;
}

bool AnyMissing(const std::vector<const SetValue*>& sets) {
  for (const SetValue* s : sets) {
    if (s == nullptr) return true;
  }
  return false;
}

// Parses args[first..] as member ids; false after replying the not-an-integer error.
bool ParseIds(CommandContext& ctx, size_t first, std::vector<int64_t>* ids) {
  ids->resize(ctx.argc() - first);
  for (size_t i = first; i < ctx.argc(); ++i) {
    if (!ParseCanonicalInt64(ctx.arg(i), &(*ids)[i - first])) {
      ctx.Error(protocol::err::kNotInteger);
      return false;
    }
  }
  return true;
}

bool ParseId(CommandContext& ctx, size_t i, int64_t* id) {
  if (ParseCanonicalInt64(ctx.arg(i), id)) return true;
  ctx.Error(protocol::err::kNotInteger);
  return false;
}

void ReplyIds(CommandContext& ctx, const std::vector<int64_t>& ids) {
  ctx.reply.SetHeader(ids.size());
  for (int64_t v : ids) ctx.reply.Integer(v);
}

// ---- whole-value commands ----

void LsSet(CommandContext& ctx) {
  std::unique_ptr<LongSet> ls;
  Status st = LongSet::FromImage(ctx.arg(2), Options(ctx), &ls);
  if (!st.ok()) return ctx.Error(st);
  if (ls->empty()) {
    if (ctx.db().Delete(ctx.arg(1))) {  // empty sets do not exist
      ctx.Dirty();
      ctx.Notify(kNotifyGeneric, "del", ctx.arg(1));
    }
  } else {
    ctx.db().SetObject(ctx.arg(1), std::make_unique<SetValue>(std::move(*ls)), kNoExpire, false);
    ctx.Dirty();
    ctx.Notify(kNotifySet, "lsset", ctx.arg(1));
  }
  ctx.reply.Ok();
}

void LsDump(CommandContext& ctx) {
  Entry* e;
  SetValue* set;
  if (!LookupLongSet(ctx, ctx.arg(1), true, &e, &set)) return;
  if (set == nullptr) return ctx.reply.Null();
  std::string image;
  set->longset().SerializeImage(&image);
  ctx.reply.Bulk(image);
}

void LsInfo(CommandContext& ctx) {
  Entry* e;
  SetValue* set;
  if (!LookupLongSet(ctx, ctx.arg(1), true, &e, &set)) return;
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

// ---- member commands ----

void LsAdd(CommandContext& ctx) {
  std::vector<int64_t> ids;
  if (!ParseIds(ctx, 2, &ids)) return;
  Entry* e;
  SetValue* set;
  if (!LookupLongSet(ctx, ctx.arg(1), false, &e, &set)) return;
  AddToSet(
      ctx, "lsadd", e, set,
      [&](std::unique_ptr<SetValue>* fresh) { return SetValue::FromInts(ids, Options(ctx), fresh); },
      [&](SetValue* s, size_t* added) { return s->AddInts(ids, Options(ctx), added); });
}

void LsRem(CommandContext& ctx) {
  std::vector<int64_t> ids;
  if (!ParseIds(ctx, 2, &ids)) return;
  Entry* e;
  SetValue* set;
  if (!LookupLongSet(ctx, ctx.arg(1), false, &e, &set)) return;
  int64_t removed = 0;
  if (set != nullptr) {
    for (int64_t v : ids) removed += set->RemoveInt(v);
  }
  if (removed > 0) {
    ctx.Notify(kNotifySet, "lsrem", ctx.arg(1));
    AfterRemoval(ctx, ctx.arg(1), e, set);
    ctx.Dirty(removed);
  }
  ctx.reply.Integer(removed);
}

void LsIsMember(CommandContext& ctx) {
  int64_t id;
  if (!ParseId(ctx, 2, &id)) return;
  Entry* e;
  SetValue* set;
  if (!LookupLongSet(ctx, ctx.arg(1), true, &e, &set)) return;
  ReplyBool(ctx, set != nullptr && set->longset().Contains(id));
}

void LsMIsMember(CommandContext& ctx) {
  std::vector<int64_t> ids;
  if (!ParseIds(ctx, 2, &ids)) return;
  Entry* e;
  SetValue* set;
  if (!LookupLongSet(ctx, ctx.arg(1), true, &e, &set)) return;
  ctx.reply.ArrayHeader(ids.size());
  for (int64_t v : ids) ReplyBool(ctx, set != nullptr && set->longset().Contains(v));
}

void LsCard(CommandContext& ctx) {
  Entry* e;
  SetValue* set;
  if (!LookupLongSet(ctx, ctx.arg(1), true, &e, &set)) return;
  ctx.reply.Integer(set != nullptr ? static_cast<int64_t>(set->size()) : 0);
}

void LsMembers(CommandContext& ctx) {
  Entry* e;
  SetValue* set;
  if (!LookupLongSet(ctx, ctx.arg(1), true, &e, &set)) return;
  if (set == nullptr) return ctx.reply.SetHeader(0);
  ctx.reply.SetHeader(set->size());
  set->longset().ForEach([&](int64_t v) { ctx.reply.Integer(v); });
}

void LsScan(CommandContext& ctx) {
  uint64_t cursor;
  if (!ParseScanCursor(ctx, 2, &cursor)) return;
  Entry* e;
  SetValue* set;
  if (!LookupLongSet(ctx, ctx.arg(1), true, &e, &set)) return;  // the key first, as SSCAN
  if (set == nullptr) return ReplyEmptyScan(ctx);
  int64_t count = 10;
  for (size_t i = 3; i < ctx.argc(); i += 2) {
    if (i + 1 >= ctx.argc() || !EqualsIgnoreCase(ctx.arg(i), "COUNT")) return ctx.SyntaxError();
    if (!ctx.IntArg(i + 1, &count)) return;
    if (count < 1) return ctx.SyntaxError();
  }
  std::vector<int64_t> batch;
  const uint64_t next = set->longset().Scan(cursor, static_cast<size_t>(count), &batch);
  char buf[24];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), next);
  (void)ec;
  ctx.reply.ArrayHeader(2);
  ctx.reply.Bulk(std::string_view(buf, static_cast<size_t>(ptr - buf)));
  ctx.reply.ArrayHeader(batch.size());
  for (int64_t v : batch) ctx.reply.Integer(v);
}

// ---- multi-set commands ----

void LsInter(CommandContext& ctx) {
  std::vector<const SetValue*> sets;
  if (!GatherLongSets(ctx, 1, ctx.argc() - 1, &sets)) return;
  std::vector<int64_t> ids;
  if (!AnyMissing(sets)) ForEachInter(sets, 0, [&](const SetMember& m) { ids.push_back(m.i); });
  ReplyIds(ctx, ids);
}

void LsInterCard(CommandContext& ctx) {
  size_t numkeys, limit;
  if (!ParseInterCardArgs(ctx, &numkeys, &limit)) return;
  std::vector<const SetValue*> sets;
  if (!GatherLongSets(ctx, 2, 1 + numkeys, &sets)) return;
  int64_t n = 0;
  if (!AnyMissing(sets)) ForEachInter(sets, limit, [&](const SetMember&) { ++n; });
  ctx.reply.Integer(n);
}

void LsDiff(CommandContext& ctx) {
  std::vector<const SetValue*> sets;
  if (!GatherLongSets(ctx, 1, ctx.argc() - 1, &sets)) return;
  std::vector<int64_t> ids;
  if (sets[0] != nullptr) {
    sets[0]->longset().ForEach([&](int64_t v) {
      for (size_t k = 1; k < sets.size(); ++k) {
        if (sets[k] != nullptr && sets[k]->longset().Contains(v)) return;
      }
      ids.push_back(v);
    });
  }
  ReplyIds(ctx, ids);
}

constexpr uint32_t kW = kWrite | kDenyOom;

const CommandSpec kCommands[] = {
    {"lsset", 3, kW, 1, 1, 1, LsSet, "Replaces a key's value with a longset built from a client-made table image.", "longset", {}, {kKeyOW | kKeyUpdate}},
    {"lsdump", 2, kReadOnly, 1, 1, 1, LsDump, "Returns a longset's table image (LSSET's input).", "longset"},
    {"lsadd", -3, kW | kFast, 1, 1, 1, LsAdd, "Adds integer members to a longset. Creates the key if it doesn't exist.", "longset", {}, {kKeyRW | kKeyInsert}},
    {"lsrem", -3, kWrite | kFast, 1, 1, 1, LsRem, "Removes integer members from a longset. Deletes the key when it empties.", "longset", {}, {kKeyRW | kKeyDelete}},
    {"lsismember", 3, kReadOnly | kFast, 1, 1, 1, LsIsMember, "Determines whether an integer belongs to a longset.", "longset", {}, {kKeyRO}},
    {"lsmismember", -3, kReadOnly | kFast, 1, 1, 1, LsMIsMember, "Determines whether several integers belong to a longset.", "longset"},
    {"lscard", 2, kReadOnly | kFast, 1, 1, 1, LsCard, "Returns the number of members of a longset.", "longset", {}, {kKeyRO}},
    {"lsmembers", 2, kReadOnly, 1, 1, 1, LsMembers, "Returns all members of a longset, as integers.", "longset"},
    {"lsscan", -3, kReadOnly, 1, 1, 1, LsScan, "Iterates over the members of a longset, stable across growth.", "longset"},
    {"lsinter", -2, kReadOnly, 1, -1, 1, LsInter, "Returns the intersection of longsets, as integers.", "longset"},
    {"lsintercard", -3, kReadOnly | kKeyNum, 1, 1, 1, LsInterCard, "Returns the number of members of the intersection of longsets.", "longset"},
    {"lsdiff", -2, kReadOnly, 1, -1, 1, LsDiff, "Returns the members of the first longset that are in none of the others.", "longset"},
    {"lsinfo", 2, kReadOnly, 1, 1, 1, LsInfo, "Returns a longset's table statistics: capacity, count, tombstones, fill, probe lengths.", "longset"},
};

}  // namespace

std::span<const CommandSpec> LongSetCommands() { return kCommands; }

}  // namespace feedkv::server
