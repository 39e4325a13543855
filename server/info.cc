#include "server/info.h"
#include "server/allocator.h"
#include "server/monotonic_clock.h"

#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fmt/format.h>
#include <set>

#include "server/network.h"
#include "server/script_engine.h"
#include "server/server.h"
#include "server/startup.h"
#include "storage/bloom_chain.h"
#include "storage/database.h"
#include "storage/set_value.h"

namespace feedkv::server {

std::string BytesToHuman(uint64_t n) {
  double d = static_cast<double>(n);
  if (n < 1024) return fmt::format("{}B", n);
  if (n < 1024ull * 1024) return fmt::format("{:.2f}K", d / 1024);
  if (n < 1024ull * 1024 * 1024) return fmt::format("{:.2f}M", d / (1024 * 1024));
  if (n < 1024ull * 1024 * 1024 * 1024) return fmt::format("{:.2f}G", d / (1024.0 * 1024 * 1024));
  return fmt::format("{:.2f}T", d / (1024.0 * 1024 * 1024 * 1024));
}

namespace {

double TimevalSec(const timeval& tv) { return tv.tv_sec + tv.tv_usec / 1e6; }

void Server_(Server& s, std::string* o) {
  utsname u;
  uname(&u);
  int64_t now_us = NowUs();
  int64_t uptime = (NowMs() - s.start_time_ms()) / 1000;
  *o += fmt::format(
      "redis_version:{}\r\nfeedkv_version:{}\r\nredis_git_sha1:00000000\r\nredis_git_dirty:0\r\n"
      "redis_build_id:0\r\nredis_mode:standalone\r\nos:{} {} {}\r\narch_bits:64\r\n"
      "monotonic_clock:{}\r\nmultiplexing_api:epoll\r\natomicvar_api:c11-builtin\r\n"
      "gcc_version:{}.{}.{}\r\nprocess_id:{}\r\nprocess_supervised:no\r\nrun_id:{}\r\ntcp_port:{}\r\n"
      "server_time_usec:{}\r\nuptime_in_seconds:{}\r\nuptime_in_days:{}\r\nhz:{}\r\n"
      "configured_hz:{}\r\nlru_clock:{}\r\nexecutable:\r\nconfig_file:{}\r\nio_threads_active:0\r\n",
      kRedisCompatVersion, kFeedkvVersion, u.sysname, u.release, u.machine,
      MonotonicClock::Description(), __GNUC__,
      __GNUC_MINOR__, __GNUC_PATCHLEVEL__, getpid(), s.run_id(), s.tcp_port(), now_us, uptime,
      uptime / 86400, s.cfg().hz, s.cfg().hz, (now_us / 1000000) & ((1 << 24) - 1),
      s.config().file());
}

void Clients(Server& s, std::string* o) {
  size_t max_in = 0, max_out = 0;
  for (const auto& [id, c] : s.connections()) {
    max_in = std::max(max_in, c->client().query_buffer_size);
    max_out = std::max(max_out, c->client().out.size());
  }
  *o += fmt::format(
      "connected_clients:{}\r\ncluster_connections:0\r\nmaxclients:{}\r\n"
      "client_recent_max_input_buffer:{}\r\nclient_recent_max_output_buffer:{}\r\n"
      "blocked_clients:{}\r\ntracking_clients:{}\r\nclients_in_timeout_table:{}\r\n"
      "total_blocking_keys:{}\r\ntotal_blocking_keys_on_nokey:0\r\n",
      s.num_clients(), s.cfg().maxclients, max_in, max_out, s.waiting().parked(), s.tracking().clients(),
      s.waiting().with_timeout(), s.waiting().keys_waited());
}

double Ratio(size_t a, size_t b) { return b == 0 ? 0.0 : static_cast<double>(a) / static_cast<double>(b); }

int64_t Diff(size_t a, size_t b) { return static_cast<int64_t>(a) - static_cast<int64_t>(b); }

void Memory(Server& s, std::string* o) {
  size_t used = s.UsedMemory();
  size_t rss = ResidentBytes();
  size_t dataset = std::min(used, s.DatasetMemory());
  size_t peak = std::max(s.peak_memory(), used);
  const AllocatorStats al = ReadAllocatorStats();
  long pages = sysconf(_SC_PHYS_PAGES);
  uint64_t total = static_cast<uint64_t>(pages) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  ScriptEngine& scripts = s.scripts();
  const size_t lua = scripts.lua_memory();
  *o += fmt::format(
      "used_memory:{}\r\nused_memory_human:{}\r\nused_memory_rss:{}\r\nused_memory_rss_human:{}\r\n"
      "used_memory_peak:{}\r\nused_memory_peak_human:{}\r\nused_memory_peak_perc:{:.2f}%\r\n"
      "used_memory_overhead:{}\r\nused_memory_startup:0\r\nused_memory_dataset:{}\r\n"
      "used_memory_dataset_perc:{:.2f}%\r\n"
      "allocator_allocated:{}\r\nallocator_active:{}\r\nallocator_resident:{}\r\n"
      "total_system_memory:{}\r\ntotal_system_memory_human:{}\r\n"
      "used_memory_lua:{}\r\nused_memory_vm_eval:{}\r\nused_memory_lua_human:{}\r\n"
      "used_memory_scripts_eval:{}\r\nnumber_of_cached_scripts:{}\r\nnumber_of_functions:{}\r\n"
      "number_of_libraries:{}\r\nused_memory_vm_functions:0\r\nused_memory_vm_total:{}\r\n"
      "used_memory_vm_total_human:{}\r\nused_memory_functions:{}\r\nused_memory_scripts:{}\r\n"
      "used_memory_scripts_human:{}\r\nmaxmemory:{}\r\n"
      "maxmemory_human:{}\r\nmaxmemory_policy:{}\r\n",
      used, BytesToHuman(used), rss, BytesToHuman(rss), peak, BytesToHuman(peak),
      peak ? 100.0 * used / peak : 0.0, used - dataset, dataset, used ? 100.0 * dataset / used : 0.0,
      al.allocated, al.active, al.resident, total, BytesToHuman(total), lua, lua, BytesToHuman(lua),
      scripts.scripts_memory(), scripts.num_scripts(), scripts.num_functions(), scripts.libraries().size(),
      lua, BytesToHuman(lua), scripts.functions_memory(),
      scripts.scripts_memory() + scripts.functions_memory(),
      BytesToHuman(scripts.scripts_memory() + scripts.functions_memory()), s.cfg().maxmemory,
      BytesToHuman(s.cfg().maxmemory), s.cfg().maxmemory_policy);
  // Redis's fragmentation figures: live blocks -> their pages -> the
  // allocator's resident mappings -> the process's RSS.
  *o += fmt::format(
      "allocator_frag_ratio:{:.2f}\r\nallocator_frag_bytes:{}\r\nallocator_rss_ratio:{:.2f}\r\n"
      "allocator_rss_bytes:{}\r\nrss_overhead_ratio:{:.2f}\r\nrss_overhead_bytes:{}\r\n"
      "mem_fragmentation_ratio:{:.2f}\r\nmem_fragmentation_bytes:{}\r\n"
      "mem_not_counted_for_evict:0\r\nmem_replication_backlog:0\r\n"
      "mem_total_replication_buffers:0\r\nmem_clients_slaves:0\r\nmem_clients_normal:{}\r\n"
      "mem_cluster_links:0\r\nmem_aof_buffer:0\r\nmem_allocator:{}\r\nactive_defrag_running:0\r\n"
      "lazyfree_pending_objects:{}\r\nlazyfreed_objects:{}\r\n",
      Ratio(al.active, al.allocated), Diff(al.active, al.allocated), Ratio(al.resident, al.active),
      al.resident ? Diff(al.resident, al.active) : 0, Ratio(rss, al.resident),
      al.resident ? Diff(rss, al.resident) : 0, Ratio(rss, used), Diff(rss, used), s.ClientMemory(),
      AllocatorName(), s.lazy_free().pending(), s.lazy_free().freed());
}

void Persistence(Server& s, std::string* o) {
  *o += fmt::format(
      "loading:{}\r\nasync_loading:0\r\ncurrent_cow_peak:0\r\nrdb_changes_since_last_save:{}\r\n"
      "rdb_bgsave_in_progress:0\r\nrdb_last_save_time:{}\r\nrdb_last_bgsave_status:ok\r\n"
      "rdb_last_bgsave_time_sec:-1\r\nrdb_current_bgsave_time_sec:-1\r\naof_enabled:0\r\n"
      "aof_rewrite_in_progress:0\r\naof_rewrite_scheduled:0\r\naof_last_rewrite_time_sec:-1\r\n"
      "aof_current_rewrite_time_sec:-1\r\naof_last_bgrewrite_status:ok\r\naof_rewrites:0\r\n"
      "aof_last_write_status:ok\r\n",
      s.loading() ? 1 : 0, s.stats().dirty, s.start_time_ms() / 1000);
}

void Stats(Server& s, std::string* o) {
  const ServerStats& st = s.stats();
  *o += fmt::format(
      "total_connections_received:{}\r\ntotal_commands_processed:{}\r\n"
      "instantaneous_ops_per_sec:{}\r\ntotal_net_input_bytes:{}\r\ntotal_net_output_bytes:{}\r\n"
      "instantaneous_input_kbps:0.00\r\ninstantaneous_output_kbps:0.00\r\n"
      "rejected_connections:{}\r\nsync_full:{}\r\nsync_partial_ok:{}\r\nsync_partial_err:{}\r\n"
      "expired_keys:{}\r\nexpired_stale_perc:0.00\r\nexpired_time_cap_reached_count:0\r\n"
      "evicted_keys:{}\r\nevicted_clients:0\r\ntotal_eviction_exceeded_time:{}\r\n"
      "current_eviction_exceeded_time:{}\r\nkeyspace_hits:{}\r\nkeyspace_misses:{}\r\npubsub_channels:{}\r\n"
      "pubsub_patterns:{}\r\nlatest_fork_usec:{}\r\ntotal_forks:{}\r\nmigrate_cached_sockets:{}\r\n"
      "total_error_replies:{}\r\nunexpected_error_replies:{}\r\n"
      "client_query_buffer_limit_disconnections:{}\r\n"
      "client_output_buffer_limit_disconnections:{}\r\n",
      st.total_connections_received, st.total_commands_processed,
      static_cast<int64_t>(st.instantaneous_ops_per_sec), st.net_input_bytes, st.net_output_bytes,
      st.rejected_connections, st.sync_full, st.sync_partial_ok, st.sync_partial_err,
      st.expired_keys, s.evictor().evicted_keys(),
      s.evictor().total_exceeded_ms(), s.evictor().current_exceeded_ms(), st.keyspace_hits,
      st.keyspace_misses, s.pubsub().NumChannels(), s.pubsub().NumPatterns(),
      st.latest_fork_usec, st.total_forks, s.migrate_cached_sockets(), st.total_error_replies, st.unexpected_error_replies,
      st.client_query_buffer_limit_disconnections, st.client_output_buffer_limit_disconnections);
  *o += fmt::format("tracking_total_keys:{}\r\ntracking_total_items:{}\r\ntracking_total_prefixes:{}\r\n",
                    s.tracking().total_keys(), s.tracking().total_items(), s.tracking().total_prefixes());
  *o += fmt::format("sync_truncate:{}\r\nrepl_timeout_disconnects:{}\r\n"
                    "repl_retention_forced_drops:{}\r\n",
                    st.sync_truncate, st.repl_timeout_disconnects, st.repl_retention_forced_drops);
}

void Replication(Server& s, std::string* o) {
  // master_repl_offset is the journal's offset: bytes ever logged.
  *o += fmt::format(
      "role:master\r\nconnected_slaves:0\r\nmaster_failover_state:no-failover\r\n"
      "master_replid:{}\r\nmaster_replid2:0000000000000000000000000000000000000000\r\n"
      "master_repl_offset:{}\r\nsecond_repl_offset:-1\r\nrepl_backlog_active:0\r\n"
      "repl_backlog_size:1048576\r\nrepl_backlog_first_byte_offset:0\r\nrepl_backlog_histlen:0\r\n",
      s.run_id(), s.journal().end_offset());
}

void Cpu(Server&, std::string* o) {
  rusage self{}, children{}, thread{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  getrusage(RUSAGE_THREAD, &thread);
  *o += fmt::format(
      "used_cpu_sys:{:.6f}\r\nused_cpu_user:{:.6f}\r\nused_cpu_sys_children:{:.6f}\r\n"
      "used_cpu_user_children:{:.6f}\r\nused_cpu_sys_main_thread:{:.6f}\r\n"
      "used_cpu_user_main_thread:{:.6f}\r\n",
      TimevalSec(self.ru_stime), TimevalSec(self.ru_utime), TimevalSec(children.ru_stime),
      TimevalSec(children.ru_utime), TimevalSec(thread.ru_stime), TimevalSec(thread.ru_utime));
}

void ErrorStats(Server& s, std::string* o) {
  for (const auto& [code, n] : s.error_stats()) *o += fmt::format("errorstat_{}:count={}\r\n", code, n);
}

void CommandStatsSection(Server& s, std::string* o) {
  for (const CommandSpec* spec : s.table().all_rows()) {
    const CommandStats& st = s.command_stats(*spec);
    if (st.empty()) continue;
    uint64_t usec = st.nsec / 1000;
    *o += fmt::format(
        "cmdstat_{}:calls={},usec={},usec_per_call={:.2f},rejected_calls={},failed_calls={}\r\n",
        spec->name, st.calls, usec, st.calls ? static_cast<double>(st.nsec) / 1000.0 / st.calls : 0.0,
        st.rejected_calls, st.failed_calls);
  }
}

// latency_percentiles_usec_<cmd>:p50=1.003,p99=2.007,p99.9=5.023 for every
// command with a latency histogram, percentiles from
// latency-tracking-info-percentiles.
void LatencyStats(Server& s, std::string* o) {
  const auto& percentiles = s.cfg().latency_tracking_info_percentiles;
  for (const CommandSpec* spec : s.table().all_rows()) {
    const LatencyHistogram* h = s.command_stats(*spec).latency.get();
    if (h == nullptr) continue;
    *o += fmt::format("latency_percentiles_usec_{}:", spec->name);
    for (size_t i = 0; i < percentiles.size(); i++) {
      *o += fmt::format("{}p{}={:.3f}", i == 0 ? "" : ",", FormatPercentile(percentiles[i]),
                        static_cast<double>(h->ValueAtPercentile(percentiles[i])) / 1000.0);
    }
    *o += "\r\n";
  }
}

void Keyspace(Server& s, std::string* o) {
  for (int i = 0; i < s.num_dbs(); i++) {
    const Database& db = s.db(i);
    if (db.size() == 0) continue;
    *o += fmt::format("db{}:keys={},expires={},avg_ttl={}\r\n", i, db.size(), db.expires_count(),
                      db.avg_ttl_ms());
  }
  // Counter spaces belong to no database: one line for them all, in the same
  // k=v form (exporters and redis-cli --stat read only the dbN lines).
  if (!s.counter_spaces().empty()) {
    size_t keys = 0, cold = 0;
    for (const auto& [name, space] : s.counter_spaces()) {
      keys += space->num_keys();
      cold += space->cold_keys();
    }
    *o += fmt::format("counters:spaces={},keys={},cold={}\r\n", s.counter_spaces().size(), keys, cold);
  }
}

void Counters(Server& server, std::string* out) {
  size_t keys = 0, memory = 0, tables = 0, aux = 0, extend = 0;
  for (const auto& [name, space] : server.counter_spaces()) {
    CounterSpaceStats st = space->Stats();
    keys += st.num_keys;
    memory += st.memory_bytes;
    tables += st.tables.size();
    aux += st.aux_keys;
    extend += st.extend_keys;
  }
  *out += fmt::format(
      "counter_spaces:{}\r\ncounter_keys:{}\r\ncounter_tables:{}\r\ncounter_aux_keys:{}\r\n"
      "counter_extend_keys:{}\r\ncounter_memory:{}\r\n",
      server.counter_spaces().size(), keys, tables, aux, extend, memory);
}

void Feeds(Server& server, std::string* out) {
  const FeedStats& f = server.stats().feeds;
  const Entry* pull = server.db(0).Find("feed:pull-authors");
  const size_t pull_authors =
      pull != nullptr && pull->type == ValueType::kSet
          ? static_cast<const SetValue*>(Database::GetObject(pull))->size() : 0;
  *out += fmt::format(
      "feed_pull_authors:{}\r\nfeed_fanout_writes:{}\r\nfeed_timeline_pages:{}\r\n"
      "feed_pull_merges:{}\r\nfeed_deleted_filtered:{}\r\nfeed_inbox_rebuilds:{}\r\n"
      "feed_inbox_misses:{}\r\nfeed_fanout_usec_max:{}\r\n",
      pull_authors, f.fanout_writes, f.timeline_pages, f.pull_merges, f.deleted_filtered,
      f.inbox_rebuilds, f.inbox_misses, f.fanout_usec_max);
}

// Bloom filters (docs/bloom.md): totals over every BF key.
void Bf(Server&, std::string* out) {
  const BloomStats& b = GlobalBloomStats();
  *out += fmt::format("bf_filters:{}\r\nbf_bytes:{}\r\nbf_items:{}\r\nbf_links_max:{}\r\nbf_scale_events:{}\r\n",
                      b.filters.load(), b.bytes.load(), b.items.load(), b.links_max(), b.scale_events.load());
}

using SectionFn = void (*)(Server&, std::string*);
struct Section {
  const char* name;
  SectionFn fn;
  bool in_default;
};
const Section kSections[] = {
    {"server", Server_, true},         {"clients", Clients, true},
    {"memory", Memory, true},          {"persistence", Persistence, true},
    {"stats", Stats, true},            {"replication", Replication, true},
    {"cpu", Cpu, true},                {"modules", nullptr, true},
    {"errorstats", ErrorStats, true},  {"commandstats", CommandStatsSection, false},
    {"latencystats", LatencyStats, false},
    {"keyspace", Keyspace, true},         {"counters", Counters, true},
    {"feeds", Feeds, true},           {"bf", Bf, true},
};

std::string Title(std::string_view name) {
  std::string t(name);
  if (!t.empty()) t[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(t[0])));
  if (t == "Cpu") t = "CPU";
  if (t == "Errorstats") t = "Errorstats";
  return t;
}

}  // namespace

std::string BuildInfo(Server& s, const std::vector<std::string>& requested) {
  std::set<std::string> want(requested.begin(), requested.end());
  bool all = want.count("all") || want.count("everything");
  bool deflt = want.empty() || want.count("default");
  auto wanted = [&](std::string_view name, bool in_default) {
    return all || (deflt && in_default) || want.count(std::string(name));
  };
  std::string out;
  const auto& extra = s.info_sections();
  auto find_extra = [&](std::string_view name) -> const std::function<void(std::string*)>* {
    for (const auto& [n, fn] : extra) {
      if (n == name) return &fn;
    }
    return nullptr;
  };
  for (const Section& sec : kSections) {
    if (!wanted(sec.name, sec.in_default)) continue;
    if (!out.empty()) out += "\r\n";
    out += "# " + Title(sec.name) + "\r\n";
    if (const auto* fn = find_extra(sec.name)) {
      (*fn)(&out);
    } else if (sec.fn != nullptr) {
      sec.fn(s, &out);
    }
  }
  for (const auto& [name, fn] : extra) {
    bool builtin = std::any_of(std::begin(kSections), std::end(kSections),
                               [&](const Section& sec) { return name == sec.name; });
    if (builtin || !wanted(name, true)) continue;
    if (!out.empty()) out += "\r\n";
    out += "# " + Title(name) + "\r\n";
    fn(&out);
  }
  return out;
}

}  // namespace feedkv::server
