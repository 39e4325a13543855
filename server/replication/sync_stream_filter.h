// SyncStreamFilter: turns feedkv's log bytes into the command stream Redis
// sends a client that attached with the old SYNC command (redis-cli --replica,
// Redis's own test helpers, stream-reading tools).
//
// The log is RESP commands in groups, each group opening with SELECT and
// closing with a "#xxh64:<hex>\r\n" trailer (storage/aof_format.h). Redis's
// stream has no trailers and a SELECT only where the database changes, so the
// filter drops every trailer and every SELECT of the database already
// selected. It is applied to SYNC clients only: they never resume by offset,
// while a PSYNC replica counts the bytes it got and must get the log's bytes.
//
// Input may be cut anywhere (the sender reads the log in windows): the filter
// keeps its place between calls. A SELECT is held until complete (it is short);
// any other command passes through as it arrives, whatever its size.
// Not thread-safe: owned by one sender thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace feedkv::server {

class SyncStreamFilter {
 public:
  // Appends to *out what a SYNC client gets of `in`, the next log bytes.
  void Feed(std::string_view in, std::string* out);

 private:
  enum class State { kTop, kTrailer, kCountLine, kBulkLine, kBulkBody };

  // Appends bytes of the current command: held while it may be a SELECT.
  void Emit(std::string_view bytes, std::string* out);
  // One header line ("*<n>" or "$<n>", CRLF included) is complete in line_.
  void HeaderLine(std::string* out);
  // The current argument's body is complete.
  void ArgumentDone(std::string* out);

  State state_ = State::kTop;
  std::string line_;        // the header line being read
  std::string held_;        // the command so far, while it may be a SELECT
  std::string arg_;         // the current argument, while held
  bool holding_ = false;
  int64_t argc_ = 0;        // arguments of the current command
  int64_t arg_index_ = 0;   // the argument being read
  uint64_t body_left_ = 0;  // bytes of the current body still to come, CRLF included
  uint64_t body_len_ = 0;   // the current body's length, CRLF excluded
  std::string selected_;    // the database of the last SELECT passed on ("" none)
};

}  // namespace feedkv::server
