#include "server/config.h"

#include <sys/stat.h>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "protocol/error_text.h"
#include "protocol/resp_parser.h"
#include "server/command_context.h"
#include "server/command_table.h"
#include "server/keyspace_events.h"
#include "storage/long_set.h"
#include "server/latency_histogram.h"
#include "server/startup.h"

namespace feedkv::server {

namespace {

// The number part of a memory value, as Redis's memtoull reads it: decimal
// digits only (leading zeros allowed; no sign, blank or NUL).
bool ParseDigits(std::string_view s, int64_t* out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string_view::npos) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc();
}

std::string FormatDoubleValue(double d) {
  std::string s = fmt::format("{}", d);
  return s;
}

// Quotes a value for the config file when it has spaces or is empty.
std::string QuoteIfNeeded(const std::string& v) {
  if (!v.empty() && v.find_first_of(" \t\"'") == std::string::npos) return v;
  std::string r = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') r.push_back('\\');
    r.push_back(c);
  }
  return r + "\"";
}

// Redis's memtoull: digits, then an optional unit (b, k, kb, m, mb, g, gb, any
// case); no sign; no digits reads as 0, as in Redis. Unlike Redis (which wraps),
// a value past 2^64-1 is refused.
bool ParseMemoryUnsigned(std::string_view s, uint64_t* out) {
  size_t digits = 0;
  while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') digits++;
  const std::string unit = LowerAscii(s.substr(digits));
  static const std::pair<std::string_view, uint64_t> kUnits[] = {
      {"", 1}, {"b", 1}, {"k", 1000}, {"kb", 1024}, {"m", 1000 * 1000}, {"mb", 1024 * 1024},
      {"g", 1000ull * 1000 * 1000}, {"gb", 1024ull * 1024 * 1024}};
  const auto* u = std::find_if(std::begin(kUnits), std::end(kUnits),
                               [&](const auto& kv) { return kv.first == unit; });
  if (u == std::end(kUnits)) return false;
  uint64_t v = 0;
  if (digits > 0) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + digits, v);
    if (ec != std::errc() || p != s.data() + digits) return false;
  }
  if (v > UINT64_MAX / u->second) return false;
  *out = v * u->second;
  return true;
}

// The soft-seconds field as Redis reads it (strtoll, whole text, not negative):
// "" is 0, a sign is allowed. Past INT32_MAX is refused (Redis truncates to int).
bool ParseSoftSeconds(std::string_view s, int64_t* out) {
  if (s.empty()) {
    *out = 0;
    return true;
  }
  const bool neg = s[0] == '-';
  if (s[0] == '+' || s[0] == '-') s.remove_prefix(1);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v < 0 || v > INT32_MAX ||
      (neg && v != 0)) {
    return false;
  }
  *out = v;
  return true;
}

// Redis's pathIsBaseName: the name has no '/' and no backslash.
std::function<Status(std::string_view)> BaseNameCheck(const char* empty_error, const char* path_error) {
  return [empty_error, path_error](std::string_view v) {
    if (v.empty() && empty_error != nullptr) return Status::InvalidArgument(empty_error);
    if (v.find_first_of("/\\") != std::string_view::npos) return Status::InvalidArgument(path_error);
    return Status::OK();
  };
}

// Redis's save rule: "" (no save points) or pairs of <seconds> <changes>
// split on single spaces, each read by strtoll to its end (so an empty word
// is 0), seconds at least 1, changes at least 0.
Status ParseSavePoints(std::string_view v, std::vector<std::pair<int64_t, int64_t>>* out) {
  std::vector<int64_t> nums;
  for (size_t i = 0; !v.empty() && i <= v.size();) {
    size_t j = std::min(v.find(' ', i), v.size());
    std::string word(v.substr(i, j - i));
    char* end = nullptr;
    const long long n = std::strtoll(word.c_str(), &end, 10);
    if (*end != '\0' || n < (nums.size() % 2 == 0 ? 1 : 0)) {
      return Status::InvalidArgument("Invalid save parameters");
    }
    nums.push_back(n);
    i = j + 1;
  }
  if (nums.size() % 2 != 0) return Status::InvalidArgument("Invalid save parameters");
  out->clear();
  for (size_t k = 0; k < nums.size(); k += 2) out->emplace_back(nums[k], nums[k + 1]);
  return Status::OK();
}

