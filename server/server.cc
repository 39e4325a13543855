#include "server/server.h"
#include "server/script_engine.h"

#include "server/cold_tier.h"
#include "server/allocator.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <ctime>
#include <fmt/format.h>

#include <boost/asio/post.hpp>

#include "server/migrate_connections.h"
#include "server/monotonic_clock.h"
#include "server/network.h"
#include "server/persistence.h"
#include "server/replication/replication.h"
#include "server/startup.h"

namespace feedkv::server {

int64_t NowMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

int64_t NowUs() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

Server::Server(boost::asio::io_context& io, Config config)
    : io_(io),
      config_(std::move(config)),
      dataset_(static_cast<int>(config_.values().databases)),
      waiting_(*this),
      cron_timer_(io),
      start_ms_(NowMs()),
      rng_(std::random_device{}()) {
  command_stats_.resize(table_.size());
  acl_ = std::make_unique<AclUsers>(table_);
  acl_->set_pubsub_default_all(config_.ValueOf("acl-pubsub-default") == "allchannels");
  acl_->SetDefaultPassword(cfg().requirepass);
  scripts_ = std::make_unique<ScriptEngine>(*this);
  dataset_.SetAccessClock(&access_clock_);
  dataset_.SetExpireHook([this](Database& db, std::string_view key) {
    stats_.expired_keys++;
    // An expiry is a change like any other: log it as a DEL so replay and
    // replicas never depend on clocks.
    EmitChange(db.index(), {"DEL", std::string(key)});
    TouchKey(db.index(), key, /*by_server=*/true);
    NotifyKeyspaceEvent(kNotifyExpired, "expired", key, db.index());
  });
  EnterDir();
  ApplyAccessPolicy();
  ApplyKeyspaceEvents();
  config_.set_on_change([this](const std::string& name) {
    if (name == "maxmemory-policy" || name == "lfu-log-factor" || name == "lfu-decay-time") {
      ApplyAccessPolicy();
    }
    if (name == "maxmemory" || name == "maxmemory-policy") evictor_.OnLimitChanged();
    if (name == "notify-keyspace-events") ApplyKeyspaceEvents();
    if (name == "dir") EnterDir();
    if (name == "requirepass") acl_->SetDefaultPassword(cfg().requirepass);
    if (name == "acl-pubsub-default") {
      acl_->set_pubsub_default_all(config_.ValueOf("acl-pubsub-default") == "allchannels");
    }
    for (const auto& hook : config_hooks_) hook(name);
  });
  static const char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 40; i++) run_id_.push_back(kHex[rng_() % 16]);
}

Server::~Server() {
  // Persistence first: its threads post to this server until they stop.
  persistence_.reset();
}

void Server::set_persistence(std::unique_ptr<Persistence> p) { persistence_ = std::move(p); }

void Server::set_replication(std::unique_ptr<Replication> r) { replication_ = std::move(r); }

void Server::set_cold_tier(std::unique_ptr<ColdTier> t) {
  cold_tier_ = std::move(t);
  AddCronHook([this](int64_t now_ms) { cold_tier_->Cron(now_ms); });
  AddInfoSection("cold", [this](std::string* out) { cold_tier_->InfoSection(out); });
}

void Server::set_replica_mode(bool on) {
  replica_mode_ = on;
  UpdateExpiredKeysStay();
}

void Server::LatencySample(std::string_view event, int64_t ms) {
  const int64_t threshold = cfg().latency_monitor_threshold;
  if (threshold > 0 && ms >= threshold) latency_monitor_.Sample(event, ms, threshold, NowMs() / 1000);
}

void Server::UpdateExpiredKeysStay() {
  // A replica keeps expired keys until its master's DEL arrives (reads see
  // them as missing), as Redis's replicas do; so does any node during CLIENT
  // PAUSE, whose dataset holds still (Redis's expireIfNeeded).
  const bool stay = replica_mode_ || (pause_end_ms_ != 0 && NowMs() < pause_end_ms_);
  if (stay == expired_keys_stay_) return;
  expired_keys_stay_ = stay;
  for (int i = 0; i < dataset_.num_dbs(); i++) dataset_.db(i).set_expired_keys_stay(stay);
}

