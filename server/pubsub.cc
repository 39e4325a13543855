// Pub/Sub subscriptions and delivery. See pubsub.h.
#include "server/pubsub.h"

#include <algorithm>

#include "protocol/reply_writer.h"
#include "server/client.h"
#include "server/glob.h"

namespace feedkv::server {

std::set<std::string, std::less<>>& PubSub::ClientSet(Client* c, Kind kind) {
  return kind == kChannel ? c->channels : kind == kPattern ? c->patterns : c->shard_channels;
}

PubSub::Subscribers_* PubSub::Find(Kind kind, std::string_view name) {
  if (kind == kPattern) {
    auto it = patterns_.find(name);
    return it == patterns_.end() ? nullptr : &it->second;
  }
  auto& map = kind == kChannel ? channels_ : shard_channels_;
  auto it = map.find(std::string(name));
  return it == map.end() ? nullptr : &it->second;
}

bool PubSub::Subscribe(Client* c, Kind kind, std::string_view name) {
  if (!ClientSet(c, kind).emplace(name).second) return false;
  if (kind == kPattern) {
    patterns_[std::string(name)].push_back(c);
  } else {
    (kind == kChannel ? channels_ : shard_channels_)[std::string(name)].push_back(c);
  }
  return true;
}

bool PubSub::Unsubscribe(Client* c, Kind kind, std::string_view name) {
  auto& mine = ClientSet(c, kind);
  auto it = mine.find(name);
  if (it == mine.end()) return false;
  mine.erase(it);
  Subscribers_* subs = Find(kind, name);
  if (subs != nullptr) {
    std::erase(*subs, c);
    if (subs->empty()) {
      if (kind == kPattern) {
        patterns_.erase(patterns_.find(name));
      } else {
        (kind == kChannel ? channels_ : shard_channels_).erase(std::string(name));
      }
    }
  }
  return true;
}

void PubSub::UnsubscribeAll(Client* c) {
  for (Kind kind : {kChannel, kPattern, kShard}) {
    const std::vector<std::string> names(ClientSet(c, kind).begin(), ClientSet(c, kind).end());
    for (const std::string& n : names) Unsubscribe(c, kind, n);
  }
}

size_t PubSub::Publish(std::string_view channel, std::string_view message, bool shard,
                       std::vector<Client*>* receivers) {
  size_t deliveries = 0;
  if (Subscribers_* subs = Find(shard ? kShard : kChannel, channel)) {
    for (Client* c : *subs) {
      protocol::ReplyWriter w(&c->out, c->resp);
      w.PushHeader(3);
      w.Bulk(shard ? "smessage" : "message");
      w.Bulk(channel);
      w.Bulk(message);
      receivers->push_back(c);
      deliveries++;
    }
  }
  if (shard) return deliveries;
  // Every pattern is tried against the channel, as Redis: O(patterns).
  for (const auto& [pattern, subs] : patterns_) {
    if (!GlobMatch(pattern, channel, false)) continue;
    for (Client* c : subs) {
      protocol::ReplyWriter w(&c->out, c->resp);
      w.PushHeader(4);
      w.Bulk("pmessage");
      w.Bulk(pattern);
      w.Bulk(channel);
      w.Bulk(message);
      receivers->push_back(c);
      deliveries++;
    }
  }
  return deliveries;
}

std::vector<std::string> PubSub::Names(Kind kind, const std::string* pattern) const {
  std::vector<std::string> out;
  const auto& map = kind == kShard ? shard_channels_ : channels_;
  for (const auto& [name, subs] : map) {
    if (pattern == nullptr || GlobMatch(*pattern, name, false)) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

size_t PubSub::Subscribers(Kind kind, std::string_view name) const {
  const auto& map = kind == kShard ? shard_channels_ : channels_;
  auto it = map.find(std::string(name));
  return it == map.end() ? 0 : it->second.size();
}

}  // namespace feedkv::server
