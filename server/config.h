// ServerConfig holds every setting as a typed field; Config is the registry
// that maps Redis-style names ("maxclients", "appendfsync") to those fields
// for the config file, command-line flags, CONFIG GET/SET/REWRITE.
//
// Most settings are read by the server at the moment of use, so CONFIG SET
// takes effect at once; settings that cannot change while running are
// declared immutable and CONFIG SET refuses them with Redis's error text.
// Not thread-safe: owned by the command thread. Threads that need a value
// (the AOF writer) receive a copy.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/glob.h"  // GlobMatch, which CONFIG GET and its callers use
#include "storage/fsync_policy.h"
#include "storage/status.h"

namespace feedkv::server {

// client-output-buffer-limit of one client class: a client is closed when its unsent
// replies reach hard_bytes, or stay at or over soft_bytes for more than soft_seconds.
// 0 bytes = no limit.
struct OutputBufferLimit {
  uint64_t hard_bytes = 0;
  uint64_t soft_bytes = 0;
  int64_t soft_seconds = 0;
  bool operator==(const OutputBufferLimit&) const = default;
};

// The classes client-output-buffer-limit names, in Redis's order.
enum class ClientClass { kNormal = 0, kReplica = 1, kPubsub = 2 };
using OutputBufferLimits = std::array<OutputBufferLimit, 3>;

// loglevel, parsed: a line is written when its level is at least this.
// kNothing silences everything.
enum class LogLevel { kDebug = 0, kVerbose = 1, kNotice = 2, kWarning = 3, kNothing = 4 };

struct ServerConfig {
  // Network
  int64_t port = 6379;
  std::string bind = "127.0.0.1";
  std::string unixsocket;
  int64_t unixsocketperm = 0;
  int64_t maxclients = 10000;
  int64_t timeout = 0;          // idle seconds before closing a client; 0 = never
  int64_t tcp_keepalive = 300;  // seconds
  int64_t tcp_backlog = 511;
  // Refuse non-local clients while no password is set (Redis's default).
  bool protected_mode = true;
  // "no", "yes" or "local": who may CONFIG SET the protected configs (dir,
  // dbfilename) and run DEBUG. Immutable at runtime, as in Redis 7.
  std::string enable_protected_configs = "no";
  std::string enable_debug_command = "no";
  // Limits
  int64_t proto_max_bulk_len = 512ll * 1024 * 1024;
  int64_t client_query_buffer_limit = 1024ll * 1024 * 1024;
  OutputBufferLimits client_output_buffer_limit = {{{0, 0, 0},
                                                    {256ull << 20, 64ull << 20, 60},
                                                    {32ull << 20, 8ull << 20, 60}}};
  int64_t databases = 16;
  // General
  std::string dir = ".";
  std::string logfile;
  LogLevel loglevel = LogLevel::kNotice;
  std::string pidfile;
  bool daemonize = false;
  bool always_show_logo = false;
  std::string requirepass;
  int64_t hz = 10;
  int64_t slowlog_log_slower_than = 10000;  // microseconds
  int64_t slowlog_max_len = 128;
  int64_t latency_monitor_threshold = 0;
  bool latency_tracking = true;  // per-command latency histograms
  std::vector<double> latency_tracking_info_percentiles = {50.0, 99.0, 99.9};  // INFO latencystats
  int64_t maxmemory = 0;
  std::string maxmemory_policy = "noeviction";
  int64_t maxmemory_samples = 5;            // keys sampled per eviction round
  int64_t tracking_table_max_keys = 1000000;  // CLIENT TRACKING's key table bound (0: none)
  int64_t maxmemory_eviction_tenacity = 10;  // 0..100: eviction time per command
  int64_t lfu_log_factor = 10;
  int64_t lfu_decay_time = 1;
  // Keyspace notifications: KeyspaceEvent bits (server/keyspace_events.h).
  int notify_keyspace_events = 0;
  // Persistence (used from the persistence issue on)
  bool appendonly = false;
  // DEL frees big values off the command thread, as UNLINK (server/lazy_free.h).
  bool lazyfree_lazy_user_del = false;
  // FLUSHALL / FLUSHDB without SYNC free the data off the command thread.
  bool lazyfree_lazy_user_flush = false;
  aof::FsyncPolicy appendfsync = aof::FsyncPolicy::kEverySec;
  std::string appendfilename = "appendonly.aof";
  std::string appenddirname = "appendonlydir";
  int64_t aof_segment_size = 64ll * 1024 * 1024;
  int64_t aof_retain_segments = 4;
  // Redis's test hook: a snapshot child sleeps this many microseconds after
  // each key (negative -n: 1 us with probability 1/n), so tests can catch a
  // BGSAVE / BGREWRITEAOF in progress.
  int64_t rdb_key_save_delay = 0;
  bool aof_load_truncated = true;
  // `save`: snapshot after `seconds` if at least `changes` writes happened;
  // parsed once, when set.
  std::vector<std::pair<int64_t, int64_t>> save_points = {{3600, 1}, {300, 100}, {60, 10000}};
  std::string dbfilename = "dump.rdb";
  bool rdbcompression = true;
  bool rdbchecksum = true;
  bool stop_writes_on_bgsave_error = true;
  // Replication (docs/replication.md)
  std::string replicaof;  // "host port", empty: a master
  bool replica_read_only = true;
  std::string masteruser, masterauth;
  int64_t repl_timeout = 60;
  int64_t repl_ping_replica_period = 10;
  int64_t min_replicas_to_write = 0;
  int64_t min_replicas_max_lag = 10;
  bool replica_serve_stale_data = true;
  // What a replica tells its master to list it as (NAT, containers): empty /
  // 0 for the address the master sees and the port this node listens on.
  std::string replica_announce_ip;
  int64_t replica_announce_port = 0;
  // Segments are kept for known replicas (docs/replication.md): a disconnected
  // one for this many seconds; the retained log is capped at this many bytes
  // (0: no cap) and by this much free disk (percent).
  int64_t repl_retain_max_age = 7 * 24 * 3600;
  int64_t repl_retain_max_bytes = 0;
  int64_t repl_retain_min_free_disk = 5;
  // longset
  double longset_max_fill = 0.9;
  double longset_growth_factor = 1.3;
  bool longset_auto_grow = true;
  // Schema counters
  int64_t counter_table_size = 1024ll * 1024 * 1024;
  double counter_table_max_fill = 0.85;
  int64_t counter_max_probes = 32;
  // The cold counter tier (docs/counters.md, "Cold tables"). cold-dir is
  // relative to dir unless absolute; it is fixed at start.
  int64_t counter_memory_limit = 0;  // 0: no automatic spills
  int64_t counter_cold_cache_size = 256ll * 1024 * 1024;
  int64_t counter_cold_writeback_interval = 1000;  // ms
  std::string cold_dir = "cold";
  int64_t cold_read_threads = 4;
  int64_t cold_read_batch = 64;
  int64_t cold_block_cache_size = 512ll * 1024 * 1024;
  int64_t cold_bloom_bits_per_key = 10;
  // Sets
  int64_t set_max_intset_entries = 512;
  int64_t set_max_listpack_entries = 128;
  // Feeds (docs/feeds.md)
  int64_t feed_outbox_max_len = 800;
  int64_t feed_inbox_max_len = 800;
  int64_t feed_push_max_followers = 5000;
  int64_t feed_follow_backfill = 20;
  int64_t feed_max_page = 200;
  int64_t feed_unread_cap = 999;
  int64_t feed_pull_max_followings = 2000;
  int64_t feed_inbox_idle_ttl = 30ll * 24 * 3600;  // seconds
  int64_t feed_delete_ttl = 7ll * 24 * 3600;       // seconds
  // Sorted sets: the listpack encoding's limits (storage/sorted_set.h)
  int64_t zset_max_listpack_entries = 128;
  int64_t zset_max_listpack_value = 64;
  // Hashes: the listpack encoding's limits (storage/hash_value.h)
  int64_t hash_max_listpack_entries = 512;
  int64_t hash_max_listpack_value = 64;
  // Lists: a chunk's limit (storage/list_value.h): -1..-5 bytes, else elements
  int64_t list_max_listpack_size = -2;
  // Streams: a node's limits (storage/stream_value.h); 0 is no limit
  int64_t stream_node_max_bytes = 4096;
  int64_t stream_node_max_entries = 100;
  // HyperLogLog: the sparse encoding's limit (storage/hyperloglog.h)
  int64_t hll_sparse_max_bytes = 3000;
  // Bloom filters (docs/bloom.md): RedisBloom's module settings for filters made by
  // an add to a missing key, and feedkv's cap on one filter's bit arrays.
  double bf_error_rate = 0.01;
  int64_t bf_initial_size = 100;
  int64_t bf_expansion_factor = 2;  // 0: such filters do not scale
  int64_t bf_max_filter_bytes = 512ll * 1024 * 1024;
  // Redis 7.0 settings accepted with Redis's validation that change nothing
  // in feedkv (server/config_compat.cc; docs/configuration.md lists them):
  // name -> the value CONFIG GET shows.
  std::map<std::string, std::string> compat;
  // "user <name> <rules...>" lines of the config file and command line, in
  // order, applied once at start-up (Server::LoadAclAtStartup).
  std::vector<std::vector<std::string>> acl_user_lines;
};

class Config {
 public:
  Config();

