#include "server/ops/stream_ops.h"

#include <memory>

#include "server/commands/lookup.h"
#include "server/config.h"
#include "server/server.h"

namespace feedkv::server::stream_ops {

StreamLimits Limits(const CommandContext& ctx) {
  const ServerConfig& c = ctx.server.cfg();
  return StreamLimits{static_cast<size_t>(c.stream_node_max_bytes), static_cast<size_t>(c.stream_node_max_entries)};
}

StatusOr<const StreamValue*> Find(CommandContext& ctx, std::string_view key) {
  Entry* e;
  StreamValue* s;
  if (Status st = FindTyped(ctx, key, ValueType::kStream, true, &e, &s); !st.ok()) return st;
  return static_cast<const StreamValue*>(s);
}

Status FindForWrite(CommandContext& ctx, std::string_view key, Entry** entry, StreamValue** stream) {
  return FindTyped(ctx, key, ValueType::kStream, false, entry, stream);
}

StreamValue* Create(CommandContext& ctx, std::string_view key, Entry** entry) {
  *entry = ctx.db().SetObject(key, std::make_unique<StreamValue>(), kNoExpire, false);
  return static_cast<StreamValue*>(Database::GetObject(*entry));
}

StreamConsumer* CreateConsumer(CommandContext& ctx, std::string_view key, StreamGroup* g, std::string_view name) {
  StreamConsumer* c = g->CreateConsumer(name, NowMs());
  if (c == nullptr) return nullptr;
  ctx.Dirty();
  ctx.Notify(kNotifyStream, "xgroup-createconsumer", key);
  return c;
}

StreamConsumer* FindOrCreateConsumer(CommandContext& ctx, std::string_view key, StreamGroup* g,
                                     std::string_view name) {
  if (StreamConsumer* c = g->FindConsumer(name)) {
    c->seen_time_ms = NowMs();
    return c;
  }
  return CreateConsumer(ctx, key, g, name);
}

std::vector<std::string> ClaimRecord(std::string_view key, std::string_view group, StreamId id,
                                     const StreamNack& nack, StreamId group_last_id) {
  return {"XCLAIM", std::string(key), std::string(group), nack.consumer->name, "0", id.ToString(), "TIME",
          std::to_string(nack.delivery_time_ms), "RETRYCOUNT", std::to_string(nack.delivery_count), "FORCE",
          "JUSTID", "LASTID", group_last_id.ToString()};
}

}  // namespace feedkv::server::stream_ops
