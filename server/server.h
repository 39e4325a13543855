// Server: the state of one feedkv process and the single place a command is
// executed. It owns the config, the command table, the dataset, the journal
// of changes, the waiting clients, the client registry, statistics, the slow
// log, the watch registry and its subsystems (persistence; replication and
// the cold tier next). docs/architecture.md draws how they connect.
//
// Threading: everything here runs on the command thread (the Asio io_context
// thread), so every command is atomic. Other threads (AOF writer, snapshot,
// replication) talk to it only by posting work to that io_context.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "server/acl.h"
#include "server/client.h"
#include "server/command_table.h"
#include "server/config.h"
#include "server/eviction.h"
#include "server/keyspace_events.h"
#include "server/latency_monitor.h"
#include "server/lazy_free.h"
#include "server/tracking.h"
#include "server/latency_histogram.h"
#include "server/pubsub.h"
#include "server/waiting_clients.h"
#include "storage/counter_space.h"
#include "storage/database.h"
#include "storage/dataset.h"
#include "storage/journal.h"
#include "storage/status.h"

namespace feedkv::server {

class Connection;
class Listener;
class ColdTier;
class MigrateConnections;
class Persistence;
class Replication;
class ScriptEngine;

// How Server::Call runs a command.
using CallFlags = uint32_t;
// Applied from the log (AOF replay, the replication stream): the command's
// clock stands still, nothing is logged again, no reply waits, client limits
// do not apply (see LogApplier).
inline constexpr CallFlags kCallFromLog = 1u << 0;
// Not counted in INFO commandstats / the slow log (AOF loading, as Redis).
inline constexpr CallFlags kCallNoStats = 1u << 1;

// The statistics of one command-table row (INFO commandstats, latencystats,
// LATENCY HISTOGRAM). Server keeps one per row, indexed by CommandSpec::id.
struct CommandStats {
  uint64_t calls = 0;
  uint64_t nsec = 0;  // INFO reports usec
  uint64_t rejected_calls = 0;
  uint64_t failed_calls = 0;
  // Allocated on the first call timed with latency-tracking on, as Redis does.
  std::unique_ptr<LatencyHistogram> latency;

  void RecordLatency(uint64_t ns) {
    if (latency == nullptr) latency = std::make_unique<LatencyHistogram>();
    latency->Record(ns);
  }
  bool empty() const { return calls == 0 && rejected_calls == 0 && failed_calls == 0; }
};

struct SlowlogEntry {
  uint64_t id;
  int64_t unix_time;
  int64_t duration_us;
  std::vector<std::string> args;
  std::string peer, client_name;
};

// FEED.* counters (INFO feeds).
struct FeedStats {
  uint64_t fanout_writes = 0;      // inbox entries written by FEED.PUBLISH
  uint64_t timeline_pages = 0;
  uint64_t pull_merges = 0;        // outboxes merged at read time
  uint64_t deleted_filtered = 0;   // entries skipped: deleted or unfollowed
  uint64_t inbox_rebuilds = 0;     // FEED.ACTIVATE
  uint64_t inbox_misses = 0;       // reads of a user without an inbox
  int64_t fanout_usec_max = 0;
};

struct ServerStats {
  uint64_t total_connections_received = 0;
  uint64_t total_commands_processed = 0;
  uint64_t rejected_connections = 0;
  uint64_t expired_keys = 0;
  uint64_t keyspace_hits = 0;
  uint64_t keyspace_misses = 0;
  uint64_t net_input_bytes = 0;
  uint64_t net_output_bytes = 0;
  uint64_t total_error_replies = 0;
  uint64_t unexpected_error_replies = 0;
  uint64_t client_query_buffer_limit_disconnections = 0;
  uint64_t client_output_buffer_limit_disconnections = 0;
  uint64_t dirty = 0;  // changes since the last snapshot
  uint64_t total_forks = 0;  // snapshot children forked (BGSAVE, BGREWRITEAOF, save points)
  int64_t latest_fork_usec = 0;
  // Replication (server/replication/replication.h).
  uint64_t sync_full = 0, sync_partial_ok = 0, sync_partial_err = 0;
  uint64_t repl_timeout_disconnects = 0;
  uint64_t repl_retention_forced_drops = 0;
  uint64_t sync_truncate = 0;
  FeedStats feeds;
  // ops/sec sampling
  uint64_t last_sample_commands = 0;
  int64_t last_sample_ms = 0;
  double instantaneous_ops_per_sec = 0;
};

// SHUTDOWN's options (SIGTERM and SIGINT use the defaults).
struct ShutdownOptions {
  // kDefault saves a snapshot when save points are configured, as Redis.
  enum class Save { kDefault, kSave, kNoSave } save = Save::kDefault;
  bool force = false;  // exit even if the final save fails
};

class Server {
 public:
  Server(boost::asio::io_context& io, Config config);
  ~Server();

