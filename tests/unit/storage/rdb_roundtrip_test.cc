// Unit tests for the snapshot format: every type round-trips to an identical
// dataset (same digest), and every single-byte flip or truncation of a
// snapshot is detected.
#include <gtest/gtest.h>

#include <xxhash.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "storage/counter_schema.h"
#include "storage/counter_space.h"
#include "storage/rdb_digest.h"
#include "storage/rdb_reader.h"
#include "storage/rdb_writer.h"
#include "storage/set_value.h"

namespace feedkv::rdb {
namespace {

constexpr int64_t kFuture = 4102444800000;  // 2100-01-01

struct Dataset {
  std::vector<std::unique_ptr<Database>> dbs;
  std::map<std::string, std::unique_ptr<CounterSpace>, std::less<>> spaces;

  explicit Dataset(int n = 4) {
    for (int i = 0; i < n; i++) dbs.push_back(std::make_unique<Database>(i));
  }
  std::vector<Database*> ptrs() {
    std::vector<Database*> v;
    for (auto& d : dbs) v.push_back(d.get());
    return v;
  }
  SnapshotSource Source() const {
    SnapshotSource src;
    src.header.aof_lineage = 9;
    src.header.aof_segment = 3;
    src.header.aof_segment_offset = 77;
    src.header.aof_offset = 1234;
    src.header.ctime_ms = 1700000000000;
    src.aux = {{"feedkv-ver", "test"}};
    for (const auto& d : dbs) src.dbs.push_back(d.get());
    for (const auto& [n, s] : spaces) src.counter_spaces.emplace_back(n, s.get());
    return src;
  }
  std::string Digest() const {
    DigestBuilder b;
    for (size_t i = 0; i < dbs.size(); i++) b.AddDatabase(static_cast<int>(i), *dbs[i]);
    for (const auto& [n, s] : spaces) b.AddCounterSpace(n, *s);
    return b.Hex();
  }
};

void Fill(Dataset* d) {
  Database& db0 = *d->dbs[0];
  db0.SetString("plain", "hello", kNoExpire, false);
  db0.SetString("int", "12345", kNoExpire, false);
  db0.SetString("neg", "-9223372036854775808", kNoExpire, false);
  db0.SetString("notint", "0123", kNoExpire, false);
  db0.SetString("long", std::string(5000, 'z'), kFuture, false);
  db0.SetString(std::string("bin\0key", 7), std::string("\0\1\2", 3), kNoExpire, false);
  db0.SetString("expired", "old", 1000, false);  // loaded anyway; expiry removes it later
  std::unique_ptr<SetValue> ints;
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < 1000; i++) ids.push_back(i * 7919 - 500000);
  ids.push_back(INT64_MIN);
  ids.push_back(INT64_MAX);
  ASSERT_TRUE(SetValue::FromInts(ids, LongSetOptions{}, &ints).ok());
  EXPECT_EQ(ints->encoding(), "longset");
  db0.SetObject("followers", std::move(ints), kFuture, false);
  std::vector<std::string_view> members = {"alice", "bob", "42", std::string_view("\0x", 2)};
  std::unique_ptr<SetValue> strs;
  ASSERT_TRUE(SetValue::FromMembers(members, LongSetOptions{}, &strs).ok());
  EXPECT_EQ(strs->encoding(), "hashtable");
  d->dbs[2]->SetObject("tags", std::move(strs), kNoExpire, false);
  for (int i = 0; i < 3000; i++) {
    d->dbs[3]->SetString("k:" + std::to_string(i), "v" + std::to_string(i), i % 3 ? kNoExpire : kFuture + i, false);
  }
  CounterSchema schema;
  ASSERT_TRUE(CounterSchema::ParseString("repost:20 comment:20 like:24 read:32", &schema).ok());
  CounterOptions opts;
  opts.table_bytes = 64 * 1024;
  auto space = std::make_unique<CounterSpace>(schema, opts);
  uint64_t v;
  for (int64_t id = 1; id <= 5000; id++) ASSERT_TRUE(space->IncrBy(id * 3, id % 4, id, &v).ok());
  ASSERT_TRUE(space->IncrBy(99, 0, 1 << 21, &v).ok());  // overflows 20 bits: aux dict
  d->spaces["post"] = std::move(space);
}

std::string Snapshot(const Dataset& d) {
  std::string out;
  RdbSink sink(&out);
  SaveStats st;
  EXPECT_TRUE(WriteSnapshot(d.Source(), &sink, &st).ok());
  EXPECT_EQ(st.bytes, out.size());
  return out;
}

Status Load(std::string_view bytes, Dataset* d, Header* h) {
  DatasetLoader loader(d->ptrs(), 0);
  RdbSource src(bytes);
  LoadStats st;
  Status s = ReadSnapshot(&src, static_cast<int>(d->dbs.size()), &loader, h, &st);
  if (s.ok()) {
    for (auto& [n, sp] : loader.counter_spaces()) d->spaces[n] = std::move(sp);
  }
  return s;
}

TEST(RdbRoundTrip, EveryTypeReloadsIdentically) {
  Dataset a;
  Fill(&a);
  std::string snap = Snapshot(a);
  Dataset b;
  Header h;
  ASSERT_TRUE(Load(snap, &b, &h).ok());
  EXPECT_EQ(h.aof_lineage, 9u);
  EXPECT_EQ(h.aof_segment, 3u);
  EXPECT_EQ(h.aof_segment_offset, 77u);
  EXPECT_EQ(h.aof_offset, 1234u);
  for (int i = 0; i < 4; i++) EXPECT_EQ(a.dbs[i]->size(), b.dbs[i]->size()) << i;
  EXPECT_EQ(a.Digest(), b.Digest());
  EXPECT_NE(a.Digest(), std::string(40, '0'));
  // Encodings are kept: a longset comes back as a longset.
  const Entry* e = b.dbs[0]->Find("followers");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(Database::GetObject(e)->encoding(), "longset");
  EXPECT_EQ(e->expire_ms(), kFuture);
  EXPECT_EQ(b.dbs[0]->Find("int")->encoding, kEncInt);
  EXPECT_NE(b.dbs[0]->Find("notint")->encoding, kEncInt);
  ASSERT_TRUE(b.spaces.count("post"));
  uint64_t vals[4];
  b.spaces["post"]->Get(99, vals);
  EXPECT_EQ(vals[0], 1u << 21);
  // And the second snapshot is byte-identical to the first.
  EXPECT_EQ(Snapshot(b).size(), snap.size());
}

TEST(RdbRoundTrip, EmptyDatasetDigestIsZeros) {
  Dataset a;
  EXPECT_EQ(a.Digest(), std::string(40, '0'));
  Dataset b;
  Header h;
  ASSERT_TRUE(Load(Snapshot(a), &b, &h).ok());
  EXPECT_EQ(b.Digest(), std::string(40, '0'));
}

TEST(RdbRoundTrip, DigestDependsOnContentNotOrder) {
  Dataset a, b;
  a.dbs[0]->SetString("x", "1", kNoExpire, false);
  a.dbs[0]->SetString("y", "2", kNoExpire, false);
  b.dbs[0]->SetString("y", "2", kNoExpire, false);
  b.dbs[0]->SetString("x", "1", kNoExpire, false);
  EXPECT_EQ(a.Digest(), b.Digest());
  b.dbs[0]->SetExpire("x", kFuture);
  EXPECT_NE(a.Digest(), b.Digest());
  Dataset c;
  c.dbs[1]->SetString("x", "1", kNoExpire, false);
  c.dbs[1]->SetString("y", "2", kNoExpire, false);
  EXPECT_NE(a.Digest(), c.Digest()) << "the db number is part of the digest";
}

// A default-size counter table (1 GiB) with a few keys is written as its keys, not its
// size, and loads back (docs/formats.md, "Counter space snapshot").
TEST(RdbCounters, DefaultSizeTableIsSparseOnDisk) {
  Dataset a;
  CounterSchema schema;
  ASSERT_TRUE(CounterSchema::ParseString("repost:20 comment:20 like:24 read:32", &schema).ok());
  CounterOptions gib;
  gib.first_table_bytes = gib.table_bytes;  // one whole default-size table, as before growth
  auto space = std::make_unique<CounterSpace>(schema, gib);
  uint64_t v;
  for (int64_t i = 0; i < 1000; i++) {
    ASSERT_TRUE(space->IncrBy(1700000000000 + i * 7919, i % 4, i + 1, &v).ok());
  }
  ASSERT_EQ(space->table(0).bytes() >> 20, 1023u);
  a.spaces["post"] = std::move(space);
  std::string snap = Snapshot(a);
  EXPECT_LT(snap.size(), 64u * 1024);
  Dataset b;
  Header h;
  ASSERT_TRUE(Load(snap, &b, &h).ok());
  EXPECT_EQ(h.version, kRdbVersion);
  EXPECT_EQ(a.Digest(), b.Digest());
  EXPECT_LE(b.spaces["post"]->table(0).touched_pages(), 2000u);
}

// Version 1 files hold each counter space as a blob of its image; they still load.
TEST(RdbCounters, VersionOneBlobFormStillLoads) {
  Dataset a;
  Fill(&a);
  for (bool compress : {false, true}) {
    std::string image;
    a.spaces["post"]->SerializeTo(&image);
    std::string file;
    RdbSink sink(&file);
    std::string header(kHeaderSize, '\0');
    std::memcpy(header.data(), kMagic.data(), kMagic.size());
    header[8] = 1;  // version 1
    const uint64_t hh = XXH64(header.data(), 56, 0);
    for (int i = 0; i < 8; i++) header[56 + i] = static_cast<char>(hh >> (8 * i));
    sink.Write(header.data(), header.size());
    sink.BeginSection(kSectionCounters);
    sink.PutVarint(1);
    sink.PutString("post");
    sink.PutBlob(image, compress);
    sink.EndSection();
    ASSERT_TRUE(sink.Finish().ok());
    Dataset b;
    Header h;
    Status s = Load(file, &b, &h);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(h.version, 1u);
    ASSERT_TRUE(b.spaces.count("post"));
    Dataset only;
    only.spaces["post"] = std::move(a.spaces["post"]);
    EXPECT_EQ(only.Digest(), b.Digest());
    a.spaces["post"] = std::move(only.spaces["post"]);
  }
}

TEST(RdbCorruption, EverySingleByteFlipIsDetected) {
  Dataset a;
  CounterSchema schema;
  ASSERT_TRUE(CounterSchema::ParseString("a:5 b:7", &schema).ok());
  auto space = std::make_unique<CounterSpace>(schema, CounterOptions{4096, 0.9, 8});
  uint64_t v;
  for (int64_t id = 1; id <= 20; id++) ASSERT_TRUE(space->IncrBy(id * 101, 0, id, &v).ok());
  a.spaces["c"] = std::move(space);
  a.dbs[0]->SetString("k", "value", kFuture, false);
  a.dbs[1]->SetString("n", "7", kNoExpire, false);
  std::unique_ptr<SetValue> set;
  std::vector<int64_t> ids = {1, 2, 3};
  ASSERT_TRUE(SetValue::FromInts(ids, LongSetOptions{}, &set).ok());
  a.dbs[1]->SetObject("s", std::move(set), kNoExpire, false);
  std::string snap = Snapshot(a);
  for (size_t i = 0; i < snap.size(); i++) {
    std::string bad = snap;
    bad[i] ^= 0x20;
    Dataset b;
    Header h;
    Status s = Load(bad, &b, &h);
    EXPECT_TRUE(s.IsCorruption()) << "flip at " << i << " went unnoticed";
  }
}

// A corrupt length must fail at the end of the input, not allocate what it claims: a
// flipped bit once made a string length of 34 GB throw std::bad_alloc mid-load.
TEST(RdbCorruption, HugeDeclaredLengthsFailWithoutAllocating) {
  for (uint64_t claimed : {uint64_t{34215884188}, uint64_t{1} << 40, ~uint64_t{0} >> 1}) {
    std::string bytes;
    RdbSink sink(&bytes);
    sink.PutVarint(claimed);
    sink.Write("only a few bytes", 16);
    ASSERT_TRUE(sink.Finish().ok());
    RdbSource a(bytes);
    std::string s;
    EXPECT_FALSE(a.GetString(&s, ~uint64_t{0}));
    RdbSource b(bytes);
    std::string_view view;
    std::string scratch;
    EXPECT_FALSE(b.GetStringView(&view, ~uint64_t{0}, &scratch));
    EXPECT_LT(scratch.capacity(), uint64_t{4} << 20);
  }
}

TEST(RdbCorruption, EveryTruncationIsDetected) {
  Dataset a;
  Fill(&a);
  std::string snap = Snapshot(a);
  for (size_t len = 0; len < snap.size(); len += (len < 200 ? 1 : 997)) {
    Dataset b;
    Header h;
    EXPECT_TRUE(Load(std::string_view(snap).substr(0, len), &b, &h).IsCorruption()) << len;
  }
  Dataset b;
  Header h;
  EXPECT_TRUE(Load(snap + "x", &b, &h).IsCorruption()) << "trailing bytes";
}

TEST(RdbCorruption, BadVersionAndMagic) {
  Dataset a;
  std::string snap = Snapshot(a);
  Header h;
  std::string bad = snap;
  bad[0] = 'X';
  EXPECT_NE(ParseHeader(bad, &h).message().find("magic"), std::string::npos);
  EXPECT_TRUE(ParseHeader(snap, &h).ok());
  EXPECT_TRUE(ParseHeader(snap.substr(0, 10), &h).IsCorruption());
}

TEST(RdbFile, WritesAndReadsAFile) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("rdb_roundtrip_" + std::to_string(::getpid()) + ".rdb")).string();
  Dataset a;
  Fill(&a);
  SaveStats st;
  ASSERT_TRUE(WriteSnapshotFile(Env::Default(), path, a.Source(), &st).ok());
  Header h;
  ASSERT_TRUE(ReadHeaderFile(Env::Default(), path, &h).ok());
  EXPECT_EQ(h.aof_offset, 1234u);
  Dataset b;
  DatasetLoader loader(b.ptrs(), 0);
  LoadStats ls;
  ASSERT_TRUE(ReadSnapshotFile(Env::Default(), path, 4, &loader, &h, &ls).ok());
  for (auto& [n, sp] : loader.counter_spaces()) b.spaces[n] = std::move(sp);
  EXPECT_EQ(a.Digest(), b.Digest());
  ValidatingVisitor v;
  ASSERT_TRUE(ReadSnapshotFile(Env::Default(), path, 4, &v, &h, &ls).ok());
  EXPECT_EQ(v.objects, 2u);
  EXPECT_EQ(v.counter_spaces, 1u);
  std::filesystem::remove(path);
}

