// The command table: every command feedkv answers is declared here once, as a
// row of facts: name, arity, flags, key positions and handler. Dispatch,
// COMMAND / COMMAND INFO / COMMAND DOCS / COMMAND GETKEYS, AOF propagation,
// MULTI queueing, auth gating and (later) cluster routing all read the same
// row, so no code compares command names.
//
// Container commands (CLIENT, CONFIG, ...) declare their subcommands in the
// same row, each with its own arity, flags, keys and summary; the table turns
// every subcommand into a full row named "container|sub" (Redis 7's
// fullname), so dispatch, stats ("cmdstat_client|list"), CLIENT LIST cmd=,
// COMMAND INFO/DOCS/LIST and the latency histograms treat it as a command.
//
// Each command family (server/commands/cmd_<family>.cc) exposes its rows as a
// span; CommandTable copies them at start-up, numbers every row (Id(): the
// index of its stats slot) and aborts on a duplicate name or an inconsistent
// key range. Immutable after construction; read by the command thread only.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace feedkv::server {

// How the server folds case in command names and keywords: A-Z only, as strcasecmp
// in the C locale (the server never sets another), with no locale call per byte.
inline char LowerAscii(char c) {
  return static_cast<char>(c + ((static_cast<unsigned char>(c - 'A') < 26) << 5));
}
inline std::string LowerAscii(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = LowerAscii(c);
  return r;
}

class CommandContext;
using CommandHandler = void (*)(CommandContext& ctx);

// Typed flags; never strings. Names match Redis's COMMAND INFO flags.
enum CommandFlag : uint32_t {
  kWrite = 1u << 0,        // may change the dataset: AOF-propagated when it does
  kReadOnly = 1u << 1,
  kDenyOom = 1u << 2,
  kAdmin = 1u << 3,
  kPubSub = 1u << 4,
  kNoScript = 1u << 5,
  kLoading = 1u << 6,      // allowed while loading the dataset
  kStale = 1u << 7,
  kFast = 1u << 8,
  kNoAuth = 1u << 9,       // allowed before AUTH (AUTH, HELLO, QUIT, ...)
  kNoMulti = 1u << 10,     // refused inside MULTI, as Redis's no-multi (SAVE, SHUTDOWN)
  kNoPropagate = 1u << 11, // never written to the AOF even if it changed data
  kSkipMonitor = 1u << 12,
  kAllowBusy = 1u << 13,
  kRandom = 1u << 14,      // non-deterministic; must propagate a deterministic form
  kMayReplicate = 1u << 15,
  // Keys given by count, as SINTERCARD numkeys key [key ...]: argv[first_key] is the
  // number of keys and they follow it (last_key and key_step must be first_key and 1).
  // COMMAND INFO shows Redis's "movablekeys" flag and a "keynum" key spec.
  kKeyNum = 1u << 16,
  // Runs at once inside MULTI instead of being queued: MULTI, EXEC, DISCARD, WATCH,
  // QUIT and RESET, the commands Redis's processCommand names. Not a Redis flag:
  // COMMAND INFO does not show it.
  kTxControl = 1u << 17,
  // Refused unless enable-debug-command allows the client (Redis's CMD_PROTECTED,
  // which COMMAND INFO does not show).
  kProtected = 1u << 18,
  // ACL categories Redis gives beyond what the flags and the group imply
  // (AclCategories); never shown as flags.
  kAclKeyspace = 1u << 19,    // @keyspace outside the "generic" group (FLUSHDB, DBSIZE...)
  kAclConnection = 1u << 20,  // @connection instead of the group's category (COMMAND, WAIT)
  kAclDangerous = 1u << 21,   // @dangerous without the admin flag (KEYS, INFO...)
  kAclAdmin = 1u << 22,       // @admin without the admin flag (LASTSAVE, ROLE)
  // May park its client until a key changes (BZPOPMIN...): Redis's "blocking" flag
  // and @blocking category.
  kBlocking = 1u << 23,
  // Reads lists, sets and sorted sets (SORT): @list @set @sortedset instead of
  // the group's @keyspace, as Redis's sort.json.
  kAclContainers = 1u << 24,
  // Allowed to a RESP2 client while it is subscribed ((P|S)SUBSCRIBE,
  // (P|S)UNSUBSCRIBE, PING, QUIT, RESET), as Redis's processCommand. Not shown.
  kSubscribedContext = 1u << 25,
  // May run with no key arguments though it takes keys (EVAL's numkeys 0).
  kNoMandatoryKeys = 1u << 26,
  // Channel arguments the ACL checks against a user's channel patterns: the
  // first argument (PUBLISH), every argument (SUBSCRIBE), or every argument
  // as a pattern, which must equal an allowed pattern (PSUBSCRIBE). Not shown.
  kChannelFirstArg = 1u << 27,
  kChannelArgs = 1u << 28,
  kChannelPatternArgs = 1u << 29,
  // Never written to the slow log itself (EXEC: the commands it ran are), as
  // Redis's skip_slowlog.
  kSkipSlowlog = 1u << 30,
  // Runs a script or function (EVAL*, FCALL*): whose declared flags replace
  // the command's own at the gates (Server::EffectiveFlags). Not shown.
  kRunsScript = 1u << 31,
};

