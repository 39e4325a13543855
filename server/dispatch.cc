// Server::Execute / Server::Call: the one path every command takes, and
// CommandContext. See docs/architecture.md for the flow.
#include <chrono>
#include <charconv>
#include <cmath>
#include <fmt/format.h>

#include <boost/asio/post.hpp>

#include "protocol/error_text.h"
#include "server/cold_tier.h"
#include "server/command_context.h"
#include "server/monotonic_clock.h"
#include "server/network.h"
#include "server/script_engine.h"
#include "server/server.h"
#include "server/replication/replication.h"
#include "storage/database.h"

namespace feedkv::server {

namespace {



}  // namespace

bool ParseDouble(std::string_view s, double* out) {
  if (s.empty() || s.size() > 5000 || std::isspace(static_cast<unsigned char>(s[0]))) return false;
  std::string tmp(s);
  char* end = nullptr;
  errno = 0;
  double d = std::strtod(tmp.c_str(), &end);
  if (end != tmp.c_str() + tmp.size() || std::isnan(d)) return false;
  // Overflow and underflow to zero are errors, as Redis's getDoubleFromObject.
  if (errno == ERANGE && (d == HUGE_VAL || d == -HUGE_VAL || d == 0)) return false;
  *out = d;
  return true;
}

CommandContext::CommandContext(Server& s, Client& c, const CommandSpec& sp,
                               std::span<const std::string_view> a, bool log)
    : server(s), client(c), spec(sp), args(a), reply(&c.out, c.resp), from_log(log) {}

Database& CommandContext::db() { return server.db(client.db); }

// A command applied from the log sees the clock stand still at 0, so no key
// expires: the log holds a DEL for every expiry that really happened.
int64_t CommandContext::now_ms() const {
  if (from_log) return 0;
  // Inside a script the clock stands at the script's start (Redis's script
  // time snapshot): a key does not expire between two of its commands.
  if (client.script_caller != nullptr) return server.scripts().start_unix_ms();
  return NowMs();
}

bool CommandContext::ReplyLimited() const {
  if (client.fd < 0 || client.replica || from_log) return false;
  const ClientClass cls = client.output_class();
  return server.cfg().client_output_buffer_limit[static_cast<size_t>(cls)].hard_bytes > 0;
}

bool CommandContext::ReplyOverLimit() {
  if (client.close_asap) return true;
  if (!ReplyLimited()) return false;
  const ClientClass cls = client.output_class();
  const uint64_t hard = server.cfg().client_output_buffer_limit[static_cast<size_t>(cls)].hard_bytes;
  uint64_t unsent = client.out.size() + client.out_in_flight;
  if (reply.buffer() != &client.out) unsent += reply.buffer()->size();
  if (unsent < hard) return false;
  client.close_asap = true;
  return true;
}

bool CommandContext::can_block() const {
  // Redis's rule: inside MULTI/EXEC (a nested call) or from the log a command
  // never waits; it answers as if its timeout had passed.
  return !from_log && !client.in_multi && depth == 1;
}

Entry* CommandContext::LookupRead(Database& db, std::string_view key, int64_t now, bool touch) {
  Entry* e = touch ? db.Lookup(key, now) : db.Peek(key, now);
  if (e != nullptr) {
    server.stats().keyspace_hits++;
  } else {
    server.stats().keyspace_misses++;
    server.NotifyKeyspaceEvent(kNotifyKeyMiss, "keymiss", key, db.index());
  }
  return e;
}

void CommandContext::Notify(int type, std::string_view event, std::string_view key) {
  server.NotifyKeyspaceEvent(type, event, key, client.db);
}

void CommandContext::Notify(int type, std::string_view event, std::string_view key, int db) {
  server.NotifyKeyspaceEvent(type, event, key, db);
}

void CommandContext::Error(std::string_view msg) {
  reply.Error(msg);
  Failed(msg);
}

void CommandContext::ErrorVerbatim(std::string_view msg) {
  reply.ErrorVerbatim(msg);
  Failed(msg);
}

void CommandContext::Failed(std::string_view msg) {
  failed_ = true;
  server.CountError(msg.find(' ') != std::string_view::npos && std::isupper(static_cast<unsigned char>(msg[0]))
                        ? msg
                        : std::string_view("ERR"));
}

void CommandContext::Error(const Status& s) {
  switch (s.code()) {
    case Status::Code::kWrongType:
      return s.message().empty() ? WrongType() : Error(protocol::err::kWrongTypePrefix + s.message());
    case Status::Code::kInvalidObject: return Error(protocol::err::kInvalidObjectPrefix + s.message());
    case Status::Code::kFull: return Error(protocol::err::kFullPrefix + s.message());
    default: return Error(protocol::err::kErrPrefix + (s.message().empty() ? s.ToString() : s.message()));
  }
}

bool CommandContext::IntArg(size_t i, int64_t* out) {
  if (ParseCanonicalInt64(args[i], out)) return true;
  Error(protocol::err::kNotInteger);
  return false;
}

bool CommandContext::TimeoutMsArg(size_t i, int64_t* out) {
  if (!ParseCanonicalInt64(args[i], out)) {
    Error(protocol::err::kTimeoutNotInteger);
    return false;
  }
  if (*out < 0) {
    Error(protocol::err::kTimeoutNegative);
    return false;
  }
  return true;
}

void CommandContext::SubcommandError() {
  // Dispatch rejects unknown subcommands and wrong arities from the table;
  // this is for the finer checks of a handler (Redis's
  // addReplySubcommandSyntaxError).
  std::string upper(spec.container().name);
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (spec.parent != nullptr) {
    Error(fmt::format(protocol::err::kUnknownSubcommandOrArity,
                      args[1].substr(0, 128), upper));
  } else {
    Error(fmt::format(protocol::err::kUnknownSubcommand, args[1].substr(0, 128), upper));
  }
}

void CommandContext::ReplyHelp(std::initializer_list<std::string_view> lines) {
  std::string upper(spec.container().name);
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  reply.ArrayHeader(lines.size() + 3);
  reply.Simple(fmt::format("{} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", upper));
  for (std::string_view l : lines) reply.Simple(l);
  reply.Simple("HELP");
  reply.Simple("    Prints this help.");
}

bool ParseCounterId(std::string_view s, int64_t* out) {
  size_t lead = 0;
  bool neg = !s.empty() && s[0] == '-';
  while (lead + neg + 1 < s.size() && s[lead + neg] == '0') lead++;
  std::string trimmed = neg ? "-" + std::string(s.substr(1 + lead)) : std::string(s.substr(lead));
  if (trimmed == "-0") {
    *out = 0;
    return true;
  }
  return ParseCanonicalInt64(trimmed, out);
}

bool CommandContext::IdArg(size_t i, int64_t* out) {
  if (ParseCounterId(args[i], out)) return true;
  Error(protocol::err::kNotInteger);
  return false;
}

bool CommandContext::DoubleArg(size_t i, double* out) {
  if (ParseDouble(args[i], out)) return true;
  Error(protocol::err::kNotFloat);
  return false;
}

void Server::Execute(Client& c, std::span<const std::string_view> args) {
  protocol::ReplyWriter w(&c.out, c.resp);
  bool unknown_sub = false;
  const CommandSpec* spec = table_.Lookup(args, &unknown_sub);
  auto reject = [&](const std::string& msg) {
    CountError(msg);
    if (spec != nullptr && spec->name == "exec") {
      // As Redis's rejectCommand/execCommandAbort: a refused EXEC ends the
      // transaction and says so (EXECABORT) with the reason, even outside MULTI.
      c.in_multi = false;
      c.multi_error = false;
      c.queued.Clear();
      UnwatchAll(c);
      w.Error(fmt::format("EXECABORT Transaction discarded because of: {}", msg));
      if (!monitors_.empty()) FeedMonitors(c, args, spec);
      return;
    }
    w.Error(msg);
    if (c.in_multi) c.multi_error = true;
  };
  if (spec == nullptr) {
    if (unknown_sub) {
      std::string upper(args[0]);
      for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      reject(fmt::format(protocol::err::kUnknownSubcommand, args[1].substr(0, 128), upper));
      return;
    }
    std::string preview;
    for (size_t i = 1; i < args.size() && preview.size() < 128; i++) {
      preview += fmt::format("'{}' ", args[i].substr(0, 128));
    }
    reject(fmt::format(protocol::err::kUnknownCommand,
                       args[0].substr(0, 128), preview));
    return;
  }
  CommandStats& st = command_stats_[spec->id];
  int argc = static_cast<int>(args.size());
  if ((spec->arity > 0 && argc != spec->arity) || (spec->arity < 0 && argc < -spec->arity)) {
    st.rejected_calls++;
    reject(fmt::format(protocol::err::kWrongArity, spec->name));
    return;
  }
  // Before AUTH, as Redis: DEBUG is refused even to a client that could log in.
  if ((spec->flags & kProtected) && !AllowProtectedAction(cfg().enable_debug_command, c.local)) {
    st.rejected_calls++;
    reject(protocol::err::kDebugNotAllowed);
    return;
  }
  if (!c.authenticated && !(spec->flags & kNoAuth) && acl_->DefaultRequiresAuth()) {
    st.rejected_calls++;
    reject(protocol::err::kNoAuth);
    return;
  }
  if (c.user != nullptr && !c.user->unrestricted) {
    if (std::string denied = CheckAcl(c, *spec, args); !denied.empty()) {
      st.rejected_calls++;
      reject(denied);
      return;
    }
  }
  // A script or function that declares its flags is gated by them (Redis's
  // getCommandFlags): one that may write counts as a write, one without
  // allow-stale is refused on a stale replica, as their commands would be.
  const uint64_t flags = EffectiveFlags(*spec, args);
  oom_at_command_start_ = false;
  if (cfg().maxmemory > 0 && !OomAllows(c, *spec, flags)) {
    st.rejected_calls++;
    reject(protocol::err::kOom);
    return;
  }
  // An EXEC counts as a write if a queued command writes, and as refused on a
  // stale replica if a queued one is (Redis's mstate.cmd_flags / cmd_inv_flags).
  const bool exec = c.in_multi && spec->name == "exec";
  const bool queued_write = exec && c.queued.AnyHas(kWrite);
  const bool queued_not_stale = exec && c.queued.AnyLacks(kStale);
  // Replication's gates, in Redis's order (server/replication/replication.h).
  if (replication_ != nullptr && ((flags & kWrite) || queued_write)) {
    if (replica_mode_) {
      st.rejected_calls++;
      reject(protocol::err::kReadOnlyReplica);
      return;
    }
    if (cfg().min_replicas_to_write > 0 && !replication_->EnoughGoodReplicas()) {
      st.rejected_calls++;
      reject(protocol::err::kNoReplicas);
      return;
    }
  }
  if (replica_mode_ && (!(flags & kStale) || queued_not_stale) && !replication_->ServesStaleData()) {
    st.rejected_calls++;
    reject(protocol::err::kMasterDown);
    return;
  }
  if (loading_ && !(spec->flags & kLoading)) {
    st.rejected_calls++;
    reject(protocol::err::kLoading);
    return;
  }
  // A script running past busy-reply-threshold: only allow-busy rows run.
  if (scripts_->busy() && !(spec->flags & kAllowBusy)) {
    st.rejected_calls++;
    reject(scripts_->running_function() ? protocol::err::kBusyFunction : protocol::err::kBusyScript);
    return;
  }
  // A RESP2 connection that is subscribed can only (un)subscribe, PING, QUIT or RESET.
  if (c.resp == 2 && c.subscribed() && !(spec->flags & kSubscribedContext)) {
    st.rejected_calls++;
    reject(fmt::format(protocol::err::kSubscribedContext, spec->name));
    return;
  }
  if (c.in_multi && (spec->flags & kNoMulti)) {
    reject(protocol::err::kNotAllowedInMulti);
    return;
  }
  if (c.in_multi && !(spec->flags & kTxControl)) {
    c.queued.Push(spec, args);
    w.Simple("QUEUED");
    return;
  }
  if (pause_end_ms_ != 0 && PauseHolds(c, *spec, args)) {
    PostponeForPause(c, args);
    return;
  }
  // Counter ids of cold tables that are not in memory: the client waits for
  // the cold tier to load them, then the command runs again from the top.
  if (cold_tier_ != nullptr && cold_tier_->ParkForLoads(c, *spec, args)) return;
  size_t before = c.out.size();
  auto mode = c.reply_mode;
  if (mode == Client::ReplyMode::kSkip) c.reply_mode = Client::ReplyMode::kOn;
  c.reply_forced = false;
  Call(c, *spec, args);
  if (mode != Client::ReplyMode::kOn && !c.reply_forced) c.out.resize(before);
}

namespace {
// Parked clients waiting for a CLIENT PAUSE to end share this token.
constexpr uint64_t kPauseToken = ~uint64_t{0};

// A command naming a run of keys (MGET, MSET, DEL, SINTER...) asks for all of
// them before it looks any up, so their cache misses overlap, as the pipelined
// look ahead does across commands (Connection::PrefetchAhead). A hint only.
void PrefetchKeyRun(const CommandSpec& spec, std::span<const std::string_view> args, const Database& db) {
  if (spec.first_key <= 0 || spec.key_step <= 0 || spec.last_key == spec.first_key) return;
  const int argc = static_cast<int>(args.size());
  const int last = spec.last_key < 0 ? argc + spec.last_key : std::min(spec.last_key, argc - 1);
  std::string_view keys[16];
  size_t n = 0;
  for (int i = spec.first_key; i <= last && n < std::size(keys); i += spec.key_step) keys[n++] = args[i];
  if (n >= 2) db.Prefetch(std::span<const std::string_view>(keys, n));
}
}  // namespace

void Server::PauseClients(int64_t end_ms, bool all) {
  pause_end_ms_ = std::max(pause_end_ms_, end_ms);
  pause_all_ = pause_all_ || all;
  UpdateExpiredKeysStay();
}

void Server::UnpauseClients() {
  pause_end_ms_ = 0;
  pause_all_ = false;
  UpdateExpiredKeysStay();
  waiting_.AsyncDone(kPauseToken);
}

uint64_t Server::EffectiveFlags(const CommandSpec& spec, std::span<const std::string_view> args) const {
  ScriptFlags sf;
  if (!(spec.flags & kRunsScript) || !scripts_->DeclaredFlags(spec.name, args, &sf)) return spec.flags;
  // Redis's scriptFlagsToCmdFlags: the declared flags replace the command's.
  uint64_t f = spec.flags & ~uint64_t{kStale | kDenyOom | kWrite | kMayReplicate};
  if (!sf.allow_oom && !sf.no_writes) f |= kDenyOom;
  if (!sf.no_writes) f |= kWrite;
  if (sf.allow_stale) f |= kStale;
  return f;
}

bool Server::OomAllows(const Client& c, const CommandSpec& spec, uint64_t flags) {
  // replica-ignore-maxmemory yes: a replica holds what its master holds.
  if (replica_mode_) return true;
  // As Redis's processCommand: evict before every command; when memory stays
  // over the limit, refuse deny-oom commands, an EXEC whose queue holds one,
  // and anything but EXEC/DISCARD/QUIT/RESET inside MULTI (queueing grows).
  if (evictor_.Perform() != Evictor::Result::kFail) return true;
  oom_at_command_start_ = true;
  if (flags & kDenyOom) return false;
  if (c.in_multi) {
    const bool may_run = spec.name == "exec" || spec.name == "discard" || spec.name == "quit" ||
                         spec.name == "reset";
    if (!may_run) return false;
    if (spec.name == "exec") return !c.queued.AnyHas(kDenyOom);
  }
  return true;
}

bool Server::clients_paused() const { return pause_end_ms_ != 0 && NowMs() < pause_end_ms_; }

void Server::EvictKey(int db, std::string_view key) {
  EmitChange(db, {"DEL", std::string(key)});
  TouchKey(db, key);
  dataset_.db(db).Delete(key);
  NotifyKeyspaceEvent(kNotifyEvicted, "evicted", key, db);
}

bool Server::PauseHolds(const Client& c, const CommandSpec& spec, std::span<const std::string_view> args) {
  if (NowMs() >= pause_end_ms_) {
    UnpauseClients();
    return false;
  }
  if (pause_all_ || (spec.flags & kWrite)) return true;
  if (spec.flags & kMayReplicate) return !scripts_->DeclaresNoWrites(spec.name, args);
  // Redis's is_may_replicate_command: an EXEC whose queue holds a write or a
  // may-replicate command (PUBLISH, EVAL, PFCOUNT...).
  return c.in_multi && spec.name == "exec" && c.queued.AnyHas(kWrite | kMayReplicate);
}

void Server::PostponeForPause(Client& c, std::span<const std::string_view> args) {
  WaitCondition cond;
  cond.what = WaitFor::kAsyncDone;
  cond.token = kPauseToken;
  // The pause's end is the timeout; a pause extended meanwhile parks it again.
  ParkThenExecute(c, std::move(cond), std::max<int64_t>(1, pause_end_ms_ - NowMs()), args);
}

void Server::ParkThenExecute(Client& c, WaitCondition cond, int64_t timeout_ms,
                             std::span<const std::string_view> args,
                             std::function<std::string()> refusal) {
  std::vector<std::string> saved(args.begin(), args.end());
  waiting_.Park(c, std::move(cond), timeout_ms,
                [this, saved = std::move(saved), refusal = std::move(refusal)](Client& client, WaitEnd) {
                  if (refusal) {
                    if (std::string error = refusal(); !error.empty()) {
                      protocol::ReplyWriter w(&client.out, client.resp);
                      CountError(error);
                      w.Error(error);
                      return;
                    }
                  }
                  std::vector<std::string_view> argv(saved.begin(), saved.end());
                  Execute(client, argv);
                });
}

bool Server::Call(Client& c, const CommandSpec& called, std::span<const std::string_view> args,
                  CallFlags flags) {
  const bool from_log = (flags & kCallFromLog) != 0;
  // A container called with its row (not the subcommand's) still counts
  // under "client|list", as in Redis 7. Execute passes the subcommand row.
  const CommandSpec* real = &called;
  if (called.is_container() && args.size() > 1) {
    if (const CommandSpec* sub = called.FindSubcommand(args[1])) real = sub;
  }
  const CommandSpec& spec = *real;
  // CLIENT LIST cmd=: the command the client sent (EXEC, not what EXEC ran), as Redis.
  if (call_depth_ == 0) c.last_command = &spec;
  CommandStats& st = command_stats_[spec.id];
  if ((spec.flags & kWrite) && !write_error_.empty() && !from_log) {
    protocol::ReplyWriter w(&c.out, c.resp);
    w.Error(protocol::err::kMisconf);
    CountError(protocol::err::kMisconf);
    st.rejected_calls++;
    return false;
  }
  CommandContext ctx(*this, c, spec, args, from_log);
  const uint64_t records_before = records_emitted_;
  if (call_depth_ == 0) {
    executing_client_ = c.id;
    tracking_.set_executing(c.id);
  }
  call_depth_++;
  ctx.depth = call_depth_;
  int64_t start = MonotonicClock::NowNs();
  PrefetchKeyRun(spec, args, db(c.db));
  spec.handler(ctx);
  auto took_ns = static_cast<uint64_t>(MonotonicClock::NowNs() - start);
  call_depth_--;
  // As Redis 7: after the command ran, so EXEC follows the commands it ran;
  // admin commands (CONFIG, MONITOR, ...) are never shown.
  if (!monitors_.empty() && !(spec.flags & (kSkipMonitor | kAdmin)) && !from_log) FeedMonitors(c, args, &spec);
  const bool count = (flags & kCallNoStats) == 0;
  if (count) {
    LatencySample((spec.flags & kFast) ? "fast-command" : "command", static_cast<int64_t>(took_ns / 1000000));
    // A blocked command run again after a wake-up is the same call (Redis
    // counts a blocking command once): its time and failure count, not a call.
    if (c.retry_deadline_ms < 0) {
      st.calls++;
      stats_.total_commands_processed++;
      c.commands_processed++;
    }
    st.nsec += took_ns;
    if (cfg().latency_tracking) st.RecordLatency(took_ns);
    if (ctx.failed()) st.failed_calls++;
  }
  // Clients parked on a key (blocking pops) wake when a write changes it; each
  // checks the key again, after this command.
  const bool wake_waiters = ctx.dirty() > 0 && waiting_.keys_waited() > 0;
  if (ctx.dirty() > 0) {
    stats_.dirty += static_cast<uint64_t>(ctx.dirty());
    if ((KeyChangesObserved() || wake_waiters) && ctx.touched().empty()) {
      for (int pos : CommandTable::KeyPositions(spec, args)) {
        if (KeyFlagsOf(spec, args, pos) & kKeyNotKey) continue;
        TouchKey(c.db, args[pos]);
        if (wake_waiters) waiting_.KeyReady(c.db, std::string(args[pos]));
      }
    }
    // Applied from the log: the log already holds it (a replica appends the
    // bytes it received, verbatim).
    if ((spec.flags & kWrite) && !(spec.flags & kNoPropagate) && !from_log) {
      Propagate(c, spec, args, ctx);
    }
  } else if ((spec.flags & kMayReplicate) && !ctx.rewritten().empty() && !from_log) {
    // PUBLISH: logged for replicas only (the handler asks), changing nothing here.
    Propagate(c, spec, args, ctx);
  }
  for (const auto& t : ctx.touched()) {
    TouchKey(t.db, t.key);
    if (wake_waiters) waiting_.KeyReady(t.db, t.key);
  }
  // Client-side caching: what a tracking client read, it hears about when it changes.
  Client& reader = c.script_caller != nullptr ? *c.script_caller : c;
  if ((spec.flags & kReadOnly) && Tracking::Remembers(reader)) {
    for (int pos : CommandTable::KeyPositions(spec, args)) {
      if (!(KeyFlagsOf(spec, args, pos) & kKeyNotKey)) tracking_.RememberKey(reader, args[pos]);
    }
  }
  if (call_depth_ == 0) {
    executing_client_ = 0;
    tracking_.FlushDeferred();  // its own invalidations follow its reply
    // CLIENT CACHING applies to the next command (all of a MULTI's), as Redis.
    if (!c.in_multi && spec.name != "client" && !spec.name.starts_with("client|")) {
      c.tracking.caching = false;
    }
  }
  if (call_depth_ == 0 && !from_log) {
    // Keys that SCAN or RANDOMKEY expired on their way are independent
    // deletions, not a transaction (Redis's CMD_TOUCHES_ARBITRARY_KEYS).
    FlushPropagation(pending_changes_.size() > 1 && (spec.name == "scan" || spec.name == "randomkey"));
    const bool logged = records_emitted_ != records_before;
    if (logged) c.woff = journal_.end_offset();  // what WAIT / WAITAOF wait for
    // Acknowledged means logged: the replies of a write, and of any command that
    // produced records (EXEC, a read that expired a key), are held until the AOF
    // writer has written them (fsynced under appendfsync always). A write that
    // changed nothing waits too: its reply may rest on an earlier write not yet
    // logged, so it waits for the whole journal.
    if (reply_ack_ && ((spec.flags & kWrite) != 0 || logged)) {
      waiting_.HoldReplies(c, *reply_ack_, journal_.end_offset());
    }
  }
  if (!count) return !ctx.failed();
  auto took = static_cast<int64_t>(took_ns / 1000);
  int64_t threshold = cfg().slowlog_log_slower_than;
  if (threshold >= 0 && took >= threshold && cfg().slowlog_max_len > 0 && !(spec.flags & kSkipSlowlog)) {
    SlowlogEntry e{slowlog_next_id_++, NowMs() / 1000, took, {}, c.addr, c.name};
    size_t n = std::min<size_t>(args.size(), 32);
    for (size_t i = 0; i < n; i++) {
      if (i == 31 && args.size() > 32) {
        e.args.push_back(fmt::format("... ({} more arguments)", args.size() - 31));
        break;
      }
      if (spec.secret_arg != nullptr && spec.secret_arg(args, i)) {
        e.args.emplace_back("(redacted)");
        continue;
      }
      std::string a(args[i].substr(0, 128));
      if (args[i].size() > 128) a += fmt::format("... ({} more bytes)", args[i].size() - 128);
      e.args.push_back(std::move(a));
    }
    slowlog_.push_front(std::move(e));
    while (slowlog_.size() > static_cast<size_t>(cfg().slowlog_max_len)) slowlog_.pop_back();
  }
  return !ctx.failed();
}

void Server::Propagate(const Client& c, const CommandSpec&, std::span<const std::string_view> args,
                       const CommandContext& ctx) {
  if (!ctx.rewritten().empty()) {
    for (const auto& cmd : ctx.rewritten()) EmitChange(c.db, cmd);
    return;
  }
  if (!journal_.has_consumers()) {
    CountChange(c.db, Journal::EncodedSize(args));
    return;
  }
  EmitChange(c.db, std::vector<std::string>(args.begin(), args.end()));
}

void Server::EmitChange(int db, std::vector<std::string> cmd) {
  if (!journal_.has_consumers()) {
    CountChange(db, Journal::EncodedSize(std::span<const std::string>(cmd)));
    return;
  }
  if (PendingChanges() && pending_db_ != db) FlushPropagation();
  pending_db_ = db;
  pending_changes_.push_back(std::move(cmd));
  records_emitted_++;
  if (call_depth_ == 0) FlushPropagation();
}

void Server::CountChange(int db, uint64_t bytes) {
  // Nobody stores the log: only its offsets move, so nothing is copied (EXEC of
  // 300,000 SETs would otherwise hold a second copy of every value).
  if (PendingChanges() && pending_db_ != db) FlushPropagation();
  pending_db_ = db;
  pending_counted_++;
  pending_counted_bytes_ += bytes;
  records_emitted_++;
  if (call_depth_ == 0) FlushPropagation();
}

void Server::FlushPropagation(bool one_per_batch) {
  if (!PendingChanges()) return;
  if (pending_counted_ > 0) {
    journal_.CountBatch(pending_db_, pending_counted_, pending_counted_bytes_);
    pending_counted_ = 0;
    pending_counted_bytes_ = 0;
  }
  if (one_per_batch) {
    for (const auto& cmd : pending_changes_) journal_.AppendBatch(pending_db_, std::span(&cmd, 1));
  } else if (!pending_changes_.empty()) {
    journal_.AppendBatch(pending_db_, pending_changes_);
  }
  pending_changes_.clear();
  ScheduleSeal();
}

void Server::ScheduleSeal() {
  if (seal_posted_) return;
  // Seal after the handlers already queued in this loop turn have run: one
  // group (and under appendfsync always one fsync) for all of them.
  seal_posted_ = true;
  boost::asio::post(io_, [this] {
    seal_posted_ = false;
    journal_.Seal();
  });
}

void Server::FeedMonitors(const Client& c, std::span<const std::string_view> args, const CommandSpec* spec) {
  int64_t us = NowUs();
  std::string line = fmt::format("{}.{:06d} [{} {}]", us / 1000000, us % 1000000, c.db, c.addr);
  for (size_t i = 0; i < args.size(); i++) {
    const bool secret = spec != nullptr && spec->secret_arg != nullptr && spec->secret_arg(args, i);
    line += " " + (secret ? std::string("\"(redacted)\"") : protocol::QuoteRepr(args[i]));
  }
  for (Client* m : monitors_) {
    protocol::ReplyWriter w(&m->out, m->resp);
    w.Simple(line);
  }
  // A monitor is otherwise idle, so nothing else would send its feed.
  // Flush may close the connection, which erases it from connections_: step first.
  for (auto it = connections_.begin(); it != connections_.end();) {
    Connection* conn = (it++)->second.get();
    if (conn->client().monitor && &conn->client() != &c) conn->Flush();
  }
}

}  // namespace feedkv::server
