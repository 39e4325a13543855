// The command table: every command feedkv answers is declared here once, as a
// row of facts: name, arity, flags, key positions and handler. Dispatch,
// COMMAND / COMMAND INFO / COMMAND DOCS / COMMAND GETKEYS, AOF propagation,
// MULTI queueing, auth gating and (later) cluster routing all read the same
// row, so no code compares command names.
//
// Each command family (server/commands/cmd_<family>.cc) exposes its rows as a
// span; CommandTable merges them at start-up and aborts on a duplicate name
// or an inconsistent key range. Immutable after construction; read by the
// command thread only.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace feedkv::server {

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
  kNoMulti = 1u << 10,     // executed at once even inside MULTI (EXEC, DISCARD, ...)
  kNoPropagate = 1u << 11, // never written to the AOF even if it changed data
  kSkipMonitor = 1u << 12,
  kAllowBusy = 1u << 13,
  kRandom = 1u << 14,      // non-deterministic; must propagate a deterministic form
  kMayReplicate = 1u << 15,
};

struct CommandSpec {
  std::string_view name;      // lower case
  int arity;                  // as Redis: >0 exact argc, <0 at least -arity
  uint32_t flags;
  int first_key;              // 0: no keys
  int last_key;               // -1: last argument, -2: second to last...
  int key_step;
  CommandHandler handler;
  std::string_view summary;   // for COMMAND DOCS
  std::string_view group;     // "string", "generic", "set", "server", ...
  std::string_view subcommands = {};  // space-separated, e.g. "get set rewrite"
};

class CommandTable {
 public:
  // Builds the table from every family. Aborts on a bad declaration.
  CommandTable();

  // Case-insensitive lookup; nullptr when unknown.
  const CommandSpec* Find(std::string_view name) const;
  const std::vector<const CommandSpec*>& all() const { return all_; }

  // Positions of key arguments in argv according to the spec. Empty for
  // keyless commands, and for argv too short for the declared positions.
  static std::vector<int> KeyPositions(const CommandSpec& spec, size_t argc);

 private:
  std::unordered_map<std::string, const CommandSpec*> by_name_;
  std::vector<const CommandSpec*> all_;
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
std::span<const CommandSpec> CounterCommands();
std::span<const CommandSpec> PersistenceCommands();

// Names of the flags set in `flags`, for COMMAND INFO.
std::vector<std::string_view> FlagNames(uint32_t flags);

}  // namespace feedkv::server
