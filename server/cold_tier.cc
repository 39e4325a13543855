#include "server/cold_tier.h"

#include <fmt/format.h>

#include <boost/asio/post.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>

#include "protocol/reply_writer.h"
#include "server/command_context.h"
#include "server/job_thread.h"
#include "server/server.h"
#include "storage/cold/cold_store.h"
#include "storage/counter_cold_rows.h"
#include "storage/file_io.h"

namespace feedkv::server {

namespace {

// Rows per sorted SST file of a spill: the spill holds one chunk in memory.
constexpr size_t kSpillChunkRows = size_t{1} << 20;
// Read batches whose service time INFO's percentiles cover.
constexpr size_t kLatencyWindow = 1024;
// Entries of the warm cache one cron tick may look at when trimming.
constexpr size_t kTrimVisitsPerTick = 65536;

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
  read_batch_.store(cfg.cold_read_batch);
  writer_ = std::make_unique<JobThread>();
  for (int64_t i = 0; i < cfg.cold_read_threads; i++) readers_.emplace_back([this] { ReadLoop(); });
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

Status ColdTier::AttachLoaded() {
  std::set<std::string> referenced;
  bool need_store = false;
  for (auto& [name, space] : server_.counter_spaces()) {
    if (!space->tiered()) continue;
    referenced.insert(ColumnFamily(name, space->cold_generation()));
    for (size_t i = 0; i < space->num_tables(); i++) {
      need_store = need_store || space->tier(i) == TableTier::kCold;
    }
  }
  std::error_code ec;
  if (!need_store && !StoreIfOpen() && !std::filesystem::exists(dir_, ec)) return Status::OK();
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
  const uint64_t token = next_token_++;
  Request req;
  req.client_id = c.id;
  std::vector<ReadItem> queue;
  for (const Touched& t : ids) {
    if (!t.space->NeedsLoad(t.id)) {
      if (t.space->TierOf(t.id) != TableTier::kHot) cache_hits_++;
      continue;
    }
    cache_misses_++;
    ReadItem item{*t.name, t.space->cold_generation(), t.id};
    std::vector<uint64_t>& waiters = loading_[LoadKey(item)];
    if (std::find(waiters.begin(), waiters.end(), token) != waiters.end()) continue;
    waiters.push_back(token);
    req.remaining++;
    if (waiters.size() == 1) queue.push_back(std::move(item));
  }
  if (req.remaining == 0) return false;
  requests_[token] = std::move(req);
  if (!queue.empty()) {
    {
      std::lock_guard<std::mutex> lk(read_mu_);
      for (ReadItem& item : queue) read_queue_.push_back(std::move(item));
    }
    read_cv_.notify_all();
  }
  WaitCondition cond;
  cond.what = WaitFor::kAsyncDone;
  cond.token = token;
  std::vector<std::string> saved(args.begin(), args.end());
  server_.waiting().Park(c, std::move(cond), 0,
                         [this, token, saved = std::move(saved)](Client& client, WaitEnd) {
                           auto it = requests_.find(token);
                           std::string error;
                           if (it != requests_.end()) {
                             error = std::move(it->second.error);
                             requests_.erase(it);
                           }
                           if (!error.empty()) {
                             protocol::ReplyWriter w(&client.out, client.resp);
                             server_.CountError(error);
                             w.Error(error);
                             return;
                           }
                           std::vector<std::string_view> argv(saved.begin(), saved.end());
                           server_.Execute(client, argv);
                         });
  return true;
}

std::string ColdTier::LoadKey(const ReadItem& item) const {
  return fmt::format("{}\n{}\n{}", item.space, item.generation, item.id);
}

void ColdTier::ReadLoop() {
  std::unique_lock<std::mutex> lk(read_mu_);
  while (true) {
    read_cv_.wait(lk, [&] { return stopping_ || !read_queue_.empty(); });
    if (stopping_) return;
    // One batch: up to cold-read-batch ids of the first item's space.
    std::vector<ReadItem> batch;
    const size_t max = static_cast<size_t>(std::max<int64_t>(1, read_batch_.load()));
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
    if (s.ok() && sp != spaces.end() && sp->second->cold_generation() == item.generation) {
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
        req->second.error = "ERR cold tier read failed: " + s.ToString();
      }
      if (--req->second.remaining > 0) continue;
      if (server_.waiting().IsParked(req->second.client_id)) {
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
  Status s = space.BeginSpill(static_cast<size_t>(table), &source);
  if (!s.ok()) return s;
  SetReader(name, space);
  spill_ = std::make_unique<SpillState>();
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
              // All-zero keys get no row (in a cold range, zeros is no key).
              while (next < chunk.size() && counter_cold::SlotIsZero(source->schema(), chunk[next].slot)) {
                next++;
                zero_keys++;
              }
              if (next == chunk.size()) return false;
              row = counter_cold::EncodePacked(source->schema(), chunk[next].slot);
              *id = chunk[next].id;
              *value = row;
              next++;
              return true;
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
  if (same && s.ok()) {
    it->second->CommitSpill(zero_keys);
    spills_++;
    last_spill_ok_ = true;
    last_spill_error_.clear();
    server_.Log(2, fmt::format("Table {} of counter space '{}' is cold ({:.3f} s)", spill->table,
                               spill->space, last_spill_seconds_));
  } else if (!s.ok()) {
    if (same) it->second->AbortSpill();
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

void ColdTier::Cron(int64_t) {
  read_batch_.store(server_.cfg().cold_read_batch);
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
      "cold_read_batches:{}\r\ncold_read_keys:{}\r\ncold_read_errors:{}\r\n"
      "cold_read_latency_usec_p50:{}\r\ncold_read_latency_usec_p99:{}\r\n"
      "cold_read_latency_usec_p999:{}\r\ncold_spills:{}\r\ncold_spill_failures:{}\r\n"
      "cold_spill_in_progress:{}\r\ncold_last_spill_status:{}\r\ncold_last_spill_seconds:{:.3f}\r\n"
      "rocksdb_block_cache_usage:{}\r\nrocksdb_pending_compaction_bytes:{}\r\n",
      dir_, tables, keys, disk, warm_bytes, warm_dirty, inflight, requests_.size(), cache_hits_,
      cache_misses_, read_batches_, read_keys_, read_errors_, pct(0.5), pct(0.99), pct(0.999), spills_,
      spill_failures_, spill_ ? 1 : 0, last_spill_ok_ ? "ok" : "err", last_spill_seconds_, block_cache,
      pending);
}

}  // namespace feedkv::server
