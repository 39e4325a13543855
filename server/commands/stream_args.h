// What the stream command families (cmd_streams.cc, cmd_stream_groups.cc) share:
// parsing stream IDs from arguments with Redis's rules and texts, and writing
// entries in Redis's reply shape (an entry is [id, [field, value, ...]]).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "server/command_context.h"
#include "storage/stream_value.h"

namespace feedkv::server {

// Argument i as a stream ID: "ms-seq", or "ms" with seq = missing_seq; "-" and
// "+" are the smallest and largest IDs unless `strict`. False after replying
// Redis's "Invalid stream ID" error.
bool StreamIdArg(CommandContext& ctx, size_t i, uint64_t missing_seq, bool strict, StreamId* id);
// An XRANGE/XPENDING bound: as StreamIdArg, or "(id" for an exclusive bound
// (*exclusive set; the ID after '(' is strict).
bool StreamIntervalArg(CommandContext& ctx, size_t i, uint64_t missing_seq, StreamId* id, bool* exclusive);

void ReplyStreamId(protocol::ReplyWriter& r, StreamId id);
void ReplyStreamEntry(protocol::ReplyWriter& r, const StreamEntry& e);
// XRANGE's reply: entries in [start, end], at most `count` (0: all), in order
// or reversed.
void ReplyStreamRange(protocol::ReplyWriter& r, const StreamValue& s, StreamId start, StreamId end, size_t count,
                      bool reverse);

}  // namespace feedkv::server
