#include "server/log_applier.h"

#include <fmt/format.h>

#include "server/server.h"

namespace feedkv::server {

LogApplier::LogApplier(Server& server, Options options)
    : server_(server),
      options_(std::move(options)),
      decoder_(server.num_dbs(),
               [this](int db, std::span<const JournalDecoder::Argv> batch) { return ApplyBatch(db, batch); }) {
  client_.authenticated = true;
  client_.addr = options_.source;
}

Status LogApplier::ApplyGroup(std::span<const aof::Record> records, std::string_view file,
                              uint64_t group_begin) {
  for (const aof::Record& r : records) {
    where_ = fmt::format("{} offset {}", file, r.offset);
    Status s = decoder_.Feed(r.argv, where_);
    if (!s.ok()) return s;
  }
  return decoder_.EndGroup(fmt::format("{} offset {}", file, group_begin));
}

Status LogApplier::ApplyBatch(int db, std::span<const JournalDecoder::Argv> batch) {
  client_.db = db;
  const CommandTable& table = server_.table();
  for (const JournalDecoder::Argv& argv : batch) {
    // The log repeats a few names: skip most lookups.
    const CommandSpec* spec = last_spec_;
    if (spec == nullptr || argv[0] != last_name_) {
      bool unknown_sub = false;
      spec = table.Lookup(argv, &unknown_sub);
      last_name_.assign(argv[0]);
      last_spec_ = spec != nullptr && spec->parent == nullptr ? spec : nullptr;
    }
    const int argc = static_cast<int>(argv.size());
    if (spec == nullptr) {
      return Status::Corruption(fmt::format("unknown command '{}' at {}", argv[0], where_));
    }
    if ((spec->arity > 0 && argc != spec->arity) || (spec->arity < 0 && argc < -spec->arity)) {
      return Status::Corruption(fmt::format("wrong arity for '{}' at {}", argv[0], where_));
    }
    // The master's heartbeat (a replica's link sees it; a log may hold it).
    if (std::string_view(spec->name) == "ping") continue;
    if ((spec->flags & kMayReplicate) && !options_.deliver_messages) continue;
    if (!(spec->flags & (kWrite | kMayReplicate))) {
      return Status::Corruption(fmt::format("'{}' at {} is not a write command", argv[0], where_));
    }
    CallFlags flags = kCallFromLog;
    if (!options_.count_stats) flags |= kCallNoStats;
    client_.out.clear();
    server_.Call(client_, *spec, argv, flags);
    applied_++;
    if (client_.out.starts_with("-")) {
      if (options_.stop_on_error) {
        return Status::Corruption(fmt::format("{} command '{}' at {} failed: {}", options_.source,
                                           argv[0], where_, client_.out.substr(0, 200)));
      }
      if (failed_++ < 5) {
        server_.Log(3, fmt::format("{} command '{}' at {} failed: {}", options_.source, argv[0],
                                   where_, client_.out.substr(0, 200)));
      }
    }
  }
  client_.out.clear();
  return Status::OK();
}

}  // namespace feedkv::server
