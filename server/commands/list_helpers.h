// What the list command families (cmd_lists.cc, cmd_list_pops.cc) share: the typed
// lookup, creating a list for a push, and the empty-list rule.
#pragma once

#include <string_view>

#include "server/command_context.h"
#include "server/commands/lookup.h"
#include "server/server.h"
#include "storage/database.h"
#include "storage/list_value.h"

namespace feedkv::server {

// list-max-listpack-size, for every mutator that adds bytes.
inline int64_t ListFill(const CommandContext& ctx) { return ctx.server.cfg().list_max_listpack_size; }

inline bool LookupList(CommandContext& ctx, std::string_view key, bool read, Entry** entry, ListValue** list) {
  return LookupTyped(ctx, key, ValueType::kList, read, entry, list);
}

// The list at `key` for a push, created empty when missing; null after a
// WRONGTYPE reply.
inline ListValue* ListForPush(CommandContext& ctx, std::string_view key, Entry** entry) {
  ListValue* l;
  if (!LookupList(ctx, key, false, entry, &l)) return nullptr;
  if (l == nullptr) {
    *entry = ctx.db().SetObject(key, std::make_unique<ListValue>(), kNoExpire, false);
    l = static_cast<ListValue*>(Database::GetObject(*entry));
  }
  return l;
}

// After elements left the list: an empty list is deleted (as Redis, with a
// "del" event after the command's own), else its memory count is brought up
// to date.
inline void ListAfterChange(CommandContext& ctx, std::string_view key, Entry* e, ListValue* l) {
  if (l->empty()) {
    ctx.db().Delete(key);
    ctx.Notify(kNotifyGeneric, "del", key);
  } else {
    ctx.db().UpdateObjectMemory(e);
  }
}

}  // namespace feedkv::server
