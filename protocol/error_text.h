// Every error reply text of the server, in one place: Redis's word for word, so
// clients and tests that match on them keep working, and feedkv's own beside
// them. Each is the text after the leading '-' and before "\r\n" (or, where
// marked, an fmt format string or the prefix of a message that follows).
#pragma once

#include <string_view>

namespace feedkv::protocol::err {

// The code word a message without one gets (Redis's addReplyError).
inline constexpr char kErrPrefix[] = "ERR ";
// The code words CommandContext::Error(Status) puts before a WrongType or an
// InvalidObject status's message.
inline constexpr char kWrongTypePrefix[] = "WRONGTYPE ";
inline constexpr char kInvalidObjectPrefix[] = "INVALIDOBJ ";
// A text below without its code word (ERR, WRONGTYPE or INVALIDOBJ): the message a
// Status carries, since CommandContext::Error(Status) puts the code word back.
constexpr std::string_view Message(std::string_view text) {
  for (std::string_view word : {std::string_view(kErrPrefix), std::string_view(kWrongTypePrefix),
                                std::string_view(kInvalidObjectPrefix)}) {
    if (text.starts_with(word)) return text.substr(word.size());
  }
  return text;
}
// The code word of a longset that may not grow (cache mode, docs/longset.md).
inline constexpr char kFullPrefix[] = "FULL ";
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
// fmt format strings ({} for the command name).
inline constexpr char kInvalidExpire[] = "ERR invalid expire time in '{}' command";
inline constexpr char kDbIndexOutOfRange[] = "ERR DB index is out of range";
inline constexpr char kMultiNested[] = "ERR MULTI calls can not be nested";
inline constexpr char kNotAllowedInMulti[] = "ERR Command not allowed inside a transaction";
inline constexpr char kShutdownFailed[] = "ERR Errors trying to SHUTDOWN. Check logs.";
inline constexpr char kNoShutdownInProgress[] = "ERR No shutdown in progress.";
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
inline constexpr char kNoReplicas[] = "NOREPLICAS Not enough good replicas to write.";
inline constexpr char kMasterDown[] =
    "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";
inline constexpr char kNoMasterLink[] = "NOMASTERLINK Can't SYNC while not connected with my master";
inline constexpr char kWaitFromReplica[] = "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.";
inline constexpr char kOom[] = "OOM command not allowed when used memory > 'maxmemory'.";
inline constexpr char kMaxClients[] = "ERR max number of clients reached";
inline constexpr char kClusterDisabled[] = "ERR This instance has cluster support disabled";
inline constexpr char kStringTooLong[] = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
// Sent to a non-local client at accept time in protected mode, then the connection is
// closed. Redis 7.0's text, its typo ("Setup a an") included.
inline constexpr char kProtectedMode[] =
    "DENIED Redis is running in protected mode because protected mode is enabled and no "
    "password is set for the default user. In this mode connections are only accepted from "
    "the loopback interface. If you want to connect from external computers to Redis you may "
    "adopt one of the following solutions: 1) Just disable protected mode sending the command "
    "'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the "
    "same host the server is running, however MAKE SURE Redis is not publicly accessible from "
    "internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively "
    "you can just disable the protected mode by editing the Redis configuration file, and "
    "setting the protected mode option to 'no', and then restarting the server. 3) If you "
    "started the server manually just for testing, restart it with the '--protected-mode no' "
    "option. 4) Setup a an authentication password for the default user. NOTE: You only need "
    "to do one of the above things in order for the server to start accepting connections "
    "from the outside.";
inline constexpr char kDebugNotAllowed[] =
    "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", "
    "you can run it from a local connection, otherwise you need to set this option in the "
    "configuration file, and then restart the server.";

// Command errors (Redis's where Redis has the command, feedkv's own otherwise).
// Those with {} are fmt format strings; those ending in ": " are prefixes of a
// message that follows.
inline constexpr char kAppendonlyWithReplicas[] =
    "ERR appendonly is required while replicas are attached";
inline constexpr char kClientAttrBadChars[] =
    "ERR {} cannot contain spaces, newlines or special characters.";
inline constexpr char kClientIdNotPositive[] = "ERR client-id should be greater than 0";
inline constexpr char kClientNameBadChars[] =
    "ERR Client names cannot contain spaces, newlines or special characters.";
inline constexpr char kClientPauseMode[] = "ERR CLIENT PAUSE mode must be WRITE or ALL";
inline constexpr char kColdReadFailedPrefix[] = "ERR cold tier read failed: ";
inline constexpr char kColdTierUnavailable[] = "ERR the cold tier is not available";
inline constexpr char kCountBelowMinusOne[] = "ERR count should be greater than or equal to -1";
inline constexpr char kCountTooLarge[] = "ERR count is too large";
inline constexpr char kCounterMgetArity[] =
    "ERR wrong number of arguments for 'counter.mget' command";
inline constexpr char kCounterSchemaMismatch[] =
    "ERR counter space '{}' exists with a different schema: {}";
inline constexpr char kDebugReloadOption[] =
    "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.";
inline constexpr char kDecrOverflow[] = "ERR decrement would overflow";
inline constexpr char kExpireGtLt[] = "ERR GT and LT options at the same time are not compatible";
inline constexpr char kExpireNxXxGtLt[] =
    "ERR NX and XX, GT or LT options at the same time are not compatible";
inline constexpr char kFailoverForceNeedsTarget[] =
    "ERR FAILOVER with force option requires both a timeout and target HOST and IP.";
inline constexpr char kFailoverInProgress[] = "ERR FAILOVER already in progress.";
inline constexpr char kFailoverNoReplicas[] = "ERR FAILOVER requires connected replicas.";
inline constexpr char kFailoverOnReplica[] = "ERR FAILOVER is not valid when server is a replica.";
inline constexpr char kFailoverTargetNotReplica[] =
    "ERR FAILOVER target HOST and PORT is not a replica.";
inline constexpr char kFailoverTargetOffline[] = "ERR FAILOVER target replica is not online.";
inline constexpr char kFailoverTimeout[] = "ERR FAILOVER timeout must be greater than 0";
inline constexpr char kFreqWithoutLfu[] =
    "ERR An LFU maxmemory policy is not selected, access frequency not tracked.{}";
inline constexpr char kGetkeysArity[] = "ERR Invalid number of arguments specified for command";
inline constexpr char kGetkeysInvalidArgs[] = "ERR Invalid arguments specified for command";
inline constexpr char kHelloSyntax[] = "ERR Syntax error in HELLO option '{}'";
inline constexpr char kIdleTimeWithLfu[] =
    "ERR An LFU maxmemory policy is selected, idle time not tracked.{}";
inline constexpr char kIncrNaN[] = "ERR increment would produce NaN or Infinity";
inline constexpr char kInvalidClientId[] = "ERR Invalid client ID";
inline constexpr char kInvalidCommand[] = "ERR Invalid command specified";
inline constexpr char kInvalidCounterSchemaPrefix[] = "ERR invalid counter schema: ";
inline constexpr char kInvalidCounterSettingsPrefix[] = "ERR invalid counter-* settings: ";
inline constexpr char kInvalidCursor[] = "ERR invalid cursor";
inline constexpr char kInvalidFirstDb[] = "ERR invalid first DB index";
inline constexpr char kInvalidMasterPort[] = "ERR Invalid master port";
inline constexpr char kInvalidSecondDb[] = "ERR invalid second DB index";
inline constexpr char kKeysMustBeStrings[] = "ERR The specified keys must contain string values";
inline constexpr char kLcsLenAndIdx[] =
    "ERR If you want both the length and indexes, please just use IDX.";
inline constexpr char kLcsTooLong[] = "ERR String too long for LCS";
inline constexpr char kLcsTooMuchMemory[] =
    "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len";
inline constexpr char kLimitNegative[] = "ERR LIMIT can't be negative";
inline constexpr char kNoFailover[] = "ERR No failover in progress.";
inline constexpr char kNoKeyArguments[] = "ERR The command has no key arguments";
inline constexpr char kNoSuchClient[] = "ERR No such client";
inline constexpr char kNoSuchCounterField[] = "ERR no such field '{}' in counter space '{}'";
inline constexpr char kNoSuchCounterSpace[] = "ERR no such counter space '{}'";
inline constexpr char kNoSuchUser[] = "ERR No such user '{}'";
inline constexpr char kNotPositive[] = "ERR value is out of range, must be positive";
inline constexpr char kNumkeysNotPositive[] = "ERR numkeys should be greater than 0";
inline constexpr char kNumkeysTooMany[] = "ERR Number of keys can't be greater than number of args";
inline constexpr char kOffsetOutOfRange[] = "ERR offset is out of range";
inline constexpr char kPersistenceUnavailable[] = "ERR persistence is not available";
inline constexpr char kPingArity[] = "ERR wrong number of arguments for 'ping' command";
inline constexpr char kProtocolVersionNotInteger[] =
    "ERR Protocol version is not an integer or out of range";
inline constexpr char kPsyncFailoverReplid[] = "ERR PSYNC FAILOVER replid must match my replid.";
inline constexpr char kReloadFailedPrefix[] = "ERR Error trying to load the RDB dump: ";
inline constexpr char kReplicaLogPrefix[] = "ERR can't start the log a replica needs: ";
inline constexpr char kReplicationUnavailable[] = "ERR replication is not available";
inline constexpr char kSameObject[] = "ERR source and destination objects are the same";
inline constexpr char kSpillFailedPrefix[] = "ERR spill failed: ";
inline constexpr char kTimeoutNegative[] = "ERR timeout is negative";
inline constexpr char kTimeoutNotInteger[] = "ERR timeout is not an integer or out of range";
inline constexpr char kUnknownClientType[] = "ERR Unknown client type '{}'";
inline constexpr char kUnknownCommand[] = "ERR unknown command '{}', with args beginning with: {}";
// DEBUG LOADAOF inside MULTI while the AOF writer has not caught up.
inline constexpr char kLoadAofCannotWait[] =
    "ERR DEBUG LOADAOF cannot wait for the AOF to be written here (inside MULTI); run it alone";
// DEBUG PROTOCOL.
inline constexpr char kDebugPushResp2[] = "ERR RESP2 is not supported by this command";
inline constexpr char kDebugProtocolType[] =
    "ERR Wrong protocol type name. Please use one of the following: "
    "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false";
// DEBUG QUICKLIST-PACKED-THRESHOLD with a size Redis refuses.
inline constexpr char kPackedThresholdRange[] =
    "ERR argument must be a memory value bigger than 1 and smaller than 4gb";
inline constexpr char kUnknownDebugSubcommand[] =
    "ERR unknown subcommand or wrong number of arguments for '{}'. Try DEBUG HELP.";
inline constexpr char kUnknownSubcommand[] = "ERR unknown subcommand '{}'. Try {} HELP.";
inline constexpr char kUnknownSubcommandOrArity[] =
    "ERR unknown subcommand or wrong number of arguments for '{}'. Try {} HELP.";
inline constexpr char kUnrecognizedOption[] = "ERR Unrecognized option '{}'";
inline constexpr char kUnrecognizedReplconfOption[] = "ERR Unrecognized REPLCONF option: {}";
inline constexpr char kUnsupportedOption[] = "ERR Unsupported option {}";
inline constexpr char kValueNotBetween[] =
    "ERR value is out of range, value must between {} and {}";
inline constexpr char kWaitAofNoAppendonly[] =
    "ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.";
inline constexpr char kWrongArity[] = "ERR wrong number of arguments for '{}' command";
inline constexpr char kCountRange[] =
    "ERR value is out of range, value must between -9223372036854775807 and "
    "9223372036854775807";
inline constexpr char kReplicaReadOnlyNo[] =
    "ERR replica-read-only no is not supported: a replica must keep the master's log "
    "byte-identical";
inline constexpr char kWaitAofOnReplica[] =
    "ERR WAITAOF cannot be used with replica instances. Please also note that writes "
    "to replicas are just local and are not propagated.";

// Sorted sets (Redis's t_zset.c).
inline constexpr char kZaddXXNX[] = "ERR XX and NX options at the same time are not compatible";
inline constexpr char kZaddGtLtNx[] =
    "ERR GT, LT, and/or NX options at the same time are not compatible";
inline constexpr char kZaddIncrPairs[] = "ERR INCR option supports a single increment-element pair";
inline constexpr char kZsetNaN[] = "ERR resulting score is not a number (NaN)";
inline constexpr char kZsetMinMaxFloat[] = "ERR min or max is not a float";
inline constexpr char kZsetMinMaxLex[] = "ERR min or max not valid string range item";
inline constexpr char kZrangeLimit[] =
    "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX";
inline constexpr char kCountNotPositive[] = "ERR count should be greater than 0";
inline constexpr char kWeightNotFloat[] = "ERR weight value is not a float";
inline constexpr char kValueOutOfRange[] = "ERR value is out of range";
// fmt format string ({} for the command's name).
inline constexpr char kNoInputKeys[] = "ERR at least 1 input key is needed for '{}' command";
// Blocking commands' timeouts, in seconds (BZPOPMIN, BLPOP...).
inline constexpr char kTimeoutNotFloat[] = "ERR timeout is not a float or out of range";
inline constexpr char kTimeoutOutOfRange[] = "ERR timeout is out of range";
inline constexpr char kZrangeLexScores[] =
    "ERR syntax error, WITHSCORES not supported in combination with BYLEX";

// CLIENT UNBLOCK: the reason argument, and what the unblocked client gets with ERROR.
inline constexpr char kUnblockReason[] = "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR";
inline constexpr char kUnblocked[] = "UNBLOCKED client unblocked via CLIENT UNBLOCK";

// Feeds (FEED.*): a bad entry id reuses XADD's text, as the ids share the stream-id shape.
inline constexpr char kFeedBadEntryId[] = "ERR Invalid stream ID specified as stream command argument";
inline constexpr char kFeedSelfFollow[] = "ERR a user cannot follow itself";

// Hashes (HINCRBY, HINCRBYFLOAT).
inline constexpr char kHashValueNotInteger[] = "ERR hash value is not an integer";
inline constexpr char kHashValueNotFloat[] = "ERR hash value is not a float";
inline constexpr char kValueNaNOrInfinity[] = "ERR value is NaN or Infinity";

// CONFIG SET / config file reasons, the text after
// "CONFIG SET failed (possibly related to argument '<name>') - ".
inline constexpr char kConfigImmutable[] = "can't set immutable config";
inline constexpr char kConfigProtected[] = "can't set protected config";
inline constexpr char kDbfilenamePath[] = "dbfilename can't be a path, just a filename";
inline constexpr char kAppendfilenameEmpty[] = "appendfilename can't be empty";
inline constexpr char kAppendfilenamePath[] = "appendfilename can't be a path, just a filename";
inline constexpr char kAppenddirnameEmpty[] = "appenddirname can't be empty";
inline constexpr char kAppenddirnamePath[] = "appenddirname can't be a path, just a dirname";
inline constexpr char kObufArgCount[] = "Wrong number of arguments in buffer limit configuration.";
inline constexpr char kObufClass[] = "Invalid client class specified in buffer limit configuration.";
inline constexpr char kObufValue[] =
    "Error in hard, soft or soft_seconds setting in buffer limit configuration.";

// Protocol errors; the connection is closed after the reply.
inline constexpr char kProtoInvalidMultibulk[] = "ERR Protocol error: invalid multibulk length";
inline constexpr char kProtoInvalidBulk[] = "ERR Protocol error: invalid bulk length";
inline constexpr char kProtoUnauthMultibulk[] = "ERR Protocol error: unauthenticated multibulk length";
inline constexpr char kProtoUnauthBulk[] = "ERR Protocol error: unauthenticated bulk length";
inline constexpr char kProtoUnbalancedQuotes[] = "ERR Protocol error: unbalanced quotes in request";
inline constexpr char kProtoTooBigInline[] = "ERR Protocol error: too big inline request";
inline constexpr char kProtoTooBigMultibulk[] = "ERR Protocol error: too big mbulk count string";
inline constexpr char kProtoTooBigBulk[] = "ERR Protocol error: too big bulk count string";

// Lists (t_list.c)
inline constexpr char kListRankZero[] =
    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to "
    "start from the end of the list";
inline constexpr char kListCountNegative[] = "ERR COUNT can't be negative";
inline constexpr char kListMaxlenNegative[] = "ERR MAXLEN can't be negative";

// Bitmaps (bitops.c)
inline constexpr char kBitOffsetInvalid[] = "ERR bit offset is not an integer or out of range";
inline constexpr char kBitValueInvalid[] = "ERR bit is not an integer or out of range";
inline constexpr char kBitposBitInvalid[] = "ERR The bit argument must be 1 or 0.";
inline constexpr char kBitopNotOneKey[] = "ERR BITOP NOT must be called with a single source key.";
inline constexpr char kBitfieldOverflowType[] = "ERR Invalid OVERFLOW type specified";
inline constexpr char kBitfieldType[] =
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.";
inline constexpr char kBitfieldRoWrite[] = "ERR BITFIELD_RO only supports the GET subcommand";

// HyperLogLog (hyperloglog.c)
// fmt format string ({} for the command's full name).
inline constexpr char kSubscribedContext[] =
    "ERR Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context";
inline constexpr char kSortNotDouble[] = "ERR One or more scores can't be converted into double";
// Bloom filters: RedisBloom's texts byte for byte, including those it sends
// without an ERR prefix.
inline constexpr char kBfBadErrorRate[] = "ERR bad error rate";
inline constexpr char kBfErrorRateRange[] = "ERR error rate must be in the range (0.000000, 1.000000)";
inline constexpr char kBfBadCapacity[] = "ERR bad capacity";
inline constexpr char kBfCapacityRange[] = "ERR capacity must be in the range [1, 1073741824]";
inline constexpr char kBfNoExpansion[] = "ERR no expansion";
inline constexpr char kBfBadExpansion[] = "ERR bad expansion";
inline constexpr char kBfNonscalingExpand[] = "Nonscaling filters cannot expand";
inline constexpr char kBfExpansionRange[] = "ERR expansion must be in the range [0, 32768]";
inline constexpr char kBfItemExists[] = "ERR item exists";
inline constexpr char kBfNotFound[] = "ERR not found";
inline constexpr char kBfFull[] = "ERR non scaling filter is full";
inline constexpr char kBfInsertFailed[] = "ERR problem inserting into filter";
inline constexpr char kBfInsertBadErrorRate[] = "Bad error rate";
inline constexpr char kBfInsertBadExpansion[] = "Bad expansion";
inline constexpr char kBfInsertBadCapacity[] = "Bad capacity";
inline constexpr char kBfUnknownArgument[] = "Unknown argument received";
inline constexpr char kBfScanDumpIterator[] = "Second argument must be numeric";
inline constexpr char kBfLoadChunkIterator[] = "ERR Second argument must be numeric";
inline constexpr char kBfInvalidInfo[] = "Invalid information value";
inline constexpr char kHllNotValid[] = "WRONGTYPE Key is not a valid HyperLogLog string value.";
inline constexpr char kHllCorrupt[] = "INVALIDOBJ Corrupted HLL object detected";
inline constexpr char kHllNoKey[] = "ERR The specified key does not exist";
inline constexpr char kHllNotSparse[] = "ERR HLL encoding is not sparse";
inline constexpr char kHllDebugUnknown[] = "ERR Unknown PFDEBUG subcommand '{}'";

// DUMP / RESTORE (cluster.c)
inline constexpr char kBusyKey[] = "BUSYKEY Target key name already exists.";
inline constexpr char kSortByDenied[] = "ERR BY option of SORT denied due to insufficient ACL permissions.";
inline constexpr char kSortGetDenied[] = "ERR GET option of SORT denied due to insufficient ACL permissions.";
// MIGRATE (Redis's cluster.c texts; the IOERR lines carry no ERR).
inline constexpr char kMigrateKeysNeedEmptyKey[] =
    "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string";
inline constexpr char kMigrateConnect[] = "IOERR error or timeout connecting to the client";
inline constexpr char kMigrateWrite[] = "IOERR error or timeout writing to target instance";
inline constexpr char kMigrateRead[] = "IOERR error or timeout reading to target instance";
inline constexpr char kMigrateTargetErrorPrefix[] = "ERR Target instance replied with error: ";
// feedkv's own: the client waits for the target, which it cannot do in MULTI or a script.
inline constexpr char kMigrateCannotWait[] = "ERR MIGRATE cannot run inside MULTI/EXEC or a script";
inline constexpr char kRestoreTtl[] = "ERR Invalid TTL value, must be >= 0";
inline constexpr char kRestoreIdleTime[] = "ERR Invalid IDLETIME value, must be >= 0";
inline constexpr char kRestoreFreq[] = "ERR Invalid FREQ value, must be >= 0 and <= 255";
inline constexpr char kDumpPayload[] = "ERR DUMP payload version or checksum are wrong";
inline constexpr char kBadDataFormat[] = "ERR Bad data format";

// Scripting (EVAL, SCRIPT, the redis library). The script-side texts are the
// message of an error table; the engine gives them their code ("ERR ").
inline constexpr char kNoScript[] = "NOSCRIPT No matching script. Please use EVAL.";
inline constexpr char kNotBusy[] = "NOTBUSY No scripts in execution right now.";
inline constexpr char kBusyScript[] =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
inline constexpr char kBusyFunction[] =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";
inline constexpr char kUnkillable[] =
    "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either "
    "wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.";
inline constexpr char kScriptKilled[] = "ERR Script killed by user with SCRIPT KILL...";
inline constexpr char kNumKeysNegative[] = "ERR Number of keys can't be negative";
inline constexpr char kNumKeysTooMany[] = "ERR Number of keys can't be greater than number of args";
inline constexpr char kScriptFlushOption[] = "ERR SCRIPT FLUSH only support SYNC|ASYNC option";
inline constexpr char kScriptUnknownCommand[] = "Unknown Redis command called from script";
inline constexpr char kScriptWrongArity[] = "Wrong number of args calling Redis command from script";
inline constexpr char kScriptNotAllowed[] = "This Redis command is not allowed from script";
inline constexpr char kScriptReadOnly[] = "Write commands are not allowed from read-only scripts.";
// A script on a stale replica (link down, replica-serve-stale-data no) called
// a command without the stale flag (Redis's scriptVerifyAllowStale).
inline constexpr char kScriptStaleReplica[] = "Can not execute the command on a stale replica";
inline constexpr char kScriptNoArgs[] = "Please specify at least one argument for this redis lib call";
inline constexpr char kScriptArgType[] = "Lua redis lib command arguments must be strings or integers";

// ACL users (server/acl.h, server/commands/cmd_acl.cc); {} marks fmt fields.
inline constexpr char kAclUsernameSpaces[] = "ERR Usernames can't contain spaces or null characters";
inline constexpr char kAclUnmatchedParen[] = "ERR Unmatched parenthesis in acl selector starting at '{}'.";
inline constexpr char kAclDefaultUndeletable[] = "ERR The 'default' user cannot be removed";
inline constexpr char kAclUnknownCategory[] = "ERR Unknown category '{}'";
inline constexpr char kAclGenpassBits[] =
    "ERR ACL GENPASS argument must be the number of bits for the output password, a positive "
    "number up to {}";
inline constexpr char kAclUserNotFound[] = "ERR User '{}' not found";
inline constexpr char kAclCommandNotFound[] = "ERR Command '{}' not found";
inline constexpr char kAclNoFile[] =
    "ERR This Redis instance is not configured to use an ACL file. You may want to specify users "
    "via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis "
    "configuration file set) in order to store users in the Redis configuration.";
inline constexpr char kAclSaveFailed[] =
    "ERR There was an error trying to save the ACLs. Please check the server logs for more "
    "information";
inline constexpr char kNoPermCommand[] = "NOPERM this user has no permissions to run the '{}' command";
inline constexpr char kNoPermKey[] =
    "NOPERM this user has no permissions to access one of the keys used as arguments";
inline constexpr char kNoPermChannel[] =
    "NOPERM this user has no permissions to access one of the channels used as arguments";
inline constexpr char kNoPermExec[] =
    "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC "
    "call. This command is no longer allowed for the following reason: {}";
inline constexpr char kNoPermExecCommand[] = "no permission to execute the command or subcommand";
inline constexpr char kNoPermExecKey[] = "no permission to touch the specified keys";
inline constexpr char kNoPermExecChannel[] = "no permission to access one of the channels used as arguments";
// redis.call refused by the ACL: "The user executing the script " and one of these.
inline constexpr char kScriptAclPrefix[] = "The user executing the script ";
inline constexpr char kAclCantRun[] = "can't run this command or subcommand";
inline constexpr char kAclCantAccessKeys[] =
    "can't access at least one of the keys mentioned in the command arguments";
inline constexpr char kAclCantPublish[] = "can't publish to the channel mentioned in the command";

// Scripts (server/script_engine.cc, cmd_scripting.cc); {} marks fmt fields.
inline constexpr char kScriptRunError[] = "ERR Error running script (call to f_{}): @{}";
inline constexpr char kScriptShebangEngine[] = "ERR Unexpected engine in script shebang: {}";
inline constexpr char kScriptShebangOption[] = "ERR Unknown lua shebang option: {}";
inline constexpr char kScriptShebangFlag[] = "ERR Unexpected flag in script shebang: {}";
inline constexpr char kScriptCompile[] = "ERR Error compiling script (new function): {}";
inline constexpr char kScriptUnknownError[] = "ERR unknown error";
inline constexpr char kScriptStackLimit[] = "ERR reached lua stack limit";
inline constexpr char kScriptDebuggerUnsupported[] =
    "ERR The Lua debugger (SCRIPT DEBUG YES|SYNC) is not supported by feedkv";
inline constexpr char kScriptDebugUsage[] = "ERR Use SCRIPT DEBUG YES/SYNC/NO";

// Functions (server/script_functions.cc, cmd_functions.cc); {} marks fmt fields;
// kFunctionRegisterPrefix is followed by the Lua error.
// Raised inside Lua without a code word; FUNCTION LOAD replies it after "ERR ".
inline constexpr char kFunctionBadName[] =
    "Library names can only contain letters, numbers, or underscores(_) and must be at least one "
    "character long";
inline constexpr char kFunctionMissingMetadata[] = "ERR Missing library metadata";
inline constexpr char kFunctionInvalidMetadata[] = "ERR Invalid library metadata";
inline constexpr char kFunctionNameTwice[] =
    "ERR Invalid metadata value, name argument was given multiple times";
inline constexpr char kFunctionBadMetadataValue[] = "ERR Invalid metadata value given: {}";
inline constexpr char kFunctionNoLibraryName[] = "ERR Library name was not given";
inline constexpr char kFunctionCompile[] = "ERR Error compiling function: {}";
inline constexpr char kFunctionRegisterPrefix[] = "ERR Error registering functions: ";
inline constexpr char kFunctionNoneRegistered[] = "ERR No functions registered";
inline constexpr char kFunctionEngineNotFound[] = "ERR Engine '{}' not found";
inline constexpr char kFunctionLibraryExists[] = "ERR Library '{}' already exists";
inline constexpr char kFunctionRestoreLibraryExists[] = "ERR Library {} already exists";
inline constexpr char kFunctionExists[] = "ERR Function {} already exists";
inline constexpr char kFunctionNotFound[] = "ERR Function not found";
inline constexpr char kFunctionBadNumKeys[] = "ERR Bad number of keys provided";
inline constexpr char kFunctionWriteInRo[] =
    "ERR Can not execute a script with write flag using *_ro command.";
inline constexpr char kFunctionUnknownOption[] = "ERR Unknown option given: {}";
inline constexpr char kFunctionNoCode[] = "ERR Function code was not given";
inline constexpr char kFunctionLibraryNotFound[] = "ERR Library not found";
inline constexpr char kFunctionFlushOption[] = "ERR FUNCTION FLUSH only supports SYNC|ASYNC option";
inline constexpr char kFunctionNoLibraryNameArg[] = "ERR library name argument was not given";
inline constexpr char kFunctionUnknownArgument[] = "ERR Unknown argument {}";
inline constexpr char kFunctionRestorePolicy[] =
    "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.";
inline constexpr char kFunctionDumpChecksum[] = "ERR DUMP payload version or checksum are wrong";
inline constexpr char kFunctionPayloadMalformed[] = "ERR payload is malformed";
inline constexpr char kFunctionPayloadType[] = "ERR given type is not a function";

// CLIENT TRACKING / CLIENT CACHING (cmd_client_tracking.cc).
inline constexpr char kTrackingPrefixOverlapsExisting[] =
    "ERR Prefix '{}' overlaps with an existing prefix '{}'. Prefixes for a single client must not "
    "overlap.";
inline constexpr char kTrackingPrefixOverlapsGiven[] =
    "ERR Prefix '{}' overlaps with another provided prefix '{}'. Prefixes for a single client must "
    "not overlap.";
inline constexpr char kTrackingRedirectTwice[] = "ERR A client can only redirect to a single other client";
inline constexpr char kTrackingRedirectMissing[] = "ERR The client ID you want redirect to does not exist";
inline constexpr char kTrackingPrefixNeedsBcast[] = "ERR PREFIX option requires BCAST mode to be enabled";
inline constexpr char kTrackingBcastSwitch[] =
    "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and "
    "then re-enabling it with a different mode.";
inline constexpr char kTrackingOptBcast[] = "ERR OPTIN and OPTOUT are not compatible with BCAST";
inline constexpr char kTrackingOptinOptout[] = "ERR You can't specify both OPTIN mode and OPTOUT mode";
inline constexpr char kTrackingOptSwitch[] =
    "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and "
    "then re-enabling it with a different mode.";
inline constexpr char kCachingNeedsOptMode[] =
    "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or "
    "OPTOUT mode enabled";
inline constexpr char kCachingYesNeedsOptin[] =
    "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.";
inline constexpr char kCachingNoNeedsOptout[] =
    "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.";

// Bloom filters beyond RedisBloom's texts ({}: the bytes needed).
inline constexpr char kBloomTooBig[] = "ERR filter would exceed bf-max-filter-bytes (bytes needed {})";

// Streams (Redis 7.0's t_stream.c; {}: key, group, consumer or option names).
inline constexpr char kStreamBadId[] = "ERR Invalid stream ID specified as stream command argument";
inline constexpr char kStreamTrimBoth[] =
    "ERR syntax error, MAXLEN and MINID options at the same time are not compatible";
inline constexpr char kStreamMaxlenNegative[] = "ERR The MAXLEN argument must be >= 0.";
inline constexpr char kStreamLimitNegative[] = "ERR The LIMIT argument must be >= 0.";
inline constexpr char kStreamLimitNoStrategy[] =
    "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy";
inline constexpr char kStreamXtrimNoStrategy[] = "ERR syntax error, XTRIM must be called with a trimming strategy";
inline constexpr char kStreamLimitNoApprox[] = "ERR syntax error, LIMIT cannot be used without the special ~ option";
inline constexpr char kStreamIdZero[] = "ERR The ID specified in XADD must be greater than 0-0";
inline constexpr char kStreamExhausted[] =
    "ERR The stream has exhausted the last possible ID, unable to add more items";
inline constexpr char kStreamIdTooSmall[] =
    "ERR The ID specified in XADD is equal or smaller than the target stream top item";
inline constexpr char kStreamBadStart[] = "ERR invalid start ID for the interval";
inline constexpr char kStreamBadEnd[] = "ERR invalid end ID for the interval";
inline constexpr char kStreamBlockInScript[] = "ERR {} command is not allowed with BLOCK option from scripts";
inline constexpr char kStreamUnbalanced[] =
    "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.";
inline constexpr char kStreamGroupOnXread[] =
    "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.";
inline constexpr char kStreamNoackOnXread[] =
    "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.";
inline constexpr char kStreamMissingGroup[] = "ERR Missing GROUP option for XREADGROUP";
inline constexpr char kStreamNoGroupRead[] =
    "NOGROUP No such key '{}' or consumer group '{}' in XREADGROUP with GROUP option";
// What a blocked XREADGROUP answers when its key or group went away meanwhile.
inline constexpr char kStreamUnblockedKeyGone[] = "UNBLOCKED the stream key no longer exists";
inline constexpr char kStreamUnblockedGroupGone[] =
    "NOGROUP the consumer group this client was blocked on no longer exists";
inline constexpr char kStreamDollarInGroup[] =
    "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of "
    "this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would "
    "just return an empty result set.";
inline constexpr char kStreamGtOnXread[] =
    "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.";
inline constexpr char kStreamEntriesReadRange[] = "ERR value for ENTRIESREAD must be positive or -1";
inline constexpr char kStreamNeedsKey[] =
    "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the "
    "MKSTREAM option to create an empty stream automatically.";
inline constexpr char kStreamNoGroupIn[] = "NOGROUP No such consumer group '{}' for key name '{}'";
inline constexpr char kStreamBusyGroup[] = "BUSYGROUP Consumer Group name already exists";
inline constexpr char kStreamEntriesAddedRange[] = "ERR entries_added must be positive";
inline constexpr char kStreamSetIdBelowDeleted[] =
    "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id";
inline constexpr char kStreamSetIdBelowTop[] =
    "ERR The ID specified in XSETID is smaller than the target stream top item";
inline constexpr char kStreamSetIdBelowLength[] =
    "ERR The entries_added specified in XSETID is smaller than the target stream length";
inline constexpr char kStreamNoGroupKey[] = "NOGROUP No such key '{}' or consumer group '{}'";
inline constexpr char kStreamBadClaimOption[] = "ERR Unrecognized XCLAIM option '{}'";
inline constexpr char kStreamCountTooHigh[] =
    "ERR Insufficient memory, failed allocating transient memory, COUNT too high.";

}  // namespace feedkv::protocol::err
