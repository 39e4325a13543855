// Micro-benchmarks of the schema counter store (storage/counter_space.h).
//   BM_CounterIncr/fill%/MiB, BM_CounterGet/fill%/MiB, BM_CounterGetMiss/fill%/MiB: one
//     table of 1 MiB (cache-resident) or 256 MiB (DRAM-bound, like production's 1 GiB)
//     filled to 50/70/90%, random existing (or absent) ids.
//   BM_CounterInsert: new, growing ids into 8 MiB rolling tables with default options.
//   BM_CounterMemory: bytes per id for 1,000,000 ids, schema repost:20 comment:20 like:24
//     read:32, realistic small values, 8 MiB tables (docs/counters.md).
//   BM_CounterFillSweep/max_fill%/probes: how many keys spill to extend, and probe
//     lengths, per max fill and probe limit (the measurement behind the defaults).
//   BM_CounterSnapshotOneKey/GiB: a snapshot (WriteTo) of a space whose one table of
//     1/16/32 GiB holds one key; must not grow with the table (issue 11).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "storage/counter_space.h"

namespace feedkv {
namespace {

constexpr char kSchema[] = "repost:20 comment:20 like:24 read:32";
constexpr uint64_t kMiB = uint64_t{1} << 20;

CounterSchema PostSchema() {
  CounterSchema s;
  Status st = CounterSchema::ParseString(kSchema, &s);
  if (!st.ok()) std::abort();
  return s;
}

// Post ids grow with time with gaps (other shards take the ids in between).
std::vector<int64_t> GrowingIds(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> ids(n);
  int64_t id = int64_t{1} << 50;
  for (auto& x : ids) x = id += 1 + static_cast<int64_t>(rng() % 1000);
  return ids;
}

// Counts that look like a feed's: most posts get a few likes and comments, reads are
// in the hundreds, with a long tail.
struct ValueGen {
  std::mt19937_64 rng{42};
  std::lognormal_distribution<double> reposts{0.0, 1.5}, comments{0.5, 1.5}, likes{1.5, 2.0},
      reads{5.0, 2.0};
  uint64_t Draw(std::lognormal_distribution<double>& d) {
    return static_cast<uint64_t>(std::min(d(rng), 1e15));
  }
  void Fill(CounterSpace* s, int64_t id) {
    uint64_t ignored;
    const uint64_t v[4] = {Draw(reposts), Draw(comments), Draw(likes), Draw(reads)};
    for (size_t f = 0; f < 4; ++f) {
      if (v[f] != 0) {
        Status st = s->IncrBy(id, f, static_cast<int64_t>(v[f]), &ignored);
        st.PermitUnchecked();
      }
    }
  }
};

// One space with a single table of `mib` MiB filled to `fill_pct`%, built once.
struct Filled {
  std::unique_ptr<CounterSpace> space;
  std::vector<int64_t> ids;     // present, shuffled
  std::vector<int64_t> absent;  // never written, shuffled
};

const Filled& FilledSpace(const benchmark::State& state) {
  const int fill_pct = static_cast<int>(state.range(0));
  const uint64_t bytes = static_cast<uint64_t>(state.range(1)) * kMiB;
  static std::map<std::pair<int, uint64_t>, Filled> cache;
  auto it = cache.find({fill_pct, bytes});
  if (it != cache.end()) return it->second;
  cache.clear();  // keep one 256 MiB space alive at a time
  Filled f;
  f.space = std::make_unique<CounterSpace>(PostSchema(), CounterOptions{bytes, 0.99, 128});
  const uint64_t cap = CounterTable::CapacityFor(bytes, f.space->schema().slot_bytes());
  const size_t n = static_cast<size_t>(static_cast<double>(cap) * fill_pct / 100.0);
  std::vector<int64_t> all = GrowingIds(2 * n, 7);
  std::mt19937_64 rng(fill_pct);
  std::shuffle(all.begin(), all.end(), rng);
  f.ids.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n));
  f.absent.assign(all.begin() + static_cast<std::ptrdiff_t>(n), all.end());
  ValueGen values;
  for (int64_t id : f.ids) values.Fill(f.space.get(), id);
  return cache.emplace(std::make_pair(fill_pct, bytes), std::move(f)).first->second;
}

void ReportTable(benchmark::State& state, const CounterSpace& s) {
  const CounterSpaceStats st = s.Stats();
  state.counters["fill"] = st.tables.empty() ? 0 : st.tables.back().fill;
  state.counters["mean_probes"] = st.mean_probes;
  state.counters["extend"] = static_cast<double>(st.extend_keys);
}

