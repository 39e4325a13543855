// Pub/Sub commands: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, SSUBSCRIBE,
// SUNSUBSCRIBE, PUBLISH, SPUBLISH and PUBSUB CHANNELS/NUMSUB/NUMPAT/SHARDCHANNELS/
// SHARDNUMSUB, with Redis 7.0's replies: one confirmation per channel (an array in
// RESP2, a push in RESP3) carrying the client's subscription count. The
// subscriptions and delivery are server/pubsub.h; while a RESP2 client is
// subscribed, dispatch allows it only the commands Redis allows (PubSubAllowed).
// PUBLISH is not written to the AOF (Redis sends it to replicas only; feedkv's
// replicas follow the AOF, so a message reaches the master's subscribers only).
#include <string>
#include <vector>

#include "server/command_context.h"
#include "server/pubsub.h"
#include "server/replication/replication.h"
#include "server/server.h"

namespace feedkv::server {

namespace {

// Redis's clientSubscriptionsCount (channels and patterns) or, for shard
// channels, clientShardSubscriptionsCount.
int64_t CountFor(const Client& c, PubSub::Kind kind) {
  return static_cast<int64_t>(kind == PubSub::kShard ? c.shard_channels.size()
                                                     : c.channels.size() + c.patterns.size());
}

void Confirm(CommandContext& ctx, std::string_view what, const std::string_view* name, PubSub::Kind kind) {
  // A RESP3 confirmation is a push, and pushes reach a client even under
  // CLIENT REPLY OFF/SKIP (Redis's CLIENT_PUSHING).
  if (ctx.client.resp >= 3) ctx.client.reply_forced = true;
  ctx.reply.PushHeader(3);
  ctx.reply.Bulk(what);
  name != nullptr ? ctx.reply.Bulk(*name) : ctx.reply.Null();
  ctx.reply.Integer(CountFor(ctx.client, kind));
}

const char* SubscribeWord(PubSub::Kind k) {
  return k == PubSub::kChannel ? "subscribe" : k == PubSub::kPattern ? "psubscribe" : "ssubscribe";
}
const char* UnsubscribeWord(PubSub::Kind k) {
  return k == PubSub::kChannel ? "unsubscribe" : k == PubSub::kPattern ? "punsubscribe" : "sunsubscribe";
}

void SubscribeGeneric(CommandContext& ctx, PubSub::Kind kind) {
  for (size_t i = 1; i < ctx.argc(); i++) {
    const std::string_view name = ctx.arg(i);
    ctx.server.pubsub().Subscribe(&ctx.client, kind, name);
    Confirm(ctx, SubscribeWord(kind), &name, kind);
  }
}

void UnsubscribeGeneric(CommandContext& ctx, PubSub::Kind kind) {
  Client& c = ctx.client;
  std::vector<std::string> names;
  if (ctx.argc() > 1) {
    for (size_t i = 1; i < ctx.argc(); i++) names.emplace_back(ctx.arg(i));
  } else {
    const auto& mine = PubSub::ClientSet(&c, kind);
    names.assign(mine.begin(), mine.end());
    if (names.empty()) return Confirm(ctx, UnsubscribeWord(kind), nullptr, kind);
  }
  for (const std::string& n : names) {
    ctx.server.pubsub().Unsubscribe(&c, kind, n);
    const std::string_view name = n;
    Confirm(ctx, UnsubscribeWord(kind), &name, kind);
  }
}

void Subscribe(CommandContext& ctx) { SubscribeGeneric(ctx, PubSub::kChannel); }
void PSubscribe(CommandContext& ctx) { SubscribeGeneric(ctx, PubSub::kPattern); }
void SSubscribe(CommandContext& ctx) { SubscribeGeneric(ctx, PubSub::kShard); }
void Unsubscribe(CommandContext& ctx) { UnsubscribeGeneric(ctx, PubSub::kChannel); }
void PUnsubscribe(CommandContext& ctx) { UnsubscribeGeneric(ctx, PubSub::kPattern); }
void SUnsubscribe(CommandContext& ctx) { UnsubscribeGeneric(ctx, PubSub::kShard); }

void PublishGeneric(CommandContext& ctx, bool shard) {
  ctx.reply.Integer(static_cast<int64_t>(ctx.server.Publish(ctx.arg(1), ctx.arg(2), shard)));
  // As Redis: a master's replicas deliver the message to their own
  // subscribers. It travels in the log (feedkv replicas follow it), and AOF
  // loading skips it (LogApplier), so only replicas ever see it run again.
  const Replication* repl = ctx.server.replication();
  if (!ctx.from_log && repl != nullptr && repl->ReplicatesMessages()) {
    ctx.PropagateAs({shard ? "SPUBLISH" : "PUBLISH", std::string(ctx.arg(1)), std::string(ctx.arg(2))});
  }
}
void Publish(CommandContext& ctx) { PublishGeneric(ctx, false); }
void SPublish(CommandContext& ctx) { PublishGeneric(ctx, true); }

void NamesReply(CommandContext& ctx, PubSub::Kind kind) {
  std::string pattern;
  if (ctx.argc() > 2) pattern = std::string(ctx.arg(2));
  const auto names = ctx.server.pubsub().Names(kind, ctx.argc() > 2 ? &pattern : nullptr);
  ctx.reply.ArrayHeader(names.size());
  for (const auto& n : names) ctx.reply.Bulk(n);
}

void NumSubReply(CommandContext& ctx, PubSub::Kind kind) {
  ctx.reply.MapHeader(ctx.argc() - 2);
  for (size_t i = 2; i < ctx.argc(); i++) {
    ctx.reply.Bulk(ctx.arg(i));
    ctx.reply.Integer(static_cast<int64_t>(ctx.server.pubsub().Subscribers(kind, ctx.arg(i))));
  }
}

void PubsubChannels(CommandContext& ctx) { NamesReply(ctx, PubSub::kChannel); }
void PubsubShardChannels(CommandContext& ctx) { NamesReply(ctx, PubSub::kShard); }
void PubsubNumSub(CommandContext& ctx) { NumSubReply(ctx, PubSub::kChannel); }
void PubsubShardNumSub(CommandContext& ctx) { NumSubReply(ctx, PubSub::kShard); }
void PubsubNumPat(CommandContext& ctx) {
  ctx.reply.Integer(static_cast<int64_t>(ctx.server.pubsub().NumPatterns()));
}

void PubsubHelp(CommandContext& ctx) {
  ctx.ReplyHelp({"CHANNELS [<pattern>]",
                 "    Return the currently active channels matching a <pattern> (default: '*').",
                 "NUMPAT",
                 "    Return number of subscriptions to patterns.",
                 "NUMSUB [<channel> ...]",
                 "    Return the number of subscribers for the specified channels, excluding",
                 "    pattern subscriptions(default: no channels).",
                 "SHARDCHANNELS [<pattern>]",
                 "    Return the currently active shard level channels matching a <pattern> (default: '*').",
                 "SHARDNUMSUB [<shardchannel> ...]",
                 "    Return the number of subscribers for the specified shard level channel(s)"});
}

// The container: the table routes every PUBSUB subcommand here.
void Pubsub(CommandContext& ctx) {
  const std::string sub = LowerAscii(ctx.arg(1));
  if (sub == "channels") return PubsubChannels(ctx);
  if (sub == "numsub") return PubsubNumSub(ctx);
  if (sub == "numpat") return PubsubNumPat(ctx);
  if (sub == "shardchannels") return PubsubShardChannels(ctx);
  if (sub == "shardnumsub") return PubsubShardNumSub(ctx);
  if (sub == "help") return PubsubHelp(ctx);
  ctx.SubcommandError();
}

constexpr uint32_t kSub = kPubSub | kNoScript | kLoading | kStale | kSubscribedContext;
constexpr uint32_t kInfo = kPubSub | kLoading | kStale;

const SubcommandSpec kPubsubSubs[] = {
    {"channels", -2, kInfo, "List active channels"},
    {"numsub", -2, kInfo, "Get the count of subscribers for channels"},
    {"numpat", 2, kInfo, "Get the count of unique patterns pattern subscriptions"},
    {"shardchannels", -2, kInfo, "List active shard channels"},
    {"shardnumsub", -2, kInfo, "Get the count of subscribers for shard channels"},
    {"help", 2, kLoading | kStale, "Show helpful text about the different subcommands"},
};

const CommandSpec kCommands[] = {
    {"subscribe", -2, kSub | kChannelArgs, 0, 0, 0, Subscribe, "Listen for messages published to the given channels", "pubsub"},
    {"unsubscribe", -1, kSub, 0, 0, 0, Unsubscribe, "Stop listening for messages posted to the given channels", "pubsub"},
    {"psubscribe", -2, kSub | kChannelPatternArgs, 0, 0, 0, PSubscribe, "Listen for messages published to channels matching the given patterns", "pubsub"},
    {"punsubscribe", -1, kSub, 0, 0, 0, PUnsubscribe, "Stop listening for messages posted to channels matching the given patterns", "pubsub"},
    {"ssubscribe", -2, kSub | kChannelArgs, 1, -1, 1, SSubscribe, "Listen for messages published to the given shard channels", "pubsub", {}, {kKeyNotKey}},
    {"sunsubscribe", -1, kSub, 1, -1, 1, SUnsubscribe, "Stop listening for messages posted to the given shard channels", "pubsub", {}, {kKeyNotKey}},
    {"publish", 3, kChannelFirstArg | kPubSub | kLoading | kStale | kFast | kMayReplicate, 0, 0, 0, Publish, "Post a message to a channel", "pubsub"},
    {"spublish", 3, kChannelFirstArg | kPubSub | kLoading | kStale | kFast | kMayReplicate, 1, 1, 1, SPublish, "Post a message to a shard channel", "pubsub", {}, {kKeyNotKey}},
    {"pubsub", -2, kInfo, 0, 0, 0, Pubsub, "A container for Pub/Sub commands", "pubsub", kPubsubSubs},
};

}  // namespace

std::span<const CommandSpec> PubSubCommands() { return kCommands; }

}  // namespace feedkv::server
