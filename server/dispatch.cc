// Server::Execute / Server::Call: the one path every command takes, and
// CommandContext. See docs/architecture.md for the flow.
#include <chrono>
#include <charconv>
#include <cmath>
#include <fmt/format.h>

#include "server/command_context.h"
#include "server/monotonic_clock.h"
#include "server/network.h"
#include "server/server.h"
#include "storage/database.h"

namespace feedkv::server {

namespace {


// Quotes an argument as Redis's sdscatrepr does (MONITOR, slow log peers).
std::string Repr(std::string_view s) {
  std::string r = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '\\': r += "\\\\"; break;
      case '"': r += "\\\""; break;
      case '\n': r += "\\n"; break;
      case '\r': r += "\\r"; break;
      case '\t': r += "\\t"; break;
      case '\a': r += "\\a"; break;
      case '\b': r += "\\b"; break;
      default:
        if (std::isprint(c)) {
          r.push_back(static_cast<char>(c));
        } else {
          r += fmt::format("\\x{:02x}", c);
        }
    }
  }
  return r + "\"";
}

}  // namespace

bool ParseInt64(std::string_view s, int64_t* out) {
  // Redis's string2ll: no '+', no leading zeros, no "-0".
  if (s.empty() || s.size() > 20 || s[0] == '+') return false;
  if (s[0] == '0' && s.size() > 1) return false;
  if (s[0] == '-' && (s.size() == 1 || s[1] == '0')) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

bool ParseDouble(std::string_view s, double* out) {
  if (s.empty() || s.size() > 5000 || std::isspace(static_cast<unsigned char>(s[0]))) return false;
  std::string tmp(s);
  char* end = nullptr;
  errno = 0;
  double d = std::strtod(tmp.c_str(), &end);
  if (end != tmp.c_str() + tmp.size() || std::isnan(d)) return false;
  if (errno == ERANGE && (d == HUGE_VAL || d == -HUGE_VAL)) return false;
  *out = d;
  return true;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++) {
    if (LowerAscii(a[i]) != LowerAscii(b[i])) return false;
  }
  return true;
}

CommandContext::CommandContext(Server& s, Client& c, const CommandSpec& sp,
                               std::span<const std::string_view> a)
    : server(s), client(c), spec(sp), args(a), reply(&c.out, c.resp) {}

Database& CommandContext::db() { return server.db(client.db); }

// While the dataset loads (AOF replay) the clock stands still at 0, so no key
// expires: the log holds a DEL for every expiry that really happened.
int64_t CommandContext::now_ms() const { return server.loading() ? 0 : NowMs(); }

Entry* CommandContext::LookupRead(Database& db, std::string_view key, int64_t now, bool touch) {
  Entry* e = touch ? db.Lookup(key, now) : db.Peek(key, now);
  (e != nullptr ? server.stats().keyspace_hits : server.stats().keyspace_misses)++;
  return e;
}

void CommandContext::Error(std::string_view msg) {
  failed_ = true;
  reply.Error(msg);
  server.CountError(msg.find(' ') != std::string_view::npos && std::isupper(static_cast<unsigned char>(msg[0]))
                        ? msg
                        : std::string_view("ERR"));
}

bool CommandContext::IntArg(size_t i, int64_t* out) {
  if (ParseInt64(args[i], out)) return true;
  Error(protocol::err::kNotInteger);
  return false;
}