// As Redis shows it: "3600 1 300 100".
std::string FormatSavePoints(const std::vector<std::pair<int64_t, int64_t>>& points) {
  std::string out;
  for (const auto& [secs, changes] : points) {
    out += fmt::format("{}{} {}", out.empty() ? "" : " ", secs, changes);
  }
  return out;
}

}  // namespace

std::string ConfigSetFailed(std::string_view name, std::string_view why) {
  return fmt::format("CONFIG SET failed (possibly related to argument '{}') - {}", name, why);
}

bool AllowProtectedAction(const std::string& setting, bool local_client) {
  return setting == "yes" || (setting == "local" && local_client);
}

Status ParseOutputBufferLimits(std::string_view value, OutputBufferLimits* limits) {
  // Split on single spaces, empty fields kept, as Redis's sdssplitlen.
  std::vector<std::string_view> args;
  for (size_t start = 0; !value.empty();) {
    size_t sp = value.find(' ', start);
    args.push_back(value.substr(start, sp == std::string_view::npos ? std::string_view::npos : sp - start));
    if (sp == std::string_view::npos) break;
    start = sp + 1;
  }
  if (args.size() % 4 != 0) return Status::InvalidArgument(protocol::err::kObufArgCount);
  OutputBufferLimits next = *limits;
  for (size_t i = 0; i < args.size(); i += 4) {
    const std::string cls = LowerAscii(args[i]);
    ClientClass c;
    if (cls == "normal") {
      c = ClientClass::kNormal;
    } else if (cls == "slave" || cls == "replica") {
      c = ClientClass::kReplica;
    } else if (cls == "pubsub") {
      c = ClientClass::kPubsub;
    } else {
      return Status::InvalidArgument(protocol::err::kObufClass);
    }
    OutputBufferLimit l;
    if (!ParseMemoryUnsigned(args[i + 1], &l.hard_bytes) || !ParseMemoryUnsigned(args[i + 2], &l.soft_bytes) ||
        !ParseSoftSeconds(args[i + 3], &l.soft_seconds)) {
      return Status::InvalidArgument(protocol::err::kObufValue);
    }
    next[static_cast<size_t>(c)] = l;
  }
  *limits = next;
  return Status::OK();
}

std::string FormatOutputBufferLimits(const OutputBufferLimits& limits) {
  static const char* const kNames[] = {"normal", "slave", "pubsub"};
  std::string out;
  for (size_t i = 0; i < limits.size(); i++) {
    out += fmt::format("{}{} {} {} {}", i == 0 ? "" : " ", kNames[i], limits[i].hard_bytes,
                       limits[i].soft_bytes, limits[i].soft_seconds);
  }
  return out;
}

bool ParseMemory(std::string_view s, int64_t* out) {
  std::string l = LowerAscii(s);
  int64_t mul = 1;
  auto ends = [&](std::string_view suf) {
    return l.size() > suf.size() && l.compare(l.size() - suf.size(), suf.size(), suf) == 0;
  };
  struct Unit { const char* suf; int64_t mul; };
  static const Unit kUnits[] = {{"gb", 1ll << 30}, {"mb", 1ll << 20}, {"kb", 1ll << 10},
                                {"g", 1000000000}, {"m", 1000000},   {"k", 1000},
                                {"b", 1}};
  for (const Unit& u : kUnits) {
    if (ends(u.suf)) {
      mul = u.mul;
      l.resize(l.size() - std::string_view(u.suf).size());
      break;
    }
  }
  int64_t v;
  if (!ParseDigits(l, &v) || v > INT64_MAX / mul) return false;
  *out = v * mul;
  return true;
}

void Config::Add(const std::string& name, Entry e) {
  e.default_value = e.get(values_);
  entries_[name] = std::move(e);
}

std::string Config::ValueOf(const std::string& name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? std::string() : it->second.get(values_);
}

void Config::AddAlias(const std::string& alias, const std::string& name) { aliases_[alias] = name; }

const std::string* Config::Resolve(const std::string& lower) const {
  if (auto it = entries_.find(lower); it != entries_.end()) return &it->first;
  if (auto it = aliases_.find(lower); it != aliases_.end()) return &it->second;
  return nullptr;
}

