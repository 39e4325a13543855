// Counter space snapshots: CounterSpace::WriteTo / SerializeTo / ReadFrom /
// DeserializeFrom. Format (version 2; version 1 is still read) in docs/formats.md,
// "Counter space snapshot".
//
// A table is written as its non-zero kChunkBytes chunks: an index of the chunks present,
// then each chunk as (zero run, literal) pairs. The writer walks the table's touched
// pages in order and reads nothing else, never visiting the chunks between them, so its
// cost is linear in the pages the keys touched whatever the table's size (a 32 GiB table
// with one key saves like a 1 GiB one), and it streams through a 64 KiB buffer: no copy
// of a table is made, which keeps SAVE and a forked BGSAVE child cheap. The reader fills a
// freshly mapped table with the literals only (zero pages stay untouched and cost no
// RSS) and validates the touched slots.
#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "storage/counter_space.h"

namespace feedkv {

namespace {

using counter_coding::LoadLE32;
using counter_coding::LoadLE64;
using counter_coding::StoreLE32;
using counter_coding::StoreLE64;

constexpr char kMagic[8] = {'F', 'K', 'V', 'C', 'O', 'U', 'N', 'T'};
constexpr uint32_t kVersionWholeTables = 1;  // tables as raw slot bytes; read only
constexpr uint32_t kVersionChunked = 2;      // chunked tables; read only
// Version 2 plus "loose keys" at the end: the keys of a table the newest one was growing
// out of, written as (id, counters) and placed again on load.
constexpr uint32_t kVersionLooseKeys = 3;  // written by a space that never spilled
// Version 3 plus the cold tier: each table's tier and key count, the space's cold
// generation and the warm cache's written keys (docs/formats.md).
constexpr uint32_t kVersionTiered = 4;  // written by a space with a spilling or cold table
constexpr uint64_t kChunkBytes = 64 * 1024;
// Zero runs shorter than this stay inside a literal (a pair costs ~2-4 bytes).
constexpr uint64_t kMinZeroRun = 8;
constexpr size_t kBufferBytes = 64 * 1024;
constexpr uint64_t kPageBytes = CounterTable::kPageBytes;
static_assert(kChunkBytes % kPageBytes == 0);

Status Truncated(std::string_view what) {
  return Status::Corruption(fmt::format("counter space: truncated {}", what));
}

// Buffers the image, hashes it (XXH3-64, seed 0) and hands it to the sink in pieces of
// at most kBufferBytes.
class Encoder {
 public:
  explicit Encoder(CounterSnapshotSink* sink) : sink_(sink), hash_(XXH3_createState()) {
    XXH3_64bits_reset(hash_);
    buf_.reserve(kBufferBytes);
  }
  ~Encoder() { XXH3_freeState(hash_); }
  Encoder(const Encoder&) = delete;
  Encoder& operator=(const Encoder&) = delete;

  void Bytes(const char* p, size_t n) {
    while (n > 0) {
      if (buf_.size() == kBufferBytes) Flush();
      const size_t take = std::min(n, kBufferBytes - buf_.size());
      buf_.append(p, take);
      p += take;
      n -= take;
    }
  }
  void U8(uint8_t v) { Bytes(reinterpret_cast<const char*>(&v), 1); }
  void U32(uint32_t v) {
    char b[4];
    StoreLE32(b, v);
    Bytes(b, sizeof(b));
  }
  void U64(uint64_t v) {
    char b[8];
    StoreLE64(b, v);
    Bytes(b, sizeof(b));
  }
  void Varint(uint64_t v) {
    char b[10];
    size_t n = 0;
    for (; v >= 0x80; v >>= 7) b[n++] = static_cast<char>((v & 0x7f) | 0x80);
    b[n++] = static_cast<char>(v);
    Bytes(b, n);
  }
  // Writes the checksum of everything so far (itself not hashed) and flushes.
  void Finish() {
    Flush();
    char b[8];
    StoreLE64(b, XXH3_64bits_digest(hash_));
    sink_->Write(b, sizeof(b));
  }

