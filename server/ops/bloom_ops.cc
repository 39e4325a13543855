#include "server/ops/bloom_ops.h"

#include <memory>
#include <string>

#include <fmt/format.h>

#include "protocol/error_text.h"
#include "server/commands/lookup.h"
#include "server/server.h"
#include "storage/database.h"

namespace feedkv::server::bloom_ops {

namespace {

namespace err = protocol::err;

Status NotFound() { return Status::NotFound(err::Message(err::kBfNotFound)); }

uint64_t MaxBytes(const CommandContext& ctx) {
  // The log replays what was accepted when it was written, whatever the limit is now.
  return ctx.from_log ? UINT64_MAX : static_cast<uint64_t>(ctx.server.cfg().bf_max_filter_bytes);
}

std::string DoubleText(double d) { return fmt::format("{}", d); }  // shortest round-trip form

// The explicit expansion words of a chain's parameters, for the log.
void AppendExpansion(const BloomChain::Params& p, std::vector<std::string>* cmd) {
  if (p.nonscaling && p.growth != 0) {
    cmd->push_back("NONSCALING");
  } else {
    cmd->push_back("EXPANSION");
    cmd->push_back(std::to_string(p.growth));
  }
}

// The explicit BF.RESERVE that recreates a chain made with `p`.
std::vector<std::string> ReserveRecord(std::string_view key, const BloomChain::Params& p) {
  std::vector<std::string> cmd = {"BF.RESERVE", std::string(key), DoubleText(p.error), std::to_string(p.capacity)};
  AppendExpansion(p, &cmd);
  return cmd;
}

// Creates the filter at `key` (missing).
StatusOr<BloomChain*> CreateAt(CommandContext& ctx, std::string_view key, const BloomChain::Params& p,
                               Entry** e) {
  std::unique_ptr<BloomChain> chain;
  if (Status s = BloomChain::Create(p, MaxBytes(ctx), &chain); !s.ok()) return s;
  BloomChain* bf = chain.get();
  *e = ctx.db().SetObject(key, std::move(chain), kNoExpire, false);
  ctx.Dirty();
  ctx.Notify(kNotifyModule, "bf.reserve", key);
  return bf;
}

}  // namespace

StatusOr<const BloomChain*> Find(CommandContext& ctx, std::string_view key) {
  Entry* e;
  BloomChain* bf;
  if (Status st = FindTyped(ctx, key, ValueType::kBloom, true, &e, &bf); !st.ok()) return st;
  return static_cast<const BloomChain*>(bf);
}

StatusOr<const BloomChain*> FindExisting(CommandContext& ctx, std::string_view key) {
  StatusOr<const BloomChain*> bf = Find(ctx, key);
  if (bf.ok() && *bf == nullptr) return NotFound();
  return bf;
}

const BloomChain* FindOrNone(CommandContext& ctx, std::string_view key) {
  const Entry* e = ctx.LookupRead(ctx.db(), key, ctx.now_ms());
  return e != nullptr && e->type == ValueType::kBloom ? static_cast<const BloomChain*>(Database::GetObject(e))
                                                      : nullptr;
}

Status Reserve(CommandContext& ctx, std::string_view key, const BloomChain::Params& p) {
  Entry* e;
  BloomChain* bf;
  if (Status st = FindTyped(ctx, key, ValueType::kBloom, false, &e, &bf); !st.ok()) return st;
  if (bf != nullptr) return Status::InvalidArgument(err::Message(err::kBfItemExists));
  StatusOr<BloomChain*> created = CreateAt(ctx, key, p, &e);
  if (!created.ok()) return created.status();
  ctx.PropagateAs(ReserveRecord(key, p));
  return Status::OK();
}

StatusOr<AddResults> Add(CommandContext& ctx, std::string_view key, const BloomChain::Params* create,
                         std::span<const std::string_view> items) {
  Entry* e;
  BloomChain* bf;
  if (Status st = FindTyped(ctx, key, ValueType::kBloom, false, &e, &bf); !st.ok()) return st;
  const bool created = bf == nullptr;
  if (created) {
    if (create == nullptr) return NotFound();
    StatusOr<BloomChain*> made = CreateAt(ctx, key, *create, &e);
    if (!made.ok()) return made.status();
    bf = *made;
  }
  AddResults results;
  results.answers.reserve(items.size());
  int64_t added = 0;
  // The items answered 1 or 0: replaying just these leaves the same filter (a
  // refused item changed nothing, and the log is replayed without the size cap).
  std::vector<std::string_view> answered;
  for (std::string_view item : items) {
    const BloomChain::AddResult r = bf->Add(item, MaxBytes(ctx), &results.bytes_needed);
    if (r == BloomChain::AddResult::kAdded || r == BloomChain::AddResult::kPresent) answered.push_back(item);
    if (r == BloomChain::AddResult::kAdded) added++;
    results.answers.push_back(r == BloomChain::AddResult::kAdded     ? AddResults::kYes
                              : r == BloomChain::AddResult::kPresent ? AddResults::kNo
                              : r == BloomChain::AddResult::kTooBig  ? AddResults::kTooBig
                              : r == BloomChain::AddResult::kFailed  ? AddResults::kFailed
                                                                     : AddResults::kFull);
    if (r == BloomChain::AddResult::kFull) break;
  }
  if (added > 0) {
    ctx.db().UpdateObjectMemory(e);
    ctx.Dirty(added);
    ctx.Notify(kNotifyModule, "bf.add", key);
  }
  if (created && added == 0) {
    ctx.PropagateAs(ReserveRecord(key, *create));
  } else if (added > 0) {
    std::vector<std::string> log;
    if (created) {
      log = {"BF.INSERT", std::string(key), "CAPACITY", std::to_string(create->capacity), "ERROR",
             DoubleText(create->error)};
      AppendExpansion(*create, &log);
      log.push_back("ITEMS");
    } else {
      log = {"BF.MADD", std::string(key)};
    }
    for (std::string_view item : answered) log.emplace_back(item);
    ctx.PropagateAs(std::move(log));
  }
  return results;
}

Status LoadChunk(CommandContext& ctx, std::string_view key, int64_t iter, std::string_view data) {
  Entry* e;
  BloomChain* bf;
  if (Status st = FindTyped(ctx, key, ValueType::kBloom, false, &e, &bf); !st.ok()) return st;
  if (bf == nullptr) {
    if (iter != 1) return NotFound();
    std::unique_ptr<BloomChain> chain;
    if (Status s = BloomChain::FromHeader(data, MaxBytes(ctx), &chain); !s.ok()) return s;
    ctx.db().SetObject(key, std::move(chain), kNoExpire, false);
  } else {
    if (Status s = bf->LoadChunk(iter, data); !s.ok()) return s;
  }
  ctx.Dirty();
  ctx.Notify(kNotifyModule, "bf.loadchunk", key);
  return Status::OK();
}

}  // namespace feedkv::server::bloom_ops
