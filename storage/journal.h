// Journal: the server's one log of changes, in the form they are replayed.
//
// Every change the command thread makes is appended here as RESP commands, a
// client would send them: SELECT before a record whose database differs from
// the previous one, MULTI ... EXEC around a batch that must apply atomically.
// The records of one loop turn form a *group*, closed by a checksum trailer
// (aof_format.h) when the loop turn ends (Seal). Every byte has a global
// offset: bytes since the first record ever logged. Offsets count whether or
// not anything stores the log, survive restarts (the snapshot header and the
// AOF manifest record them) and are never reset by a rewrite, so "offset X"
// names the same change on every node and in every file.
//
// Every group opens with SELECT, so any group boundary is a place to start
// reading (a replica continues from its own end, whatever it holds).
// Consumers receive each sealed group in order, as a shared immutable buffer
// (no copy per consumer): the AOF writer stores it in segment files, replica
// senders and an in-memory tail will read it the same way. While there is no
// consumer, records are only counted (their encoded size), not encoded: the
// offsets are the same, the cost is not. A consumer that
// starts reading at a group boundary (a new AOF segment, a snapshot position)
// calls ForgetSelectedDb so the next group opens with SELECT and can be read
// on its own.
//
// JournalDecoder is the inverse of the framing: it turns records back into
// (database, atomic batch) pairs, for the one applier (server/log_applier.h).
//
// Thread-safety: a Journal and a JournalDecoder belong to one thread (the
// command thread). A JournalGroup's bytes are immutable and may be read from
// any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "storage/status.h"

namespace feedkv {

// One sealed group: the journal's bytes [start, start + bytes->size()), its
// trailer included.
struct JournalGroup {
  uint64_t start = 0;
  std::shared_ptr<const std::string> bytes;
  uint64_t end() const { return start + bytes->size(); }
};

class JournalConsumer {
 public:
  virtual ~JournalConsumer() = default;
  // Called on the journal's thread for every sealed group, in offset order.
  virtual void OnGroup(const JournalGroup& group) = 0;
};

class Journal {
 public:
  // A journal whose next byte has global offset `offset`.
  explicit Journal(uint64_t offset = 0) : sealed_(offset) {}
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Both seal the open group first, so every consumer sees whole groups.
  void AddConsumer(JournalConsumer* c);
  void RemoveConsumer(JournalConsumer* c);
  bool has_consumers() const { return !consumers_.empty(); }

  // Appends one atomic batch of commands against database `db`.
  void AppendBatch(int db, std::span<const std::vector<std::string>> cmds);
  // While nobody consumes the bytes: moves the offsets as AppendBatch would for
  // a batch of `commands` commands whose records take `command_bytes`
  // (EncodedSize of each), without the commands themselves.
  void CountBatch(int db, size_t commands, uint64_t command_bytes);
  // The bytes one command takes in the log (its RESP form).
  static uint64_t EncodedSize(std::span<const std::string_view> argv);
  static uint64_t EncodedSize(std::span<const std::string> argv);
  // Closes the open group (adds its trailer) and hands it to every consumer.
  // Returns sealed_offset(). No-op on an empty group.
  uint64_t Seal();
  // Appends whole sealed groups made elsewhere (a replica storing its
  // master's stream verbatim): consumers get exactly these bytes, at the
  // journal's end. Seals the open group first. Returns sealed_offset().
  uint64_t AppendSealed(std::shared_ptr<const std::string> bytes);

  // End of the last sealed group.
  uint64_t sealed_offset() const { return sealed_; }
  // Where the open group will end once sealed (its trailer included): the
  // offset a change appended now is covered by.
  uint64_t end_offset() const;
  bool group_empty() const { return open_size_ == 0; }
  // The next group starts with SELECT, whatever database it uses.
  void ForgetSelectedDb() { selected_db_ = -1; }
  // Continues at `offset` (after loading a dataset whose log ends there).
  // REQUIRES: group_empty().
  void ResetOffset(uint64_t offset);

  uint64_t groups_sealed() const { return groups_sealed_; }

 private:
  // The framing around a batch: SELECT when the database changes and MULTI
  // before a batch of several commands; EXEC after it. Written to `out`, or
  // only counted when it is null.
  void OpenBatch(int db, size_t commands, std::string* out);
  void CloseBatch(size_t commands, std::string* out);

  std::vector<JournalConsumer*> consumers_;
  std::string group_;       // the open group's bytes (empty while nobody consumes)
  uint64_t open_size_ = 0;  // the open group's size, encoded or counted
  uint64_t sealed_;
  int selected_db_ = -1;
  uint64_t groups_sealed_ = 0;
};

// Decodes the framing Journal::AppendBatch produces. Feed it the records of a
// group in order, then EndGroup(); `apply(db, batch)` is called for every
// complete batch (one command, or the commands between MULTI and EXEC).
class JournalDecoder {
 public:
  // Views into the caller's record storage, valid until EndGroup.
  using Argv = std::span<const std::string_view>;
  using ApplyFn = std::function<Status(int db, std::span<const Argv> batch)>;

  JournalDecoder(int num_dbs, ApplyFn apply) : num_dbs_(num_dbs), apply_(std::move(apply)) {}

  // One record. `where` names its place for error messages.
  Status Feed(const Argv& argv, std::string_view where);
  // A group ended: a MULTI still open is corruption (a batch never spans groups).
  Status EndGroup(std::string_view where);
  // Feeds every record of sealed group bytes (a JournalGroup, a received
  // stream chunk), checking each group's trailer; a damaged or incomplete
  // group is Corruption.
  Status FeedGroups(std::string_view bytes, std::string_view where);
  int db() const { return db_; }
  void set_db(int db) { db_ = db; }

 private:
  int num_dbs_;
  ApplyFn apply_;
  int db_ = 0;
  bool in_multi_ = false;
  std::vector<Argv> batch_;
};

}  // namespace feedkv
