// Keyspace commands: DEL, UNLINK, EXISTS, TYPE, KEYS, SCAN, RENAME, RENAMENX,
// COPY, MOVE, RANDOMKEY, TOUCH, OBJECT, MEMORY. (Expiry commands are in
// cmd_expire.cc.) Semantics, replies and error texts follow Redis 7.2.

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "protocol/error_text.h"
#include "server/allocator.h"
#include "server/command_context.h"
#include "server/config.h"
#include "server/commands/scan_args.h"
#include "server/glob.h"
#include "server/server.h"
#include "storage/database.h"
#include "storage/set_value.h"

namespace feedkv::server {

namespace {


bool Expired(const Entry* e, int64_t now) { return e->has_expire && e->expire_ms() <= now; }

// A database index argument (COPY ... DB n, MOVE key n): an int, in range.
bool DbIndexArg(CommandContext& ctx, size_t i, int* out) {
  int64_t v;
  if (!ctx.IntArg(i, &v)) return false;
  if (v < INT_MIN || v > INT_MAX) {
    ctx.Error(fmt::format(protocol::err::kValueNotBetween, INT_MIN,
                          INT_MAX));
    return false;
  }
  if (v < 0 || v >= ctx.server.num_dbs()) {
    ctx.Error(protocol::err::kDbIndexOutOfRange);
    return false;
  }
  *out = static_cast<int>(v);
  return true;
}

// ---------------------------------------------------------------------------

// DEL and UNLINK. UNLINK (and DEL under lazyfree-lazy-user-del) hands a big
// value to the lazy-free thread instead of freeing it here.
void Del(CommandContext& ctx) {
  Database& db = ctx.db();
  int64_t now = ctx.now_ms();
  int64_t deleted = 0;
  const bool lazy = ctx.spec.name == "unlink" || ctx.server.cfg().lazyfree_lazy_user_del;
  for (size_t i = 1; i < ctx.argc(); i++) {
    // Lookup first: a key that has expired is gone already, not deleted now.
    if (db.Lookup(ctx.arg(i), now) == nullptr) continue;
    std::unique_ptr<Object> value;
    if (lazy ? db.Delete(ctx.arg(i), &value) : db.Delete(ctx.arg(i))) {
      ctx.server.lazy_free().Free(std::move(value));
      deleted++;
      ctx.Touched(ctx.client.db, ctx.arg(i));
      ctx.Notify(kNotifyGeneric, "del", ctx.arg(i));
    }
  }
  ctx.Dirty(deleted);
  ctx.reply.Integer(deleted);
}

// EXISTS looks without touching; TOUCH is the same count, touching.
void CountExisting(CommandContext& ctx, bool touch) {
  Database& db = ctx.db();
  int64_t now = ctx.now_ms();
  int64_t n = 0;
  for (size_t i = 1; i < ctx.argc(); i++) {
    if (ctx.LookupRead(db, ctx.arg(i), now, touch) != nullptr) n++;
  }
  ctx.reply.Integer(n);
}

void Exists(CommandContext& ctx) { CountExisting(ctx, false); }
void Touch(CommandContext& ctx) { CountExisting(ctx, true); }

void Type(CommandContext& ctx) {
  Entry* e = ctx.LookupRead(ctx.db(), ctx.arg(1), ctx.now_ms(), /*touch=*/false);
  ctx.reply.Simple(e == nullptr ? std::string_view("none") : ValueTypeName(e->type));
}

void Keys(CommandContext& ctx) {
  std::string_view pattern = ctx.arg(1);
  bool all = pattern == "*";
  int64_t now = ctx.now_ms();
  std::vector<std::string_view> keys;
  ctx.db().ForEach([&](const Entry* e) {
    if (Expired(e, now)) return;
    std::string_view k = e->key();
    if (all || GlobMatch(pattern, k, false)) keys.push_back(k);
  });
  ctx.reply.ArrayHeader(keys.size());
  for (std::string_view k : keys) {
    if (ctx.ReplyOverLimit()) return;  // the reply will not be sent: the client closes
    ctx.reply.Bulk(k);
  }
}

// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]
void Scan(CommandContext& ctx) {
  uint64_t cursor;
  if (!ParseScanCursor(ctx, 1, &cursor)) return;
  int64_t count = 10;
  std::string_view pattern, type;
  bool use_pattern = false, use_type = false;
  for (size_t i = 2; i < ctx.argc(); i += 2) {
    std::string_view opt = ctx.arg(i);
    bool has_value = i + 1 < ctx.argc();
    if (EqualsIgnoreCase(opt, "COUNT") && has_value) {
      if (!ctx.IntArg(i + 1, &count)) return;
      if (count < 1) {
        ctx.SyntaxError();
        return;
      }
    } else if (EqualsIgnoreCase(opt, "MATCH") && has_value) {
      pattern = ctx.arg(i + 1);
      use_pattern = pattern != "*";
    } else if (EqualsIgnoreCase(opt, "TYPE") && has_value) {
      type = ctx.arg(i + 1);
      use_type = true;
    } else {
      ctx.SyntaxError();
      return;
    }
  }

  // Walk buckets until `count` keys were gathered, with at most 10*count
  // steps so that a sparse table cannot block the server.
  Database& db = ctx.db();
  std::vector<const Entry*> found;
  int64_t budget = count > INT64_MAX / 10 ? INT64_MAX : count * 10;
  do {
    cursor = db.Scan(cursor, 1, [&](const Entry* e) { found.push_back(e); });
  } while (cursor != 0 && budget-- > 0 && static_cast<int64_t>(found.size()) < count);

  // Filter. Expired keys are deleted as Redis does; deleting one entry
  // leaves the others (and views of their keys) in place.
  int64_t now = ctx.now_ms();
  std::vector<std::string_view> keys;
  keys.reserve(found.size());
  for (const Entry* e : found) {
    std::string_view k = e->key();
    if (use_pattern && !GlobMatch(pattern, k, false)) continue;
    if (use_type && !EqualsIgnoreCase(type, ValueTypeName(e->type))) continue;
    if (Expired(e, now)) {
      db.Lookup(std::string(k), now);
      continue;
    }
    keys.push_back(k);
  }
  auto& r = ctx.reply;
  r.ArrayHeader(2);
  r.Bulk(std::to_string(cursor));
  r.ArrayHeader(keys.size());
  for (std::string_view k : keys) r.Bulk(k);
}

void RenameGeneric(CommandContext& ctx, bool nx) {
  Database& db = ctx.db();
  int64_t now = ctx.now_ms();
  std::string_view src = ctx.arg(1), dst = ctx.arg(2);
  if (db.Lookup(src, now) == nullptr) {
    ctx.Error(protocol::err::kNoSuchKey);
    return;
  }
  if (src == dst) {
    if (nx) {
      ctx.reply.Integer(0);
    } else {
      ctx.reply.Ok();
    }
    return;
  }
  if (db.Lookup(dst, now) != nullptr && nx) {
    ctx.reply.Integer(0);
    return;
  }
  db.MoveKey(src, &db, dst);
  ctx.Dirty();
  ctx.Notify(kNotifyGeneric, "rename_from", src);
  ctx.Notify(kNotifyGeneric, "rename_to", dst);
  if (nx) {
    ctx.reply.Integer(1);
  } else {
    ctx.reply.Ok();
  }
}

void Rename(CommandContext& ctx) { RenameGeneric(ctx, false); }
void RenameNx(CommandContext& ctx) { RenameGeneric(ctx, true); }

// COPY source destination [DB destination-db] [REPLACE]
void Copy(CommandContext& ctx) {
  int src_id = ctx.client.db, dst_id = src_id;
  bool replace = false;
  for (size_t i = 3; i < ctx.argc(); i++) {
    if (EqualsIgnoreCase(ctx.arg(i), "REPLACE")) {
      replace = true;
    } else if (EqualsIgnoreCase(ctx.arg(i), "DB") && i + 1 < ctx.argc()) {
      if (!DbIndexArg(ctx, i + 1, &dst_id)) return;
      i++;
    } else {
      ctx.SyntaxError();
      return;
    }
  }
  std::string_view key = ctx.arg(1), new_key = ctx.arg(2);
  if (src_id == dst_id && key == new_key) {
    ctx.Error(protocol::err::kSameObject);
    return;
  }
  Database& src = ctx.server.db(src_id);
  Database& dst = ctx.server.db(dst_id);
  int64_t now = ctx.now_ms();
  const Entry* e = ctx.LookupRead(src, key, now);
  if (e == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  if (dst.Lookup(new_key, now) != nullptr && !replace) {
    ctx.reply.Integer(0);
    return;
  }
  src.CopyKey(e, &dst, new_key);
  ctx.Dirty();
  ctx.Touched(dst_id, new_key);  // the source does not change
  ctx.Notify(kNotifyGeneric, "copy_to", new_key, dst_id);
  ctx.reply.Integer(1);
}

// MOVE key db
void Move(CommandContext& ctx) {
  int dst_id;
  if (!DbIndexArg(ctx, 2, &dst_id)) return;
  if (dst_id == ctx.client.db) {
    ctx.Error(protocol::err::kSameObject);
    return;
  }
  Database& src = ctx.db();
  Database& dst = ctx.server.db(dst_id);
  std::string_view key = ctx.arg(1);
  int64_t now = ctx.now_ms();
  if (src.Lookup(key, now) == nullptr || dst.Lookup(key, now) != nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  src.MoveKey(key, &dst, key);
  ctx.Dirty();
  ctx.Touched(ctx.client.db, key);
  ctx.Touched(dst_id, key);
  ctx.Notify(kNotifyGeneric, "move_from", key);
  ctx.Notify(kNotifyGeneric, "move_to", key, dst_id);
  ctx.reply.Integer(1);
}

void RandomKey(CommandContext& ctx) {
  Database& db = ctx.db();
  int64_t now = ctx.now_ms();
  for (;;) {
    const Entry* e = db.RandomEntry(ctx.server.Random());
    if (e == nullptr) {
      ctx.reply.Null();
      return;
    }
    if (!Expired(e, now)) {
      ctx.reply.Bulk(e->key());
      return;
    }
    db.Lookup(std::string(e->key()), now);  // drops it; try another
  }
}

// ---------------------------------------------------------------------------
// OBJECT ENCODING|REFCOUNT|IDLETIME|FREQ key, OBJECT HELP

constexpr int64_t kSharedRefcount = INT_MAX;  // Redis's OBJ_SHARED_REFCOUNT
constexpr int64_t kSharedIntegers = 10000;    // Redis's OBJ_SHARED_INTEGERS

bool LfuPolicy(const CommandContext& ctx) {
  return ctx.server.cfg().maxmemory_policy.find("lfu") != std::string::npos;
}

std::string_view EncodingName(const CommandContext& ctx, const Entry* e) {
  switch (e->encoding) {
    case kEncInt: return "int";
    case kEncEmbedded: return e->v.len <= kEmbstrMax ? "embstr" : "raw";
    case kEncRaw: return "raw";
    default: break;
  }
  // A longset no bigger than set-max-intset-entries is what Redis 7.0 keeps as an
  // intset, and answers so; a bigger one keeps feedkv's own name (docs/longset.md).
  if (e->type == ValueType::kSet) {
    const auto* set = static_cast<const SetValue*>(Database::GetObject(e));
    if (set->is_longset() && static_cast<int64_t>(set->size()) <= ctx.server.cfg().set_max_intset_entries) {
      return "intset";
    }
  }
  return Database::GetObject(e)->encoding();
}

int64_t RefCount(const CommandContext& ctx, const Entry* e) {
  // Redis shares the objects of small non-negative integers unless an
  // LRU/LFU eviction policy needs per-key metadata.
  const ServerConfig& cfg = ctx.server.cfg();
  bool no_sharing = cfg.maxmemory > 0 && (cfg.maxmemory_policy.find("lru") != std::string::npos ||
                                          cfg.maxmemory_policy.find("lfu") != std::string::npos);
  int64_t v;
  if (e->type == ValueType::kString && e->encoding == kEncInt && !no_sharing &&
      Database::StringAsInteger(e, &v) && v >= 0 && v < kSharedIntegers) {
    return kSharedRefcount;
  }
  return 1;
}

void ObjectCmd(CommandContext& ctx) {
  std::string_view sub = ctx.arg(1);
  if (EqualsIgnoreCase(sub, "HELP")) {
    if (ctx.argc() != 2) return ctx.SubcommandError();
    ctx.ReplyHelp({
        "ENCODING <key>",
        "    Return the kind of internal representation used in order to store the value",
        "    associated with a <key>.",
        "FREQ <key>",
        "    Return the access frequency index of the <key>. The returned integer is",
        "    proportional to the logarithm of the recent access frequency of the key.",
        "IDLETIME <key>",
        "    Return the idle time of the <key>, that is the approximated number of",
        "    seconds elapsed since the last access to the key.",
        "REFCOUNT <key>",
        "    Return the number of references of the value associated with the specified",
        "    <key>.",
    });
    return;
  }
  bool known = EqualsIgnoreCase(sub, "ENCODING") || EqualsIgnoreCase(sub, "REFCOUNT") ||
               EqualsIgnoreCase(sub, "IDLETIME") || EqualsIgnoreCase(sub, "FREQ");
  if (!known) return ctx.SubcommandError();
  if (ctx.argc() != 3) return ctx.SubcommandError();
  // Looking at a key's access stamp must not change it.
  const Entry* e = ctx.LookupRead(ctx.db(), ctx.arg(2), ctx.now_ms(), /*touch=*/false);
  if (e == nullptr) {
    ctx.reply.Null();
    return;
  }
  constexpr char kAdjust[] =
      " Please note that when switching between policies at runtime LRU and LFU data will take "
      "some time to adjust.";
  if (EqualsIgnoreCase(sub, "ENCODING")) {
    ctx.reply.Bulk(EncodingName(ctx, e));
  } else if (EqualsIgnoreCase(sub, "REFCOUNT")) {
    ctx.reply.Integer(RefCount(ctx, e));
  } else if (EqualsIgnoreCase(sub, "IDLETIME")) {
    if (LfuPolicy(ctx)) {
      ctx.Error(fmt::format(protocol::err::kIdleTimeWithLfu,
                            kAdjust));
      return;
    }
    ctx.reply.Integer(static_cast<int64_t>(ctx.db().IdleMs(e) / 1000));
  } else {
    if (!LfuPolicy(ctx)) {
      ctx.Error(fmt::format(
          protocol::err::kFreqWithoutLfu, kAdjust));
      return;
    }
    ctx.reply.Integer(ctx.db().Frequency(e));
  }
}

// ---------------------------------------------------------------------------
// MEMORY USAGE key [SAMPLES n] | STATS | DOCTOR | MALLOC-STATS | PURGE | HELP

void MemoryUsage(CommandContext& ctx) {
  for (size_t i = 3; i < ctx.argc(); i++) {
    if (EqualsIgnoreCase(ctx.arg(i), "SAMPLES") && i + 1 < ctx.argc()) {
      int64_t samples;
      if (!ctx.IntArg(i + 1, &samples)) return;
      if (samples < 0) {
        ctx.SyntaxError();
        return;
      }
      i++;  // every value is measured exactly; the sample count is moot
    } else {
      ctx.SyntaxError();
      return;
    }
  }
  // As Redis: the key is looked up without expiring it.
  const Entry* e = ctx.db().Find(ctx.arg(2));
  if (e == nullptr) {
    ctx.reply.Null();
    return;
  }
  ctx.reply.Integer(static_cast<int64_t>(Database::EntryMemory(e)));
}

void MemoryStats(CommandContext& ctx) {
  Server& s = ctx.server;
  size_t dataset = 0, keys = 0;
  for (int i = 0; i < s.num_dbs(); i++) {
    dataset += s.db(i).MemoryUsage();
    keys += s.db(i).size();
  }
  size_t used = s.UsedMemory();
  // Counter spaces get their own field (feedkv's, after Redis's), not clients.normal.
  const size_t counters = s.CounterMemory();
  auto& r = ctx.reply;
  r.MapHeader(7);
  r.Bulk("peak.allocated");
  r.Integer(static_cast<int64_t>(std::max(s.peak_memory(), used)));
  r.Bulk("total.allocated");
  r.Integer(static_cast<int64_t>(used));
  r.Bulk("clients.normal");
  r.Integer(static_cast<int64_t>(used - std::min(used, dataset + counters)));
  r.Bulk("keys.count");
  r.Integer(static_cast<int64_t>(keys));
  r.Bulk("keys.bytes-per-key");
  r.Integer(keys == 0 ? 0 : static_cast<int64_t>(dataset / keys));
  r.Bulk("dataset.bytes");
  r.Integer(static_cast<int64_t>(dataset));
  r.Bulk("counters.bytes");
  r.Integer(static_cast<int64_t>(counters));
}

void MemoryCmd(CommandContext& ctx) {
  std::string_view sub = ctx.arg(1);
  if (EqualsIgnoreCase(sub, "USAGE")) {
    if (ctx.argc() < 3) return ctx.SubcommandError();
    return MemoryUsage(ctx);
  }
  bool known = EqualsIgnoreCase(sub, "HELP") || EqualsIgnoreCase(sub, "STATS") ||
               EqualsIgnoreCase(sub, "DOCTOR") || EqualsIgnoreCase(sub, "MALLOC-STATS") ||
               EqualsIgnoreCase(sub, "PURGE");
  if (!known) return ctx.SubcommandError();
  if (ctx.argc() != 2) return ctx.SubcommandError();
  if (EqualsIgnoreCase(sub, "HELP")) {
    ctx.ReplyHelp({
        "DOCTOR",
        "    Return memory problems reports.",
        "MALLOC-STATS",
        "    Return internal statistics report from the memory allocator.",
        "PURGE",
        "    Attempt to purge dirty pages for reclamation by the allocator.",
        "STATS",
        "    Return information about the memory usage of the server.",
        "USAGE <key> [SAMPLES <count>]",
        "    Return memory in bytes used by <key> and its value. Nested values are",
        "    sampled up to <count> times (default: 5, 0 means sample all).",
    });
  } else if (EqualsIgnoreCase(sub, "STATS")) {
    MemoryStats(ctx);
  } else if (EqualsIgnoreCase(sub, "DOCTOR")) {
    ctx.reply.Verbatim(
        "Hi Sam, I can't find any memory issue in your instance. I can only account for what "
        "occurs on this base.");
  } else if (EqualsIgnoreCase(sub, "MALLOC-STATS")) {
    ctx.reply.Verbatim(AllocatorReport());
  } else {
    ReleaseFreeMemory();
    ctx.reply.Ok();
  }
}

const SubcommandSpec kObjectSubs[] = {
    {"encoding", 3, kReadOnly, "Inspect the internal encoding of a Redis object", 2, 2, 1, {kKeyRO}},
    {"refcount", 3, kReadOnly, "Get the number of references to the value of the key", 2, 2, 1, {kKeyRO}},
    {"idletime", 3, kReadOnly, "Get the time since a Redis object was last accessed", 2, 2, 1, {kKeyRO}},
    {"freq", 3, kReadOnly, "Get the logarithmic access frequency counter of a Redis object", 2, 2, 1, {kKeyRO}},
    {"help", 2, kLoading | kStale, "Show helpful text about the different subcommands"},
};

const SubcommandSpec kMemorySubs[] = {
    {"usage", -3, kReadOnly, "Estimate the memory usage of a key", 2, 2, 1, {kKeyRO}},
    {"stats", 2, 0, "Show memory usage details"},
    {"doctor", 2, 0, "Outputs memory problems report"},
    {"malloc-stats", 2, 0, "Show allocator internal stats"},
    {"purge", 2, 0, "Ask the allocator to release memory"},
    {"help", 2, kLoading | kStale, "Show helpful text about the different subcommands"},
};

const CommandSpec kCommands[] = {
    {"del", -2, kWrite, 1, -1, 1, Del, "Delete a key", "generic", {}, {kKeyRM | kKeyDelete}},
    {"unlink", -2, kWrite | kFast, 1, -1, 1, Del,
     "Delete a key asynchronously in another thread. Otherwise it is just as DEL, but non blocking.", "generic", {}, {kKeyRM | kKeyDelete}},
    {"exists", -2, kReadOnly | kFast, 1, -1, 1, Exists, "Determine if a key exists",
     "generic", {}, {kKeyRO}},
    {"touch", -2, kReadOnly | kFast, 1, -1, 1, Touch,
     "Alters the last access time of a key(s). Returns the number of existing keys specified.",
     "generic", {}, {kKeyRO}},
    {"type", 2, kReadOnly | kFast, 1, 1, 1, Type, "Determine the type stored at key",
     "generic", {}, {kKeyRO}},
    {"keys", 2, kReadOnly | kAclDangerous, 0, 0, 0, Keys, "Find all keys matching the given pattern",
     "generic"},
    {"scan", -2, kReadOnly, 0, 0, 0, Scan, "Incrementally iterate the keys space",
     "generic"},
    {"rename", 3, kWrite, 1, 2, 1, Rename, "Rename a key",
     "generic", {}, {kKeyRW | kKeyAccess | kKeyDelete, kKeyOW | kKeyUpdate}},
    {"renamenx", 3, kWrite | kFast, 1, 2, 1, RenameNx,
     "Rename a key, only if the new key does not exist", "generic", {}, {kKeyRW | kKeyAccess | kKeyDelete, kKeyOW | kKeyInsert}},
    {"copy", -3, kWrite | kDenyOom, 1, 2, 1, Copy, "Copy a key",
     "generic", {}, {kKeyRO | kKeyAccess, kKeyOW | kKeyUpdate}},
    {"move", 3, kWrite | kFast, 1, 1, 1, Move, "Move a key to another database", "generic", {}, {kKeyRW | kKeyAccess | kKeyUpdate}},
    {"randomkey", 1, kReadOnly | kRandom, 0, 0, 0, RandomKey,
     "Return a random key from the keyspace", "generic"},
    {"object", -2, 0, 0, 0, 0, ObjectCmd, "A container for object introspection commands",
     "generic", kObjectSubs},
    {"memory", -2, 0, 0, 0, 0, MemoryCmd, "A container for memory diagnostics commands", "server",
     kMemorySubs},
};

}  // namespace

std::span<const CommandSpec> KeyCommands() { return kCommands; }

}  // namespace feedkv::server
