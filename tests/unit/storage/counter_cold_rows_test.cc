#include "storage/counter_cold_rows.h"

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <memory>
#include <random>

namespace feedkv {
namespace {

std::shared_ptr<const CounterSchema> Schema(std::string_view text) {
  auto s = std::make_shared<CounterSchema>();
  EXPECT_TRUE(CounterSchema::ParseString(text, s.get()).ok());
  return s;
}

std::unique_ptr<CounterTable> Table(std::shared_ptr<const CounterSchema> schema, uint64_t capacity) {
  CounterTableMeta m;
  m.capacity = capacity;  // prime
  m.max_probes = 64;
  m.max_used = capacity;
  m.seed1 = CounterTable::kDefaultSeed1;
  m.seed2 = CounterTable::kDefaultSeed2;
  std::unique_ptr<CounterTable> t;
  EXPECT_TRUE(CounterTable::Create(std::move(schema), m, &t).ok());
  return t;
}

TEST(CounterColdRowsTest, PackedAndWideRowsDecodeToTheirCounters) {
  auto schema = Schema("repost:20 comment:20 like:24 read:32");
  const uint64_t fit[4] = {1, (1 << 20) - 1, 12345, 4000000000u};
  std::string row = counter_cold::Encode(*schema, fit);
  EXPECT_EQ(row[0], counter_cold::kPacked);
  EXPECT_EQ(row.size(), 1 + schema->slot_bytes() - 8);
  uint64_t got[4];
  ASSERT_TRUE(counter_cold::Decode(*schema, row, got).ok());
  EXPECT_EQ(std::vector<uint64_t>(got, got + 4), std::vector<uint64_t>(fit, fit + 4));
  const uint64_t wide[4] = {1u << 21, 0, std::numeric_limits<uint64_t>::max(), 7};
  row = counter_cold::Encode(*schema, wide);
  EXPECT_EQ(row[0], counter_cold::kWide);
  ASSERT_TRUE(counter_cold::Decode(*schema, row, got).ok());
  EXPECT_EQ(std::vector<uint64_t>(got, got + 4), std::vector<uint64_t>(wide, wide + 4));
  EXPECT_TRUE(counter_cold::Decode(*schema, "", got).IsCorruption());
  EXPECT_TRUE(counter_cold::Decode(*schema, row.substr(0, row.size() - 1), got).IsCorruption());
  std::string bad = row;
  bad[0] = 9;
  EXPECT_TRUE(counter_cold::Decode(*schema, bad, got).IsCorruption());
}

TEST(CounterColdRowsTest, ExportHandsOutEveryKeyOnceInIdOrderInBoundedChunks) {
  auto schema = Schema("a:20 b:44");
  auto t = Table(schema, 20011);
  std::map<int64_t, uint64_t> model;
  std::mt19937_64 rng(3);
  // Ids spread over the whole int64 range, plus a dense run (a skewed histogram).
  while (model.size() < 12000) {
    const int64_t id = model.size() < 6000 ? static_cast<int64_t>(rng() | 2)
                                           : 1000000 + static_cast<int64_t>(rng() % 20000);
    if (model.count(id)) continue;
    CounterTable::Probe p = t->Lookup(id);
    if (p.slot == CounterTable::kNoSlot) continue;
    const uint64_t v = rng() % (1 << 20);
    schema->Store(t->Insert(id, p), 0, v);
    model[id] = v;
  }
  std::vector<int64_t> seen;
  size_t chunks = 0;
  size_t largest = 0;
  Status s = counter_cold::ExportSorted(*t, 1000, [&](std::span<const counter_cold::SlotRef> rows) {
    chunks++;
    largest = std::max(largest, rows.size());
    for (const auto& r : rows) {
      EXPECT_TRUE(seen.empty() || seen.back() < r.id);
      seen.push_back(r.id);
      uint64_t got[2];
      EXPECT_TRUE(counter_cold::Decode(*schema, counter_cold::EncodePacked(*schema, r.slot), got).ok());
      EXPECT_EQ(got[0], model.at(r.id));
    }
    return Status::OK();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(seen.size(), model.size());
  EXPECT_GE(chunks, 12u);
  // The dense run falls into one bucket of the first split: split again, it
  // still comes out in chunks of at most 1000.
  EXPECT_LE(largest, 1000u);
}

TEST(CounterColdRowsTest, ExportStopsAtTheFirstErrorAndSkipsAnEmptyTable) {
  auto schema = Schema("a:8");
  auto empty = Table(schema, 101);
  int calls = 0;
  auto count = [&](std::span<const counter_cold::SlotRef>) {
    calls++;
    return Status::IOError("disk gone");
  };
  EXPECT_TRUE(counter_cold::ExportSorted(*empty, 10, count).ok());
  EXPECT_EQ(calls, 0);
  auto t = Table(schema, 1009);
  for (int64_t id = 1; id <= 500; id++) {
    CounterTable::Probe p = t->Lookup(id);
    if (p.slot != CounterTable::kNoSlot) schema->Store(t->Insert(id, p), 0, 1);
  }
  EXPECT_TRUE(counter_cold::ExportSorted(*t, 10, count).IsIOError());
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace feedkv