void CommandContext::SubcommandError() {
  // Dispatch rejects unknown subcommands and wrong arities from the table;
  // this is for the finer checks of a handler (Redis's
  // addReplySubcommandSyntaxError).
  std::string upper(spec.container().name);
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (spec.parent != nullptr) {
    Error(fmt::format("ERR unknown subcommand or wrong number of arguments for '{}'. Try {} HELP.",
                      args[1].substr(0, 128), upper));
  } else {
    Error(fmt::format("ERR unknown subcommand '{}'. Try {} HELP.", args[1].substr(0, 128), upper));
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

bool CommandContext::IdArg(size_t i, int64_t* out) {
  std::string_view s = args[i];
  size_t lead = 0;
  bool neg = !s.empty() && s[0] == '-';
  while (lead + neg + 1 < s.size() && s[lead + neg] == '0') lead++;
  std::string trimmed = neg ? "-" + std::string(s.substr(1 + lead)) : std::string(s.substr(lead));
  if (trimmed != "-0" && ParseInt64(trimmed, out)) return true;
  if (trimmed == "-0") {
    *out = 0;
    return true;
  }
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
    w.Error(msg);
    CountError(msg);
    if (c.in_multi) c.multi_error = true;
  };
  if (spec == nullptr) {
    if (unknown_sub) {
      std::string upper(args[0]);
      for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      reject(fmt::format("ERR unknown subcommand '{}'. Try {} HELP.", args[1].substr(0, 128), upper));
      return;
    }
    std::string preview;
    for (size_t i = 1; i < args.size() && preview.size() < 128; i++) {
      preview += fmt::format("'{}' ", args[i].substr(0, 128));
    }
    reject(fmt::format("ERR unknown command '{}', with args beginning with: {}",
                       args[0].substr(0, 128), preview));
    return;
  }
  CommandStats& st = command_stats_[spec->id];
  int argc = static_cast<int>(args.size());
  if ((spec->arity > 0 && argc != spec->arity) || (spec->arity < 0 && argc < -spec->arity)) {
    st.rejected_calls++;
    reject(fmt::format("ERR wrong number of arguments for '{}' command", spec->name));
    return;
  }
  // Before AUTH, as Redis: DEBUG is refused even to a client that could log in.
  if ((spec->flags & kProtected) && !AllowProtectedAction(cfg().enable_debug_command, c.local)) {
    st.rejected_calls++;
    reject(protocol::err::kDebugNotAllowed);
    return;
  }
  if (!c.authenticated && !(spec->flags & kNoAuth)) {
    st.rejected_calls++;
    reject(protocol::err::kNoAuth);
    return;
  }
  if (loading_ && !(spec->flags & kLoading)) {
    st.rejected_calls++;
    reject(protocol::err::kLoading);
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
  size_t before = c.out.size();
  auto mode = c.reply_mode;
  if (mode == Client::ReplyMode::kSkip) c.reply_mode = Client::ReplyMode::kOn;
  Call(c, *spec, args);
  bool keep = mode == Client::ReplyMode::kOn ||
              (mode == Client::ReplyMode::kOff && c.reply_mode == Client::ReplyMode::kOn);
  if (!keep) c.out.resize(before);
}

void Server::Call(Client& c, const CommandSpec& called, std::span<const std::string_view> args) {
  // A container called with its row (not the subcommand's) still counts
  // under "client|list", as in Redis 7. Execute passes the subcommand row.
  const CommandSpec* real = &called;
  if (called.is_container() && args.size() > 1) {
    if (const CommandSpec* sub = called.FindSubcommand(args[1])) real = sub;
  }
  const CommandSpec& spec = *real;
  c.last_command = &spec;
  CommandStats& st = command_stats_[spec.id];
  if ((spec.flags & kWrite) && !write_error_.empty()) {
    protocol::ReplyWriter w(&c.out, c.resp);
    w.Error(protocol::err::kMisconf);
    CountError(protocol::err::kMisconf);
    st.rejected_calls++;
    return;
  }
  if (!monitors_.empty() && !(spec.flags & kSkipMonitor) && !loading_) FeedMonitors(c, args);
  CommandContext ctx(*this, c, spec, args);
  const uint64_t records_before = records_emitted_;
  call_depth_++;
  int64_t start = MonotonicClock::NowNs();
  spec.handler(ctx);
  auto took_ns = static_cast<uint64_t>(MonotonicClock::NowNs() - start);
  call_depth_--;
  st.calls++;
  st.nsec += took_ns;
  if (cfg().latency_tracking) st.RecordLatency(took_ns);
  if (ctx.failed()) st.failed_calls++;
  stats_.total_commands_processed++;
  c.commands_processed++;
  if (ctx.dirty() > 0) {
    stats_.dirty += static_cast<uint64_t>(ctx.dirty());
    if (!watched_.empty() && ctx.touched().empty()) {
      for (int pos : CommandTable::KeyPositions(spec, args)) TouchKey(c.db, args[pos]);
    }
    if ((spec.flags & kWrite) && !(spec.flags & kNoPropagate)) Propagate(c, spec, args, ctx);
  }
  for (const auto& t : ctx.touched()) TouchKey(t.db, t.key);
  if (call_depth_ == 0) {
    FlushPropagation();
    // Acknowledged means logged: the replies of a write, and of any command that
    // produced records (EXEC, a read that expired a key), wait until the AOF writer
    // has written them (fsynced under appendfsync always). A write that changed
    // nothing waits too: its reply may rest on an earlier write not yet logged.
    if (change_sink_ != nullptr) {
      const bool logged = records_emitted_ != records_before;
      uint64_t barrier = change_sink_->ReplyBarrier((spec.flags & kWrite) != 0 || logged);
      if (barrier > ack_offset_ && barrier > c.reply_barrier) {
        if (c.reply_barrier == 0) ack_waiters_.push_back(c.id);
        c.reply_barrier = barrier;
      }
    }
  }
  auto took = static_cast<int64_t>(took_ns / 1000);
  int64_t threshold = cfg().slowlog_log_slower_than;
  if (threshold >= 0 && took >= threshold && cfg().slowlog_max_len > 0) {
    SlowlogEntry e{slowlog_next_id_++, NowMs() / 1000, took, {}, c.addr, c.name};
    size_t n = std::min<size_t>(args.size(), 32);
    for (size_t i = 0; i < n; i++) {
      if (i == 31 && args.size() > 32) {
        e.args.push_back(fmt::format("... ({} more arguments)", args.size() - 31));
        break;
      }
      std::string a(args[i].substr(0, 128));
      if (args[i].size() > 128) a += fmt::format("... ({} more bytes)", args[i].size() - 128);
      e.args.push_back(std::move(a));
    }
    slowlog_.push_front(std::move(e));
    while (slowlog_.size() > static_cast<size_t>(cfg().slowlog_max_len)) slowlog_.pop_back();
  }
}

void Server::Propagate(const Client& c, const CommandSpec&, std::span<const std::string_view> args,
                       const CommandContext& ctx) {
  if (change_sink_ == nullptr) return;
  if (!ctx.rewritten().empty()) {
    for (const auto& cmd : ctx.rewritten()) EmitChange(c.db, cmd);
    return;
  }
  std::vector<std::string> cmd(args.begin(), args.end());
  EmitChange(c.db, std::move(cmd));
}

void Server::EmitChange(int db, std::vector<std::string> cmd) {
  if (change_sink_ == nullptr) return;
  if (!pending_changes_.empty() && pending_db_ != db) FlushPropagation();
  pending_db_ = db;
  pending_changes_.push_back(std::move(cmd));
  records_emitted_++;
  if (call_depth_ == 0) FlushPropagation();
}

void Server::FlushPropagation() {
  if (pending_changes_.empty()) return;
  if (change_sink_ != nullptr) change_sink_->Append(pending_db_, pending_changes_);
  pending_changes_.clear();
}

void Server::FeedMonitors(const Client& c, std::span<const std::string_view> args) {
  int64_t us = NowUs();
  std::string line = fmt::format("{}.{:06d} [{} {}]", us / 1000000, us % 1000000, c.db, c.addr);
  for (auto a : args) line += " " + Repr(a);
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
