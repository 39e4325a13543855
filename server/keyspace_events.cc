#include "server/keyspace_events.h"

#include <utility>

namespace feedkv::server {

namespace {

// The class characters in the order Redis prints them.
constexpr std::pair<char, int> kClasses[] = {
    {'g', kNotifyGeneric}, {'$', kNotifyString},  {'l', kNotifyList},    {'s', kNotifySet},
    {'h', kNotifyHash},    {'z', kNotifyZset},    {'x', kNotifyExpired}, {'e', kNotifyEvicted},
    {'t', kNotifyStream},  {'d', kNotifyModule},  {'n', kNotifyNew},
};

}  // namespace

Status ParseKeyspaceEvents(std::string_view text, int* flags) {
  int out = 0;
  for (char ch : text) {
    int bit = 0;
    switch (ch) {
      case 'A': bit = kNotifyAll; break;
      case 'K': bit = kNotifyKeyspace; break;
      case 'E': bit = kNotifyKeyevent; break;
      case 'm': bit = kNotifyKeyMiss; break;
      default:
        for (const auto& [c, b] : kClasses) {
          if (c == ch) bit = b;
        }
    }
    if (bit == 0) return Status::InvalidArgument("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
    out |= bit;
  }
  *flags = out;
  return Status::OK();
}

std::string KeyspaceEventsToString(int flags) {
  std::string out;
  if ((flags & kNotifyAll) == kNotifyAll) {
    out.push_back('A');
    // 'n' is not part of "A", and Redis 7.0 prints it only in the else branch:
    // "An" reads back as "AK..." without it. Kept as Redis does.
  } else {
    for (const auto& [c, b] : kClasses) {
      if (flags & b) out.push_back(c);
    }
  }
  if (flags & kNotifyKeyspace) out.push_back('K');
  if (flags & kNotifyKeyevent) out.push_back('E');
  if (flags & kNotifyKeyMiss) out.push_back('m');
  return out;
}

}  // namespace feedkv::server
