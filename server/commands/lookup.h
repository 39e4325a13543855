// The one lookup of a key that must hold a given type, shared by the command
// families of every non-string type (server/ops/*_ops.cc, and the handlers of the
// families without an operation file yet).
#pragma once

#include <string_view>

#include "server/command_context.h"
#include "server/server.h"
#include "storage/database.h"

namespace feedkv::server {

// The `type` value at `key`: Status::WrongType when the key holds another type;
// *obj is null when the key is missing. `read` counts a keyspace hit or miss.
// Replies nothing (the operation layer's lookup, server/ops/).
template <class T>
Status FindTyped(CommandContext& ctx, std::string_view key, ValueType type, bool read, Entry** entry,
                 T** obj) {
  // Reading the clock costs more than the lookup on some VMs: only a key with an
  // expire needs it (Lookup then drops the key if it has expired).
  Entry* e = ctx.db().Find(key);
  if (e != nullptr && e->has_expire) e = ctx.db().Lookup(key, ctx.now_ms());
  if (read) {
    if (e != nullptr) {
      ctx.server.stats().keyspace_hits++;
    } else {
      ctx.server.stats().keyspace_misses++;
      ctx.Notify(kNotifyKeyMiss, "keymiss", key);
    }
  }
  *entry = e;
  *obj = nullptr;
  if (e == nullptr) return Status::OK();
  if (e->type != type) return Status::WrongType();
  *obj = static_cast<T*>(Database::GetObject(e));
  return Status::OK();
}

// FindTyped for a handler: false after replying WRONGTYPE.
template <class T>
bool LookupTyped(CommandContext& ctx, std::string_view key, ValueType type, bool read, Entry** entry,
                 T** obj) {
  Status st = FindTyped(ctx, key, type, read, entry, obj);
  if (st.ok()) return true;
  ctx.Error(st);
  return false;
}

}  // namespace feedkv::server
