// RespParser: an incremental parser of client commands in RESP2 multibulk form
// ("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n") and in the inline form ("GET k\r\n").
//
// The caller owns the input buffer and passes the unconsumed bytes on every
// call. The parser remembers how far it got inside a partial command as
// offsets, so a command that arrives in many reads is scanned once, and a
// caller may move or grow its buffer between calls. Arguments are returned as
// views into the caller's buffer, valid until the caller changes the buffer.
// Limits and error texts are Redis's (see ParserLimits, error_text.h).
// Not thread-safe; one parser per connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace feedkv::protocol {

struct ParserLimits {
  uint64_t max_bulk_len = 512ull * 1024 * 1024;       // proto-max-bulk-len
  uint64_t max_multibulk_len = 1024ull * 1024;        // Redis: 1M arguments
  uint64_t max_inline_len = 64 * 1024;                // PROTO_INLINE_MAX_SIZE
  // A client that must still authenticate may announce no more than this
  // (Redis: 10 arguments of 16 KB), so it cannot make the server reserve memory.
  bool unauthenticated = false;
  static constexpr uint64_t kUnauthMaxMultibulk = 10;
  static constexpr uint64_t kUnauthMaxBulk = 16384;
};

class RespParser {
 public:
  enum class Result { kCommand, kNeedMore, kError };

  explicit RespParser(ParserLimits limits = {}) : limits_(limits) {}

  // Parses at most one command from the front of `buf`. On kCommand,
  // *consumed is the length of the command's bytes and args() holds its
  // arguments (possibly empty for an empty inline line, which callers skip).
  // On kNeedMore nothing is consumed; call again with the same bytes plus
  // more. On kError, error() holds the Redis error text; the connection must
  // reply and close, as the stream can no longer be trusted.
  Result Parse(std::string_view buf, size_t* consumed);

  const std::vector<std::string_view>& args() const { return args_; }
  const std::string& error() const { return error_; }

  // Size of the bulk currently being read (0 if none): lets the caller grow
  // its buffer once for a large argument instead of many times.
  uint64_t pending_bulk_len() const { return bulk_len_ > 0 ? static_cast<uint64_t>(bulk_len_) : 0; }

  void set_limits(const ParserLimits& limits) { limits_ = limits; }

  // Gives back the argument arrays a huge command grew (Redis frees each
  // command's argv after it runs), so a 100,000-argument SADD does not pin
  // megabytes on its connection. Keeps a partial command's state.
  void ReleaseLargeArrays();

 private:
  Result ParseMultibulk(std::string_view buf, size_t* consumed);
  Result ParseInline(std::string_view buf, size_t* consumed);
  Result Fail(std::string msg);
  void ResetCommandState();

  ParserLimits limits_;
  // State of the partial command: bytes scanned so far from its start,
  // how far the search for the current line's terminator has got (so an
  // incomplete header or inline line is not rescanned on every call),
  // arguments still expected, the length of the bulk being read (-1: none),
  // and the (offset, length) of each argument already read.
  size_t pos_ = 0;
  size_t scan_ = 0;
  int64_t multibulk_left_ = -1;
  int64_t bulk_len_ = -1;
  std::vector<std::pair<size_t, size_t>> arg_spans_;
  std::vector<std::string_view> args_;
  std::string inline_storage_;  // unescaped inline arguments live here
  std::string error_;
};

// Splits an inline command line the way Redis's sdssplitargs does: blanks
// (isspace) separate arguments, but only space, \t, \r and \n end an unquoted
// one; "double quotes" take \n \r \t \b \a \\ \" \xHH escapes; 'single
// quotes' take \'; a closing quote must be followed by a blank or the end.
// Unlike Redis, NUL is an ordinary byte. Returns false on unbalanced quotes.
bool SplitInlineArgs(std::string_view line, std::vector<std::string>* out);
// The inverse, as Redis's sdscatrepr: `s` in double quotes with C escapes
// (MONITOR lines, command-line values turned into config lines).
std::string QuoteRepr(std::string_view s);

}  // namespace feedkv::protocol
