// Keyspace notifications (Redis's notify.c): the event classes a
// `notify-keyspace-events` string selects, its parsing and its normal form.
//
// A write command reports what it did to a key as an event name in a class
// (CommandContext::Notify); Server::NotifyKeyspaceEvent publishes it, when
// the class is selected, on `__keyspace@<db>__:<key>` (message: the event)
// and/or `__keyevent@<db>__:<event>` (message: the key). docs/pubsub.md
// lists every event, including feedkv's own families.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "storage/status.h"

namespace feedkv::server {

// Bit values as Redis's NOTIFY_* (server.h).
enum KeyspaceEvent : int {
  kNotifyKeyspace = 1 << 0,  // K
  kNotifyKeyevent = 1 << 1,  // E
  kNotifyGeneric = 1 << 2,   // g
  kNotifyString = 1 << 3,    // $
  kNotifyList = 1 << 4,      // l
  kNotifySet = 1 << 5,       // s
  kNotifyHash = 1 << 6,      // h
  kNotifyZset = 1 << 7,      // z
  kNotifyExpired = 1 << 8,   // x
  kNotifyEvicted = 1 << 9,   // e
  kNotifyStream = 1 << 10,   // t
  kNotifyKeyMiss = 1 << 11,  // m
  kNotifyModule = 1 << 13,   // d: Bloom filters, counters, feeds (module-like types)
  kNotifyNew = 1 << 14,      // n
  // "A": every class but key misses and new keys, as Redis 7.0.
  kNotifyAll = kNotifyGeneric | kNotifyString | kNotifyList | kNotifySet | kNotifyHash |
               kNotifyZset | kNotifyExpired | kNotifyEvicted | kNotifyStream | kNotifyModule,
};

// Parses a notify-keyspace-events value; Redis's error text for an unknown
// character.
Status ParseKeyspaceEvents(std::string_view text, int* flags);
// The value as CONFIG GET shows it (Redis's keyspaceEventsFlagsToString).
std::string KeyspaceEventsToString(int flags);

}  // namespace feedkv::server