  // Binds the listeners. Returns false (after logging) on failure.
  bool Start();
  // After a CONFIG SET of bind or port (`old`: the values before it): listens
  // on the new TCP addresses, closing the old sockets, as Redis 7. On failure
  // the old sockets are back, *failed_arg names the setting and the Status
  // carries Redis's reason; the caller restores the old values.
  Status ApplyListenConfig(const ServerConfig& old, std::string* failed_arg);
  // Runs the shutdown hooks (final AOF flush, final snapshot); when they all
  // succeed, or `options.force`, stops accepting, closes clients and stops the
  // loop. Otherwise logs "Error trying to save the DB, can't exit.", keeps
  // serving and returns false, as Redis's prepareForShutdown.
  bool Shutdown(const ShutdownOptions& options = {});

  boost::asio::io_context& io() { return io_; }
  Config& config() { return config_; }
  const ServerConfig& cfg() const { return config_.values(); }
  const CommandTable& table() const { return table_; }
  ServerStats& stats() { return stats_; }

  // ACL users (server/acl.h); what the server does with them is in
  // server/acl_enforcement.cc.
  AclUsers& acl() { return *acl_; }
  // Loads the config file's "user" lines or the aclfile, as Redis's
  // ACLLoadUsersAtStartup (both at once is an error). Called once, before
  // clients connect.
  Status LoadAclAtStartup();
  // Redis's clientSetDefaultAuth: the default user, authenticated when it
  // needs no password.
  void SetDefaultAuth(Client& c);
  // Whether `c` may run `spec` with `argv`; on a refusal logs it in the ACL
  // log (context "toplevel" or "multi") and returns the error text.
  std::string CheckAcl(Client& c, const CommandSpec& spec, std::span<const std::string_view> argv,
                       std::string_view context = {});
  // An ACL LOG entry for `c` (the script's caller for the script client).
  // `username` empty: c's user; `context` empty: "multi" or "toplevel".
  void LogAclDenial(const Client& c, AclResult reason, std::string object,
                    std::string_view username = {}, std::string_view context = {});
  // Moves every client of `u` to the default user, unauthenticated, and
  // closes it (`current` after its reply), as ACL DELUSER does.
  void DisconnectUser(AclUser* u, Client* current);
  // After ACL SETUSER: closes u's subscribed clients whose channels the new
  // rules no longer allow (old_channels: the user's patterns before).
  void DisconnectRevokedSubscribers(const AclUser& u, const std::vector<std::string>& old_channels,
                                    Client* current);
  Status ReloadAclFile(const std::string& path, Client* current);
  Status SaveAclFile(const std::string& path);

  Dataset& dataset() { return dataset_; }
  Database& db(int i) { return dataset_.db(i); }
  // Schema counter spaces, by name. Server-wide (not per SELECT database).
  using CounterSpaces = Dataset::CounterSpaces;
  CounterSpaces& counter_spaces() { return dataset_.counter_spaces(); }
  int num_dbs() const { return dataset_.num_dbs(); }

  // The log of every change (storage/journal.h). Sealed once per loop turn.
  Journal& journal() { return journal_; }
  // Clients parked until a condition holds, and replies held for the log.
  WaitingClients& waiting() { return waiting_; }
  // The persistence subsystem, once attached (null in unit tests).
  Persistence* persistence() { return persistence_.get(); }
  // Frees big values and flushed databases off the command thread.
  LazyFree& lazy_free() { return lazy_free_; }
  void set_persistence(std::unique_ptr<Persistence> p);
  // The replication subsystem, once attached (null in unit tests).
  Replication* replication() { return replication_.get(); }
  void set_replication(std::unique_ptr<Replication> r);
  // MIGRATE's cached connections to other servers (made on first use).
  MigrateConnections& migrate_connections();
  size_t migrate_cached_sockets() const;
  // A token for WaitFor::kAsyncDone that no other subsystem hands out.
  uint64_t NextWaitToken() { return next_wait_token_++; }
  // The cold counter tier (server/cold_tier.h); null in unit tests.
  ColdTier* cold_tier() { return cold_tier_.get(); }
  void set_cold_tier(std::unique_ptr<ColdTier> t);
  // Set while this node is a replica: client writes get -READONLY, keys are
  // not expired or evicted here (the master's DELs arrive in its log).
  void set_replica_mode(bool on);
  bool replica_mode() const { return replica_mode_; }

