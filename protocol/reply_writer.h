// ReplyWriter: encodes replies in RESP2 or RESP3 onto a caller-owned string.
//
// Types that RESP2 lacks are mapped as Redis maps them: a map becomes a flat
// array of key/value pairs, a set an array, a double a bulk string, a boolean
// an integer, null a null bulk ($-1). The caller picks the protocol per
// connection (HELLO). Not thread-safe; cheap to construct around any string.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace feedkv::protocol {

class ReplyWriter {
 public:
  ReplyWriter(std::string* out, int resp) : out_(out), resp_(resp) {}

  int resp() const { return resp_; }
  std::string* buffer() { return out_; }

  void Simple(std::string_view s);        // +OK
  void Ok() { out_->append("+OK\r\n"); }
  // `msg` is the full error text, e.g. "ERR syntax error"; a missing code
  // prefix gets "ERR " as Redis's addReplyError does. CR/LF are replaced.
  void Error(std::string_view msg);
  // The line exactly as given (RedisModule_ReplyWithError: some modules' errors
  // have no code word, as RedisBloom's "Bad capacity"). CR/LF are replaced.
  void ErrorVerbatim(std::string_view msg);
  void Integer(int64_t v);
  void Bulk(std::string_view s);
  void Null();                            // RESP2 $-1, RESP3 _
  void NullArray();                       // RESP2 *-1, RESP3 _
  void ArrayHeader(size_t n);
  void MapHeader(size_t pairs);           // RESP3 %n, RESP2 *2n
  void SetHeader(size_t n);               // RESP3 ~n, RESP2 *n
  void PushHeader(size_t n);              // RESP3 >n, RESP2 *n
  void Double(double d);                  // RESP3 ,d  RESP2 bulk
  // A sorted-set score as Redis 7.0 replies it (FormatScore): RESP3 ,d  RESP2 bulk.
  void Score(double d);
  void Bool(bool b);                      // RESP3 #t  RESP2 :1
  void Verbatim(std::string_view s, std::string_view fmt = "txt");  // RESP3 =, RESP2 bulk
  void BulkArray(const std::string_view* items, size_t n);
  void Raw(std::string_view s) { out_->append(s); }
  // A double already formatted: RESP3 ,text  RESP2 bulk (GEOPOS's long-double
  // text, as Redis's addReplyHumanLongDouble).
  void FormattedDouble(std::string_view text);

 private:
  void Header(char type, int64_t n);
  std::string* out_;
  int resp_;
};

// Formats a double for a reply: the shortest digits that round-trip, plain
// for integers below 2^62 and for decimal exponents -5..16, else scientific
// ("1.5e-07"); "inf", "-inf", "nan". (INCRBYFLOAT's long-double text, which
// never uses an exponent, is a different format.)
std::string FormatDouble(double d);

// Formats a sorted-set score as Redis 7.0 does (addReplyDouble): "%.17g",
// "inf", "-inf". Returns a view into buf.
std::string_view FormatScore(double d, char (&buf)[32]);

// Appends a command as a RESP multibulk (used for AOF records and replication).
void AppendCommand(std::string* out, const std::string_view* args, size_t n);

}  // namespace feedkv::protocol
