// SetValue: the value of a Redis set key, in one of two encodings:
//   - "longset": every member is a canonical decimal int64, kept in a LongSet
//     (storage/long_set.h), about 8 / fill bytes per member;
//   - "hashtable": any byte strings, kept in a StringSet (below).
// A set starts as a longset and converts to a hashtable, once and for good, the first
// time a member that is not a canonical int64 arrives (as Redis converts intsets).
// ConvertToHashtable() is the only place the encoding changes.
//
// Members are handed around as SetMember: an int64 for a longset, a view into the
// set's own storage for a hashtable (valid until the set changes).
// Not thread-safe: owned by the command thread like every keyspace value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "storage/int_text.h"
#include "storage/long_set.h"
#include "storage/object.h"
#include "storage/status.h"

namespace feedkv {

// A set member: an integer (from a longset) or bytes (from a hashtable).
struct SetMember {
  bool is_int = true;
  int64_t i = 0;
  std::string_view s;

  static SetMember Int(int64_t v) { return SetMember{true, v, {}}; }
  static SetMember Str(std::string_view v) { return SetMember{false, 0, v}; }
  // The member's bytes as a client sees them; buf backs integers (>= 20 bytes).
  std::string_view Text(char* buf) const { return is_int ? FormatInt64(i, buf) : s; }
};

// StringSet: a hash set of byte strings for the "hashtable" encoding, built for memory:
// one 8-byte slot per bucket (open addressing, linear probing, power-of-two capacity,
// load <= 0.8, backward-shift deletion so there are no tombstones) pointing to one heap
// block per member ([length prefix][bytes]). The slot's top 16 bits carry a tag from the
// member's hash so most mismatches are rejected without touching the block.
// Short members cost about 32 + 8/load bytes, against ~56+ for Redis's dict entries.
class StringSet {
 public:
  StringSet();
  ~StringSet();
  StringSet(const StringSet& other);
  StringSet& operator=(const StringSet&) = delete;
  StringSet(StringSet&& other) noexcept;
  StringSet& operator=(StringSet&& other) noexcept;

  // Returns whether s was new.
  bool Add(std::string_view s);
  // Returns whether s was present. May shrink the table.
  bool Remove(std::string_view s);
  bool Contains(std::string_view s) const;
  size_t size() const { return size_; }
  uint64_t capacity() const { return uint64_t{mask_} + 1; }
  // Sizes the table for n members without further growth.
  void Reserve(size_t n);
  // Bytes owned: slot array and member blocks, as the allocator counts them.
  size_t MemoryUsage() const;
  // A uniformly chosen member. REQUIRES: size() > 0.
  std::string_view RandomMember(uint64_t random) const;

  // Calls f(std::string_view) once per member, in slot order. f must not modify the set.
  template <class F>
  void ForEach(F&& f) const {
    for (uint64_t i = 0; i <= mask_; ++i) {
      if (slots_[i] != 0) f(BlockView(slots_[i]));
    }
  }

 private:
  static std::string_view BlockView(uint64_t slot);
  uint64_t Hash(std::string_view s) const;
  // Slot index holding s, or capacity() when absent.
  uint64_t Find(std::string_view s, uint64_t hash) const;
  void Rehash(uint64_t new_capacity);
  void FreeBlocks();

  uint64_t* slots_ = nullptr;  // (tag << 48) | block address; 0 = empty
  uint32_t mask_ = 0;          // capacity - 1
  uint32_t size_ = 0;
  uint64_t seed_ = 0;
  size_t block_bytes_ = 0;     // allocator cost of the member blocks
};

class SetValue final : public Object {
 public:
  // An empty longset with fresh random hash seeds.
  SetValue();
  explicit SetValue(LongSet set) : rep_(std::move(set)) {}
  explicit SetValue(StringSet set) : rep_(std::move(set)) {}

  // A new set holding `members`, longset-encoded when they all are canonical int64s,
  // sized for its contents (cache mode does not apply to a new value). Fails only past
  // LongSet::kMaxCapacity.
  static Status FromMembers(std::span<const std::string_view> members,
                            const LongSetOptions& options, std::unique_ptr<SetValue>* out);
  // A new longset holding `ids`, sized for them.
  static Status FromInts(std::span<const int64_t> ids, const LongSetOptions& options,
                         std::unique_ptr<SetValue>* out);

  // Object.
  ValueType type() const override { return ValueType::kSet; }
  std::string_view encoding() const override { return is_longset() ? "longset" : "hashtable"; }
  size_t MemoryUsage() const override;
  std::unique_ptr<Object> Clone() const override;
  // Tag byte 0 + LongSet image, or tag byte 1 + varint count + (varint length, bytes)*.
  void SerializeTo(std::string* out) const override;
  // Sum of XXH64 of each member's bytes (integers in decimal): order- and
  // encoding-independent.
  uint64_t Digest() const override;
  // Decodes SerializeTo's form, validating every byte. Empty sets are Corruption.
  static Status Decode(std::string_view bytes, std::unique_ptr<SetValue>* out);

