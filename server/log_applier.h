// LogApplier: the one path by which logged commands change the dataset: AOF
// replay at start-up today, the replication stream next.
//
// It decodes the journal's framing (SELECT / MULTI / EXEC, storage/journal.h)
// and runs every command through Server::Call with the same table checks as
// client dispatch (known command, arity), plus one of its own: only write
// commands may appear in a log. Commands run as *applied from the log* (a
// property of the call, see CallFlags): their clock stands still so nothing
// expires on its own (the log holds a DEL for every expiry that happened),
// nothing is logged again, no reply waits, and limits meant for clients
// (proto-max-bulk-len on APPEND, an EXPIREAT in the past deleting at once)
// do not apply. A command that fails is logged and skipped, as Redis's AOF
// loading does; a malformed log is Corruption.
//
// Thread-safety: command thread only.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "server/client.h"
#include "storage/aof_reader.h"
#include "storage/journal.h"
#include "storage/status.h"

namespace feedkv::server {

class Server;
struct CommandSpec;

class LogApplier {
 public:
  struct Options {
    // Count the commands in INFO commandstats (a replica does; AOF loading,
    // as Redis's, does not).
    bool count_stats = false;
    // Names the source in log lines ("AOF", "master").
    std::string source = "AOF";
    // A failed command stops applying (Aborted) instead of being logged and
    // skipped: a replica never skips silently.
    bool stop_on_error = false;
    // Run the PUBLISH / SPUBLISH records a master logs for its replicas
    // (delivering to this node's subscribers); AOF loading skips them, as
    // Redis never writes them to its AOF.
    bool deliver_messages = false;
  };

  LogApplier(Server& server, Options options);

  // Applies the records of one verified group, in order. Errors name the
  // record as "<file> offset <byte offset in the file>"; the group starts at
  // `group_begin`.
  Status ApplyGroup(std::span<const aof::Record> records, std::string_view file,
                    uint64_t group_begin);

  // The database the log has selected (SELECT carries over between groups).
  int db() const { return decoder_.db(); }
  void set_db(int db) { decoder_.set_db(db); }

  uint64_t applied() const { return applied_; }
  uint64_t failed() const { return failed_; }

 private:
  Status ApplyBatch(int db, std::span<const JournalDecoder::Argv> batch);

  Server& server_;
  Options options_;
  Client client_;  // the log's own client: its db follows SELECT
  JournalDecoder decoder_;
  std::string where_;  // of the record being applied
  std::string last_name_;
  const CommandSpec* last_spec_ = nullptr;
  uint64_t applied_ = 0;
  uint64_t failed_ = 0;
};

}  // namespace feedkv::server
