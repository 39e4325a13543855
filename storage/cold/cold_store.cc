#include "storage/cold/cold_store.h"

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <mutex>
#include <numeric>

#include <fmt/format.h>

namespace feedkv {

namespace {

constexpr std::string_view kSpacePrefix = "cs:";
constexpr uint64_t kSignBit = uint64_t{1} << 63;

Status FromRocks(const rocksdb::Status& s, std::string_view what) {
  if (s.ok()) return Status::OK();
  const std::string msg = fmt::format("{}: {}", what, s.ToString());
  if (s.IsCorruption()) return Status::Corruption(msg);
  if (s.IsNoSpace()) return Status::NoSpace(msg);
  if (s.IsInvalidArgument()) return Status::InvalidArgument(msg);
  if (s.IsNotFound()) return Status::NotFound(msg);
  if (s.IsBusy() || s.IsTryAgain()) return Status::Busy(msg);
  return Status::IOError(msg);
}

// Options of every space. Point lookups dominate and most looked-up ids are
// present (a cold id is read because a client asked for it), so: a bloom
// filter on every level (no optimize_filters_for_hits: absent ids are
// common enough right after a spill), index and filter blocks in the shared
// cache and pinned for L0, a hash index inside data blocks to skip the
// binary search, small 4 KiB blocks (a row is a few bytes; a lookup reads one
// block), dynamic level sizes so space amplification stays near 1.1x, and
// LZ4 on the upper levels with ZSTD at the bottom where ~90% of bytes live.
rocksdb::ColumnFamilyOptions SpaceOptions(const std::shared_ptr<rocksdb::Cache>& cache, int bloom_bits) {
  rocksdb::BlockBasedTableOptions t;
  t.block_cache = cache;
  t.block_size = 4096;
  t.cache_index_and_filter_blocks = true;
  t.pin_l0_filter_and_index_blocks_in_cache = true;
  // Index and filter in 4 KiB partitions with the top level pinned: a lookup
  // reads one small partition, not a whole file's filter (1.25 MB per million
  // ids), which the data blocks would otherwise keep pushing out of the cache
  // (docs/benchmarks.md, "The cold counter tier"). They go in the cache's
  // high-priority pool.
  t.index_type = rocksdb::BlockBasedTableOptions::kTwoLevelIndexSearch;
  t.partition_filters = true;
  t.metadata_block_size = 4096;
  t.pin_top_level_index_and_filter = true;
  t.cache_index_and_filter_blocks_with_high_priority = true;
  t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(bloom_bits));
  t.whole_key_filtering = true;
  t.optimize_filters_for_memory = true;
  t.data_block_index_type = rocksdb::BlockBasedTableOptions::kDataBlockBinaryAndHash;
  t.format_version = 5;
  rocksdb::ColumnFamilyOptions cf;
  cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
  cf.level_compaction_dynamic_level_bytes = true;
  cf.compression = rocksdb::kLZ4Compression;
  cf.bottommost_compression = rocksdb::kZSTD;
  cf.write_buffer_size = 32 << 20;
  cf.max_write_buffer_number = 3;
  cf.target_file_size_base = 64 << 20;
  cf.max_bytes_for_level_base = 256 << 20;
  return cf;
}

rocksdb::DBOptions StoreOptions(const ColdStoreOptions& o) {
  rocksdb::DBOptions db;
  db.create_if_missing = true;
  db.create_missing_column_families = true;
  db.max_background_jobs = std::max(2, o.background_jobs);
  db.bytes_per_sync = 1 << 20;
  db.keep_log_file_num = 3;
  db.max_log_file_size = 16 << 20;
  db.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  // Write-backs skip the WAL: closing must flush them (the default, said aloud).
  db.avoid_flush_during_shutdown = false;
  return db;
}

std::string CfName(const std::string& space) { return std::string(kSpacePrefix) + space; }

}  // namespace

std::string ColdStore::EncodeId(int64_t id) {
  const uint64_t u = static_cast<uint64_t>(id) ^ kSignBit;
  std::string key(8, '\0');
  for (int i = 0; i < 8; i++) key[i] = static_cast<char>(u >> (56 - 8 * i));
  return key;
}

int64_t ColdStore::DecodeId(std::string_view key) {
  uint64_t u = 0;
  for (size_t i = 0; i < 8 && i < key.size(); i++) u = (u << 8) | static_cast<unsigned char>(key[i]);
  return static_cast<int64_t>(u ^ kSignBit);
}