 private:
  void Flush() {
    if (buf_.empty()) return;
    XXH3_64bits_update(hash_, buf_.data(), buf_.size());
    sink_->Write(buf_.data(), buf_.size());
    buf_.clear();
  }

  CounterSnapshotSink* sink_;
  XXH3_state_t* hash_;
  std::string buf_;
};

// Reads from the source and hashes what it read.
class Decoder {
 public:
  explicit Decoder(CounterSnapshotSource* src) : src_(src), hash_(XXH3_createState()) {
    XXH3_64bits_reset(hash_);
  }
  ~Decoder() { XXH3_freeState(hash_); }
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  bool Bytes(char* p, size_t n) {
    if (n == 0) return true;
    if (!src_->Read(p, n)) return false;
    XXH3_64bits_update(hash_, p, n);
    return true;
  }
  bool U8(uint8_t* v) {
    char c;
    if (!Bytes(&c, 1)) return false;
    *v = static_cast<uint8_t>(c);
    return true;
  }
  bool U32(uint32_t* v) {
    char b[4];
    if (!Bytes(b, sizeof(b))) return false;
    *v = LoadLE32(b);
    return true;
  }
  bool U64(uint64_t* v) {
    char b[8];
    if (!Bytes(b, sizeof(b))) return false;
    *v = LoadLE64(b);
    return true;
  }
  // Unsigned LEB128 of at most 64 bits; false on truncation or an over-long encoding.
  bool Varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b;
      if (!U8(&b)) return false;
      if (shift == 63 && (b & 0x7e) != 0) return false;
      *v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }
  // Reads the stored checksum and compares it with the hash of every byte read before.
  Status CheckChecksum() {
    char b[8];
    if (!src_->Read(b, sizeof(b))) return Truncated("checksum");
    if (LoadLE64(b) != XXH3_64bits_digest(hash_)) {
      return Status::Corruption("counter space: checksum mismatch");
    }
    return Status::OK();
  }

 private:
  CounterSnapshotSource* src_;
  XXH3_state_t* hash_;
};

uint64_t NumChunks(const CounterTable& t) { return (t.bytes() + kChunkBytes - 1) / kChunkBytes; }

// Finds the non-zero bytes of a table's slots reading only its touched pages, through
// a cursor over their runs. Positions asked for must not decrease, so one pass over a
// table costs the touched pages, not the table's size.
class NonZeroFinder {
 public:
  explicit NonZeroFinder(const CounterTable& t) : data_(t.data()), bytes_(t.bytes()) {
    t.TouchedRuns(&runs_);
  }

  // The first non-zero byte in [pos, end), or end. REQUIRES: pos >= the previous pos.
  uint64_t Next(uint64_t pos, uint64_t end) {
    for (; next_ < runs_.size(); ++next_) {
      const uint64_t run_begin = runs_[next_].first * kPageBytes;
      const uint64_t run_end = std::min(bytes_, runs_[next_].end * kPageBytes);
      if (run_end <= pos) continue;  // behind us
      if (run_begin >= end) return end;
      const uint64_t from = std::max(pos, run_begin);
      const uint64_t stop = std::min(end, run_end);
      const uint64_t at = from + counter_coding::FindNonZero(data_ + from, stop - from);
      if (at < stop) return at;
      if (stop == end) return end;  // the run goes on past `end`: keep it for later
    }
    return end;
  }