  ServerConfig& values() { return values_; }
  const ServerConfig& values() const { return values_; }

  // Sets one setting by name (case-insensitive). Returns InvalidArgument with
  // a message for the user on an unknown name or a bad value. At runtime the
  // protected configs also need enable-protected-configs yes, or local and a
  // local client (`local_client`: loopback or Unix socket).
  Status Set(std::string_view name, std::string_view value, bool at_runtime, bool local_client = false);
  // Name/value pairs of the settings matching a glob pattern.
  std::vector<std::pair<std::string, std::string>> Get(std::string_view pattern) const;
  // The value of one setting as CONFIG GET shows it ("" if unknown).
  std::string ValueOf(const std::string& name) const;
  bool Exists(std::string_view name) const;

  // As Redis's loadServerConfig: the file (none if `path` is empty), then the
  // command line's "--name value [value...]" arguments turned into lines, read
  // as one redis.conf text (directives, quoted args, # comments, include,
  // user). An error is Redis's "*** FATAL CONFIG FILE ERROR ***" block, naming
  // the line.
  Status Load(const std::string& path, const std::vector<std::string>& args);
  Status LoadFile(const std::string& path);
  Status ApplyArgs(const std::vector<std::string>& args);
  Status LoadText(std::string_view text);
  // Redis's main(): command-line arguments as config lines.
  static std::string ArgsToConfigText(const std::vector<std::string>& args);
  // Rewrites the config file: known directives updated in place, the rest
  // appended; unknown lines kept. `user_lines` ("user <name> <rules>") replace
  // the file's user lines in place, the rest appended, as Redis's
  // rewriteConfigUserOption (empty with an aclfile: the file's user lines go).
  // REQUIRES: a file was loaded.
  // `force_all` (DEBUG CONFIG-REWRITE-FORCE-ALL) writes settings at their
  // defaults too (but empty ones, which need no line).
  Status Rewrite(std::span<const std::string> user_lines = {}, bool force_all = false) const;
  const std::string& file() const { return file_; }

