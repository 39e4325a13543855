// Helpers shared by the set family (cmd_sets.cc) and the longset family
// (cmd_longset.cc): one lookup of a set key, one mapping of storage errors.
#pragma once

#include <memory>
#include <string_view>

#include "server/command_context.h"
#include "server/commands/lookup.h"
#include "server/commands/scan_args.h"
#include "server/server.h"
#include "storage/database.h"
#include "storage/long_set.h"
#include "storage/set_value.h"

namespace feedkv::server {

// Defined in cmd_sets.cc, shared by SINTERCARD/LSINTERCARD and SSCAN/LSSCAN.
// "numkeys key [key ...] [LIMIT n]"; false after replying the error.
bool ParseInterCardArgs(CommandContext& ctx, size_t* numkeys, size_t* limit);

inline LongSetOptions Options(const CommandContext& ctx) {
  const ServerConfig& c = ctx.server.cfg();
  LongSetOptions o;
  o.max_fill = c.longset_max_fill;
  o.growth_factor = c.longset_growth_factor;
  o.auto_grow = c.longset_auto_grow;
  return o;
}

// :0 / :1 (the same in RESP2 and RESP3), without formatting an integer.
inline void ReplyBool(CommandContext& ctx, bool b) { ctx.reply.Raw(b ? ":1\r\n" : ":0\r\n"); }

inline void StatusError(CommandContext& ctx, const Status& st) {
  ctx.Error((st.IsFull() ? "FULL " : "ERR ") + st.message());
}

// The set at `key`: false (WRONGTYPE replied) when the key holds another type;
// *set is null when the key is missing.
inline bool LookupSet(CommandContext& ctx, std::string_view key, bool read, Entry** entry,
                      SetValue** set) {
  return LookupTyped(ctx, key, ValueType::kSet, read, entry, set);
}

// The longset-encoded set at `key`: false (WRONGTYPE replied) when the key holds
// anything else, including a hashtable-encoded set; *set is null when missing.
inline bool LookupLongSet(CommandContext& ctx, std::string_view key, bool read, Entry** entry,
                          SetValue** set) {
  if (!LookupSet(ctx, key, read, entry, set)) return false;
  if (*set != nullptr && !(*set)->is_longset()) {
    *set = nullptr;
    ctx.WrongType();
    return false;
  }
  return true;
}

// After removals (and their keyspace event): drop an emptied key, with a
// "del" event, else shrink and re-measure it.
inline void AfterRemoval(CommandContext& ctx, std::string_view key, Entry* e, SetValue* set) {
  if (set->empty()) {
    ctx.db().Delete(key);
    ctx.Notify(kNotifyGeneric, "del", key);
  } else {
    set->Compact(Options(ctx));
    ctx.db().UpdateObjectMemory(e);
  }
}

// SADD / LSADD: creates the set with create(&fresh) when the key is missing, else adds
// with add(set, &added); replies with the number added. Members already added stay (and
// are counted dirty) when add fails part way, e.g. FULL in cache mode. `event`:
// the keyspace event of an add that changed the set.
template <class Create, class Add>
void AddToSet(CommandContext& ctx, std::string_view event, Entry* e, SetValue* set, Create create, Add add) {
  if (set == nullptr) {
    std::unique_ptr<SetValue> fresh;
    Status st = create(&fresh);
    if (!st.ok()) return StatusError(ctx, st);
    const auto n = static_cast<int64_t>(fresh->size());
    ctx.db().SetObject(ctx.arg(1), std::move(fresh), kNoExpire, false);
    ctx.Dirty(n);
    ctx.Notify(kNotifySet, event, ctx.arg(1));
    ctx.reply.Integer(n);
    return;
  }
  size_t added = 0;
  Status st = add(set, &added);
  if (added > 0) {
    ctx.db().UpdateObjectMemory(e);
    ctx.Dirty(static_cast<int64_t>(added));
    ctx.Notify(kNotifySet, event, ctx.arg(1));
  }
  if (!st.ok()) return StatusError(ctx, st);
  ctx.reply.Integer(static_cast<int64_t>(added));
}

}  // namespace feedkv::server
