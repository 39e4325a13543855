// Unit tests for Database (the keyspace): string encodings, expire add /
// remove / relayout, lazy and active expiry, SCAN's guarantee across resizes,
// MoveKey / CopyKey, in-place string edits, and memory accounting.
#include "storage/database.h"
#include "database_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace feedkv {
namespace {

// A minimal object whose size the test controls, to check the accounting of
// values that change in place.
class FakeObject : public Object {
 public:
  explicit FakeObject(size_t bytes) : bytes_(bytes) {}
  ValueType type() const override { return ValueType::kSet; }
  std::string_view encoding() const override { return "fake"; }
  size_t MemoryUsage() const override { return bytes_; }
  std::unique_ptr<Object> Clone() const override { return std::make_unique<FakeObject>(bytes_); }
  void SerializeTo(std::string* out) const override { out->append(std::to_string(bytes_)); }
  uint64_t Digest() const override { return bytes_; }
  void set_bytes(size_t b) { bytes_ = b; }

 private:
  size_t bytes_;
};

std::string Value(const Database& db, std::string_view key) {
  const Entry* e = db.Find(key);
  if (e == nullptr) return "<none>";
  std::string scratch;
  return std::string(Database::StringValue(e, &scratch));
}

std::string Key(int i) { return "key:" + std::to_string(i); }

TEST(DatabaseTest, EmptyDatabase) {
  Database db(3);
  EXPECT_EQ(db.index(), 3);
  EXPECT_EQ(db.size(), 0u);
  EXPECT_EQ(db.Find("a"), nullptr);
  EXPECT_EQ(db.Lookup("a", 0), nullptr);
  EXPECT_EQ(db.RandomEntry(42), nullptr);
  EXPECT_FALSE(db.Delete("a"));
  uint64_t cursor = db.Scan(0, 100, [](const Entry*) { FAIL(); });
  EXPECT_EQ(cursor, 0u);
}

TEST(DatabaseTest, CanonicalIntegersAreIntEncoded) {
  Database db(0);
  for (const char* v : {"0", "1", "-1", "123456", "9223372036854775807", "-9223372036854775808"}) {
    const Entry* e = db.SetString("k", v, kNoExpire, false);
    EXPECT_EQ(e->encoding, kEncInt) << v;
    EXPECT_EQ(Value(db, "k"), v);
    int64_t n;
    ASSERT_TRUE(Database::StringAsInteger(e, &n));
    EXPECT_EQ(std::to_string(n), v);
  }
}

TEST(DatabaseTest, NonCanonicalIntegersStayStrings) {
  Database db(0);
  for (const char* v : {"007", "-0", "+1", " 1", "1 ", "9223372036854775808", "", "-", "1.0"}) {
    const Entry* e = db.SetString("k", v, kNoExpire, false);
    EXPECT_EQ(e->encoding, kEncEmbedded) << v;
    EXPECT_EQ(Value(db, "k"), v);
    int64_t n;
    EXPECT_FALSE(Database::StringAsInteger(e, &n)) << v;  // Redis's string2ll is strict
  }
}

TEST(DatabaseTest, EmbeddedUpToTheEmbedLimitThenRaw) {
  Database db(0);
  std::string v44(kEmbedMax, 'x'), v45(kEmbedMax + 1, 'y');
  EXPECT_EQ(db.SetString("a", v44, kNoExpire, false)->encoding, kEncEmbedded);
  EXPECT_EQ(db.SetString("b", v45, kNoExpire, false)->encoding, kEncRaw);
  EXPECT_EQ(Value(db, "a"), v44);
  EXPECT_EQ(Value(db, "b"), v45);
  // Overwriting changes the encoding both ways.
  EXPECT_EQ(db.SetString("b", "short", kNoExpire, false)->encoding, kEncEmbedded);
  EXPECT_EQ(db.SetString("a", "17", kNoExpire, false)->encoding, kEncInt);
  EXPECT_EQ(db.size(), 2u);
}

TEST(DatabaseTest, StringValueWithStackBuffer) {
  Database db(0);
  char buf[Database::kIntBufSize];
  const Entry* e = db.SetString("i", "-9223372036854775808", kNoExpire, false);
  EXPECT_EQ(Database::StringValue(e, buf), "-9223372036854775808");
  e = db.SetString("s", "hello", 1000, false);
  EXPECT_EQ(Database::StringValue(e, buf), "hello");
  std::string big(100, 'z');
  e = db.SetString("r", big, kNoExpire, false);
  EXPECT_EQ(Database::StringValue(e, buf), big);
}

TEST(DatabaseTest, SetIntegerUpdatesInPlaceAndKeepsExpire) {
  Database db(0);
  Entry* e = db.SetInteger("n", 5, 123456, false);
  EXPECT_EQ(e->encoding, kEncInt);
  Entry* again = db.SetInteger("n", 6, kNoExpire, /*keep_ttl=*/true);
  EXPECT_EQ(again, e);  // no new block
  ASSERT_TRUE(again->has_expire);
  EXPECT_EQ(again->expire_ms(), 123456);
  EXPECT_TRUE(Database::UpdateIntegerInPlace(again, 7));
  EXPECT_EQ(Value(db, "n"), "7");
  // Not keeping the TTL rebuilds the block without the expire.
  Entry* plain = db.SetInteger("n", 8, kNoExpire, false);
  EXPECT_FALSE(plain->has_expire);
  EXPECT_EQ(db.expires_count(), 0u);
  // A non-int string is not updated in place.
  Entry* s = db.SetString("s", "abc", kNoExpire, false);
  EXPECT_FALSE(Database::UpdateIntegerInPlace(s, 1));
  EXPECT_EQ(Value(db, "s"), "abc");
}

TEST(DatabaseTest, SetStringKeepTtl) {
  Database db(0);
  db.SetString("k", "a", 5000, false);
  db.SetString("k", "b", kNoExpire, true);
  ASSERT_TRUE(db.Find("k")->has_expire);
  EXPECT_EQ(db.Find("k")->expire_ms(), 5000);
  db.SetString("k", "c", kNoExpire, false);
  EXPECT_FALSE(db.Find("k")->has_expire);
  EXPECT_EQ(db.expires_count(), 0u);
}

TEST(DatabaseTest, ExpireAddRemoveRelayoutKeepsEveryEncoding) {
  Database db(0);
  std::string raw(200, 'r');
  db.SetString("int", "42", kNoExpire, false);
  db.SetString("emb", "embedded value", kNoExpire, false);
  db.SetString("raw", raw, kNoExpire, false);
  db.SetObject("obj", std::make_unique<FakeObject>(100), kNoExpire, false);
  size_t mem = db.MemoryUsage();
  for (const char* k : {"int", "emb", "raw", "obj"}) {
    uint8_t enc = db.Find(k)->encoding;
    db.SetExpire(k, 1000);  // adds 8 bytes to the block: relayout
    const Entry* e = db.Find(k);
    ASSERT_TRUE(e->has_expire) << k;
    EXPECT_EQ(e->expire_ms(), 1000);
    EXPECT_EQ(e->encoding, enc);
    EXPECT_EQ(e->key(), k);
    db.SetExpire(k, 2000);  // in place
    EXPECT_EQ(db.Find(k)->expire_ms(), 2000);
  }
  EXPECT_EQ(db.expires_count(), 4u);
  EXPECT_EQ(Value(db, "int"), "42");
  EXPECT_EQ(Value(db, "emb"), "embedded value");
  EXPECT_EQ(Value(db, "raw"), raw);
  EXPECT_EQ(Database::GetObject(db.Find("obj"))->MemoryUsage(), 100u);
  for (const char* k : {"int", "emb", "raw", "obj"}) {
    db.SetExpire(k, kNoExpire);
    EXPECT_FALSE(db.Find(k)->has_expire);
  }
  EXPECT_EQ(db.expires_count(), 0u);
  EXPECT_EQ(Value(db, "emb"), "embedded value");
  EXPECT_EQ(Value(db, "raw"), raw);
  EXPECT_EQ(db.MemoryUsage(), mem);
  db.SetExpire("missing", 10);  // no-op
  EXPECT_EQ(db.size(), 4u);
}

TEST(DatabaseTest, LookupExpiresLazilyAndCallsHook) {
  Database db(0);
  std::vector<std::string> expired;
  db.set_expire_hook([&](Database&, std::string_view key) { expired.emplace_back(key); });
  db.SetString("a", "1", 100, false);
  db.SetString("b", "2", 200, false);
  EXPECT_NE(db.Lookup("a", 99), nullptr);
  EXPECT_EQ(db.Lookup("a", 100), nullptr);  // expire time is inclusive
  EXPECT_EQ(expired, std::vector<std::string>{"a"});
  EXPECT_EQ(db.size(), 1u);
  // Find sees an expired key without removing it.
  EXPECT_NE(db.Find("b"), nullptr);
  EXPECT_EQ(db.size(), 1u);
  EXPECT_EQ(db.expires_count(), 1u);
}

TEST(DatabaseTest, ActiveExpireCycleRemovesOnlyExpiredKeys) {
  Database db(0);
  size_t hook_calls = 0;
  db.set_expire_hook([&](Database&, std::string_view) { hook_calls++; });
  for (int i = 0; i < 1000; i++) {
    int64_t when = i % 2 == 0 ? 500 : 5000;
    db.SetString(Key(i), "v", i % 3 == 0 ? kNoExpire : when, false);
  }
  size_t volatile_past = 0;
  for (int i = 0; i < 1000; i++) volatile_past += (i % 3 != 0 && i % 2 == 0);
  size_t removed = 0;
  // Bounded steps: it makes progress from a cursor and eventually covers all.
  for (int round = 0; round < 1000 && removed < volatile_past; round++) {
    size_t n = db.ActiveExpireCycle(1000, 16);
    removed += n;
  }
  EXPECT_EQ(removed, volatile_past);
  EXPECT_EQ(hook_calls, volatile_past);
  EXPECT_EQ(db.size(), 1000 - volatile_past);
  for (int i = 0; i < 1000; i++) {
    bool gone = i % 3 != 0 && i % 2 == 0;
    EXPECT_EQ(db.Find(Key(i)) == nullptr, gone) << i;
  }
  EXPECT_GT(db.avg_ttl_ms(), 0);
  EXPECT_LE(db.avg_ttl_ms(), 4000);
  // Everything left expires later.
  while (db.ActiveExpireCycle(10000, 64) > 0 || db.expires_count() > 0) {
  }
  EXPECT_EQ(db.expires_count(), 0u);
  EXPECT_EQ(db.avg_ttl_ms(), 0);
}

TEST(DatabaseTest, ActiveExpireCycleWithNoVolatileKeysIsFree) {
  Database db(0);
  for (int i = 0; i < 100; i++) db.SetString(Key(i), "v", kNoExpire, false);
  EXPECT_EQ(db.ActiveExpireCycle(1 << 30, 1000), 0u);
  EXPECT_EQ(db.size(), 100u);
}

std::set<std::string> FullScan(const Database& db) {
  std::set<std::string> seen;
  uint64_t cursor = 0;
  do {
    cursor = db.Scan(cursor, 7, [&](const Entry* e) { seen.emplace(e->key()); });
  } while (cursor != 0);
  return seen;
}

TEST(DatabaseTest, ScanReturnsEveryKeyOfAStaticTable) {
  Database db(0);
  for (int i = 0; i < 5000; i++) db.SetString(Key(i), "v", kNoExpire, false);
  std::set<std::string> seen = FullScan(db);
  EXPECT_EQ(seen.size(), 5000u);
  // And each exactly once.
  std::vector<std::string> all;
  uint64_t cursor = 0;
  do {
    cursor = db.Scan(cursor, 10, [&](const Entry* e) { all.emplace_back(e->key()); });
  } while (cursor != 0);
  EXPECT_EQ(all.size(), 5000u);
}

TEST(DatabaseTest, ScanReturnsKeysPresentThroughoutAcrossResizes) {
  std::mt19937_64 rng(7);
  Database db(0);
  const int kStable = 300;
  for (int i = 0; i < kStable; i++) db.SetString(Key(i), "stable", kNoExpire, false);
  std::set<std::string> seen;
  uint64_t cursor = 0;
  int next = 100000, calls = 0;
  do {
    cursor = db.Scan(cursor, 3, [&](const Entry* e) { seen.emplace(e->key()); });
    // Between calls: grow the table a lot (several doublings) and churn
    // keys that are not part of the stable set. (Growth stops at some point
    // so that the scan can finish.)
    if (calls < 300) {
      for (int j = 0; j < 40; j++) db.SetString(Key(next++), "churn", kNoExpire, false);
    }
    if (calls % 3 == 0) db.Delete(Key(100000 + static_cast<int>(rng() % (next - 100000))));
    calls++;
  } while (cursor != 0);
  for (int i = 0; i < kStable; i++) EXPECT_TRUE(seen.count(Key(i))) << Key(i);
  EXPECT_GT(db.size(), 4u * kStable);  // the table really resized during the scan
}

TEST(DatabaseTest, ForEachAndRandomEntry) {
  Database db(0);
  for (int i = 0; i < 50; i++) db.SetString(Key(i), "v", kNoExpire, false);
  size_t n = 0;
  db.ForEach([&](const Entry*) { n++; });
  EXPECT_EQ(n, 50u);
  std::set<std::string> picked;
  for (uint64_t r = 0; r < 2000; r++) {
    const Entry* e = db.RandomEntry(r * 0x9E3779B97F4A7C15ull + 1);
    ASSERT_NE(e, nullptr);
    picked.emplace(e->key());
  }
  EXPECT_GT(picked.size(), 25u);  // spreads over the keyspace
}

// One key in a 16-bucket table: every seed must find it (an LCG-driven probe
// used to cycle through a subset of buckets forever).
TEST(DatabaseTest, RandomEntryFindsTheOnlyKeyFromAnySeed) {
  for (int k = 0; k < 64; k++) {
    Database db(0);
    db.SetString(Key(k), "v", kNoExpire, false);
    for (uint64_t seed = 0; seed < 500; seed++) {
      const Entry* e = db.RandomEntry(seed * 0x2545F4914F6CDD1Dull + static_cast<uint64_t>(k));
      ASSERT_NE(e, nullptr);
      ASSERT_EQ(e->key(), Key(k));
    }
  }
  // A sparse table after mass deletion.
  Database db(0);
  for (int i = 0; i < 5000; i++) db.SetString(Key(i), "v", kNoExpire, false);
  for (int i = 1; i < 5000; i++) db.Delete(Key(i));
  for (uint64_t seed = 0; seed < 100; seed++) ASSERT_EQ(db.RandomEntry(seed)->key(), Key(0));
}

TEST(DatabaseTest, MoveKeyRenamesWithValueAndExpire) {
  Database db(0);
  std::string raw(kEmbedMax + 100, 'q');
  db.SetString("src", raw, 777, false);
  db.SetString("dst", "old", kNoExpire, false);
  db.MoveKey("src", &db, "dst");
  EXPECT_EQ(db.Find("src"), nullptr);
  const Entry* e = db.Find("dst");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->key(), "dst");
  EXPECT_EQ(e->encoding, kEncRaw);
  ASSERT_TRUE(e->has_expire);
  EXPECT_EQ(e->expire_ms(), 777);
  EXPECT_EQ(Value(db, "dst"), raw);
  EXPECT_EQ(db.size(), 1u);
  EXPECT_EQ(db.expires_count(), 1u);
  db.MoveKey("dst", &db, "dst");  // same key: nothing happens
  EXPECT_EQ(Value(db, "dst"), raw);
}

