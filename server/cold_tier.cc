#include "server/cold_tier.h"

#include <fmt/format.h>

#include <boost/asio/post.hpp>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/job_thread.h"
#include "server/server.h"
#include "storage/aof_reader.h"
#include "storage/cold/cold_store.h"
#include "storage/counter_cold_rows.h"
#include "storage/file_io.h"

namespace feedkv::server {

namespace {

// Rows per sorted SST file of a spill. The spill holds one chunk (16 bytes a
// row: 64 MiB) and scans the table once per chunk, so bigger chunks mean fewer
// scans: a 1 GiB table (~50 M keys) takes 13.
constexpr size_t kSpillChunkRows = size_t{1} << 22;
// How many rows ahead of the one being written a spill prefetches: the sorted
// rows point into the table in hash order, one cache miss each.
constexpr size_t kSpillPrefetchRows = 16;
// Read batches whose service time INFO's percentiles cover.
constexpr size_t kLatencyWindow = 1024;
// Written cold keys per space handed to the writer per write-back round.
constexpr size_t kWriteBackBatch = 65536;
// Entries of the warm cache one cron tick may look at when trimming.
constexpr size_t kTrimVisitsPerTick = 65536;

// The tier's threads run below the command thread (nice 10: about a tenth of
// its share when both want a core), so cold loads driven flat out by many
// clients do not delay hot commands on a machine with few cores
// (docs/counters.md, "Hot ids first"). Named for top -H and perf.
constexpr int kColdThreadNice = 10;

void RunBelowCommandThread(const char* name) {
  pthread_setname_np(pthread_self(), name);
  // Raising one's own nice value needs no privilege; a failure leaves it at 0.
  (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), kColdThreadNice);
}

int64_t SteadyUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool IsCounterCommand(const CommandSpec& spec) {
  return spec.name.starts_with("counter.") && spec.first_key > 0;
}

}  // namespace

ColdTier::ColdTier(Server& server) : server_(server) {
  const ServerConfig& cfg = server.cfg();
  dir_ = cfg.cold_dir.starts_with("/") ? cfg.cold_dir : JoinPath(cfg.dir, cfg.cold_dir);
  checkpoints_ = dir_ + "-checkpoints";
  read_batch_.store(cfg.cold_read_batch);
  writer_ = std::make_unique<JobThread>();
  writer_->Submit([] { RunBelowCommandThread("feedkv-coldwr"); });
  num_readers_ = static_cast<size_t>(cfg.cold_read_threads);
  for (size_t i = 0; i < num_readers_; i++) readers_.emplace_back([this] { ReadLoop(); });
}

ColdTier::~ColdTier() {
  {
    std::lock_guard<std::mutex> lk(read_mu_);
    stopping_ = true;
  }
  read_cv_.notify_all();
  for (std::thread& t : readers_) t.join();
  writer_.reset();  // runs the jobs already queued (a spill finishes), then joins
}

std::string ColdTier::ColumnFamily(const std::string& space, uint64_t generation) {
  return fmt::format("{}@{:016x}", space, generation);
}

std::shared_ptr<ColdStore> ColdTier::StoreIfOpen() const {
  std::lock_guard<std::mutex> lk(store_mu_);
  return store_;
}

Status ColdTier::Store(std::shared_ptr<ColdStore>* out) {
  std::lock_guard<std::mutex> lk(store_mu_);
  if (!store_) {
    ColdStoreOptions o;
    o.dir = dir_;
    o.block_cache_bytes = static_cast<uint64_t>(server_.cfg().cold_block_cache_size);
    o.bloom_bits_per_key = static_cast<int>(server_.cfg().cold_bloom_bits_per_key);
    std::unique_ptr<ColdStore> opened;
    Status s = ColdStore::Open(o, &opened);
    if (!s.ok()) return s;
    store_ = std::move(opened);
  }
  *out = store_;
  return Status::OK();
}

