// The string operations: the layer between the string commands (server/commands/
// cmd_strings.cc) and Database, as server/ops/set_ops.h is for sets; bitmap_ops
// builds on it. An operation looks the key up, checks its type, changes the value and keeps the
// keyspace's books (dirty count, keyspace events, the deterministic log form), and
// returns its result or a Status (WrongType; Redis's texts for a value that is not a
// number, an overflow, a result past proto-max-bulk-len). It never writes a reply.
// A command that answers the old value and then changes it (SET ... GET, GETSET,
// GETDEL, GETEX) reads with Find, replies, then calls the write.
//
// Command thread only, like the Database it changes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "server/command_context.h"
#include "storage/database.h"
#include "storage/status.h"

namespace feedkv::server::string_ops {

// The string at `key`, for reading (counts a keyspace hit or miss): its bytes, valid
// until the key changes, or nullopt when missing. An integer-encoded value is written
// out into `scratch`.
StatusOr<std::optional<std::string_view>> Find(CommandContext& ctx, std::string_view key,
                                               char (&scratch)[Database::kIntBufSize]);

// SET and its forms (SETNX, SETEX, PSETEX, MSET, MSETNX, GETSET): stores `value` at
// `key` — expiring at `expire_at` (unix ms; kNoExpire for none), or keeping the old
// expiry with `keep_ttl` — and keeps the books (dirty count, the set and expire
// events). The log form is the caller's: as received, or rewritten with an
// absolute expire.
void Set(CommandContext& ctx, std::string_view key, std::string_view value, int64_t expire_at = kNoExpire,
         bool keep_ttl = false);
// Whether `key` holds a live value of any type, without counting a hit or miss (the
// NX/XX/KEEPTTL tests of SET and MSETNX).
bool Exists(CommandContext& ctx, std::string_view key);

// GETEX's change to a string's expiry, after the value was read.
struct ExpiryChange {
  enum Kind : uint8_t { kNone, kExpireAt, kPersist } kind = kNone;
  int64_t at = kNoExpire;  // kExpireAt: unix ms
  bool absolute = false;   // from EXAT/PXAT: a time already past deletes the key
};
// GETEX: applies `change` to the string at `key` (present), logged as PEXPIREAT,
// PERSIST or DEL.
void ChangeExpiry(CommandContext& ctx, std::string_view key, const ExpiryChange& change);
// GETDEL: deletes `key` (present), logged as DEL.
void Delete(CommandContext& ctx, std::string_view key);

// INCR/DECR/INCRBY/DECRBY: adds `incr` to the integer at `key` (0 when missing); the
// new value. The TTL is kept, and an int-encoded value changes in place.
StatusOr<int64_t> IncrBy(CommandContext& ctx, std::string_view key, int64_t incr);
// INCRBYFLOAT: the new value's text. `incr` is the argument's text, parsed after the
// key's type and value are checked, as Redis orders its errors. Logged as SET key
// text KEEPTTL, so float formatting never diverges on a replica.
StatusOr<std::string> IncrByFloat(CommandContext& ctx, std::string_view key, std::string_view incr);
// APPEND: the string's new length (the key is created when missing).
StatusOr<size_t> Append(CommandContext& ctx, std::string_view key, std::string_view tail);
// SETRANGE: overwrites from `offset` (zero-padding a short or missing string); the new
// length. An empty `value` changes nothing and answers the current length.
StatusOr<size_t> SetRange(CommandContext& ctx, std::string_view key, uint64_t offset, std::string_view value);

}  // namespace feedkv::server::string_ops
