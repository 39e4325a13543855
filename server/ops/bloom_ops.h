// The Bloom filter operations: the layer between the BF.* commands (server/commands/
// cmd_bloom.cc) and Database, as server/ops/set_ops.h is for sets; the filter itself
// is storage/bloom_chain.h. An operation looks the key up, checks its type, changes the
// chain and keeps the keyspace's books (dirty count, keyspace events, memory) and the
// log's deterministic form: a filter created by an add is logged with every parameter
// spelled out, so a replica with other bf-* settings builds the same filter. It returns
// a value or a Status (WrongType; RedisBloom's "not found" / "item exists"; a size over
// bf-max-filter-bytes) and never writes a reply.
//
// Command thread only, like the Database it changes.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "server/command_context.h"
#include "storage/bloom_chain.h"
#include "storage/status.h"

namespace feedkv::server::bloom_ops {

// The filter at `key`, for reading (counts a keyspace hit or miss): null when missing.
StatusOr<const BloomChain*> Find(CommandContext& ctx, std::string_view key);
// The same, with NotFound ("not found") for a missing key (BF.INFO, BF.SCANDUMP).
StatusOr<const BloomChain*> FindExisting(CommandContext& ctx, std::string_view key);
// BF.EXISTS/BF.MEXISTS: as RedisBloom, a key that is missing or holds another type
// holds no items; null then.
const BloomChain* FindOrNone(CommandContext& ctx, std::string_view key);

// BF.RESERVE: creates a filter with `p` at `key` ("item exists" when there is one).
Status Reserve(CommandContext& ctx, std::string_view key, const BloomChain::Params& p);

// What an add answered, per item tried, in order. The items after a kFull answer
// (a NONSCALING filter that filled) were not tried.
struct AddResults {
  enum Answer : uint8_t { kNo, kYes, kFull, kTooBig, kFailed };
  std::vector<Answer> answers;
  uint64_t bytes_needed = 0;  // for kTooBig: the size the next link would take
};
// BF.ADD/BF.MADD/BF.INSERT: adds `items` to the filter at `key`, created from
// *create when missing ("not found" when `create` is null).
StatusOr<AddResults> Add(CommandContext& ctx, std::string_view key, const BloomChain::Params* create,
                         std::span<const std::string_view> items);

// BF.LOADCHUNK: iterator 1 on a missing key creates the filter from a SCANDUMP
// header; later iterators fill its bits.
Status LoadChunk(CommandContext& ctx, std::string_view key, int64_t iter, std::string_view data);

}  // namespace feedkv::server::bloom_ops