ColdStore::ColdStore(std::string dir, std::shared_ptr<rocksdb::Cache> cache, int bloom_bits)
    : dir_(std::move(dir)), cache_(std::move(cache)), bloom_bits_(bloom_bits) {}

Status ColdStore::Open(const ColdStoreOptions& options, std::unique_ptr<ColdStore>* out) {
  std::error_code ec;
  std::filesystem::create_directories(options.dir, ec);
  if (ec) return Status::IOError(fmt::format("cold tier directory {}: {}", options.dir, ec.message()));
  // Flushes and compactions yield the CPU to the server's command thread, as the
  // cold tier's own threads do (docs/counters.md, "Hot ids first").
  for (auto pool : {rocksdb::Env::Priority::LOW, rocksdb::Env::Priority::HIGH}) {
    rocksdb::Env::Default()->LowerThreadPoolCPUPriority(pool, rocksdb::CpuPriority::kLow).PermitUncheckedError();
  }
  // Half the cache is kept for index and filter partitions.
  auto cache = rocksdb::NewLRUCache(options.block_cache_bytes, -1, false, 0.5);
  std::unique_ptr<ColdStore> store(new ColdStore(options.dir, cache, options.bloom_bits_per_key));
  const rocksdb::ColumnFamilyOptions cf_opts = SpaceOptions(cache, options.bloom_bits_per_key);
  const rocksdb::DBOptions db_opts = StoreOptions(options);

  std::vector<std::string> names;
  rocksdb::Status ls = rocksdb::DB::ListColumnFamilies(db_opts, options.dir, &names);
  if (!ls.ok() || names.empty()) names = {rocksdb::kDefaultColumnFamilyName};  // a new store
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const auto& n : names) cfs.emplace_back(n, cf_opts);
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(db_opts, options.dir, cfs, &handles, &db);
  if (!s.ok()) {
    Status st = FromRocks(s, fmt::format("opening the cold tier in {}", options.dir));
    if (st.IsCorruption()) {
      return Status::Corruption(fmt::format(
          "the cold tier in {} is damaged ({}); move it aside and resync from a replica",
          options.dir, s.ToString()));
    }
    return st;
  }
  store->db_.reset(db);
  for (size_t i = 0; i < handles.size(); i++) {
    const std::string& n = names[i];
    if (n == rocksdb::kDefaultColumnFamilyName) {
      store->default_cf_ = handles[i];
    } else if (n.starts_with(kSpacePrefix)) {
      store->spaces_[n.substr(kSpacePrefix.size())] = handles[i];
    } else {
      store->db_->DestroyColumnFamilyHandle(handles[i]).PermitUncheckedError();
    }
  }
  // Leftovers of an ingest that did not finish.
  std::filesystem::remove_all(std::filesystem::path(options.dir) / "ingest", ec);
  *out = std::move(store);
  return Status::OK();
}

ColdStore::~ColdStore() {
  if (!db_) return;
  for (auto& [name, h] : spaces_) db_->DestroyColumnFamilyHandle(h).PermitUncheckedError();
  spaces_.clear();
  if (default_cf_ != nullptr) db_->DestroyColumnFamilyHandle(default_cf_).PermitUncheckedError();
  db_->Close().PermitUncheckedError();
}

rocksdb::ColumnFamilyHandle* ColdStore::Handle(const std::string& space) const {
  auto it = spaces_.find(space);
  return it == spaces_.end() ? nullptr : it->second;
}

Status ColdStore::EnsureSpace(const std::string& space) {
  std::unique_lock lock(mu_);
  if (Handle(space) != nullptr) return Status::OK();
  rocksdb::ColumnFamilyHandle* h = nullptr;
  rocksdb::Status s = db_->CreateColumnFamily(SpaceOptions(cache_, bloom_bits_), CfName(space), &h);
  if (!s.ok()) return FromRocks(s, fmt::format("creating cold space {}", space));
  spaces_[space] = h;
  return Status::OK();
}

bool ColdStore::HasSpace(const std::string& space) const {
  std::shared_lock lock(mu_);
  return Handle(space) != nullptr;
}

std::vector<std::string> ColdStore::Spaces() const {
  std::shared_lock lock(mu_);
  std::vector<std::string> out;
  for (const auto& [name, h] : spaces_) out.push_back(name);
  return out;
}