TEST(RdbFile, FailedWriteIsReported) {
  FaultInjectionEnv env(Env::Default());
  env.fail_appends = true;
  std::string path = (std::filesystem::temp_directory_path() /
                      ("rdb_fail_" + std::to_string(::getpid()) + ".rdb")).string();
  Dataset a;
  Fill(&a);
  SaveStats st;
  EXPECT_TRUE(WriteSnapshotFile(&env, path, a.Source(), &st).IsNoSpace());
  std::filesystem::remove(path);
}

TEST(RdbFunctions, LibrariesRoundTripInLoadOrder) {
  Dataset a;
  Fill(&a);
  SnapshotSource src = a.Source();
  src.function_libraries = {"#!lua name=b\nreturn 1", "#!lua name=a\nreturn 2"};
  std::string out;
  RdbSink sink(&out);
  SaveStats st;
  ASSERT_TRUE(WriteSnapshot(src, &sink, &st).ok());
  Dataset b;
  DatasetLoader loader(b.ptrs(), 0);
  RdbSource in(out);
  Header h;
  LoadStats ls;
  ASSERT_TRUE(ReadSnapshot(&in, 4, &loader, &h, &ls).ok());
  EXPECT_EQ(loader.function_libraries(), src.function_libraries);
  // A validating reader (feedkv-check-rdb) skips them.
  ValidatingVisitor v;
  RdbSource again(out);
  EXPECT_TRUE(ReadSnapshot(&again, 4, &v, &h, &ls).ok());
}

}  // namespace
}  // namespace feedkv::rdb
