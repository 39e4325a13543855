// The stream lookups and bookkeeping the stream commands share (server/commands/
// cmd_streams.cc, cmd_stream_groups.cc), as server/ops/hash_ops.h is for hashes:
// finding a stream with its type checked, creating one, and the node limits
// from the configuration. Command thread only.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "server/command_context.h"
#include "storage/database.h"
#include "storage/status.h"
#include "storage/stream_value.h"

namespace feedkv::server::stream_ops {

// stream-node-max-bytes / stream-node-max-entries.
StreamLimits Limits(const CommandContext& ctx);

// The stream at `key`, for reading (counts a keyspace hit or miss): null when
// missing, WrongType for another type.
StatusOr<const StreamValue*> Find(CommandContext& ctx, std::string_view key);
// The stream at `key` and its entry, for a command that may change it: both
// null when missing.
Status FindForWrite(CommandContext& ctx, std::string_view key, Entry** entry, StreamValue** stream);
// A new, empty stream at the (missing) `key`.
StreamValue* Create(CommandContext& ctx, std::string_view key, Entry** entry);

// A new consumer `name` in `g` (of the stream at `key`), with Redis's
// "xgroup-createconsumer" event and a change counted; null when it exists.
StreamConsumer* CreateConsumer(CommandContext& ctx, std::string_view key, StreamGroup* g, std::string_view name);
// The consumer `name`, its seen time set to now, or a new one (CreateConsumer).
StreamConsumer* FindOrCreateConsumer(CommandContext& ctx, std::string_view key, StreamGroup* g,
                                     std::string_view name);

// The idempotent record Redis logs for a delivery, claim or drop of `id` in
// group `group` of the stream at `key`:
//   XCLAIM key group consumer 0 id TIME t RETRYCOUNT n FORCE JUSTID LASTID last
std::vector<std::string> ClaimRecord(std::string_view key, std::string_view group, StreamId id,
                                     const StreamNack& nack, StreamId group_last_id);

}  // namespace feedkv::server::stream_ops