Status ColdStore::DropSpace(const std::string& space) {
  std::unique_lock lock(mu_);
  rocksdb::ColumnFamilyHandle* h = Handle(space);
  if (h == nullptr) return Status::OK();
  rocksdb::Status s = db_->DropColumnFamily(h);
  if (!s.ok()) return FromRocks(s, fmt::format("dropping cold space {}", space));
  db_->DestroyColumnFamilyHandle(h).PermitUncheckedError();
  spaces_.erase(space);
  // The dropped family's files go once nothing reads them, but RocksDB looks
  // for such files only when a flush or compaction ends: re-enabling file
  // deletions scans for them now (files a running job still reads go when it ends).
  if (db_->DisableFileDeletions().ok()) db_->EnableFileDeletions(/*force=*/false).PermitUncheckedError();
  return Status::OK();
}

Status ColdStore::IngestSorted(const std::string& space, const RowSource& rows) {
  std::string path;
  rocksdb::ColumnFamilyHandle* h = nullptr;
  {
    std::unique_lock lock(mu_);
    h = Handle(space);
    if (h == nullptr) return Status::NotFound(fmt::format("no cold space {}", space));
    path = fmt::format("{}/ingest/{}-{}.sst", dir_, space, next_ingest_++);
  }
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(dir_) / "ingest", ec);
  if (ec) return Status::IOError(fmt::format("{}/ingest: {}", dir_, ec.message()));
  auto cleanup = [&path] {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  };
  rocksdb::Options opts(rocksdb::DBOptions(), SpaceOptions(cache_, bloom_bits_));
  rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), opts, h);
  rocksdb::Status s = writer.Open(path);
  if (!s.ok()) return FromRocks(s, fmt::format("writing {}", path));
  int64_t id = 0;
  std::string_view value;
  uint64_t n = 0;
  bool have_prev = false;
  int64_t prev = 0;
  while (rows(&id, &value)) {
    if (have_prev && id <= prev) {
      cleanup();
      return Status::InvalidArgument(
          fmt::format("cold ingest rows out of order: id {} after {}", id, prev));
    }
    s = writer.Put(EncodeId(id), rocksdb::Slice(value.data(), value.size()));
    if (!s.ok()) {
      cleanup();
      return FromRocks(s, fmt::format("writing {}", path));
    }
    have_prev = true;
    prev = id;
    n++;
  }
  if (n == 0) {
    cleanup();
    return Status::OK();
  }
  s = writer.Finish();
  if (!s.ok()) {
    cleanup();
    return FromRocks(s, fmt::format("finishing {}", path));
  }
  rocksdb::IngestExternalFileOptions ifo;
  ifo.move_files = true;
  ifo.failed_move_fall_back_to_copy = true;
  std::shared_lock lock(mu_);  // the handle must outlive the ingest
  if (Handle(space) != h) {
    cleanup();
    return Status::NotFound(fmt::format("cold space {} was dropped", space));
  }
  s = db_->IngestExternalFile(h, {path}, ifo);
  if (!s.ok()) {
    cleanup();
    return FromRocks(s, fmt::format("ingesting {}", path));
  }
  return Status::OK();
}

Status ColdStore::Write(const std::string& space, std::span<const ColdMutation> mutations, bool wal) {
  std::shared_lock lock(mu_);
  rocksdb::ColumnFamilyHandle* h = Handle(space);
  if (h == nullptr) return Status::NotFound(fmt::format("no cold space {}", space));
  rocksdb::WriteBatch batch;
  for (const ColdMutation& m : mutations) {
    const std::string key = EncodeId(m.id);
    rocksdb::Status s = m.value ? batch.Put(h, key, *m.value) : batch.Delete(h, key);
    if (!s.ok()) return FromRocks(s, "building a cold write batch");
  }
  rocksdb::WriteOptions wo;
  wo.disableWAL = !wal;
  return FromRocks(db_->Write(wo, &batch), fmt::format("writing cold space {}", space));
}

Status ColdStore::DeleteRange(const std::string& space, int64_t first_id, int64_t last_id) {
  std::shared_lock lock(mu_);
  rocksdb::ColumnFamilyHandle* h = Handle(space);
  if (h == nullptr) return Status::NotFound(fmt::format("no cold space {}", space));
  rocksdb::WriteBatch batch;
  const std::string begin = EncodeId(first_id);
  rocksdb::Status s;
  if (last_id == std::numeric_limits<int64_t>::max()) {
    // The end key is exclusive and the last id has no successor: one more key.
    s = batch.DeleteRange(h, begin, std::string(8, '\xff') + '\x00');
  } else {
    s = batch.DeleteRange(h, begin, EncodeId(last_id + 1));
  }
  if (!s.ok()) return FromRocks(s, "building a cold range delete");
  return FromRocks(db_->Write(rocksdb::WriteOptions(), &batch),
                   fmt::format("deleting a range of cold space {}", space));
}

