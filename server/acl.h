// ACL users, as Redis 7.0 has them.
//
// A user has flags (on/off, nopass, sanitize-payload), the SHA-256 hashes of
// its passwords and one or more selectors: the root selector, plus any added
// with "(...)" rules. A selector allows commands (a bit per command-table row,
// plus a reserved bit that only +@all sets: "may run commands added later",
// which decides whether its description starts with +@all or -@all), first
// arguments of otherwise blocked commands (+select|0), key patterns with read
// and/or write permission (~p, %R~p, %W~p) and channel patterns (&p). A
// command runs when one selector allows the command, every key it names with
// the permission the key's flags need, and every channel it publishes or
// subscribes to.
//
// Rules are applied to a copy of the user and the copy replaces it only when
// every rule was valid, so a failed ACL SETUSER changes nothing.
//
// Descriptions (ACL LIST, GETUSER, SAVE) are worked out from the bitmap as
// Redis 7.0 does: the category that best fits the remaining differences,
// repeatedly, then single commands in table order (Redis walks its command
// dict, whose order is random per process, so no client can depend on it).
//
// AclUsers owns the users; clients point at them (Client::user), so a user
// is changed in place and lives until ACL DELUSER / ACL LOAD, which first
// move its clients off it (Server::DisconnectUser). Not thread-safe: owned
// by the command thread.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "storage/status.h"

namespace feedkv::server {

class CommandTable;
struct CommandSpec;

// Redis's ACL_* results, in its order of relevance (a channel refusal beats a
// key refusal beats a command refusal when several selectors fail).
enum class AclResult { kOk = 0, kDeniedCommand = 1, kDeniedKey = 2, kDeniedAuth = 3, kDeniedChannel = 4 };

struct AclSelector {
  static constexpr uint8_t kRead = 1, kWrite = 2;
  struct KeyPattern {
    std::string pattern;
    uint8_t perms;  // kRead | kWrite
  };
  bool root = false;
  bool all_keys = false;
  bool all_channels = false;
  bool all_commands = false;  // every bit set by +@all, none cleared since
  std::vector<uint64_t> allowed;  // bit per row id; the last bit is "future commands"
  std::vector<KeyPattern> keys;
  std::vector<std::string> channels;
  std::map<uint32_t, std::vector<std::string>> first_args;  // row id -> allowed first args
};

struct AclUser {
  std::string name;
  bool enabled = false;
  bool nopass = false;
  bool sanitize_payload = false;
  bool skip_sanitize_payload = false;
  std::vector<std::string> passwords;  // lower-case hex SHA-256
  std::vector<AclSelector> selectors;  // [0] is the root selector
  // +@all ~* &* in the root selector: dispatch skips the check.
  bool unrestricted = false;
};

// One ACL LOG entry (Redis's ACLLogEntry).
struct AclLogEntry {
  uint64_t count = 1;
  AclResult reason = AclResult::kDeniedCommand;
  std::string context;  // "toplevel", "multi", "lua"
  std::string object;   // the command, key or channel refused, or "AUTH"
  std::string username;
  int64_t ctime_ms = 0;
  std::string client_info;
};

class AclUsers {
 public:
  // The categories in Redis's order (ACL CAT).
  static const std::vector<std::string_view>& Categories();

  explicit AclUsers(const CommandTable& table);

  // nullptr when there is no such user.
  AclUser* Find(std::string_view name);
  AclUser* default_user() { return default_; }
  // Redis's authRequired test: a new connection must AUTH first.
  bool DefaultRequiresAuth() const { return !default_->nopass || !default_->enabled; }
  const std::map<std::string, std::unique_ptr<AclUser>, std::less<>>& users() const { return users_; }

  // ACL SETUSER: applies `rules` (selector arguments already merged) to a copy
  // of user `name` (a fresh one if it does not exist), then stores it.
  // InvalidArgument with Redis's "Error in ACL SETUSER modifier ..." text.
  Status SetUser(std::string_view name, std::span<const std::string> rules);
  // Removes a user (not "default"). The caller moves its clients off first.
  bool Remove(std::string_view name);
  // requirepass: the default user's only password, or nopass when empty.
  void SetDefaultPassword(std::string_view password);
  // acl-pubsub-default: whether new users and selectors start with &*.
  void set_pubsub_default_all(bool all);

