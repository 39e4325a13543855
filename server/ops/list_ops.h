// The list operations: the layer between the list commands (server/commands/
// cmd_lists.cc, cmd_list_pops.cc) and Database, as server/ops/set_ops.h is for sets.
// An operation looks its keys up, checks their type, changes the ListValue and keeps
// the keyspace's books — dirty count, keyspace events, memory accounting, deleting a
// list that empties — and returns its result or a Status (WrongType, Redis's texts for
// LSET's missing key and index). It never writes a reply. Blocking (parking a client
// until a push) stays with the commands (server/commands/blocking.h).
//
// Command thread only, like the Database it changes.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/command_context.h"
#include "storage/list_value.h"
#include "storage/status.h"

namespace feedkv::server::list_ops {

// list-max-listpack-size, for every mutator that adds bytes.
int64_t Fill(const CommandContext& ctx);

// The list at `key`, for reading (counts a keyspace hit or miss): null when missing.
StatusOr<const ListValue*> Find(CommandContext& ctx, std::string_view key);

// The list at `key` and its entry, for a command that changes it in place or must
// know whether it exists (no hit/miss counted): both null when missing.
Status FindForWrite(CommandContext& ctx, std::string_view key, Entry** entry, ListValue** list);

// LPUSH/RPUSH (and, with `only_existing`, the X forms): pushes `elements` in order
// at one end; the list's new length (0 when only_existing and the key is missing).
StatusOr<size_t> Push(CommandContext& ctx, std::string_view key, bool front,
                      std::span<const std::string_view> elements, bool only_existing);
// LPOP/RPOP key: the element popped, nullopt when the key is missing.
StatusOr<std::optional<std::string>> PopOne(CommandContext& ctx, std::string_view key, bool front);
// LPOP/RPOP key count: min(count, length) elements, nullopt when the key is missing.
StatusOr<std::optional<std::vector<std::string>>> PopMany(CommandContext& ctx, std::string_view key,
                                                          bool front, size_t count);
// The pop of a blocking command (or LMPOP) served from the non-empty list at `key`:
// like PopMany, but logged as its plain form — LPOP/RPOP key, with the count when
// `log_count` (LMPOP) — and the key touched for WATCH.
StatusOr<std::vector<std::string>> PopServed(CommandContext& ctx, std::string_view key, bool front,
                                             size_t count, bool log_count);
// LINSERT: the new length, 0 when the key is missing, -1 when `pivot` is not there.
StatusOr<int64_t> Insert(CommandContext& ctx, std::string_view key, bool after, std::string_view pivot,
                         std::string_view element);
// LSET: `index` is the argument's text, parsed after the key is found, as Redis's
// lsetCommand orders its errors ("no such key" before "not an integer").
Status Set(CommandContext& ctx, std::string_view key, std::string_view index, std::string_view element);
// LTRIM: keeps [start, stop] (LRANGE's rules); a missing key is not an error.
Status Trim(CommandContext& ctx, std::string_view key, int64_t start, int64_t stop);
// LREM: how many elements equal to `element` were removed (count as Redis's LREM).
StatusOr<size_t> RemoveEqual(CommandContext& ctx, std::string_view key, int64_t count,
                             std::string_view element);
// LMOVE/RPOPLPUSH: the element moved, nullopt when `src` is missing. A `dst` of
// another type fails before anything moves; src == dst rotates the list.
StatusOr<std::optional<std::string>> Move(CommandContext& ctx, std::string_view src, std::string_view dst,
                                          bool from_front, bool to_front);

}  // namespace feedkv::server::list_ops
