// Expiry commands: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (with NX/XX/GT/LT),
// TTL, PTTL, EXPIRETIME, PEXPIRETIME, PERSIST. Semantics, replies and error
// texts follow Redis 7.2.
//
// Every change is propagated in a clock-independent form: a new expire as
// PEXPIREAT <absolute ms>, an expire time already in the past as DEL.
#include <limits>
#include <string>

#include <fmt/format.h>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/server.h"
#include "storage/database.h"

namespace feedkv::server {

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

enum ExpireFlag : uint32_t { kNx = 1, kXx = 2, kGt = 4, kLt = 8 };

void InvalidExpire(CommandContext& ctx) {
  ctx.Error(fmt::format(protocol::err::kInvalidExpire, ctx.spec.name));
}

bool ParseExpireFlags(CommandContext& ctx, uint32_t* flags) {
  for (size_t i = 3; i < ctx.argc(); i++) {
    std::string_view opt = ctx.arg(i);
    if (EqualsIgnoreCase(opt, "NX")) {
      *flags |= kNx;
    } else if (EqualsIgnoreCase(opt, "XX")) {
      *flags |= kXx;
    } else if (EqualsIgnoreCase(opt, "GT")) {
      *flags |= kGt;
    } else if (EqualsIgnoreCase(opt, "LT")) {
      *flags |= kLt;
    } else {
      ctx.Error(fmt::format(protocol::err::kUnsupportedOption, opt));
      return false;
    }
  }
  if ((*flags & kNx) && (*flags & (kXx | kGt | kLt))) {
    ctx.Error(protocol::err::kExpireNxXxGtLt);
    return false;
  }
  if ((*flags & kGt) && (*flags & kLt)) {
    ctx.Error(protocol::err::kExpireGtLt);
    return false;
  }
  return true;
}

// `relative`: the argument is a time to live (EXPIRE, PEXPIRE), else a unix
// time (EXPIREAT, PEXPIREAT).
void ExpireGeneric(CommandContext& ctx, bool relative, bool seconds) {
  uint32_t flags = 0;
  if (!ParseExpireFlags(ctx, &flags)) return;
  int64_t when;
  if (!ctx.IntArg(2, &when)) return;
  int64_t now = ctx.now_ms();
  int64_t base = relative ? now : 0;
  // Negative times are allowed (they delete the key); overflow is not.
  if (seconds) {
    if (when > kInt64Max / 1000 || when < kInt64Min / 1000) return InvalidExpire(ctx);
    when *= 1000;
  }
  if (when > kInt64Max - base) return InvalidExpire(ctx);
  when += base;

  Database& db = ctx.db();
  std::string_view key = ctx.arg(1);
  const Entry* e = db.Lookup(key, now);
  if (e == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  if (flags != 0) {
    // No expire counts as an infinite TTL.
    int64_t current = e->has_expire ? e->expire_ms() : kNoExpire;
    bool refuse = ((flags & kNx) && current != kNoExpire) ||
                  ((flags & kXx) && current == kNoExpire) ||
                  ((flags & kGt) && (current == kNoExpire || when <= current)) ||
                  ((flags & kLt) && current != kNoExpire && when >= current);
    if (refuse) {
      ctx.reply.Integer(0);
      return;
    }
  }
  if (when <= now && !ctx.from_log) {
    db.Delete(key);
    ctx.Notify(kNotifyGeneric, "del", key);
    ctx.PropagateAs({"DEL", std::string(key)});
  } else {
    db.SetExpire(key, when);
    ctx.Notify(kNotifyGeneric, "expire", key);
    ctx.PropagateAs({"PEXPIREAT", std::string(key), std::to_string(when)});
  }
  ctx.Dirty();
  ctx.reply.Integer(1);
}

void Expire(CommandContext& ctx) { ExpireGeneric(ctx, true, true); }
void PExpire(CommandContext& ctx) { ExpireGeneric(ctx, true, false); }
void ExpireAt(CommandContext& ctx) { ExpireGeneric(ctx, false, true); }
void PExpireAt(CommandContext& ctx) { ExpireGeneric(ctx, false, false); }

// TTL, PTTL, EXPIRETIME, PEXPIRETIME: -2 for no key, -1 for no expire.
void TtlGeneric(CommandContext& ctx, bool ms, bool absolute) {
  int64_t now = ctx.now_ms();
  // No access recorded, as Redis.
  const Entry* e = ctx.LookupRead(ctx.db(), ctx.arg(1), now, /*touch=*/false);
  if (e == nullptr) {
    ctx.reply.Integer(-2);
    return;
  }
  if (!e->has_expire) {
    ctx.reply.Integer(-1);
    return;
  }
  int64_t t = absolute ? e->expire_ms() : e->expire_ms() - now;
  if (t < 0) t = 0;
  ctx.reply.Integer(ms ? t : (t + 500) / 1000);
}

void Ttl(CommandContext& ctx) { TtlGeneric(ctx, false, false); }
void PTtl(CommandContext& ctx) { TtlGeneric(ctx, true, false); }
void ExpireTime(CommandContext& ctx) { TtlGeneric(ctx, false, true); }
void PExpireTime(CommandContext& ctx) { TtlGeneric(ctx, true, true); }

void Persist(CommandContext& ctx) {
  Database& db = ctx.db();
  const Entry* e = db.Lookup(ctx.arg(1), ctx.now_ms());
  if (e == nullptr || !e->has_expire) {
    ctx.reply.Integer(0);
    return;
  }
  db.SetExpire(ctx.arg(1), kNoExpire);
  ctx.Dirty();
  ctx.Notify(kNotifyGeneric, "persist", ctx.arg(1));
  ctx.reply.Integer(1);
}

constexpr uint32_t kWF = kWrite | kFast;
constexpr uint32_t kRF = kReadOnly | kFast;

const CommandSpec kCommands[] = {
    {"expire", -3, kWF, 1, 1, 1, Expire, "Set a key's time to live in seconds",
     "generic"},
    {"pexpire", -3, kWF, 1, 1, 1, PExpire, "Set a key's time to live in milliseconds",
     "generic"},
    {"expireat", -3, kWF, 1, 1, 1, ExpireAt,
     "Set the expiration for a key as a UNIX timestamp", "generic"},
    {"pexpireat", -3, kWF, 1, 1, 1, PExpireAt,
     "Set the expiration for a key as a UNIX timestamp specified in milliseconds", "generic"},
    {"ttl", 2, kRF, 1, 1, 1, Ttl, "Get the time to live for a key in seconds", "generic"},
    {"pttl", 2, kRF, 1, 1, 1, PTtl, "Get the time to live for a key in milliseconds",
     "generic"},
    {"expiretime", 2, kRF, 1, 1, 1, ExpireTime,
     "Get the expiration Unix timestamp for a key", "generic"},
    {"pexpiretime", 2, kRF, 1, 1, 1, PExpireTime,
     "Get the expiration Unix timestamp for a key in milliseconds", "generic"},
    {"persist", 2, kWF, 1, 1, 1, Persist, "Remove the expiration from a key", "generic"},
};

}  // namespace

std::span<const CommandSpec> ExpireCommands() { return kCommands; }

}  // namespace feedkv::server