  // "user <name> <rules>" as ACL LIST and ACL SAVE print it.
  std::string DescribeUser(const AclUser& u) const;
  // The "commands" text of ACL GETUSER for one selector.
  std::string DescribeCommands(const AclSelector& s) const;
  static std::string DescribeKeys(const AclSelector& s);
  static std::string DescribeChannels(const AclSelector& s);

  // Whether `u` may run `spec` with `argv` (argv[0] is the command). On a
  // refusal *arg_index is the refused key's or channel's position.
  // Whether one selector of `u` lets it run the command and read every key
  // (Redis's ACLUserCheckCmdWithUnrestrictedKeyAccess): SORT's BY and GET read
  // keys no key position names.
  bool HasUnrestrictedReadAccess(const AclUser& u, const CommandSpec& spec,
                                 std::span<const std::string_view> argv) const;
  AclResult Check(const AclUser& u, const CommandSpec& spec, std::span<const std::string_view> argv,
                  int* arg_index) const;
  // AUTH: the user, when it is enabled and the password matches.
  AclUser* Authenticate(std::string_view name, std::string_view password);

  // Parses an ACL file's text into a fresh set of users. On success replaces
  // every user (the default user is updated in place, so the pointer stays)
  // and returns the users that went away through `removed` (still alive
  // until the caller drops them, after moving their clients off).
  // On failure returns Redis's error text and changes nothing.
  Status LoadFile(const std::string& path, std::vector<std::unique_ptr<AclUser>>* removed);
  // The text ACL SAVE writes.
  std::string FileText() const;
  // "user" lines from the config file: applied at start-up, in order.
  Status LoadConfigLines(const std::vector<std::vector<std::string>>& lines);

  // ACL LOG.
  void Log(AclLogEntry entry, size_t max_len);
  const std::deque<AclLogEntry>& log() const { return log_; }
  void ResetLog() { log_.clear(); }

  // Redis's ACLStringHasSpaces: user names and patterns may hold neither.
  static bool HasSpaces(std::string_view s);

  // Selector arguments spread over several words ("(~k*", "+get)") merged into
  // one, as Redis's ACLMergeSelectorArguments. False (with the index of the
  // opening word) on an unmatched parenthesis.
  static bool MergeSelectorArgs(std::span<const std::string> in, std::vector<std::string>* out,
                                size_t* bad_index);

 private:
  enum class RuleError {
    kNone, kSyntax, kUnknownCommand, kKeysAfterAll, kChannelsAfterAll, kNoSuchPassword,
    kBadHash, kFirstArgOfSubcommand,
  };
  static std::string_view RuleErrorText(RuleError e);
  AclUser NewUser(std::string_view name) const;
  AclSelector NewSelector(bool root) const;
  RuleError ApplyUserRule(AclUser& u, std::string_view op) const;
  RuleError ApplySelectorRule(AclSelector& s, std::string_view op) const;
  void SetCommand(AclSelector& s, const CommandSpec& spec, bool allow) const;
  void SetCategory(AclSelector& s, size_t category, bool allow) const;
  static bool Bit(const AclSelector& s, uint32_t id);
  static void SetBit(AclSelector& s, uint32_t id, bool on);
  void Refresh(AclUser& u) const;
  AclResult CheckSelector(const AclSelector& s, const CommandSpec& spec,
                          std::span<const std::string_view> argv, int* arg_index) const;

  const CommandTable& table_;
  size_t bits_;                            // rows + the reserved bit
  std::vector<uint32_t> row_categories_;  // per row id: bit i = Categories()[i]
  std::map<std::string, std::unique_ptr<AclUser>, std::less<>> users_;
  AclUser* default_ = nullptr;
  bool pubsub_default_all_ = false;  // acl-pubsub-default allchannels
  std::deque<AclLogEntry> log_;
};

}  // namespace feedkv::server
