#include "server/lazy_free.h"

#include "storage/database.h"

namespace feedkv::server {

void LazyFree::Free(std::unique_ptr<Object> value) {
  if (value == nullptr) return;
  if (value->MemoryUsage() < kThresholdBytes) return;  // freed here, as the pointer goes
  pending_.fetch_add(1, std::memory_order_relaxed);
  Object* raw = value.release();
  thread_.Submit([this, raw] {
    delete raw;
    pending_.fetch_sub(1, std::memory_order_relaxed);
    freed_.fetch_add(1, std::memory_order_relaxed);
  });
}

void LazyFree::FreeDatabase(std::unique_ptr<KeyTable> table, uint64_t keys) {
  if (keys == 0) return;
  pending_.fetch_add(keys, std::memory_order_relaxed);
  KeyTable* raw = table.release();
  thread_.Submit([this, raw, keys] {
    Database::FreeEntries(raw);
    delete raw;
    pending_.fetch_sub(keys, std::memory_order_relaxed);
    freed_.fetch_add(keys, std::memory_order_relaxed);
  });
}

}  // namespace feedkv::server