void Config::Int(const std::string& name, int64_t ServerConfig::*f, int64_t min, int64_t max, bool mut) {
  Add(name, {[f, min, max, name](ServerConfig& c, std::string_view v) {
               int64_t x;
               if (!ParseCanonicalInt64(v, &x)) {  // string2ll, as Redis for a plain number
                 return Status::InvalidArgument(fmt::format("argument couldn't be parsed into an integer"));
               }
               if (x < min || x > max) {
                 return Status::InvalidArgument(
                     fmt::format("argument must be between {} and {} inclusive", min, max));
               }
               c.*f = x;
               return Status::OK();
             },
             [f](const ServerConfig& c) { return std::to_string(c.*f); }, mut, {}});
}

void Config::Memory(const std::string& name, int64_t ServerConfig::*f, bool mut, int64_t min) {
  Add(name, {[f, min](ServerConfig& c, std::string_view v) {
               int64_t x;
               if (!ParseMemory(v, &x) || x < 0) {
                 return Status::InvalidArgument("argument must be a memory value");
               }
               if (x < min) {
                 return Status::InvalidArgument(
                     fmt::format("argument must be between {} and {} inclusive", min, INT64_MAX));
               }
               c.*f = x;
               return Status::OK();
             },
             [f](const ServerConfig& c) { return std::to_string(c.*f); }, mut, {}});
}

void Config::Bool(const std::string& name, bool ServerConfig::*f, bool mut) {
  Add(name, {[f](ServerConfig& c, std::string_view v) {
               std::string l = LowerAscii(v);
               if (l == "yes") {
                 c.*f = true;
               } else if (l == "no") {
                 c.*f = false;
               } else {
                 return Status::InvalidArgument("argument must be 'yes' or 'no'");
               }
               return Status::OK();
             },
             [f](const ServerConfig& c) { return std::string(c.*f ? "yes" : "no"); }, mut, {}});
}

void Config::Str(const std::string& name, std::string ServerConfig::*f, bool mut,
                 std::function<Status(std::string_view)> check) {
  Add(name, {[f, check](ServerConfig& c, std::string_view v) {
               if (check) {
                 Status s = check(v);
                 if (!s.ok()) return s;
               }
               c.*f = std::string(v);
               return Status::OK();
             },
             [f](const ServerConfig& c) { return c.*f; }, mut, {}});
}

template <class E>
void Config::Choice(const std::string& name, E ServerConfig::*f,
                    std::vector<std::pair<std::string, E>> names, bool mut) {
  Add(name, {[f, names](ServerConfig& c, std::string_view v) {
               const std::string l = LowerAscii(v);
               for (const auto& [n, e] : names) {
                 if (n == l) {
                   c.*f = e;
                   return Status::OK();
                 }
               }
               std::vector<std::string> allowed;
               for (const auto& [n, e] : names) allowed.push_back(n);
               return Status::InvalidArgument("argument(s) must be one of the following: " +
                                              fmt::format("{}", fmt::join(allowed, ", ")));
             },
             [f, names](const ServerConfig& c) {
               for (const auto& [n, e] : names) {
                 if (e == c.*f) return n;
               }
               return std::string();
             },
             mut, {}});
}

void Config::Enum(const std::string& name, std::string ServerConfig::*f, std::vector<std::string> allowed,
                  bool mut) {
  std::vector<std::pair<std::string, std::string>> names;
  for (auto& a : allowed) names.emplace_back(a, a);
  Choice<std::string>(name, f, std::move(names), mut);
}

void Config::Double(const std::string& name, double ServerConfig::*f, double min, double max, bool mut) {
  Add(name, {[f, min, max](ServerConfig& c, std::string_view v) {
               double x;
               auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
               if (v.empty() || ec != std::errc() || p != v.data() + v.size()) {
                 return Status::InvalidArgument("argument couldn't be parsed into a number");
               }
               if (x < min || x > max) {
                 return Status::InvalidArgument(
                     fmt::format("argument must be between {} and {} inclusive", min, max));
               }
               c.*f = x;
               return Status::OK();
             },
             [f](const ServerConfig& c) { return FormatDoubleValue(c.*f); }, mut, {}});
}

