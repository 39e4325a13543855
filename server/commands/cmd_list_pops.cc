// List commands that move elements between lists or wait for them: LMOVE,
// RPOPLPUSH, LMPOP and the blocking BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, with
// Redis 7.0's replies and error texts (t_list.c). A blocking command that finds
// its keys empty parks its client on them (blocking.h); a push wakes the waiters in
// arrival order and each runs again. A served blocking command is logged as its
// plain form (LPOP/RPOP key [count], LMOVE, RPOPLPUSH), so the log and replicas
// never block.
#include <optional>
#include <string>
#include <vector>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/commands/blocking.h"
#include "server/ops/list_ops.h"
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

// Moves one element from args[1] to args[2] and replies with it (nil when the source
// is missing); true when an element moved.
bool MoveAndReply(CommandContext& ctx, bool from_front, bool to_front) {
  StatusOr<std::optional<std::string>> moved = list_ops::Move(ctx, ctx.arg(1), ctx.arg(2), from_front, to_front);
  if (!moved.ok()) {
    ctx.Error(moved.status());
    return false;
  }
  if (!moved->has_value()) {
    ctx.reply.Null();
    return false;
  }
  ctx.reply.Bulk(**moved);
  return true;
}

// LMOVE source destination LEFT|RIGHT LEFT|RIGHT
void LMove(CommandContext& ctx) {
  bool from, to;
  if (!EndArg(ctx, 3, &from) || !EndArg(ctx, 4, &to)) return;
  MoveAndReply(ctx, from, to);
}

// RPOPLPUSH source destination
void RPopLPush(CommandContext& ctx) { MoveAndReply(ctx, false, true); }

// What a blocking command finds at `key`: a list to serve from, nothing (park), or
// another type — WRONGTYPE, except on a retry, which passes over it (Redis 7.0
// leaves such a client blocked).
enum class Found { kList, kNothing, kWrongType };
Found FindToServe(CommandContext& ctx, std::string_view key) {
  Entry* e;
  ListValue* l;
  if (!list_ops::FindForWrite(ctx, key, &e, &l).ok()) return IsRetry(ctx) ? Found::kNothing : Found::kWrongType;
  return l != nullptr ? Found::kList : Found::kNothing;
}

// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout; BRPOPLPUSH source
// destination timeout.
void BLMoveGeneric(CommandContext& ctx, bool from_front, bool to_front, size_t timeout_idx) {
  int64_t deadline;
  if (!BlockTimeoutArg(ctx, timeout_idx, &deadline)) return;
  switch (FindToServe(ctx, ctx.arg(1))) {
    case Found::kWrongType: return ctx.WrongType();
    case Found::kNothing: return ParkOnKeys(ctx, {std::string(ctx.arg(1))}, deadline, TimeoutReply::kNullBulk);
    case Found::kList: break;
  }
  if (!MoveAndReply(ctx, from_front, to_front)) return;
  if (timeout_idx == 5) {
    ctx.PropagateAs({"LMOVE", std::string(ctx.arg(1)), std::string(ctx.arg(2)), from_front ? "LEFT" : "RIGHT",
                     to_front ? "LEFT" : "RIGHT"});
  } else {
    ctx.PropagateAs({"RPOPLPUSH", std::string(ctx.arg(1)), std::string(ctx.arg(2))});
  }
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
void PopToReply(CommandContext& ctx, std::string_view key, bool front, int64_t count, bool mpop) {
  StatusOr<std::vector<std::string>> values =
      list_ops::PopServed(ctx, key, front, static_cast<size_t>(count), mpop);
  if (!values.ok()) return ctx.Error(values.status());
  ctx.reply.ArrayHeader(2);
  ctx.reply.Bulk(key);
  if (mpop) ctx.reply.ArrayHeader(values->size());
  for (const std::string& v : *values) ctx.reply.Bulk(v);
}

// The blocking pops: the first non-empty list of args[first..first+nkeys) is
// popped; when all are empty the client parks on them.
void BlockingPop(CommandContext& ctx, size_t first, size_t nkeys, bool front, int64_t count, bool mpop,
                 int64_t deadline_ms) {
  for (size_t i = first; i < first + nkeys; ++i) {
    switch (FindToServe(ctx, ctx.arg(i))) {
      case Found::kWrongType: return ctx.WrongType();
      case Found::kNothing: continue;
      case Found::kList: return PopToReply(ctx, ctx.arg(i), front, count, mpop);
    }
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
    if (Status st = list_ops::FindForWrite(ctx, ctx.arg(i), &e, &l); !st.ok()) return ctx.Error(st);
    if (l != nullptr) return PopToReply(ctx, ctx.arg(i), m.end_a, m.count, true);
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
