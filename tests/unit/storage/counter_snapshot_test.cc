// Counter space snapshot format 2 (sparse, streamed; storage/counter_space_codec.cc) and
// the reading of format 1 images: round trips of sparse, all-zero and fully dense tables,
// and every class of corrupt input (truncation, bad and out-of-range chunk index, runs
// that overflow a chunk, flips), through the streaming reader that has no up-front
// checksum to hide behind. Layout in docs/formats.md, "Counter space snapshot".
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "storage/counter_space.h"

namespace feedkv {
namespace {

constexpr int64_t kMinId = std::numeric_limits<int64_t>::min();
constexpr uint64_t kChunk = 64 * 1024;

CounterSchema Schema(std::string_view text) {
  CounterSchema s;
  EXPECT_TRUE(CounterSchema::ParseString(text, &s).ok());
  return s;
}

void Incr(CounterSpace* s, int64_t id, size_t field, int64_t delta) {
  uint64_t v;
  Status st = s->IncrBy(id, field, delta, &v);
  ASSERT_TRUE(st.ok()) << st.ToString();
}

std::map<int64_t, std::vector<uint64_t>> Dump(const CounterSpace& s) {
  std::map<int64_t, std::vector<uint64_t>> m;
  s.ForEachKey([&](int64_t id, std::span<const uint64_t> v) {
    m.emplace(id, std::vector<uint64_t>(v.begin(), v.end()));
  });
  return m;
}

std::string Image(const CounterSpace& s) {
  std::string out;
  s.SerializeTo(&out);
  return out;
}

// The streaming reader (what the RDB loader uses): no up-front checksum.
Status Stream(std::string_view in, std::unique_ptr<CounterSpace>* out) {
  CounterStringSource src(in);
  return CounterSpace::ReadFrom(&src, out);
}

void Reseal(std::string* snap) {
  counter_coding::StoreLE64(snap->data() + snap->size() - 8,
                            XXH3_64bits(snap->data(), snap->size() - 8));
}

// Round trip through both readers; checks contents, tables and that the copy writes the
// same bytes.
std::unique_ptr<CounterSpace> RoundTrip(const CounterSpace& s, const std::string& snap) {
  std::unique_ptr<CounterSpace> a, b;
  Status st = CounterSpace::DeserializeFrom(snap, &a);
  EXPECT_TRUE(st.ok()) << st.ToString();
  st = Stream(snap, &b);
  EXPECT_TRUE(st.ok()) << st.ToString();
  if (a == nullptr || b == nullptr) return nullptr;
  EXPECT_EQ(Dump(*a), Dump(s));
  EXPECT_EQ(Dump(*b), Dump(s));
  EXPECT_EQ(a->max_id_seen(), s.max_id_seen());
  EXPECT_EQ(a->num_tables(), s.num_tables());
  for (size_t i = 0; i < s.num_tables() && i < a->num_tables(); ++i) {
    EXPECT_EQ(a->table(i).meta(), s.table(i).meta());
    EXPECT_EQ(a->table(i).used(), s.table(i).used());
    EXPECT_EQ(a->table(i).tombstones(), s.table(i).tombstones());
    EXPECT_EQ(std::memcmp(a->table(i).data(), s.table(i).data(), s.table(i).bytes()), 0);
    EXPECT_LE(a->table(i).touched_pages(), s.table(i).touched_pages());
  }
  EXPECT_TRUE(a->Validate().ok());
  // The copy writes the same bytes, up to the order of the aux/extend rows (hash order).
  const CounterSpaceStats st2 = s.Stats();
  const size_t dicts = 16 + (st2.aux_keys + st2.extend_keys) * (s.schema().num_fields() + 1) * 8;
  const std::string again = Image(*a);
  EXPECT_EQ(again.size(), snap.size());
  EXPECT_EQ(again.substr(0, snap.size() - 8 - dicts), snap.substr(0, snap.size() - 8 - dicts));
  return a;
}

// A format-1 image of `s` (whole tables), built from public accessors as the old
// SerializeTo wrote it.
std::string LegacyImage(const CounterSpace& s) {
  std::string out = "FKVCOUNT";
  counter_coding::PutLE32(&out, 1);
  const CounterSchema& sc = s.schema();
  out.push_back(static_cast<char>(sc.num_fields()));
  for (size_t i = 0; i < sc.num_fields(); ++i) {
    out.push_back(static_cast<char>(sc.field_name(i).size()));
    out += sc.field_name(i);
    out.push_back(static_cast<char>(sc.field_bits(i)));
  }
  counter_coding::PutLE64(&out, s.options().table_bytes);
  uint64_t fill;
  std::memcpy(&fill, &s.options().max_fill, 8);
  counter_coding::PutLE64(&out, fill);
  counter_coding::PutLE32(&out, s.options().max_probes);
  counter_coding::PutLE64(&out, static_cast<uint64_t>(s.max_id_seen()));
  counter_coding::PutLE32(&out, static_cast<uint32_t>(s.num_tables()));
  for (size_t i = 0; i < s.num_tables(); ++i) {
    s.table(i).EncodeMeta(&out);
    out.append(s.table(i).data(), s.table(i).bytes());
  }
  for (CounterLocation where : {CounterLocation::kAux, CounterLocation::kExtend}) {
    std::string rows;
    uint64_t count = 0;
    s.ForEachKey([&](int64_t id, std::span<const uint64_t> v) {
      if (s.Locate(id) != where) return;
      ++count;
      counter_coding::PutLE64(&rows, static_cast<uint64_t>(id));
      for (uint64_t x : v) counter_coding::PutLE64(&rows, x);
    });
    counter_coding::PutLE64(&out, count);
    out += rows;
  }
  out.append(8, '\0');
  Reseal(&out);
  return out;
}

// Schema "a:5 b:7" (10-byte slots): offsets in the image.
constexpr size_t kTableAt = 8 + 4 + 1 + 3 + 3 + 8 + 8 + 4 + 8 + 4;
constexpr size_t kChunkCountAt = kTableAt + CounterTable::kMetaBytes;
constexpr size_t kChunkIndexAt = kChunkCountAt + 4;

// One table of ~1 MiB (16 chunks, the last one partial) with keys in most chunks,
// a tombstone, an aux and an extend key.
std::unique_ptr<CounterSpace> FewChunks() {
  auto s = std::make_unique<CounterSpace>(Schema("a:5 b:7"),
                                          CounterOptions{1 << 20, 0.9, 32, 1 << 20});
  for (int64_t id = 1; id <= 30; ++id) Incr(s.get(), id * 1000003, id % 2, id % 31 + 1);
  EXPECT_TRUE(s->Del(5 * 1000003));
  Incr(s.get(), 77, 0, 1000);  // aux
  Incr(s.get(), kMinId, 1, 3);  // extend
  return s;
}

TEST(CounterSnapshot, SparseLargeTableIsSmallAndRoundTrips) {
  // 256 MiB table, 2,000 keys: the image holds the keys, not the table.
  CounterSpace s(Schema("repost:20 comment:20 like:24 read:32"),
                 CounterOptions{256 << 20, 0.9, 32, 256 << 20});
  for (int64_t i = 0; i < 2000; ++i) Incr(&s, 1'700'000'000'000 + i * 7919, i % 4, i + 1);
  ASSERT_EQ(s.num_tables(), 1u);
  const std::string snap = Image(s);
  EXPECT_LT(snap.size(), 2000u * 40 + 64 * 1024) << "image should hold only the keys";
  auto copy = RoundTrip(s, snap);
  ASSERT_NE(copy, nullptr);
  // Loading filled only pages that hold data.
  EXPECT_LE(copy->table(0).touched_pages(), 2u * 2000);
}

// Issue 11: a table is a reservation touched lazily, so saving it and recording which
// pages it touched must cost its keys, not its size. Before, the touched-page record was
// a bitmap over the whole reservation (32 KiB per GiB) and the writer walked it once per
// 64 KiB chunk (quadratic: 32 GiB with one key took 15 s). Timing-free: the record's
// size must not depend on the table's size, and neither may the image or the memory
// reported.
TEST(CounterSnapshot, HugeTableCostsItsKeysNotItsSize) {
  constexpr uint64_t kGiB = uint64_t{1} << 30;
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < 100; ++i) ids.push_back(1'700'000'000'000 + i * 7919);
  auto fill = [&](uint64_t table_bytes) {
    auto s = std::make_unique<CounterSpace>(Schema("repost:20 comment:20 like:24 read:32"),
                                            CounterOptions{table_bytes, 0.9, 32, table_bytes});
    for (size_t i = 0; i < ids.size(); ++i) {
      Incr(s.get(), ids[i], i % 4, static_cast<int64_t>(i + 1));
    }
    return s;
  };
  auto small = fill(kGiB);
  auto huge = fill(16 * kGiB);
  ASSERT_EQ(huge->num_tables(), 1u);
  const CounterTable& t = huge->table(0);
  EXPECT_LE(t.touched_pages(), 2 * ids.size());
  // At most one 64-page word per key: a few KiB, where a bitmap took 512 KiB.
  EXPECT_LE(t.tracking_bytes(), small->table(0).tracking_bytes() + 1024);
  EXPECT_LT(t.tracking_bytes(), 16u * 1024);
  // Memory counts the touched pages (<= 2 per key) and that record, not the 16 GiB.
  EXPECT_LT(huge->MemoryUsage(), 2 * ids.size() * CounterTable::kPageBytes + 32 * 1024);
  EXPECT_GE(huge->MemoryUsage(), t.touched_pages() * CounterTable::kPageBytes);

