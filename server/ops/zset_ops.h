// The sorted-set operations: the layer between the sorted-set commands (server/
// commands/cmd_zset*.cc) and Database, as server/ops/set_ops.h is for sets. An
// operation looks the key up, checks its type, changes the SortedSetValue and keeps
// the keyspace's books — dirty count, keyspace events, memory accounting, deleting a
// sorted set that empties, logging a pop in its plain form — and returns its result
// or a Status (WrongType; Redis's text for a NaN score). It never writes a reply.
// Range syntax (score and lex intervals) is in server/ops/zset_ranges.h.
//
// Command thread only, like the Database it changes.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/command_context.h"
#include "storage/sorted_set.h"
#include "storage/status.h"

namespace feedkv::server::zset_ops {

// The listpack limits the server's config sets (zset-max-listpack-entries/-value).
ZsetLimits Limits(const CommandContext& ctx);

// The sorted set at `key`, for reading (counts a keyspace hit or miss): null when missing.
StatusOr<const SortedSetValue*> Find(CommandContext& ctx, std::string_view key);
// The sorted set at `key` and its entry, for a change in place or a check of
// existence (no hit/miss counted): both null when missing.
Status FindForWrite(CommandContext& ctx, std::string_view key, Entry** entry, SortedSetValue** zset);

// What ZADD did: members added, updated, and processed (not skipped by NX/XX/GT/LT);
// `score` is the last member's score after the change (ZADD INCR's reply).
struct AddOutcome {
  int64_t added = 0, updated = 0, processed = 0;
  double score = 0;
};
// ZADD/ZINCRBY: member j is pairs[2j + 1], its score scores[j] (already parsed, so
// nothing changes on a bad score); `flags` are SortedSetValue::kNX... A NaN result
// (INCR of +inf by -inf) fails with Redis's text, keeping the changes before it.
StatusOr<AddOutcome> Add(CommandContext& ctx, std::string_view key, int flags, std::span<const double> scores,
                         std::span<const std::string_view> pairs);
// ZREM: removes `members`, returns how many were there.
StatusOr<size_t> Remove(CommandContext& ctx, std::string_view key, std::span<const std::string_view> members);
// Removes ascending ranks [lo, hi) of `z` at `key` (nothing when lo == hi), with the
// command's keyspace event; how many. `z` may be null only when lo == hi.
size_t RemoveRanks(CommandContext& ctx, std::string_view key, Entry* e, SortedSetValue* z, size_t lo,
                   size_t hi);
// ZREMRANGEBYRANK: removes ranks start..stop (negative from the end); how many.
StatusOr<size_t> RemoveRankRange(CommandContext& ctx, std::string_view key, int64_t start, int64_t stop);
// ZREMRANGEBYSCORE / ZREMRANGEBYLEX: removes the members in `range` (a ScoreRange or
// LexRange); how many.
template <class Range>
StatusOr<size_t> RemoveInRange(CommandContext& ctx, std::string_view key, const Range& range) {
  Entry* e;
  SortedSetValue* z;
  if (Status st = FindForWrite(ctx, key, &e, &z); !st.ok()) return st;
  size_t lo = 0, hi = 0;
  if (z != nullptr && !range.Empty()) range.Ranks(*z, &lo, &hi);
  return RemoveRanks(ctx, key, e, z, lo, hi);
}
// ZPOPMIN/ZPOPMAX and the pops BZPOP*/[B]ZMPOP serve: pops min(count, size) members
// from one end of the sorted set at `key` (none when it is missing), lowest (or, with
// `max`, highest) first, and logs them as ZPOPMIN/ZPOPMAX key [count].
StatusOr<std::vector<std::pair<std::string, double>>> Pop(CommandContext& ctx, std::string_view key, bool max,
                                                          size_t count, bool log_count);
// The *STORE commands: replaces `dest` with `result`, or deletes it when `result` is
// null or empty; returns the stored size. Only `dest` is touched. The keyspace
// event is `event`, by default the command's name.
size_t Store(CommandContext& ctx, std::string_view dest, std::unique_ptr<SortedSetValue> result,
             std::string_view event = {});

}  // namespace feedkv::server::zset_ops
