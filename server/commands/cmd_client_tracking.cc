// CLIENT TRACKING and its companions, with Redis 7.0's option checks in
// Redis's order and its error texts.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "protocol/error_text.h"
#include "server/client.h"
#include "server/commands/client_tracking.h"
#include "server/server.h"

namespace feedkv::server {

namespace {


// Redis's checkPrefixCollisionsOrReply.
bool PrefixesOk(CommandContext& ctx, const std::vector<std::string>& given) {
  const std::vector<std::string>& existing = ctx.client.tracking.prefixes;
  for (size_t i = 0; i < given.size(); i++) {
    if (auto hit = Tracking::Overlap(given[i], existing)) {
      ctx.Error(fmt::format(protocol::err::kTrackingPrefixOverlapsExisting, given[i], *hit));
      return false;
    }
    for (size_t j = i + 1; j < given.size(); j++) {
      const std::string_view a = given[i], b = given[j];
      if (a.starts_with(b) || b.starts_with(a)) {
        ctx.Error(fmt::format(protocol::err::kTrackingPrefixOverlapsGiven, a, b));
        return false;
      }
    }
  }
  return true;
}

}  // namespace

// CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p ...] [BCAST] [OPTIN] [OPTOUT] [NOLOOP]
void ClientTrackingCmd(CommandContext& ctx) {
  Client& c = ctx.client;
  int64_t redirect = 0;
  bool bcast = false, optin = false, optout = false, noloop = false;
  std::vector<std::string> prefixes;
  for (size_t j = 3; j < ctx.argc(); j++) {
    const std::string_view opt = ctx.arg(j);
    const bool more = j + 1 < ctx.argc();
    if (EqualsIgnoreCase(opt, "REDIRECT") && more) {
      j++;
      if (redirect != 0) return ctx.Error(protocol::err::kTrackingRedirectTwice);
      if (!ctx.IntArg(j, &redirect)) return;
      // Checked now, though the target may go later (then: broken_redirect).
      if (redirect <= 0 || ctx.server.FindClient(static_cast<uint64_t>(redirect)) == nullptr) {
        return ctx.Error(protocol::err::kTrackingRedirectMissing);
      }
    } else if (EqualsIgnoreCase(opt, "BCAST")) {
      bcast = true;
    } else if (EqualsIgnoreCase(opt, "OPTIN")) {
      optin = true;
    } else if (EqualsIgnoreCase(opt, "OPTOUT")) {
      optout = true;
    } else if (EqualsIgnoreCase(opt, "NOLOOP")) {
      noloop = true;
    } else if (EqualsIgnoreCase(opt, "PREFIX") && more) {
      prefixes.emplace_back(ctx.arg(++j));
    } else {
      return ctx.SyntaxError();
    }
  }
  Tracking& tracking = ctx.server.tracking();
  if (EqualsIgnoreCase(ctx.arg(2), "OFF")) {
    tracking.Disable(c);
    return ctx.reply.Ok();
  }
  if (!EqualsIgnoreCase(ctx.arg(2), "ON")) return ctx.SyntaxError();
  if (!bcast && !prefixes.empty()) return ctx.Error(protocol::err::kTrackingPrefixNeedsBcast);
  if (c.tracking.on && c.tracking.bcast != bcast) {
    return ctx.Error(protocol::err::kTrackingBcastSwitch);
  }
  if (bcast && (optin || optout)) return ctx.Error(protocol::err::kTrackingOptBcast);
  if (optin && optout) return ctx.Error(protocol::err::kTrackingOptinOptout);
  if ((optin && c.tracking.optout) || (optout && c.tracking.optin)) {
    return ctx.Error(protocol::err::kTrackingOptSwitch);
  }
  if (bcast && !PrefixesOk(ctx, prefixes)) return;
  // As Redis's enableTracking: the mode flags and the redirect are set anew,
  // prefixes accumulate (none given: every key).
  ClientTracking& t = c.tracking;
  t.broken_redirect = false;
  t.redirect = static_cast<uint64_t>(redirect);
  t.bcast = bcast;
  t.optin = optin;
  t.optout = optout;
  t.noloop = noloop;
  if (bcast && prefixes.empty()) prefixes.emplace_back();
  tracking.Enable(c, bcast ? prefixes : std::vector<std::string>{});
  ctx.reply.Ok();
}

// CLIENT CACHING YES|NO: whether the next command's reads are tracked.
void ClientCachingCmd(CommandContext& ctx) {
  ClientTracking& t = ctx.client.tracking;
  if (!t.on) {
    return ctx.Error(protocol::err::kCachingNeedsOptMode);
  }
  const std::string_view opt = ctx.arg(2);
  if (EqualsIgnoreCase(opt, "YES")) {
    if (!t.optin) return ctx.Error(protocol::err::kCachingYesNeedsOptin);
  } else if (EqualsIgnoreCase(opt, "NO")) {
    if (!t.optout) return ctx.Error(protocol::err::kCachingNoNeedsOptout);
  } else {
    return ctx.SyntaxError();
  }
  t.caching = true;
  ctx.reply.Ok();
}

void ClientGetRedirCmd(CommandContext& ctx) {
  const ClientTracking& t = ctx.client.tracking;
  ctx.reply.Integer(t.on ? static_cast<int64_t>(t.redirect) : -1);
}

void ClientTrackingInfoCmd(CommandContext& ctx) {
  const ClientTracking& t = ctx.client.tracking;
  std::vector<std::string_view> flags;
  if (!t.on) {
    flags.push_back("off");
  } else {
    flags.push_back("on");
    if (t.bcast) flags.push_back("bcast");
    if (t.optin) {
      flags.push_back("optin");
      if (t.caching) flags.push_back("caching-yes");
    }
    if (t.optout) {
      flags.push_back("optout");
      if (t.caching) flags.push_back("caching-no");
    }
    if (t.noloop) flags.push_back("noloop");
    if (t.broken_redirect) flags.push_back("broken_redirect");
  }
  protocol::ReplyWriter& r = ctx.reply;
  r.MapHeader(3);
  r.Bulk("flags");
  r.SetHeader(flags.size());
  for (std::string_view f : flags) r.Bulk(f);
  r.Bulk("redirect");
  r.Integer(t.on ? static_cast<int64_t>(t.redirect) : -1);
  r.Bulk("prefixes");
  r.ArrayHeader(t.prefixes.size());
  for (const std::string& p : t.prefixes) r.Bulk(p);
}

}  // namespace feedkv::server