  const std::string snap = Image(*huge);
  EXPECT_LT(snap.size(), ids.size() * 64 + 1024) << "the image holds the keys";
  std::unique_ptr<CounterSpace> copy;
  Status st = Stream(snap, &copy);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(Dump(*copy), Dump(*huge));
  EXPECT_EQ(copy->table(0).meta(), t.meta());
  EXPECT_LE(copy->table(0).touched_pages(), t.touched_pages());
  EXPECT_LT(copy->table(0).tracking_bytes(), 16u * 1024);
  EXPECT_EQ(Image(*copy), snap);  // no dictionaries: byte for byte
}

TEST(CounterSnapshot, AllZeroTableAndEmptySpace) {
  // An all-zero table has no present chunk (P = 0). Spaces never leave one behind on
  // their own (a table is made for a key), so build it through a format-1 image.
  CounterSpace s(Schema("a:5 b:7"), CounterOptions{300 * 1024, 0.9, 32, 300 * 1024});
  Incr(&s, 42, 0, 1);
  std::string legacy = LegacyImage(s);
  // Zero the slot of id 42 (the only non-zero bytes of the table).
  const size_t slots_at = kTableAt + CounterTable::kMetaBytes;
  std::memset(legacy.data() + slots_at, 0, s.table(0).bytes());
  counter_coding::StoreLE64(legacy.data() + kTableAt - 12, static_cast<uint64_t>(kMinId));
  Reseal(&legacy);
  std::unique_ptr<CounterSpace> zero;
  Status st = CounterSpace::DeserializeFrom(legacy, &zero);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(zero->num_tables(), 1u);
  EXPECT_EQ(zero->num_keys(), 0u);
  EXPECT_EQ(zero->table(0).touched_pages(), 0u);
  const std::string snap = Image(*zero);
  EXPECT_EQ(counter_coding::LoadLE32(snap.data() + kChunkCountAt), 0u);
  EXPECT_EQ(snap.size(), kChunkIndexAt + 8 + 8 + 8 + 8);  // aux, extend, loose, checksum
  RoundTrip(*zero, snap);

  CounterSpace empty(Schema("x:1"), CounterOptions{});
  RoundTrip(empty, Image(empty));
}

TEST(CounterSnapshot, FullyDenseTableRoundTrips) {
  // Max fill 1 and a long probe limit: every slot of a ~200 KiB table holds a key, so
  // every chunk is present and literals span whole chunks.
  CounterSpace s(Schema("a:3 b:61"), CounterOptions{200 * 1024, 1.0, 1024, 200 * 1024});
  std::mt19937_64 rng(5);
  int64_t id = 0;
  while (s.num_tables() < 2) {
    id += 1 + static_cast<int64_t>(rng() % 3);
    Incr(&s, id, 1, static_cast<int64_t>(rng() >> 4) + 1);
  }
  const CounterTable& t = s.table(0);
  ASSERT_EQ(t.used(), t.capacity());
  const std::string snap = Image(s);
  EXPECT_EQ(counter_coding::LoadLE32(snap.data() + 8 + 4 + 1 + 3 + 3 + 8 + 8 + 4 + 8 + 4 +
                                     CounterTable::kMetaBytes),
            (t.bytes() + kChunk - 1) / kChunk);
  RoundTrip(s, snap);
}

TEST(CounterSnapshot, FormatOneImagesStillLoad) {
  auto s = FewChunks();
  const std::string legacy = LegacyImage(*s);
  std::unique_ptr<CounterSpace> copy;
  Status st = CounterSpace::DeserializeFrom(legacy, &copy);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(Dump(*copy), Dump(*s));
  EXPECT_TRUE(copy->Validate().ok());
  EXPECT_EQ(Image(*copy), Image(*s));  // re-saved in format 2
  ASSERT_TRUE(Stream(legacy, &copy).ok());
  for (size_t len : {size_t{0}, size_t{11}, kChunkCountAt, legacy.size() / 2, legacy.size() - 1}) {
    std::string cut = legacy.substr(0, len);
    EXPECT_TRUE(Stream(cut, &copy).IsCorruption()) << len;
  }
}

TEST(CounterSnapshot, WriterStreamsInBoundedPieces) {
  CounterSpace s(Schema("a:3 b:61"), CounterOptions{1 << 20, 1.0, 1024, 1 << 20});
  for (int64_t id = 1; s.num_keys() < 40000; ++id) Incr(&s, id, 1, id);
  struct Recorder : CounterSnapshotSink {
    std::string all;
    size_t largest = 0;
    void Write(const char* p, size_t n) override {
      all.append(p, n);
      largest = std::max(largest, n);
    }
  } rec;
  s.WriteTo(&rec);
  EXPECT_GT(rec.all.size(), 3 * kChunk);
  EXPECT_LE(rec.largest, kChunk);
  EXPECT_EQ(rec.all, Image(s));
}

TEST(CounterSnapshot, TruncationAtEveryOffsetIsCorruption) {
  auto s = FewChunks();
  const std::string snap = Image(*s);
  ASSERT_LT(snap.size(), 8000u);
  std::unique_ptr<CounterSpace> out;
  for (size_t len = 0; len < snap.size(); ++len) {
    const std::string cut = snap.substr(0, len);
    ASSERT_TRUE(Stream(cut, &out).IsCorruption()) << len;
    ASSERT_TRUE(CounterSpace::DeserializeFrom(cut, &out).IsCorruption()) << len;
  }
  EXPECT_EQ(out, nullptr);
}

TEST(CounterSnapshot, EveryByteFlipIsCorruptionWhenStreamed) {
  auto s = FewChunks();
  const std::string snap = Image(*s);
  std::unique_ptr<CounterSpace> out;
  for (size_t i = 0; i < snap.size(); ++i) {
    for (unsigned char mask : {0x01, 0x80, 0xff}) {
      std::string bad = snap;
      bad[i] = static_cast<char>(bad[i] ^ mask);
      Status st = Stream(bad, &out);
      ASSERT_TRUE(st.IsCorruption()) << i << " " << st.ToString();
      // Resealed: structure must reject it or yield a consistent space.
      Reseal(&bad);
      st = CounterSpace::DeserializeFrom(bad, &out);
      if (st.ok()) {
        ASSERT_TRUE(out->Validate().ok()) << i;
      } else {
        ASSERT_TRUE(st.IsCorruption()) << i << " " << st.ToString();
      }
    }
  }
}

TEST(CounterSnapshot, ChunkIndexAndRunErrors) {
  auto s = FewChunks();
  const std::string snap = Image(*s);
  const uint32_t count = counter_coding::LoadLE32(snap.data() + kChunkCountAt);
  const uint64_t chunks = (s->table(0).bytes() + kChunk - 1) / kChunk;
  ASSERT_EQ(chunks, 16u);
  ASSERT_GE(count, 3u);
  std::unique_ptr<CounterSpace> out;
  auto expect = [&](std::string bad, std::string_view what) {
    Reseal(&bad);
    for (bool streamed : {false, true}) {
      Status st = streamed ? Stream(bad, &out) : CounterSpace::DeserializeFrom(bad, &out);
      EXPECT_TRUE(st.IsCorruption()) << what << ": " << st.ToString();
      EXPECT_NE(st.message().find(what), std::string::npos) << st.ToString();
    }
  };
  auto set32 = [&](std::string* b, size_t at, uint32_t v) {
    counter_coding::StoreLE32(b->data() + at, v);
  };
  std::string bad = snap;
  set32(&bad, kChunkCountAt, static_cast<uint32_t>(chunks + 1));
  expect(bad, "lists 17 chunks but has 16");
  bad = snap;
  set32(&bad, kChunkIndexAt + 4 * (count - 1), static_cast<uint32_t>(chunks));
  expect(bad, "chunk 16 out of range");
  bad = snap;
  set32(&bad, kChunkIndexAt + 4 * (count - 1), 0xffffffff);
  expect(bad, "out of range");
  bad = snap;
  set32(&bad, kChunkIndexAt + 4, counter_coding::LoadLE32(snap.data() + kChunkIndexAt));
  expect(bad, "not increasing");  // duplicate
  bad = snap;
  set32(&bad, kChunkIndexAt, counter_coding::LoadLE32(snap.data() + kChunkIndexAt + 4));
  set32(&bad, kChunkIndexAt + 4, counter_coding::LoadLE32(snap.data() + kChunkIndexAt));
  expect(bad, "not increasing");  // swapped
  // Runs: the first pair of the first chunk, (zeros, literal), follows the index.
  const size_t run_at = kChunkIndexAt + 4 * count;
  bad = snap;
  bad.insert(run_at, "\xff\xff\x7f");  // zeros = 2^21 - 1: beyond the chunk
  expect(bad, "overflows chunk");
  bad = snap;
  bad.insert(run_at, std::string("\x01\x00", 2));  // an empty literal inside the chunk
  expect(bad, "empty literal");
  bad = snap;
  bad.insert(run_at, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f");  // over-long varint
  expect(bad, "malformed run");
  // A listed chunk that holds nothing: list chunk c (absent) with one zero run.
  uint32_t absent = 0;
  while (absent < chunks) {
    bool listed = false;
    for (uint32_t k = 0; k < count; ++k) {
      listed |= counter_coding::LoadLE32(snap.data() + kChunkIndexAt + 4 * k) == absent;
    }
    if (!listed) break;
    ++absent;
  }
  ASSERT_LT(absent, chunks);
  ASSERT_LT(absent, chunks - 1) << "the last chunk is partial; the test writes a full-chunk run";
  std::vector<uint32_t> index;
  for (uint32_t k = 0; k < count; ++k) {
    index.push_back(counter_coding::LoadLE32(snap.data() + kChunkIndexAt + 4 * k));
  }
  size_t pos = 0;
  while (pos < index.size() && index[pos] < absent) ++pos;
  // Chunk bodies in index order: walk the bodies to find where the new one goes.
  size_t body_at = run_at;
  for (size_t k = 0; k < pos; ++k) {
    const uint64_t len = std::min<uint64_t>(kChunk, s->table(0).bytes() - index[k] * kChunk);
    for (uint64_t done = 0; done < len;) {
      uint64_t v[2];
      for (uint64_t& x : v) {
        x = 0;
        for (int shift = 0;; shift += 7) {
          const auto b = static_cast<unsigned char>(snap[body_at++]);
          x |= static_cast<uint64_t>(b & 0x7f) << shift;
          if (!(b & 0x80)) break;
        }
      }
      done += v[0] + v[1];
      body_at += v[1];
    }
  }
  bad = snap;
  bad.insert(body_at, std::string("\x80\x80\x04\x00", 4));  // zeros = 65536, literal 0: the whole chunk
  index.insert(index.begin() + static_cast<std::ptrdiff_t>(pos), absent);
  std::string new_index;
  for (uint32_t c : index) counter_coding::PutLE32(&new_index, c);
  bad.replace(kChunkIndexAt, 4 * count, new_index);
  set32(&bad, kChunkCountAt, count + 1);
  expect(bad, "is listed but all zero");
  // The same chunk with real data in a free slot's fields is caught by the slot checks.
  bad = snap;
  bad.insert(body_at, std::string("\x09\x01\x07\xf6\xff\x03\x00", 7));  // 9 zeros, 0x07, zeros
  bad.replace(kChunkIndexAt, 4 * count, new_index);
  set32(&bad, kChunkCountAt, count + 1);
  Reseal(&bad);
  EXPECT_TRUE(Stream(bad, &out).IsCorruption());
}

// Loading writes only non-zero bytes, so a slot can reach into a page that stays
// untouched (zero bytes of its id or fields). Writes after the load (a counter, a
// tombstone) must still be saved. 20-byte slots straddle the 4 KiB page boundaries: pick
// ids whose home slot has its id in one page and its `read` field in the next.
TEST(CounterSnapshot, WritesAfterLoadIntoStraddlingSlotsAreSaved) {
  CounterSpace s(Schema("repost:20 comment:20 like:24 read:32"),
                 CounterOptions{4 << 20, 0.9, 32, 4 << 20});
  Incr(&s, 1, 0, 1);  // maps the table
  const CounterTable& t = s.table(0);
  std::vector<int64_t> ids;
  for (int64_t id = 2; ids.size() < 40 && id < 10'000'000; ++id) {
    uint64_t home, step;
    t.ProbeStart(id, &home, &step);
    const uint64_t at = home * t.slot_bytes();
    const uint64_t boundary = (at / CounterTable::kPageBytes + 1) * CounterTable::kPageBytes;
    if (boundary < at + 8 || boundary > at + 16) continue;  // id in one page, `read` in the next
    if (t.page_touched(boundary / CounterTable::kPageBytes)) continue;
    Incr(&s, id, 3, 1);
    Incr(&s, id, 3, -1);  // the key stays with all counters zero: only its id is non-zero
    ids.push_back(id);
  }
  ASSERT_EQ(ids.size(), 40u);
  std::unique_ptr<CounterSpace> copy;
  ASSERT_TRUE(CounterSpace::DeserializeFrom(Image(s), &copy).ok());
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i % 4 == 0) {
      ASSERT_TRUE(copy->Del(ids[i]));
      ASSERT_TRUE(s.Del(ids[i]));
    } else {
      Incr(copy.get(), ids[i], 3, 0xffffffff);
      Incr(&s, ids[i], 3, 0xffffffff);
    }
  }
  Status st = copy->Validate();  // includes "untouched pages are zero"
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::unique_ptr<CounterSpace> again;
  st = CounterSpace::DeserializeFrom(Image(*copy), &again);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(Dump(*again), Dump(s));
  EXPECT_EQ(again->table(0).tombstones(), s.table(0).tombstones());
}

}  // namespace
}  // namespace feedkv
