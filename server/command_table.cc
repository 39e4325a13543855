#include "server/command_table.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace feedkv::server {

namespace {

// `lower` is lower case already.
bool EqualsLower(std::string_view s, std::string_view lower) {
  if (s.size() != lower.size()) return false;
  for (size_t i = 0; i < s.size(); i++) {
    if (LowerAscii(s[i]) != lower[i]) return false;
  }
  return true;
}

// Hash of the case-folded name from its first eight bytes and its length: one multiply
// instead of one per byte. OR-ing 0x20 into every byte folds A-Z to a-z (it also folds
// a few punctuation bytes together, which only costs a probe: Find compares names).
uint64_t NameHash(std::string_view name) {
  uint64_t word = 0;
  if (name.size() >= 8) {
    std::memcpy(&word, name.data(), 8);
  } else {
    for (size_t i = 0; i < name.size(); i++) word |= uint64_t{static_cast<unsigned char>(name[i])} << (8 * i);
  }
  word |= 0x2020202020202020ull;
  return ((word ^ name.size()) * 0x9E3779B97F4A7C15ull) >> 32;
}

[[noreturn]] void BadDeclaration(const char* what, std::string_view name) {
  std::fprintf(stderr, "%s: %.*s\n", what, static_cast<int>(name.size()), name.data());
  std::abort();
}

bool BadKeys(int arity, uint32_t flags, int first_key, int last_key, int key_step) {
  if ((flags & kKeyNum) && (first_key <= 0 || last_key != first_key || key_step != 1)) return true;
  return first_key < 0 || (first_key == 0 && last_key != 0) || (first_key > 0 && key_step <= 0) ||
         (arity > 0 && first_key >= arity);
}

}  // namespace

const CommandSpec* CommandSpec::FindSubcommand(std::string_view sub) const {
  for (const CommandSpec& s : sub_rows) {
    // s.name is "container|sub": compare the part after the bar.
    if (EqualsLower(sub, s.name.substr(name.size() + 1))) return &s;
  }
  return nullptr;
}

CommandTable::CommandTable() {
  const std::span<const CommandSpec> families[] = {
      ConnectionCommands(), ServerCommands(), IntrospectionCommands(), KeyCommands(),
      ExpireCommands(),
      StringCommands(),     TransactionCommands(), SetCommands(),      LongSetCommands(),
      ZsetCommands(),       ZsetRangeCommands(),  ZsetPopCommands(),  ZsetAlgebraCommands(),
      FeedCommands(),       FeedReadCommands(),   HashCommands(),     ListCommands(),
      ListPopCommands(),    StreamCommands(),     StreamReadCommands(), StreamGroupCommands(),
      BitmapCommands(),     ScriptingCommands(), HyperLogLogCommands(), DumpCommands(),
      AclCommands(),        FunctionCommands(),
      BloomCommands(),      SortCommands(),       PubSubCommands(),     GeoCommands(),
      CounterCommands(),    PersistenceCommands(), ClusterCommands(),
      ReplicationCommands(),
  };
  size_t total = 0;
  for (auto family : families) {
    for (const CommandSpec& spec : family) total += 1 + spec.subcommands.size();
  }
  rows_.reserve(total);
  // Open addressing at most 1/4 full: a lookup nearly always ends at its first slot.
  size_t index_size = 16;
  while (index_size < 4 * total) index_size *= 2;
  by_name_.assign(index_size, nullptr);
  for (auto family : families) {
    for (const CommandSpec& spec : family) {
      if (spec.name != LowerAscii(spec.name) || spec.handler == nullptr ||
          spec.name.find('|') != std::string_view::npos ||
          BadKeys(spec.arity, spec.flags, spec.first_key, spec.last_key, spec.key_step)) {
        BadDeclaration("bad command declaration", spec.name);
      }
      CommandSpec& row = rows_.emplace_back(spec);
      row.parent = nullptr;
      row.sub_rows = {};
      row.id = static_cast<uint32_t>(rows_.size() - 1);
      IndexByName(&row);
      all_.push_back(&row);
    }
  }
  // Subcommand rows after all top-level rows, each container's contiguous.
  const size_t top_level = rows_.size();
  for (size_t i = 0; i < top_level; i++) {
    CommandSpec& container = rows_[i];
    size_t first = rows_.size();
    for (const SubcommandSpec& sub : container.subcommands) {
      const std::string& full = full_names_.emplace_back(std::string(container.name) + "|" +
                                                         std::string(sub.name));
      if (sub.name.empty() || sub.name != LowerAscii(sub.name) || sub.arity == 0 ||
          BadKeys(sub.arity, sub.flags, sub.first_key, sub.last_key, sub.key_step) ||
          container.FindSubcommand(sub.name) != nullptr) {
        BadDeclaration("bad subcommand declaration", full);
      }
      CommandSpec& row = rows_.emplace_back(CommandSpec{
          full, sub.arity, sub.flags, sub.first_key, sub.last_key, sub.key_step,
          container.handler, sub.summary, container.group});
      row.key_flags = sub.key_flags;
      row.secret_arg = sub.secret_arg;
      row.parent = &container;
      row.id = static_cast<uint32_t>(rows_.size() - 1);
      container.sub_rows = std::span<const CommandSpec>(&rows_[first], rows_.size() - first);
    }
  }
  auto by_name = [](const CommandSpec* a, const CommandSpec* b) { return a->name < b->name; };
  std::sort(all_.begin(), all_.end(), by_name);
  for (const CommandSpec& row : rows_) all_rows_.push_back(&row);
  std::sort(all_rows_.begin(), all_rows_.end(), by_name);
}

