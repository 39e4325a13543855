// Client: the per-connection state that commands see: identity, selected
// database, protocol version, auth, transaction and watch state, and the
// pending reply bytes. The network side (Connection) owns one Client and
// flushes `out` to the socket; commands only append to it.
// Not thread-safe: owned by the command thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "server/command_queue.h"
#include "server/config.h"
#include "server/tracking.h"

namespace feedkv::server {

struct CommandSpec;
struct AclUser;
struct MigrateState;

struct WatchedKey {
  int db;
  std::string key;
  // The key is logically expired but still there (a SWAPDB brought it in): as
  // Redis's watchedKey.expired, its deletion is no change, and EXEC's check
  // for keys that expired since WATCH skips it.
  bool expired = false;
};

// Redis keeps a client's first 16 KiB of replies in a fixed buffer that its
// output limits and CLIENT LIST omem leave out; feedkv counts the same way.
inline constexpr uint64_t kUncountedReplyBytes = 16 * 1024;

struct Client {
  uint64_t id = 0;
  std::string name;
  std::string lib_name, lib_ver;
  std::string addr, laddr;  // "ip:port" or unix path
  bool local = false;       // a loopback or Unix-socket peer (protected mode, "local" settings)
  int fd = -1;
  int db = 0;
  int resp = 2;
  bool authenticated = false;
  // The ACL user the connection runs as (server/acl.h); null for the server's
  // own clients (the log applier, a script's client between runs), which may
  // run anything.
  AclUser* user = nullptr;
  int64_t created_ms = 0;
  int64_t last_interaction_ms = 0;

  // Reply handling.
  std::string out;              // replies not yet handed to the socket
  // Reply bytes handed to an asynchronous write that has not completed.
  uint64_t out_in_flight = 0;
  // What client-output-buffer-limit and CLIENT LIST omem count: unsent reply
  // bytes past the first kUncountedReplyBytes (Redis's fixed reply buffer,
  // which neither counts).
  uint64_t OutputBufferBytes() const {
    const uint64_t unsent = out.size() + out_in_flight;
    return unsent > kUncountedReplyBytes ? unsent - kUncountedReplyBytes : 0;
  }
  // kSkip: the next command's reply is dropped (CLIENT REPLY SKIP).
  enum class ReplyMode { kOn, kOff, kSkip } reply_mode = ReplyMode::kOn;
  // Set by CLIENT REPLY ON: its own +OK goes out whatever mode the call began in.
  bool reply_forced = false;
  bool close_after_reply = false;
  // A command's reply went past the hard output limit while it was being
  // built (CommandContext::ReplyOverLimit): the connection closes without
  // sending it, as Redis's CLIENT_CLOSE_ASAP.
  bool close_asap = false;
  bool no_evict = false;
  bool monitor = false;
  // A replica fed by a ReplicaSender: it owns what is written to the socket,
  // so replies to this connection's commands (REPLCONF ACK) are dropped.
  bool replica = false;
  const CommandSpec* last_command = nullptr;  // CLIENT LIST cmd=: a table row
  // Journal offset just past the last records this client's commands logged:
  // what WAIT and WAITAOF wait for (Redis's c->woff).
  uint64_t woff = 0;
  // A command of this client is parked (WaitingClients): its later input waits.
  bool blocked = false;
  // Set while a blocking command (BZPOPMIN...) runs again because a key it waited
  // on changed: the deadline of its first wait, unix ms (0: none), which the
  // command keeps instead of its timeout argument, as a Redis client stays
  // blocked with its first deadline. -1 on a first run.
  int64_t retry_deadline_ms = -1;
  // While a parked command runs again after its wait ended: its arrival order
  // among the waiters, kept if it parks again (WaitingClients). 0 otherwise.
  uint64_t retry_seq = 0;
  // A MIGRATE whose transfer is under way or done (server/commands/cmd_dump.cc):
  // its second run finds the target's replies here.
  std::shared_ptr<MigrateState> migrate;

  // Pub/Sub subscriptions (server/pubsub.h): channels, patterns, shard channels.
  std::set<std::string, std::less<>> channels, patterns, shard_channels;
  // Messages wait in `out` for the server's next push flush (Server::Publish).
  bool push_pending = false;
  bool subscribed() const { return !channels.empty() || !patterns.empty() || !shard_channels.empty(); }
  // Its client-output-buffer-limit class: pubsub while subscribed, else
  // normal (monitors too, as in Redis; replicas are limited by their sender).
  ClientClass output_class() const { return subscribed() ? ClientClass::kPubsub : ClientClass::kNormal; }

  // CLIENT TRACKING (server/tracking.h).
  ClientTracking tracking;
  // Set on the script engine's client while a script runs: the client whose
  // EVAL it is (keys a script reads are tracked for that client, as Redis).
  Client* script_caller = nullptr;

  // MULTI/EXEC.
  bool in_multi = false;
  bool multi_error = false;     // a command failed to queue: EXEC aborts
  bool watch_dirty = false;     // a watched key changed: EXEC returns nil
  CommandQueue queued;  // the commands queued inside MULTI
  std::vector<WatchedKey> watched;

  // Stats for CLIENT LIST.
  uint64_t commands_processed = 0;
  uint64_t net_in = 0, net_out = 0;
  // CLIENT LIST qbuf / qbuf-free, as Redis: the query buffer's bytes (while a
  // command runs, those of its batch: that command and the ones read with it)
  // and the buffer's free room.
  size_t query_buffer_size = 0;
  size_t query_buffer_free = 0;
};

}  // namespace feedkv::server
