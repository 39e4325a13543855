// CommandContext: what a command handler sees for one execution: the
// arguments, the client, the server, the reply writer, and the ways to report
// effects (Dirty, PropagateAs, Error). Handlers parse, call storage, reply.
// Lives on the stack of one dispatch; not thread-safe.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/error_text.h"
#include "protocol/reply_writer.h"
#include "server/client.h"
#include "server/command_table.h"
#include "server/keyspace_events.h"
#include "storage/int_text.h"
#include "storage/status.h"

namespace feedkv {
class Database;
struct Entry;
}

namespace feedkv::server {

class Server;

// A counter id argument: an int64 in decimal, leading zeros allowed ("007",
// "-0" is 0). COUNTER.* and the cold tier's routing read ids with it.
bool ParseCounterId(std::string_view s, int64_t* out);

class CommandContext {
 public:
  CommandContext(Server& server, Client& client, const CommandSpec& spec,
                 std::span<const std::string_view> args, bool from_log = false);

  Server& server;
  Client& client;
  const CommandSpec& spec;
  std::span<const std::string_view> args;
  protocol::ReplyWriter reply;
  // Applied from the log (AOF replay, a master's stream), not sent by a
  // client: the clock stands still (now_ms() is 0), client limits do not
  // apply, nothing may block. See server/log_applier.h.
  const bool from_log;
  int depth = 1;  // 1 for a top-level command, 2 inside EXEC

  size_t argc() const { return args.size(); }
  std::string_view arg(size_t i) const { return args[i]; }
  Database& db();
  int64_t now_ms() const;
  // Whether this command may park its client (WaitingClients): not inside
  // MULTI/EXEC and not from the log. Otherwise it answers at once, as if its
  // timeout had passed (Redis's rule).
  bool can_block() const;
  // A read lookup in `db`: lazily expires the key and counts a keyspace hit or
  // miss. `touch`: records the access (LRU/LFU stamp), as every lookup in
  // Redis but those flagged LOOKUP_NOTOUCH (TYPE, EXISTS, OBJECT...).
  Entry* LookupRead(Database& db, std::string_view key, int64_t now, bool touch = true);

  // Replies with an error and counts it for INFO errorstats/commandstats.
  void Error(std::string_view msg);
  // The one place a Status becomes an error reply, by its code: WrongType is
  // Redis's WRONGTYPE line, Full (a longset in cache mode) "FULL " and its
  // message, any other "ERR " and its message (Status messages carry no RESP
  // prefix; an overflow's message is Redis's own text). REQUIRES: !s.ok().
  void Error(const Status& s);
  // An error line sent as given, without the "ERR " a code-less text gets
  // (RedisBloom's texts); counted as ERR.
  void ErrorVerbatim(std::string_view msg);
  void SyntaxError() { Error(protocol::err::kSyntax); }
  // For container commands (CONFIG, CLIENT...): Redis's text for a known
  // subcommand with arguments its handler refuses, or for an unknown one.
  void SubcommandError();
  void WrongType() { Error(protocol::err::kWrongType); }
  // Redis's addReplyHelp for a container's HELP subcommand: a header line
  // naming the container, `lines`, then HELP itself.
  void ReplyHelp(std::initializer_list<std::string_view> lines);
  bool failed() const { return failed_; }
  // Whether the client's unsent replies have reached the hard limit of its
  // client-output-buffer-limit class, counting every byte (as Redis counts a
  // reply that spilled past its static buffer). Loops that can reply without
  // bound (KEYS, negative *RANDMEMBER counts) check it and stop: the reply
  // will never be sent, the connection closes after the command (Redis's
  // CLIENT_CLOSE_ASAP). False for the server's own clients (scripts, the log).
  bool ReplyOverLimit();
  // Whether a hard output limit applies to this client (a loop that replies
  // without bound is stopped by it).
  bool ReplyLimited() const;
  // What a read operation (server/ops/) found — the value, null when the key is
  // missing — or false after replying its error:
  //   const HashValue* h;
  //   if (!ctx.Found(hash_ops::Find(ctx, ctx.arg(1)), &h)) return;
  template <class T>
  bool Found(StatusOr<T> found, T* out) {
    if (!found.ok()) {
      Error(found.status());
      return false;
    }
    *out = *found;
    return true;
  }

  // Parses argument i as an int64; on failure replies Redis's error and
  // returns false.
  bool IntArg(size_t i, int64_t* out);
  // Argument i as a timeout in milliseconds, as Redis's
  // getTimeoutFromObjectOrReply (WAIT, WAITAOF, CLIENT PAUSE): an integer, not
  // negative; replies Redis's error if not.
  bool TimeoutMsArg(size_t i, int64_t* out);
  bool DoubleArg(size_t i, double* out);
  // Parses argument i as an int64 id: decimal, zero-padding allowed (as
  // redis-benchmark's __rand_int__ produces); replies Redis's error if not.
  bool IdArg(size_t i, int64_t* out);  // ParseCounterId, or replies an error

  // Records that the command changed `n` things. A write command that
  // reported changes is propagated to the AOF and replicas.
  void Dirty(int64_t n = 1) { dirty_ += n; }
  int64_t dirty() const { return dirty_; }
  // Propagate `cmd` instead of the arguments as received (for commands whose
  // effect must be logged in a deterministic form). May be called more than
  // once to log several records.
  void PropagateAs(std::vector<std::string> cmd) { rewritten_.push_back(std::move(cmd)); }
  const std::vector<std::vector<std::string>>& rewritten() const { return rewritten_; }
  // Declares a key as modified, so WATCHers see the change. By default a
  // command that reported changes (Dirty) touches every key its spec names;
  // a handler that calls Touched declares the whole set itself instead, for
  // commands whose keys do not all change (DEL of some missing keys, SMOVE,
  // SINTERSTORE's sources, COPY's source, MOVE's other database).
  void Touched(int db, std::string_view key) { touched_.push_back({db, std::string(key)}); }
  const std::vector<WatchedKey>& touched() const { return touched_; }
  // Reports a keyspace event (docs/pubsub.md lists them): `event` happened to
  // `key` in the client's database (or `db`); `type` is its KeyspaceEvent class.
  void Notify(int type, std::string_view event, std::string_view key);
  void Notify(int type, std::string_view event, std::string_view key, int db);

 private:
  void Failed(std::string_view msg);  // marks the call failed and counts the error
  bool failed_ = false;
  int64_t dirty_ = 0;
  std::vector<std::vector<std::string>> rewritten_;
  std::vector<WatchedKey> touched_;
};

// Parses a double as Redis does (accepts inf, rejects nan and trailing junk).
bool ParseDouble(std::string_view s, double* out);
// Case-insensitive ASCII comparison. Inline: option parsers call it once per
// keyword they try, for every argument.
inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++) {
    if (LowerAscii(a[i]) != LowerAscii(b[i])) return false;
  }
  return true;
}

}  // namespace feedkv::server
