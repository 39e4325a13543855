// Dataset: everything a feedkv server stores — its numbered databases (the
// Redis keyspaces SELECT picks) and its schema counter spaces, which are
// server-wide. Snapshots, digests, FLUSHALL, memory reports and loading all
// see the data through here, so the loop over "every database and every
// counter space" is written once.
//
// Thread-safety: none; owned by the command thread (a forked snapshot child
// reads its own copy-on-write image).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "storage/counter_space.h"
#include "storage/database.h"

namespace feedkv {

namespace rdb {
class DatasetLoader;
class DigestBuilder;
struct SnapshotSource;
}  // namespace rdb

class Dataset {
 public:
  using CounterSpaces = std::map<std::string, std::unique_ptr<CounterSpace>, std::less<>>;

  explicit Dataset(int num_dbs);
  Dataset(const Dataset&) = delete;
  Dataset& operator=(const Dataset&) = delete;

  int num_dbs() const { return static_cast<int>(dbs_.size()); }
  Database& db(int i) { return *dbs_[i]; }
  const Database& db(int i) const { return *dbs_[i]; }
  CounterSpaces& counter_spaces() { return counter_spaces_; }
  const CounterSpaces& counter_spaces() const { return counter_spaces_; }

  // Every database stamps its keys with `clock` and reports expiries to `hook`.
  void SetAccessClock(AccessClock* clock);
  void SetExpireHook(const Database::ExpireHook& hook);
  void SetNewKeyHook(const Database::ExpireHook& hook);

  // Empties every database and drops every counter space.
  void Clear();
  // Bytes used by the data (databases and counter spaces).
  size_t MemoryUsage() const;
  // Bytes used by the counter spaces alone.
  size_t CounterMemory() const;
  uint64_t KeyCount() const;

  // A loader that fills this dataset's databases (rdb_reader.h); Adopt then
  // takes the counter spaces it read.
  std::unique_ptr<rdb::DatasetLoader> NewLoader(int64_t now_ms);
  void Adopt(rdb::DatasetLoader& loader);
  // Adds every database and counter space to a snapshot or a digest.
  void AddTo(rdb::SnapshotSource* src) const;
  void AddTo(rdb::DigestBuilder* digest) const;

 private:
  std::vector<std::unique_ptr<Database>> dbs_;
  CounterSpaces counter_spaces_;
};

}  // namespace feedkv
