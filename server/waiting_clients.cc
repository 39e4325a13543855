#include "server/waiting_clients.h"

#include <boost/asio/post.hpp>

#include <algorithm>
#include <chrono>

#include "protocol/error_text.h"
#include "protocol/reply_writer.h"
#include "server/server.h"

namespace feedkv::server {

WaitingClients::WaitingClients(Server& server) : server_(server), timer_(server.io()) {}

WaitingClients::~WaitingClients() { *alive_ = false; }

void WaitingClients::Park(Client& client, WaitCondition cond, int64_t timeout_ms, DoneFn done) {
  const uint64_t id = client.id;
  Forget(id);  // a client parks one command at a time
  // A command that runs again after its wait ended and parks again keeps its place.
  const uint64_t seq = client.retry_seq != 0 ? client.retry_seq : next_seq_++;
  Parked p{std::move(cond), timeout_ms > 0 ? NowMs() + timeout_ms : 0, std::move(done), seq, &client};
  client.blocked = true;
  switch (p.cond.what) {
    case WaitFor::kLogWritten:
    case WaitFor::kLogDurable:
    case WaitFor::kReplicaAcks:
      by_offset_.emplace(p.cond.offset, id);
      break;
    case WaitFor::kAsyncDone:
      by_token_.emplace(p.cond.token, id);
      break;
    case WaitFor::kKeyReady:
      for (const std::string& key : p.cond.keys) {
        std::vector<uint64_t>& waiters = by_key_[{p.cond.db, key}];
        // A key named twice (BZPOPMIN k k 0) indexes its waiter once.
        if (std::find(waiters.begin(), waiters.end(), id) != waiters.end()) continue;
        // In arrival order (a waiter parking again goes back to its place).
        auto at = std::upper_bound(waiters.begin(), waiters.end(), seq, [this](uint64_t s, uint64_t other) {
          return s < parked_.at(other).seq;
        });
        waiters.insert(at, id);
      }
      break;
  }
  if (p.deadline_ms > 0) by_deadline_.emplace(p.deadline_ms, id);
  const bool ready = Holds(p.cond);
  parked_.emplace(id, std::move(p));
  if (ready) EndLater({id});
  ArmTimer();
}

bool WaitingClients::Holds(const WaitCondition& c) const {
  switch (c.what) {
    case WaitFor::kLogWritten: return written_ >= c.offset;
    case WaitFor::kLogDurable: return durable_ >= c.offset;
    case WaitFor::kReplicaAcks:
      // WAITAOF 1 N ends on whichever comes last: the local fsync or the acks.
      if (c.local_durable && durable_ < c.offset) return false;
      return c.replicas <= 0 || (ack_counter_ && ack_counter_(c.offset, c.fsynced) >= c.replicas);
    case WaitFor::kAsyncDone:
    case WaitFor::kKeyReady: return false;
  }
  return false;
}

void WaitingClients::Unindex(uint64_t id, const Parked& p) {
  auto drop = [id](std::multimap<uint64_t, uint64_t>& m, uint64_t k) {
    auto [b, e] = m.equal_range(k);
    for (auto it = b; it != e; ++it) {
      if (it->second == id) {
        m.erase(it);
        return;
      }
    }
  };
  switch (p.cond.what) {
    case WaitFor::kLogWritten:
    case WaitFor::kLogDurable:
    case WaitFor::kReplicaAcks:
      drop(by_offset_, p.cond.offset);
      break;
    case WaitFor::kAsyncDone:
      drop(by_token_, p.cond.token);
      break;
    case WaitFor::kKeyReady:
      for (const std::string& key : p.cond.keys) {
        auto it = by_key_.find({p.cond.db, key});
        if (it != by_key_.end()) {
          std::erase(it->second, id);
          if (it->second.empty()) by_key_.erase(it);
        }
      }
      break;
  }
  if (p.deadline_ms > 0) by_deadline_.erase({p.deadline_ms, id});
}

void WaitingClients::End(uint64_t id, WaitEnd end) {
  auto it = parked_.find(id);
  if (it == parked_.end()) return;
  Parked p = std::move(it->second);
  Unindex(id, p);
  parked_.erase(it);
  Client& client = *p.client;
  client.blocked = false;
  if (end == WaitEnd::kUnblockError) {
    protocol::ReplyWriter(&client.out, client.resp).Error(protocol::err::kUnblocked);
    server_.CountError(protocol::err::kUnblocked);
    // The parked command failed, as Redis counts it (cmdstat failed_calls).
    if (client.last_command != nullptr) server_.command_stats(*client.last_command).failed_calls++;
  } else {
    client.retry_seq = p.seq;
    p.done(client, end);
    client.retry_seq = 0;
  }
  // `done` may have parked the client again (a waiter that lost its race).
  if (!client.blocked) server_.ResumeClient(id, /*command_ended=*/true);
}

void WaitingClients::EndLater(std::vector<uint64_t> ids, bool until_one_parks_again) {
  // Never inside the caller: a condition reported from a command (a push that
  // readies a key) is served after that command, as Redis serves ready keys
  // after the command that readied them.
  boost::asio::post(server_.io(), [this, alive = alive_, ids = std::move(ids), until_one_parks_again] {
    if (!*alive) return;
    for (uint64_t id : ids) {
      auto it = parked_.find(id);
      if (it != parked_.end() && (it->second.cond.what == WaitFor::kKeyReady ||
                                  it->second.cond.what == WaitFor::kAsyncDone ||
                                  Holds(it->second.cond))) {
        End(id, WaitEnd::kReady);
        // A waiter that found the key empty again parked again: the key has
        // nothing left for the ones behind it, which stay parked where they are.
        if (until_one_parks_again && IsParked(id)) break;
      }
    }
  });
}

void WaitingClients::HoldReplies(Client& client, WaitFor what, uint64_t offset) {
  const uint64_t reached = what == WaitFor::kLogDurable ? durable_ : written_;
  if (offset <= reached) return;
  auto it = holds_.find(client.id);
  if (it != holds_.end()) {
    if (it->second.offset >= offset && it->second.what == what) return;
    auto [b, e] = holds_by_offset_.equal_range(it->second.offset);
    for (auto h = b; h != e; ++h) {
      if (h->second == client.id) {
        holds_by_offset_.erase(h);
        break;
      }
    }
    offset = std::max(offset, it->second.offset);
    // Durable implies written: the stricter kind wins.
    if (it->second.what == WaitFor::kLogDurable) what = WaitFor::kLogDurable;
  }
  holds_[client.id] = Hold{what, offset};
  holds_by_offset_.emplace(offset, client.id);
}

bool WaitingClients::RepliesHeld(const Client& client) const {
  return !holds_.empty() && holds_.count(client.id) != 0;
}

void WaitingClients::LogProgress(WaitFor what, uint64_t offset) {
  if (what == WaitFor::kLogDurable) {
    durable_ = std::max(durable_, offset);
    written_ = std::max(written_, offset);  // fsynced implies written
    if (on_durable_) on_durable_(durable_);
  } else {
    written_ = std::max(written_, offset);
  }
  ReleaseHolds(what, offset);
  std::vector<uint64_t> ready;
  for (auto it = by_offset_.begin(); it != by_offset_.end() && it->first <= offset; ++it) {
    auto p = parked_.find(it->second);
    if (p != parked_.end() && Holds(p->second.cond)) ready.push_back(it->second);
  }
  if (!ready.empty()) EndLater(std::move(ready));
}

void WaitingClients::ReleaseHolds(WaitFor what, uint64_t offset) {
  std::vector<uint64_t> released;
  for (auto it = holds_by_offset_.begin(); it != holds_by_offset_.end() && it->first <= offset;) {
    auto h = holds_.find(it->second);
    // A durable report releases both kinds; a written report only kLogWritten.
    if (h != holds_.end() && (what == WaitFor::kLogDurable || h->second.what == WaitFor::kLogWritten)) {
      released.push_back(it->second);
      holds_.erase(h);
      it = holds_by_offset_.erase(it);
    } else {
      ++it;
    }
  }
  // Flushing may close a connection: resume by id, after the indexes are settled.
  for (uint64_t id : released) server_.ResumeClient(id, /*command_ended=*/false);
}

void WaitingClients::ReleaseLogHolds() {
  std::vector<uint64_t> released;
  for (const auto& [id, h] : holds_) released.push_back(id);
  holds_.clear();
  holds_by_offset_.clear();
  for (uint64_t id : released) server_.ResumeClient(id, /*command_ended=*/false);
}

void WaitingClients::ReplicaAcks() {
  std::vector<uint64_t> ready;
  for (const auto& [off, id] : by_offset_) {
    auto p = parked_.find(id);
    if (p != parked_.end() && p->second.cond.what == WaitFor::kReplicaAcks && Holds(p->second.cond)) {
      ready.push_back(id);
    }
  }
  if (!ready.empty()) EndLater(std::move(ready));
}

void WaitingClients::AsyncDone(uint64_t token) {
  std::vector<uint64_t> ready;
  auto [b, e] = by_token_.equal_range(token);
  for (auto it = b; it != e; ++it) ready.push_back(it->second);
  if (!ready.empty()) EndLater(std::move(ready));
}

void WaitingClients::KeyReady(int db, const std::string& key) {
  auto it = by_key_.find({db, key});
  if (it == by_key_.end()) return;
  // In arrival order: the first waiter is served first, and only as many are
  // woken as find something (each served pop readies the key again), so a push
  // to a key with a thousand waiters wakes one or two, not a thousand.
  EndLater(it->second, /*until_one_parks_again=*/true);
}

std::vector<std::string> WaitingClients::WaitedKeys(int db) const {
  std::vector<std::string> keys;
  for (auto it = by_key_.lower_bound({db, std::string()}); it != by_key_.end() && it->first.first == db; ++it) {
    keys.push_back(it->first.second);
  }
  return keys;
}

bool WaitingClients::Unblock(uint64_t client_id, WaitEnd how) {
  auto it = parked_.find(client_id);
  // Only what Redis calls blocked: a wait on keys or replicas. A paused client or
  // one waiting for a cold read is not (its command has not run yet).
  if (it == parked_.end() || (it->second.cond.what != WaitFor::kKeyReady &&
                              it->second.cond.what != WaitFor::kReplicaAcks)) {
    return false;
  }
  End(client_id, how);
  return true;
}

void WaitingClients::Forget(uint64_t client_id) {
  auto it = parked_.find(client_id);
  if (it != parked_.end()) {
    it->second.client->blocked = false;
    Unindex(client_id, it->second);
    parked_.erase(it);
  }
  auto h = holds_.find(client_id);
  if (h != holds_.end()) {
    auto [b, e] = holds_by_offset_.equal_range(h->second.offset);
    for (auto x = b; x != e; ++x) {
      if (x->second == client_id) {
        holds_by_offset_.erase(x);
        break;
      }
    }
    holds_.erase(h);
  }
}

void WaitingClients::ArmTimer() {
  if (by_deadline_.empty()) return;
  const int64_t first = by_deadline_.begin()->first;
  if (timer_at_ms_ != 0 && timer_at_ms_ <= first) return;
  timer_at_ms_ = first;
  timer_.expires_after(std::chrono::milliseconds(std::max<int64_t>(first - NowMs(), 0)));
  timer_.async_wait([this, alive = alive_](const boost::system::error_code& ec) {
    if (ec || !*alive) return;  // cancelled by a re-arm for an earlier deadline
    timer_at_ms_ = 0;
    OnTimer();
  });
}

void WaitingClients::OnTimer() {
  const int64_t now = NowMs();
  std::vector<uint64_t> expired;
  for (auto it = by_deadline_.begin(); it != by_deadline_.end() && it->first <= now; ++it) {
    expired.push_back(it->second);
  }
  for (uint64_t id : expired) End(id, WaitEnd::kTimeout);
  ArmTimer();
}

}  // namespace feedkv::server