  // Called after a successful runtime Set of `name`.
  void set_on_change(std::function<void(const std::string& name)> fn) { on_change_ = std::move(fn); }

 private:
  struct Entry {
    // Entries address fields by member pointer, so a Config copies safely.
    std::function<Status(ServerConfig&, std::string_view)> set;
    std::function<std::string(const ServerConfig&)> get;
    bool mutable_at_runtime;
    std::string default_value;
    bool protected_config = false;  // see enable-protected-configs
    // Redis's HIDDEN_CONFIG (test hooks): CONFIG GET answers the exact name
    // only, never a pattern.
    bool hidden = false;
  };
  void Add(const std::string& name, Entry e);
  // Set from the config file or the command line (see save's rule there).
  Status SetAtStartup(std::string_view name, std::string_view value);
  // `alias` (an old name: slaveof, slave-*, *-ziplist-*) reads and writes
  // `name`; CONFIG GET * lists both, as Redis 7.0.
  void AddAlias(const std::string& alias, const std::string& name);
  // The settings of server/config_compat.cc: `check` validates a value and
  // gives the text CONFIG GET shows.
  void AddCompatSettings();
  // bf-*: RedisBloom's names, ranges and refusal texts.
  void AddBloomSettings();
  void AddCompat(const std::string& name, const std::string& default_value, bool mut, bool hidden,
                 std::function<Status(std::string_view, std::string*)> check);
  // The canonical name for a lower-cased name or alias ("" if unknown).
  const std::string* Resolve(const std::string& lower) const;
  void Int(const std::string& name, int64_t ServerConfig::*field, int64_t min, int64_t max, bool mut);
  // A memory value (1k, 5mb...), at least `min`.
  void Memory(const std::string& name, int64_t ServerConfig::*field, bool mut, int64_t min = 0);
  void Bool(const std::string& name, bool ServerConfig::*field, bool mut);
  void Str(const std::string& name, std::string ServerConfig::*field, bool mut,
           std::function<Status(std::string_view)> check = nullptr);
  void Enum(const std::string& name, std::string ServerConfig::*field, std::vector<std::string> allowed, bool mut);
  // An enum setting stored parsed: `names` lists each value's name, in the
  // order Redis's error text gives them.
  template <class E>
  void Choice(const std::string& name, E ServerConfig::*field,
              std::vector<std::pair<std::string, E>> names, bool mut);
  void Double(const std::string& name, double ServerConfig::*field, double min, double max, bool mut);

