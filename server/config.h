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

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "storage/status.h"

namespace feedkv::server {

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
  bool protected_mode = false;
  // Limits
  int64_t proto_max_bulk_len = 512ll * 1024 * 1024;
  int64_t client_query_buffer_limit = 1024ll * 1024 * 1024;
  std::string client_output_buffer_limit = "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60";
  int64_t databases = 16;
  // General
  std::string dir = ".";
  std::string logfile;
  std::string loglevel = "notice";
  std::string pidfile;
  bool daemonize = false;
  std::string requirepass;
  int64_t hz = 10;
  int64_t slowlog_log_slower_than = 10000;  // microseconds
  int64_t slowlog_max_len = 128;
  int64_t latency_monitor_threshold = 0;
  bool latency_tracking = true;  // per-command latency histograms
  std::vector<double> latency_tracking_info_percentiles = {50.0, 99.0, 99.9};  // INFO latencystats
  int64_t maxmemory = 0;
  std::string maxmemory_policy = "noeviction";
  int64_t lfu_log_factor = 10;
  int64_t lfu_decay_time = 1;
  // Persistence (used from the persistence issue on)
  bool appendonly = false;
  std::string appendfsync = "everysec";
  std::string appendfilename = "appendonly.aof";
  std::string appenddirname = "appendonlydir";
  int64_t aof_segment_size = 64ll * 1024 * 1024;
  int64_t aof_retain_segments = 4;
  bool aof_load_truncated = true;
  std::string save = "3600 1 300 100 60 10000";
  std::string dbfilename = "dump.rdb";
  bool rdbcompression = true;
  bool rdbchecksum = true;
  bool stop_writes_on_bgsave_error = true;
  // Replication (names reserved for the replication issue)
  std::string replicaof;
  bool replica_read_only = true;
  // longset
  double longset_max_fill = 0.9;
  double longset_growth_factor = 1.3;
  bool longset_auto_grow = true;
  // Schema counters
  int64_t counter_table_size = 1024ll * 1024 * 1024;
  double counter_table_max_fill = 0.85;
  int64_t counter_max_probes = 32;
  // Sets
  int64_t set_max_intset_entries = 512;
  int64_t set_max_listpack_entries = 128;
};

class Config {
 public:
  Config();

  ServerConfig& values() { return values_; }
  const ServerConfig& values() const { return values_; }

  // Sets one setting by name (case-insensitive). Returns InvalidArgument with
  // a message for the user on an unknown name or a bad value.
  Status Set(std::string_view name, std::string_view value, bool at_runtime);
  // Name/value pairs of the settings matching a glob pattern.
  std::vector<std::pair<std::string, std::string>> Get(std::string_view pattern) const;
  bool Exists(std::string_view name) const;

  // Loads a redis.conf-syntax file (directives, quoted args, # comments).
  Status LoadFile(const std::string& path);
  // Applies "--name value [value...]" command-line arguments.
  Status ApplyArgs(const std::vector<std::string>& args);
  // Rewrites the config file: known directives updated in place, the rest
  // appended; unknown lines kept. REQUIRES: a file was loaded.
  Status Rewrite() const;
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
  };
  void Add(const std::string& name, Entry e);
  void Int(const std::string& name, int64_t ServerConfig::*field, int64_t min, int64_t max, bool mut);
  void Memory(const std::string& name, int64_t ServerConfig::*field, bool mut);
  void Bool(const std::string& name, bool ServerConfig::*field, bool mut);
  void Str(const std::string& name, std::string ServerConfig::*field, bool mut);
  void Enum(const std::string& name, std::string ServerConfig::*field, std::vector<std::string> allowed, bool mut);
  void Double(const std::string& name, double ServerConfig::*field, double min, double max, bool mut);

  ServerConfig values_;
  std::map<std::string, Entry> entries_;  // sorted: CONFIG GET output is stable
  std::string file_;
  std::function<void(const std::string&)> on_change_;
};

// Redis's glob matching (stringmatchlen): * ? [abc] [^a] [a-z] and \ escapes.
bool GlobMatch(std::string_view pattern, std::string_view s, bool nocase);

// Parses "1gb", "64mb", "100k", "512" into bytes. Returns false on bad input.
bool ParseMemory(std::string_view s, int64_t* out);

}  // namespace feedkv::server
