// Bitmap commands on strings: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD,
// BITFIELD_RO. Semantics, order of argument checks, replies and error texts follow
// Redis 7.0's bitops.c. The handlers parse and reply; the writes are
// server/ops/bitmap_ops, the bit arithmetic is storage/bitmap.h. A bit write grows
// the string with zero bytes to the byte it reaches, as Redis, under the offset
// limit proto-max-bulk-len (in bytes).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/ops/bitmap_ops.h"
#include "server/ops/string_ops.h"
#include "server/server.h"
#include "storage/bitmap.h"
#include "storage/database.h"
#include "storage/int_text.h"

namespace feedkv::server {

namespace {

// Redis's getBitOffsetFromArgument: a bit offset, or with `hash_bits` > 0 the
// "#n" form meaning n * hash_bits; below proto-max-bulk-len bytes.
bool BitOffsetArg(CommandContext& ctx, size_t i, int hash_bits, uint64_t* out) {
  std::string_view text = ctx.arg(i);
  const bool hash = hash_bits > 0 && !text.empty() && text[0] == '#';
  if (hash) text.remove_prefix(1);
  int64_t offset;
  if (!ParseCanonicalInt64(text, &offset)) {
    ctx.Error(protocol::err::kBitOffsetInvalid);
    return false;
  }
  if (hash) offset = static_cast<int64_t>(static_cast<uint64_t>(offset) * static_cast<uint64_t>(hash_bits));
  if (offset < 0 || (!ctx.from_log && (offset >> 3) >= ctx.server.cfg().proto_max_bulk_len)) {
    ctx.Error(protocol::err::kBitOffsetInvalid);
    return false;
  }
  *out = static_cast<uint64_t>(offset);
  return true;
}

// The string at `key` for a read (nullopt when missing); false after WRONGTYPE.
bool ReadString(CommandContext& ctx, std::string_view key, char (&buf)[Database::kIntBufSize],
                std::optional<std::string_view>* out) {
  return ctx.Found(string_ops::Find(ctx, key, buf), out);
}

void SetBit(CommandContext& ctx) {
  uint64_t offset;
  if (!BitOffsetArg(ctx, 2, 0, &offset)) return;
  int64_t on;
  if (!ParseCanonicalInt64(ctx.arg(3), &on) || (on & ~int64_t{1}) != 0) {
    return ctx.Error(protocol::err::kBitValueInvalid);
  }
  int old;
  if (!ctx.Found(bitmap_ops::SetBit(ctx, ctx.arg(1), offset, on == 1), &old)) return;
  ctx.reply.Integer(old);
}

void GetBit(CommandContext& ctx) {
  uint64_t offset;
  if (!BitOffsetArg(ctx, 2, 0, &offset)) return;
  char buf[Database::kIntBufSize];
  std::optional<std::string_view> s;
  if (!ReadString(ctx, ctx.arg(1), buf, &s)) return;
  ctx.reply.Integer(s ? static_cast<int64_t>(bitmap::GetField(*s, offset, 1)) : 0);
}

// start/end of BITCOUNT/BITPOS resolved as Redis does: byte or bit indexes,
// negative from the end, clamped. False when the range is empty.
struct BitRange {
  uint64_t first = 0, last = 0;  // bit indexes
};

bool ResolveBitRange(int64_t start, int64_t end, bool in_bits, size_t len, BitRange* out) {
  int64_t total = static_cast<int64_t>(len);
  if (in_bits) total <<= 3;
  if (start < 0) start += total;
  if (end < 0) end += total;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= total) end = total - 1;
  if (start > end) return false;
  out->first = in_bits ? static_cast<uint64_t>(start) : static_cast<uint64_t>(start) * 8;
  out->last = in_bits ? static_cast<uint64_t>(end) : static_cast<uint64_t>(end) * 8 + 7;
  return true;
}

bool UnitArg(CommandContext& ctx, size_t i, bool* in_bits) {
  if (EqualsIgnoreCase(ctx.arg(i), "bit")) {
    *in_bits = true;
  } else if (EqualsIgnoreCase(ctx.arg(i), "byte")) {
    *in_bits = false;
  } else {
    ctx.SyntaxError();
    return false;
  }
  return true;
}

// BITCOUNT key [start end [BYTE|BIT]]
void BitCount(CommandContext& ctx) {
  char buf[Database::kIntBufSize];
  std::optional<std::string_view> found;
  if (!ReadString(ctx, ctx.arg(1), buf, &found)) return;
  if (!found) return ctx.reply.Integer(0);
  const std::string_view s = *found;
  BitRange range;
  bool nonempty;
  if (ctx.argc() == 4 || ctx.argc() == 5) {
    int64_t start, end;
    if (!ctx.IntArg(2, &start) || !ctx.IntArg(3, &end)) return;
    if (start < 0 && end < 0 && start > end) return ctx.reply.Integer(0);
    bool in_bits = false;
    if (ctx.argc() == 5 && !UnitArg(ctx, 4, &in_bits)) return;
    nonempty = ResolveBitRange(start, end, in_bits, s.size(), &range);
  } else if (ctx.argc() == 2) {
    nonempty = ResolveBitRange(0, -1, false, s.size(), &range);
  } else {
    return ctx.SyntaxError();
  }
  ctx.reply.Integer(nonempty ? static_cast<int64_t>(bitmap::CountBits(s, range.first, range.last)) : 0);
}

// BITPOS key bit [start [end [BYTE|BIT]]]
void BitPos(CommandContext& ctx) {
  int64_t bit;
  if (!ctx.IntArg(2, &bit)) return;
  if (bit != 0 && bit != 1) return ctx.Error(protocol::err::kBitposBitInvalid);
  char buf[Database::kIntBufSize];
  std::optional<std::string_view> found;
  if (!ReadString(ctx, ctx.arg(1), buf, &found)) return;
  // A missing key is an endless run of zero bits.
  if (!found) return ctx.reply.Integer(bit ? -1 : 0);
  const std::string_view s = *found;
  BitRange range;
  bool nonempty;
  bool end_given = false;
  if (ctx.argc() >= 4 && ctx.argc() <= 6) {
    int64_t start, end = -1;
    if (!ctx.IntArg(3, &start)) return;
    bool in_bits = false;
    if (ctx.argc() == 6 && !UnitArg(ctx, 5, &in_bits)) return;
    if (ctx.argc() >= 5) {
      if (!ctx.IntArg(4, &end)) return;
      end_given = true;
    }
    nonempty = ResolveBitRange(start, end, in_bits, s.size(), &range);
  } else if (ctx.argc() == 3) {
    nonempty = ResolveBitRange(0, -1, false, s.size(), &range);
  } else {
    return ctx.SyntaxError();
  }
  if (!nonempty) return ctx.reply.Integer(-1);
  const int64_t pos = bitmap::FindBit(s, bit == 1, range.first, range.last);
  if (pos >= 0 || bit == 1 || end_given) return ctx.reply.Integer(pos);
  // No clear bit up to the end of the string: the first bit past the range's
  // last byte, as if the string went on with zeros.
  ctx.reply.Integer(static_cast<int64_t>(((range.last >> 3) + 1) * 8));
}

// BITOP AND|OR|XOR|NOT destkey key [key ...]
void BitOp(CommandContext& ctx) {
  using bitmap_ops::BitOperation;
  BitOperation op;
  const std::string_view name = ctx.arg(1);
  if (EqualsIgnoreCase(name, "and")) {
    op = BitOperation::kAnd;
  } else if (EqualsIgnoreCase(name, "or")) {
    op = BitOperation::kOr;
  } else if (EqualsIgnoreCase(name, "xor")) {
    op = BitOperation::kXor;
  } else if (EqualsIgnoreCase(name, "not")) {
    op = BitOperation::kNot;
  } else {
    return ctx.SyntaxError();
  }
  if (op == BitOperation::kNot && ctx.argc() != 4) return ctx.Error(protocol::err::kBitopNotOneKey);
  size_t len;
  if (!ctx.Found(bitmap_ops::Op(ctx, op, ctx.arg(2), ctx.args.subspan(3)), &len)) return;
  ctx.reply.Integer(static_cast<int64_t>(len));
}

using bitmap_ops::FieldOp;

// Redis's getBitfieldTypeFromArgument: i1..i64, u1..u63.
bool FieldTypeArg(CommandContext& ctx, size_t i, bool* sign, int* bits) {
  const std::string_view t = ctx.arg(i);
  int64_t n;
  // Lower case only, as Redis 7.0.
  if (t.empty() || (t[0] != 'i' && t[0] != 'u') || !ParseCanonicalInt64(t.substr(1), &n) || n < 1 ||
      n > (t[0] == 'i' ? 64 : 63)) {
    ctx.Error(protocol::err::kBitfieldType);
    return false;
  }
  *sign = t[0] == 'i';
  *bits = static_cast<int>(n);
  return true;
}

// BITFIELD key [GET type offset | SET type offset value | INCRBY type offset incr |
// OVERFLOW WRAP|SAT|FAIL] ...; BITFIELD_RO takes GETs only.
void BitFieldGeneric(CommandContext& ctx, bool ro_command) {
  std::vector<FieldOp> ops;
  FieldOp::Overflow overflow = FieldOp::kWrap;
  bool readonly = true;
  uint64_t highest_write = 0;
  for (size_t j = 2; j < ctx.argc(); ++j) {
    const size_t rest = ctx.argc() - j - 1;
    const std::string_view sub = ctx.arg(j);
    FieldOp op{};
    if (EqualsIgnoreCase(sub, "get") && rest >= 2) {
      op.kind = FieldOp::kGet;
    } else if (EqualsIgnoreCase(sub, "set") && rest >= 3) {
      op.kind = FieldOp::kSet;
    } else if (EqualsIgnoreCase(sub, "incrby") && rest >= 3) {
      op.kind = FieldOp::kIncrBy;
    } else if (EqualsIgnoreCase(sub, "overflow") && rest >= 1) {
      const std::string_view how = ctx.arg(++j);
      if (EqualsIgnoreCase(how, "wrap")) {
        overflow = FieldOp::kWrap;
      } else if (EqualsIgnoreCase(how, "sat")) {
        overflow = FieldOp::kSat;
      } else if (EqualsIgnoreCase(how, "fail")) {
        overflow = FieldOp::kFail;
      } else {
        return ctx.Error(protocol::err::kBitfieldOverflowType);
      }
      continue;
    } else {
      return ctx.SyntaxError();
    }
    if (!FieldTypeArg(ctx, j + 1, &op.sign, &op.bits)) return;
    if (!BitOffsetArg(ctx, j + 2, op.bits, &op.offset)) return;
    if (op.kind != FieldOp::kGet) {
      readonly = false;
      highest_write = std::max(highest_write, op.offset + static_cast<uint64_t>(op.bits) - 1);
      if (!ctx.IntArg(j + 3, &op.value)) return;
    }
    op.overflow = overflow;
    ops.push_back(op);
    j += op.kind == FieldOp::kGet ? 2 : 3;
  }
  if (!readonly && ro_command) return ctx.Error(protocol::err::kBitfieldRoWrite);
  std::vector<std::optional<int64_t>> replies;
  if (!ctx.Found(bitmap_ops::Field(ctx, ctx.arg(1), ops, readonly ? std::nullopt : std::optional(highest_write)),
                 &replies)) {
    return;
  }
  ctx.reply.ArrayHeader(replies.size());
  for (const std::optional<int64_t>& r : replies) {
    if (r) {
      ctx.reply.Integer(*r);
    } else {
      ctx.reply.Null();
    }
  }
}

void BitField(CommandContext& ctx) { BitFieldGeneric(ctx, false); }
void BitFieldRo(CommandContext& ctx) { BitFieldGeneric(ctx, true); }

constexpr uint32_t kW = kWrite | kDenyOom;

const CommandSpec kCommands[] = {
    {"setbit", 4, kW, 1, 1, 1, SetBit, "Sets or clears the bit at offset in the string value stored at key", "bitmap", {}, {kKeyRW | kKeyAccess | kKeyUpdate}},
    {"getbit", 3, kReadOnly | kFast, 1, 1, 1, GetBit, "Returns the bit value at offset in the string value stored at key", "bitmap", {}, {kKeyRO | kKeyAccess}},
    {"bitcount", -2, kReadOnly, 1, 1, 1, BitCount, "Count set bits in a string", "bitmap", {}, {kKeyRO | kKeyAccess}},
    {"bitpos", -3, kReadOnly, 1, 1, 1, BitPos, "Find first bit set or clear in a string", "bitmap", {}, {kKeyRO | kKeyAccess}},
    {"bitop", -4, kW, 2, -1, 1, BitOp, "Perform bitwise operations between strings", "bitmap", {}, {kKeyOW | kKeyUpdate, kKeyRO | kKeyAccess}},
    {"bitfield", -2, kW, 1, 1, 1, BitField, "Perform arbitrary bitfield integer operations on strings", "bitmap", {}, {kKeyRW | kKeyUpdate | kKeyAccess | kKeyBitfieldReads}},
    {"bitfield_ro", -2, kReadOnly | kFast, 1, 1, 1, BitFieldRo, "Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD", "bitmap", {}, {kKeyRO | kKeyAccess}},
};

}  // namespace

std::span<const CommandSpec> BitmapCommands() { return kCommands; }

}  // namespace feedkv::server