 private:
  const char* data_;
  uint64_t bytes_;
  std::vector<PageSet::Run> runs_;
  size_t next_ = 0;  // runs before it end at or before every position still to come
};

// The end of the literal starting at the non-zero byte `from`: the start of the next run
// of kMinZeroRun zero bytes, or `end` less its trailing zeros.
uint64_t LiteralEnd(const char* data, uint64_t from, uint64_t end) {
  uint64_t run = 0;
  for (uint64_t i = from; i < end; ++i) {
    if (data[i] != 0) {
      run = 0;
    } else if (++run == kMinZeroRun) {
      return i + 1 - kMinZeroRun;
    }
  }
  return end - run;
}

// A list of keys: u64 count, then count x {i64 id, n x u64}. False if truncated.
bool ReadKeyRows(Decoder* d, size_t n, std::vector<int64_t>* ids, std::vector<uint64_t>* rows) {
  uint64_t count;
  if (!d->U64(&count)) return false;
  for (uint64_t k = 0; k < count; ++k) {
    uint64_t id;
    if (!d->U64(&id)) return false;
    ids->push_back(static_cast<int64_t>(id));
    for (size_t f = 0; f < n; ++f) {
      uint64_t v;
      if (!d->U64(&v)) return false;
      rows->push_back(v);
    }
  }
  return true;
}

// Table body, version 2: u32 P, P x u32 chunk index (increasing), P x chunk.
void WriteChunks(const CounterTable& t, Encoder* e, std::vector<uint32_t>* present) {
  const uint64_t bytes = t.bytes();
  present->clear();
  // The chunks holding a non-zero byte, found by jumping from one to the next.
  NonZeroFinder index(t);
  for (uint64_t at = index.Next(0, bytes); at < bytes;) {
    const uint64_t c = at / kChunkBytes;
    present->push_back(static_cast<uint32_t>(c));
    at = index.Next(std::min(bytes, (c + 1) * kChunkBytes), bytes);
  }
  e->U32(static_cast<uint32_t>(present->size()));
  for (uint32_t c : *present) e->U32(c);
  NonZeroFinder body(t);
  for (uint32_t c : *present) {
    const uint64_t begin = c * kChunkBytes;
    const uint64_t end = std::min(bytes, begin + kChunkBytes);
    // Pairs (zero run, literal); a final (zeros, 0) covers trailing zeros.
    for (uint64_t pos = begin; pos < end;) {
      const uint64_t lit = body.Next(pos, end);
      if (lit == end) {
        e->Varint(end - pos);
        e->Varint(0);
        break;
      }
      const uint64_t lit_end = LiteralEnd(t.data(), lit, end);
      e->Varint(lit - pos);
      e->Varint(lit_end - lit);
      e->Bytes(t.data() + lit, lit_end - lit);
      pos = lit_end;
    }
  }
}

Status ReadChunks(Decoder* d, CounterTable* t, size_t table) {
  const uint64_t bytes = t->bytes();
  const uint64_t chunks = NumChunks(*t);
  uint32_t count;
  if (!d->U32(&count)) return Truncated("chunk index");
  if (count > chunks) {
    return Status::Corruption(fmt::format(
        "counter space: table {} lists {} chunks but has {}", table, count, chunks));
  }
  std::vector<uint32_t> index;  // grows with the input: a forged count allocates nothing
  for (uint32_t k = 0; k < count; ++k) {
    uint32_t c;
    if (!d->U32(&c)) return Truncated("chunk index");
    if (c >= chunks) {
      return Status::Corruption(fmt::format(
          "counter space: table {}: chunk {} out of range (the table has {})", table, c, chunks));
    }
    if (!index.empty() && c <= index.back()) {
      return Status::Corruption(fmt::format(
          "counter space: table {}: chunk index not increasing ({} after {})", table, c,
          index.back()));
    }
    index.push_back(c);
  }
  for (uint32_t c : index) {
    const uint64_t begin = c * kChunkBytes;
    const uint64_t len = std::min(kChunkBytes, bytes - begin);
    bool data = false;
    for (uint64_t pos = 0; pos < len;) {
      uint64_t zeros, lit;
      if (!d->Varint(&zeros) || !d->Varint(&lit)) {
        return Status::Corruption(fmt::format(
            "counter space: table {}: truncated or malformed run in chunk {}", table, c));
      }
      if (zeros > len - pos || lit > len - pos - zeros) {
        return Status::Corruption(fmt::format(
            "counter space: table {}: run overflows chunk {} ({} + {} bytes at {} of {})", table,
            c, zeros, lit, pos, len));
      }
      if (lit == 0 && pos + zeros != len) {
        return Status::Corruption(
            fmt::format("counter space: table {}: empty literal in chunk {}", table, c));
      }
      pos += zeros;
      if (lit > 0) {
        if (!d->Bytes(t->LoadTarget(begin + pos, lit), lit)) return Truncated("chunk data");
        pos += lit;
        data = true;
      }
    }
    if (!data) {
      return Status::Corruption(
          fmt::format("counter space: table {}: chunk {} is listed but all zero", table, c));
    }
  }
  return Status::OK();
}

// Table body, version 1: capacity x slot_bytes raw bytes. Read in chunks; all-zero pages
// are not copied.
Status ReadWholeTable(Decoder* d, CounterTable* t) {
  std::string buf(kChunkBytes, '\0');
  for (uint64_t at = 0; at < t->bytes(); at += kChunkBytes) {
    const size_t n = std::min(kChunkBytes, t->bytes() - at);
    if (!d->Bytes(buf.data(), n)) return Truncated("table slots");
    t->LoadNonZero(at, std::string_view(buf.data(), n));
  }
  return Status::OK();
}

}  // namespace

