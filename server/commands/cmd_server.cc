// Server commands: INFO, CONFIG, DBSIZE, FLUSHDB, FLUSHALL, SWAPDB, TIME,
// SHUTDOWN, SLOWLOG, LATENCY, MONITOR, ROLE, WAIT, LOLWUT.
#include <fmt/format.h>

#include <algorithm>

#include "protocol/error_text.h"
#include "server/cold_tier.h"
#include "server/command_context.h"
#include "server/info.h"
#include "server/persistence.h"
#include "server/replication/replication.h"
#include "server/script_engine.h"
#include "server/server.h"
#include "server/startup.h"

namespace feedkv::server {

namespace {

std::string Lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

void UnknownSubcommand(CommandContext& ctx, std::string_view) { ctx.SubcommandError(); }

void Info(CommandContext& ctx) {
  std::vector<std::string> sections;
  for (size_t i = 1; i < ctx.argc(); i++) sections.push_back(Lower(ctx.arg(i)));
  ctx.reply.Verbatim(BuildInfo(ctx.server, sections));
}

void ConfigCmd(CommandContext& ctx) {
  std::string_view sub = ctx.arg(1);
  Config& config = ctx.server.config();
  if (EqualsIgnoreCase(sub, "GET") && ctx.argc() >= 3) {
    std::vector<std::pair<std::string, std::string>> all;
    for (size_t i = 2; i < ctx.argc(); i++) {
      for (auto& kv : config.Get(ctx.arg(i))) {
        // One entry per setting, however its name was spelled (as Redis).
        auto same = [&kv](const auto& e) { return EqualsIgnoreCase(e.first, kv.first); };
        if (std::find_if(all.begin(), all.end(), same) == all.end()) all.push_back(std::move(kv));
      }
    }
    ctx.reply.MapHeader(all.size());
    for (const auto& [k, v] : all) {
      ctx.reply.Bulk(k);
      ctx.reply.Bulk(v);
    }
  } else if (EqualsIgnoreCase(sub, "SET")) {
    if (ctx.argc() % 2 != 0) {
      ctx.SyntaxError();  // as Redis 7
      return;
    }
    // Redis 7 applies several pairs atomically: validate all first.
    Config trial = config;
    bool listen_changed = false;
    for (size_t i = 2; i + 1 < ctx.argc(); i += 2) {
      Status s = trial.Set(ctx.arg(i), ctx.arg(i + 1), true, ctx.client.local);
      for (size_t j = 2; s.ok() && j < i; j += 2) {
        if (EqualsIgnoreCase(ctx.arg(j), ctx.arg(i))) s = Status::InvalidArgument(ConfigSetFailed(ctx.arg(i), "duplicate parameter"));
      }
      if (!s.ok()) {
        ctx.Error(s);
        return;
      }
      listen_changed |= EqualsIgnoreCase(ctx.arg(i), "bind") || EqualsIgnoreCase(ctx.arg(i), "port");
    }
    // Replication keeps the log it stands on (docs/replication.md).
    if (!trial.values().replica_read_only) {
      ctx.Error(protocol::err::kReplicaReadOnlyNo);
      return;
    }
    if (config.values().appendonly && !trial.values().appendonly &&
        ctx.server.replication() != nullptr && ctx.server.replication()->NeedsLog()) {
      ctx.Error(protocol::err::kAppendonlyWithReplicas);
      return;
    }
    Config before = config;
    for (size_t i = 2; i + 1 < ctx.argc(); i += 2) {
      config.Set(ctx.arg(i), ctx.arg(i + 1), true, ctx.client.local).PermitUnchecked();
    }
    if (listen_changed) {
      // As Redis: the new sockets open first; on failure the old ones stay
      // and every setting of this call is rolled back.
      std::string failed_arg;
      Status s = ctx.server.ApplyListenConfig(before.values(), &failed_arg);
      if (!s.ok()) {
        config = std::move(before);
        ctx.server.EnterDir();
        ctx.Error(protocol::err::kErrPrefix + ConfigSetFailed(failed_arg, s.message()));
        return;
      }
    }
    ctx.reply.Ok();
  } else if (EqualsIgnoreCase(sub, "REWRITE") && ctx.argc() == 2) {
    Status s = ctx.server.RewriteConfig(/*force_all=*/false);
    if (!s.ok()) {
      ctx.Error(s);
      return;
    }
    ctx.reply.Ok();
  } else if (EqualsIgnoreCase(sub, "RESETSTAT") && ctx.argc() == 2) {
    ctx.server.ResetStats();
    ctx.reply.Ok();
  } else if (EqualsIgnoreCase(sub, "HELP")) {
    ctx.ReplyHelp({
        "GET <pattern>", "    Return parameters matching the glob-like <pattern> and their values.",
        "SET <directive> <value>", "    Set the configuration <directive> to <value>.",
        "RESETSTAT", "    Reset statistics reported by the INFO command.",
        "REWRITE", "    Rewrite the configuration file.",
    });
  } else {
    UnknownSubcommand(ctx, "CONFIG");
  }
}

void DbSize(CommandContext& ctx) { ctx.reply.Integer(static_cast<int64_t>(ctx.db().size())); }

// FLUSHDB / FLUSHALL [ASYNC|SYNC]: false after replying a syntax error. With
// neither word, lazyfree-lazy-user-flush decides, as Redis.
bool ParseFlushMode(CommandContext& ctx, bool* async) {
  *async = ctx.server.cfg().lazyfree_lazy_user_flush;
  if (ctx.argc() == 1) return true;
  if (ctx.argc() == 2 && EqualsIgnoreCase(ctx.arg(1), "ASYNC")) {
    *async = true;
    return true;
  }
  if (ctx.argc() == 2 && EqualsIgnoreCase(ctx.arg(1), "SYNC")) {
    *async = false;
    return true;
  }
  ctx.SyntaxError();
  return false;
}

// Empties database `i`; ASYNC hands its entries to the lazy-free thread.
void EmptyDb(CommandContext& ctx, int i, bool async) {
  Database& db = ctx.server.db(i);
  if (async) {
    const uint64_t keys = db.size();
    ctx.server.lazy_free().FreeDatabase(db.DetachAll(), keys);
  } else {
    db.Clear();
  }
}

void FlushDb(CommandContext& ctx) {
  bool async;
  if (!ParseFlushMode(ctx, &async)) return;
  size_t n = ctx.db().size();
  ctx.server.SignalFlushed(ctx.client.db);
  EmptyDb(ctx, ctx.client.db, async);
  ctx.Dirty(std::max<int64_t>(1, static_cast<int64_t>(n)));
  ctx.reply.Ok();
}

void FlushAll(CommandContext& ctx) {
  bool async;
  if (!ParseFlushMode(ctx, &async)) return;
  // Counter spaces are data too: FLUSHALL leaves a server with nothing in it.
  size_t n = ctx.server.counter_spaces().size();
  if (ColdTier* cold = ctx.server.cold_tier()) {
    for (const auto& [name, space] : ctx.server.counter_spaces()) cold->DropRows(name, *space);
  }
  ctx.server.counter_spaces().clear();
  ctx.server.SignalFlushed(-1);
  for (int i = 0; i < ctx.server.num_dbs(); i++) {
    n += ctx.server.db(i).size();
    EmptyDb(ctx, i, async);
  }
  ctx.Dirty(std::max<int64_t>(1, static_cast<int64_t>(n)));
  if (Persistence* p = ctx.server.persistence(); p != nullptr && !ctx.from_log) p->AfterFlushAll();
  ctx.reply.Ok();
}

void SwapDb(CommandContext& ctx) {
  int64_t a, b;
  if (!ParseCanonicalInt64(ctx.arg(1), &a)) {
    ctx.Error(protocol::err::kInvalidFirstDb);
    return;
  }
  if (!ParseCanonicalInt64(ctx.arg(2), &b)) {
    ctx.Error(protocol::err::kInvalidSecondDb);
    return;
  }
  if (a < 0 || b < 0 || a >= ctx.server.num_dbs() || b >= ctx.server.num_dbs()) {
    ctx.Error(protocol::err::kDbIndexOutOfRange);
    return;
  }
  if (a != b) {
    ctx.server.TouchWatchedInDb(static_cast<int>(a), static_cast<int>(b));
    ctx.server.TouchWatchedInDb(static_cast<int>(b), static_cast<int>(a));
    ctx.server.db(static_cast<int>(a)).Swap(ctx.server.db(static_cast<int>(b)));
    // Clients blocked on a key that the swap brought in or took away wake and
    // look again.
    for (int db : {static_cast<int>(a), static_cast<int>(b)}) {
      for (const std::string& key : ctx.server.waiting().WaitedKeys(db)) {
        if (ctx.server.db(static_cast<int>(a)).Find(key) != nullptr ||
            ctx.server.db(static_cast<int>(b)).Find(key) != nullptr) {
          ctx.server.waiting().KeyReady(db, key);
        }
      }
    }
  }
  ctx.Dirty();
  ctx.reply.Ok();
}

void Time(CommandContext& ctx) {
  int64_t us = NowUs();
  ctx.reply.ArrayHeader(2);
  ctx.reply.Bulk(std::to_string(us / 1000000));
  ctx.reply.Bulk(std::to_string(us % 1000000));
}

// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT], as Redis 7.0's shutdownCommand.
// NOW only skips waiting for replicas, which feedkv does not have yet.
void Shutdown(CommandContext& ctx) {
  ShutdownOptions o;
  bool nosave = false, save = false, abort = false, other = false;
  if (ctx.argc() > 5) {
    ctx.SyntaxError();
    return;
  }
  for (size_t i = 1; i < ctx.argc(); i++) {
    std::string_view a = ctx.arg(i);
    if (EqualsIgnoreCase(a, "NOSAVE")) {
      nosave = true;
    } else if (EqualsIgnoreCase(a, "SAVE")) {
      save = true;
    } else if (EqualsIgnoreCase(a, "NOW")) {
      other = true;
    } else if (EqualsIgnoreCase(a, "FORCE")) {
      o.force = other = true;
    } else if (EqualsIgnoreCase(a, "ABORT")) {
      abort = true;
    } else {
      ctx.SyntaxError();
      return;
    }
  }
  if ((abort && (nosave || save || other)) || (nosave && save)) {
    ctx.SyntaxError();
    return;
  }
  if (abort) {
    // A shutdown never waits here (no replicas to wait for): none is in progress.
    ctx.Error(protocol::err::kNoShutdownInProgress);
    return;
  }
  // While a script is busy only SHUTDOWN NOSAVE stops the server (the script's
  // state is not one to save), as Redis.
  if (ctx.server.scripts().busy() && !nosave) {
    return ctx.Error(ctx.server.scripts().running_function() ? protocol::err::kBusyFunction
                                                             : protocol::err::kBusyScript);
  }
  if (save) o.save = ShutdownOptions::Save::kSave;
  if (nosave) o.save = ShutdownOptions::Save::kNoSave;
  // As Redis: no reply on success; the connection closes with the process.
  if (!ctx.server.Shutdown(o)) ctx.Error(protocol::err::kShutdownFailed);
}

void Slowlog(CommandContext& ctx) {
  std::string_view sub = ctx.arg(1);
  auto& log = ctx.server.slowlog();
  if (EqualsIgnoreCase(sub, "GET") && ctx.argc() <= 3) {
    int64_t count = 10;
    if (ctx.argc() == 3) {
      if (!ctx.IntArg(2, &count)) return;
      if (count < -1) {
        ctx.Error(protocol::err::kCountBelowMinusOne);
        return;
      }
      if (count == -1) count = static_cast<int64_t>(log.size());
    }
    size_t n = std::min<size_t>(log.size(), static_cast<size_t>(count));
    ctx.reply.ArrayHeader(n);
    for (size_t i = 0; i < n; i++) {
      const SlowlogEntry& e = log[i];
      ctx.reply.ArrayHeader(6);
      ctx.reply.Integer(static_cast<int64_t>(e.id));
      ctx.reply.Integer(e.unix_time);
      ctx.reply.Integer(e.duration_us);
      ctx.reply.ArrayHeader(e.args.size());
      for (const auto& a : e.args) ctx.reply.Bulk(a);
      ctx.reply.Bulk(e.peer);
      ctx.reply.Bulk(e.client_name);
    }
  } else if (EqualsIgnoreCase(sub, "LEN") && ctx.argc() == 2) {
    ctx.reply.Integer(static_cast<int64_t>(log.size()));
  } else if (EqualsIgnoreCase(sub, "RESET") && ctx.argc() == 2) {
    ctx.server.ResetSlowlog();
    ctx.reply.Ok();
  } else if (EqualsIgnoreCase(sub, "HELP")) {
    ctx.ReplyHelp({
        "GET [<count>]",
        "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
        "    Entries are made of:",
        "    id, timestamp, time in microseconds, arguments array, client IP and port,",
        "    client name",
        "LEN",
        "    Return the length of the slowlog.",
        "RESET",
        "    Reset the slowlog.",
    });
  } else {
    UnknownSubcommand(ctx, "SLOWLOG");
  }
}

// LATENCY HISTOGRAM [command ...]: a map of command fullname -> {calls,
// histogram_usec: {boundary usec: cumulative calls}}, as Redis 7. Without
// arguments every command with samples; a named container also brings its
// subcommands; unknown names are skipped, repeated names repeated.
void LatencyHistogramReply(CommandContext& ctx) {
  Server& server = ctx.server;
  std::vector<const CommandSpec*> rows;
  auto add = [&](const CommandSpec& s) {
    if (server.command_stats(s).latency != nullptr) rows.push_back(&s);
  };
  if (ctx.argc() == 2) {
    for (const CommandSpec* s : server.table().all_rows()) add(*s);
  } else {
    for (size_t i = 2; i < ctx.argc(); i++) {
      const CommandSpec* s = server.table().FindFullName(ctx.arg(i));
      if (s == nullptr) continue;
      add(*s);
      for (const CommandSpec& sub : s->subs()) add(sub);
    }
  }
  auto& r = ctx.reply;
  r.MapHeader(rows.size());
  for (const CommandSpec* s : rows) {
    const LatencyHistogram& h = *server.command_stats(*s).latency;
    r.Bulk(s->name);
    r.MapHeader(2);
    r.Bulk("calls");
    r.Integer(static_cast<int64_t>(h.count()));
    r.Bulk("histogram_usec");
    auto buckets = h.PowerOfTwoRows();
    r.MapHeader(buckets.size());
    for (const auto& b : buckets) {
      r.Integer(b.usec);
      r.Integer(static_cast<int64_t>(b.cumulative));
    }
  }
}

void Latency(CommandContext& ctx) {
  std::string_view sub = ctx.arg(1);
  LatencyMonitor& monitor = ctx.server.latency_monitor();
  if (EqualsIgnoreCase(sub, "LATEST") && ctx.argc() == 2) {
    ctx.reply.ArrayHeader(monitor.events().size());
    for (const auto& [name, series] : monitor.events()) {
      ctx.reply.ArrayHeader(4);
      ctx.reply.Bulk(name);
      ctx.reply.Integer(series.latest().time);
      ctx.reply.Integer(series.latest().latency);
      ctx.reply.Integer(series.max);
    }
  } else if (EqualsIgnoreCase(sub, "HISTORY") && ctx.argc() == 3) {
    const auto points = monitor.History(ctx.arg(2));
    ctx.reply.ArrayHeader(points.size());
    for (const auto& p : points) {
      ctx.reply.ArrayHeader(2);
      ctx.reply.Integer(p.time);
      ctx.reply.Integer(p.latency);
    }
  } else if (EqualsIgnoreCase(sub, "RESET")) {
    std::vector<std::string> events(ctx.args.begin() + 2, ctx.args.end());
    ctx.reply.Integer(static_cast<int64_t>(monitor.Reset(events)));
  } else if (EqualsIgnoreCase(sub, "DOCTOR") && ctx.argc() == 2) {
    ctx.reply.Verbatim(monitor.Doctor());
  } else if (EqualsIgnoreCase(sub, "HISTOGRAM")) {
    LatencyHistogramReply(ctx);
  } else if (EqualsIgnoreCase(sub, "HELP")) {
    ctx.ReplyHelp({
        "DOCTOR",
        "    Return a human readable latency analysis report.",
        "HISTORY <event>",
        "    Return time-latency samples for the <event> class.",
        "LATEST",
        "    Return the latest latency samples for all events.",
        "RESET [<event> ...]",
        "    Reset latency data of one or more <event> classes.",
        "    (default: reset all data for all event classes)",
        "HISTOGRAM [COMMAND ...]",
        "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
        "    If no commands are specified then all histograms are replied.",
    });
  } else {
    UnknownSubcommand(ctx, "LATENCY");
  }
}

// LOLWUT [VERSION version]: the version line Redis 7 answers for its own version
// (lolwutUnstableCommand). VERSION 5 and 6 draw generative art in Redis; feedkv
// answers the version line for them too: the art is random in Redis, and no
// client reads it.
void Lolwut(CommandContext& ctx) {
  if (ctx.argc() >= 3 && EqualsIgnoreCase(ctx.arg(1), "version")) {
    int64_t version;
    if (!ctx.IntArg(2, &version)) return;
  }
  ctx.reply.Verbatim(std::string("Redis ver. ") + kRedisCompatVersion + "\n");
}

void Monitor(CommandContext& ctx) {
  if (ctx.client.monitor) return;
  ctx.client.monitor = true;
  ctx.server.AddMonitor(&ctx.client);
  ctx.reply.Ok();
}

constexpr uint32_t kAdm = kAdmin | kNoScript | kLoading | kStale;

// CONFIG SET's values of the settings Redis marks sensitive.
bool ConfigSetSecret(std::span<const std::string_view> argv, size_t i) {
  if (i < 3 || (i - 2) % 2 != 1) return false;
  const std::string name = LowerAscii(argv[i - 1]);
  return name == "requirepass" || name == "masterauth" || name == "masteruser";
}

const SubcommandSpec kConfigSubs[] = {
    {"get", -3, kAdm, "Get the values of configuration parameters"},
    {"set", -4, kAdm, "Set configuration parameters to the given values", 0, 0, 0, {}, ConfigSetSecret},
    {"rewrite", 2, kAdm, "Rewrite the configuration file with the in memory configuration"},
    {"resetstat", 2, kAdm, "Reset the stats returned by INFO"},
    {"help", 2, kLoading | kStale, "Show helpful text about the different subcommands"},
};

const SubcommandSpec kSlowlogSubs[] = {
    {"get", -2, kAdmin | kLoading | kStale, "Get the slow log's entries"},
    {"len", 2, kAdmin | kLoading | kStale, "Get the slow log's length"},
    {"reset", 2, kAdmin | kLoading | kStale, "Clear all entries from the slow log"},
    {"help", 2, kLoading | kStale, "Show helpful text about the different subcommands"},
};

const SubcommandSpec kLatencySubs[] = {
    {"latest", 2, kAdm, "Return the latest latency samples for all events."},
    {"history", 3, kAdm, "Return timestamp-latency samples for the event."},
    {"reset", -2, kAdm, "Reset latency data for one or more events."},
    {"doctor", 2, kAdm, "Return a human readable latency analysis report."},
    {"histogram", -2, kAdm,
     "Return the cumulative distribution of latencies of a subset of commands or all."},
    {"help", 2, kLoading | kStale, "Show helpful text about the different subcommands."},
};

const CommandSpec kCommands[] = {
    {"lolwut", -1, kReadOnly | kFast, 0, 0, 0, Lolwut, "Display some computer art and the Redis version", "server"},
    {"info", -1, kLoading | kStale | kAclDangerous, 0, 0, 0, Info, "Get information and statistics about the server", "server"},
    {"config", -2, 0, 0, 0, 0, ConfigCmd, "A container for server configuration commands", "server",
     kConfigSubs},
    {"dbsize", 1, kReadOnly | kFast | kAclKeyspace, 0, 0, 0, DbSize, "Return the number of keys in the selected database", "server"},
    {"flushdb", -1, kWrite | kAclKeyspace | kAclDangerous, 0, 0, 0, FlushDb, "Remove all keys from the current database", "server"},
    {"flushall", -1, kWrite | kAclKeyspace | kAclDangerous, 0, 0, 0, FlushAll, "Remove all keys from all databases", "server"},
    {"swapdb", 3, kWrite | kFast | kAclKeyspace | kAclDangerous, 0, 0, 0, SwapDb, "Swaps two Redis databases", "server"},
    {"time", 1, kLoading | kStale | kFast | kRandom, 0, 0, 0, Time, "Return the current server time", "server"},
    {"shutdown", -1, kAdmin | kNoScript | kLoading | kStale | kNoMulti | kAllowBusy, 0, 0, 0, Shutdown, "Synchronously save the dataset to disk and then shut down the server", "server"},
    {"slowlog", -2, 0, 0, 0, 0, Slowlog, "A container for slow log commands", "server", kSlowlogSubs},
    {"latency", -2, 0, 0, 0, 0, Latency, "A container for latency diagnostics commands", "server",
     kLatencySubs},
    {"monitor", 1, kAdmin | kNoScript | kLoading | kStale, 0, 0, 0, Monitor, "Listen for all requests received by the server in real time", "server"},
};

}  // namespace

std::span<const CommandSpec> ServerCommands() { return kCommands; }

}  // namespace feedkv::server
