// List commands that work on one list in place: LPUSH, RPUSH, LPUSHX, RPUSHX, LPOP,
// RPOP, LLEN, LINDEX, LINSERT, LSET, LRANGE, LTRIM, LREM, LPOS. Semantics, argument
// order of checks, replies and error texts follow Redis 7.0's t_list.c. Handlers
// parse, call a list operation (server/ops/list_ops.h) or read the list it finds,
// reply; the structure is in storage/list_value.h. Moves and blocking pops: cmd_list_pops.cc.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/ops/index_range.h"
#include "server/ops/list_ops.h"
#include "storage/int_text.h"

namespace feedkv::server {

namespace {

// LPUSH / RPUSH key element [element ...]; the X forms push only onto an existing list.
void PushGeneric(CommandContext& ctx, bool front, bool only_existing) {
  StatusOr<size_t> size = list_ops::Push(ctx, ctx.arg(1), front, ctx.args.subspan(2), only_existing);
  if (!size.ok()) return ctx.Error(size.status());
  ctx.reply.Integer(static_cast<int64_t>(*size));
}

void LPush(CommandContext& ctx) { PushGeneric(ctx, true, false); }
void RPush(CommandContext& ctx) { PushGeneric(ctx, false, false); }
void LPushX(CommandContext& ctx) { PushGeneric(ctx, true, true); }
void RPushX(CommandContext& ctx) { PushGeneric(ctx, false, true); }

// LPOP / RPOP key [count]
void PopGeneric(CommandContext& ctx, bool front) {
  if (ctx.argc() > 3) return ctx.Error(fmt::format(protocol::err::kWrongArity, ctx.spec.name));
  if (ctx.argc() == 2) {
    StatusOr<std::optional<std::string>> value = list_ops::PopOne(ctx, ctx.arg(1), front);
    if (!value.ok()) return ctx.Error(value.status());
    return value->has_value() ? ctx.reply.Bulk(**value) : ctx.reply.Null();
  }
  int64_t count = 0;
  if (!ParseCanonicalInt64(ctx.arg(2), &count) || count < 0) return ctx.Error(protocol::err::kNotPositive);
  StatusOr<std::optional<std::vector<std::string>>> values =
      list_ops::PopMany(ctx, ctx.arg(1), front, static_cast<size_t>(count));
  if (!values.ok()) return ctx.Error(values.status());
  if (!values->has_value()) return ctx.reply.NullArray();
  ctx.reply.ArrayHeader((*values)->size());
  for (const std::string& v : **values) ctx.reply.Bulk(v);
}

void LPop(CommandContext& ctx) { PopGeneric(ctx, true); }
void RPop(CommandContext& ctx) { PopGeneric(ctx, false); }

void LLen(CommandContext& ctx) {
  const ListValue* l;
  if (!ctx.Found(list_ops::Find(ctx, ctx.arg(1)), &l)) return;
  ctx.reply.Integer(l == nullptr ? 0 : static_cast<int64_t>(l->size()));
}

void LIndex(CommandContext& ctx) {
  // As Redis's lindexCommand: the key first, so a missing key answers nil whatever
  // the index says.
  const ListValue* l;
  if (!ctx.Found(list_ops::Find(ctx, ctx.arg(1)), &l)) return;
  if (l == nullptr) return ctx.reply.Null();
  int64_t index;
  if (!ctx.IntArg(2, &index)) return;
  size_t at;
  if (!ResolveIndex(index, l->size(), &at)) return ctx.reply.Null();
  ctx.reply.Bulk(l->At(at));
}

// LINSERT key BEFORE|AFTER pivot element
void LInsert(CommandContext& ctx) {
  bool after;
  if (EqualsIgnoreCase(ctx.arg(2), "after")) {
    after = true;
  } else if (EqualsIgnoreCase(ctx.arg(2), "before")) {
    after = false;
  } else {
    return ctx.SyntaxError();
  }
  StatusOr<int64_t> size = list_ops::Insert(ctx, ctx.arg(1), after, ctx.arg(3), ctx.arg(4));
  if (!size.ok()) return ctx.Error(size.status());
  ctx.reply.Integer(*size);
}

void LSet(CommandContext& ctx) {
  Status st = list_ops::Set(ctx, ctx.arg(1), ctx.arg(2), ctx.arg(3));
  if (!st.ok()) return ctx.Error(st);
  ctx.reply.Ok();
}

void LRange(CommandContext& ctx) {
  int64_t start, stop;
  if (!ctx.IntArg(2, &start) || !ctx.IntArg(3, &stop)) return;
  const ListValue* l;
  if (!ctx.Found(list_ops::Find(ctx, ctx.arg(1)), &l)) return;
  size_t lo, hi;
  if (l == nullptr || !ResolveRange(start, stop, l->size(), &lo, &hi)) return ctx.reply.ArrayHeader(0);
  ctx.reply.ArrayHeader(hi - lo + 1);
  l->ForRange(lo, hi, false, [&](std::string_view v) {
    ctx.reply.Bulk(v);
    return true;
  });
}

void LTrim(CommandContext& ctx) {
  int64_t start, stop;
  if (!ctx.IntArg(2, &start) || !ctx.IntArg(3, &stop)) return;
  Status st = list_ops::Trim(ctx, ctx.arg(1), start, stop);
  if (!st.ok()) return ctx.Error(st);
  ctx.reply.Ok();
}

// LREM key count element
void LRem(CommandContext& ctx) {
  int64_t count;
  if (!ctx.IntArg(2, &count)) return;
  StatusOr<size_t> removed = list_ops::RemoveEqual(ctx, ctx.arg(1), count, ctx.arg(3));
  if (!removed.ok()) return ctx.Error(removed.status());
  ctx.reply.Integer(static_cast<int64_t>(*removed));
}

// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]
void LPos(CommandContext& ctx) {
  int64_t rank = 1, count = -1, maxlen = 0;
  for (size_t j = 3; j < ctx.argc(); ++j) {
    const bool more = j + 1 < ctx.argc();
    if (EqualsIgnoreCase(ctx.arg(j), "rank") && more) {
      if (!ctx.IntArg(++j, &rank)) return;
      if (rank == 0) return ctx.Error(protocol::err::kListRankZero);
    } else if (EqualsIgnoreCase(ctx.arg(j), "count") && more) {
      if (!ParseCanonicalInt64(ctx.arg(++j), &count) || count < 0) {
        return ctx.Error(protocol::err::kListCountNegative);
      }
    } else if (EqualsIgnoreCase(ctx.arg(j), "maxlen") && more) {
      if (!ParseCanonicalInt64(ctx.arg(++j), &maxlen) || maxlen < 0) {
        return ctx.Error(protocol::err::kListMaxlenNegative);
      }
    } else {
      return ctx.SyntaxError();
    }
  }
  const ListValue* l;
  if (!ctx.Found(list_ops::Find(ctx, ctx.arg(1)), &l)) return;
  if (l == nullptr) return count != -1 ? ctx.reply.ArrayHeader(0) : ctx.reply.Null();
  const bool reverse = rank < 0;
  uint64_t skip = (reverse ? 0 - static_cast<uint64_t>(rank) : static_cast<uint64_t>(rank)) - 1;
  // RANK -2^63 negates to itself in Redis: every match counts from the first, and
  // COUNT never stops the walk. Same answers here.
  const bool min_rank = rank == INT64_MIN;
  if (min_rank) skip = 0;
  const size_t size = l->size();
  const size_t walk = maxlen == 0 ? size : std::min<size_t>(size, static_cast<size_t>(maxlen));
  const std::string_view want = ctx.arg(2);
  std::vector<int64_t> found;
  const size_t limit = count == -1 ? 1 : min_rank ? 0 : static_cast<size_t>(count);  // 0: every match
  size_t i = 0;
  l->ForRange(0, walk - 1, reverse, [&](std::string_view v) {
    if (v == want) {
      if (skip > 0) {
        --skip;
      } else {
        found.push_back(static_cast<int64_t>(reverse ? size - 1 - i : i));
        if (limit != 0 && found.size() == limit) return false;
      }
    }
    ++i;
    return true;
  });
  if (count == -1) return found.empty() ? ctx.reply.Null() : ctx.reply.Integer(found[0]);
  ctx.reply.ArrayHeader(found.size());
  for (int64_t pos : found) ctx.reply.Integer(pos);
}

constexpr uint32_t kW = kWrite | kDenyOom;

const CommandSpec kCommands[] = {
    {"lpush", -3, kW | kFast, 1, 1, 1, LPush, "Prepend one or multiple elements to a list", "list", {}, {kKeyRW | kKeyInsert}},
    {"rpush", -3, kW | kFast, 1, 1, 1, RPush, "Append one or multiple elements to a list", "list", {}, {kKeyRW | kKeyInsert}},
    {"lpushx", -3, kW | kFast, 1, 1, 1, LPushX, "Prepend an element to a list, only if the list exists", "list", {}, {kKeyRW | kKeyInsert}},
    {"rpushx", -3, kW | kFast, 1, 1, 1, RPushX, "Append an element to a list, only if the list exists", "list", {}, {kKeyRW | kKeyInsert}},
    {"lpop", -2, kWrite | kFast, 1, 1, 1, LPop, "Remove and get the first elements in a list", "list", {}, {kKeyRW | kKeyAccess | kKeyDelete}},
    {"rpop", -2, kWrite | kFast, 1, 1, 1, RPop, "Remove and get the last elements in a list", "list", {}, {kKeyRW | kKeyAccess | kKeyDelete}},
    {"llen", 2, kReadOnly | kFast, 1, 1, 1, LLen, "Get the length of a list", "list", {}, {kKeyRO}},
    {"lindex", 3, kReadOnly, 1, 1, 1, LIndex, "Get an element from a list by its index", "list", {}, {kKeyRO | kKeyAccess}},
    {"linsert", 5, kW, 1, 1, 1, LInsert, "Insert an element before or after another element in a list", "list", {}, {kKeyRW | kKeyInsert}},
    {"lset", 4, kW, 1, 1, 1, LSet, "Set the value of an element in a list by its index", "list", {}, {kKeyRW | kKeyUpdate}},
    {"lrange", 4, kReadOnly, 1, 1, 1, LRange, "Get a range of elements from a list", "list", {}, {kKeyRO | kKeyAccess}},
    {"ltrim", 4, kWrite, 1, 1, 1, LTrim, "Trim a list to the specified range", "list", {}, {kKeyRW | kKeyDelete}},
    {"lrem", 4, kWrite, 1, 1, 1, LRem, "Remove elements from a list", "list", {}, {kKeyRW | kKeyDelete}},
    {"lpos", -3, kReadOnly, 1, 1, 1, LPos, "Return the index of matching elements on a list", "list", {}, {kKeyRO}},
};

}  // namespace

std::span<const CommandSpec> ListCommands() { return kCommands; }

}  // namespace feedkv::server
