// The HyperLogLog operations: the layer between the PF* commands (server/commands/
// cmd_hyperloglog.cc) and Database, as server/ops/set_ops.h is for sets. An HLL is an
// ordinary string in Redis's format (storage/hyperloglog.h); an operation looks the
// key up, checks that the string is an HLL, changes it and keeps the keyspace's books
// (dirty count, keyspace events, WATCH), and returns its result or a Status:
// WrongType (another type — or, with Redis's own message, a string that is not an
// HLL) or InvalidObject (an HLL whose registers are damaged). It never writes a reply.
//
// Command thread only, like the Database it changes.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "server/command_context.h"
#include "storage/hyperloglog.h"
#include "storage/status.h"

namespace feedkv::server::hll_ops {

// The HLL at `key`, for reading (counts a keyspace hit or miss): its bytes, valid
// until the key changes, or nullopt when the key is missing.
StatusOr<std::optional<std::string_view>> Find(CommandContext& ctx, std::string_view key);
// The same without counting a hit or miss (PFDEBUG, as Redis's lookupKeyWrite).
StatusOr<std::optional<std::string_view>> Peek(CommandContext& ctx, std::string_view key);

// PFADD: adds `elements` (none is allowed); whether the HLL changed, which includes
// creating it.
StatusOr<bool> Add(CommandContext& ctx, std::string_view key, std::span<const std::string_view> elements);
// PFCOUNT of one key: the cardinality estimate, cached in the string as Redis does
// (a change that WATCH sees, though the key's value means the same).
StatusOr<uint64_t> Count(CommandContext& ctx, std::string_view key);
// PFCOUNT of several keys: the estimate of their union; nothing is stored.
StatusOr<uint64_t> CountUnion(CommandContext& ctx, std::span<const std::string_view> keys);
// PFMERGE: `dest` takes the register-wise maximum of itself and `sources` (dense when
// any of them is); created when missing.
Status Merge(CommandContext& ctx, std::string_view dest, std::span<const std::string_view> sources);
// PFDEBUG TODENSE/GETREG: converts a sparse HLL to dense; whether it converted.
// NotFound when the key is missing.
StatusOr<bool> ToDense(CommandContext& ctx, std::string_view key);

}  // namespace feedkv::server::hll_ops