const CommandSpec* CommandTable::Find(std::string_view name) const {
  const size_t mask = by_name_.size() - 1;
  for (size_t i = NameHash(name) & mask;; i = (i + 1) & mask) {
    const CommandSpec* spec = by_name_[i];
    if (spec == nullptr || EqualsLower(name, spec->name)) return spec;
  }
}

void CommandTable::IndexByName(const CommandSpec* spec) {
  const size_t mask = by_name_.size() - 1;
  size_t i = NameHash(spec->name) & mask;
  while (by_name_[i] != nullptr) {
    if (by_name_[i]->name == spec->name) BadDeclaration("duplicate command", spec->name);
    i = (i + 1) & mask;
  }
  by_name_[i] = spec;
}

const CommandSpec* CommandTable::FindFullName(std::string_view name) const {
  size_t bar = name.find('|');
  if (bar == std::string_view::npos) return Find(name);
  const CommandSpec* container = Find(name.substr(0, bar));
  return container == nullptr ? nullptr : container->FindSubcommand(name.substr(bar + 1));
}

const CommandSpec* CommandTable::Lookup(std::span<const std::string_view> argv,
                                        bool* unknown_sub) const {
  if (unknown_sub != nullptr) *unknown_sub = false;
  const CommandSpec* spec = argv.empty() ? nullptr : Find(argv[0]);
  if (spec == nullptr || argv.size() == 1 || !spec->is_container()) return spec;
  const CommandSpec* sub = spec->FindSubcommand(argv[1]);
  if (sub == nullptr && unknown_sub != nullptr) *unknown_sub = true;
  return sub;
}

namespace {
// The keys counted by argv[at] ("numkeys key [key ...]"); none when the count is bad.
void AppendCountedKeys(int at, std::span<const std::string_view> argv, std::vector<int>* keys) {
  const int argc = static_cast<int>(argv.size());
  if (at >= argc) return;
  const std::string_view count = argv[static_cast<size_t>(at)];
  int n = 0;
  auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), n);
  if (ec != std::errc() || end != count.data() + count.size() || n <= 0 || n > argc - at - 1) return;
  for (int i = 1; i <= n; ++i) keys->push_back(at + i);
}
}  // namespace

std::vector<int> CommandTable::KeyPositions(const CommandSpec& spec,
                                           std::span<const std::string_view> argv) {
  if (spec.keys_proc != nullptr) return spec.keys_proc(argv);
  std::vector<int> keys;
  if (spec.first_key <= 0 && spec.more_keys == nullptr) return keys;
  const int argc = static_cast<int>(argv.size());
  if (spec.flags & kKeyNum) {
    AppendCountedKeys(spec.first_key, argv, &keys);
    return keys;
  }
  int last = spec.first_key <= 0 ? -1 : spec.last_key >= 0 ? spec.last_key : argc + spec.last_key;
  for (int i = spec.first_key; i <= last && i < argc; i += spec.key_step) {
    if (!spec.keys_end_before.empty() && EqualsLower(argv[static_cast<size_t>(i)], spec.keys_end_before)) {
      break;
    }
    keys.push_back(i);
  }
  if (spec.numkeys_at > 0) AppendCountedKeys(spec.numkeys_at, argv, &keys);
  if (spec.more_keys != nullptr) {
    for (int k : spec.more_keys(argv)) keys.push_back(k);
  }
  return keys;
}

uint32_t DisplayFlags(const CommandSpec& spec) {
  const bool movable = !spec.keys_end_before.empty() || spec.numkeys_at > 0 || spec.more_keys != nullptr ||
                       spec.keys_proc != nullptr;
  return spec.flags | (movable ? static_cast<uint32_t>(kKeyNum) : 0u);
}

