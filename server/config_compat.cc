// The Redis 7.0 settings feedkv accepts with Redis's names, aliases, types,
// ranges, defaults and error texts, so tools and test harnesses that send
// them between steps keep working. Those that change nothing in feedkv are
// listed in docs/configuration.md ("Accepted for compatibility"); a setting
// that feedkv implements has its own row in config.cc instead.
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "server/command_context.h"
#include "server/command_table.h"
#include "server/config.h"

namespace feedkv::server {

namespace {

enum class Kind { kBool, kInt, kMemory, kEnum, kString, kFlags };

// One Redis setting with no feedkv behaviour behind it (yet).
struct CompatSetting {
  const char* name;
  const char* alias;  // the old name (slave-*, *-ziplist-*), or nullptr
  Kind kind;
  const char* default_value;
  int64_t min = 0;
  int64_t max = 0;
  const char* choices = nullptr;  // kEnum / kFlags: space-separated
  bool mutable_at_runtime = true;
  bool hidden = false;  // Redis's HIDDEN_CONFIG: exact names only, not in CONFIG GET *
};

constexpr int64_t kIntMax = INT_MAX;
constexpr int64_t kIntMin = INT_MIN;
constexpr int64_t kLongMax = LLONG_MAX;

constexpr bool kImmutable = false;

const CompatSetting kSettings[] = {
    // Booleans.
    {"rdb-del-sync-files", nullptr, Kind::kBool, "no"},
    {"activerehashing", nullptr, Kind::kBool, "yes"},
    {"set-proc-title", nullptr, Kind::kBool, "yes", 0, 0, nullptr, kImmutable},
    {"dynamic-hz", nullptr, Kind::kBool, "yes"},
    {"lazyfree-lazy-eviction", nullptr, Kind::kBool, "no"},
    {"lazyfree-lazy-expire", nullptr, Kind::kBool, "no"},
    {"lazyfree-lazy-server-del", nullptr, Kind::kBool, "no"},
    {"repl-disable-tcp-nodelay", nullptr, Kind::kBool, "no"},
    {"repl-diskless-sync", nullptr, Kind::kBool, "yes"},
    {"aof-rewrite-incremental-fsync", nullptr, Kind::kBool, "yes"},
    {"no-appendfsync-on-rewrite", nullptr, Kind::kBool, "no"},
    {"cluster-require-full-coverage", nullptr, Kind::kBool, "yes"},
    {"rdb-save-incremental-fsync", nullptr, Kind::kBool, "yes"},
    {"aof-use-rdb-preamble", nullptr, Kind::kBool, "yes"},
    {"aof-timestamp-enabled", nullptr, Kind::kBool, "no"},
    {"cluster-replica-no-failover", "cluster-slave-no-failover", Kind::kBool, "no"},
    {"replica-lazy-flush", "slave-lazy-flush", Kind::kBool, "no"},
    {"replica-ignore-maxmemory", "slave-ignore-maxmemory", Kind::kBool, "yes"},
    {"replica-ignore-disk-write-errors", nullptr, Kind::kBool, "no"},
    {"jemalloc-bg-thread", nullptr, Kind::kBool, "yes"},
    {"syslog-enabled", nullptr, Kind::kBool, "no", 0, 0, nullptr, kImmutable},
    {"cluster-enabled", nullptr, Kind::kBool, "no", 0, 0, nullptr, kImmutable},
    {"cluster-allow-reads-when-down", nullptr, Kind::kBool, "no"},
    {"cluster-allow-pubsubshard-when-down", nullptr, Kind::kBool, "yes"},
    {"crash-log-enabled", nullptr, Kind::kBool, "yes"},
    {"crash-memcheck-enabled", nullptr, Kind::kBool, "yes"},
    {"use-exit-on-panic", nullptr, Kind::kBool, "no", 0, 0, nullptr, true, true},
    {"disable-thp", nullptr, Kind::kBool, "yes", 0, 0, nullptr, kImmutable},
    {"cluster-allow-replica-migration", nullptr, Kind::kBool, "yes"},
    {"replica-announced", nullptr, Kind::kBool, "yes"},
    {"aof-disable-auto-gc", nullptr, Kind::kBool, "no"},
    {"io-threads-do-reads", nullptr, Kind::kBool, "no", 0, 0, nullptr, kImmutable},
    {"tls-cluster", nullptr, Kind::kBool, "no"},
    {"tls-replication", nullptr, Kind::kBool, "no"},
    {"tls-prefer-server-ciphers", nullptr, Kind::kBool, "no"},
    {"tls-session-caching", nullptr, Kind::kBool, "yes"},
    // Strings.
    {"aclfile", nullptr, Kind::kString, "", 0, 0, nullptr, kImmutable},
    {"cluster-announce-ip", nullptr, Kind::kString, ""},
    {"cluster-config-file", nullptr, Kind::kString, "nodes.conf", 0, 0, nullptr, kImmutable},
    {"cluster-announce-hostname", nullptr, Kind::kString, ""},
    {"syslog-ident", nullptr, Kind::kString, "redis", 0, 0, nullptr, kImmutable},
    {"server_cpulist", nullptr, Kind::kString, "", 0, 0, nullptr, kImmutable},
    {"bio_cpulist", nullptr, Kind::kString, "", 0, 0, nullptr, kImmutable},
    {"aof_rewrite_cpulist", nullptr, Kind::kString, "", 0, 0, nullptr, kImmutable},
    {"bgsave_cpulist", nullptr, Kind::kString, "", 0, 0, nullptr, kImmutable},
    {"ignore-warnings", nullptr, Kind::kString, ""},
    {"proc-title-template", nullptr, Kind::kString, "{title} {listen-addr} {server-mode}"},
    {"bind-source-addr", nullptr, Kind::kString, ""},
    {"tls-cert-file", nullptr, Kind::kString, ""},
    {"tls-key-file", nullptr, Kind::kString, ""},
    {"tls-key-file-pass", nullptr, Kind::kString, ""},
    {"tls-client-cert-file", nullptr, Kind::kString, ""},
    {"tls-client-key-file", nullptr, Kind::kString, ""},
    {"tls-client-key-file-pass", nullptr, Kind::kString, ""},
    {"tls-dh-params-file", nullptr, Kind::kString, ""},
    {"tls-ca-cert-file", nullptr, Kind::kString, ""},
    {"tls-ca-cert-dir", nullptr, Kind::kString, ""},
    {"tls-protocols", nullptr, Kind::kString, ""},
    {"tls-ciphers", nullptr, Kind::kString, ""},
    {"tls-ciphersuites", nullptr, Kind::kString, ""},
    // Enumerations.
    {"supervised", nullptr, Kind::kEnum, "no", 0, 0, "upstart systemd auto no", kImmutable},
    {"syslog-facility", nullptr, Kind::kEnum, "local0", 0, 0,
     "user local0 local1 local2 local3 local4 local5 local6 local7", kImmutable},
    {"repl-diskless-load", nullptr, Kind::kEnum, "disabled", 0, 0, "disabled on-empty-db swapdb"},
    {"oom-score-adj", nullptr, Kind::kEnum, "no", 0, 0, "no yes relative absolute"},
    {"acl-pubsub-default", nullptr, Kind::kEnum, "resetchannels", 0, 0, "allchannels resetchannels"},
    {"sanitize-dump-payload", nullptr, Kind::kEnum, "no", 0, 0, "no yes clients"},
    {"enable-module-command", nullptr, Kind::kEnum, "no", 0, 0, "no yes local", kImmutable},
    {"cluster-preferred-endpoint-type", nullptr, Kind::kEnum, "ip", 0, 0, "ip hostname unknown-endpoint"},
    {"propagation-error-behavior", nullptr, Kind::kEnum, "ignore", 0, 0, "ignore panic panic-on-replicas"},
    {"shutdown-on-sigint", nullptr, Kind::kFlags, "default", 0, 0, "default save nosave now force"},
    {"shutdown-on-sigterm", nullptr, Kind::kFlags, "default", 0, 0, "default save nosave now force"},
    {"tls-auth-clients", nullptr, Kind::kEnum, "yes", 0, 0, "no yes optional"},
    // Integers.
    {"io-threads", nullptr, Kind::kInt, "1", 1, 128, nullptr, kImmutable},
    {"auto-aof-rewrite-percentage", nullptr, Kind::kInt, "100", 0, kIntMax},
    {"cluster-replica-validity-factor", "cluster-slave-validity-factor", Kind::kInt, "10", 0, kIntMax},
    {"cluster-migration-barrier", nullptr, Kind::kInt, "1", 0, kIntMax},
    {"active-defrag-cycle-min", nullptr, Kind::kInt, "1", 1, 99},
    {"active-defrag-cycle-max", nullptr, Kind::kInt, "25", 1, 99},
    {"active-defrag-threshold-lower", nullptr, Kind::kInt, "10", 0, 1000},
    {"active-defrag-threshold-upper", nullptr, Kind::kInt, "100", 0, 1000},
    {"replica-priority", "slave-priority", Kind::kInt, "100", 0, kIntMax},
    {"repl-diskless-sync-delay", nullptr, Kind::kInt, "5", 0, kIntMax},
    {"cluster-port", nullptr, Kind::kInt, "0", 0, 65535, nullptr, kImmutable},
    {"cluster-announce-bus-port", nullptr, Kind::kInt, "0", 0, 65535},
    {"cluster-announce-port", nullptr, Kind::kInt, "0", 0, 65535},
    {"cluster-announce-tls-port", nullptr, Kind::kInt, "0", 0, 65535},
    {"list-compress-depth", nullptr, Kind::kInt, "0", 0, kIntMax},
    {"key-load-delay", nullptr, Kind::kInt, "0", kIntMin, kIntMax, nullptr, true, true},
    {"active-expire-effort", nullptr, Kind::kInt, "1", 1, 10},
    {"watchdog-period", nullptr, Kind::kInt, "0", 0, kIntMax, nullptr, true, true},
    {"shutdown-timeout", nullptr, Kind::kInt, "10", 0, kIntMax},
    {"repl-diskless-sync-max-replicas", nullptr, Kind::kInt, "0", 0, kIntMax},
    {"socket-mark-id", nullptr, Kind::kInt, "0", 0, 4294967295LL, nullptr, kImmutable},
    {"active-defrag-max-scan-fields", nullptr, Kind::kInt, "1000", 1, kLongMax},
    {"acllog-max-len", nullptr, Kind::kInt, "128", 0, kLongMax},
    {"busy-reply-threshold", "lua-time-limit", Kind::kInt, "5000", 0, kLongMax},
    {"cluster-node-timeout", nullptr, Kind::kInt, "15000", 0, kLongMax},
    {"repl-backlog-ttl", nullptr, Kind::kInt, "3600", 0, kLongMax},
    {"tls-port", nullptr, Kind::kInt, "0", 0, 65535},
    {"tls-session-cache-size", nullptr, Kind::kInt, "20480", 0, kIntMax},
    {"tls-session-cache-timeout", nullptr, Kind::kInt, "300", 0, kIntMax},
    {"loading-process-events-interval-bytes", nullptr, Kind::kInt, "2097152", 1024, kIntMax, nullptr,
     true, true},
    // Memory sizes (k/kb/m/mb/g/gb units).
    {"repl-backlog-size", nullptr, Kind::kMemory, "1048576", 1, kLongMax},
    {"cluster-link-sendbuf-limit", nullptr, Kind::kMemory, "0", 0, kLongMax},
    {"active-defrag-ignore-bytes", nullptr, Kind::kMemory, "104857600", 1, kLongMax},
    {"auto-aof-rewrite-min-size", nullptr, Kind::kMemory, "67108864", 0, kLongMax},
};

std::vector<std::string_view> Words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') i++;
    size_t j = i;
    while (j < s.size() && s[j] != ' ') j++;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

// Validates `v` as `s` says and returns the value CONFIG GET shows afterwards.
Status Check(const CompatSetting& s, std::string_view v, std::string* out) {
  switch (s.kind) {
    case Kind::kBool: {
      const std::string l = LowerAscii(v);
      if (l != "yes" && l != "no") return Status::InvalidArgument("argument must be 'yes' or 'no'");
      *out = l;
      return Status::OK();
    }
    case Kind::kInt:
    case Kind::kMemory: {
      int64_t x;
      if (s.kind == Kind::kInt ? !ParseCanonicalInt64(v, &x) : !ParseMemory(v, &x)) {
        return Status::InvalidArgument(s.kind == Kind::kInt ? "argument couldn't be parsed into an integer"
                                                            : "argument must be a memory value");
      }
      if (x < s.min || x > s.max) {
        return Status::InvalidArgument(fmt::format("argument must be between {} and {} inclusive", s.min, s.max));
      }
      *out = std::to_string(x);
      return Status::OK();
    }
    case Kind::kEnum:
    case Kind::kFlags: {
      const std::vector<std::string_view> choices = Words(s.choices);
      const std::string l = LowerAscii(v);
      std::vector<std::string_view> given = s.kind == Kind::kEnum ? std::vector<std::string_view>{l} : Words(l);
      bool ok = !given.empty();
      for (std::string_view g : given) ok = ok && std::find(choices.begin(), choices.end(), g) != choices.end();
      if (!ok) {
        return Status::InvalidArgument(
            fmt::format("argument(s) must be one of the following: {}", fmt::join(choices, ", ")));
      }
      if (s.kind == Kind::kEnum) {
        *out = l;
        return Status::OK();
      }
      // As Redis's flag configs read back: the set flags in declaration order
      // ("default" is no flag: shown only alone).
      std::vector<std::string_view> set;
      for (std::string_view c : choices) {
        if (c != "default" && std::find(given.begin(), given.end(), c) != given.end()) set.push_back(c);
      }
      *out = set.empty() ? std::string(choices.front()) : fmt::format("{}", fmt::join(set, " "));
      return Status::OK();
    }
    case Kind::kString:
      *out = std::string(v);
      return Status::OK();
  }
  return Status::OK();
}

}  // namespace

void Config::AddCompatSettings() {
  for (const CompatSetting& s : kSettings) {
    const std::string name = s.name;
    AddCompat(name, s.default_value, s.mutable_at_runtime, s.hidden,
              [&s](std::string_view v, std::string* shown) { return Check(s, v, shown); });
    if (s.alias != nullptr) AddAlias(s.alias, name);
  }
  // Settings whose values are not one of the kinds above.
  AddCompat("activedefrag", "no", true, false, [](std::string_view v, std::string* shown) {
    std::string l = LowerAscii(v);
    if (l != "yes" && l != "no") return Status::InvalidArgument("argument must be 'yes' or 'no'");
    // feedkv runs on glibc malloc, as a Redis built without its jemalloc.
    if (l == "yes") {
      return Status::InvalidArgument(
          "Active defragmentation cannot be enabled: it requires a Redis server compiled with a "
          "modified Jemalloc like the one shipped by default with the Redis source distribution");
    }
    *shown = l;
    return Status::OK();
  });
  AddCompat("maxmemory-clients", "0", true, false, [](std::string_view v, std::string* shown) {
    int64_t x;
    if (!v.empty() && v.back() == '%') {
      if (!ParseCanonicalInt64(v.substr(0, v.size() - 1), &x) || x < 0) {
        return Status::InvalidArgument("argument must be a memory or percent value");
      }
      if (x > 100) return Status::InvalidArgument("percentage argument must be less or equal to 100");
      *shown = fmt::format("{}%", x);
      return Status::OK();
    }
    if (!ParseMemory(v, &x)) return Status::InvalidArgument("argument must be a memory or percent value");
    *shown = std::to_string(x);
    return Status::OK();
  });
  AddCompat("oom-score-adj-values", "0 200 800", true, false, [](std::string_view v, std::string* shown) {
    const std::vector<std::string_view> words = Words(v);
    if (words.size() != 3) return Status::InvalidArgument("wrong number of arguments");
    std::vector<int64_t> values;
    for (std::string_view w : words) {
      int64_t x;
      if (!ParseCanonicalInt64(w, &x) || x < -2000 || x > 2000) {
        return Status::InvalidArgument(
            "Invalid oom-score-adj-values, elements must be between -2000 and 2000.");
      }
      values.push_back(x);
    }
    *shown = fmt::format("{}", fmt::join(values, " "));
    return Status::OK();
  });
}

void Config::AddCompat(const std::string& name, const std::string& default_value, bool mut,
                       bool hidden, std::function<Status(std::string_view, std::string*)> check) {
  values_.compat[name] = default_value;
  Entry e{[name, check](ServerConfig& c, std::string_view v) {
            std::string shown;
            Status st = check(v, &shown);
            if (st.ok()) c.compat[name] = std::move(shown);
            return st;
          },
          [name](const ServerConfig& c) { return c.compat.at(name); }, mut, {}};
  e.hidden = hidden;
  Add(name, std::move(e));
}

}  // namespace feedkv::server
