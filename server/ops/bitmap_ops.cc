#include "server/ops/bitmap_ops.h"

#include <algorithm>
#include <string>

#include "server/ops/string_ops.h"
#include "storage/bitmap.h"
#include "storage/database.h"

namespace feedkv::server::bitmap_ops {

namespace {

// Redis's lookupStringForBitCommand: the string at `key`, created or zero-padded to
// reach bit `max_bit`. *grew: it was created or grew.
StatusOr<std::string*> StringForBits(CommandContext& ctx, std::string_view key, uint64_t max_bit, bool* grew) {
  Database& db = ctx.db();
  Entry* e = db.Lookup(key, ctx.now_ms());
  if (e != nullptr && e->type != ValueType::kString) return Status::WrongType();
  size_t old_len = 0;
  if (e == nullptr) {
    db.SetString(key, "", kNoExpire, false);
  } else {
    char buf[Database::kIntBufSize];
    old_len = Database::StringValue(e, buf).size();
  }
  std::string* s = db.StringBytesForWrite(key, static_cast<size_t>(max_bit >> 3) + 1);
  *grew = e == nullptr || s->size() != old_len;
  return s;
}

// One SET or INCRBY of a field on `current`: the reply value, and the field's bits
// before and after; false when OVERFLOW FAIL refuses it.
bool ApplyWrite(const FieldOp& op, std::string_view current, int64_t* reply, uint64_t* old_bits,
                uint64_t* new_bits) {
  const bool wrap = op.overflow == FieldOp::kWrap;
  int over;
  if (op.sign) {
    const int64_t old = bitmap::GetSignedField(current, op.offset, op.bits);
    int64_t limit = 0;
    int64_t result;
    if (op.kind == FieldOp::kIncrBy) {
      over = bitmap::CheckSignedOverflow(old, op.value, op.bits, wrap, &limit);
      result = over ? limit : static_cast<int64_t>(static_cast<uint64_t>(old) + static_cast<uint64_t>(op.value));
      *reply = result;
    } else {
      over = bitmap::CheckSignedOverflow(op.value, 0, op.bits, wrap, &limit);
      result = over ? limit : op.value;
      *reply = old;
    }
    *old_bits = static_cast<uint64_t>(old);
    *new_bits = static_cast<uint64_t>(result);
  } else {
    const uint64_t old = bitmap::GetField(current, op.offset, op.bits);
    uint64_t limit = 0;
    uint64_t result;
    if (op.kind == FieldOp::kIncrBy) {
      over = bitmap::CheckUnsignedOverflow(old, op.value, op.bits, wrap, &limit);
      result = over ? limit : old + static_cast<uint64_t>(op.value);
      *reply = static_cast<int64_t>(result);
    } else {
      const auto v = static_cast<uint64_t>(op.value);
      over = bitmap::CheckUnsignedOverflow(v, 0, op.bits, wrap, &limit);
      result = over ? limit : v;
      *reply = static_cast<int64_t>(old);
    }
    *old_bits = old;
    *new_bits = result;
  }
  return over == 0 || op.overflow != FieldOp::kFail;
}

int64_t ReadField(const FieldOp& op, std::string_view current) {
  return op.sign ? bitmap::GetSignedField(current, op.offset, op.bits)
                 : static_cast<int64_t>(bitmap::GetField(current, op.offset, op.bits));
}

}  // namespace

StatusOr<int> SetBit(CommandContext& ctx, std::string_view key, uint64_t offset, bool on) {
  bool grew;
  StatusOr<std::string*> s = StringForBits(ctx, key, offset, &grew);
  if (!s.ok()) return s.status();
  const uint64_t old = bitmap::GetField(**s, offset, 1);
  bitmap::SetField((*s)->data(), offset, 1, on ? 1 : 0);
  // A write only when the string was created, grew or the bit changed (as Redis).
  if (grew || old != (on ? 1u : 0u)) {
    ctx.Dirty();
    ctx.Notify(kNotifyString, "setbit", key);
  }
  return static_cast<int>(old);
}

StatusOr<size_t> Op(CommandContext& ctx, BitOperation op, std::string_view dest,
                    std::span<const std::string_view> sources) {
  // Copied: a source may be `dest`, and the result replaces it.
  std::vector<std::string> bytes(sources.size());
  size_t maxlen = 0;
  for (size_t j = 0; j < sources.size(); ++j) {
    char buf[Database::kIntBufSize];
    StatusOr<std::optional<std::string_view>> s = string_ops::Find(ctx, sources[j], buf);
    if (!s.ok()) return s.status();
    if (*s) bytes[j].assign(**s);
    maxlen = std::max(maxlen, bytes[j].size());
  }
  Database& db = ctx.db();
  if (maxlen == 0) {
    if (db.Delete(dest)) {
      ctx.Touched(ctx.client.db, dest);
      ctx.Dirty();
      ctx.Notify(kNotifyGeneric, "del", dest);
    }
    return size_t{0};
  }
  std::string result(maxlen, '\0');
  auto byte_of = [&](size_t j, size_t i) -> uint8_t {
    return i < bytes[j].size() ? static_cast<uint8_t>(bytes[j][i]) : 0;
  };
  for (size_t i = 0; i < maxlen; ++i) {
    uint8_t v = byte_of(0, i);
    if (op == BitOperation::kNot) v = static_cast<uint8_t>(~v);
    for (size_t j = 1; j < bytes.size(); ++j) {
      const uint8_t b = byte_of(j, i);
      v = op == BitOperation::kAnd ? (v & b) : op == BitOperation::kOr ? (v | b) : (v ^ b);
    }
    result[i] = static_cast<char>(v);
  }
  db.SetString(dest, result, kNoExpire, false);
  ctx.Touched(ctx.client.db, dest);  // the sources did not change
  ctx.Dirty();
  ctx.Notify(kNotifyString, "set", dest);
  return maxlen;
}

StatusOr<std::vector<std::optional<int64_t>>> Field(CommandContext& ctx, std::string_view key,
                                                    std::span<const FieldOp> ops,
                                                    std::optional<uint64_t> highest_write) {
  std::vector<std::optional<int64_t>> replies;
  replies.reserve(ops.size());
  if (!highest_write) {
    char buf[Database::kIntBufSize];
    StatusOr<std::optional<std::string_view>> s = string_ops::Find(ctx, key, buf);
    if (!s.ok()) return s.status();
    const std::string_view current = s->value_or(std::string_view());
    for (const FieldOp& op : ops) replies.emplace_back(ReadField(op, current));
    return replies;
  }
  bool grew;
  StatusOr<std::string*> target = StringForBits(ctx, key, *highest_write, &grew);
  if (!target.ok()) return target.status();
  int64_t changes = 0, writes = 0;
  for (const FieldOp& op : ops) {
    const std::string_view current = **target;
    if (op.kind == FieldOp::kGet) {
      replies.emplace_back(ReadField(op, current));
      continue;
    }
    int64_t reply;
    uint64_t old_bits, new_bits;
    if (!ApplyWrite(op, current, &reply, &old_bits, &new_bits)) {
      replies.emplace_back(std::nullopt);
      continue;
    }
    replies.emplace_back(reply);
    bitmap::SetField((*target)->data(), op.offset, op.bits, new_bits);
    if (grew || old_bits != new_bits) ++changes;
    ++writes;
  }
  if (changes > 0) ctx.Dirty(changes);
  // Redis 7.0 reports every SET/INCRBY that ran, changed or not.
  if (writes > 0) ctx.Notify(kNotifyString, "setbit", key);
  return replies;
}

}  // namespace feedkv::server::bitmap_ops