void ColdTier::SetReader(const std::string& name, CounterSpace& space) {
  const std::string cf = ColumnFamily(name, space.cold_generation());
  const CounterSchema* schema = &space.schema();
  space.set_cold_reader([this, cf, schema](int64_t id, uint64_t* values, bool* found) {
    sync_reads_++;
    std::shared_ptr<ColdStore> store = StoreIfOpen();
    if (!store) return Status::IOError("the cold store is not open");
    std::optional<std::string> row;
    Status s = store->Get(cf, id, &row);
    if (!s.ok()) return s;
    *found = row.has_value();
    if (!row) {
      std::fill(values, values + schema->num_fields(), 0);
      return Status::OK();
    }
    return counter_cold::Decode(*schema, *row, values);
  });
}

std::string ColdTier::CheckpointDir(const rdb::Header& h) const {
  return JoinPath(checkpoints_, fmt::format("{:016x}-{}-{}", h.aof_lineage, h.aof_offset, h.ctime_ms));
}

namespace {

bool AnyColdTable(Server& server) {
  for (auto& [name, space] : server.counter_spaces()) {
    for (size_t i = 0; space->tiered() && i < space->num_tables(); i++) {
      if (space->tier(i) == TableTier::kCold) return true;
    }
  }
  return false;
}

// Makes `to` a copy of the checkpoint `from`: table files hard-linked (RocksDB
// never changes them), the rest (CURRENT, MANIFEST, OPTIONS, logs) copied.
Status CopyCheckpoint(const std::string& from, const std::string& to) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::remove_all(to, ec);
  if (ec) return Status::IOError(fmt::format("removing {}: {}", to, ec.message()));
  fs::create_directories(to, ec);
  if (ec) return Status::IOError(fmt::format("creating {}: {}", to, ec.message()));
  for (const fs::directory_entry& e : fs::directory_iterator(from, ec)) {
    const fs::path target = fs::path(to) / e.path().filename();
    if (e.path().extension() == ".sst") {
      fs::create_hard_link(e.path(), target, ec);
    } else {
      fs::copy_file(e.path(), target, ec);
    }
    if (ec) return Status::IOError(fmt::format("copying {}: {}", e.path().string(), ec.message()));
  }
  if (ec) return Status::IOError(fmt::format("reading {}: {}", from, ec.message()));
  return Status::OK();
}

}  // namespace