bool CounterStringSource::Read(char* p, size_t n) {
  if (in_.size() < n) return false;
  std::memcpy(p, in_.data(), n);
  in_.remove_prefix(n);
  return true;
}

void CounterSpace::WriteTo(CounterSnapshotSink* sink) const {
  Encoder e(sink);
  const size_t n = schema_->num_fields();
  e.Bytes(kMagic, sizeof(kMagic));
  e.U32(tiered_ ? kVersionTiered : kVersionLooseKeys);
  e.U8(static_cast<uint8_t>(n));
  for (size_t i = 0; i < n; ++i) {
    const std::string& name = schema_->field_name(i);
    e.U8(static_cast<uint8_t>(name.size()));
    e.Bytes(name.data(), name.size());
    e.U8(static_cast<uint8_t>(schema_->field_bits(i)));
  }
  e.U64(options_.table_bytes);
  uint64_t fill_bits;
  std::memcpy(&fill_bits, &options_.max_fill, sizeof(fill_bits));
  e.U64(fill_bits);
  e.U32(options_.max_probes);
  e.U64(static_cast<uint64_t>(max_id_seen_));
  e.U32(static_cast<uint32_t>(tables_.size()));
  std::string meta;
  std::vector<uint32_t> present;
  for (size_t i = 0; i < tables_.size(); ++i) {
    // A spilling table is written as it was frozen (hot on load), the writes made
    // since as warm keys below.
    const CounterTable& t = static_cast<int>(i) == spilling_ ? *spill_source_ : *tables_[i];
    meta.clear();
    t.EncodeMeta(&meta);
    e.Bytes(meta.data(), meta.size());
    WriteChunks(t, &e, &present);
  }
  for (const CounterDict* dict : {&aux_, &extend_}) {
    e.U64(dict->size());
    dict->ForEach([&](int64_t id, const uint64_t* row) {
      e.U64(static_cast<uint64_t>(id));
      for (size_t i = 0; i < n; ++i) e.U64(row[i]);
    });
  }
  e.U64(growing_from_ ? growing_from_->used() : 0);
  if (growing_from_) {
    std::array<uint64_t, CounterSchema::kMaxFields> row;
    growing_from_->ForEachUsed([&](int64_t id, const char* slot) {
      e.U64(static_cast<uint64_t>(id));
      schema_->LoadAll(slot, row.data());
      for (size_t i = 0; i < n; ++i) e.U64(row[i]);
    });
  }
  if (tiered_) {
    e.U64(cold_generation_);
    for (size_t i = 0; i < tables_.size(); ++i) {
      const bool cold = tiers_[i].state == TableTier::kCold;
      e.U8(cold ? static_cast<uint8_t>(TableTier::kCold) : static_cast<uint8_t>(TableTier::kHot));
      e.U64(cold ? tiers_[i].keys : 0);
    }
    // Every written (dirty) warm key: the cold store never has these rows.
    e.U64(warm_->dirty());
    warm_->ForEach([&](int64_t id, const uint64_t* row, bool dirty) {
      if (!dirty) return;
      e.U64(static_cast<uint64_t>(id));
      for (size_t i = 0; i < n; ++i) e.U64(row[i]);
    });
  }
  e.Finish();
}

