// Client-side caching (Redis 6+'s CLIENT TRACKING): the server remembers which
// clients may hold a copy of a key and tells them when it changes.
//
// Two modes, as Redis's tracking.c:
//  - default: a read-only command of a tracking client records its keys in a
//    table (key name -> ids of clients that read it; databases share names, as
//    Redis's table). The first change of a key sends `invalidate [key]` to each
//    and forgets the key, so a client hears of a key once per read.
//  - BCAST: no table; a client subscribes to key prefixes ("" is every key) and
//    hears of every change of a matching key, batched per prefix at the end of
//    the event loop's turn (Broadcast).
// OPTIN/OPTOUT narrow default mode to reads after CLIENT CACHING yes, or all
// reads but those after CLIENT CACHING no; NOLOOP drops what the client changed
// itself; REDIRECT sends the messages to another connection (RESP3: as pushes;
// RESP2: as messages on __redis__:invalidate if it is subscribed).
//
// A flush (FLUSHALL, FLUSHDB, a full load) sends every tracking client a null
// invalidation and empties the table. tracking-table-max-keys bounds the table:
// past it, keys are invalidated early (Cron), as Redis does.
//
// Thread-safety: the command thread only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace feedkv::server {

class Server;
struct Client;

// One client's tracking settings (Client::tracking).
struct ClientTracking {
  bool on = false;
  bool bcast = false;
  bool optin = false;
  bool optout = false;
  bool noloop = false;
  bool caching = false;          // CLIENT CACHING yes (optin) / no (optout) was given
  bool broken_redirect = false;  // the redirect target has gone
  uint64_t redirect = 0;         // 0: none
  std::vector<std::string> prefixes;  // BCAST, sorted
};

class Tracking {
 public:
  explicit Tracking(Server& server) : server_(server) {}

  // Tracking turned on for `c` with its settings already in c.tracking
  // (`new_prefixes`: BCAST prefixes to add). Off forgets its prefixes.
  void Enable(Client& c, std::span<const std::string> new_prefixes);
  void Disable(Client& c);

  // After a read-only command of `c`: remember its keys (default mode).
  void RememberKey(const Client& c, std::string_view key);
  // True when `c` in its current state records the keys it reads.
  static bool Remembers(const Client& c);

  // A key changed; `by` is the client whose command changed it (0: none).
  void InvalidateKey(std::string_view key, uint64_t by);
  // Every key may have changed: a null invalidation to every tracking client.
  void InvalidateAll();

  // While `client_id` runs a command, messages to it wait for its reply
  // (Redis 7.0 sends them after): FlushDeferred sends them.
  void set_executing(uint64_t client_id) { executing_ = client_id; }
  void FlushDeferred();

  // Sends the BCAST messages gathered since the last call.
  void Broadcast();
  // Bounds the table to tracking-table-max-keys, a bounded step per call.
  void Cron();

  // Changes need reporting: a client tracks, or the table still names keys.
  bool active() const { return clients_ > 0 || !table_.empty(); }
  size_t clients() const { return clients_; }
  size_t total_keys() const { return table_.size(); }
  size_t total_items() const { return items_; }
  size_t total_prefixes() const { return prefixes_.size(); }

  // Prefix `p` collides with one of `existing` (one starts with the other).
  static std::optional<std::string> Overlap(std::string_view p, std::span<const std::string> existing);

 private:
  struct Prefix {
    std::unordered_set<uint64_t> clients;
    // Changed keys not yet broadcast, with the client that changed each (0: none).
    std::vector<std::pair<std::string, uint64_t>> pending;
    std::unordered_set<std::string> pending_keys;
  };

  // Sends one invalidation (`keys`, or null when empty and `null`) to tracking
  // client `id` or its redirect target.
  // The default-mode half of InvalidateKey.
  void InvalidateTracked(std::string_view key, uint64_t by);
  void Send(uint64_t id, std::span<const std::string_view> keys, bool null);
  void ScheduleBroadcast();

  Server& server_;
  size_t clients_ = 0;
  size_t items_ = 0;
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::unordered_set<uint64_t>, KeyHash, std::equal_to<>> table_;
  std::map<std::string, Prefix, std::less<>> prefixes_;
  bool broadcast_posted_ = false;
  uint64_t executing_ = 0;
  // Invalidations of the executing client: keys, or nullopt for a flush.
  std::vector<std::optional<std::string>> deferred_;
};

}  // namespace feedkv::server
