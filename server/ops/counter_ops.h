// The counter operations: the layer between the COUNTER.* commands (server/commands/
// cmd_counters.cc) and the server's counter spaces (storage/counter_space.h), as
// server/ops/set_ops.h is for sets and Database. Counter spaces are server-wide, not
// per SELECT database. An operation finds the space, applies the counter-* settings
// to it (they shape tables created from now on), changes it and keeps the server's
// books — dirty count and the class-d keyspace events ("<space>:<id>") — and returns
// its result or a Status carrying the error text ("no such counter space", a schema
// mismatch, a counter that would overflow its bits). It never writes a reply.
//
// Command thread only, like the spaces it changes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "server/command_context.h"
#include "storage/counter_space.h"
#include "storage/status.h"

namespace feedkv::server::counter_ops {

// The space `name` with the current counter-* settings applied; NotFound when
// there is none.
StatusOr<CounterSpace*> FindSpace(CommandContext& ctx, std::string_view name);

// COUNTER.CREATE: creates the space `name` with `schema`; OK, doing nothing, when
// it exists with the same schema (a mismatch is an error).
Status Create(CommandContext& ctx, std::string_view name, CounterSchema schema);
// COUNTER.DROP: deletes the space and its cold rows; whether it existed.
bool Drop(CommandContext& ctx, std::string_view name);

// COUNTER.INCRBY: the counter's new value. `space` is FindSpace(ctx, name).
StatusOr<uint64_t> IncrBy(CommandContext& ctx, std::string_view name, CounterSpace& space, int64_t id,
                          size_t field, int64_t delta);
// COUNTER.SET.
Status Set(CommandContext& ctx, std::string_view name, CounterSpace& space, int64_t id, size_t field,
           uint64_t value);
// COUNTER.DEL: deletes every counter of `id`; whether it had any.
bool Del(CommandContext& ctx, std::string_view name, CounterSpace& space, int64_t id);

}  // namespace feedkv::server::counter_ops