  // Executes one command from a client (queues it inside MULTI). Replies are
  // appended to client.out.
  void Execute(Client& client, std::span<const std::string_view> args);
  // Parks the client's current command until `cond` holds (or `timeout_ms`),
  // then runs it again through Execute, from the top — unless `refusal`
  // returns an error text, which is replied instead. CLIENT PAUSE and the
  // cold tier's loads use it.
  void ParkThenExecute(Client& c, WaitCondition cond, int64_t timeout_ms,
                       std::span<const std::string_view> args,
                       std::function<std::string()> refusal = {});
  // Executes an already validated command (used by EXEC and the LogApplier).
  // Returns false if the command replied with an error.
  bool Call(Client& client, const CommandSpec& spec, std::span<const std::string_view> args,
            CallFlags flags = 0);
  // A parked command ended (command_ended) or a client's held replies were
  // released: send what may go and, after a parked command, run the input
  // that queued behind it. Safe to call from inside a command (it posts).
  void ResumeClient(uint64_t client_id, bool command_ended);

  // CLIENT PAUSE / UNPAUSE (Redis 7.0): until unix ms `end_ms`, the commands of
  // every client (`all`) or those that may write wait, parked, and run when
  // the pause ends. A second pause keeps the later end and the stricter kind.
  void PauseClients(int64_t end_ms, bool all);
  void UnpauseClients();
  // A CLIENT PAUSE is in force (its end not yet reached).
  bool clients_paused() const;

  // The memory limit (server/eviction.h).
  Evictor& evictor() { return evictor_; }
  // Deletes `key` of database `db` for the memory limit: logged as a DEL (as
  // an expiry is) and WATCH-invalidating.
  void EvictKey(int db, std::string_view key);
  // While one exists, the records emitted outside a command (evictions) join
  // one journal batch, appended when the last one goes.
  class ChangeBatch {
   public:
    explicit ChangeBatch(Server& s) : s_(s) { s_.call_depth_++; }
    ~ChangeBatch() {
      if (--s_.call_depth_ == 0) s_.FlushPropagation();
    }
    ChangeBatch(const ChangeBatch&) = delete;
    ChangeBatch& operator=(const ChangeBatch&) = delete;

   private:
    Server& s_;
  };

  // Clients.
  uint64_t NextClientId() { return next_client_id_++; }
  // The server owns every open connection: it enters the table when it starts
  // and leaves it only in Connection::Close, and it is destroyed from the event
  // loop after that (a caller may still be inside one of its methods).
  using ConnectionMap = std::map<uint64_t, std::shared_ptr<Connection>>;
  void AddConnection(std::shared_ptr<Connection> c);
  void RemoveConnection(Connection* c);
  const ConnectionMap& connections() const { return connections_; }
  size_t num_clients() const { return connections_.size(); }
  Client* FindClient(uint64_t id);
  // The connections with CLIENT TRACKING on.
  std::vector<Client*> TrackingClients();

  // WATCH registry.
  void Watch(Client& c, int db, std::string_view key);
  void UnwatchAll(Client& c);
  // A key changed (Redis's signalModifiedKey): its watchers fail EXEC and its
  // client-side caches are invalidated. `by_server`: the server changed it (an
  // expiry), not the running client, so NOLOOP does not hide the invalidation
  // from that client (Redis's signalModifiedKey(NULL, ...)).
  void TouchKey(int db, std::string_view key, bool by_server = false);
  // Whether TouchKey has anyone to tell.
  bool KeyChangesObserved() const { return !watched_.empty() || tracking_.active(); }
  // Database `db` (-1: every one) is about to be emptied (FLUSHDB, FLUSHALL, a
  // load): touches its watched keys and sends tracking clients a null invalidation.
  void SignalFlushed(int db);
  // FLUSHDB, FLUSHALL, SWAPDB, DEBUG RELOAD, before the change: touches the
  // watched keys of database `emptied` that exist in it or in `replaced_with`
  // (-1: none), as Redis's touchAllWatchedKeysInDb. A watched key that exists
  // in neither does not change.
  void TouchWatchedInDb(int emptied, int replaced_with = -1);