void ColdTier::CloseStore() {
  epoch_++;
  std::promise<void> drained;
  writer_->Submit([&drained] { drained.set_value(); });
  drained.get_future().wait();
  std::shared_ptr<ColdStore> old;
  {
    std::lock_guard<std::mutex> lk(store_mu_);
    old = std::move(store_);
  }
  // A reader thread in a MultiGet holds it for that batch only.
  while (old && old.use_count() > 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

Status ColdTier::AttachLoaded(const rdb::Header& h) {
  std::set<std::string> referenced;
  for (auto& [name, space] : server_.counter_spaces()) {
    if (space->tiered()) referenced.insert(ColumnFamily(name, space->cold_generation()));
  }
  const bool need_store = AnyColdTable(server_);
  std::error_code ec;
  if (!need_store && !StoreIfOpen() && !std::filesystem::exists(dir_, ec)) return Status::OK();
  if (need_store) {
    // The rows as they were at the snapshot's position.
    const std::string ckpt = CheckpointDir(h);
    if (!std::filesystem::exists(ckpt, ec)) {
      return Status::Corruption(fmt::format(
          "the snapshot has cold tables but the cold store checkpoint {} taken with it is missing", ckpt));
    }
    CloseStore();
    Status s = CopyCheckpoint(ckpt, dir_);
    if (!s.ok()) return s;
  }
  std::shared_ptr<ColdStore> store;
  Status s = Store(&store);
  if (!s.ok()) return s;
  for (auto& [name, space] : server_.counter_spaces()) {
    if (!space->tiered()) continue;
    const std::string cf = ColumnFamily(name, space->cold_generation());
    bool has_cold = false;
    for (size_t i = 0; i < space->num_tables(); i++) has_cold = has_cold || space->tier(i) == TableTier::kCold;
    if (has_cold && !store->HasSpace(cf)) {
      return Status::Corruption(fmt::format(
          "counter space '{}' has cold tables but the cold store {} has no rows for it ({})", name,
          dir_, cf));
    }
    SetReader(name, *space);
  }
  // Rows no loaded space refers to (dropped spaces, spills a crash cut short)
  // are removed by the writer, in order with later spills.
  std::vector<std::string> garbage;
  for (const std::string& cf : store->Spaces()) {
    if (!referenced.count(cf)) garbage.push_back(cf);
  }
  if (!garbage.empty()) {
    writer_->Submit([store, garbage] {
      for (const std::string& cf : garbage) store->DropSpace(cf).PermitUnchecked();
    });
  }
  return Status::OK();
}

void ColdTier::CollectIds(const CommandSpec& spec, std::span<const std::string_view> args,
                          std::vector<Touched>* out) {
  if (!IsCounterCommand(spec) || args.size() < 2) return;
  auto& spaces = server_.counter_spaces();
  auto it = spaces.find(args[1]);
  if (it == spaces.end() || !it->second->tiered()) return;
  for (int pos : CommandTable::KeyPositions(spec, args)) {
    int64_t id;
    if (ParseCounterId(args[pos], &id)) out->push_back({it->second.get(), &it->first, id});
  }
}

uint64_t ColdTier::QueueLoads(std::span<const Touched> ids, Request req) {
  const uint64_t token = next_token_++;
  std::vector<ReadItem> queue;
  for (const Touched& t : ids) {
    if (!t.space->NeedsLoad(t.id)) {
      if (t.space->TierOf(t.id) != TableTier::kHot) cache_hits_++;
      continue;
    }
    cache_misses_++;
    ReadItem item{*t.name, t.space->cold_generation(), t.id, epoch_};
    std::vector<uint64_t>& waiters = loading_[LoadKey(item)];
    if (std::find(waiters.begin(), waiters.end(), token) != waiters.end()) continue;
    waiters.push_back(token);
    req.remaining++;
    if (waiters.size() == 1) queue.push_back(std::move(item));
  }
  if (req.remaining == 0) return 0;
  requests_[token] = std::move(req);
  if (!queue.empty()) {
    {
      std::lock_guard<std::mutex> lk(read_mu_);
      for (ReadItem& item : queue) read_queue_.push_back(std::move(item));
    }
    read_cv_.notify_all();
  }
  return token;
}

bool ColdTier::ParkForLoads(Client& c, const CommandSpec& spec,
                            std::span<const std::string_view> args) {
  std::vector<Touched> ids;
  if (spec.name == "exec") {
    if (!c.in_multi) return false;
    c.queued.ForEach([&](const CommandSpec& q, std::span<const std::string_view> qargs) {
      CollectIds(q, qargs, &ids);
    });
  } else {
    CollectIds(spec, args, &ids);
  }
  if (ids.empty()) return false;
  Request req;
  req.client_id = c.id;
  const uint64_t token = QueueLoads(ids, std::move(req));
  if (token == 0) return false;
  WaitCondition cond;
  cond.what = WaitFor::kAsyncDone;
  cond.token = token;
  // A failed read answers the error; else the command runs again.
  server_.ParkThenExecute(c, std::move(cond), 0, args, [this, token] {
    std::string error;
    if (auto it = requests_.find(token); it != requests_.end()) {
      error = std::move(it->second.error);
      requests_.erase(it);
    }
    return error;
  });
  return true;
}

bool ColdTier::LoadForLog(std::string_view bytes, std::function<void()> done) {
  bool tiered = false;
  for (const auto& [name, space] : server_.counter_spaces()) tiered = tiered || space->tiered();
  if (!tiered) return false;
  std::vector<Touched> ids;
  const CommandTable& table = server_.table();
  aof::ScanResult r;
  aof::ScanSegment(bytes, 0,
                   [&](const aof::Group& g) {
                     for (const aof::Record& rec : g.records) {
                       bool unknown_sub = false;
                       const CommandSpec* spec = rec.argv.empty() ? nullptr : table.Lookup(rec.argv, &unknown_sub);
                       if (spec != nullptr) CollectIds(*spec, rec.argv, &ids);
                     }
                     return Status::OK();
                   },
                   &r)
      .PermitUnchecked();  // a damaged stream is reported when it is applied
  if (ids.empty()) return false;
  Request req;
  req.done = std::move(done);
  return QueueLoads(ids, std::move(req)) != 0;
}

std::string ColdTier::LoadKey(const ReadItem& item) const {
  return fmt::format("{}\n{}\n{}\n{}", item.space, item.generation, item.id, item.epoch);
}

void ColdTier::ReadLoop() {
  RunBelowCommandThread("feedkv-coldrd");
  std::unique_lock<std::mutex> lk(read_mu_);
  while (true) {
    read_cv_.wait(lk, [&] { return stopping_ || !read_queue_.empty(); });
    if (stopping_) return;
    // One batch: up to cold-read-batch ids of the first item's space, and no
    // more than this reader's share of the queue: a MultiGet reads its ids one
    // after another (Debian's RocksDB has no async I/O), so on a cold disk the
    // parallelism is the readers'.
    std::vector<ReadItem> batch;
    const size_t share = (read_queue_.size() + num_readers_ - 1) / num_readers_;
    const size_t max = std::clamp<size_t>(share, 1, static_cast<size_t>(std::max<int64_t>(1, read_batch_.load())));
    const std::string space = read_queue_.front().space;
    const uint64_t generation = read_queue_.front().generation;
    size_t scanned = 0;
    for (auto it = read_queue_.begin(); it != read_queue_.end() && batch.size() < max &&
                                        scanned < 4 * max;
         scanned++) {
      if (it->space == space && it->generation == generation) {
        batch.push_back(std::move(*it));
        it = read_queue_.erase(it);
      } else {
        ++it;
      }
    }
    lk.unlock();
    const int64_t t0 = SteadyUs();
    if (int64_t delay = read_delay_ms_.load(); delay > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(delay));
    }
    std::vector<int64_t> ids;
    for (const ReadItem& item : batch) ids.push_back(item.id);
    std::sort(ids.begin(), ids.end());
    std::vector<std::optional<std::string>> values;
    Status s;
    std::shared_ptr<ColdStore> store = StoreIfOpen();
    if (!store) {
      s = Status::IOError("the cold store is not open");
    } else {
      s = store->MultiGet(ColumnFamily(space, generation), ids, &values);
    }
    std::vector<std::string> rows(batch.size());
    std::vector<bool> found(batch.size(), false);
    if (s.ok()) {
      for (size_t i = 0; i < batch.size(); i++) {
        const size_t at = std::lower_bound(ids.begin(), ids.end(), batch[i].id) - ids.begin();
        if (values[at]) {
          rows[i] = *values[at];
          found[i] = true;
        }
      }
    }
    const int64_t usec = SteadyUs() - t0;
    boost::asio::post(server_.io(), [this, batch = std::move(batch), rows = std::move(rows),
                                     found = std::move(found), s, usec]() mutable {
      OnLoaded(std::move(batch), std::move(rows), std::move(found), s, usec);
    });
    lk.lock();
  }
}

void ColdTier::OnLoaded(std::vector<ReadItem> items, std::vector<std::string> rows,
                        std::vector<bool> found, Status status, int64_t usec) {
  read_batches_++;
  read_keys_ += items.size();
  if (read_latency_usec_.size() < kLatencyWindow) {
    read_latency_usec_.push_back(usec);
  } else {
    read_latency_usec_[read_latency_next_++ % kLatencyWindow] = usec;
  }
  if (!status.ok()) {
    read_errors_++;
    server_.Log(3, "Cold tier read failed: " + status.ToString());
  }
  auto& spaces = server_.counter_spaces();
  for (size_t i = 0; i < items.size(); i++) {
    const ReadItem& item = items[i];
    Status s = status;
    auto sp = spaces.find(item.space);
    if (s.ok() && item.epoch == epoch_ && sp != spaces.end() &&
        sp->second->cold_generation() == item.generation) {
      s = sp->second->InsertLoaded(item.id, found[i] ? std::string_view(rows[i]) : std::string_view());
      if (!s.ok()) {
        read_errors_++;
        server_.Log(3, fmt::format("Cold tier row of id {} in space '{}' is damaged: {}", item.id,
                                   item.space, s.ToString()));
      }
    }
    auto waiting = loading_.find(LoadKey(item));
    if (waiting == loading_.end()) continue;
    for (uint64_t token : waiting->second) {
      auto req = requests_.find(token);
      if (req == requests_.end()) continue;
      if (!s.ok() && req->second.error.empty()) {
        req->second.error = protocol::err::kColdReadFailedPrefix + s.ToString();
      }
      if (--req->second.remaining > 0) continue;
      if (req->second.done) {
        // A read error is not reported here: the log's command then reads the
        // id itself, synchronously, and fails as it would have.
        boost::asio::post(server_.io(), std::move(req->second.done));
        requests_.erase(req);
      } else if (server_.waiting().IsParked(req->second.client_id)) {
        server_.waiting().AsyncDone(token);  // its callback takes the request
      } else {
        requests_.erase(req);  // the client went away meanwhile
      }
    }
    loading_.erase(waiting);
  }
}

Status ColdTier::StartSpill(const std::string& name, int table,
                            std::function<void(const Status&)> done) {
  auto& spaces = server_.counter_spaces();
  auto it = spaces.find(name);
  if (it == spaces.end()) return Status::NotFound(fmt::format("no such counter space '{}'", name));
  CounterSpace& space = *it->second;
  if (spill_) {
    if (spill_->space == name && (table < 0 || table == spill_->table)) {
      if (done) spill_->done.push_back(std::move(done));
      return Status::OK();
    }
    return Status::Busy("a spill is running; try again when it ends");
  }
  if (table < 0) table = space.SpillCandidate();
  if (table < 0) {
    return Status::InvalidArgument(
        fmt::format("counter space '{}' has no table to spill (the newest table stays in memory)", name));
  }
  if (static_cast<size_t>(table) >= space.num_tables()) {
    return Status::InvalidArgument(
        fmt::format("counter space '{}' has no table {} (it has {})", name, table, space.num_tables()));
  }
  if (space.cold_generation() == 0) {
    uint64_t g = 0;
    while (g == 0) g = server_.Random();
    space.set_cold_generation(g);
  }
  std::shared_ptr<const CounterTable> source;
  const int64_t begin_us = SteadyUs();
  Status s = space.BeginSpill(static_cast<size_t>(table), &source);
  if (!s.ok()) return s;
  SetReader(name, space);
  spill_ = std::make_unique<SpillState>();
  spill_->stall_us = SteadyUs() - begin_us;
  spill_->space = name;
  spill_->generation = space.cold_generation();
  spill_->table = table;
  spill_->start_ms = NowMs();
  if (done) spill_->done.push_back(std::move(done));
  server_.Log(2, fmt::format("Spilling table {} of counter space '{}' (ids {}..{}, {} keys) to {}",
                             table, name, source->first_id(), source->last_id(), source->used(), dir_));
  const std::string cf = ColumnFamily(name, space.cold_generation());
  writer_->Submit([this, cf, source]() mutable {
    uint64_t zero_keys = 0;
    std::shared_ptr<ColdStore> store;
    Status s = Store(&store);
    if (s.ok()) s = store->EnsureSpace(cf);
    if (s.ok()) s = store->DeleteRange(cf, source->first_id(), source->last_id());
    if (s.ok()) {
      s = counter_cold::ExportSorted(
          *source, kSpillChunkRows, [&](std::span<const counter_cold::SlotRef> chunk) {
            size_t next = 0;
            std::string row;
            return store->IngestSorted(cf, [&](int64_t* id, std::string_view* value) {
              while (next < chunk.size()) {
                if (next + kSpillPrefetchRows < chunk.size()) {
                  __builtin_prefetch(chunk[next + kSpillPrefetchRows].slot);
                }
                const counter_cold::SlotRef& key = chunk[next++];
                // All-zero keys get no row (in a cold range, zeros is no key).
                if (counter_cold::SlotIsZero(source->schema(), key.slot)) {
                  zero_keys++;
                  continue;
                }
                row = counter_cold::EncodePacked(source->schema(), key.slot);
                *id = key.id;
                *value = row;
                return true;
              }
              return false;
            });
          });
    }
    source.reset();  // before the command thread looks: an abort takes the table back as is
    boost::asio::post(server_.io(), [this, s, zero_keys] { OnSpillDone(s, zero_keys); });
  });
  return Status::OK();
}

void ColdTier::OnSpillDone(const Status& s, uint64_t zero_keys) {
  std::unique_ptr<SpillState> spill = std::move(spill_);
  if (!spill) return;
  auto& spaces = server_.counter_spaces();
  auto it = spaces.find(spill->space);
  const bool same = it != spaces.end() && it->second->cold_generation() == spill->generation &&
                    it->second->spilling_table() == spill->table;
  last_spill_seconds_ = static_cast<double>(NowMs() - spill->start_ms) / 1000.0;
  Status result = s;
  if (!same && result.ok()) result = Status::NotFound("the counter space was dropped during the spill");
  const int64_t end_us = SteadyUs();
  if (same && s.ok()) {
    // Unmapping a large table takes a while: the writer thread does it.
    std::shared_ptr<const CounterTable> frozen = it->second->CommitSpill(zero_keys);
    writer_->Submit([frozen = std::move(frozen)]() mutable { frozen.reset(); });
    spills_++;
    last_spill_ok_ = true;
    last_spill_error_.clear();
    server_.Log(2, fmt::format("Table {} of counter space '{}' is cold ({:.3f} s)", spill->table,
                               spill->space, last_spill_seconds_));
  } else if (!s.ok()) {
    if (same) it->second->AbortSpill();
  }
  last_spill_stall_us_ = std::max(spill->stall_us, SteadyUs() - end_us);
  if (!s.ok()) {
    spill_failures_++;
    last_spill_ok_ = false;
    last_spill_error_ = s.ToString();
    server_.Log(3, fmt::format("Spill of table {} of counter space '{}' failed, the table stays in "
                               "memory: {}",
                               spill->table, spill->space, s.ToString()));
  }
  for (auto& done : spill->done) done(result);
}

void ColdTier::MaybeAutoSpill() {
  const int64_t limit = server_.cfg().counter_memory_limit;
  if (limit <= 0 || spill_) return;
  if (server_.CounterMemory() <= static_cast<size_t>(limit)) return;
  // The space holding the most memory that has a table to give.
  const std::string* best = nullptr;
  size_t best_bytes = 0;
  for (const auto& [name, space] : server_.counter_spaces()) {
    if (space->SpillCandidate() < 0) continue;
    const size_t bytes = space->TableBytes();
    if (best == nullptr || bytes > best_bytes) {
      best = &name;
      best_bytes = bytes;
    }
  }
  if (best == nullptr) return;
  server_.Log(2, fmt::format("Counter memory {} is above counter-memory-limit {}", server_.CounterMemory(),
                             limit));
  Status s = StartSpill(*best, -1, nullptr);
  if (!s.ok()) server_.Log(3, "Automatic spill not started: " + s.ToString());
}

void ColdTier::WriteBack() {
  std::shared_ptr<ColdStore> store = StoreIfOpen();
  if (!store) return;
  for (auto& [name, space] : server_.counter_spaces()) {
    if (!space->tiered() || space->warm_dirty() == 0) continue;
    auto batch = std::make_shared<std::vector<CounterWarmCache::WriteBack>>(
        space->TakeColdDirty(kWriteBackBatch));
    if (batch->empty()) continue;
    std::vector<ColdMutation> mutations;
    mutations.reserve(batch->size());
    for (const CounterWarmCache::WriteBack& w : *batch) {
      ColdMutation m;
      m.id = w.id;
      if (std::any_of(w.counters.begin(), w.counters.end(), [](uint64_t v) { return v != 0; })) {
        m.value = counter_cold::Encode(space->schema(), w.counters.data());
      }
      mutations.push_back(std::move(m));
    }
    writebacks_inflight_++;
    const std::string cf = ColumnFamily(name, space->cold_generation());
    const uint64_t generation = space->cold_generation();
    const uint64_t epoch = epoch_;
    writer_->Submit([this, store, cf, name, generation, epoch, batch,
                     mutations = std::move(mutations)] {
      // Without RocksDB's log: the checkpoint taken with the next snapshot flushes
      // them, and until then the feedkv log after the previous snapshot holds them.
      Status s = store->Write(cf, mutations, /*wal=*/false);
      boost::asio::post(server_.io(), [this, s, name, generation, epoch, batch] {
        writebacks_inflight_--;
        auto& spaces = server_.counter_spaces();
        auto it = spaces.find(name);
        if (epoch != epoch_ || it == spaces.end() || it->second->cold_generation() != generation) return;
        it->second->ColdWrittenBack(*batch, s.ok());
        if (s.ok()) {
          writebacks_ += batch->size();
        } else {
          writeback_errors_++;
          server_.Log(3, fmt::format("Cold tier write-back of {} keys of space '{}' failed (they stay "
                                     "in memory and are tried again): {}",
                                     batch->size(), name, s.ToString()));
        }
      });
    });
  }
}

void ColdTier::DropRows(const std::string& name, const CounterSpace& space) {
  std::shared_ptr<ColdStore> store = StoreIfOpen();
  if (!store || space.cold_generation() == 0) return;
  const std::string cf = ColumnFamily(name, space.cold_generation());
  writer_->Submit([this, store, cf] {
    Status s = store->DropSpace(cf);
    if (!s.ok()) {
      boost::asio::post(server_.io(), [this, s] {
        server_.Log(3, "Cold tier rows of a deleted counter space stay until the next load: " + s.ToString());
      });
    }
  });
}

void ColdTier::Cron(int64_t now_ms) {
  read_batch_.store(server_.cfg().cold_read_batch);
  if (writebacks_inflight_ == 0 &&
      now_ms - last_writeback_ms_ >= server_.cfg().counter_cold_writeback_interval) {
    last_writeback_ms_ = now_ms;
    WriteBack();
  }
  // The warm cache's budget is shared by the spaces that have one.
  size_t tiered = 0;
  for (const auto& [name, space] : server_.counter_spaces()) tiered += space->tiered() ? 1 : 0;
  if (tiered > 0) {
    const size_t budget = static_cast<size_t>(server_.cfg().counter_cold_cache_size) / tiered;
    for (const auto& [name, space] : server_.counter_spaces()) {
      if (space->tiered()) space->TrimWarm(budget, kTrimVisitsPerTick);
    }
  }
  if (!server_.loading()) MaybeAutoSpill();
}

bool ColdTier::QueueCheckpoint(const rdb::Header& h, std::shared_future<Status>* done) {
  if (!AnyColdTable(server_)) return false;
  auto promise = std::make_shared<std::promise<Status>>();
  *done = promise->get_future().share();
  const std::string dir = CheckpointDir(h);
  const std::string root = checkpoints_;
  writer_->Submit([this, dir, root, promise] {
    namespace fs = std::filesystem;
    std::shared_ptr<ColdStore> store;
    Status s = Store(&store);
    std::error_code ec;
    const std::string tmp = dir + ".tmp";
    if (s.ok()) {
      fs::create_directories(root, ec);
      fs::remove_all(tmp, ec);
      s = store->Checkpoint(tmp);  // flushes the memtables first
    }
    if (s.ok()) {
      fs::remove_all(dir, ec);
      fs::rename(tmp, dir, ec);
      if (ec) s = Status::IOError(fmt::format("renaming {}: {}", tmp, ec.message()));
    }
    if (s.ok()) s = Env::Default()->SyncDir(root);
    if (!s.ok()) fs::remove_all(tmp, ec);
    promise->set_value(s);
  });
  return true;
}

Status ColdTier::AdoptCheckpointFiles(const std::string& stage) {
  namespace fs = std::filesystem;
  constexpr std::string_view kPrefix = "cold-ckpt.";
  std::error_code ec;
  std::set<std::string> replaced;
  for (const fs::directory_entry& e : fs::directory_iterator(stage, ec)) {
    const std::string name = e.path().filename().string();
    if (!name.starts_with(kPrefix)) continue;
    const size_t dot = name.find('.', kPrefix.size());
    if (dot == std::string::npos || dot == kPrefix.size() || dot + 1 == name.size()) {
      return Status::Corruption("bad cold checkpoint file name in the full sync: " + name);
    }
    const std::string ckpt = name.substr(kPrefix.size(), dot - kPrefix.size());
    const fs::path dir = fs::path(checkpoints_) / ckpt;
    if (replaced.insert(ckpt).second) {
      fs::remove_all(dir, ec);
      fs::create_directories(dir, ec);
      if (ec) return Status::IOError(fmt::format("creating {}: {}", dir.string(), ec.message()));
    }
    const fs::path to = dir / name.substr(dot + 1);
    fs::rename(e.path(), to, ec);
    if (ec) {  // another file system
      ec.clear();
      fs::copy_file(e.path(), to, ec);
    }
    if (ec) return Status::IOError(fmt::format("moving {}: {}", name, ec.message()));
  }
  if (ec) return Status::IOError(fmt::format("reading {}: {}", stage, ec.message()));
  for (const std::string& ckpt : replaced) {
    Status s = Env::Default()->SyncDir((fs::path(checkpoints_) / ckpt).string());
    if (!s.ok()) return s;
  }
  return replaced.empty() ? Status::OK() : Env::Default()->SyncDir(checkpoints_);
}

void ColdTier::AfterWriter(std::function<void()> fn) {
  writer_->Submit([this, fn = std::move(fn)] { boost::asio::post(server_.io(), fn); });
}

void ColdTier::KeepOnlyCheckpoint(const rdb::Header& h) {
  const std::string keep = CheckpointDir(h);
  const std::string root = checkpoints_;
  writer_->Submit([keep, root] {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::exists(root, ec)) return;
    for (const fs::directory_entry& e : fs::directory_iterator(root, ec)) {
      if (e.path().string() != keep) fs::remove_all(e.path(), ec);
    }
  });
}