std::vector<std::string_view> FlagNames(uint32_t f) {
  std::vector<std::string_view> r;
  struct N { uint32_t bit; std::string_view name; };
  static const N kNames[] = {
      {kWrite, "write"},       {kReadOnly, "readonly"}, {kDenyOom, "denyoom"},
      {kAdmin, "admin"},       {kPubSub, "pubsub"},     {kNoScript, "noscript"}, {kBlocking, "blocking"},
      {kLoading, "loading"},   {kStale, "stale"},       {kSkipSlowlog, "skip_slowlog"}, {kFast, "fast"},
      {kNoAuth, "no_auth"},    {kNoMulti, "no_multi"},  {kSkipMonitor, "skip_monitor"},
      {kAllowBusy, "allow_busy"}, {kMayReplicate, "may_replicate"},
      {kNoMandatoryKeys, "no_mandatory_keys"}, {kKeyNum, "movablekeys"},
  };
  for (const N& n : kNames) {
    if (f & n.bit) r.push_back(n.name);
  }
  return r;
}

uint16_t KeyFlagsOf(const CommandSpec& spec, std::span<const std::string_view> argv, int pos) {
  const KeyFlags& k = spec.key_flags;
  uint16_t f = pos > spec.first_key && k.rest != 0 ? k.rest : k.first;
  if (f == 0) {
    // Most reads look at the value; most writes change it in place.
    if (spec.flags & kReadOnly) return kKeyRO | kKeyAccess;
    if (spec.flags & kWrite) return kKeyRW | kKeyUpdate;
    return kKeyRO;
  }
  if (f & kKeyBitfieldReads) {
    f &= static_cast<uint16_t>(~kKeyBitfieldReads);
    if (argv.empty()) return f;
    bool readonly = true;
    for (size_t i = 2; i < argv.size() && readonly; i++) {
      const size_t rest = argv.size() - i - 1;
      if (EqualsLower(argv[i], "get") && rest >= 2) {
        i += 2;
      } else if (EqualsLower(argv[i], "overflow") && rest >= 1) {
        i += 1;
      } else {
        readonly = false;  // SET, INCRBY, or a syntax error: assume a write, as Redis
      }
    }
    return readonly ? static_cast<uint16_t>(kKeyRO | kKeyAccess) : f;
  }
  if (f & kKeyGetReads) {
    f &= static_cast<uint16_t>(~kKeyGetReads);
    for (size_t i = 3; i < argv.size(); i++) {
      if (argv[i].size() == 3 && LowerAscii(argv[i][0]) == 'g' && LowerAscii(argv[i][1]) == 'e' &&
          LowerAscii(argv[i][2]) == 't') {
        return kKeyRW | kKeyAccess | kKeyUpdate;
      }
    }
  }
  return f;
}

std::vector<std::string_view> KeyFlagNames(uint16_t f) {
  struct N { uint16_t bit; std::string_view name; };
  static const N kNames[] = {
      {kKeyRW, "RW"},         {kKeyRO, "RO"},         {kKeyOW, "OW"},
      {kKeyRM, "RM"},         {kKeyAccess, "access"}, {kKeyUpdate, "update"},
      {kKeyInsert, "insert"}, {kKeyDelete, "delete"}, {kKeyNotKey, "not_key"},
  };
  std::vector<std::string_view> r;
  for (const N& n : kNames) {
    if (f & n.bit) r.push_back(n.name);
  }
  return r;
}

std::vector<std::string_view> AclCategories(const CommandSpec& spec) {
  std::vector<std::string_view> r;
  const uint32_t f = spec.flags;
  // A pure container (CLIENT, CONFIG: nothing to run without a subcommand) is only @slow.
  if (spec.is_container() && spec.arity == -2) return {"slow"};
  const std::string_view group = spec.group;
  if ((group == "generic" && !(f & (kAclConnection | kAclContainers))) || (f & kAclKeyspace)) r.push_back("keyspace");
  if (f & kWrite) r.push_back("write");
  if ((f & kReadOnly) && group != "scripting") r.push_back("read");
  if (group == "set" || (f & kAclContainers)) r.push_back("set");
  if (group == "sorted-set" || (f & kAclContainers)) r.push_back("sortedset");
  if (group == "list" || (f & kAclContainers)) r.push_back("list");
  if (group == "hash") r.push_back("hash");
  if (group == "string") r.push_back("string");
  if (group == "bitmap") r.push_back("bitmap");
  if (group == "hyperloglog") r.push_back("hyperloglog");
  if (group == "geo") r.push_back("geo");
  if (group == "stream") r.push_back("stream");
  if (f & kPubSub) r.push_back("pubsub");
  if ((f & kAdmin) || (f & kAclAdmin)) r.push_back("admin");
  if (f & kFast) {
    r.push_back("fast");
  } else {
    r.push_back("slow");
  }
  if (f & kBlocking) r.push_back("blocking");
  if ((f & kAdmin) || (f & kAclDangerous)) r.push_back("dangerous");
  if (group == "connection" || (f & kAclConnection)) r.push_back("connection");
  if (group == "transactions") r.push_back("transaction");
  if (group == "scripting") r.push_back("scripting");
  return r;
}

}  // namespace feedkv::server
