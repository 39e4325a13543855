#include "storage/dataset.h"

#include "storage/rdb_digest.h"
#include "storage/rdb_reader.h"
#include "storage/rdb_writer.h"

namespace feedkv {

Dataset::Dataset(int num_dbs) {
  for (int i = 0; i < num_dbs; i++) dbs_.push_back(std::make_unique<Database>(i));
}

void Dataset::SetAccessClock(AccessClock* clock) {
  for (auto& db : dbs_) db->set_access_clock(clock);
}

void Dataset::SetExpireHook(const Database::ExpireHook& hook) {
  for (auto& db : dbs_) db->set_expire_hook(hook);
}

void Dataset::SetNewKeyHook(const Database::ExpireHook& hook) {
  for (auto& db : dbs_) db->set_new_key_hook(hook);
}

void Dataset::Clear() {
  for (auto& db : dbs_) db->Clear();
  counter_spaces_.clear();
}

size_t Dataset::CounterMemory() const {
  size_t total = 0;
  for (const auto& [name, space] : counter_spaces_) total += space->MemoryUsage();
  return total;
}

size_t Dataset::MemoryUsage() const {
  size_t total = CounterMemory();
  for (const auto& db : dbs_) total += db->MemoryUsage();
  return total;
}

uint64_t Dataset::KeyCount() const {
  uint64_t n = 0;
  for (const auto& db : dbs_) n += db->size();
  return n;
}

std::unique_ptr<rdb::DatasetLoader> Dataset::NewLoader(int64_t now_ms) {
  std::vector<Database*> dbs;
  for (auto& db : dbs_) dbs.push_back(db.get());
  return std::make_unique<rdb::DatasetLoader>(std::move(dbs), now_ms);
}

void Dataset::Adopt(rdb::DatasetLoader& loader) {
  counter_spaces_.clear();
  for (auto& [name, space] : loader.counter_spaces()) counter_spaces_[name] = std::move(space);
}

void Dataset::AddTo(rdb::SnapshotSource* src) const {
  for (const auto& db : dbs_) src->dbs.push_back(db.get());
  for (const auto& [n, sp] : counter_spaces_) src->counter_spaces.emplace_back(n, sp.get());
}

void Dataset::AddTo(rdb::DigestBuilder* digest) const {
  for (const auto& db : dbs_) digest->AddDatabase(db->index(), *db);
  for (const auto& [n, sp] : counter_spaces_) digest->AddCounterSpace(n, *sp);
}

}  // namespace feedkv
