// ColdStore: the on-disk half of the cold counter tier (docs/counters.md, "Cold
// tables"), and the one place feedkv touches RocksDB.
//
// One RocksDB instance under `dir`, one column family per counter space
// ("cs:<space>"). A row is one counter key: the key is the id as 8 big-endian
// bytes with the sign bit flipped, so byte order is id order (INT64_MIN first);
// the value is the key's packed fields, opaque here. The workload is point
// lookups of ids that are mostly present, written in bulk (a spilled table
// arrives as one sorted SST file, ingested) and in small write-back batches, so
// the options favour reads: bloom filters on every level, a shared block cache
// holding index and filter blocks, hash-indexed data blocks, levels with dynamic
// sizes, LZ4 above and ZSTD at the bottom.
//
// Thread-safety: every method may be called from any thread. Reads (Get,
// MultiGet, ForEach, stats) run concurrently. Mutations (IngestSorted, Write,
// DropSpace, Checkpoint) are safe together too, but the tier issues them from
// one writer thread so that a Checkpoint cuts the state at one log position.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "storage/status.h"

namespace rocksdb {
class Cache;
class ColumnFamilyHandle;
class DB;
}  // namespace rocksdb

namespace feedkv {

struct ColdStoreOptions {
  std::string dir;                                   // created if missing
  uint64_t block_cache_bytes = uint64_t{512} << 20;  // cold-block-cache-size
  int bloom_bits_per_key = 10;                       // cold-bloom-bits-per-key
  int background_jobs = 2;                           // flushes + compactions
};

// One write-back: a row's new value, or its deletion (nullopt).
struct ColdMutation {
  int64_t id = 0;
  std::optional<std::string> value;
};

struct ColdSpaceStats {
  uint64_t estimated_keys = 0;  // rocksdb.estimate-num-keys
  uint64_t sst_bytes = 0;       // rocksdb.total-sst-files-size
};

class ColdStore {
 public:
  // Yields the next (id, value) of an ingest, in strictly ascending id order;
  // false when there are no more.
  using RowSource = std::function<bool(int64_t* id, std::string_view* value)>;

  // Opens (or creates) the store under options.dir with every column family it
  // holds. A damaged store is Corruption naming the directory.
  static Status Open(const ColdStoreOptions& options, std::unique_ptr<ColdStore>* out);
  ~ColdStore();
  ColdStore(const ColdStore&) = delete;
  ColdStore& operator=(const ColdStore&) = delete;

  // The 8-byte key of `id` (big-endian, sign bit flipped) and back.
  static std::string EncodeId(int64_t id);
  static int64_t DecodeId(std::string_view key);

  const std::string& dir() const { return dir_; }

  // Creates the space's column family if it is not there.
  Status EnsureSpace(const std::string& space);
  bool HasSpace(const std::string& space) const;
  std::vector<std::string> Spaces() const;
  // Drops the space and every row of it. OK if it does not exist.
  Status DropSpace(const std::string& space);

  // Writes the rows as one SST file (in dir/ingest/) and moves it into the
  // space. Rows out of order or repeated: InvalidArgument, nothing changes, no
  // file is left behind. Later rows of the same ids (Write) override these.
  Status IngestSorted(const std::string& space, const RowSource& rows);
  // Applies the mutations in order, atomically. With `wal` false the batch
  // skips RocksDB's log: it is durable only at the next flush or Checkpoint
  // (the feedkv log replays it otherwise).
  Status Write(const std::string& space, std::span<const ColdMutation> mutations, bool wal);
  // Deletes every row with an id in [first_id, last_id], through RocksDB's log (a
  // spill clears its range before ingesting, so no stale row of an earlier spill of
  // the same ids outlives it).
  Status DeleteRange(const std::string& space, int64_t first_id, int64_t last_id);

  // Looks the ids up (any order, repeats allowed) in one batch; (*values)[i]
  // is ids[i]'s value, nullopt when absent.
  Status MultiGet(const std::string& space, std::span<const int64_t> ids,
                  std::vector<std::optional<std::string>>* values) const;
  Status Get(const std::string& space, int64_t id, std::optional<std::string>* value) const;
  // Every row of the space in id order, until fn returns false.
  Status ForEach(const std::string& space,
                 const std::function<bool(int64_t id, std::string_view value)>& fn) const;

  // Flushes the memtables and hard-links a consistent copy of the whole store
  // into `dir`, which must not exist. It opens as a store of its own.
  Status Checkpoint(const std::string& dir);
  // Flushes every space's memtable to SST files.
  Status Flush();

  Status SpaceStats(const std::string& space, ColdSpaceStats* out) const;
  uint64_t BlockCacheUsage() const;
  uint64_t PendingCompactionBytes() const;

 private:
  ColdStore(std::string dir, std::shared_ptr<rocksdb::Cache> cache, int bloom_bits);
  // The handle of `space`, or nullptr (callers hold mu_).
  rocksdb::ColumnFamilyHandle* Handle(const std::string& space) const;

  const std::string dir_;
  std::shared_ptr<rocksdb::Cache> cache_;
  const int bloom_bits_;
  std::unique_ptr<rocksdb::DB> db_;
  rocksdb::ColumnFamilyHandle* default_cf_ = nullptr;
  mutable std::shared_mutex mu_;  // guards spaces_ (the handles, not the data)
  std::map<std::string, rocksdb::ColumnFamilyHandle*> spaces_;
  uint64_t next_ingest_ = 0;  // names of temporary SST files (under mu_)
};

}  // namespace feedkv
