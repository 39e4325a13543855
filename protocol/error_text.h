// Redis's error texts, word for word, so clients and tests that match on them
// keep working. Each is the text after the leading '-' and before "\r\n".
#pragma once

namespace feedkv::protocol::err {

inline constexpr char kSyntax[] = "ERR syntax error";
inline constexpr char kNotInteger[] = "ERR value is not an integer or out of range";
inline constexpr char kNotFloat[] = "ERR value is not a valid float";
inline constexpr char kOverflow[] = "ERR increment or decrement would overflow";
inline constexpr char kWrongType[] =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr char kNoSuchKey[] = "ERR no such key";
inline constexpr char kOutOfRange[] = "ERR index out of range";
inline constexpr char kNoAuth[] = "NOAUTH Authentication required.";
inline constexpr char kWrongPass[] =
    "WRONGPASS invalid username-password pair or user is disabled.";
inline constexpr char kAuthNotConfigured[] =
    "ERR AUTH <password> called without any password configured for the default user. "
    "Are you sure your configuration is correct?";
inline constexpr char kInvalidExpire[] = "ERR invalid expire time in '%s' command";
inline constexpr char kDbIndexOutOfRange[] = "ERR DB index is out of range";
inline constexpr char kInvalidDbIndex[] = "ERR invalid DB index";
inline constexpr char kMultiNested[] = "ERR MULTI calls can not be nested";
inline constexpr char kExecWithoutMulti[] = "ERR EXEC without MULTI";
inline constexpr char kDiscardWithoutMulti[] = "ERR DISCARD without MULTI";
inline constexpr char kWatchInMulti[] = "ERR WATCH inside MULTI is not allowed";
inline constexpr char kExecAbort[] =
    "EXECABORT Transaction discarded because of previous errors.";
inline constexpr char kNoProto[] = "NOPROTO unsupported protocol version";
inline constexpr char kMisconf[] =
    "MISCONF Errors writing to the AOF file or snapshotting; writes are refused until the "
    "disk recovers. Check the server log for details.";
inline constexpr char kReadOnlyReplica[] = "READONLY You can't write against a read only replica.";
inline constexpr char kLoading[] = "LOADING Redis is loading the dataset in memory";
inline constexpr char kMaxClients[] = "ERR max number of clients reached";
inline constexpr char kClusterDisabled[] = "ERR This instance has cluster support disabled";
inline constexpr char kStringTooLong[] = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";

// Protocol errors; the connection is closed after the reply.
inline constexpr char kProtoInvalidMultibulk[] = "ERR Protocol error: invalid multibulk length";
inline constexpr char kProtoInvalidBulk[] = "ERR Protocol error: invalid bulk length";
inline constexpr char kProtoUnbalancedQuotes[] = "ERR Protocol error: unbalanced quotes in request";
inline constexpr char kProtoTooBigInline[] = "ERR Protocol error: too big inline request";
inline constexpr char kProtoTooBigMultibulk[] = "ERR Protocol error: too big mbulk count string";
inline constexpr char kProtoTooBigBulk[] = "ERR Protocol error: too big bulk count string";

}  // namespace feedkv::protocol::err