TEST(DatabaseTest, MoveKeyKeepsRawEncodingOfShortStrings) {
  Database db(0);
  db.SetString("k", "ab", kNoExpire, false);
  db.AppendString("k", "c");
  ASSERT_EQ(db.Find("k")->encoding, kEncRaw);
  db.MoveKey("k", &db, "k2");
  EXPECT_EQ(db.Find("k2")->encoding, kEncRaw);
  EXPECT_EQ(Value(db, "k2"), "abc");
}

TEST(DatabaseTest, MoveKeyAcrossDatabasesHandsOverObjects) {
  Database a(0), b(1);
  auto obj = std::make_unique<FakeObject>(64);
  Object* raw_ptr = obj.get();
  a.SetObject("s", std::move(obj), kNoExpire, false);
  a.SetString("i", "12", 99, false);
  size_t a_empty = Database(2).MemoryUsage();
  a.MoveKey("s", &b, "s");
  a.MoveKey("i", &b, "i");
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(a.expires_count(), 0u);
  EXPECT_EQ(a.MemoryUsage(), a_empty);
  EXPECT_EQ(b.size(), 2u);
  EXPECT_EQ(b.expires_count(), 1u);
  EXPECT_EQ(Database::GetObject(b.Find("s")), raw_ptr);  // not copied
  EXPECT_EQ(Value(b, "i"), "12");
  EXPECT_EQ(b.Find("i")->encoding, kEncInt);
}

