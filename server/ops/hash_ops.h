// The hash operations: the layer between the hash commands (server/commands/
// cmd_hashes.cc) and Database, as server/ops/set_ops.h is for sets. An operation looks
// the key up, checks its type, changes the HashValue and keeps the keyspace's books —
// dirty count, keyspace events, memory accounting, deleting a hash that empties — and
// returns its result or a Status (WrongType; Redis's texts for a value that is not a
// number or an increment that overflows). It never writes a reply.
//
// Command thread only, like the Database it changes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "server/command_context.h"
#include "storage/hash_value.h"
#include "storage/status.h"

namespace feedkv::server::hash_ops {

// The listpack limits the server's config sets (hash-max-listpack-entries/-value).
HashLimits Limits(const CommandContext& ctx);

// The hash at `key`, for reading (counts a keyspace hit or miss): null when missing.
StatusOr<const HashValue*> Find(CommandContext& ctx, std::string_view key);

// HSET: sets each field of `pairs` (field, value, field, value...) and returns how
// many were new; creates the hash when missing. REQUIRES: pairs.size() is even.
StatusOr<size_t> Set(CommandContext& ctx, std::string_view key, std::span<const std::string_view> pairs);
// HSETNX: sets `field` only when it is absent; whether it did.
StatusOr<bool> SetIfAbsent(CommandContext& ctx, std::string_view key, std::string_view field,
                           std::string_view value);
// HDEL: removes `fields`, returns how many were there; deletes the key when it empties.
StatusOr<size_t> Remove(CommandContext& ctx, std::string_view key, std::span<const std::string_view> fields);
// HINCRBY: the field's new value.
StatusOr<int64_t> IncrBy(CommandContext& ctx, std::string_view key, std::string_view field, int64_t incr);
// HINCRBYFLOAT: the field's new value as stored (and logged, as an HSET of it, so
// float formatting never diverges between master and replica).
StatusOr<std::string> IncrByFloat(CommandContext& ctx, std::string_view key, std::string_view field,
                                  long double incr);

}  // namespace feedkv::server::hash_ops
