// Database: one numbered keyspace (SELECT n): keys to values, with expiry.
//
// Layout, chosen for memory per key: every key is one heap block (Entry)
// holding a 24-byte header, the expire time only when the key has one, the
// key bytes, and a string value of up to kEmbedMax bytes. Longer strings,
// strings grown by APPEND or SETRANGE, and all other types hang off the
// header by pointer. Entries chain in a
// power-of-two bucket array (KeyTable, storage/key_table.h) that grows and
// shrinks incrementally: each keyspace operation moves one bucket of an
// in-progress rehash and ActiveExpireCycle (the cron entry point) moves more
// for up to a millisecond, so no command stalls on rehashing a big keyspace.
// SCAN uses Redis's reverse-binary cursor over the buckets, so a scan returns
// every key present throughout it even across resizes and mid-rehash.
// Strings that are canonical decimal int64s are stored as integers (Redis's
// "int" encoding), which makes INCR allocation-free.
//
// Expiry is lazy (Lookup drops an expired key) plus active (ActiveExpireCycle
// walks buckets incrementally from a SCAN cursor). Removal of an expired key
// is reported through the expire hook so the server can log a DEL to the AOF.
//
// Rehashing relinks entries and never moves them, so it leaves Entry
// pointers valid (a write to a key may still rebuild that key's entry).
// Not thread-safe: owned and used by the command thread only (a snapshot
// fork child reads its copy).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "storage/access_clock.h"
#include "storage/key_table.h"
#include "storage/object.h"

namespace feedkv {

class Database;

// A key's storage block. Handlers treat it as opaque and go through Database.
struct Entry {
  Entry* next;
  uint32_t key_len;
  // Type, encoding and expire flag fit in one byte, leaving 24 bits for the
  // access stamp (storage/access_clock.h), as in Redis's object header.
  ValueType type : 5;
  uint32_t encoding : 2;    // kEncInt / kEncEmbedded / kEncRaw / kEncObject
  uint32_t has_expire : 1;
  uint32_t access : 24;     // LRU clock or LFU minutes+counter (AccessClock)
  union {
    int64_t i;          // kEncInt: the integer value
    uint64_t len;       // kEncEmbedded: value length (bytes follow the key)
    std::string* raw;   // kEncRaw: heap string
    Object* obj;        // kEncObject
  } v;
  // Followed by: [int64 expire_ms if has_expire] [key bytes] then, for
  // kEncEmbedded, the value bytes; for kEncObject, the object size (uint32, 8-byte units)
  // last added to the database's memory count.

  std::string_view key() const;
  int64_t expire_ms() const;  // REQUIRES: has_expire
};
static_assert(sizeof(Entry) == 24, "the access stamp must not grow the header");

inline constexpr uint8_t kEncInt = 0;
inline constexpr uint8_t kEncEmbedded = 1;
inline constexpr uint8_t kEncRaw = 2;
inline constexpr uint8_t kEncObject = 3;
// Values up to kEmbedMax bytes live in the entry's own block: one allocation
// per key instead of three (entry, string object, bytes), which at 100-byte
// values is what lets a memory-limited cache hold more keys than Redis. The
// bound keeps the copy cheap when an EXPIRE or PERSIST rebuilds the block.
inline constexpr size_t kEmbedMax = 1024;
// What OBJECT ENCODING calls "embstr" (longer ones are "raw"), as Redis.
inline constexpr size_t kEmbstrMax = 44;
inline constexpr int64_t kNoExpire = -1;

class Database {
 public:
  // Called with a key just before it is removed because it expired.
  using ExpireHook = std::function<void(Database&, std::string_view key)>;

  explicit Database(int index);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  int index() const { return index_; }
  void set_expire_hook(ExpireHook hook) { expire_hook_ = std::move(hook); }
  // Called with a key just added (not replaced), for the "new" keyspace event.
  void set_new_key_hook(ExpireHook hook) { new_key_hook_ = std::move(hook); }
  // On a replica: a lookup reports an expired key as missing but leaves it
  // (its master's DEL removes it), as Redis's replicas do.
  void set_expired_keys_stay(bool stay) { expired_keys_stay_ = stay; }

  // The clock that stamps and touches this database's keys (none: stamps
  // stay 0). Not owned; must outlive the database.
  void set_access_clock(AccessClock* clock) { clock_ = clock; }