TEST(DatabaseTest, CopyKeyIsDeepAndKeepsExpire) {
  Database a(0), b(1);
  std::string raw(kEmbedMax + 80, 'c');
  a.SetString("r", raw, 4242, false);
  a.SetObject("o", std::make_unique<FakeObject>(32), kNoExpire, false);
  a.CopyKey(a.Find("r"), &b, "r2");
  a.CopyKey(a.Find("o"), &a, "o2");
  EXPECT_EQ(Value(b, "r2"), raw);
  ASSERT_TRUE(b.Find("r2")->has_expire);
  EXPECT_EQ(b.Find("r2")->expire_ms(), 4242);
  EXPECT_EQ(b.Find("r2")->encoding, kEncRaw);
  // Independent values.
  a.AppendString("r", "!");
  EXPECT_EQ(Value(b, "r2"), raw);
  EXPECT_NE(Database::GetObject(a.Find("o")), Database::GetObject(a.Find("o2")));
  EXPECT_EQ(a.size(), 3u);
  // Copy over an existing key replaces it.
  a.SetString("x", "1", kNoExpire, false);
  a.CopyKey(a.Find("x"), &b, "r2");
  EXPECT_EQ(Value(b, "r2"), "1");
  EXPECT_FALSE(b.Find("r2")->has_expire);
  EXPECT_EQ(b.expires_count(), 0u);
}

