#include "storage/counter_table.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace feedkv {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

std::shared_ptr<const CounterSchema> Schema(std::string_view text = "a:20 b:44") {
  auto s = std::make_shared<CounterSchema>();
  EXPECT_TRUE(CounterSchema::ParseString(text, s.get()).ok());
  return s;
}

CounterTableMeta Meta(uint64_t capacity, uint32_t max_probes, uint64_t max_used = 0) {
  CounterTableMeta m;
  m.capacity = capacity;
  m.max_probes = max_probes;
  m.max_used = max_used ? max_used : capacity;
  m.seed1 = CounterTable::kDefaultSeed1;
  m.seed2 = CounterTable::kDefaultSeed2;
  return m;
}

std::unique_ptr<CounterTable> MustCreate(std::shared_ptr<const CounterSchema> schema,
                                         const CounterTableMeta& meta) {
  std::unique_ptr<CounterTable> t;
  Status s = CounterTable::Create(std::move(schema), meta, &t);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return t;
}

// Inserts id with field 0 = value; returns false if the probe limit ran out.
bool Put(CounterTable* t, int64_t id, uint64_t value) {
  CounterTable::Probe p = t->Lookup(id);
  EXPECT_FALSE(p.found);
  if (p.slot == CounterTable::kNoSlot) return false;
  t->schema().Store(t->Insert(id, p), 0, value);
  return true;
}

uint64_t ValueOf(const CounterTable& t, int64_t id) {
  CounterTable::Probe p = t.Lookup(id);
  EXPECT_TRUE(p.found) << id;
  return t.schema().Load(t.slot(p.slot), 0);
}

TEST(CounterTable, CapacityIsLargestPrimeThatFits) {
  EXPECT_EQ(CounterTable::CapacityFor(4096, 20), 199u);  // 204 slots fit
  EXPECT_EQ(CounterTable::CapacityFor(60, 20), 3u);
  EXPECT_EQ(CounterTable::CapacityFor(59, 20), 0u);
  EXPECT_EQ(CounterTable::CapacityFor(uint64_t{8} << 20, 20), 419429u);
}

TEST(CounterTable, CreateRejectsBadMeta) {
  auto schema = Schema();
  std::unique_ptr<CounterTable> t;
  EXPECT_TRUE(CounterTable::Create(schema, Meta(200, 8), &t).IsInvalidArgument());  // not prime
  EXPECT_TRUE(CounterTable::Create(schema, Meta(2, 8), &t).IsInvalidArgument());
  EXPECT_TRUE(CounterTable::Create(schema, Meta(199, 0), &t).IsInvalidArgument());
  EXPECT_TRUE(CounterTable::Create(schema, Meta(199, 1025), &t).IsInvalidArgument());
  EXPECT_TRUE(CounterTable::Create(schema, Meta(199, 8, 200), &t).IsInvalidArgument());
  CounterTableMeta m = Meta(199, 8);
  m.first_id = 10;
  m.last_id = 9;
  EXPECT_TRUE(CounterTable::Create(schema, m, &t).IsInvalidArgument());
  EXPECT_EQ(t, nullptr);
}

TEST(CounterTable, EmptyTableIsAllZeroAndMisses) {
  auto t = MustCreate(Schema(), Meta(199, 8));
  EXPECT_EQ(t->bytes(), 199u * 16u);
  EXPECT_GE(t->mapped_bytes(), t->bytes());
  for (size_t i = 0; i < t->bytes(); ++i) ASSERT_EQ(t->data()[i], 0);
  CounterTable::Probe p = t->Lookup(42);
  uint64_t home, step;
  t->ProbeStart(42, &home, &step);
  EXPECT_FALSE(p.found);
  EXPECT_EQ(p.slot, home);
  EXPECT_EQ(p.probes, 1u);
  EXPECT_GE(step, 1u);
  EXPECT_LT(step, 199u);
}

TEST(CounterTable, InsertLookupEraseReusesTombstone) {
  auto t = MustCreate(Schema(), Meta(199, 8));
  ASSERT_TRUE(Put(t.get(), 7, 123));
  EXPECT_EQ(ValueOf(*t, 7), 123u);
  EXPECT_EQ(t->used(), 1u);
  CounterTable::Probe p = t->Lookup(7);
  t->Erase(p);
  EXPECT_EQ(t->used(), 0u);
  EXPECT_EQ(t->tombstones(), 1u);
  CounterTable::Probe again = t->Lookup(7);
  EXPECT_FALSE(again.found);
  EXPECT_EQ(again.slot, p.slot);  // the tombstone is the insert position
  ASSERT_TRUE(Put(t.get(), 7, 5));
  EXPECT_EQ(t->tombstones(), 0u);
  EXPECT_EQ(ValueOf(*t, 7), 5u);
  EXPECT_TRUE(t->Validate().ok());
}

