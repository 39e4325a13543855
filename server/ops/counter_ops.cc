#include "server/ops/counter_ops.h"

#include <fmt/format.h>

#include <memory>
#include <string>
#include <utility>

#include "protocol/error_text.h"
#include "server/cold_tier.h"
#include "server/server.h"

namespace feedkv::server::counter_ops {

namespace err = protocol::err;

namespace {

CounterOptions OptionsFromConfig(const ServerConfig& c) {
  CounterOptions o;
  o.table_bytes = static_cast<uint64_t>(c.counter_table_size);
  o.max_fill = c.counter_table_max_fill;
  o.max_probes = static_cast<uint32_t>(c.counter_max_probes);
  return o;
}

// A counter's keyspace event (class d, docs/pubsub.md): the key is
// "<space>:<id>", formatted only when someone asked for the class.
void NotifyCounter(CommandContext& ctx, std::string_view event, std::string_view name, int64_t id) {
  if (!(ctx.server.cfg().notify_keyspace_events & kNotifyModule)) return;
  ctx.Notify(kNotifyModule, event, fmt::format("{}:{}", name, id));
}

}  // namespace

StatusOr<CounterSpace*> FindSpace(CommandContext& ctx, std::string_view name) {
  auto& spaces = ctx.server.counter_spaces();
  auto it = spaces.find(name);
  if (it == spaces.end()) return Status::NotFound(err::Message(fmt::format(err::kNoSuchCounterSpace, name)));
  CounterOptions want = OptionsFromConfig(ctx.server.cfg());
  if (!(it->second->options() == want) &&
      CounterSpace::ValidateOptions(want, it->second->schema().slot_bytes()).ok()) {
    it->second->SetOptions(want);
  }
  return it->second.get();
}

Status Create(CommandContext& ctx, std::string_view name, CounterSchema schema) {
  auto& spaces = ctx.server.counter_spaces();
  auto it = spaces.find(name);
  if (it != spaces.end()) {
    if (it->second->schema() == schema) return Status::OK();  // idempotent for the same schema
    return Status::InvalidArgument(
        err::Message(fmt::format(err::kCounterSchemaMismatch, name, it->second->schema().ToString())));
  }
  CounterOptions options = OptionsFromConfig(ctx.server.cfg());
  Status s = CounterSpace::ValidateOptions(options, schema.slot_bytes());
  if (!s.ok()) return Status::InvalidArgument(std::string(err::Message(err::kInvalidCounterSettingsPrefix)) + s.message());
  spaces.emplace(std::string(name), std::make_unique<CounterSpace>(std::move(schema), options));
  ctx.Dirty();
  ctx.Notify(kNotifyModule, "counter.create", name);
  return Status::OK();
}

bool Drop(CommandContext& ctx, std::string_view name) {
  auto& spaces = ctx.server.counter_spaces();
  auto it = spaces.find(name);
  if (it == spaces.end()) return false;
  if (ctx.server.cold_tier() != nullptr) ctx.server.cold_tier()->DropRows(it->first, *it->second);
  spaces.erase(it);
  ctx.Dirty();
  ctx.Notify(kNotifyModule, "counter.drop", name);
  return true;
}

StatusOr<uint64_t> IncrBy(CommandContext& ctx, std::string_view name, CounterSpace& space, int64_t id,
                          size_t field, int64_t delta) {
  uint64_t value;
  Status s = space.IncrBy(id, field, delta, &value);
  if (!s.ok()) return s;
  ctx.Dirty();
  NotifyCounter(ctx, "counter.incrby", name, id);
  return value;
}

Status Set(CommandContext& ctx, std::string_view name, CounterSpace& space, int64_t id, size_t field,
           uint64_t value) {
  Status s = space.Set(id, field, value);
  if (!s.ok()) return s;
  ctx.Dirty();
  NotifyCounter(ctx, "counter.set", name, id);
  return Status::OK();
}

bool Del(CommandContext& ctx, std::string_view name, CounterSpace& space, int64_t id) {
  if (!space.Del(id)) return false;
  ctx.Dirty();
  NotifyCounter(ctx, "counter.del", name, id);
  return true;
}

}  // namespace feedkv::server::counter_ops