  // Returns the live entry for `key`, removing it first if it has expired,
  // and records the access (AccessClock::Touch).
  Entry* Lookup(std::string_view key, int64_t now_ms);
  // As Lookup, without recording an access (Redis's LOOKUP_NOTOUCH: TYPE,
  // EXISTS, TTL, OBJECT...).
  Entry* Peek(std::string_view key, int64_t now_ms);
  // LRU: milliseconds since the key's last access; LFU: its decayed counter.
  uint64_t IdleMs(const Entry* e) const { return clock_ ? clock_->IdleMs(e->access) : 0; }
  uint32_t Frequency(const Entry* e) const { return clock_ ? clock_->Frequency(e->access) : 0; }
  // RESTORE's IDLETIME (seconds, LRU policies) or FREQ (LFU policies); -1: not given.
  void RestoreAccess(Entry* e, int64_t idle_s, int64_t freq) {
    if (clock_ == nullptr) return;
    if (clock_->lfu() && freq >= 0) e->access = clock_->StampFrequency(static_cast<uint8_t>(freq)) & AccessClock::kLruMax;
    if (!clock_->lfu() && idle_s >= 0) e->access = clock_->StampIdle(static_cast<uint64_t>(idle_s));
  }
  // Returns the entry whether or not it has expired (for replicas and loading).
  Entry* Find(std::string_view key) const;
  // Asks for the memory that lookups of `keys` will read, all slots first and
  // then all chain heads, so their cache misses overlap (protocol/
  // pipeline_scan.h). A hint: changes nothing. REQUIRES: keys.size() <= 16.
  void Prefetch(std::span<const std::string_view> keys) const;

  // Strings. A value is stored as int, embedded or raw by one rule (StoreString).
  // SetString keeps the current expire when keep_ttl, else replaces it with
  // `expire_ms` (kNoExpire for none). Returns the entry (which may move).
  // !int_encode keeps an integer-looking value as text, as Redis's INCRBYFLOAT
  // leaves its result (OBJECT ENCODING "embstr", not "int").
  Entry* SetString(std::string_view key, std::string_view value, int64_t expire_ms,
                   bool keep_ttl, bool int_encode = true);
  Entry* SetInteger(std::string_view key, int64_t value, int64_t expire_ms, bool keep_ttl);
  // The string value; `scratch` backs int-encoded values.
  static std::string_view StringValue(const Entry* e, std::string* scratch);
  // As above with a caller buffer for int-encoded values: no allocation.
  static constexpr size_t kIntBufSize = 24;
  static std::string_view StringValue(const Entry* e, char (&buf)[kIntBufSize]);
  // Replaces an int-encoded string's value in place, keeping its expire, and
  // returns true; false (nothing done) for any other entry. No allocation.
  static bool UpdateIntegerInPlace(Entry* e, int64_t value);
  // Appends to / overwrites part of an existing string in place. The value
  // becomes raw-encoded (as Redis's APPEND and SETRANGE make it) and grows
  // with amortised doubling. SetRange zero-pads up to `offset`. Both return
  // the new length. REQUIRES: `key` holds a string here.
  size_t AppendString(std::string_view key, std::string_view tail);
  size_t SetRange(std::string_view key, size_t offset, std::string_view data);
  // The raw bytes of the string at `key`, zero-padded to at least min_len, for
  // in-place bit writes (SETBIT, BITFIELD). Valid until the key changes.
  // REQUIRES: `key` holds a string here.
  std::string* StringBytesForWrite(std::string_view key, size_t min_len);
  // REQUIRES: e is a string. Integer value if the string is one.
  static bool StringAsInteger(const Entry* e, int64_t* out);

  // Objects (non-string types). The database takes ownership.
  Entry* SetObject(std::string_view key, std::unique_ptr<Object> obj, int64_t expire_ms,
                   bool keep_ttl);
  static Object* GetObject(const Entry* e) { return e->v.obj; }
  // Re-measures an object after the caller changed it in place, so that
  // MemoryUsage() follows it. The keyspace remembers what it accounted for
  // each object, so deleting a key always returns exactly what it added even
  // if this is not called.
  void UpdateObjectMemory(Entry* e);