  // Stats and logs.
  // The stats of a row of table(); every row has a slot.
  CommandStats& command_stats(const CommandSpec& spec) { return command_stats_[spec.id]; }
  std::map<std::string, uint64_t, std::less<>>& error_stats() { return error_stats_; }
  void CountError(std::string_view msg);
  std::deque<SlowlogEntry>& slowlog() { return slowlog_; }
  void ResetSlowlog() { slowlog_.clear(); }
  void ResetStats();

  // A message that makes write commands fail (MISCONF), empty when writes are fine.
  void set_write_error(std::string msg) { write_error_ = std::move(msg); }
  const std::string& write_error() const { return write_error_; }
  // Acknowledged means logged: while the AOF is on, the replies of a write
  // (and of any command that logged records) are held until the log is
  // written (kLogWritten, appendfsync everysec/no) or fsynced (kLogDurable,
  // always) past them. Persistence sets it; nullopt when nothing stores the log.
  void set_reply_ack(std::optional<WaitFor> ack) { reply_ack_ = ack; }
  // Set while the dataset loads: clients get -LOADING. Handlers never read
  // it: a command applied from the log knows it from its call (CallFlags).
  bool loading() const { return loading_; }
  void set_loading(bool v) { loading_ = v; }
  // Functions called at shutdown (flush AOF, save snapshot...). A hook that
  // fails returns its error; it may be called again at a later SHUTDOWN.
  using ShutdownHook = std::function<Status(const ShutdownOptions&)>;
  void AddShutdownHook(ShutdownHook fn) { shutdown_hooks_.push_back(std::move(fn)); }
  // Functions called on every cron tick (hz times a second).
  void AddCronHook(std::function<void(int64_t now_ms)> fn) { cron_hooks_.push_back(std::move(fn)); }
  // Functions called after a setting changed at runtime (CONFIG SET), with its
  // name: how a change reaches the subsystem it concerns.
  void AddConfigHook(std::function<void(const std::string& name)> fn) {
    config_hooks_.push_back(std::move(fn));
  }
  // Set by persistence while a BGSAVE / BGREWRITEAOF child runs: the cron then leaves
  // keyspace rehashing to the commands' own steps, as Redis does, so the parent
  // dirties (and copies on write) as few pages as it can.
  // Keys' access stamps are left alone meanwhile, and the keyspace tables grow
  // only when five times over full, for the same reason.
  // Nesting of the command running now: 0 between commands, 1 for a client's
  // command, 2+ inside EXEC or a script.
  int call_depth() const { return call_depth_; }
  void set_fork_child_active(bool active) {
    fork_child_active_ = active;
    access_clock_.set_frozen(active);
    KeyTable::SetResizeDiscouraged(active);
  }
  // Sections added to INFO by other components: name -> appender of lines.
  void AddInfoSection(std::string name, std::function<void(std::string*)> fn) {
    info_sections_.emplace_back(std::move(name), std::move(fn));
  }
  const std::vector<std::pair<std::string, std::function<void(std::string*)>>>& info_sections() const {
    return info_sections_;
  }

  int64_t start_time_ms() const { return start_ms_; }
  const std::string& run_id() const { return run_id_; }
  uint64_t Random() { return rng_(); }
  int tcp_port() const { return bound_port_; }
  void set_bound_port(int p) { bound_port_ = p; }
  // INFO used_memory, what maxmemory limits: the allocator's count plus the
  // counter table pages touched. One atomic load and a walk of the counter
  // spaces: cheap enough to check before every command.
  size_t UsedMemory() const;
  // What the stored data accounts for (databases and counter spaces).
  size_t DatasetMemory() const;
  // What client connections hold (reply buffers, MULTI queues, fixed state).
  size_t ClientMemory() const;
  // Bytes the counter spaces use (touched table pages and dictionaries; part of
  // UsedMemory, reported on its own line by MEMORY STATS).
  size_t CounterMemory() const;
  size_t peak_memory() const { return peak_memory_; }