  ServerConfig values_;
  bool save_loaded_ = false;  // a `save` was read at start-up: later ones add points
  std::map<std::string, Entry> entries_;  // sorted: CONFIG GET output is stable
  std::map<std::string, std::string> aliases_;  // alias -> name in entries_
  std::string file_;
  std::function<void(const std::string&)> on_change_;
};

// "CONFIG SET failed (possibly related to argument '<name>') - <why>", Redis's form.
std::string ConfigSetFailed(std::string_view name, std::string_view why);

// Parses "1gb", "64mb", "100k", "512" into bytes (Redis's memtoull units,
// unit case ignored). Returns false on bad input, a sign, or int64 overflow.
bool ParseMemory(std::string_view s, int64_t* out);

// True when a protected action ("yes"/"no"/"local" setting, as
// enable-debug-command) is allowed for a client; `local_client`: loopback or Unix socket.
bool AllowProtectedAction(const std::string& setting, bool local_client);

// Parses a client-output-buffer-limit value, "<class> <hard> <soft> <seconds>"
// repeated (split on single spaces, as Redis; sizes take k/kb/m/mb/g/gb), into
// *limits. Only the named classes change, and nothing changes on an error
// (InvalidArgument with Redis's text).
Status ParseOutputBufferLimits(std::string_view value, OutputBufferLimits* limits);
// Redis's CONFIG GET form: "normal <hard> <soft> <secs> slave ... pubsub ...", in bytes.
std::string FormatOutputBufferLimits(const OutputBufferLimits& limits);

}  // namespace feedkv::server
