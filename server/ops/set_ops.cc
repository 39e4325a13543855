#include "server/ops/set_ops.h"

#include <unordered_set>

#include "protocol/error_text.h"
#include "server/commands/lookup.h"
#include "server/config.h"
#include "server/ops/store_result.h"
#include "server/server.h"
#include "storage/database.h"

namespace feedkv::server::set_ops {

namespace {

// SPOP with a count is logged as SREMs of at most this many members each.
constexpr size_t kSremBatch = 1024;

Status CheckEncoding(Accept accept, const SetValue* set) {
  if (accept == Accept::kLongSetOnly && set != nullptr && !set->is_longset()) return Status::WrongType();
  return Status::OK();
}

std::vector<const SetValue*> Present(const std::vector<const SetValue*>& sets) {
  std::vector<const SetValue*> out;
  for (const SetValue* s : sets) {
    if (s != nullptr) out.push_back(s);
  }
  return out;
}

}  // namespace

LongSetOptions Options(const CommandContext& ctx) {
  const ServerConfig& c = ctx.server.cfg();
  LongSetOptions o;
  o.max_fill = c.longset_max_fill;
  o.growth_factor = c.longset_growth_factor;
  o.auto_grow = c.longset_auto_grow;
  return o;
}

StatusOr<const SetValue*> Find(CommandContext& ctx, std::string_view key, Accept accept) {
  Entry* e;
  SetValue* set;
  Status st = FindTyped(ctx, key, ValueType::kSet, true, &e, &set);
  if (st.ok()) st = CheckEncoding(accept, set);
  if (!st.ok()) return st;
  return static_cast<const SetValue*>(set);
}

Status FindAll(CommandContext& ctx, std::span<const std::string_view> keys, Accept accept,
               std::vector<const SetValue*>* sets) {
  sets->clear();
  sets->reserve(keys.size());
  for (std::string_view key : keys) {
    StatusOr<const SetValue*> set = Find(ctx, key, accept);
    if (!set.ok()) return set.status();
    sets->push_back(*set);
  }
  return Status::OK();
}

Status FindForWrite(CommandContext& ctx, std::string_view key, Accept accept, Entry** entry,
                    SetValue** set) {
  Status st = FindTyped(ctx, key, ValueType::kSet, false, entry, set);
  if (st.ok()) st = CheckEncoding(accept, *set);
  return st;
}

StatusOr<size_t> Add(CommandContext& ctx, std::string_view key, Accept accept, const Members& members,
                     std::string_view event) {
  Entry* e;
  SetValue* set;
  if (Status st = FindForWrite(ctx, key, accept, &e, &set); !st.ok()) return st;
  const LongSetOptions options = Options(ctx);
  if (set == nullptr) {
    std::unique_ptr<SetValue> fresh;
    Status st = members.is_ids() ? SetValue::FromInts(members.ids(), options, &fresh)
                                 : SetValue::FromMembers(members.text(), options, &fresh);
    if (!st.ok()) return st;
    const size_t n = fresh->size();
    ctx.db().SetObject(key, std::move(fresh), kNoExpire, false);
    ctx.Dirty(static_cast<int64_t>(n));
    ctx.Notify(kNotifySet, event, key);
    return n;
  }
  size_t added = 0;
  Status st = members.is_ids() ? set->AddInts(members.ids(), options, &added)
                               : set->AddMembers(members.text(), options, &added);
  if (added > 0) {
    ctx.db().UpdateObjectMemory(e);
    ctx.Dirty(static_cast<int64_t>(added));
    ctx.Notify(kNotifySet, event, key);
  }
  if (!st.ok()) return st;
  return added;
}

StatusOr<size_t> Remove(CommandContext& ctx, std::string_view key, Accept accept,
                        const Members& members, std::string_view event) {
  Entry* e;
  SetValue* set;
  if (Status st = FindForWrite(ctx, key, accept, &e, &set); !st.ok()) return st;
  if (set == nullptr) return size_t{0};
  size_t removed = 0;
  for (size_t i = 0; i < members.size() && !set->empty(); ++i) {
    // Arguments never view the set's own storage, so no copy (RemoveMember's) is needed.
    removed += members.is_ids() ? set->RemoveInt(members.ids()[i]) : set->Remove(members.text()[i]);
  }
  if (removed > 0) {
    ctx.Notify(kNotifySet, event, key);
    AfterRemoval(ctx, key, e, set);
    ctx.Dirty(static_cast<int64_t>(removed));
  }
  return removed;
}

void AfterRemoval(CommandContext& ctx, std::string_view key, Entry* entry, SetValue* set) {
  if (set->empty()) {
    ctx.db().Delete(key);
    ctx.Notify(kNotifyGeneric, "del", key);
  } else {
    set->Compact(Options(ctx));
    ctx.db().UpdateObjectMemory(entry);
  }
}

std::vector<SetMember> DistinctRandom(CommandContext& ctx, const SetValue& set, size_t count) {
  std::vector<SetMember> picked;
  picked.reserve(count);
  if (count * 3 > set.size()) {
    // A large share: a partial Fisher-Yates shuffle of all members.
    set.Members(&picked);
    for (size_t i = 0; i < count; ++i) {
      const size_t j = i + ctx.server.Random() % (picked.size() - i);
      std::swap(picked[i], picked[j]);
    }
    picked.resize(count);
    return picked;
  }
  // A small share: draw with rejection of repeats.
  std::unordered_set<uint64_t> seen_ints;
  std::unordered_set<std::string_view> seen_strings;
  while (picked.size() < count) {
    const SetMember m = set.RandomMember(ctx.server.Random());
    const bool fresh = m.is_int ? seen_ints.insert(static_cast<uint64_t>(m.i)).second
                                : seen_strings.insert(m.s).second;
    if (fresh) picked.push_back(m);
  }
  return picked;
}

StatusOr<std::vector<std::string>> Pop(CommandContext& ctx, std::string_view key, uint64_t count) {
  Entry* e;
  SetValue* set;
  if (Status st = FindForWrite(ctx, key, Accept::kAnySet, &e, &set); !st.ok()) return st;
  std::vector<std::string> popped;
  if (set == nullptr || count == 0) return popped;
  char buf[24];
  if (count >= set->size()) {
    popped.reserve(set->size());
    set->ForEach([&](const SetMember& m) { popped.emplace_back(m.Text(buf)); });
  } else {
    std::vector<SetMember> picked;
    if (count == 1) {
      picked.push_back(set->RandomMember(ctx.server.Random()));
    } else {
      picked = DistinctRandom(ctx, *set, static_cast<size_t>(count));
    }
    for (const SetMember& m : picked) popped.emplace_back(m.Text(buf));
  }
  for (const std::string& m : popped) set->Remove(m);
  ctx.Notify(kNotifySet, "spop", key);
  AfterRemoval(ctx, key, e, set);
  ctx.Dirty(static_cast<int64_t>(popped.size()));
  for (size_t i = 0; i < popped.size(); i += kSremBatch) {
    std::vector<std::string> cmd = {"SREM", std::string(key)};
    for (size_t j = i; j < popped.size() && j < i + kSremBatch; ++j) cmd.push_back(popped[j]);
    ctx.PropagateAs(std::move(cmd));
  }
  return popped;
}

StatusOr<bool> Move(CommandContext& ctx, std::string_view src_key, std::string_view dst_key,
                    std::string_view member) {
  Entry *src_e, *dst_e;
  SetValue *src, *dst;
  if (Status st = FindForWrite(ctx, src_key, Accept::kAnySet, &src_e, &src); !st.ok()) return st;
  if (src == nullptr) return false;
  if (Status st = FindForWrite(ctx, dst_key, Accept::kAnySet, &dst_e, &dst); !st.ok()) return st;
  if (src == dst) return src->Contains(member);
  if (!src->Contains(member)) return false;
  const LongSetOptions options = Options(ctx);
  // Cache mode: fail before touching either set.
  if (dst != nullptr && dst->WouldBeFull(SetMember::Str(member), options)) {
    return Status::Full("longset is full");
  }
  src->Remove(member);
  ctx.Notify(kNotifySet, "srem", src_key);
  AfterRemoval(ctx, src_key, src_e, src);
  ctx.Touched(ctx.client.db, src_key);
  // As Redis: the destination changes only if the member was not there yet.
  const bool dst_changes = dst == nullptr || !dst->Contains(member);
  if (dst_changes) ctx.Touched(ctx.client.db, dst_key);
  const std::span<const std::string_view> one(&member, 1);
  if (dst == nullptr) {
    std::unique_ptr<SetValue> fresh;
    Status st = SetValue::FromMembers(one, options, &fresh);
    if (st.ok()) ctx.db().SetObject(dst_key, std::move(fresh), kNoExpire, false);
  } else {
    size_t added = 0;
    Status st = dst->AddMembers(one, options, &added);
    st.PermitUnchecked();  // room was checked above
    ctx.db().UpdateObjectMemory(dst_e);
  }
  if (dst_changes) ctx.Notify(kNotifySet, "sadd", dst_key);
  ctx.Dirty();
  return true;
}

size_t Store(CommandContext& ctx, std::string_view dest, std::unique_ptr<SetValue> result) {
  const size_t n = result == nullptr ? 0 : result->size();
  return StoreResult(ctx, dest, std::move(result), n, kNotifySet);
}

std::unique_ptr<SetValue> Inter(CommandContext& ctx, const std::vector<const SetValue*>& sets) {
  for (const SetValue* s : sets) {
    if (s == nullptr) return nullptr;
  }
  return SetInter(sets, Options(ctx));
}

std::unique_ptr<SetValue> Union(CommandContext& ctx, const std::vector<const SetValue*>& sets) {
  return SetUnion(Present(sets), Options(ctx));
}

std::unique_ptr<SetValue> Diff(CommandContext& ctx, const std::vector<const SetValue*>& sets) {
  if (sets.empty() || sets[0] == nullptr) return nullptr;
  return SetDiff(Present(sets), Options(ctx));
}

}  // namespace feedkv::server::set_ops