void Server::Log(int level, std::string_view msg) {
  if (level < static_cast<int>(cfg().loglevel)) return;
  static const char kMarks[] = {'.', '-', '*', '#'};
  char ts[64];
  std::time_t t = std::time(nullptr);
  std::tm tm;
  localtime_r(&t, &tm);
  std::strftime(ts, sizeof(ts), "%d %b %Y %H:%M:%S", &tm);
  std::string line = fmt::format("{}:M {}.{:03d} {} {}\n", getpid(), ts, NowMs() % 1000,
                                 kMarks[level], msg);
  FILE* f = stdout;  // as Redis: an empty logfile means standard output
  FILE* opened = nullptr;
  if (!cfg().logfile.empty()) {
    opened = std::fopen(cfg().logfile.c_str(), "a");
    if (opened) f = opened;
  }
  std::fputs(line.c_str(), f);
  std::fflush(f);
  if (opened) std::fclose(opened);
}

MigrateConnections& Server::migrate_connections() {
  if (!migrate_connections_) migrate_connections_ = std::make_unique<MigrateConnections>(io_);
  return *migrate_connections_;
}

size_t Server::migrate_cached_sockets() const {
  return migrate_connections_ ? migrate_connections_->cached() : 0;
}

Status Server::RewriteConfig(bool force_all) {
  // Users go into the config file unless an aclfile keeps them (Redis's
  // rewriteConfigUserOption), the default user too.
  std::vector<std::string> users;
  if (config_.ValueOf("aclfile").empty()) {
    for (const auto& [name, user] : acl_->users()) users.push_back(acl_->DescribeUser(*user));
  }
  return config_.Rewrite(users, force_all);
}

void Server::EnterDir() {
  if (::chdir(cfg().dir.c_str()) != 0) {
    Log(3, fmt::format("Can't chdir to '{}': {}", cfg().dir, std::strerror(errno)));
  }
}

void Server::AdjustOpenFilesLimit() {
  // As Redis's adjustOpenFilesLimit: every client is a descriptor, and a few more
  // are the server's own (listeners, the AOF, snapshots, logs). Raise the limit to
  // fit maxclients, or lower maxclients to fit the limit, so that past maxclients a
  // client is refused with an error instead of accept() failing.
  constexpr int64_t kReservedFds = 32;
  const int64_t want = config_.values().maxclients + kReservedFds;
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) {
    Log(3, fmt::format("Unable to obtain the current NOFILE limit ({}), assuming 1024 and setting "
                       "the max clients configuration accordingly.", std::strerror(errno)));
    lim.rlim_cur = lim.rlim_max = 1024;
  } else if (static_cast<int64_t>(lim.rlim_cur) >= want) {
    return;
  } else {
    rlimit raised = lim;
    raised.rlim_cur = static_cast<rlim_t>(want);
    if (lim.rlim_max != RLIM_INFINITY && raised.rlim_cur > lim.rlim_max) raised.rlim_cur = lim.rlim_max;
    if (raised.rlim_cur > lim.rlim_cur && ::setrlimit(RLIMIT_NOFILE, &raised) == 0) lim = raised;
    if (static_cast<int64_t>(lim.rlim_cur) >= want) return;
  }
  const int64_t old = config_.values().maxclients;
  const int64_t fit = std::max<int64_t>(1, static_cast<int64_t>(lim.rlim_cur) - kReservedFds);
  config_.values().maxclients = fit;
  Log(3, fmt::format("You requested maxclients of {} requiring at least {} max file descriptors.",
                     old, want));
  Log(3, fmt::format("Current maximum open files is {}. maxclients has been reduced to {} to "
                     "compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'.",
                     static_cast<int64_t>(lim.rlim_cur), fit));
}

bool Server::Start() {
  AdjustOpenFilesLimit();
  std::string error;
  if (cfg().port > 0 || cfg().unixsocket.empty()) {
    if (!OpenTcpListeners(cfg().bind, cfg().port, &listeners_, &error)) {
      Log(3, error);
      Log(3, fmt::format("Failed listening on port {} (tcp), aborting.", cfg().port));
      return false;
    }
  }
  if (!cfg().unixsocket.empty()) {
    auto l = Listener::Unix(*this, cfg().unixsocket, static_cast<int>(cfg().unixsocketperm), &error);
    if (!l) {
      Log(3, error);
      return false;
    }
    listeners_.push_back(std::move(l));
  }
  LogStartBanner();
  Log(2, fmt::format("Ready to accept connections tcp on port {}", bound_port_));
  ScheduleCron();
  return true;
}

