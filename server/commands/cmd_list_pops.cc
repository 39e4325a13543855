// List commands that move elements between lists or wait for them: LMOVE,
// RPOPLPUSH, LMPOP and the blocking BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, with
// Redis 7.0's replies and error texts (t_list.c). A blocking command that finds
// its keys empty parks its client on them (blocking.h); a push wakes the waiters in
// arrival order and each runs again. A served blocking command is logged as its
// plain form (LPOP/RPOP key [count], LMOVE, RPOPLPUSH), so the log and replicas
// never block.
#include <algorithm>
#include <string>
#include <vector>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/commands/blocking.h"
#include "server/commands/list_helpers.h"
#include "storage/int_text.h"

namespace feedkv::server {

namespace {

// LEFT / RIGHT: true for LEFT (the head).
bool EndArg(CommandContext& ctx, size_t i, bool* front) {
  if (EqualsIgnoreCase(ctx.arg(i), "left")) {
    *front = true;
  } else if (EqualsIgnoreCase(ctx.arg(i), "right")) {
    *front = false;
  } else {
    ctx.SyntaxError();
    return false;
  }
  return true;
}

// Moves one element from the non-empty src to dst and replies with it. A dst of
// another type is refused (false) before anything moves; src == dst rotates the list.
bool MoveAndReply(CommandContext& ctx, size_t src_idx, Entry* src_e, ListValue* src, bool from_front,
                  bool to_front) {
  const std::string_view src_key = ctx.arg(src_idx), dst_key = ctx.arg(src_idx + 1);
  Entry* dst_e;
  ListValue* dst;
  if (!LookupList(ctx, dst_key, false, &dst_e, &dst)) return false;
  std::string value = src->Pop(from_front);
  // Events as Redis: the push on the destination, then the pop on the source.
  if (src_key == dst_key) {
    src->Push(to_front, value, ListFill(ctx));
    ctx.db().UpdateObjectMemory(src_e);
    ctx.Notify(kNotifyList, to_front ? "lpush" : "rpush", dst_key);
    ctx.Notify(kNotifyList, from_front ? "lpop" : "rpop", src_key);
  } else {
    if (dst == nullptr) dst = ListForPush(ctx, dst_key, &dst_e);
    dst->Push(to_front, value, ListFill(ctx));
    ctx.db().UpdateObjectMemory(dst_e);
    ctx.Notify(kNotifyList, to_front ? "lpush" : "rpush", dst_key);
    ctx.Notify(kNotifyList, from_front ? "lpop" : "rpop", src_key);
    ListAfterChange(ctx, src_key, src_e, src);
  }
  ctx.Dirty();
  ctx.reply.Bulk(value);
  return true;
}

// LMOVE source destination LEFT|RIGHT LEFT|RIGHT; RPOPLPUSH source destination.
void LMoveGeneric(CommandContext& ctx, bool from_front, bool to_front) {
  Entry* e;
  ListValue* l;
  if (!LookupList(ctx, ctx.arg(1), false, &e, &l)) return;
  if (l == nullptr) return ctx.reply.Null();
  MoveAndReply(ctx, 1, e, l, from_front, to_front);
}

void LMove(CommandContext& ctx) {
  bool from, to;
  if (!EndArg(ctx, 3, &from) || !EndArg(ctx, 4, &to)) return;
  LMoveGeneric(ctx, from, to);
}

void RPopLPush(CommandContext& ctx) { LMoveGeneric(ctx, false, true); }

// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout; BRPOPLPUSH source
// destination timeout.
void BLMoveGeneric(CommandContext& ctx, bool from_front, bool to_front, size_t timeout_idx) {
  int64_t deadline;
  if (!BlockTimeoutArg(ctx, timeout_idx, &deadline)) return;
  Entry* e = ctx.db().Find(ctx.arg(1));
  if (e != nullptr && e->has_expire) e = ctx.db().Lookup(ctx.arg(1), ctx.now_ms());
  if (e != nullptr && e->type != ValueType::kList && !IsRetry(ctx)) return ctx.WrongType();
  if (e != nullptr && e->type == ValueType::kList) {
    if (MoveAndReply(ctx, 1, e, static_cast<ListValue*>(Database::GetObject(e)), from_front, to_front)) {
      if (timeout_idx == 5) {
        ctx.PropagateAs({"LMOVE", std::string(ctx.arg(1)), std::string(ctx.arg(2)), from_front ? "LEFT" : "RIGHT",
                         to_front ? "LEFT" : "RIGHT"});
      } else {
        ctx.PropagateAs({"RPOPLPUSH", std::string(ctx.arg(1)), std::string(ctx.arg(2))});
      }
    }
    return;
  }
  ParkOnKeys(ctx, {std::string(ctx.arg(1))}, deadline, TimeoutReply::kNullBulk);
}

void BLMove(CommandContext& ctx) {
  bool from, to;
  if (!EndArg(ctx, 3, &from) || !EndArg(ctx, 4, &to)) return;
  BLMoveGeneric(ctx, from, to, 5);
}

void BRPopLPush(CommandContext& ctx) { BLMoveGeneric(ctx, false, true, 3); }

// Pops min(count, size) elements from one end of the non-empty list at `key` and
// replies [key, element] (BLPOP/BRPOP) or [key, [elements]] (LMPOP/BLMPOP); logged
// as LPOP/RPOP key [count].
void PopToReply(CommandContext& ctx, std::string_view key, Entry* e, ListValue* l, bool front, int64_t count,
                bool mpop) {
  const size_t n = std::min<size_t>(static_cast<size_t>(count), l->size());
  ctx.reply.ArrayHeader(2);
  ctx.reply.Bulk(key);
  if (mpop) ctx.reply.ArrayHeader(n);
  for (size_t i = 0; i < n; ++i) ctx.reply.Bulk(l->Pop(front));
  std::vector<std::string> logged = {front ? "LPOP" : "RPOP", std::string(key)};
  if (mpop) logged.push_back(std::to_string(n));
  ctx.PropagateAs(std::move(logged));
  ctx.Touched(ctx.client.db, key);
  ctx.Notify(kNotifyList, front ? "lpop" : "rpop", key);
  ListAfterChange(ctx, key, e, l);
  ctx.Dirty(static_cast<int64_t>(n));
}

// The blocking pops: the first non-empty list of args[first..first+nkeys) is
// popped; when all are empty the client parks on them.
void BlockingPop(CommandContext& ctx, size_t first, size_t nkeys, bool front, int64_t count, bool mpop,
                 int64_t deadline_ms) {
  // A retry passes over a key that now holds another type (Redis 7.0 leaves such
  // a client blocked).
  for (size_t i = first; i < first + nkeys; ++i) {
    Entry* e = ctx.db().Find(ctx.arg(i));
    if (e != nullptr && e->has_expire) e = ctx.db().Lookup(ctx.arg(i), ctx.now_ms());
    if (e == nullptr) continue;
    if (e->type != ValueType::kList) {
      if (IsRetry(ctx)) continue;
      return ctx.WrongType();
    }
    return PopToReply(ctx, ctx.arg(i), e, static_cast<ListValue*>(Database::GetObject(e)), front, count, mpop);
  }
  std::vector<std::string> keys;
  for (size_t i = first; i < first + nkeys; ++i) keys.emplace_back(ctx.arg(i));
  ParkOnKeys(ctx, std::move(keys), deadline_ms, TimeoutReply::kNullArray);
}

// BLPOP / BRPOP key [key ...] timeout
void BPopGeneric(CommandContext& ctx, bool front) {
  int64_t deadline;
  if (!BlockTimeoutArg(ctx, ctx.argc() - 1, &deadline)) return;
  BlockingPop(ctx, 1, ctx.argc() - 2, front, 1, false, deadline);
}

void BLPop(CommandContext& ctx) { BPopGeneric(ctx, true); }
void BRPop(CommandContext& ctx) { BPopGeneric(ctx, false); }

// [B]LMPOP [timeout] numkeys key [key ...] LEFT|RIGHT [COUNT count]
void LMPopGeneric(CommandContext& ctx, size_t numkeys_idx, bool blocking) {
  MPopArgs m;
  if (!ParseMPopArgs(ctx, numkeys_idx, "left", "right", &m)) return;
  if (blocking) {
    int64_t deadline;
    if (!BlockTimeoutArg(ctx, 1, &deadline)) return;
    return BlockingPop(ctx, m.first, m.nkeys, m.end_a, m.count, true, deadline);
  }
  for (size_t i = m.first; i < m.first + m.nkeys; ++i) {
    Entry* e;
    ListValue* l;
    if (!LookupList(ctx, ctx.arg(i), false, &e, &l)) return;
    if (l != nullptr) return PopToReply(ctx, ctx.arg(i), e, l, m.end_a, m.count, true);
  }
  ctx.reply.NullArray();
}

void LMPop(CommandContext& ctx) { LMPopGeneric(ctx, 1, false); }
void BLMPop(CommandContext& ctx) { LMPopGeneric(ctx, 2, true); }

constexpr uint32_t kW = kWrite | kDenyOom;

const CommandSpec kCommands[] = {
    {"lmove", 5, kW, 1, 2, 1, LMove, "Pop an element from a list, push it to another list and return it", "list", {}, {kKeyRW | kKeyAccess | kKeyDelete, kKeyRW | kKeyInsert}},
    {"rpoplpush", 3, kW, 1, 2, 1, RPopLPush, "Remove the last element in a list, prepend it to another list and return it", "list", {}, {kKeyRW | kKeyAccess | kKeyDelete, kKeyRW | kKeyInsert}},
    {"lmpop", -4, kWrite | kKeyNum, 1, 1, 1, LMPop, "Pop elements from a list", "list", {}, {kKeyRW | kKeyAccess | kKeyDelete}},
    {"blpop", -3, kWrite | kNoScript | kBlocking, 1, -2, 1, BLPop, "Remove and get the first element in a list, or block until one is available", "list", {}, {kKeyRW | kKeyAccess | kKeyDelete}},
    {"brpop", -3, kWrite | kNoScript | kBlocking, 1, -2, 1, BRPop, "Remove and get the last element in a list, or block until one is available", "list", {}, {kKeyRW | kKeyAccess | kKeyDelete}},
    {"blmove", 6, kW | kNoScript | kBlocking, 1, 2, 1, BLMove, "Pop an element from a list, push it to another list and return it; or block until one is available", "list", {}, {kKeyRW | kKeyAccess | kKeyDelete, kKeyRW | kKeyInsert}},
    {"brpoplpush", 4, kW | kNoScript | kBlocking, 1, 2, 1, BRPopLPush, "Pop an element from a list, push it to another list and return it; or block until one is available", "list", {}, {kKeyRW | kKeyAccess | kKeyDelete, kKeyRW | kKeyInsert}},
    {"blmpop", -5, kWrite | kBlocking | kKeyNum, 2, 2, 1, BLMPop, "Pop elements from a list, or block until one is available", "list", {}, {kKeyRW | kKeyAccess | kKeyDelete}},
};

}  // namespace

std::span<const CommandSpec> ListPopCommands() { return kCommands; }

}  // namespace feedkv::server
