// What every *STORE command does with its result, whatever the type (SINTERSTORE,
// SUNIONSTORE, SDIFFSTORE, ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE, ZRANGESTORE, and
// LSSET, which stores a longset image): the one place the operation layer
// (server/ops/) replaces a destination key.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "server/command_context.h"
#include "storage/object.h"

namespace feedkv::server {

// Replaces `dest` with `result` of `size` members, or deletes it when `result` is
// null (an empty result), as Redis; returns the stored size. Only `dest` is touched
// for WATCH; the keyspace event is `event` (default: the command's name) in class
// `event_class`.
size_t StoreResult(CommandContext& ctx, std::string_view dest, std::unique_ptr<Object> result, size_t size,
                   int event_class, std::string_view event = {});

}  // namespace feedkv::server
