#include "server/tracking.h"

#include <algorithm>

#include <boost/asio/post.hpp>

#include "protocol/reply_writer.h"
#include "server/client.h"
#include "server/server.h"

namespace feedkv::server {

namespace {

constexpr std::string_view kInvalidateChannel = "__redis__:invalidate";

}  // namespace

std::optional<std::string> Tracking::Overlap(std::string_view p, std::span<const std::string> existing) {
  for (const std::string& e : existing) {
    if (std::string_view(e).starts_with(p) || p.starts_with(e)) return e;
  }
  return std::nullopt;
}

void Tracking::Enable(Client& c, std::span<const std::string> new_prefixes) {
  if (!c.tracking.on) {
    c.tracking.on = true;
    clients_++;
  }
  std::vector<std::string>& mine = c.tracking.prefixes;
  for (const std::string& p : new_prefixes) {
    auto at = std::lower_bound(mine.begin(), mine.end(), p);
    if (at != mine.end() && *at == p) continue;
    mine.insert(at, p);
    prefixes_[p].clients.insert(c.id);
  }
}

void Tracking::Disable(Client& c) {
  if (!c.tracking.on) return;
  for (const std::string& p : c.tracking.prefixes) {
    auto it = prefixes_.find(p);
    if (it == prefixes_.end()) continue;
    it->second.clients.erase(c.id);
    if (it->second.clients.empty()) prefixes_.erase(it);
  }
  // Its ids stay in the table until each key changes (or is dropped), as Redis:
  // a message to a client no longer tracking is skipped then.
  c.tracking = ClientTracking{};
  clients_--;
}

bool Tracking::Remembers(const Client& c) {
  const ClientTracking& t = c.tracking;
  if (!t.on || t.bcast) return false;
  if (t.optin) return t.caching;
  if (t.optout) return !t.caching;
  return true;
}

void Tracking::RememberKey(const Client& c, std::string_view key) {
  auto [it, added] = table_.try_emplace(std::string(key));
  if (it->second.insert(c.id).second) items_++;
}

void Tracking::InvalidateKey(std::string_view key, uint64_t by) {
  for (auto& [prefix, p] : prefixes_) {
    if (!key.starts_with(prefix)) continue;
    // One message per key per turn, named with the client that changed it last.
    if (p.pending_keys.emplace(key).second) {
      p.pending.emplace_back(std::string(key), by);
    } else {
      for (auto& [k, who] : p.pending) {
        if (k == key) who = by;
      }
    }
    ScheduleBroadcast();
  }
  InvalidateTracked(key, by);
}

void Tracking::InvalidateTracked(std::string_view key, uint64_t by) {
  if (table_.empty()) return;
  auto it = table_.find(key);
  if (it == table_.end()) return;
  std::unordered_set<uint64_t> ids = std::move(it->second);
  table_.erase(it);
  items_ -= ids.size();
  const std::string_view one[] = {key};
  for (uint64_t id : ids) {
    Client* target = server_.FindClient(id);
    if (target == nullptr || !target->tracking.on || target->tracking.bcast) continue;
    if (target->tracking.noloop && id == by) continue;
    if (id == executing_) {
      deferred_.emplace_back(std::string(key));
      continue;
    }
    Send(id, one, false);
  }
}

void Tracking::InvalidateAll() {
  if (clients_ > 0) {
    for (Client* c : server_.TrackingClients()) {
      if (c->id == executing_) {
        deferred_.emplace_back(std::nullopt);
      } else {
        Send(c->id, {}, true);
      }
    }
  }
  table_.clear();
  items_ = 0;
}

void Tracking::FlushDeferred() {
  const uint64_t id = executing_;
  executing_ = 0;
  if (deferred_.empty()) return;
  std::vector<std::optional<std::string>> pending;
  pending.swap(deferred_);
  for (const auto& k : pending) {
    if (k.has_value()) {
      const std::string_view one[] = {*k};
      Send(id, one, false);
    } else {
      Send(id, {}, true);
    }
  }
}

void Tracking::Send(uint64_t id, std::span<const std::string_view> keys, bool null) {
  Client* c = server_.FindClient(id);
  if (c == nullptr || !c->tracking.on) return;
  Client* target = c;
  bool redirected = false;
  if (c->tracking.redirect != 0) {
    target = server_.FindClient(c->tracking.redirect);
    if (target == nullptr) {
      // Redis tells the tracking client, in RESP3, every time a message is lost.
      c->tracking.broken_redirect = true;
      if (c->resp > 2) {
        protocol::ReplyWriter w(&c->out, 3);
        w.PushHeader(2);
        w.Bulk("tracking-redir-broken");
        w.Integer(static_cast<int64_t>(c->tracking.redirect));
        server_.SchedulePush(c);
      }
      return;
    }
    redirected = true;
  }
  protocol::ReplyWriter w(&target->out, target->resp);
  if (target->resp > 2) {
    w.PushHeader(2);
    w.Bulk("invalidate");
  } else if (redirected && target->subscribed()) {
    w.PushHeader(3);
    w.Bulk("message");
    w.Bulk(kInvalidateChannel);
  } else {
    return;  // RESP2 without a redirect: nowhere to say it, as Redis
  }
  if (null) {
    // The null of the tracking client's protocol, as Redis 7.0.
    target->out.append(c->resp > 2 ? "_\r\n" : "$-1\r\n");
  } else {
    w.BulkArray(keys.data(), keys.size());
  }
  server_.SchedulePush(target);
}

void Tracking::ScheduleBroadcast() {
  if (broadcast_posted_) return;
  broadcast_posted_ = true;
  boost::asio::post(server_.io(), [this] { Broadcast(); });
}

void Tracking::Broadcast() {
  broadcast_posted_ = false;
  std::vector<std::string_view> keys;
  for (auto& [prefix, p] : prefixes_) {
    if (p.pending.empty()) continue;
    for (uint64_t id : p.clients) {
      Client* c = server_.FindClient(id);
      if (c == nullptr) continue;
      keys.clear();
      for (const auto& [k, by] : p.pending) {
        if (!(c->tracking.noloop && by == id)) keys.push_back(k);
      }
      if (!keys.empty()) Send(id, keys, false);
    }
    p.pending.clear();
    p.pending_keys.clear();
  }
}

void Tracking::Cron() {
  const auto max = static_cast<size_t>(server_.cfg().tracking_table_max_keys);
  if (max == 0 || table_.size() <= max) return;
  // A bounded step per tick, as Redis's trackingLimitUsedSlots.
  for (size_t n = 0; n < 1000 && table_.size() > max; n++) {
    const std::string key = table_.begin()->first;
    InvalidateTracked(key, 0);
  }
}

}  // namespace feedkv::server
