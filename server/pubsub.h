// PubSub: who is subscribed to what, and the delivery of published messages
// (Redis 7.0's pubsub.c). Three kinds of subscription: channels (SUBSCRIBE),
// patterns (PSUBSCRIBE, matched with GlobMatch against each published channel)
// and shard channels (SSUBSCRIBE / SPUBLISH, a separate namespace).
//
// The server-wide maps go from a name to its subscribers in subscription order;
// each Client keeps its own sets (client.h) for UNSUBSCRIBE with no argument, the
// counts in the replies and cleanup when it goes. A message is written to each
// subscriber's reply buffer as a RESP2 array or a RESP3 push, and the caller
// flushes those clients. Not thread-safe: owned by the command thread.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace feedkv::server {

struct Client;

class PubSub {
 public:
  enum Kind { kChannel = 0, kPattern = 1, kShard = 2 };

  // The client's own subscriptions of one kind (client.h).
  static std::set<std::string, std::less<>>& ClientSet(Client* c, Kind kind);

  // True when the client was not subscribed to `name` yet.
  bool Subscribe(Client* c, Kind kind, std::string_view name);
  // True when it was.
  bool Unsubscribe(Client* c, Kind kind, std::string_view name);
  // Drops every subscription of a client (it closed, or sent RESET).
  void UnsubscribeAll(Client* c);

  // Writes the message to every client subscribed to `channel` (and, unless shard,
  // to every client with a matching pattern) and appends each client written to
  // *receivers, once per delivery. Returns the number of deliveries (PUBLISH's reply).
  size_t Publish(std::string_view channel, std::string_view message, bool shard,
                 std::vector<Client*>* receivers);

  // PUBSUB CHANNELS / SHARDCHANNELS: names with subscribers, matching `pattern`
  // when given, sorted.
  std::vector<std::string> Names(Kind kind, const std::string* pattern) const;
  // PUBSUB NUMSUB / SHARDNUMSUB.
  size_t Subscribers(Kind kind, std::string_view name) const;
  // PUBSUB NUMPAT: patterns with at least one subscriber.
  size_t NumPatterns() const { return patterns_.size(); }
  // INFO pubsub_channels: channels with at least one subscriber.
  size_t NumChannels() const { return channels_.size(); }

 private:
  using Subscribers_ = std::vector<Client*>;
  std::unordered_map<std::string, Subscribers_> channels_;
  std::unordered_map<std::string, Subscribers_> shard_channels_;
  std::map<std::string, Subscribers_, std::less<>> patterns_;

  Subscribers_* Find(Kind kind, std::string_view name);
};

}  // namespace feedkv::server