// What a command does with a key, as Redis 7's key-spec flags (COMMAND
// GETKEYSANDFLAGS, COMMAND INFO key specs). One of RO/RW/OW/RM, and what
// happens to the value: read (access), changed (update), added to (insert),
// removed from (delete).
enum KeyFlag : uint16_t {
  kKeyRO = 1u << 0,
  kKeyRW = 1u << 1,
  kKeyOW = 1u << 2,
  kKeyRM = 1u << 3,
  kKeyAccess = 1u << 4,
  kKeyUpdate = 1u << 5,
  kKeyInsert = 1u << 6,
  kKeyDelete = 1u << 7,
  // With a GET argument the key is read too (SET ... GET): RW access update.
  kKeyGetReads = 1u << 8,
  // Routed as a key (cluster slot, COMMAND GETKEYS) but not a keyspace key:
  // a counter id. Redis's NOT_KEY key-spec flag; WATCH never sees it.
  kKeyNotKey = 1u << 9,
  // BITFIELD: a key only read (RO access) when every operation is a GET, as
  // Redis's bitfieldGetKeys; else RW access update.
  kKeyBitfieldReads = 1u << 10,
};

// The key flags of a row: the first key's and the other keys' (SINTERSTORE's
// destination differs from its sources). Zero: derived from the command's
// flags (KeyFlagsOf).
struct KeyFlags {
  uint16_t first = 0;
  uint16_t rest = 0;  // 0: as the first
};

// Whether argv[i] is a secret (a password): SLOWLOG and MONITOR show
// "(redacted)" in its place, as Redis's redactClientCommandArgument.
using SecretArgFn = bool (*)(std::span<const std::string_view> argv, size_t i);

// One subcommand of a container, as declared by its family. Arity counts
// the container's name too (CONFIG GET pattern: -3), as in Redis; key
// positions likewise (OBJECT ENCODING key: 2,2,1).
struct SubcommandSpec {
  std::string_view name;      // lower case, without the container: "get"
  int arity;
  uint32_t flags;
  std::string_view summary;
  int first_key = 0;
  int last_key = 0;
  int key_step = 0;
  KeyFlags key_flags = {};
  SecretArgFn secret_arg = nullptr;
};