  // MONITOR feed.
  LatencyMonitor& latency_monitor() { return latency_monitor_; }
  // Records a latency-monitor sample for `event` (none below the threshold).
  void LatencySample(std::string_view event, int64_t ms);
  void AddMonitor(Client* c) { monitors_.push_back(c); }
  // EVAL*/FCALL* show themselves to monitors before they run, so the commands
  // their script calls follow them (Redis's evalCommand); the table row skips
  // the usual feed after the command.
  void FeedMonitorsBeforeScript(const Client& c, std::span<const std::string_view> args) {
    if (!monitors_.empty()) FeedMonitors(c, args);
  }
  PubSub& pubsub() { return pubsub_; }
  Tracking& tracking() { return tracking_; }
  ScriptEngine& scripts() { return *scripts_; }
  // A script past busy-reply-threshold: reads and answers every other client
  // once (Connection::ServeWhileBusy); nothing else of the event loop runs.
  void ServeClientsWhileBusy();
  bool shutting_down() const { return shutting_down_; }
  // Whether memory was over maxmemory when the running top-level command was
  // admitted (Redis's pre_command_oom_state): a script's deny-oom calls fail then.
  bool oom_at_command_start() const { return oom_at_command_start_; }
  // `c` has messages in its buffer: sent with the next push flush.
  void SchedulePush(Client* c);
  // Delivers a message to the subscribers of `channel` (PubSub::Publish) and sends
  // it to each at once. Returns the number of deliveries.
  size_t Publish(std::string_view channel, std::string_view message, bool shard);
  // A keyspace notification (Redis's notifyKeyspaceEvent, server/keyspace_events.h):
  // published when notify-keyspace-events selects `type`'s class.
  void NotifyKeyspaceEvent(int type, std::string_view event, std::string_view key, int db) {
    if (cfg().notify_keyspace_events & type) PublishKeyspaceEvent(event, key, db);
  }
  void RemoveMonitor(Client* c);
  // DEBUG SET-ACTIVE-EXPIRE: whether cron expires keys nobody reads.
  void set_active_expire(bool on) { active_expire_ = on; }
  // DEBUG SET-DISABLE-DENY-SCRIPTS: scripts may call noscript commands (tests).
  void set_script_deny_disabled(bool on) { script_deny_disabled_ = on; }
  bool script_deny_disabled() const { return script_deny_disabled_; }

  void Log(int level, std::string_view msg);  // 0 debug .. 3 warning
  // Makes `dir` the working directory, as Redis (relative paths in settings
  // resolve there); called at start and whenever CONFIG SET changes it.
  void EnterDir();
  // CONFIG REWRITE (force_all: DEBUG CONFIG-REWRITE-FORCE-ALL).
  Status RewriteConfig(bool force_all);

 private:
  void AdjustOpenFilesLimit();
  void LogStartBanner();
  void Cron();
  void ScheduleCron();
  // Points the access clock at the configured maxmemory-policy and LFU tuning.
  void ApplyAccessPolicy();
  // `spec`: the row that ran, whose secret arguments show as "(redacted)".
  void FeedMonitors(const Client& c, std::span<const std::string_view> args, const CommandSpec* spec = nullptr);
  void Propagate(const Client& c, const CommandSpec& spec, std::span<const std::string_view> args,
                 const CommandContext& ctx);
  // Queues one record for the journal; records of one top-level command (or
  // one EXEC) are appended together, as one atomic batch, when it completes.
  void EmitChange(int db, std::vector<std::string> cmd);
  // Like EmitChange while the journal has no consumer: counts the record's size.
  void CountChange(int db, uint64_t bytes);
  bool PendingChanges() const { return !pending_changes_.empty() || pending_counted_ > 0; }
  // one_per_batch: each pending change is its own batch (no MULTI/EXEC around them).
  void FlushPropagation(bool one_per_batch = false);
  // Whether a pause holds `spec` from `c` now (ends an expired pause).
  bool PauseHolds(const Client& c, const CommandSpec& spec, std::span<const std::string_view> args);
  // Runs the evictor; false when the command must be refused with -OOM.
  // `flags`: the command's flags as EffectiveFlags gives them.
  bool OomAllows(const Client& c, const CommandSpec& spec, uint64_t flags);
  // spec.flags, or for EVAL/EVALSHA/FCALL(_RO) of a script or function that
  // declares flags, the flags those imply (Redis's scriptFlagsToCmdFlags).
  uint64_t EffectiveFlags(const CommandSpec& spec, std::span<const std::string_view> args) const;
  // Parks the command until the pause ends, then runs it through Execute.
  void PostponeForPause(Client& c, std::span<const std::string_view> args);
  // Seals the journal's group at the end of this loop turn (group commit).
  void ScheduleSeal();

