#include "storage/cold/cold_store.h"

#include "storage/counter_cold_rows.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>

namespace feedkv {
namespace {

namespace fs = std::filesystem;

class ColdStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("cold_store_test_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(root_);
  }

  std::string dir() const { return (root_ / "cold").string(); }

  Status Open(const std::string& d) {
    ColdStoreOptions o;
    o.dir = d;
    o.block_cache_bytes = 8 << 20;
    return ColdStore::Open(o, &store_);
  }
  void OpenOrDie() { ASSERT_TRUE(Open(dir()).ok()); }

  // Ingests the map's rows (already in id order).
  Status Ingest(const std::string& space, const std::map<int64_t, std::string>& rows) {
    auto it = rows.begin();
    return store_->IngestSorted(space, [&](int64_t* id, std::string_view* v) {
      if (it == rows.end()) return false;
      *id = it->first;
      *v = it->second;
      ++it;
      return true;
    });
  }

  std::optional<std::string> Get(const std::string& space, int64_t id) {
    std::optional<std::string> v;
    Status s = store_->Get(space, id, &v);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return v;
  }

  fs::path root_;
  std::unique_ptr<ColdStore> store_;
};

TEST_F(ColdStoreTest, EncodedIdsSortAsTheIdsDo) {
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> ids = {kMin, kMin + 1, -1000000007, -1, 0, 1, 255, 256, 1LL << 40, kMax};
  for (size_t i = 0; i < ids.size(); i++) {
    EXPECT_EQ(ColdStore::DecodeId(ColdStore::EncodeId(ids[i])), ids[i]);
    EXPECT_EQ(ColdStore::EncodeId(ids[i]).size(), 8u);
    if (i > 0) {
      EXPECT_LT(ColdStore::EncodeId(ids[i - 1]), ColdStore::EncodeId(ids[i])) << ids[i];
    }
  }
}

TEST_F(ColdStoreTest, IngestedRowsReadBackAndOtherIdsAreAbsent) {
  OpenOrDie();
  ASSERT_TRUE(store_->EnsureSpace("post").ok());
  std::map<int64_t, std::string> rows;
  for (int64_t id = -500; id < 5000; id += 3) rows[id] = "v" + std::to_string(id);
  ASSERT_TRUE(Ingest("post", rows).ok());
  EXPECT_EQ(Get("post", -500), "v-500");
  EXPECT_EQ(Get("post", 4999 - (4999 + 500) % 3), "v" + std::to_string(4999 - (4999 + 500) % 3));
  EXPECT_EQ(Get("post", -499), std::nullopt);
  EXPECT_EQ(Get("post", 1LL << 50), std::nullopt);
  ColdSpaceStats st;
  ASSERT_TRUE(store_->SpaceStats("post", &st).ok());
  EXPECT_GT(st.sst_bytes, 0u);
  EXPECT_GT(st.estimated_keys, 0u);
}

TEST_F(ColdStoreTest, MultiGetAnswersInTheCallersOrderWithRepeats) {
  OpenOrDie();
  ASSERT_TRUE(store_->EnsureSpace("s").ok());
  ASSERT_TRUE(Ingest("s", {{1, "one"}, {2, "two"}, {3, "three"}}).ok());
  std::vector<int64_t> ids = {3, 99, 1, 3, -7, 2};
  std::vector<std::optional<std::string>> got;
  ASSERT_TRUE(store_->MultiGet("s", ids, &got).ok());
  ASSERT_EQ(got.size(), ids.size());
  EXPECT_EQ(got[0], "three");
  EXPECT_EQ(got[1], std::nullopt);
  EXPECT_EQ(got[2], "one");
  EXPECT_EQ(got[3], "three");
  EXPECT_EQ(got[4], std::nullopt);
  EXPECT_EQ(got[5], "two");
}

TEST_F(ColdStoreTest, WritesOverrideIngestedRowsAndDeleteThem) {
  OpenOrDie();
  ASSERT_TRUE(store_->EnsureSpace("s").ok());
  ASSERT_TRUE(Ingest("s", {{10, "a"}, {20, "b"}, {30, "c"}}).ok());
  std::vector<ColdMutation> m = {{20, "B"}, {30, std::nullopt}, {40, "d"}};
  ASSERT_TRUE(store_->Write("s", m, /*wal=*/false).ok());
  EXPECT_EQ(Get("s", 10), "a");
  EXPECT_EQ(Get("s", 20), "B");
  EXPECT_EQ(Get("s", 30), std::nullopt);
  EXPECT_EQ(Get("s", 40), "d");
  // A later ingest of the same ids (a re-spill) wins over older rows.
  ASSERT_TRUE(Ingest("s", {{20, "B2"}, {30, "C2"}}).ok());
  EXPECT_EQ(Get("s", 20), "B2");
  EXPECT_EQ(Get("s", 30), "C2");
  std::vector<std::pair<int64_t, std::string>> seen;
  ASSERT_TRUE(store_->ForEach("s", [&](int64_t id, std::string_view v) {
                      seen.emplace_back(id, std::string(v));
                      return true;
                    }).ok());
  std::vector<std::pair<int64_t, std::string>> want = {{10, "a"}, {20, "B2"}, {30, "C2"}, {40, "d"}};
  EXPECT_EQ(seen, want);
}

TEST_F(ColdStoreTest, RowsOutOfOrderAreRefusedAndLeaveNothingBehind) {
  OpenOrDie();
  ASSERT_TRUE(store_->EnsureSpace("s").ok());
  std::vector<int64_t> ids = {1, 5, 5};
  size_t i = 0;
  Status s = store_->IngestSorted("s", [&](int64_t* id, std::string_view* v) {
    if (i == ids.size()) return false;
    *id = ids[i++];
    *v = "x";
    return true;
  });
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(Get("s", 1), std::nullopt);
  size_t files = 0;
  if (fs::exists(fs::path(dir()) / "ingest")) {
    for (const auto& e : fs::directory_iterator(fs::path(dir()) / "ingest")) files += e.exists();
  }
  EXPECT_EQ(files, 0u);
  EXPECT_TRUE(store_->IngestSorted("nospace", [](int64_t*, std::string_view*) { return false; })
                  .IsNotFound());
}

TEST_F(ColdStoreTest, SpacesAreSeparateAndSurviveAReopen) {
  OpenOrDie();
  ASSERT_TRUE(store_->EnsureSpace("a").ok());
  ASSERT_TRUE(store_->EnsureSpace("b").ok());
  ASSERT_TRUE(store_->EnsureSpace("a").ok());  // twice is fine
  ASSERT_TRUE(Ingest("a", {{1, "in-a"}}).ok());
  std::vector<ColdMutation> m = {{1, "in-b"}, {2, "two"}};
  ASSERT_TRUE(store_->Write("b", m, /*wal=*/false).ok());  // WAL-less: kept by the close's flush
  EXPECT_EQ(Get("a", 1), "in-a");
  EXPECT_EQ(Get("b", 1), "in-b");
  EXPECT_EQ(Get("a", 2), std::nullopt);
  store_.reset();
  OpenOrDie();
  EXPECT_EQ(store_->Spaces(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Get("a", 1), "in-a");
  EXPECT_EQ(Get("b", 2), "two");
  ASSERT_TRUE(store_->DropSpace("a").ok());
  EXPECT_FALSE(store_->HasSpace("a"));
  ASSERT_TRUE(store_->DropSpace("a").ok());
  std::optional<std::string> v;
  EXPECT_TRUE(store_->Get("a", 1, &v).IsNotFound());
  ASSERT_TRUE(store_->EnsureSpace("a").ok());
  EXPECT_EQ(Get("a", 1), std::nullopt);  // a new space of the same name starts empty
}

TEST_F(ColdStoreTest, ACheckpointIsTheStateAtThatMomentAndOpensOnItsOwn) {
  OpenOrDie();
  ASSERT_TRUE(store_->EnsureSpace("s").ok());
  ASSERT_TRUE(Ingest("s", {{1, "old"}}).ok());
  std::vector<ColdMutation> m = {{2, "wal-less"}};
  ASSERT_TRUE(store_->Write("s", m, /*wal=*/false).ok());
  const std::string ckpt = (root_ / "ckpt").string();
  ASSERT_TRUE(store_->Checkpoint(ckpt).ok());
  std::vector<ColdMutation> later = {{1, "new"}, {2, std::nullopt}};
  ASSERT_TRUE(store_->Write("s", later, /*wal=*/true).ok());
  EXPECT_FALSE(store_->Checkpoint(ckpt).ok());  // the directory exists now
  store_.reset();
  ASSERT_TRUE(Open(ckpt).ok());
  EXPECT_EQ(Get("s", 1), "old");
  EXPECT_EQ(Get("s", 2), "wal-less");
  store_.reset();
  OpenOrDie();
  EXPECT_EQ(Get("s", 1), "new");
  EXPECT_EQ(Get("s", 2), std::nullopt);
}

TEST_F(ColdStoreTest, ADamagedStoreRefusesToOpenAndNamesItsDirectory) {
  OpenOrDie();
  ASSERT_TRUE(store_->EnsureSpace("s").ok());
  ASSERT_TRUE(Ingest("s", {{1, "x"}}).ok());
  store_.reset();
  // CURRENT names the live MANIFEST: point it at garbage.
  std::ofstream(fs::path(dir()) / "CURRENT", std::ios::trunc) << "MANIFEST-999999\n";
  Status s = Open(dir());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(dir()), std::string::npos) << s.ToString();
}

TEST_F(ColdStoreTest, ManyRandomWritesMatchAMapModel) {
  OpenOrDie();
  ASSERT_TRUE(store_->EnsureSpace("s").ok());
  std::map<int64_t, std::string> model;
  std::mt19937_64 rng(42);
  std::map<int64_t, std::string> first;
  for (int i = 0; i < 2000; i++) first[static_cast<int64_t>(rng() % 100000) - 50000] = std::to_string(i);
  ASSERT_TRUE(Ingest("s", first).ok());
  model = first;
  for (int round = 0; round < 20; round++) {
    std::vector<ColdMutation> batch;
    for (int j = 0; j < 100; j++) {
      int64_t id = static_cast<int64_t>(rng() % 100000) - 50000;
      if (rng() % 4 == 0) {
        batch.push_back({id, std::nullopt});
        model.erase(id);
      } else {
        std::string v = std::to_string(round * 1000 + j);
        batch.push_back({id, v});
        model[id] = v;
      }
    }
    ASSERT_TRUE(store_->Write("s", batch, round % 2 == 0).ok());
  }
  std::vector<int64_t> probe;
  for (int i = 0; i < 3000; i++) probe.push_back(static_cast<int64_t>(rng() % 100000) - 50000);
  std::vector<std::optional<std::string>> got;
  ASSERT_TRUE(store_->MultiGet("s", probe, &got).ok());
  for (size_t i = 0; i < probe.size(); i++) {
    auto it = model.find(probe[i]);
    EXPECT_EQ(got[i], it == model.end() ? std::nullopt : std::optional<std::string>(it->second))
        << probe[i];
  }
  size_t rows = 0;
  ASSERT_TRUE(store_->ForEach("s", [&](int64_t id, std::string_view v) {
                      EXPECT_EQ(model.at(id), v);
                      rows++;
                      return true;
                    }).ok());
  EXPECT_EQ(rows, model.size());
}

TEST_F(ColdStoreTest, ASpilledTableReadsBackIdForIdFromTheStore) {
  auto schema = std::make_shared<CounterSchema>();
  ASSERT_TRUE(CounterSchema::ParseString("repost:20 comment:20 like:24 read:32", schema.get()).ok());
  CounterTableMeta m;
  m.capacity = 50021;
  m.max_probes = 64;
  m.max_used = m.capacity;
  m.seed1 = CounterTable::kDefaultSeed1;
  m.seed2 = CounterTable::kDefaultSeed2;
  std::unique_ptr<CounterTable> t;
  ASSERT_TRUE(CounterTable::Create(schema, m, &t).ok());
  std::map<int64_t, uint64_t> model;  // id -> like
  std::mt19937_64 rng(11);
  for (int i = 0; i < 40000; i++) {
    const int64_t id = static_cast<int64_t>(rng() % 10000000);
    CounterTable::Probe p = t->Lookup(id);
    if (p.found || p.slot == CounterTable::kNoSlot) continue;
    const uint64_t like = rng() % (1 << 24);
    schema->Store(t->Insert(id, p), 2, like);
    model[id] = like;
  }
  OpenOrDie();
  ASSERT_TRUE(store_->EnsureSpace("post").ok());
  // One SST file per chunk, as a spill writes them.
  Status s = counter_cold::ExportSorted(*t, 8192, [&](std::span<const counter_cold::SlotRef> rows) {
    size_t i = 0;
    std::string row;  // the view handed out stays valid until the next call
    return store_->IngestSorted("post", [&](int64_t* id, std::string_view* v) {
      if (i == rows.size()) return false;
      *id = rows[i].id;
      row = counter_cold::EncodePacked(*schema, rows[i].slot);
      *v = row;
      i++;
      return true;
    });
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::vector<int64_t> ids;
  for (int i = 0; i < 2000; i++) ids.push_back(static_cast<int64_t>(rng() % 10000000));
  std::vector<std::optional<std::string>> rows;
  ASSERT_TRUE(store_->MultiGet("post", ids, &rows).ok());
  size_t hits = 0;
  for (size_t i = 0; i < ids.size(); i++) {
    auto it = model.find(ids[i]);
    ASSERT_EQ(rows[i].has_value(), it != model.end()) << ids[i];
    if (!rows[i]) continue;
    uint64_t v[4];
    ASSERT_TRUE(counter_cold::Decode(*schema, *rows[i], v).ok());
    EXPECT_EQ(v[2], it->second);
    EXPECT_EQ(v[0] + v[1] + v[3], 0u);
    hits++;
  }
  EXPECT_GT(hits, 0u);
  size_t n = 0;
  ASSERT_TRUE(store_->ForEach("post", [&](int64_t, std::string_view) { return ++n > 0; }).ok());
  EXPECT_EQ(n, model.size());
}

}  // namespace
}  // namespace feedkv
