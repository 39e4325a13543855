#include "server/command_table.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace feedkv::server {

namespace {
std::string Lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}
}  // namespace

CommandTable::CommandTable() {
  const std::span<const CommandSpec> families[] = {
      ConnectionCommands(), ServerCommands(), IntrospectionCommands(), KeyCommands(),
      ExpireCommands(),
      StringCommands(),     TransactionCommands(), SetCommands(),      LongSetCommands(),
      CounterCommands(),    PersistenceCommands(),
  };
  for (auto family : families) {
    for (const CommandSpec& spec : family) {
      bool bad_keys = spec.first_key < 0 || (spec.first_key == 0 && spec.last_key != 0) ||
                      (spec.first_key > 0 && spec.key_step <= 0) ||
                      (spec.arity > 0 && spec.first_key >= spec.arity);
      if (spec.name != Lower(spec.name) || spec.handler == nullptr || bad_keys) {
        std::fprintf(stderr, "bad command declaration: %.*s\n", static_cast<int>(spec.name.size()),
                     spec.name.data());
        std::abort();
      }
      if (!by_name_.emplace(std::string(spec.name), &spec).second) {
        std::fprintf(stderr, "duplicate command: %.*s\n", static_cast<int>(spec.name.size()),
                     spec.name.data());
        std::abort();
      }
      all_.push_back(&spec);
    }
  }
  std::sort(all_.begin(), all_.end(),
            [](const CommandSpec* a, const CommandSpec* b) { return a->name < b->name; });
}

const CommandSpec* CommandTable::Find(std::string_view name) const {
  char buf[64];
  if (name.size() >= sizeof(buf)) return nullptr;
  for (size_t i = 0; i < name.size(); i++) {
    buf[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(name[i])));
  }
  auto it = by_name_.find(std::string(buf, name.size()));
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<int> CommandTable::KeyPositions(const CommandSpec& spec, size_t argc) {
  std::vector<int> keys;
  if (spec.first_key <= 0) return keys;
  int last = spec.last_key >= 0 ? spec.last_key : static_cast<int>(argc) + spec.last_key;
  for (int i = spec.first_key; i <= last && i < static_cast<int>(argc); i += spec.key_step) {
    keys.push_back(i);
  }
  return keys;
}

std::vector<std::string_view> FlagNames(uint32_t f) {
  std::vector<std::string_view> r;
  struct N { uint32_t bit; std::string_view name; };
  static const N kNames[] = {
      {kWrite, "write"},       {kReadOnly, "readonly"}, {kDenyOom, "denyoom"},
      {kAdmin, "admin"},       {kPubSub, "pubsub"},     {kNoScript, "noscript"},
      {kLoading, "loading"},   {kStale, "stale"},       {kFast, "fast"},
      {kNoAuth, "no_auth"},    {kNoMulti, "no_multi"},  {kSkipMonitor, "skip_monitor"},
      {kAllowBusy, "allow_busy"}, {kMayReplicate, "may_replicate"},
  };
  for (const N& n : kNames) {
    if (f & n.bit) r.push_back(n.name);
  }
  return r;
}

}  // namespace feedkv::server