struct CommandSpec {
  std::string_view name;      // lower case; "container|sub" for a subcommand
  int arity;                  // as Redis: >0 exact argc, <0 at least -arity
  uint32_t flags;
  int first_key;              // 0: no keys
  int last_key;               // -1: last argument, -2: second to last...
  int key_step;
  CommandHandler handler;
  std::string_view summary;   // for COMMAND DOCS
  std::string_view group;     // "string", "generic", "set", "server", ...
  // Declared by the family: the subcommands of a container command. The
  // table builds a row for each (sub_rows); everything else reads those.
  std::span<const SubcommandSpec> subcommands = {};
  KeyFlags key_flags = {};
  // Non-empty (lower case): the key range ends before the first argument equal to this
  // keyword (case-insensitive), as COUNTER.MGET's ids end at FIELDS. Such a
  // row is "movablekeys" in COMMAND INFO (clients ask COMMAND GETKEYS), and
  // its legacy triple names the first key only.
  std::string_view keys_end_before = {};
  // Non-zero: after the row's fixed keys (first_key..last_key) comes a key count at
  // this argument and that many keys after it, as ZUNIONSTORE dst numkeys key
  // [key ...]. Such a row is "movablekeys"; its legacy triple names the fixed keys;
  // COMMAND INFO gives a range key spec and a keynum key spec. The counted keys
  // have key_flags.rest.
  int numkeys_at = 0;
  // Non-null: keys only a scan of the arguments finds (SORT ... STORE dst, as
  // Redis's getkeys_proc), appended after the declared ones with key_flags.rest.
  // Such a row is "movablekeys"; COMMAND INFO gives an "unknown" key spec for them.
  std::vector<int> (*more_keys)(std::span<const std::string_view> argv) = nullptr;
  // Non-null: which arguments are secrets (AUTH's password).
  SecretArgFn secret_arg = nullptr;
  // Non-null: the keys are exactly what this scan of the arguments returns
  // (Redis's getkeys_proc for MIGRATE, whose KEYS option replaces its key
  // argument); first_key..last_key is then only COMMAND INFO's legacy triple
  // and first key spec. Such a row is "movablekeys".
  std::vector<int> (*keys_proc)(std::span<const std::string_view> argv) = nullptr;

  // Filled in by CommandTable (zero in a family's declaration).
  const CommandSpec* parent = nullptr;  // the container, for a subcommand row
  std::span<const CommandSpec> sub_rows = {};
  uint32_t id = 0;                      // dense index: stats slot

  bool is_container() const { return !sub_rows.empty(); }
  std::span<const CommandSpec> subs() const { return sub_rows; }
  // The row of subcommand `name` (case-insensitive), nullptr when unknown.
  const CommandSpec* FindSubcommand(std::string_view name) const;
  // The container of a subcommand row, or the row itself.
  const CommandSpec& container() const { return parent != nullptr ? *parent : *this; }
};

// The flags COMMAND INFO shows for a row: its own, plus movablekeys when its
// keys cannot be told from positions alone.
uint32_t DisplayFlags(const CommandSpec& spec);

class CommandTable {
 public:
  // Builds the table from every family. Aborts on a bad declaration.
  CommandTable();
  // Rows point at each other: the table stays where it was built.
  CommandTable(const CommandTable&) = delete;
  CommandTable& operator=(const CommandTable&) = delete;

  // Case-insensitive lookup of a top-level command; nullptr when unknown.
  const CommandSpec* Find(std::string_view name) const;
  // Like Find, but also accepts a fullname "container|sub" (as COMMAND INFO,
  // COMMAND DOCS and LATENCY HISTOGRAM do in Redis 7).
  const CommandSpec* FindFullName(std::string_view name) const;
  // The row argv runs, as Redis's lookupCommand: the subcommand's row for a
  // container called with a subcommand; nullptr when the command or the
  // subcommand is unknown (*unknown_sub tells which).
  const CommandSpec* Lookup(std::span<const std::string_view> argv, bool* unknown_sub = nullptr) const;