Status ColdStore::MultiGet(const std::string& space, std::span<const int64_t> ids,
                           std::vector<std::optional<std::string>>* values) const {
  values->assign(ids.size(), std::nullopt);
  if (ids.empty()) return Status::OK();
  std::shared_lock lock(mu_);
  rocksdb::ColumnFamilyHandle* h = Handle(space);
  if (h == nullptr) return Status::NotFound(fmt::format("no cold space {}", space));
  // Sorted input lets RocksDB walk each file once for the whole batch.
  std::vector<size_t> order(ids.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ids[a] < ids[b]; });
  std::vector<std::string> keys(ids.size());
  std::vector<rocksdb::Slice> slices(ids.size());
  for (size_t i = 0; i < order.size(); i++) {
    keys[i] = EncodeId(ids[order[i]]);
    slices[i] = keys[i];
  }
  std::vector<rocksdb::PinnableSlice> found(ids.size());
  std::vector<rocksdb::Status> st(ids.size());
  db_->MultiGet(rocksdb::ReadOptions(), h, ids.size(), slices.data(), found.data(), st.data(),
                /*sorted_input=*/true);
  for (size_t i = 0; i < order.size(); i++) {
    if (st[i].IsNotFound()) continue;
    if (!st[i].ok()) {
      values->assign(ids.size(), std::nullopt);
      return FromRocks(st[i], fmt::format("reading cold space {}", space));
    }
    (*values)[order[i]] = found[i].ToString();
  }
  return Status::OK();
}

Status ColdStore::Get(const std::string& space, int64_t id, std::optional<std::string>* value) const {
  std::vector<std::optional<std::string>> v;
  Status s = MultiGet(space, std::span<const int64_t>(&id, 1), &v);
  *value = s.ok() ? std::move(v[0]) : std::nullopt;
  return s;
}

Status ColdStore::ForEach(const std::string& space,
                          const std::function<bool(int64_t id, std::string_view value)>& fn) const {
  std::shared_lock lock(mu_);
  rocksdb::ColumnFamilyHandle* h = Handle(space);
  if (h == nullptr) return Status::NotFound(fmt::format("no cold space {}", space));
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;  // a scan must not push the hot lookups' blocks out
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, h));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const rocksdb::Slice k = it->key();
    const rocksdb::Slice v = it->value();
    if (!fn(DecodeId(std::string_view(k.data(), k.size())), std::string_view(v.data(), v.size()))) {
      break;
    }
  }
  return FromRocks(it->status(), fmt::format("scanning cold space {}", space));
}

Status ColdStore::Flush() {
  std::shared_lock lock(mu_);
  std::vector<rocksdb::ColumnFamilyHandle*> hs;
  for (const auto& [name, h] : spaces_) hs.push_back(h);
  if (hs.empty()) return Status::OK();
  return FromRocks(db_->Flush(rocksdb::FlushOptions(), hs), "flushing the cold tier");
}

Status ColdStore::Checkpoint(const std::string& dir) {
  rocksdb::Checkpoint* raw = nullptr;
  rocksdb::Status s = rocksdb::Checkpoint::Create(db_.get(), &raw);
  if (!s.ok()) return FromRocks(s, "cold checkpoint");
  std::unique_ptr<rocksdb::Checkpoint> ckpt(raw);
  // log_size_for_flush 0: flush first, since write-backs may have skipped the WAL.
  std::shared_lock lock(mu_);
  return FromRocks(ckpt->CreateCheckpoint(dir, /*log_size_for_flush=*/0),
                   fmt::format("cold checkpoint into {}", dir));
}

Status ColdStore::SpaceStats(const std::string& space, ColdSpaceStats* out) const {
  std::shared_lock lock(mu_);
  rocksdb::ColumnFamilyHandle* h = Handle(space);
  if (h == nullptr) return Status::NotFound(fmt::format("no cold space {}", space));
  *out = ColdSpaceStats{};
  db_->GetIntProperty(h, rocksdb::DB::Properties::kEstimateNumKeys, &out->estimated_keys);
  db_->GetIntProperty(h, rocksdb::DB::Properties::kTotalSstFilesSize, &out->sst_bytes);
  return Status::OK();
}

uint64_t ColdStore::BlockCacheUsage() const { return cache_->GetUsage(); }

uint64_t ColdStore::PendingCompactionBytes() const {
  uint64_t v = 0;
  db_->GetAggregatedIntProperty(rocksdb::DB::Properties::kEstimatePendingCompactionBytes, &v);
  return v;
}

}  // namespace feedkv
