// Blocking commands' shared parts. See blocking.h.
#include "server/commands/blocking.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "protocol/error_text.h"
#include "server/server.h"
#include "server/waiting_clients.h"
#include "storage/int_text.h"

namespace feedkv::server {

bool BlockTimeoutArg(CommandContext& ctx, size_t i, int64_t* deadline_ms) {
  const std::string text(ctx.arg(i));
  char* end = nullptr;
  errno = 0;
  const long double secs = std::strtold(text.c_str(), &end);
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0])) || *end != '\0' ||
      std::isnan(secs) || (errno == ERANGE && std::isinf(secs))) {
    ctx.Error(protocol::err::kTimeoutNotFloat);
    return false;
  }
  const long double ms = std::ceil(secs * 1000.0L);
  if (ms > static_cast<long double>(INT64_MAX) / 2) {
    ctx.Error(protocol::err::kTimeoutOutOfRange);
    return false;
  }
  if (ms < 0) {
    ctx.Error(protocol::err::kTimeoutNegative);
    return false;
  }
  *deadline_ms = ms > 0 ? NowMs() + static_cast<int64_t>(ms) : 0;
  return true;
}

namespace {

void WriteTimeoutReply(std::string* out, int resp, TimeoutReply how) {
  protocol::ReplyWriter w(out, resp);
  if (how == TimeoutReply::kNullArray) {
    w.NullArray();
  } else {
    w.Null();
  }
}

}  // namespace

void ParkOnKeys(CommandContext& ctx, std::vector<std::string> keys, int64_t deadline_ms, TimeoutReply how,
                std::vector<std::string> argv) {
  if (IsRetry(ctx)) deadline_ms = ctx.client.retry_deadline_ms;
  int64_t timeout_ms = 0;
  if (deadline_ms > 0) {
    timeout_ms = deadline_ms - NowMs();
    if (timeout_ms <= 0) return WriteTimeoutReply(ctx.reply.buffer(), ctx.reply.resp(), how);
  }
  if (!ctx.can_block()) return WriteTimeoutReply(ctx.reply.buffer(), ctx.reply.resp(), how);
  WaitCondition cond;
  cond.what = WaitFor::kKeyReady;
  cond.db = ctx.client.db;
  cond.keys = std::move(keys);
  if (argv.empty()) argv.assign(ctx.args.begin(), ctx.args.end());
  Server& server = ctx.server;
  server.waiting().Park(ctx.client, std::move(cond), timeout_ms,
                        [&server, argv = std::move(argv), deadline_ms, how](Client& c, WaitEnd end) {
                          if (end != WaitEnd::kReady) return WriteTimeoutReply(&c.out, c.resp, how);
                          std::vector<std::string_view> views(argv.begin(), argv.end());
                          c.retry_deadline_ms = deadline_ms;
                          server.Execute(c, views);
                          c.retry_deadline_ms = -1;
                        });
}

bool ParseMPopArgs(CommandContext& ctx, size_t numkeys_idx, const char* end_a, const char* end_b, MPopArgs* out) {
  int64_t numkeys;
  if (!ParseCanonicalInt64(ctx.arg(numkeys_idx), &numkeys) || numkeys < 1) {
    ctx.Error(protocol::err::kNumkeysNotPositive);
    return false;
  }
  if (static_cast<uint64_t>(numkeys) >= ctx.argc() - numkeys_idx - 1) {
    ctx.SyntaxError();
    return false;
  }
  out->first = numkeys_idx + 1;
  out->nkeys = static_cast<size_t>(numkeys);
  const size_t where_idx = out->first + out->nkeys;
  if (EqualsIgnoreCase(ctx.arg(where_idx), end_a)) {
    out->end_a = true;
  } else if (EqualsIgnoreCase(ctx.arg(where_idx), end_b)) {
    out->end_a = false;
  } else {
    ctx.SyntaxError();
    return false;
  }
  int64_t count = -1;
  for (size_t j = where_idx + 1; j < ctx.argc(); ++j) {
    if (count == -1 && EqualsIgnoreCase(ctx.arg(j), "count") && j + 1 < ctx.argc()) {
      ++j;
      if (!ParseCanonicalInt64(ctx.arg(j), &count) || count < 1) {
        ctx.Error(protocol::err::kCountNotPositive);
        return false;
      }
    } else {
      ctx.SyntaxError();
      return false;
    }
  }
  out->count = count == -1 ? 1 : count;
  return true;
}

}  // namespace feedkv::server