  bool is_longset() const { return std::holds_alternative<LongSet>(rep_); }
  LongSet& longset() { return std::get<LongSet>(rep_); }  // REQUIRES: is_longset()
  const LongSet& longset() const { return std::get<LongSet>(rep_); }
  const StringSet& strings() const { return std::get<StringSet>(rep_); }  // REQUIRES: !is_longset()
  size_t size() const;
  bool empty() const { return size() == 0; }

  // Adds members, converting to a hashtable first if any is not a canonical int64.
  // *added counts the new ones. Full (cache mode: longset-auto-grow no) when the
  // longset has no room for them, and then nothing has changed. (Past
  // LongSet::kMaxCapacity an error can come part way; *added then still counts what
  // was added, so the caller can report the change.)
  Status AddMembers(std::span<const std::string_view> members, const LongSetOptions& options,
                    size_t* added);
  // The same for integers; a hashtable set stores their decimal text.
  Status AddInts(std::span<const int64_t> ids, const LongSetOptions& options, size_t* added);
  // Whether adding m would fail with Full: the cheap pre-check for commands that must
  // change nothing on failure (SMOVE).
  bool WouldBeFull(const SetMember& m, const LongSetOptions& options) const;
  Status AddMember(const SetMember& m, const LongSetOptions& options, bool* added);

  // Removals return whether the member was there. Call Compact() once after a command's
  // removals so the table can shrink.
  bool Remove(std::string_view member);
  bool RemoveInt(int64_t v);
  bool RemoveMember(const SetMember& m);
  void Compact(const LongSetOptions& options);

  bool Contains(std::string_view member) const;
  bool ContainsInt(int64_t v) const;
  bool ContainsMember(const SetMember& m) const;

  // A uniformly chosen member. REQUIRES: !empty().
  SetMember RandomMember(uint64_t random) const;
  // Appends every member to *out.
  void Members(std::vector<SetMember>* out) const;

  // Calls f(const SetMember&) once per member, in no particular order.
  template <class F>
  void ForEach(F&& f) const {
    if (is_longset()) {
      longset().ForEach([&](int64_t v) { f(SetMember::Int(v)); });
    } else {
      strings().ForEach([&](std::string_view s) { f(SetMember::Str(s)); });
    }
  }

  // SSCAN: members ordered by ScanKey(); the cursor is a position in that order, so a
  // scan survives growth, shrinking and even the conversion to a hashtable. Replaces
  // *out with the next max(count, capacity/64) members and returns the next cursor, or
  // 0 at the end. A member present for the whole scan is returned exactly once.
  uint64_t Scan(uint64_t cursor, size_t count, std::vector<SetMember>* out) const;
  // The scan order key of a member: LongSet::ScanKey for canonical integers (whatever
  // the encoding), a fixed 64-bit hash of the bytes otherwise.
  static uint64_t ScanKey(const SetMember& m);

  // The one place the encoding changes: longset -> hashtable. No-op for a hashtable.
  void ConvertToHashtable();

 private:
  std::variant<LongSet, StringSet> rep_;
};

// Set algebra over non-null sets. Intersections walk the smallest set.
// Calls f(const SetMember&) for each member of the intersection of `sets`, at most
// `limit` times (0: no limit). Members view the first set walked.
template <class F>
void ForEachInter(std::span<const SetValue* const> sets, size_t limit, F&& f);
// The union / difference (first minus the rest) as a new set, nullptr when empty.
// Longset-encoded when every input that contributes members is.
std::unique_ptr<SetValue> SetUnion(std::span<const SetValue* const> sets,
                                   const LongSetOptions& options);
std::unique_ptr<SetValue> SetDiff(std::span<const SetValue* const> sets,
                                  const LongSetOptions& options);
// The intersection as a new set, nullptr when empty.
std::unique_ptr<SetValue> SetInter(std::span<const SetValue* const> sets,
                                   const LongSetOptions& options);

namespace set_internal {
// The order in which ForEachInter checks sets: indices sorted by size, smallest
// first (ties by position), each distinct set once.
std::vector<size_t> BySize(std::span<const SetValue* const> sets);
}  // namespace set_internal

template <class F>
void ForEachInter(std::span<const SetValue* const> sets, size_t limit, F&& f) {
  if (sets.empty()) return;
  const std::vector<size_t> order = set_internal::BySize(sets);
  const SetValue& first = *sets[order[0]];
  size_t found = 0;
  bool stop = false;
  auto visit = [&](const SetMember& m) {
    if (stop) return;
    for (size_t k = 1; k < order.size(); ++k) {
      if (!sets[order[k]]->ContainsMember(m)) return;
    }
    f(m);
    if (limit != 0 && ++found >= limit) stop = true;
  };
  if (first.is_longset()) {
    // Hot path (SINTER / LSINTERCARD of follow lists): typed, no SetMember conversion
    // for the other longsets.
    bool all_long = true;
    for (const SetValue* s : sets) all_long &= s->is_longset();
    if (all_long) {
      first.longset().ForEach([&](int64_t v) {
        if (stop) return;
        for (size_t k = 1; k < order.size(); ++k) {
          if (!sets[order[k]]->longset().Contains(v)) return;
        }
        f(SetMember::Int(v));
        if (limit != 0 && ++found >= limit) stop = true;
      });
      return;
    }
  }
  first.ForEach(visit);
}

}  // namespace feedkv