// Redis prints its logo (with "Port:" and "PID:" lines) when logging to a
// terminal or with always-show-logo yes, else one "Running mode=" line; tools
// that start a server, Redis's test harness among them, wait for " PID: <pid>".
void Server::LogStartBanner() {
  const int port = static_cast<int>(bound_port_);
  if (!cfg().always_show_logo && !(cfg().logfile.empty() && ::isatty(STDOUT_FILENO))) {
    Log(2, fmt::format("Running mode=standalone, port={}.", port));
    return;
  }
  Log(2, fmt::format("feedkv {} (Redis {} protocol) 64 bit", kFeedkvVersion, kRedisCompatVersion));
  Log(2, "Running in standalone mode");
  Log(2, fmt::format("Port: {}", port));
  Log(2, fmt::format("PID: {}", static_cast<long>(::getpid())));
}

bool Server::OpenTcpListeners(const std::string& binds, int64_t port,
                              std::vector<std::unique_ptr<Listener>>* out, std::string* error) {
  // Redis accepts several space-separated bind addresses.
  std::vector<std::unique_ptr<Listener>> opened;
  size_t pos = 0;
  while (pos < binds.size()) {
    size_t sp = binds.find(' ', pos);
    std::string addr = binds.substr(pos, sp == std::string::npos ? std::string::npos : sp - pos);
    pos = sp == std::string::npos ? binds.size() : sp + 1;
    if (addr.empty()) continue;
    if (addr[0] == '-') addr = addr.substr(1);
    auto l = Listener::Tcp(*this, addr, static_cast<int>(port), static_cast<int>(cfg().tcp_backlog), error);
    if (!l) {
      for (auto& o : opened) o->Close();
      DropListeners(&opened);
      return false;
    }
    opened.push_back(std::move(l));
  }
  if (!opened.empty()) bound_port_ = opened.back()->port();
  for (auto& l : opened) out->push_back(std::move(l));
  return true;
}

void Server::DropListeners(std::vector<std::unique_ptr<Listener>>* listeners) {
  // Destroyed on the event loop, after the aborted accepts' handlers ran.
  for (auto& l : *listeners) {
    boost::asio::post(io_, [dead = std::shared_ptr<Listener>(std::move(l))] {});
  }
  listeners->clear();
}

void Server::CloseTcpListeners() {
  std::vector<std::unique_ptr<Listener>> tcp;
  for (auto& l : listeners_) {
    if (l->tcp()) {
      l->Close();
      tcp.push_back(std::move(l));
    }
  }
  std::erase(listeners_, nullptr);
  DropListeners(&tcp);
}

Status Server::ApplyListenConfig(const ServerConfig& old, std::string* failed_arg) {
  const bool port_changed = old.port != cfg().port;
  if (!port_changed && old.bind == cfg().bind) return Status::OK();
  *failed_arg = port_changed ? "port" : "bind";
  const char* reason = port_changed ? "Unable to listen on this port. Check server logs." : "Failed to bind to specified addresses.";
  // The old sockets close first, so the same address and port can be
  // listened on again; on failure they are opened again.
  CloseTcpListeners();
  std::string error;
  if (cfg().port > 0 && !OpenTcpListeners(cfg().bind, cfg().port, &listeners_, &error)) {
    Log(3, error);
    std::string again;
    if (old.port > 0 && !OpenTcpListeners(old.bind, old.port, &listeners_, &again)) Log(3, again);
    return Status::InvalidArgument(reason);
  }
  if (cfg().port == 0) bound_port_ = 0;
  Log(2, fmt::format("Listening on {} port {}", cfg().bind, cfg().port));
  return Status::OK();
}

bool Server::Shutdown(const ShutdownOptions& options) {
  if (shutting_down_) return true;
  Log(3, "User requested shutdown...");
  for (auto& hook : shutdown_hooks_) {
    Status s = hook(options);
    if (s.ok()) continue;
    if (!options.force) {
      // As Redis: a server that cannot save its data does not exit.
      Log(3, "Error trying to save the DB, can't exit.");
      return false;
    }
    Log(3, "Error trying to save the DB. Exit anyway.");
  }
  shutting_down_ = true;
  for (auto& l : listeners_) l->Close();
  cron_timer_.cancel();
  // Close clients after the hooks, so a SHUTDOWN reply ordering is not needed.
  std::vector<std::shared_ptr<Connection>> conns;
  for (auto& [id, c] : connections_) conns.push_back(c);
  for (auto& c : conns) c->Close();
  Log(3, "feedkv is now ready to exit, bye bye...");
  io_.stop();
  return true;
}

