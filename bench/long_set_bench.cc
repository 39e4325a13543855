// LongSet micro-benchmarks. The Add/Contains benchmarks measure the hot paths; the
// FillSweep and GrowthSweep benchmarks print the counters used to choose the defaults
// of longset-max-fill and longset-growth-factor (tables in docs/longset.md):
//
//   long_set_bench --benchmark_filter='FillSweep|GrowthSweep' --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "storage/long_set.h"

namespace feedkv {
namespace {

std::vector<int64_t> RandomIds(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> ids(n);
  for (auto& v : ids) v = static_cast<int64_t>(rng() >> 1) + 1;  // positive, never 0
  return ids;
}

std::unique_ptr<LongSet> Built(const std::vector<int64_t>& ids, const LongSetOptions& opts) {
  std::unique_ptr<LongSet> s;
  if (!LongSet::Build(ids, opts, LongSet::kDefaultSeed1, LongSet::kDefaultSeed2, &s).ok()) {
    std::abort();
  }
  return s;
}

// Inserting n ids one by one into an empty set, growth included.
void BM_LongSetAdd(benchmark::State& state) {
  const auto ids = RandomIds(state.range(0), 1);
  const LongSetOptions opts;
  for (auto _ : state) {
    LongSet s;
    bool added = false;
    for (int64_t v : ids) benchmark::DoNotOptimize(s.Add(v, opts, &added).ok());
    benchmark::DoNotOptimize(s.size());
  }
  state.SetItemsProcessed(state.iterations() * ids.size());
}
BENCHMARK(BM_LongSetAdd)->Arg(1000)->Arg(50000)->Arg(1000000)->Unit(benchmark::kMicrosecond);

// Add with growth factor range(0)/100 (max fill 0.9): the time cost of growing in
// smaller steps.
void BM_LongSetAddGrowth(benchmark::State& state) {
  const auto ids = RandomIds(1000000, 1);
  LongSetOptions opts;
  opts.growth_factor = state.range(0) / 100.0;
  for (auto _ : state) {
    LongSet s;
    bool added = false;
    for (int64_t v : ids) benchmark::DoNotOptimize(s.Add(v, opts, &added).ok());
  }
  state.SetItemsProcessed(state.iterations() * ids.size());
}
BENCHMARK(BM_LongSetAddGrowth)
    ->Arg(120)
    ->Arg(125)
    ->Arg(130)
    ->Arg(140)
    ->Arg(200)
    ->Unit(benchmark::kMillisecond);

// The same after Reserve(n): no growth, fill ends at max_fill.
void BM_LongSetAddReserved(benchmark::State& state) {
  const auto ids = RandomIds(state.range(0), 1);
  const LongSetOptions opts;
  for (auto _ : state) {
    LongSet s;
    if (!s.Reserve(ids.size(), opts).ok()) std::abort();
    bool added = false;
    for (int64_t v : ids) benchmark::DoNotOptimize(s.Add(v, opts, &added).ok());
  }
  state.SetItemsProcessed(state.iterations() * ids.size());
}
BENCHMARK(BM_LongSetAddReserved)
    ->Arg(1000)
    ->Arg(50000)
    ->Arg(1000000)
    ->Unit(benchmark::kMicrosecond);

// Lookups in a set grown by Add (fill anywhere between post-grow and max fill).
void ContainsBench(benchmark::State& state, bool hit) {
  const auto ids = RandomIds(state.range(0), 1);
  LongSet s;
  bool added = false;
  for (int64_t v : ids) {
    if (!s.Add(v, {}, &added).ok()) std::abort();
  }
  auto probes = hit ? ids : RandomIds(ids.size(), 2);
  std::shuffle(probes.begin(), probes.end(), std::mt19937_64(3));
  size_t i = 0, found = 0;
  for (auto _ : state) {
    found += s.Contains(probes[i]);
    if (++i == probes.size()) i = 0;
  }
  benchmark::DoNotOptimize(found);
  state.SetItemsProcessed(state.iterations());
  state.counters["fill"] = static_cast<double>(s.size()) / s.capacity();
}
void BM_LongSetContainsHit(benchmark::State& state) { ContainsBench(state, true); }
void BM_LongSetContainsMiss(benchmark::State& state) { ContainsBench(state, false); }
// LSSET's cost: validating and adopting a client-built image of n members.
void BM_LongSetFromImage(benchmark::State& state) {
  const LongSetOptions opts;
  std::string image;
  Built(RandomIds(state.range(0), 7), opts)->SerializeImage(&image);
  for (auto _ : state) {
    std::unique_ptr<LongSet> s;
    if (!LongSet::FromImage(image, opts, &s).ok()) std::abort();
    benchmark::DoNotOptimize(s->size());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_LongSetFromImage)->Arg(10000)->Arg(1000000)->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_LongSetContainsHit)->Arg(1000)->Arg(50000)->Arg(1000000);
BENCHMARK(BM_LongSetContainsMiss)->Arg(1000)->Arg(50000)->Arg(1000000);

// Remove one member and add another at a steady size (tombstones and rebuilds).
void BM_LongSetChurn(benchmark::State& state) {
  const size_t n = state.range(0);
  const auto ids = RandomIds(n * 8, 4);
  LongSet s;
  bool added = false;
  for (size_t i = 0; i < n; ++i) {
    if (!s.Add(ids[i], {}, &added).ok()) std::abort();
  }
  size_t out = 0, in = n;
  for (auto _ : state) {
    s.Remove(ids[out]);
    if (!s.Add(ids[in], {}, &added).ok()) std::abort();
    if (++out == ids.size()) out = 0;
    if (++in == ids.size()) in = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LongSetChurn)->Arg(1000)->Arg(50000)->Arg(1000000);

// A table filled to exactly max_fill = range(0)/100 (the worst point before a grow):
// bytes/member, successful and unsuccessful probe lengths, and lookup time.
void BM_LongSetFillSweep(benchmark::State& state) {
  constexpr size_t kN = 1000000;
  LongSetOptions opts;
  opts.max_fill = state.range(0) / 100.0;
  const auto ids = RandomIds(kN, 5);
  auto s = Built(ids, opts);
  const auto misses = RandomIds(200000, 6);
  uint64_t miss_total = 0;
  uint32_t miss_max = 0;
  for (int64_t v : misses) {
    const uint32_t p = s->ProbeCount(v);
    miss_total += p;
    miss_max = std::max(miss_max, p);
  }
  const LongSetProbeStats st = s->Stats();
  size_t i = 0, found = 0;
  for (auto _ : state) {
    found += s->Contains(ids[i]);
    found += s->Contains(misses[i % misses.size()]);
    if (++i == ids.size()) i = 0;
  }
  benchmark::DoNotOptimize(found);
  state.SetItemsProcessed(state.iterations() * 2);
  state.counters["fill"] = st.fill;
  state.counters["bytes_per_member"] = static_cast<double>(s->MemoryUsage()) / s->size();
  state.counters["hit_mean"] = st.mean_probe;
  state.counters["hit_max"] = st.max_probe;
  state.counters["miss_mean"] = static_cast<double>(miss_total) / misses.size();
  state.counters["miss_max"] = miss_max;
}
BENCHMARK(BM_LongSetFillSweep)->Apply([](benchmark::internal::Benchmark* b) {
  for (int fill : {50, 60, 70, 75, 80, 85, 90, 93, 95, 99}) b->Arg(fill);
});

// Grows a set from empty to 2M members with max_fill = range(0)/100 and growth =
// range(1)/100, sampling memory per member at every size from 200 members up.
void BM_LongSetGrowthSweep(benchmark::State& state) {
  constexpr size_t kN = 2000000;
  LongSetOptions opts;
  opts.max_fill = state.range(0) / 100.0;
  opts.growth_factor = state.range(1) / 100.0;
  const auto ids = RandomIds(kN, 7);
  double worst = 0, sum = 0, worst_mean_probe = 0;
  size_t samples = 0, grows = 0;
  for (auto _ : state) {
    LongSet s;
    bool added = false;
    uint64_t cap = s.capacity();
    for (size_t i = 0; i < kN; ++i) {
      if (i >= 199 && i % 50000 == 49999 && s.capacity() == cap) {
        // Probe lengths are worst just before a grow; sample them on the way.
        worst_mean_probe = std::max(worst_mean_probe, s.Stats().mean_probe);
      }
      if (!s.Add(ids[i], opts, &added).ok()) std::abort();
      if (s.capacity() != cap) {
        cap = s.capacity();
        ++grows;
      }
      if (s.size() >= 200) {
        const double b = static_cast<double>(s.MemoryUsage()) / s.size();
        worst = std::max(worst, b);
        sum += b;
        ++samples;
      }
    }
  }
  state.SetItemsProcessed(state.iterations() * kN);
  state.counters["worst_bytes"] = worst;
  state.counters["mean_bytes"] = sum / samples;
  state.counters["grows"] = static_cast<double>(grows) / state.iterations();
  state.counters["worst_hit_mean"] = worst_mean_probe;
}

constexpr int kGrowthSweep[][2] = {{90, 130}, {90, 125}, {90, 120}, {90, 140},
                                   {90, 150}, {90, 200}, {85, 125}, {85, 130},
                                   {80, 120}, {95, 140}, {75, 200}, {50, 200}};
BENCHMARK(BM_LongSetGrowthSweep)
    ->Apply([](benchmark::internal::Benchmark* b) {
      for (const auto& args : kGrowthSweep) b->Args({args[0], args[1]});
    })
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace feedkv