Config::Config() {
  // Mutable at runtime: the server listens anew, or keeps the old sockets and
  // refuses the change (Server::ApplyListenConfig).
  Int("port", &ServerConfig::port, 0, 65535, true);
  Str("bind", &ServerConfig::bind, true);
  Str("unixsocket", &ServerConfig::unixsocket, false);
  Int("unixsocketperm", &ServerConfig::unixsocketperm, 0, 0777, false);
  Int("maxclients", &ServerConfig::maxclients, 1, 1000000, true);
  Int("timeout", &ServerConfig::timeout, 0, INT32_MAX, true);
  Int("tcp-keepalive", &ServerConfig::tcp_keepalive, 0, INT32_MAX, true);
  Int("tcp-backlog", &ServerConfig::tcp_backlog, 0, INT32_MAX, false);
  Bool("protected-mode", &ServerConfig::protected_mode, true);
  Enum("enable-protected-configs", &ServerConfig::enable_protected_configs, {"no", "yes", "local"}, false);
  Int("rdb-key-save-delay", &ServerConfig::rdb_key_save_delay, INT32_MIN, INT32_MAX, true);
  entries_["rdb-key-save-delay"].hidden = true;  // Redis's HIDDEN_CONFIG test hook
  Enum("enable-debug-command", &ServerConfig::enable_debug_command, {"no", "yes", "local"}, false);
  Memory("proto-max-bulk-len", &ServerConfig::proto_max_bulk_len, true, 1024 * 1024);
  Memory("client-query-buffer-limit", &ServerConfig::client_query_buffer_limit, true);
  Add("client-output-buffer-limit",
      {[](ServerConfig& c, std::string_view v) { return ParseOutputBufferLimits(v, &c.client_output_buffer_limit); },
       [](const ServerConfig& c) { return FormatOutputBufferLimits(c.client_output_buffer_limit); }, true, {}});
  Int("databases", &ServerConfig::databases, 1, 1024 * 1024, false);
  // As Redis, the working directory is `dir` (the server chdirs there, so
  // relative paths such as aclfile resolve in it) and CONFIG GET shows it
  // absolute. Here the value is checked and made absolute; Server::EnterDir
  // changes directory once it is applied.
  Add("dir", {[](ServerConfig& c, std::string_view v) {
                char* real = ::realpath(std::string(v).c_str(), nullptr);
                if (real == nullptr) return Status::InvalidArgument(std::strerror(errno));
                std::string abs(real);
                std::free(real);
                struct stat st;
                if (::stat(abs.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
                  return Status::InvalidArgument(std::strerror(ENOTDIR));
                }
                c.dir = std::move(abs);
                return Status::OK();
              },
              [](const ServerConfig& c) { return c.dir; }, true, {}});
  Str("logfile", &ServerConfig::logfile, false);
  Choice<LogLevel>("loglevel", &ServerConfig::loglevel,
                   {{"debug", LogLevel::kDebug}, {"verbose", LogLevel::kVerbose},
                    {"notice", LogLevel::kNotice}, {"warning", LogLevel::kWarning},
                    {"nothing", LogLevel::kNothing}},
                   true);
  Str("pidfile", &ServerConfig::pidfile, false);
  Bool("daemonize", &ServerConfig::daemonize, false);
  Bool("always-show-logo", &ServerConfig::always_show_logo, false);
  Bool("lazyfree-lazy-user-del", &ServerConfig::lazyfree_lazy_user_del, true);
  Bool("lazyfree-lazy-user-flush", &ServerConfig::lazyfree_lazy_user_flush, true);
  Str("requirepass", &ServerConfig::requirepass, true);
  Int("hz", &ServerConfig::hz, 1, 500, true);
  Int("slowlog-log-slower-than", &ServerConfig::slowlog_log_slower_than, -1, INT64_MAX, true);
  Int("slowlog-max-len", &ServerConfig::slowlog_max_len, 0, INT32_MAX, true);
  Int("latency-monitor-threshold", &ServerConfig::latency_monitor_threshold, 0, INT64_MAX, true);
  Bool("latency-tracking", &ServerConfig::latency_tracking, true);
  // A list of percentiles, "50 99 99.9"; "" for none. Texts are Redis's.
  Add("latency-tracking-info-percentiles",
      {[](ServerConfig& c, std::string_view v) {
         std::vector<double> list;
         std::istringstream in{std::string(v)};
         std::string word;
         while (in >> word) {
           char* end = nullptr;
           double d = std::strtod(word.c_str(), &end);
           if (end != word.c_str() + word.size() || std::isnan(d)) {
             return Status::InvalidArgument("Invalid latency-tracking-info-percentiles parameters");
           }
           if (d < 0.0 || d > 100.0) {
             return Status::InvalidArgument(
                 "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]");
           }
           list.push_back(d);
         }
         c.latency_tracking_info_percentiles = std::move(list);
         return Status::OK();
       },
       [](const ServerConfig& c) {
         std::string out;
         for (double p : c.latency_tracking_info_percentiles) {
           out += (out.empty() ? "" : " ") + FormatPercentile(p);
         }
         return out;
       },
       true, {}});
  Memory("maxmemory", &ServerConfig::maxmemory, true);
  Enum("maxmemory-policy", &ServerConfig::maxmemory_policy,
       {"noeviction", "allkeys-lru", "volatile-lru", "allkeys-lfu", "volatile-lfu",
        "allkeys-random", "volatile-random", "volatile-ttl"},
       true);
  Int("maxmemory-samples", &ServerConfig::maxmemory_samples, 1, INT32_MAX, true);
  Int("tracking-table-max-keys", &ServerConfig::tracking_table_max_keys, 0, INT64_MAX, true);
  Int("maxmemory-eviction-tenacity", &ServerConfig::maxmemory_eviction_tenacity, 0, 100, true);
  Int("lfu-log-factor", &ServerConfig::lfu_log_factor, 0, INT32_MAX, true);
  Int("lfu-decay-time", &ServerConfig::lfu_decay_time, 0, INT32_MAX, true);
  Add("notify-keyspace-events",
      {[](ServerConfig& c, std::string_view v) { return ParseKeyspaceEvents(v, &c.notify_keyspace_events); },
       [](const ServerConfig& c) { return KeyspaceEventsToString(c.notify_keyspace_events); }, true, {}});
  Bool("appendonly", &ServerConfig::appendonly, true);
  Choice<aof::FsyncPolicy>("appendfsync", &ServerConfig::appendfsync,
                           {{"everysec", aof::FsyncPolicy::kEverySec},
                            {"always", aof::FsyncPolicy::kAlways},
                            {"no", aof::FsyncPolicy::kNo}},
                           true);
  Str("appendfilename", &ServerConfig::appendfilename, false,
      BaseNameCheck(protocol::err::kAppendfilenameEmpty, protocol::err::kAppendfilenamePath));
  Str("appenddirname", &ServerConfig::appenddirname, false,
      BaseNameCheck(protocol::err::kAppenddirnameEmpty, protocol::err::kAppenddirnamePath));
  Memory("aof-segment-size", &ServerConfig::aof_segment_size, true);
  Int("aof-retain-segments", &ServerConfig::aof_retain_segments, 0, 1000000, true);
  Bool("aof-load-truncated", &ServerConfig::aof_load_truncated, true);
  Add("save", {[](ServerConfig& c, std::string_view v) { return ParseSavePoints(v, &c.save_points); },
               [](const ServerConfig& c) { return FormatSavePoints(c.save_points); }, true, {}});
  Str("dbfilename", &ServerConfig::dbfilename, true, BaseNameCheck(nullptr, protocol::err::kDbfilenamePath));
  Bool("rdbcompression", &ServerConfig::rdbcompression, true);
  Bool("rdbchecksum", &ServerConfig::rdbchecksum, false);
  Bool("stop-writes-on-bgsave-error", &ServerConfig::stop_writes_on_bgsave_error, true);
  // As Redis's setConfigReplicaOfOption: "no one", or a host and a port.
  Str("replicaof", &ServerConfig::replicaof, false, [](std::string_view v) {
    std::vector<std::string> words;
    if (!protocol::SplitInlineArgs(v, &words) || (!v.empty() && words.size() != 2)) {
      return Status::InvalidArgument("wrong number of arguments");
    }
    if (words.empty() || (LowerAscii(words[0]) == "no" && LowerAscii(words[1]) == "one")) return Status::OK();
    int64_t port = -1;
    const auto [end, ec] = std::from_chars(words[1].data(), words[1].data() + words[1].size(), port);
    if (ec != std::errc() || end != words[1].data() + words[1].size() || port < 0 || port > 65535) {
      return Status::InvalidArgument("Invalid master port");
    }
    return Status::OK();
  });
  Bool("replica-read-only", &ServerConfig::replica_read_only, true);
  Str("masteruser", &ServerConfig::masteruser, true);
  Str("masterauth", &ServerConfig::masterauth, true);
  Int("repl-timeout", &ServerConfig::repl_timeout, 1, INT32_MAX, true);
  Int("repl-ping-replica-period", &ServerConfig::repl_ping_replica_period, 1, INT32_MAX, true);
  Int("min-replicas-to-write", &ServerConfig::min_replicas_to_write, 0, INT32_MAX, true);
  Int("min-replicas-max-lag", &ServerConfig::min_replicas_max_lag, 0, INT32_MAX, true);
  Bool("replica-serve-stale-data", &ServerConfig::replica_serve_stale_data, true);
  Str("replica-announce-ip", &ServerConfig::replica_announce_ip, true);
  Int("replica-announce-port", &ServerConfig::replica_announce_port, 0, 65535, true);
  Int("repl-retain-max-age", &ServerConfig::repl_retain_max_age, 0, INT64_MAX, true);
  Memory("repl-retain-max-bytes", &ServerConfig::repl_retain_max_bytes, true);
  Int("repl-retain-min-free-disk", &ServerConfig::repl_retain_min_free_disk, 0, 100, true);
  Double("longset-max-fill", &ServerConfig::longset_max_fill, LongSetOptions::kMinMaxFill,
         LongSetOptions::kMaxMaxFill, true);
  Double("longset-growth-factor", &ServerConfig::longset_growth_factor, LongSetOptions::kMinGrowth,
         LongSetOptions::kMaxGrowth, true);
  Bool("longset-auto-grow", &ServerConfig::longset_auto_grow, true);
  Memory("counter-table-size", &ServerConfig::counter_table_size, true);
  Double("counter-table-max-fill", &ServerConfig::counter_table_max_fill, 0.1, 0.99, true);
  Int("counter-max-probes", &ServerConfig::counter_max_probes, 1, 1 << 20, true);
  Memory("counter-memory-limit", &ServerConfig::counter_memory_limit, true);
  Memory("counter-cold-cache-size", &ServerConfig::counter_cold_cache_size, true);
  Int("counter-cold-writeback-interval", &ServerConfig::counter_cold_writeback_interval, 1, 3600000, true);
  Str("cold-dir", &ServerConfig::cold_dir, false);
  Int("cold-read-threads", &ServerConfig::cold_read_threads, 1, 64, false);
  Int("cold-read-batch", &ServerConfig::cold_read_batch, 1, 4096, true);
  Memory("cold-block-cache-size", &ServerConfig::cold_block_cache_size, false);
  Int("cold-bloom-bits-per-key", &ServerConfig::cold_bloom_bits_per_key, 1, 64, false);
  Int("set-max-intset-entries", &ServerConfig::set_max_intset_entries, 0, INT64_MAX, true);
  Int("set-max-listpack-entries", &ServerConfig::set_max_listpack_entries, 0, INT64_MAX, true);
  Int("feed-outbox-max-len", &ServerConfig::feed_outbox_max_len, 1, 1 << 20, true);
  Int("feed-inbox-max-len", &ServerConfig::feed_inbox_max_len, 1, 1 << 20, true);
  Int("feed-push-max-followers", &ServerConfig::feed_push_max_followers, 0, INT64_MAX, true);
  Int("feed-follow-backfill", &ServerConfig::feed_follow_backfill, 0, 1 << 20, true);
  Int("feed-max-page", &ServerConfig::feed_max_page, 1, 100000, true);
  Int("feed-unread-cap", &ServerConfig::feed_unread_cap, 1, 1 << 20, true);
  Int("feed-pull-max-followings", &ServerConfig::feed_pull_max_followings, 1, 1 << 24, true);
  Int("feed-inbox-idle-ttl", &ServerConfig::feed_inbox_idle_ttl, 0, 100ll * 365 * 86400, true);
  Int("feed-delete-ttl", &ServerConfig::feed_delete_ttl, 0, 100ll * 365 * 86400, true);
  Int("zset-max-listpack-entries", &ServerConfig::zset_max_listpack_entries, 0, INT64_MAX, true);
  Memory("zset-max-listpack-value", &ServerConfig::zset_max_listpack_value, true);
  Int("hash-max-listpack-entries", &ServerConfig::hash_max_listpack_entries, 0, INT64_MAX, true);
  Memory("hash-max-listpack-value", &ServerConfig::hash_max_listpack_value, true);
  Memory("hll-sparse-max-bytes", &ServerConfig::hll_sparse_max_bytes, true);
  Int("list-max-listpack-size", &ServerConfig::list_max_listpack_size, INT32_MIN, INT32_MAX, true);
  Memory("stream-node-max-bytes", &ServerConfig::stream_node_max_bytes, true);
  Int("stream-node-max-entries", &ServerConfig::stream_node_max_entries, 0, INT64_MAX, true);
  AddBloomSettings();
  // Where the server writes files: CONFIG SET may change these only when
  // enable-protected-configs allows it (Redis 7's PROTECTED_CONFIG list).
  for (const char* name : {"dir", "dbfilename"}) entries_.at(name).protected_config = true;
  entries_.at("dir").set(values_, ".").PermitUnchecked();  // CONFIG GET dir is absolute
  AddAlias("zset-max-ziplist-entries", "zset-max-listpack-entries");
  AddAlias("zset-max-ziplist-value", "zset-max-listpack-value");
  AddAlias("hash-max-ziplist-entries", "hash-max-listpack-entries");
  AddAlias("hash-max-ziplist-value", "hash-max-listpack-value");
  AddAlias("list-max-ziplist-size", "list-max-listpack-size");
  AddAlias("slaveof", "replicaof");
  AddAlias("slave-read-only", "replica-read-only");
  AddAlias("repl-ping-slave-period", "repl-ping-replica-period");
  AddAlias("min-slaves-to-write", "min-replicas-to-write");
  AddAlias("min-slaves-max-lag", "min-replicas-max-lag");
  AddAlias("slave-serve-stale-data", "replica-serve-stale-data");
  AddAlias("slave-announce-ip", "replica-announce-ip");
  AddAlias("slave-announce-port", "replica-announce-port");
  AddCompatSettings();
}

void Config::AddBloomSettings() {
  // RedisBloom's setFloatValue/setIntegerValue: its own texts, and an error rate
  // above 0.25 is stored as 0.25.
  Add("bf-error-rate", {[](ServerConfig& c, std::string_view v) {
                          double x;
                          if (!ParseDouble(v, &x)) return Status::InvalidArgument("Invalid value for `bf-error-rate`");
                          if (!(x > 0 && x < 1)) {
                            return Status::InvalidArgument(
                                "Value for `bf-error-rate` must be in the range (0.000000, 1.000000)");
                          }
                          c.bf_error_rate = std::min(x, 0.25);
                          return Status::OK();
                        },
                        [](const ServerConfig& c) { return FormatDoubleValue(c.bf_error_rate); }, true, {}});
  auto integer = [this](const std::string& name, int64_t ServerConfig::*f, int64_t min, int64_t max) {
    Add(name, {[name, f, min, max](ServerConfig& c, std::string_view v) {
                 int64_t x;
                 if (!ParseCanonicalInt64(v, &x)) return Status::InvalidArgument(fmt::format("Invalid value for `{}`", name));
                 if (x < min || x > max) {
                   return Status::InvalidArgument(
                       fmt::format("Value for `{}` must be in the range [{}, {}]", name, min, max));
                 }
                 c.*f = x;
                 return Status::OK();
               },
               [f](const ServerConfig& c) { return std::to_string(c.*f); }, true, {}});
  };
  integer("bf-initial-size", &ServerConfig::bf_initial_size, 1, int64_t{1} << 30);
  integer("bf-expansion-factor", &ServerConfig::bf_expansion_factor, 0, 32768);
  Memory("bf-max-filter-bytes", &ServerConfig::bf_max_filter_bytes, true, 1);
}

Status Config::Set(std::string_view name, std::string_view value, bool at_runtime, bool local_client) {
  const std::string* canonical = Resolve(LowerAscii(name));
  auto it = canonical ? entries_.find(*canonical) : entries_.end();
  if (it == entries_.end()) {
    return Status::InvalidArgument(fmt::format("Unknown option or number of arguments for CONFIG SET - '{}'", name));
  }
  // Redis names the argument as the client spelled it.
  auto failed = [name](std::string_view why) { return Status::InvalidArgument(ConfigSetFailed(name, why)); };
  if (at_runtime && !it->second.mutable_at_runtime) {
    // feedkv's own fixed settings (cold-*) take their current value as a no-op,
    // so a tool that sets back everything CONFIG GET * lists (Redis's own
    // "CONFIG sanity" test) passes; Redis's fixed settings refuse, as Redis.
    ServerConfig trial = values_;
    if (!it->first.starts_with("cold-") || !it->second.set(trial, value).ok() ||
        it->second.get(trial) != it->second.get(values_)) {
      return failed(protocol::err::kConfigImmutable);
    }
    return Status::OK();
  }
  if (at_runtime && it->second.protected_config &&
      !AllowProtectedAction(values_.enable_protected_configs, local_client)) {
    return failed(protocol::err::kConfigProtected);
  }
  Status s = it->second.set(values_, value);
  if (!s.ok()) return failed(s.message());
  if (at_runtime && on_change_) on_change_(it->first);
  return Status::OK();
}

std::vector<std::pair<std::string, std::string>> Config::Get(std::string_view pattern) const {
  std::vector<std::pair<std::string, std::string>> out;
  // As Redis: a pattern with no [ * or ? (before any NUL, as strpbrk sees it)
  // is a name looked up as is, so a backslash there escapes nothing, and the
  // reply names the setting as the client spelled it.
  if (pattern.substr(0, pattern.find('\0')).find_first_of("[*?") == std::string_view::npos) {
    if (const std::string* name = Resolve(LowerAscii(pattern))) {
      out.emplace_back(std::string(pattern), entries_.at(*name).get(values_));
    }
    return out;
  }
  for (const auto& [name, e] : entries_) {
    if (!e.hidden && GlobMatch(pattern, name, true)) out.emplace_back(name, e.get(values_));
  }
  for (const auto& [alias, name] : aliases_) {
    const Entry& e = entries_.at(name);
    if (!e.hidden && GlobMatch(pattern, alias, true)) out.emplace_back(alias, e.get(values_));
  }
  return out;
}

bool Config::Exists(std::string_view name) const { return Resolve(LowerAscii(name)) != nullptr; }

Status Config::SetAtStartup(std::string_view name, std::string_view value) {
  // As Redis reads its config (file, then command line): the first `save`
  // replaces the default points, later ones add theirs; `save ""` clears.
  if (LowerAscii(name) == "user") {
    std::vector<std::string> argv;
    if (!protocol::SplitInlineArgs(value, &argv) || argv.empty()) {
      return Status::InvalidArgument("'user' needs a username and rules");
    }
    argv.insert(argv.begin(), "user");
    values_.acl_user_lines.push_back(std::move(argv));
    return Status::OK();
  }
  const bool save = LowerAscii(name) == "save";
  if (save && save_loaded_ && !value.empty()) {
    std::vector<std::pair<int64_t, int64_t>> more;
    Status s = ParseSavePoints(value, &more);
    if (!s.ok()) return s;
    values_.save_points.insert(values_.save_points.end(), more.begin(), more.end());
    return Status::OK();
  }
  if (save) save_loaded_ = true;
  return Set(name, value, false);
}

Status Config::Rewrite(std::span<const std::string> user_lines, bool force_all) const {
  if (file_.empty()) {
    return Status::InvalidArgument("The server is running without a config file");
  }
  std::ifstream in(file_);
  std::vector<std::string> lines;
  std::set<std::string> written;
  size_t next_user = 0;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> argv;
    if (protocol::SplitInlineArgs(line, &argv) && !argv.empty() && argv[0][0] != '#') {
      if (LowerAscii(argv[0]) == "user") {
        if (next_user < user_lines.size()) lines.push_back(user_lines[next_user++]);
        continue;
      }
      const std::string* name = Resolve(LowerAscii(argv[0]));
      const std::string key = name ? *name : LowerAscii(argv[0]);
      auto it = entries_.find(key);
      if (it != entries_.end()) {
        if (written.insert(key).second) lines.push_back(key + " " + QuoteIfNeeded(it->second.get(values_)));
        continue;  // duplicates of a rewritten directive are dropped
      }
    }
    lines.push_back(line);
  }
  for (const auto& [name, e] : entries_) {
    std::string v = e.get(values_);
    const bool wanted = v != e.default_value || (force_all && !e.hidden && !v.empty());
    if (!written.count(name) && wanted) lines.push_back(name + " " + QuoteIfNeeded(v));
  }
  for (; next_user < user_lines.size(); next_user++) lines.push_back(user_lines[next_user]);
  std::string tmp = file_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    for (const auto& l : lines) out << l << "\n";
    if (!out.flush()) return Status::IOError("can't write " + tmp);
  }
  if (std::rename(tmp.c_str(), file_.c_str()) != 0) return Status::IOError("rename failed");
  return Status::OK();
}

}  // namespace feedkv::server
