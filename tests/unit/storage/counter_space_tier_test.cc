// The cold tier of a counter space (docs/counters.md, "Cold tables"): spilled tables
// leave memory, their ids are served from loaded rows and the warm cache, and snapshots
// carry what the rows on disk do not. The store is a map here, filled the way the
// server's spiller fills RocksDB (ExportSorted + EncodePacked).
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "counter_test_util.h"
#include "storage/counter_cold_rows.h"
#include "storage/counter_space.h"

namespace feedkv {
namespace {

using counter_test::kScale;
using counter_test::Schema;
using Row = std::array<uint64_t, 2>;

class FakeColdStore {
 public:
  // What the server's writer thread does with a frozen table.
  // Returns the keys left out because their counters are all zero.
  uint64_t Spill(const CounterTable& table) {
    uint64_t zero = 0;
    auto lo = rows_.lower_bound(table.first_id());
    auto hi = rows_.upper_bound(table.last_id());
    rows_.erase(lo, hi);
    Status s = counter_cold::ExportSorted(table, 97, [&](std::span<const counter_cold::SlotRef> chunk) {
      for (const auto& ref : chunk) {
        if (counter_cold::SlotIsZero(table.schema(), ref.slot)) {
          zero++;
        } else {
          rows_[ref.id] = counter_cold::EncodePacked(table.schema(), ref.slot);
        }
      }
      return Status::OK();
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
    return zero;
  }
  std::string_view Row(int64_t id) const {
    auto it = rows_.find(id);
    return it == rows_.end() ? std::string_view() : std::string_view(it->second);
  }
  void Attach(CounterSpace* space) {
    const CounterSchema* schema = &space->schema();
    space->set_cold_reader([this, schema](int64_t id, uint64_t* values, bool* found) {
      sync_reads++;
      std::string_view row = Row(id);
      *found = !row.empty();
      if (row.empty()) return Status::OK();
      return counter_cold::Decode(*schema, row, values);
    });
  }
  size_t size() const { return rows_.size(); }
  uint64_t sync_reads = 0;

 private:
  std::map<int64_t, std::string> rows_;
};

CounterOptions SmallTables() {
  CounterOptions o;
  o.table_bytes = 4096;  // ~300 keys of 12 bytes per table: many tables roll
  return o;
}

// Loads id as the server does before a command touches it.
void Load(CounterSpace* s, const FakeColdStore& store, int64_t id) {
  if (s->NeedsLoad(id)) {
    ASSERT_TRUE(s->InsertLoaded(id, store.Row(id)).ok());
  }
}

Row Get(CounterSpace* s, int64_t id) {
  Row r{};
  s->Get(id, r.data());
  return r;
}

std::unique_ptr<CounterSpace> RoundTrip(const CounterSpace& s) {
  std::string image;
  s.SerializeTo(&image);
  std::unique_ptr<CounterSpace> out;
  Status st = CounterSpace::DeserializeFrom(image, &out);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

TEST(CounterTier, SpilledTableIsServedFromLoadedRowsAndItsMemoryIsFreed) {
  CounterSpace s(Schema("a:8 b:16"), SmallTables());
  FakeColdStore store;
  for (int64_t id = 1; id <= 2000; id++) counter_test::Incr(&s, id, 0, id % 200 + 1);
  ASSERT_GE(s.num_tables(), 3u);
  const size_t before = s.TableBytes();
  const uint64_t keys = s.num_keys();
  ASSERT_EQ(s.SpillCandidate(), 0);
  std::shared_ptr<const CounterTable> frozen;
  ASSERT_TRUE(s.BeginSpill(0, &frozen).ok());
  EXPECT_EQ(s.tier(0), TableTier::kSpilling);
  // Still readable and writable while it spills.
  EXPECT_EQ(Get(&s, 5)[0], 6u);
  counter_test::Incr(&s, 5, 1, 9);
  s.CommitSpill(store.Spill(*frozen));
  frozen.reset();
  EXPECT_EQ(s.tier(0), TableTier::kCold);
  EXPECT_LT(s.TableBytes(), before);
  EXPECT_EQ(s.num_keys(), keys);
  // The written key is in memory; the others need a load.
  EXPECT_FALSE(s.NeedsLoad(5));
  EXPECT_TRUE(s.NeedsLoad(6));
  Load(&s, store, 6);
  EXPECT_FALSE(s.NeedsLoad(6));
  EXPECT_EQ(Get(&s, 6), (Row{7, 0}));
  EXPECT_EQ(Get(&s, 5), (Row{6, 9}));
  // The newest table cannot spill.
  std::shared_ptr<const CounterTable> none;
  EXPECT_FALSE(s.BeginSpill(s.num_tables() - 1, &none).ok());
  EXPECT_FALSE(s.BeginSpill(0, &none).ok());  // cold already
}

TEST(CounterTier, AbortedSpillKeepsTheWritesMadeMeanwhile) {
  CounterSpace s(Schema("a:8 b:16"), SmallTables());
  for (int64_t id = 1; id <= 1000; id++) counter_test::Incr(&s, id, 0, 1);
  counter_test::Incr(&s, 3, 0, 1000);  // wider than 8 bits: an aux key in table 0's range
  std::shared_ptr<const CounterTable> frozen;
  ASSERT_TRUE(s.BeginSpill(0, &frozen).ok());
  counter_test::Incr(&s, 2, 1, 5);
  EXPECT_TRUE(s.Del(4));
  counter_test::Incr(&s, 3, 0, 1);
  s.AbortSpill();
  EXPECT_EQ(s.tier(0), TableTier::kHot);
  EXPECT_EQ(Get(&s, 2), (Row{1, 5}));
  EXPECT_EQ(Get(&s, 4), (Row{0, 0}));
  EXPECT_EQ(Get(&s, 3), (Row{1002, 0}));
  EXPECT_EQ(Get(&s, 1), (Row{1, 0}));
  EXPECT_EQ(s.num_keys(), 999u);
  EXPECT_TRUE(s.Validate().ok()) << s.Validate().ToString();
}

// Random writes, deletes and reads across spills, aborted spills, cache trims and
// snapshot round trips, against a map.
TEST(CounterTier, MatchesAModelThroughSpillsTrimsAndSnapshots) {
  std::mt19937_64 rng(42);
  auto space = std::make_unique<CounterSpace>(Schema("a:8 b:16"), SmallTables());
  FakeColdStore store;
  store.Attach(space.get());
  std::map<int64_t, Row> model;
  int64_t next_id = 1;
  std::shared_ptr<const CounterTable> frozen;
  const int steps = 60000 / kScale;
  for (int step = 0; step < steps; step++) {
    const int op = static_cast<int>(rng() % 100);
    // Mostly new ids, some old ones (which may be cold).
    int64_t id = rng() % 4 == 0 && next_id > 1 ? 1 + static_cast<int64_t>(rng() % next_id) : next_id++;
    if (rng() % 10 != 0) Load(space.get(), store, id);  // else the synchronous reader serves it
    const size_t field = rng() % 2;
    if (op < 60) {
      // Increments only: a hot key decremented to zero stays a key, a cold one does
      // not (ZeroedKeyVanishesWhenItsTableSpills), which this model does not follow.
      const int64_t delta = 1 + static_cast<int64_t>(rng() % 300);
      uint64_t v = 0;
      ASSERT_TRUE(space->IncrBy(id, field, delta, &v).ok());
      Row& m = model[id];
      m[field] += delta;
      ASSERT_EQ(v, m[field]) << "id " << id;
    } else if (op < 70) {
      const bool existed = model.erase(id) > 0;
      ASSERT_EQ(space->Del(id), existed) << "id " << id;
    } else if (op < 95) {
      Row want = model.count(id) ? model[id] : Row{};
      ASSERT_EQ(Get(space.get(), id), want) << "id " << id << " step " << step;
      ASSERT_EQ(space->GetField(id, field), want[field]);
    } else if (op < 97) {
      if (frozen) {
        if (rng() % 4 == 0) {
          if (rng() % 2) frozen.reset();  // the spiller let go: the table is swapped back
          space->AbortSpill();
        } else {
          space->CommitSpill(store.Spill(*frozen));
        }
        frozen.reset();
      } else if (int t = space->SpillCandidate(); t >= 0) {
        ASSERT_TRUE(space->BeginSpill(static_cast<size_t>(t), &frozen).ok());
        space->set_cold_generation(1);
      }
    } else if (op < 99) {
      space->TrimWarm(rng() % 2 ? 0 : 4096, 1000);
    } else {
      space = RoundTrip(*space);  // a spilling table comes back hot
      ASSERT_NE(space, nullptr);
      frozen.reset();
      store.Attach(space.get());
    }
    ASSERT_EQ(space->num_keys(), model.size()) << "step " << step;
  }
  for (const auto& [id, row] : model) {
    Load(space.get(), store, id);
    ASSERT_EQ(Get(space.get(), id), row) << "id " << id;
  }
  size_t cold = 0;
  for (size_t i = 0; i < space->num_tables(); i++) cold += space->tier(i) == TableTier::kCold;
  EXPECT_GT(cold, 3u);
  EXPECT_GT(store.sync_reads, 0u);
}

TEST(CounterTier, ZeroedKeyVanishesWhenItsTableSpills) {
  CounterSpace s(Schema("a:8 b:16"), SmallTables());
  FakeColdStore store;
  for (int64_t id = 1; id <= 1000; id++) counter_test::Incr(&s, id, 0, 2);
  counter_test::Incr(&s, 7, 0, -2);  // all zero, still a hot key
  counter_test::Incr(&s, 8, 0, -2);
  EXPECT_TRUE(s.Exists(7));
  EXPECT_EQ(s.num_keys(), 1000u);
  std::shared_ptr<const CounterTable> frozen;
  ASSERT_TRUE(s.BeginSpill(0, &frozen).ok());
  counter_test::Incr(&s, 8, 1, 1);  // written again while spilling
  s.CommitSpill(store.Spill(*frozen));
  EXPECT_EQ(s.num_keys(), 999u);
  Load(&s, store, 7);
  EXPECT_FALSE(s.Exists(7));
  EXPECT_FALSE(s.Del(7));
  EXPECT_EQ(Get(&s, 8), (Row{0, 1}));
}

TEST(CounterTier, SnapshotKeepsColdTablesAndWrittenColdKeys) {
  CounterSpace s(Schema("a:8 b:16"), SmallTables());
  FakeColdStore store;
  for (int64_t id = 1; id <= 1000; id++) counter_test::Incr(&s, id, 0, 2);
  std::shared_ptr<const CounterTable> frozen;
  s.set_cold_generation(77);
  ASSERT_TRUE(s.BeginSpill(0, &frozen).ok());
  s.CommitSpill(store.Spill(*frozen));
  Load(&s, store, 10);
  counter_test::Incr(&s, 10, 1, 3);
  Load(&s, store, 11);  // loaded, not written: not in the image
  std::unique_ptr<CounterSpace> back = RoundTrip(s);
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->cold_generation(), 77u);
  EXPECT_EQ(back->tier(0), TableTier::kCold);
  EXPECT_EQ(back->num_keys(), s.num_keys());
  EXPECT_FALSE(back->NeedsLoad(10));
  EXPECT_TRUE(back->NeedsLoad(11));
  EXPECT_EQ(Get(back.get(), 10), (Row{2, 3}));
  Load(back.get(), store, 11);
  EXPECT_EQ(Get(back.get(), 11), (Row{2, 0}));
}

}  // namespace
}  // namespace feedkv