TEST(DatabaseTest, AppendStringBecomesRawAndKeepsExpire) {
  Database db(0);
  db.SetString("k", "12", 555, false);
  EXPECT_EQ(db.AppendString("k", "3"), 3u);
  const Entry* e = db.Find("k");
  EXPECT_EQ(e->encoding, kEncRaw);
  ASSERT_TRUE(e->has_expire);
  EXPECT_EQ(e->expire_ms(), 555);
  int64_t n;
  ASSERT_TRUE(Database::StringAsInteger(e, &n));  // "123" is still a canonical integer
  EXPECT_EQ(n, 123);
  std::string expect = "123";
  for (int i = 0; i < 1000; i++) {
    db.AppendString("k", "abc");
    expect += "abc";
  }
  EXPECT_EQ(Value(db, "k"), expect);
  // A raw "007" is not an integer.
  db.SetString("z", "00", kNoExpire, false);
  db.AppendString("z", "7");
  EXPECT_FALSE(Database::StringAsInteger(db.Find("z"), &n));
}

TEST(DatabaseTest, SetRangeZeroPadsAndOverwrites) {
  Database db(0);
  db.SetString("k", "", kNoExpire, false);
  EXPECT_EQ(db.SetRange("k", 3, "ab"), 5u);
  EXPECT_EQ(Value(db, "k"), std::string("\0\0\0ab", 5));
  EXPECT_EQ(db.SetRange("k", 0, "xyz"), 5u);
  EXPECT_EQ(Value(db, "k"), "xyzab");
  db.SetString("n", "12345", kNoExpire, false);
  EXPECT_EQ(db.SetRange("n", 1, "0"), 5u);
  EXPECT_EQ(Value(db, "n"), "10345");
  EXPECT_EQ(db.Find("n")->encoding, kEncRaw);
}

