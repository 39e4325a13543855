// The set operations: the layer between the set-shaped command families (S* in
// server/commands/cmd_sets.cc, LS* in cmd_longset.cc, FEED.FOLLOW's follow lists) and
// Database. An operation looks its keys up, checks their type, changes the SetValue
// and keeps the keyspace's books — the dirty count, keyspace events, WATCH touches,
// memory accounting, deleting a set that empties — then returns its result or a Status
// (WrongType; Full for a longset in cache mode). It never writes a reply, so a handler
// reads parse → operation → reply, and the two families share every operation: they
// differ only in how members are parsed and replied (server/commands/set_family.h).
//
// Command thread only, like the Database it changes.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/command_context.h"
#include "storage/long_set.h"
#include "storage/set_value.h"
#include "storage/status.h"

namespace feedkv::server::set_ops {

// Which sets a command may address: any set (S*), or only longset-encoded ones (LS*:
// a hashtable-encoded set answers WRONGTYPE, as another type does).
enum class Accept { kAnySet, kLongSetOnly };

// A command's member arguments, as received (S*) or as parsed ids (LS*). A view: the
// caller keeps the storage alive.
class Members {
 public:
  explicit Members(std::span<const std::string_view> text) : text_(text) {}
  explicit Members(std::span<const int64_t> ids) : ids_(ids), is_ids_(true) {}

  size_t size() const { return is_ids_ ? ids_.size() : text_.size(); }
  SetMember operator[](size_t i) const {
    return is_ids_ ? SetMember::Int(ids_[i]) : SetMember::Str(text_[i]);
  }
  bool is_ids() const { return is_ids_; }
  std::span<const std::string_view> text() const { return text_; }
  std::span<const int64_t> ids() const { return ids_; }

 private:
  std::span<const std::string_view> text_;
  std::span<const int64_t> ids_;
  bool is_ids_ = false;
};

// The longset tuning the server's config sets (longset-max-fill and friends).
LongSetOptions Options(const CommandContext& ctx);

// ---- reads ----

// The set at `key`, for reading (counts a keyspace hit or miss): null when missing.
StatusOr<const SetValue*> Find(CommandContext& ctx, std::string_view key, Accept accept);
// The sets at `keys`, in order, missing keys null. Every key is checked for its type,
// as Redis does, so WRONGTYPE wins over a missing key anywhere.
Status FindAll(CommandContext& ctx, std::span<const std::string_view> keys, Accept accept,
               std::vector<const SetValue*>* sets);

// ---- writes ----

// The set at `key` and its entry, for changing it in place (no hit/miss counted);
// both null when missing.
Status FindForWrite(CommandContext& ctx, std::string_view key, Accept accept, Entry** entry,
                    SetValue** set);
// Adds `members` to the set at `key`, creating it when missing; returns how many were
// new. `event` names the keyspace event of an add that changed the set. Members added
// before a failure part way (Full) stay, and are counted dirty.
StatusOr<size_t> Add(CommandContext& ctx, std::string_view key, Accept accept, const Members& members,
                     std::string_view event);
// Removes `members`; returns how many were there. Deletes the key when it empties.
StatusOr<size_t> Remove(CommandContext& ctx, std::string_view key, Accept accept,
                        const Members& members, std::string_view event);
// After removals from `set` at `key` (and their keyspace event): drops the key when
// empty, with a "del" event, else lets the table shrink and re-measures it.
void AfterRemoval(CommandContext& ctx, std::string_view key, Entry* entry, SetValue* set);
// SPOP: removes `count` random distinct members (all of them when count >= size) and
// returns their text; logged as SREMs, since the choice is random but its effect is not.
StatusOr<std::vector<std::string>> Pop(CommandContext& ctx, std::string_view key, uint64_t count);
// SMOVE: moves `member` from `src` to `dst`; whether it was in `src`. A Full
// destination fails before either set changes.
StatusOr<bool> Move(CommandContext& ctx, std::string_view src, std::string_view dst,
                    std::string_view member);
// The *STORE commands: replaces `dest` with `result`, or deletes it when `result` is
// null (empty); returns the stored size. Only `dest` is touched.
size_t Store(CommandContext& ctx, std::string_view dest, std::unique_ptr<SetValue> result);

// ---- algebra over FindAll's sets (missing keys null) ----

// Calls f(const SetMember&) for each member of the intersection, at most `limit`
// times (0: no limit). A missing key makes it empty.
template <class F>
void ForEachInter(const std::vector<const SetValue*>& sets, size_t limit, F&& f) {
  for (const SetValue* s : sets) {
    if (s == nullptr) return;
  }
  feedkv::ForEachInter(std::span<const SetValue* const>(sets), limit, std::forward<F>(f));
}
// Each result as a new set, null when empty.
std::unique_ptr<SetValue> Inter(CommandContext& ctx, const std::vector<const SetValue*>& sets);
std::unique_ptr<SetValue> Union(CommandContext& ctx, const std::vector<const SetValue*>& sets);
std::unique_ptr<SetValue> Diff(CommandContext& ctx, const std::vector<const SetValue*>& sets);

// `count` distinct members chosen uniformly. REQUIRES: 0 < count < set.size().
std::vector<SetMember> DistinctRandom(CommandContext& ctx, const SetValue& set, size_t count);

}  // namespace feedkv::server::set_ops
