// The string read-modify-write operations: the layer between the string commands that
// change a value they read (server/commands/cmd_strings.cc: the INCR family,
// INCRBYFLOAT, APPEND, SETRANGE) and Database, as server/ops/set_ops.h is for sets.
// An operation looks the key up, checks its type, changes the value and keeps the
// keyspace's books (dirty count, keyspace events, the deterministic log form), and
// returns its result or a Status (WrongType; Redis's texts for a value that is not a
// number, an overflow, a result past proto-max-bulk-len). It never writes a reply.
// SET and GET, the hottest paths, still go from their handlers to Database directly.
//
// Command thread only, like the Database it changes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <optional>

#include "server/command_context.h"
#include "storage/database.h"
#include "storage/status.h"

namespace feedkv::server::string_ops {

// The string at `key`, for reading (counts a keyspace hit or miss): its bytes, valid
// until the key changes, or nullopt when missing. An integer-encoded value is written
// out into `scratch`.
StatusOr<std::optional<std::string_view>> Find(CommandContext& ctx, std::string_view key,
                                               char (&scratch)[Database::kIntBufSize]);

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