void ColdTier::InfoSection(std::string* out) {
  size_t tables = 0, warm_bytes = 0, warm_dirty = 0;
  uint64_t keys = 0;
  for (const auto& [name, space] : server_.counter_spaces()) {
    if (!space->tiered()) continue;
    for (size_t i = 0; i < space->num_tables(); i++) tables += space->tier(i) == TableTier::kCold;
    CounterSpaceStats st = space->Stats();
    keys += st.cold_keys;
    warm_bytes += st.warm_bytes;
    warm_dirty += st.warm_dirty;
  }
  uint64_t disk = 0;
  uint64_t block_cache = 0, pending = 0;
  if (std::shared_ptr<ColdStore> store = StoreIfOpen()) {
    for (const std::string& cf : store->Spaces()) {
      ColdSpaceStats st;
      if (store->SpaceStats(cf, &st).ok()) disk += st.sst_bytes;
    }
    block_cache = store->BlockCacheUsage();
    pending = store->PendingCompactionBytes();
  }
  std::vector<int64_t> lat = read_latency_usec_;
  std::sort(lat.begin(), lat.end());
  auto pct = [&](double p) -> int64_t {
    if (lat.empty()) return 0;
    return lat[std::min(lat.size() - 1, static_cast<size_t>(p * static_cast<double>(lat.size())))];
  };
  size_t inflight = 0;
  {
    std::lock_guard<std::mutex> lk(read_mu_);
    inflight = read_queue_.size();
  }
  *out += fmt::format(
      "cold_dir:{}\r\ncold_tables:{}\r\ncold_keys:{}\r\ncold_disk_bytes:{}\r\n"
      "cold_cache_used_bytes:{}\r\ncold_cache_dirty_keys:{}\r\ncold_reads_inflight:{}\r\n"
      "cold_blocked_clients:{}\r\ncold_cache_hits:{}\r\ncold_cache_misses:{}\r\n"
      "cold_read_batches:{}\r\ncold_read_keys:{}\r\ncold_read_errors:{}\r\ncold_sync_reads:{}\r\n"
      "cold_read_latency_usec_p50:{}\r\ncold_read_latency_usec_p99:{}\r\n"
      "cold_read_latency_usec_p999:{}\r\ncold_writebacks:{}\r\ncold_writeback_errors:{}\r\n"
      "cold_spills:{}\r\ncold_spill_failures:{}\r\n"
      "cold_spill_in_progress:{}\r\ncold_last_spill_status:{}\r\ncold_last_spill_seconds:{:.3f}\r\n"
      "cold_last_spill_stall_usec:{}\r\n"
      "rocksdb_block_cache_usage:{}\r\nrocksdb_pending_compaction_bytes:{}\r\n",
      dir_, tables, keys, disk, warm_bytes, warm_dirty, inflight, requests_.size(), cache_hits_,
      cache_misses_, read_batches_, read_keys_, read_errors_, sync_reads_, pct(0.5), pct(0.99), pct(0.999),
      writebacks_, writeback_errors_, spills_,
      spill_failures_, spill_ ? 1 : 0, last_spill_ok_ ? "ok" : "err", last_spill_seconds_, last_spill_stall_us_, block_cache,
      pending);
}

}  // namespace feedkv::server