TEST(DatabaseTest, ClearAndSwap) {
  Database a(0), b(1);
  a.SetString("a", "1", 10, false);
  b.SetString("b1", "1", kNoExpire, false);
  b.SetString("b2", "2", kNoExpire, false);
  a.Swap(b);
  EXPECT_EQ(a.size(), 2u);
  EXPECT_EQ(b.size(), 1u);
  EXPECT_EQ(b.expires_count(), 1u);
  EXPECT_EQ(a.index(), 0);  // the index stays with the slot
  a.Clear();
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(a.Find("b1"), nullptr);
  EXPECT_EQ(a.MemoryUsage(), Database(5).MemoryUsage());
}

TEST(DatabaseTest, EntryMemoryCountsBlockAndValue) {
  Database db(0);
  const Entry* small = db.SetString("k", "v", kNoExpire, false);
  size_t small_bytes = Database::EntryMemory(small);
  EXPECT_GE(small_bytes, sizeof(Entry) + 2);
  const Entry* big = db.SetString("b", std::string(1000, 'x'), kNoExpire, false);
  EXPECT_GE(Database::EntryMemory(big), 1000u);
  const Entry* obj = db.SetObject("o", std::make_unique<FakeObject>(5000), kNoExpire, false);
  EXPECT_GE(Database::EntryMemory(obj), 5000u);
}