TEST(CounterTable, EveryIdExceptReservedFits) {
  EXPECT_TRUE(CounterTable::IsReservedId(kMin));
  EXPECT_TRUE(CounterTable::IsReservedId(kMin + 1));
  EXPECT_FALSE(CounterTable::IsReservedId(kMin + 2));
  auto t = MustCreate(Schema(), Meta(199, 64));
  const std::vector<int64_t> ids = {kMin + 2, -1, 0, 1, kMax, kMax - 1};
  for (int64_t id : ids) ASSERT_TRUE(Put(t.get(), id, static_cast<uint64_t>(id) & 0xfffff));
  for (int64_t id : ids) EXPECT_EQ(ValueOf(*t, id), static_cast<uint64_t>(id) & 0xfffff);
  int seen = 0;
  t->ForEachUsed([&](int64_t, const char*) { ++seen; });
  EXPECT_EQ(seen, 6);
}

// A prime capacity makes every step coprime with it, so with an unlimited probe budget
// the table fills to the last slot.
TEST(CounterTable, ProbeSequenceReachesEverySlot) {
  auto t = MustCreate(Schema(), Meta(101, 101));
  for (int64_t id = 0; id < 101; ++id) ASSERT_TRUE(Put(t.get(), id * 7919, 1)) << id;
  EXPECT_EQ(t->used(), 101u);
  EXPECT_TRUE(t->full());
  EXPECT_EQ(t->Lookup(-5).slot, CounterTable::kNoSlot);
  for (int64_t id = 0; id < 101; ++id) ASSERT_EQ(ValueOf(*t, id * 7919), 1u);
  EXPECT_TRUE(t->Validate().ok());
}

// Ids sharing (home, step) follow one probe sequence: after max_probes of them the next
// finds no slot, however empty the rest of the table is.
TEST(CounterTable, ProbeLimitStopsAdversarialIds) {
  auto t = MustCreate(Schema(), Meta(97, 4));
  uint64_t home0, step0;
  t->ProbeStart(1, &home0, &step0);
  std::vector<int64_t> same = {1};
  for (int64_t id = 2; same.size() < 6; ++id) {
    uint64_t h, s;
    t->ProbeStart(id, &h, &s);
    if (h == home0 && s == step0) same.push_back(id);
  }
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(Put(t.get(), same[i], i + 1));
  EXPECT_EQ(t->max_probe_seen(), 4u);
  EXPECT_DOUBLE_EQ(t->mean_probes(), 2.5);
  EXPECT_FALSE(Put(t.get(), same[4], 9));
  // Freeing one of them opens a slot the next colliding id can take.
  t->Erase(t->Lookup(same[1]));
  ASSERT_TRUE(Put(t.get(), same[5], 6));
  EXPECT_EQ(t->Lookup(same[5]).probes, 2u);
  EXPECT_EQ(ValueOf(*t, same[3]), 4u);
  EXPECT_TRUE(t->Validate().ok());
}

TEST(CounterTable, FullAtMaxUsed) {
  auto t = MustCreate(Schema(), Meta(97, 32, 10));
  for (int64_t id = 0; id < 10; ++id) {
    EXPECT_FALSE(t->full());
    ASSERT_TRUE(Put(t.get(), id, 1));
  }
  EXPECT_TRUE(t->full());
  EXPECT_NEAR(t->fill(), 10.0 / 97, 1e-12);
}

TEST(CounterTable, RangeNarrowsOnSetLastId) {
  CounterTableMeta m = Meta(97, 8);
  m.first_id = 100;
  auto t = MustCreate(Schema(), m);
  EXPECT_TRUE(t->Owns(100));
  EXPECT_TRUE(t->Owns(kMax));
  EXPECT_FALSE(t->Owns(99));
  t->set_last_id(500);
  EXPECT_TRUE(t->Owns(500));
  EXPECT_FALSE(t->Owns(501));
}

class CounterTableBytesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    schema_ = Schema("a:20 b:43");  // 63 bits: one padding bit per slot
    meta_ = Meta(97, 8, 80);
    meta_.first_id = -1000;
    meta_.last_id = 1000;
    table_ = MustCreate(schema_, meta_);
    std::mt19937_64 rng(3);
    while (table_->used() < 60) {
      const int64_t id = static_cast<int64_t>(rng() % 2001) - 1000;
      if (!table_->Lookup(id).found) Put(table_.get(), id, rng() & 0xfffff);
    }
    raw_.assign(table_->data(), table_->bytes());
  }

  Status Load(const std::string& raw, std::unique_ptr<CounterTable>* out = nullptr) {
    std::unique_ptr<CounterTable> t;
    Status s = CounterTable::FromBytes(schema_, meta_, raw, &t);
    if (out != nullptr) *out = std::move(t);
    return s;
  }

  // Index of some used slot.
  uint64_t UsedSlot() const {
    for (uint64_t i = 0;; ++i) {
      const uint64_t stored = counter_coding::LoadLE64(raw_.data() + i * schema_->slot_bytes());
      if (stored > 1) return i;
    }
  }

  std::shared_ptr<const CounterSchema> schema_;
  CounterTableMeta meta_;
  std::unique_ptr<CounterTable> table_;
  std::string raw_;
};

TEST_F(CounterTableBytesTest, RawBytesRoundTrip) {
  std::unique_ptr<CounterTable> copy;
  ASSERT_TRUE(Load(raw_, &copy).ok());
  EXPECT_EQ(copy->used(), table_->used());
  EXPECT_EQ(copy->meta(), table_->meta());
  EXPECT_DOUBLE_EQ(copy->mean_probes(), table_->mean_probes());
  EXPECT_EQ(std::string(copy->data(), copy->bytes()), raw_);
  table_->ForEachUsed(
      [&](int64_t id, const char* slot) { EXPECT_EQ(ValueOf(*copy, id), schema_->Load(slot, 0)); });
  EXPECT_TRUE(copy->Validate().ok());
}

TEST_F(CounterTableBytesTest, RejectsWrongLength) {
  EXPECT_TRUE(Load(raw_.substr(1)).IsCorruption());
  EXPECT_TRUE(Load(raw_ + "x").IsCorruption());
}

TEST_F(CounterTableBytesTest, RejectsIdOutsideRange) {
  std::string bad = raw_;
  const uint64_t i = UsedSlot();
  counter_coding::StoreLE64(bad.data() + i * schema_->slot_bytes(),
                            static_cast<uint64_t>(int64_t{5000}) ^ (uint64_t{1} << 63));
  EXPECT_TRUE(Load(bad).IsCorruption());
}

TEST_F(CounterTableBytesTest, RejectsUnreachableOrDuplicateKey) {
  const size_t sb = schema_->slot_bytes();
  const uint64_t i = UsedSlot();
  // Copy the key into every other slot in turn: each copy is either unreachable (not on
  // its probe sequence, or past an empty slot) or a duplicate of the original, whether
  // it lands on a free slot or over another key.
  for (uint64_t j = 0; j < meta_.capacity; ++j) {
    if (j == i) continue;
    std::string bad = raw_;
    std::memcpy(bad.data() + j * sb, raw_.data() + i * sb, sb);
    EXPECT_TRUE(Load(bad).IsCorruption()) << j;
  }
}

TEST_F(CounterTableBytesTest, RejectsDataInFreeSlotAndStrayPadding) {
  const size_t sb = schema_->slot_bytes();
  uint64_t free_slot = 0;
  while (counter_coding::LoadLE64(raw_.data() + free_slot * sb) > 1) ++free_slot;
  std::string bad = raw_;
  bad[free_slot * sb + 9] = 1;
  EXPECT_TRUE(Load(bad).IsCorruption());
  bad = raw_;
  bad[UsedSlot() * sb + sb - 1] |= static_cast<char>(0x80);  // the padding bit
  EXPECT_TRUE(Load(bad).IsCorruption());
}

TEST_F(CounterTableBytesTest, RejectsMoreKeysThanMaxUsed) {
  meta_.max_used = 59;
  EXPECT_TRUE(Load(raw_).IsCorruption());
}

TEST(CounterTable, MetaEncodeDecodeRoundTrip) {
  CounterTableMeta m = Meta(97, 17, 50);
  m.first_id = -12345;
  m.last_id = 987654321;
  auto t = MustCreate(Schema(), m);
  std::string enc;
  t->EncodeMeta(&enc);
  ASSERT_EQ(enc.size(), CounterTable::kMetaBytes);
  enc += "tail";
  std::string_view in = enc;
  CounterTableMeta got;
  ASSERT_TRUE(CounterTable::DecodeMeta(&in, &got).ok());
  EXPECT_EQ(got, m);
  EXPECT_EQ(in, "tail");
  std::string_view shortened = std::string_view(enc).substr(0, CounterTable::kMetaBytes - 1);
  EXPECT_TRUE(CounterTable::DecodeMeta(&shortened, &got).IsCorruption());
}

}  // namespace
}  // namespace feedkv