void Server::ServeClientsWhileBusy() {
  for (auto& l : listeners_) l->AcceptWhileBusy();
  std::vector<std::shared_ptr<Connection>> conns;
  conns.reserve(connections_.size());
  for (auto& [id, c] : connections_) conns.push_back(c);
  for (auto& c : conns) {
    c->ServeWhileBusy();
    if (shutting_down_) return;
  }
}

void Server::AddConnection(std::shared_ptr<Connection> c) {
  const uint64_t id = c->client().id;
  connections_.emplace(id, std::move(c));
}

void Server::RemoveConnection(Connection* c) {
  auto it = connections_.find(c->client().id);
  if (it == connections_.end() || it->second.get() != c) return;
  // A parked command of a client that went away is dropped, unanswered.
  waiting_.Forget(c->client().id);
  pubsub_.UnsubscribeAll(&c->client());
  tracking_.Disable(c->client());
  if (replication_) replication_->OnClientClosed(c->client().id);
  // Destroyed from the event loop, never here: the caller may still use `c`.
  boost::asio::post(io_, [last = std::move(it->second)] {});
  connections_.erase(it);
}

void Server::PublishKeyspaceEvent(std::string_view event, std::string_view key, int db) {
  const int flags = cfg().notify_keyspace_events;
  if (flags & kNotifyKeyspace) {
    Publish(fmt::format("__keyspace@{}__:{}", db, key), event, false);
  }
  if (flags & kNotifyKeyevent) Publish(fmt::format("__keyevent@{}__:{}", db, event), key, false);
}

void Server::ApplyKeyspaceEvents() {
  if (cfg().notify_keyspace_events & kNotifyNew) {
    dataset_.SetNewKeyHook([this](Database& db, std::string_view key) {
      NotifyKeyspaceEvent(kNotifyNew, "new", key, db.index());
    });
  } else {
    dataset_.SetNewKeyHook(nullptr);
  }
}

size_t Server::Publish(std::string_view channel, std::string_view message, bool shard) {
  std::vector<Client*> receivers;
  const size_t n = pubsub_.Publish(channel, message, shard, &receivers);
  for (Client* r : receivers) SchedulePush(r);
  return n;
}

void Server::SchedulePush(Client* c) {
  if (c->push_pending) return;
  c->push_pending = true;
  push_pending_.push_back(c->id);
  if (!push_flush_posted_) {
    push_flush_posted_ = true;
    boost::asio::post(io_, [this] { FlushPushes(); });
  }
}

Client* Server::FindClient(uint64_t id) {
  auto it = connections_.find(id);
  return it == connections_.end() ? nullptr : &it->second->client();
}

std::vector<Client*> Server::TrackingClients() {
  std::vector<Client*> out;
  for (auto& [id, conn] : connections_) {
    if (conn->client().tracking.on) out.push_back(&conn->client());
  }
  return out;
}

void Server::FlushPushes() {
  push_flush_posted_ = false;
  std::vector<uint64_t> ids;
  ids.swap(push_pending_);
  for (uint64_t id : ids) {
    auto it = connections_.find(id);
    if (it == connections_.end()) continue;  // closed since
    std::shared_ptr<Connection> conn = it->second;  // Flush may close it
    conn->client().push_pending = false;
    conn->Flush();
  }
}

void Server::RemoveMonitor(Client* c) {
  std::erase(monitors_, c);
}

void Server::ResumeClient(uint64_t client_id, bool command_ended) {
  auto it = connections_.find(client_id);
  if (it == connections_.end()) return;  // gone, or not a connection (the log's client)
  std::shared_ptr<Connection> conn = it->second;  // Flush may close it
  if (command_ended) {
    conn->ResumeAfterWait();
    return;
  }
  conn->Flush();
  if (!conn->closed()) conn->ResumeReading();
}

void Server::Watch(Client& c, int db, std::string_view key) {
  for (const auto& w : c.watched) {
    if (w.db == db && w.key == key) return;
  }
  c.watched.push_back({db, std::string(key)});
  watched_[{db, std::string(key)}].push_back(&c);
}