// Inserting and deleting returns the accounted memory exactly to where it
// was, whatever the encodings, expires, in-place edits and object growth.
TEST(DatabaseTest, MemoryAccountingReturnsToBaselineAfterDeletes) {
  Database db(0);
  EXPECT_EQ(db.MemoryUsage(), 16 * sizeof(Entry*));  // just the empty buckets
  const int kN = 2000;
  // Grow the bucket array and let it shrink back.
  for (int i = 0; i < kN; i++) db.SetString(Key(i), "x", kNoExpire, false);
  for (int i = 0; i < kN; i++) ASSERT_TRUE(db.Delete(Key(i)));
  SettleResizes(db);
  const size_t baseline = db.MemoryUsage();
  EXPECT_EQ(baseline, 16 * sizeof(Entry*));

  std::vector<FakeObject*> objects;
  for (int i = 0; i < kN; i++) {
    std::string k = Key(i);
    switch (i % 7) {
      case 0: db.SetString(k, std::to_string(i), kNoExpire, false); break;
      case 1: db.SetString(k, "embedded", 1000 + i, false); break;
      case 2: db.SetString(k, std::string(50 + i % 300, 'r'), kNoExpire, false); break;
      case 3: {
        auto o = std::make_unique<FakeObject>(100);
        objects.push_back(o.get());
        db.SetObject(k, std::move(o), i % 2 ? 99 : kNoExpire, false);
        break;
      }
      case 4:
        db.SetInteger(k, i, kNoExpire, false);
        db.SetInteger(k, i + 1, 5000, false);
        break;
      case 5:
        db.SetString(k, "ab", kNoExpire, false);
        db.AppendString(k, std::string(i % 100, 'a'));
        db.SetRange(k, 200, "tail");
        break;
      case 6:
        db.SetString(k, "v", kNoExpire, false);
        db.SetExpire(k, 77);
        db.SetExpire(k, kNoExpire);
        break;
    }
  }
  // Objects change size in place: once re-measured, once not.
  for (size_t i = 0; i < objects.size(); i++) {
    objects[i]->set_bytes(100 + i * 10);
    if (i % 2 == 0) db.UpdateObjectMemory(db.Find(Key(static_cast<int>(i * 7 + 3))));
  }
  EXPECT_GT(db.MemoryUsage(), baseline);
  // Renames and copies in between.
  db.MoveKey(Key(0), &db, "renamed");
  db.CopyKey(db.Find(Key(3)), &db, "copied");
  db.CopyKey(db.Find(Key(2)), &db, Key(1));  // over an existing key
  std::vector<std::string> keys;
  db.ForEach([&](const Entry* e) { keys.emplace_back(e->key()); });
  for (const auto& k : keys) ASSERT_TRUE(db.Delete(k));
  EXPECT_EQ(db.size(), 0u);
  EXPECT_EQ(db.expires_count(), 0u);
  SettleResizes(db);
  EXPECT_EQ(db.MemoryUsage(), baseline);
}

TEST(DatabaseTest, UpdateObjectMemoryFollowsGrowth) {
  Database db(0);
  auto o = std::make_unique<FakeObject>(100);
  FakeObject* p = o.get();
  Entry* e = db.SetObject("s", std::move(o), kNoExpire, false);
  size_t before = db.MemoryUsage();
  p->set_bytes(1100);
  EXPECT_EQ(db.MemoryUsage(), before);  // not yet re-measured
  db.UpdateObjectMemory(e);
  EXPECT_EQ(db.MemoryUsage(), before + 1000);
  // The accounted size survives an expire relayout.
  db.SetExpire("s", 10);
  EXPECT_GE(db.MemoryUsage(), before + 1000);
  db.Delete("s");
  EXPECT_EQ(db.MemoryUsage(), 16 * sizeof(Entry*));
}

}  // namespace
}  // namespace feedkv