  boost::asio::io_context& io_;
  Config config_;
  CommandTable table_;
  std::unique_ptr<AclUsers> acl_;  // reads table_
  AccessClock access_clock_;  // stamps every database's keys (OBJECT IDLETIME/FREQ)
  Dataset dataset_;
  Journal journal_;
  bool seal_posted_ = false;
  WaitingClients waiting_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  ConnectionMap connections_;
  uint64_t next_client_id_ = 1;
  ServerStats stats_;
  std::vector<CommandStats> command_stats_;  // by CommandSpec::id
  std::map<std::string, uint64_t, std::less<>> error_stats_;
  std::deque<SlowlogEntry> slowlog_;
  uint64_t slowlog_next_id_ = 0;
  std::map<std::pair<int, std::string>, std::vector<Client*>, std::less<>> watched_;
  std::vector<Client*> monitors_;
  LatencyMonitor latency_monitor_;
  PubSub pubsub_;
  Tracking tracking_{*this};
  std::unique_ptr<ScriptEngine> scripts_;
  bool oom_at_command_start_ = false;
  // Subscribers with messages in their buffers, sent together once the input
  // being processed is done (one write per subscriber per batch, as Redis's
  // beforeSleep), not one write per message.
  std::vector<uint64_t> push_pending_;
  bool push_flush_posted_ = false;
  void FlushPushes();
  void PublishKeyspaceEvent(std::string_view event, std::string_view key, int db);
  // Installs the new-key hook while notify-keyspace-events selects 'n'.
  void ApplyKeyspaceEvents();
  std::vector<std::vector<std::string>> pending_changes_;
  int pending_db_ = 0;
  int64_t pause_end_ms_ = 0;  // CLIENT PAUSE: 0 when not paused
  bool pause_all_ = false;
  size_t pending_counted_ = 0;          // records only counted (no consumer)
  uint64_t pending_counted_bytes_ = 0;  // and their encoded size
  int call_depth_ = 0;
  uint64_t executing_client_ = 0;  // the client whose command runs (0: none)
  std::string write_error_;
  std::optional<WaitFor> reply_ack_;
  uint64_t records_emitted_ = 0;  // log records handed to the journal, ever
  bool loading_ = false;
  std::vector<ShutdownHook> shutdown_hooks_;
  std::vector<std::function<void(int64_t)>> cron_hooks_;
  std::vector<std::function<void(const std::string&)>> config_hooks_;
  bool fork_child_active_ = false;
  size_t rehash_db_ = 0;  // the database the cron rehashes next
  std::vector<std::pair<std::string, std::function<void(std::string*)>>> info_sections_;
  boost::asio::steady_timer cron_timer_;
  int64_t start_ms_;
  std::string run_id_;
  std::mt19937_64 rng_;
  int bound_port_ = 0;
  // Opens a TCP listener per address of `binds` (space-separated, '-' prefix
  // allowed) on `port`; false with *error (and nothing opened) on a failure.
  bool OpenTcpListeners(const std::string& binds, int64_t port,
                        std::vector<std::unique_ptr<Listener>>* out, std::string* error);
  // Closes and drops the TCP listeners (the Unix one stays).
  void CloseTcpListeners();
  void DropListeners(std::vector<std::unique_ptr<Listener>>* listeners);
  size_t peak_memory_ = 0;
  Evictor evictor_{*this};
  bool shutting_down_ = false;
  bool replica_mode_ = false;
  bool expired_keys_stay_ = false;  // what the databases were last told
  // Lazy expiry deletes nothing on a replica or while clients are paused.
  void UpdateExpiredKeysStay();
  // Its threads hold nothing of the dataset but the tables they spill.
  std::unique_ptr<ColdTier> cold_tier_;
  std::unique_ptr<MigrateConnections> migrate_connections_;
  uint64_t next_wait_token_ = uint64_t{1} << 61;  // apart from the cold tier's
  // Last: destroyed first, while everything they use still exists (the
  // replication threads read the persistence's files: they stop first).
  std::unique_ptr<Persistence> persistence_;
  LazyFree lazy_free_;
  std::unique_ptr<Replication> replication_;
  bool active_expire_ = true;
  bool script_deny_disabled_ = false;
};

int64_t NowMs();
int64_t NowUs();

}  // namespace feedkv::server
