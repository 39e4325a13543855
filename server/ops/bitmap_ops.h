// The bitmap operations on strings: the layer between the bit commands (server/
// commands/cmd_bitmaps.cc: SETBIT, BITOP, BITFIELD) and Database, as server/ops/
// set_ops.h is for sets; the bit arithmetic itself is storage/bitmap.h. A write grows
// the string with zero bytes to the byte it reaches (Redis's
// lookupStringForBitCommand) and keeps the keyspace's books (dirty count, keyspace
// events, WATCH). The read commands (GETBIT, BITCOUNT, BITPOS) need only
// string_ops::Find. Nothing here writes a reply; errors are a Status (WrongType).
//
// Command thread only, like the Database it changes.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "server/command_context.h"
#include "storage/status.h"

namespace feedkv::server::bitmap_ops {

// SETBIT: sets the bit at `offset` to `on`; the bit's old value.
StatusOr<int> SetBit(CommandContext& ctx, std::string_view key, uint64_t offset, bool on);

enum class BitOperation { kAnd, kOr, kXor, kNot };
// BITOP: stores the byte-wise result of `op` over `sources` (a missing or shorter
// source reads as zero bytes) at `dest`, deleting `dest` when every source is
// empty; the result's length. REQUIRES: one source for kNot, at least one for the rest.
StatusOr<size_t> Op(CommandContext& ctx, BitOperation op, std::string_view dest,
                    std::span<const std::string_view> sources);

// One BITFIELD subcommand, parsed.
struct FieldOp {
  enum Kind { kGet, kSet, kIncrBy } kind;
  enum Overflow { kWrap, kSat, kFail } overflow;
  bool sign;
  int bits;         // 1..64 signed, 1..63 unsigned
  uint64_t offset;  // in bits
  int64_t value;    // SET's value, INCRBY's increment
};
// BITFIELD/BITFIELD_RO: runs `ops` in order on the string at `key` and answers one
// value per op — GET's field, SET's old field, INCRBY's new one — or nullopt where
// OVERFLOW FAIL refused a write. `highest_write` is the last bit any SET/INCRBY
// touches; with no SET/INCRBY among `ops` the key is only read (and not created).
StatusOr<std::vector<std::optional<int64_t>>> Field(CommandContext& ctx, std::string_view key,
                                                    std::span<const FieldOp> ops,
                                                    std::optional<uint64_t> highest_write);

}  // namespace feedkv::server::bitmap_ops