  // Top-level commands sorted by name (COMMAND, COMMAND COUNT, docs).
  const std::vector<const CommandSpec*>& all() const { return all_; }
  // Every row, subcommands included, sorted by fullname (INFO commandstats
  // order: "client" < "client|id" < "config").
  const std::vector<const CommandSpec*>& all_rows() const { return all_rows_; }
  // Number of rows; CommandSpec::id is below it.
  size_t size() const { return rows_.size(); }

  // Positions of key arguments in argv according to the spec. Empty for
  // keyless commands, for argv too short for the declared positions, and for a
  // kKeyNum command whose count is not a positive integer that argv can hold.
  static std::vector<int> KeyPositions(const CommandSpec& spec,
                                       std::span<const std::string_view> argv);

 private:
  std::vector<CommandSpec> rows_;          // reserved once: pointers stay valid
  std::deque<std::string> full_names_;     // storage of "container|sub"
  void IndexByName(const CommandSpec* spec);

  // Top-level rows by case-folded name: open addressing, linear probing, a power of
  // two in size and never more than a quarter full, so every probe ends at a null.
  std::vector<const CommandSpec*> by_name_;
  std::vector<const CommandSpec*> all_;
  std::vector<const CommandSpec*> all_rows_;
};

// The families. Each returns the rows declared in its own file.
std::span<const CommandSpec> ConnectionCommands();
std::span<const CommandSpec> ServerCommands();
std::span<const CommandSpec> IntrospectionCommands();
std::span<const CommandSpec> KeyCommands();
std::span<const CommandSpec> ExpireCommands();
std::span<const CommandSpec> StringCommands();
std::span<const CommandSpec> TransactionCommands();
std::span<const CommandSpec> SetCommands();
std::span<const CommandSpec> LongSetCommands();
std::span<const CommandSpec> ZsetCommands();
std::span<const CommandSpec> ZsetRangeCommands();
std::span<const CommandSpec> ZsetPopCommands();
std::span<const CommandSpec> ZsetAlgebraCommands();
std::span<const CommandSpec> FeedCommands();
std::span<const CommandSpec> FeedReadCommands();
std::span<const CommandSpec> HashCommands();
std::span<const CommandSpec> ListCommands();
std::span<const CommandSpec> ListPopCommands();
std::span<const CommandSpec> StreamCommands();
std::span<const CommandSpec> StreamReadCommands();
std::span<const CommandSpec> StreamGroupCommands();
std::span<const CommandSpec> BitmapCommands();
std::span<const CommandSpec> ScriptingCommands();
std::span<const CommandSpec> AclCommands();
std::span<const CommandSpec> FunctionCommands();
std::span<const CommandSpec> HyperLogLogCommands();
std::span<const CommandSpec> BloomCommands();
std::span<const CommandSpec> GeoCommands();
std::span<const CommandSpec> SortCommands();
std::span<const CommandSpec> PubSubCommands();
std::span<const CommandSpec> DumpCommands();
std::span<const CommandSpec> CounterCommands();
std::span<const CommandSpec> PersistenceCommands();
std::span<const CommandSpec> ClusterCommands();
std::span<const CommandSpec> ReplicationCommands();

// Names of the flags set in `flags`, for COMMAND INFO.
std::vector<std::string_view> FlagNames(uint32_t flags);

// The key-spec flags of the key at argv[pos] of a command `spec` runs (pos as
// KeyPositions returns it), and their names in Redis's order.
uint16_t KeyFlagsOf(const CommandSpec& spec, std::span<const std::string_view> argv, int pos);
std::vector<std::string_view> KeyFlagNames(uint16_t flags);

// Redis's ACL categories of a row, without the '@' ("keyspace", "read",
// "slow"...), in Redis's order: implied by the flags (write, read, admin,
// dangerous, fast or slow) and the group (keyspace, string, set, connection,
// transaction), as Redis's setImplicitACLCategories plus its command JSON.
std::vector<std::string_view> AclCategories(const CommandSpec& spec);

}  // namespace feedkv::server