void CounterSpace::SerializeTo(std::string* out) const {
  CounterStringSink sink(out);
  WriteTo(&sink);
}

Status CounterSpace::ReadFrom(CounterSnapshotSource* src, std::unique_ptr<CounterSpace>* out) {
  Decoder d(src);
  char magic[sizeof(kMagic)];
  if (!d.Bytes(magic, sizeof(magic))) return Truncated("header");
  if (std::memcmp(magic, kMagic, sizeof(kMagic)) != 0) {
    return Status::Corruption("counter space: bad magic");
  }
  uint32_t version;
  if (!d.U32(&version)) return Truncated("header");
  if (version != kVersionWholeTables && version != kVersionChunked &&
      version != kVersionLooseKeys && version != kVersionTiered) {
    return Status::Corruption(fmt::format("counter space: unknown format version {}", version));
  }
  uint8_t nfields;
  if (!d.U8(&nfields)) return Truncated("schema");
  std::vector<std::string> specs;
  for (unsigned i = 0; i < nfields; ++i) {
    uint8_t len, bits;
    char name[256];
    if (!d.U8(&len) || !d.Bytes(name, len) || !d.U8(&bits)) return Truncated("schema");
    specs.push_back(fmt::format("{}:{}", std::string_view(name, len), bits));
  }
  CounterSchema schema;
  Status s =
      CounterSchema::Parse(std::vector<std::string_view>(specs.begin(), specs.end()), &schema);
  if (!s.ok()) return Status::Corruption("counter space: bad schema: " + s.message());
  const size_t n = schema.num_fields();
  CounterOptions opts;
  uint64_t fill_bits, max_id;
  if (!d.U64(&opts.table_bytes) || !d.U64(&fill_bits) || !d.U32(&opts.max_probes) ||
      !d.U64(&max_id)) {
    return Truncated("options");
  }
  std::memcpy(&opts.max_fill, &fill_bits, sizeof(fill_bits));
  s = ValidateOptions(opts, schema.slot_bytes());
  if (!s.ok()) return Status::Corruption("counter space: bad options: " + s.message());
  auto space = std::make_unique<CounterSpace>(std::move(schema), opts);
  space->max_id_seen_ = static_cast<int64_t>(max_id);
  uint32_t ntables;
  if (!d.U32(&ntables)) return Truncated("table count");
  const size_t slot_bytes = space->schema_->slot_bytes();
  for (uint32_t i = 0; i < ntables; ++i) {
    char meta_bytes[CounterTable::kMetaBytes];
    if (!d.Bytes(meta_bytes, sizeof(meta_bytes))) return Truncated("table header");
    std::string_view meta_view(meta_bytes, sizeof(meta_bytes));
    CounterTableMeta meta;
    s = CounterTable::DecodeMeta(&meta_view, &meta);
    if (!s.ok()) return s;
    s = CounterTable::ValidateMeta(meta, slot_bytes);
    if (!s.ok()) return s;
    // The mapping is lazy (MAP_NORESERVE): only pages the input fills cost memory.
    std::unique_ptr<CounterTable> t;
    s = CounterTable::Create(space->schema_, meta, &t);
    if (!s.ok()) return s;
    s = version == kVersionWholeTables ? ReadWholeTable(&d, t.get()) : ReadChunks(&d, t.get(), i);
    if (!s.ok()) return s;
    s = t->FinishLoad();
    if (!s.ok()) return s;
    space->starts_.push_back(meta.first_id);
    space->tables_.push_back(std::move(t));
  }
  for (CounterDict* dict : {&space->aux_, &space->extend_}) {
    uint64_t count;
    if (!d.U64(&count)) return Truncated("dictionary");
    std::vector<uint64_t> row(n);
    for (uint64_t k = 0; k < count; ++k) {
      uint64_t id;
      if (!d.U64(&id)) return Truncated("dictionary");
      for (size_t f = 0; f < n; ++f) {
        if (!d.U64(&row[f])) return Truncated("dictionary");
      }
      if (dict->Find(static_cast<int64_t>(id)) != nullptr) {
        return Status::Corruption(
            fmt::format("counter space: duplicate id {}", static_cast<int64_t>(id)));
      }
      std::copy(row.begin(), row.end(), dict->Insert(static_cast<int64_t>(id)));
    }
  }
  std::vector<int64_t> loose_ids;
  std::vector<uint64_t> loose_rows;
  if (version >= kVersionLooseKeys && !ReadKeyRows(&d, n, &loose_ids, &loose_rows)) {
    return Truncated("loose keys");
  }
  std::vector<Tier> tiers;
  std::vector<int64_t> warm_ids;
  std::vector<uint64_t> warm_rows;
  uint64_t generation = 0;
  if (version >= kVersionTiered) {
    if (!d.U64(&generation)) return Truncated("tiers");
    for (uint32_t i = 0; i < ntables; ++i) {
      uint8_t state;
      Tier t;
      if (!d.U8(&state) || !d.U64(&t.keys)) return Truncated("tiers");
      if (state != static_cast<uint8_t>(TableTier::kHot) &&
          state != static_cast<uint8_t>(TableTier::kCold)) {
        return Status::Corruption(fmt::format("counter space: bad table tier {}", state));
      }
      t.state = static_cast<TableTier>(state);
      if (t.state == TableTier::kCold &&
          (i + 1 == ntables || space->tables_[i]->used() != 0 || generation == 0)) {
        return Status::Corruption("counter space: bad cold table");
      }
      tiers.push_back(t);
    }
    if (!ReadKeyRows(&d, n, &warm_ids, &warm_rows)) return Truncated("warm keys");
  }
  s = d.CheckChecksum();
  if (!s.ok()) return s;
  s = space->ValidateLayout();
  if (!s.ok()) return s;
  for (size_t k = 0; k < loose_ids.size(); ++k) {
    const int64_t id = loose_ids[k];
    if (id > space->max_id_seen_) {
      return Status::Corruption(fmt::format("counter space: id {} above the largest id", id));
    }
    if (space->Exists(id)) {
      return Status::Corruption(fmt::format("counter space: duplicate id {}", id));
    }
    const int route = space->Route(id);
    CounterTable::Probe probe;
    if (route >= 0) probe = space->tables_[route]->Lookup(id);
    space->Place(id, route, probe, &loose_rows[k * n]);
  }
  space->FinishGrowth();
  if (version >= kVersionTiered) {
    space->MakeTiered();
    space->tiers_ = std::move(tiers);
    space->tiers_.resize(space->tables_.size());
    space->cold_generation_ = generation;
    for (size_t k = 0; k < warm_ids.size(); ++k) {
      const int64_t id = warm_ids[k];
      const uint64_t* row = &warm_rows[k * n];
      if (const int r = space->TieredRoute(id); r >= 0) {
        std::copy(row, row + n, space->warm_->Mutable(id));
      } else {
        space->SetHotRow(id, row);
      }
    }
  }
  *out = std::move(space);
  return Status::OK();
}

Status CounterSpace::DeserializeFrom(std::string_view in, std::unique_ptr<CounterSpace>* out) {
  // The checksum first: it catches truncation and bit flips, including flips in counter
  // bits that no structural check could see. The structural checks still run, so a
  // well-checksummed but malformed image is rejected too.
  if (in.size() < sizeof(kMagic) + 4 + 8) return Truncated("header");
  const std::string_view body = in.substr(0, in.size() - 8);
  if (XXH3_64bits(body.data(), body.size()) != LoadLE64(in.data() + body.size())) {
    return Status::Corruption("counter space: checksum mismatch");
  }
  CounterStringSource src(in);
  std::unique_ptr<CounterSpace> space;
  Status s = ReadFrom(&src, &space);
  if (!s.ok()) return s;
  if (src.remaining() != 0) return Status::Corruption("counter space: trailing bytes");
  *out = std::move(space);
  return Status::OK();
}

}  // namespace feedkv