void Server::UnwatchAll(Client& c) {
  for (const auto& w : c.watched) {
    auto it = watched_.find(std::make_pair(w.db, w.key));
    if (it == watched_.end()) continue;
    std::erase(it->second, &c);
    if (it->second.empty()) watched_.erase(it);
  }
  c.watched.clear();
  c.watch_dirty = false;
}

namespace {

WatchedKey* FindWatch(Client& c, int db, std::string_view key) {
  for (WatchedKey& w : c.watched) {
    if (w.db == db && w.key == key) return &w;
  }
  return nullptr;
}

bool KeyIsExpired(const Database& db, std::string_view key, int64_t now_ms) {
  const Entry* e = db.Find(key);
  return e != nullptr && e->has_expire && e->expire_ms() <= now_ms;
}

}  // namespace

void Server::TouchKey(int db, std::string_view key, bool by_server) {
  if (tracking_.active()) tracking_.InvalidateKey(key, by_server ? 0 : executing_client_);
  if (watched_.empty()) return;
  auto it = watched_.find(std::make_pair(db, std::string(key)));
  if (it == watched_.end()) return;
  for (Client* c : it->second) {
    WatchedKey* w = FindWatch(*c, db, key);
    if (w != nullptr && w->expired) {
      // Watched while already expired (Redis's touchWatchedKey): its deletion
      // is no change, and neither is anything else done to it.
      if (this->db(db).Find(key) == nullptr) w->expired = false;
      continue;
    }
    c->watch_dirty = true;
  }
}

void Server::SignalFlushed(int db) {
  for (int i = 0; i < num_dbs(); i++) {
    if (db >= 0 && i != db) continue;
    TouchWatchedInDb(i);
    // Clients blocked on a key the flush removes look again after it (a blocked
    // XREADGROUP answers that its key is gone, as Redis's signalFlushedDb).
    for (const std::string& key : waiting_.WaitedKeys(i)) {
      if (this->db(i).Find(key) != nullptr) waiting_.KeyReady(i, key);
    }
  }
  tracking_.InvalidateAll();
}

void Server::TouchWatchedInDb(int emptied, int replaced_with) {
  // Find, not Lookup: a key present but logically expired still changes
  // (the watcher saw it live: WATCH drops keys already expired). The rules
  // for stale keys are Redis's touchAllWatchedKeysInDb.
  const int64_t now = NowMs();
  for (auto it = watched_.lower_bound(std::make_pair(emptied, std::string()));
       it != watched_.end() && it->first.first == emptied; ++it) {
    const std::string& key = it->first.second;
    const bool in_emptied = db(emptied).Find(key) != nullptr;
    const bool in_replacement = replaced_with >= 0 && db(replaced_with).Find(key) != nullptr;
    if (!in_emptied && !in_replacement) continue;
    for (Client* c : it->second) {
      WatchedKey* w = FindWatch(*c, emptied, key);
      if (w != nullptr && w->expired) {
        if (!in_replacement) {  // the stale key goes: no logical change
          w->expired = false;
          continue;
        }
        if (KeyIsExpired(db(replaced_with), key, now)) continue;  // stale stays stale
      } else if (w != nullptr && !in_emptied && KeyIsExpired(db(replaced_with), key, now)) {
        w->expired = true;  // nothing replaced with a stale key: still nothing
        continue;
      }
      c->watch_dirty = true;
    }
  }
}

void Server::CountError(std::string_view msg) {
  stats_.total_error_replies++;
  std::string_view code = msg.substr(0, msg.find(' '));
  error_stats_[std::string(code)]++;
}

void Server::ResetStats() {
  stats_ = ServerStats{};
  for (CommandStats& st : command_stats_) st = CommandStats{};
  error_stats_.clear();
  evictor_.ResetStats();
  lazy_free_.ResetFreed();
}

size_t Server::CounterMemory() const { return dataset_.CounterMemory(); }

size_t Server::UsedMemory() const {
  // Counter tables are mapped directly, not malloc'd, so the allocator's
  // count misses them; add the pages they touched (the rest of a mapping is a
  // reservation that costs nothing).
  size_t used = AllocatedBytes();
  for (const auto& [name, space] : dataset_.counter_spaces()) used += space->TableBytes();
  return used;
}