void BM_CounterIncr(benchmark::State& state) {
  const Filled& f = FilledSpace(state);
  CounterSpace* s = f.space.get();
  size_t i = 0;
  uint64_t v = 0;
  for (auto _ : state) {
    Status st = s->IncrBy(f.ids[i], 2, 1, &v);
    st.PermitUnchecked();
    benchmark::DoNotOptimize(v);
    if (++i == f.ids.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
  ReportTable(state, *s);
}
BENCHMARK(BM_CounterIncr)->ArgsProduct({{50, 70, 90}, {1, 256}});

void BM_CounterGet(benchmark::State& state) {
  const Filled& f = FilledSpace(state);
  uint64_t values[4];
  size_t i = 0;
  for (auto _ : state) {
    f.space->Get(f.ids[i], values);
    benchmark::DoNotOptimize(values);
    if (++i == f.ids.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
  ReportTable(state, *f.space);
}
BENCHMARK(BM_CounterGet)->ArgsProduct({{50, 70, 90}, {1, 256}});

void BM_CounterGetMiss(benchmark::State& state) {
  const Filled& f = FilledSpace(state);
  uint64_t values[4];
  size_t i = 0;
  for (auto _ : state) {
    f.space->Get(f.absent[i], values);
    benchmark::DoNotOptimize(values);
    if (++i == f.absent.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CounterGetMiss)->ArgsProduct({{50, 70, 90}, {1, 256}});

void BM_CounterInsert(benchmark::State& state) {
  const std::vector<int64_t> ids = GrowingIds(1'000'000, 3);
  for (auto _ : state) {
    state.PauseTiming();
    auto s = std::make_unique<CounterSpace>(PostSchema(), CounterOptions{8 * kMiB, 0.9, 32});
    state.ResumeTiming();
    uint64_t v;
    for (int64_t id : ids) {
      Status st = s->IncrBy(id, 3, 1, &v);
      st.PermitUnchecked();
    }
    state.PauseTiming();
    s.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(ids.size()));
}
BENCHMARK(BM_CounterInsert)->Unit(benchmark::kMillisecond);

// Resident bytes of this process (Linux), to set MemoryUsage() against what pages cost.
double ResidentBytes() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

// Fills a space with 1,000,000 realistic posts and reports what they cost.
void FillAndReport(benchmark::State& state, const CounterOptions& options) {
  const std::vector<int64_t> ids = GrowingIds(1'000'000, 5);
  CounterSpaceStats st;
  double rss = 0;
  for (auto _ : state) {
    const double before = ResidentBytes();
    CounterSpace s(PostSchema(), options);
    ValueGen values;
    for (int64_t id : ids) values.Fill(&s, id);
    st = s.Stats();
    rss = ResidentBytes() - before;
  }
  state.counters["rss_bytes_per_id"] = rss / static_cast<double>(st.num_keys);
  const double n = static_cast<double>(st.num_keys);
  state.counters["bytes_per_id"] = st.bytes_per_key;
  // What a long run converges to: full tables at max fill, no partly-filled newest one.
  state.counters["steady_bytes_per_id"] =
      static_cast<double>(PostSchema().slot_bytes()) / options.max_fill;
  state.counters["tables"] = static_cast<double>(st.tables.size());
  state.counters["aux"] = static_cast<double>(st.aux_keys);
  state.counters["extend_pct"] = 100.0 * static_cast<double>(st.extend_keys) / n;
  state.counters["mean_probes"] = st.mean_probes;
  state.counters["max_probes"] = st.max_probes;
}

void BM_CounterMemory(benchmark::State& state) {
  FillAndReport(state,
                CounterOptions{8 * kMiB, CounterOptions{}.max_fill, CounterOptions{}.max_probes});
}
BENCHMARK(BM_CounterMemory)->Iterations(1)->Unit(benchmark::kMillisecond);

void BM_CounterFillSweep(benchmark::State& state) {
  FillAndReport(state, CounterOptions{8 * kMiB, static_cast<double>(state.range(0)) / 100.0,
                                      static_cast<uint32_t>(state.range(1))});
}
BENCHMARK(BM_CounterFillSweep)
    ->ArgsProduct({{70, 80, 85, 90, 95}, {8, 16, 32, 64}})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// Discards the image, counting its bytes.
class CountingSink : public CounterSnapshotSink {
 public:
  void Write(const char*, size_t n) override { bytes += n; }
  uint64_t bytes = 0;
};

void BM_CounterSnapshotOneKey(benchmark::State& state) {
  const uint64_t table_bytes = static_cast<uint64_t>(state.range(0)) << 30;
  CounterSpace s(PostSchema(), CounterOptions{table_bytes, 0.9, 32});
  uint64_t ignored;
  if (!s.IncrBy(1'700'000'000'000, 2, 1, &ignored).ok()) std::abort();
  CountingSink sink;
  for (auto _ : state) {
    sink.bytes = 0;
    s.WriteTo(&sink);
  }
  state.counters["image_bytes"] = static_cast<double>(sink.bytes);
  state.counters["tracking_bytes"] = static_cast<double>(s.table(0).tracking_bytes());
  state.counters["memory_bytes"] = static_cast<double>(s.MemoryUsage());
}
BENCHMARK(BM_CounterSnapshotOneKey)->Arg(1)->Arg(16)->Arg(32)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace feedkv