  bool Delete(std::string_view key);
  // Delete, except that an object value is moved to *detached instead of
  // being freed, so the caller can free it elsewhere (UNLINK's lazy free).
  bool Delete(std::string_view key, std::unique_ptr<Object>* detached);
  // Empties the database like Clear but hands its entries over, still
  // linked, in the returned table: FreeEntries(table) frees them, on any
  // thread (FLUSHALL ASYNC).
  std::unique_ptr<KeyTable> DetachAll();
  static void FreeEntries(KeyTable* table);
  // Sets (ms > 0) or removes (kNoExpire) the expire of an existing key.
  void SetExpire(std::string_view key, int64_t expire_ms);
  // Moves a key (with value and expire) to `to` under `new_key`, replacing
  // anything there. The value is handed over, not copied, and keeps its
  // encoding. REQUIRES: key exists here.
  void MoveKey(std::string_view key, Database* to, std::string_view new_key);
  // Deep-copies a key's value to `to` under `new_key`.
  void CopyKey(const Entry* e, Database* to, std::string_view new_key) const;

  size_t size() const { return size_; }
  size_t expires_count() const { return expires_; }
  void Clear();
  void Swap(Database& other);

  // SCAN over buckets: calls fn for each entry of the buckets visited and
  // returns the next cursor (0 when done). Visits about `count` buckets.
  uint64_t Scan(uint64_t cursor, size_t count, const std::function<void(const Entry*)>& fn) const;
  // All entries, in bucket order. fn must not modify the database.
  void ForEach(const std::function<void(const Entry*)>& fn) const;
  // A random live-or-expired entry, nullptr if empty.
  const Entry* RandomEntry(uint64_t random) const;
  // Appends up to `count` entries (only ones with an expire when
  // `with_expire_only`) from a random stretch of buckets, for sampled eviction
  // (Redis's dictGetSomeKeys). The walk is bounded: when keys with an expire
  // are rare it may find fewer, or none. Pointers are valid until the next
  // change to the keyspace.
  void Sample(uint64_t seed, size_t count, bool with_expire_only, std::vector<const Entry*>* out) const;

  // The cron entry point. Removes expired keys, walking at most `max_buckets`
  // buckets from where the last call stopped (at most one pass), then runs
  // IncrementalRehash(rehash_us). Returns the number of keys removed.
  static constexpr int64_t kCronRehashMicros = 1000;  // Redis's 1 ms per cron
  size_t ActiveExpireCycle(int64_t now_ms, size_t max_buckets,
                           int64_t rehash_us = kCronRehashMicros);
  // Starts a resize that is due (e.g. a shrink after mass expiry) and
  // advances the rehash for about `budget_us`. True while still rehashing.
  bool IncrementalRehash(int64_t budget_us);
  // Whether a resize is in progress (two bucket arrays).
  bool rehashing() const { return table_.rehashing(); }
  // Buckets of both arrays.
  size_t bucket_count() const { return table_.bucket_count(); }
  // DEBUG HTSTATS: the main array (0) or the rehashing target (1).
  KeyTable::ArrayStats TableStats(int which) const { return table_.Stats(which); }
  // Sum of remaining TTLs / count over keys sampled by the last active cycle.
  int64_t avg_ttl_ms() const { return avg_ttl_ms_; }

  // Bytes used by entries, values and both bucket arrays (approximate malloc
  // cost).
  size_t MemoryUsage() const { return memory_ + table_.MemoryUsage(); }
  // What one key costs now (MEMORY USAGE).
  static size_t EntryMemory(const Entry* e);

 private:
  // The link for `key` (see KeyTable::FindLink), after one rehash step:
  // stepping first keeps the link valid for the caller's use.
  Entry** LinkFor(std::string_view key);
  // Installs `fresh` in place of *link (or appends it when *link is null),
  // freeing the old block and its value.
  Entry* Replace(Entry** link, Entry* fresh);
  // Rebuilds *link's block with a raw-encoded copy of its string value.
  Entry* MakeRaw(Entry** link);
  // What memory_ holds for an entry (objects: the size measured last).
  static size_t AccountedMemory(const Entry* e);
  // Unlinks and frees. Does not resize (callers may hold other links); the
  // public operation that removed keys calls table_.MaybeResize at its end.
  void RemoveLink(Entry** link);
  void ExpireEntry(Entry** link);
  // ActiveExpireCycle's walk.
  size_t ExpireBuckets(int64_t now_ms, size_t max_buckets);

  int index_;
  KeyTable table_;
  size_t size_ = 0;
  size_t expires_ = 0;
  size_t memory_ = 0;
  uint64_t expire_cursor_ = 0;  // a SCAN cursor
  int64_t avg_ttl_ms_ = 0;
  ExpireHook expire_hook_;
  ExpireHook new_key_hook_;
  bool expired_keys_stay_ = false;
  AccessClock* clock_ = nullptr;
};

}  // namespace feedkv