size_t Server::DatasetMemory() const { return dataset_.MemoryUsage(); }

size_t Server::ClientMemory() const {
  // Per client: its reply buffer, its MULTI queue (Redis counts both) and ~1 KB
  // of fixed state.
  size_t total = 0;
  for (const auto& [id, c] : connections_) {
    total += c->client().out.capacity() + c->client().queued.bytes() + 1024;
  }
  return total;
}

void Server::ScheduleCron() {
  cron_timer_.expires_after(std::chrono::milliseconds(1000 / std::max<int64_t>(1, cfg().hz)));
  cron_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || shutting_down_) return;
    Cron();
    ScheduleCron();
  });
}

void Server::ApplyAccessPolicy() {
  access_clock_.set_lfu(cfg().maxmemory_policy.find("lfu") != std::string::npos);
  access_clock_.set_lfu_log_factor(cfg().lfu_log_factor);
  access_clock_.set_lfu_decay_time(cfg().lfu_decay_time);
}

void Server::Cron() {
  int64_t now = NowMs();
  access_clock_.Tick(now);  // as Redis's server.lruclock: hz times a second
  if (expired_keys_stay_ && !replica_mode_) UpdateExpiredKeysStay();  // a pause that timed out
  tracking_.Cron();
  // Active expiry: a bounded walk per database per tick (and at most one rehash step).
  // None during CLIENT PAUSE, as Redis: a failover sees a dataset that holds still.
  if (active_expire_ && (pause_end_ms_ == 0 || now >= pause_end_ms_)) {
    const int64_t start_ns = MonotonicClock::NowNs();
    for (int i = 0; i < dataset_.num_dbs() && !replica_mode_; i++) {
      dataset_.db(i).ActiveExpireCycle(now, 4096, /*rehash_us=*/0);
    }
    LatencySample("expire-cycle", (MonotonicClock::NowNs() - start_ns) / 1000000);
  }
  // Keyspace rehash: 1 ms per tick for one database, as Redis's databasesCron, and none
  // while a fork child runs.
  if (!fork_child_active_) {
    const size_t num = static_cast<size_t>(dataset_.num_dbs());
    for (size_t n = 0; n < num; n++) {
      size_t i = (rehash_db_ + n) % num;
      Database& db = dataset_.db(static_cast<int>(i));
      bool was = db.rehashing();
      if (db.IncrementalRehash(Database::kCronRehashMicros) || was) {
        rehash_db_ = i;
        break;
      }
    }
  }
  // Counter table growth: a bounded step per tick (new keys move more), none while a
  // fork child runs, as the keyspace rehash.
  if (!fork_child_active_) {
    for (auto& [name, space] : dataset_.counter_spaces()) {
      if (space->growing()) space->GrowStep(CounterSpace::kCronGrowSlots);
    }
  }
  // Idle clients, and clients whose unsent replies stay past their output
  // limits without traffic (a soft limit's time runs out), as Redis's clientsCron.
  std::vector<std::shared_ptr<Connection>> idle, over_limit;
  for (auto& [id, c] : connections_) {
    const Client& cl = c->client();
    // A parked client is not idle: its command waits on its own timeout (as Redis).
    if (cfg().timeout > 0 && !cl.monitor && !cl.blocked && !cl.replica &&
        now - cl.last_interaction_ms > cfg().timeout * 1000) {
      idle.push_back(c);
    } else if (c->OutputPastLimits()) {
      over_limit.push_back(c);
    }
  }
  for (auto& c : idle) {
    Log(1, "Closing idle client");
    c->Close();
  }
  for (auto& c : over_limit) c->CloseOverOutputLimit();
  // ops/sec
  if (now - stats_.last_sample_ms >= 1000) {
    uint64_t delta = stats_.total_commands_processed - stats_.last_sample_commands;
    if (stats_.last_sample_ms > 0) {
      stats_.instantaneous_ops_per_sec = delta * 1000.0 / static_cast<double>(now - stats_.last_sample_ms);
    }
    stats_.last_sample_ms = now;
    stats_.last_sample_commands = stats_.total_commands_processed;
  }
  peak_memory_ = std::max(peak_memory_, UsedMemory());
  for (auto& hook : cron_hooks_) hook(now);
}

}  // namespace feedkv::server
