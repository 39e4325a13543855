// The handlers the set family (S*, cmd_sets.cc) and the longset family (LS*,
// cmd_longset.cc) share. Each is written once, as parse → set_ops operation → reply,
// over a member codec that says how a family's members travel:
//   TextMembers (S*): byte strings in, bulk strings out, any set encoding;
//   IdMembers (LS*):  canonical int64 ids in ("value is not an integer" otherwise,
//                     checked before the key), RESP integers out, longset-encoded
//                     sets only (a hashtable-encoded set answers WRONGTYPE).
#pragma once

#include <charconv>
#include <span>
#include <string_view>
#include <vector>

#include "protocol/error_text.h"
#include "protocol/reply_writer.h"
#include "server/command_context.h"
#include "server/commands/scan_args.h"
#include "server/glob.h"
#include "server/ops/set_ops.h"
#include "storage/int_text.h"
#include "storage/set_value.h"

namespace feedkv::server {

// Defined in cmd_sets.cc: "numkeys key [key ...] [LIMIT n]"; false after replying
// the error.
bool ParseInterCardArgs(CommandContext& ctx, size_t* numkeys, size_t* limit);

struct TextMembers {
  static constexpr set_ops::Accept kAccept = set_ops::Accept::kAnySet;
  // The arguments from `first` on, as they are.
  struct List {
    std::span<const std::string_view> text;
    set_ops::Members view() const { return set_ops::Members(text); }
  };
  static bool Parse(CommandContext& ctx, size_t first, List* out) {
    out->text = ctx.args.subspan(first);
    return true;
  }
  static void Reply(protocol::ReplyWriter& r, const SetMember& m) {
    char buf[24];
    r.Bulk(m.Text(buf));
  }
};

struct IdMembers {
  static constexpr set_ops::Accept kAccept = set_ops::Accept::kLongSetOnly;
  struct List {
    std::vector<int64_t> ids;
    set_ops::Members view() const { return set_ops::Members(std::span<const int64_t>(ids)); }
  };
  static bool Parse(CommandContext& ctx, size_t first, List* out) {
    out->ids.resize(ctx.argc() - first);
    for (size_t i = first; i < ctx.argc(); ++i) {
      if (!ParseCanonicalInt64(ctx.arg(i), &out->ids[i - first])) {
        ctx.Error(protocol::err::kNotInteger);
        return false;
      }
    }
    return true;
  }
  static void Reply(protocol::ReplyWriter& r, const SetMember& m) { r.Integer(m.i); }
};

namespace set_family {

// :0 / :1 (the same in RESP2 and RESP3), without formatting an integer.
inline void ReplyBool(CommandContext& ctx, bool b) { ctx.reply.Raw(b ? ":1\r\n" : ":0\r\n"); }

template <class M>
void ReplySet(CommandContext& ctx, const SetValue* set) {
  if (set == nullptr) return ctx.reply.SetHeader(0);
  ctx.reply.SetHeader(set->size());
  set->ForEach([&](const SetMember& m) { M::Reply(ctx.reply, m); });
}

// The sets named by args[first..last], or false after replying the error.
template <class M>
bool GatherSets(CommandContext& ctx, size_t first, size_t last, std::vector<const SetValue*>* sets) {
  Status st = set_ops::FindAll(ctx, ctx.args.subspan(first, last + 1 - first), M::kAccept, sets);
  if (st.ok()) return true;
  ctx.Error(st);
  return false;
}

// SADD / LSADD key member [member ...]
template <class M>
void Add(CommandContext& ctx) {
  typename M::List members;
  if (!M::Parse(ctx, 2, &members)) return;
  StatusOr<size_t> added = set_ops::Add(ctx, ctx.arg(1), M::kAccept, members.view(), ctx.spec.name);
  if (!added.ok()) return ctx.Error(added.status());
  ctx.reply.Integer(static_cast<int64_t>(*added));
}

// SREM / LSREM key member [member ...]
template <class M>
void Remove(CommandContext& ctx) {
  typename M::List members;
  if (!M::Parse(ctx, 2, &members)) return;
  StatusOr<size_t> removed = set_ops::Remove(ctx, ctx.arg(1), M::kAccept, members.view(), ctx.spec.name);
  if (!removed.ok()) return ctx.Error(removed.status());
  ctx.reply.Integer(static_cast<int64_t>(*removed));
}

// SISMEMBER / LSISMEMBER key member
template <class M>
void IsMember(CommandContext& ctx) {
  typename M::List member;
  if (!M::Parse(ctx, 2, &member)) return;
  const SetValue* set;
  if (!ctx.Found(set_ops::Find(ctx, ctx.arg(1), M::kAccept), &set)) return;
  ReplyBool(ctx, set != nullptr && set->ContainsMember(member.view()[0]));
}

// SMISMEMBER / LSMISMEMBER key member [member ...]
template <class M>
void MIsMember(CommandContext& ctx) {
  typename M::List members;
  if (!M::Parse(ctx, 2, &members)) return;
  const SetValue* set;
  if (!ctx.Found(set_ops::Find(ctx, ctx.arg(1), M::kAccept), &set)) return;
  const set_ops::Members view = members.view();
  ctx.reply.ArrayHeader(view.size());
  for (size_t i = 0; i < view.size(); ++i) ReplyBool(ctx, set != nullptr && set->ContainsMember(view[i]));
}

// SCARD / LSCARD key
template <class M>
void Card(CommandContext& ctx) {
  const SetValue* set;
  if (!ctx.Found(set_ops::Find(ctx, ctx.arg(1), M::kAccept), &set)) return;
  ctx.reply.Integer(set != nullptr ? static_cast<int64_t>(set->size()) : 0);
}

// SMEMBERS / LSMEMBERS key
template <class M>
void Members(CommandContext& ctx) {
  const SetValue* set;
  if (!ctx.Found(set_ops::Find(ctx, ctx.arg(1), M::kAccept), &set)) return;
  ReplySet<M>(ctx, set);
}

// SINTER / LSINTER key [key ...]
template <class M>
void Inter(CommandContext& ctx) {
  std::vector<const SetValue*> sets;
  if (!GatherSets<M>(ctx, 1, ctx.argc() - 1, &sets)) return;
  std::vector<SetMember> members;
  set_ops::ForEachInter(sets, 0, [&](const SetMember& m) { members.push_back(m); });
  ctx.reply.SetHeader(members.size());
  for (const SetMember& m : members) M::Reply(ctx.reply, m);
}

// SINTERCARD / LSINTERCARD numkeys key [key ...] [LIMIT n]
template <class M>
void InterCard(CommandContext& ctx) {
  size_t numkeys, limit;
  if (!ParseInterCardArgs(ctx, &numkeys, &limit)) return;
  std::vector<const SetValue*> sets;
  if (!GatherSets<M>(ctx, 2, 1 + numkeys, &sets)) return;
  int64_t n = 0;
  set_ops::ForEachInter(sets, limit, [&](const SetMember&) { ++n; });
  ctx.reply.Integer(n);
}

// SDIFF / LSDIFF key [key ...]
template <class M>
void Diff(CommandContext& ctx) {
  std::vector<const SetValue*> sets;
  if (!GatherSets<M>(ctx, 1, ctx.argc() - 1, &sets)) return;
  ReplySet<M>(ctx, set_ops::Diff(ctx, sets).get());
}

// SSCAN / LSSCAN key cursor [MATCH pattern] [COUNT n]; the key is looked up before
// the options are read, as Redis's sscanCommand, so a missing key answers an empty
// scan and another type WRONGTYPE whatever the options say. `kMatch`: whether the
// family accepts MATCH (LSSCAN takes COUNT only).
template <class M, bool kMatch>
void Scan(CommandContext& ctx) {
  uint64_t cursor;
  if (!ParseScanCursor(ctx, 2, &cursor)) return;
  const SetValue* set;
  if (!ctx.Found(set_ops::Find(ctx, ctx.arg(1), M::kAccept), &set)) return;
  if (set == nullptr) return ReplyEmptyScan(ctx);
  ScanOptions opt;
  if (!ParseScanOptions(ctx, 3, &opt, kMatch)) return;
  std::vector<SetMember> batch;
  const uint64_t next = set->Scan(cursor, static_cast<size_t>(opt.count), &batch);
  char buf[24];
  if (opt.has_pattern) {
    std::erase_if(batch, [&](const SetMember& m) { return !GlobMatch(opt.pattern, m.Text(buf), false); });
  }
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), next);
  (void)ec;  // 20 digits always fit
  ctx.reply.ArrayHeader(2);
  ctx.reply.Bulk(std::string_view(buf, static_cast<size_t>(end - buf)));
  ctx.reply.ArrayHeader(batch.size());
  for (const SetMember& m : batch) M::Reply(ctx.reply, m);
}

}  // namespace set_family
}  // namespace feedkv::server
