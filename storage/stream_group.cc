#include "storage/stream_group.h"

namespace feedkv {

StreamNack* StreamGroup::FindPending(StreamId id) { return pel_.Find(id); }

StreamConsumer* StreamGroup::FindConsumer(std::string_view name) const {
  auto it = consumers_.find(name);
  return it == consumers_.end() ? nullptr : it->second.get();
}

StreamConsumer* StreamGroup::CreateConsumer(std::string_view name, int64_t now_ms) {
  if (consumers_.contains(name)) return nullptr;
  auto c = std::make_unique<StreamConsumer>();
  c->name = std::string(name);
  c->seen_time_ms = now_ms;
  StreamConsumer* raw = c.get();
  consumers_.emplace(c->name, std::move(c));
  return raw;
}

int64_t StreamGroup::DeleteConsumer(std::string_view name) {
  auto it = consumers_.find(name);
  if (it == consumers_.end()) return -1;
  const auto pending = static_cast<int64_t>(it->second->pending.size());
  for (const auto& row : it->second->pending) pel_.Erase(row.key);
  consumers_.erase(it);
  return pending;
}

void StreamGroup::SetPending(StreamId id, StreamConsumer* c, int64_t delivery_time_ms, uint64_t delivery_count) {
  StreamNack& nack = *pel_.Insert(id, StreamNack{}).first;
  if (nack.consumer != nullptr && nack.consumer != c) nack.consumer->pending.Erase(id);
  nack.consumer = c;
  nack.delivery_time_ms = delivery_time_ms;
  nack.delivery_count = delivery_count;
  c->pending.Insert(id, NoValue{});
}

bool StreamGroup::Ack(StreamId id) {
  StreamNack* nack = pel_.Find(id);
  if (nack == nullptr) return false;
  nack->consumer->pending.Erase(id);
  pel_.Erase(id);
  return true;
}

size_t StreamGroup::MemoryUsage() const {
  // A consumers_ tree node: ~48 bytes of links, colour and malloc header.
  size_t bytes = sizeof(*this) + name_.capacity() + pel_.MemoryUsage();
  for (const auto& [name, c] : consumers_) {
    bytes += 48 + sizeof(std::string) + sizeof(StreamConsumer) + 2 * name.capacity() + c->pending.MemoryUsage();
  }
  return bytes;
}

}  // namespace feedkv
