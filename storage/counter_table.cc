#include "storage/counter_table.h"

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cassert>
#include <cstdlib>
#include <cstring>

// Inlined so the 8-byte hash on every lookup is a few instructions, not a library call.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace feedkv {

namespace {

bool IsPrime(uint64_t n) {
  if (n < 2) return false;
  if (n % 2 == 0) return n == 2;
  for (uint64_t d = 3; d <= n / d; d += 2) {
    if (n % d == 0) return false;
  }
  return true;
}

uint64_t HashId(int64_t id, uint64_t seed) {
  // Hash the little-endian bytes so the probe sequence, and so the raw table image, is
  // the same on every host.
  char buf[8];
  counter_coding::StoreLE64(buf, static_cast<uint64_t>(id));
  return XXH3_64bits_withSeed(buf, sizeof(buf), seed);
}

// Maps a uniform 64-bit hash onto [0, n) with a multiply instead of a division.
uint64_t FastRange(uint64_t h, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(h) * n) >> 64);
}

using counter_coding::AllZero;
using counter_coding::FindNonZero;

}  // namespace

uint64_t CounterTable::CapacityFor(uint64_t table_bytes, size_t slot_bytes) {
  if (slot_bytes == 0) return 0;
  uint64_t n = std::min(table_bytes, kMaxTableBytes) / slot_bytes;
  // Primes are dense (gap ~ ln n), so this walks a few dozen candidates at most.
  while (n >= kMinCapacity && !IsPrime(n)) --n;
  return n >= kMinCapacity ? n : 0;
}

Status CounterTable::ValidateMeta(const CounterTableMeta& m, size_t slot_bytes) {
  if (m.first_id > m.last_id) return Status::Corruption("counter table: first id above last id");
  if (m.capacity < kMinCapacity || m.capacity > kMaxTableBytes / slot_bytes) {
    return Status::Corruption(fmt::format("counter table: bad capacity {}", m.capacity));
  }
  if (!IsPrime(m.capacity)) {
    return Status::Corruption(fmt::format("counter table: capacity {} is not prime", m.capacity));
  }
  if (m.max_probes < 1 || m.max_probes > kMaxProbesLimit) {
    return Status::Corruption(fmt::format("counter table: bad probe limit {}", m.max_probes));
  }
  if (m.max_used < 1 || m.max_used > m.capacity) {
    return Status::Corruption(fmt::format("counter table: bad max used {}", m.max_used));
  }
  return Status::OK();
}

CounterTable::CounterTable(std::shared_ptr<const CounterSchema> schema,
                           const CounterTableMeta& meta)
    : schema_(std::move(schema)), meta_(meta), slot_bytes_(schema_->slot_bytes()) {}

#if defined(__SANITIZE_ADDRESS__)
// Under ASan a heap block of exactly bytes() replaces the mapping, so that any access
// past the last slot is reported instead of landing in the page's slack.
CounterTable::~CounterTable() { std::free(base_); }

Status CounterTable::Map() {
  base_ = static_cast<char*>(std::calloc(1, bytes()));
  if (base_ == nullptr) return Status::NoSpace("counter table: out of memory");
  mapped_bytes_ = bytes();
  return Status::OK();
}
#else
CounterTable::~CounterTable() {
  if (base_ != nullptr) munmap(base_, mapped_bytes_);
}

Status CounterTable::Map() {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t len = (bytes() + page - 1) / page * page;
  // MAP_NORESERVE: a 1 GiB table mostly empty at first should not be charged against
  // overcommit limits up front; anonymous pages read as zero, i.e. as empty slots.
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  if (p == MAP_FAILED) {
    return Status::NoSpace(fmt::format("counter table: cannot map {} bytes", len));
  }
  base_ = static_cast<char*>(p);
  mapped_bytes_ = len;
  return Status::OK();
}
#endif

Status CounterTable::Create(std::shared_ptr<const CounterSchema> schema,
                            const CounterTableMeta& meta, std::unique_ptr<CounterTable>* out) {
  Status s = ValidateMeta(meta, schema->slot_bytes());
  if (!s.ok()) return Status::InvalidArgument(s.message());
  std::unique_ptr<CounterTable> t(new CounterTable(std::move(schema), meta));
  s = t->Map();
  if (!s.ok()) return s;
  *out = std::move(t);
  return Status::OK();
}

Status CounterTable::FromBytes(std::shared_ptr<const CounterSchema> schema,
                               const CounterTableMeta& meta, std::string_view raw,
                               std::unique_ptr<CounterTable>* out) {
  Status s = ValidateMeta(meta, schema->slot_bytes());
  if (!s.ok()) return s;
  std::unique_ptr<CounterTable> t(new CounterTable(std::move(schema), meta));
  if (raw.size() != t->bytes()) {
    return Status::Corruption(
        fmt::format("counter table: {} slot bytes, expected {}", raw.size(), t->bytes()));
  }
  s = t->Map();
  if (!s.ok()) return s;
  t->LoadNonZero(0, raw);
  s = t->FinishLoad();
  if (!s.ok()) return s;
  *out = std::move(t);
  return Status::OK();
}

char* CounterTable::LoadTarget(uint64_t offset, size_t n) {
  assert(offset <= bytes() && n <= bytes() - offset);
  Touch(offset, offset + n);
  return base_ + offset;
}

void CounterTable::LoadNonZero(uint64_t offset, std::string_view raw) {
  assert(offset % kPageBytes == 0);
  for (uint64_t at = 0; at < raw.size(); at += kPageBytes) {
    const size_t n = std::min<uint64_t>(kPageBytes, raw.size() - at);
    if (!AllZero(raw.data() + at, n)) std::memcpy(LoadTarget(offset + at, n), raw.data() + at, n);
  }
}

Status CounterTable::FinishLoad() {
  Status s = Scan(&used_, &tombstones_, &probe_sum_, &max_probe_seen_);
  if (!s.ok()) return s;
  if (used_ > meta_.max_used) {
    return Status::Corruption("counter table: more keys than its fill limit allows");
  }
  // Only non-zero bytes were loaded, so a key's or tombstone's slot can reach into an
  // untouched page (zero bytes of its id or fields). Later writes to the slot (a counter,
  // Erase's tombstone mark) must land in touched pages, so such slots are touched whole.
  // They are the slots across the two edges of each run of touched pages.
  std::vector<PageSet::Run> runs;
  touched_.Runs(&runs);
  std::vector<uint64_t> edges;
  for (const PageSet::Run& r : runs) {
    edges.push_back(r.first * kPageBytes / slot_bytes_);
    if (r.end * kPageBytes < bytes()) edges.push_back((r.end * kPageBytes - 1) / slot_bytes_);
  }
  for (uint64_t i : edges) {
    if (counter_coding::LoadLE64(slot(i)) != kEmpty) Touch(i * slot_bytes_, (i + 1) * slot_bytes_);
  }
  return Status::OK();
}

void CounterTable::Touch(uint64_t begin, uint64_t end) {
  if (begin >= end) return;
  touched_.Add(begin / kPageBytes, (end - 1) / kPageBytes + 1);
}

void CounterTable::set_last_id(int64_t last) {
  assert(last >= meta_.first_id && last <= meta_.last_id);
  meta_.last_id = last;
}

double CounterTable::mean_probes() const {
  return used_ == 0 ? 0.0 : static_cast<double>(probe_sum_) / static_cast<double>(used_);
}

void CounterTable::ProbeStart(int64_t id, uint64_t* home, uint64_t* step) const {
  *home = FastRange(HashId(id, meta_.seed1), meta_.capacity);
  *step = 1 + FastRange(HashId(id, meta_.seed2), meta_.capacity - 1);
}

CounterTable::Probe CounterTable::Lookup(int64_t id) const {
  assert(!IsReservedId(id));
  const uint64_t want = Encode(id);
  const uint64_t cap = meta_.capacity;
  uint64_t i = FastRange(HashId(id, meta_.seed1), cap);
  uint64_t step = 0;  // computed only on a miss at the home slot, the common case at low fill
  Probe free;
  for (uint32_t n = 1;; ++n) {
    const uint64_t stored = counter_coding::LoadLE64(slot(i));
    if (stored == want) return Probe{i, n, true};
    if (stored == kEmpty) {
      // Keys are never placed past an empty slot of their sequence, so the id is absent.
      return free.slot != kNoSlot ? free : Probe{i, n, false};
    }
    if (stored == kTombstone && free.slot == kNoSlot) free = Probe{i, n, false};
    if (n >= meta_.max_probes) return free;
    if (step == 0) step = 1 + FastRange(HashId(id, meta_.seed2), cap - 1);
    i += step;
    if (i >= cap) i -= cap;
  }
}

char* CounterTable::Insert(int64_t id, const Probe& p) {
  assert(!p.found && p.slot < meta_.capacity && !full());
  char* s = slot(p.slot);
  const uint64_t prev = counter_coding::LoadLE64(s);
  assert(prev == kEmpty || prev == kTombstone);
  if (prev == kTombstone) --tombstones_;
  // Free slots keep zero fields (Erase clears them), so only the id needs writing.
  counter_coding::StoreLE64(s, Encode(id));
  const uint64_t at = p.slot * slot_bytes_;
  Touch(at, at + slot_bytes_);
  ++used_;
  probe_sum_ += p.probes;
  if (p.probes > max_probe_seen_) max_probe_seen_ = p.probes;
  return s;
}

void CounterTable::Erase(const Probe& p) {
  assert(p.found && p.slot < meta_.capacity);
  char* s = slot(p.slot);
  // A tombstone, not an empty slot: later keys of this probe sequence may sit beyond it.
  counter_coding::StoreLE64(s, kTombstone);
  std::memset(s + CounterSchema::kIdBytes, 0, slot_bytes_ - CounterSchema::kIdBytes);
  --used_;
  ++tombstones_;
  probe_sum_ -= p.probes;
}

Status CounterTable::Scan(uint64_t* used, uint64_t* tombstones, uint64_t* probe_sum,
                          uint32_t* max_probe) const {
  *used = *tombstones = *probe_sum = 0;
  *max_probe = 0;
  const size_t field_bytes = slot_bytes_ - CounterSchema::kIdBytes;
  Status s;
  // All-zero slots (all of the untouched pages) are empty with zero fields: valid.
  ForEachNonZeroSlot([&](uint64_t i) {
    if (s.ok()) s = ScanSlot(i, field_bytes, used, tombstones, probe_sum, max_probe);
  });
  return s;
}

Status CounterTable::ScanSlot(uint64_t i, size_t field_bytes, uint64_t* used, uint64_t* tombstones,
                              uint64_t* probe_sum, uint32_t* max_probe) const {
  const char* s = slot(i);
  const uint64_t stored = counter_coding::LoadLE64(s);
  if (stored == kEmpty || stored == kTombstone) {
    if (!AllZero(s + CounterSchema::kIdBytes, field_bytes)) {
      return Status::Corruption(fmt::format("counter table: free slot {} has data", i));
    }
    if (stored == kTombstone) ++*tombstones;
    return Status::OK();
  }
  const int64_t id = Decode(stored);
  if (!Owns(id)) {
    return Status::Corruption(
        fmt::format("counter table: id {} outside [{}, {}]", id, meta_.first_id, meta_.last_id));
  }
  if (!schema_->PaddingIsZero(s)) {
    return Status::Corruption(fmt::format("counter table: slot {} has stray padding bits", i));
  }
  // Lookup returns the first match along the sequence: any other slot means the key is
  // unreachable (an empty slot before it) or duplicated (an earlier copy).
  const Probe p = Lookup(id);
  if (!p.found || p.slot != i) {
    return Status::Corruption(
        fmt::format("counter table: id {} in slot {} is duplicated or unreachable", id, i));
  }
  ++*used;
  *probe_sum += p.probes;
  if (p.probes > *max_probe) *max_probe = p.probes;
  return Status::OK();
}

Status CounterTable::Validate() const {
  uint64_t used, tombstones, probe_sum;
  uint32_t max_probe;
  Status s = Scan(&used, &tombstones, &probe_sum, &max_probe);
  if (!s.ok()) return s;
  if (used != used_ || tombstones != tombstones_ || probe_sum != probe_sum_ ||
      max_probe > max_probe_seen_) {
    return Status::Corruption("counter table: cached counters disagree with the slots");
  }
  if (used_ > meta_.max_used) return Status::Corruption("counter table: over its fill limit");
  // The gaps between touched runs (all of them: this check reads the whole table).
  std::vector<PageSet::Run> runs;
  touched_.Runs(&runs);
  runs.push_back(PageSet::Run{num_pages(), num_pages()});
  uint64_t gap = 0;
  for (const PageSet::Run& r : runs) {
    const uint64_t at = gap * kPageBytes, end = std::min<uint64_t>(bytes(), r.first * kPageBytes);
    if (at < end && !AllZero(base_ + at, end - at)) {
      const uint64_t bad = (at + FindNonZero(base_ + at, end - at)) / kPageBytes;
      return Status::Corruption(fmt::format("counter table: untouched page {} has data", bad));
    }
    gap = r.end;
  }
  return Status::OK();
}

void CounterTable::EncodeMeta(std::string* out) const {
  using counter_coding::PutLE32;
  using counter_coding::PutLE64;
  PutLE64(out, static_cast<uint64_t>(meta_.first_id));
  PutLE64(out, static_cast<uint64_t>(meta_.last_id));
  PutLE64(out, meta_.capacity);
  PutLE32(out, meta_.max_probes);
  PutLE64(out, meta_.max_used);
  PutLE64(out, meta_.seed1);
  PutLE64(out, meta_.seed2);
}

Status CounterTable::DecodeMeta(std::string_view* in, CounterTableMeta* meta) {
  if (in->size() < kMetaBytes) return Status::Corruption("counter table: truncated header");
  const char* p = in->data();
  meta->first_id = static_cast<int64_t>(counter_coding::LoadLE64(p));
  meta->last_id = static_cast<int64_t>(counter_coding::LoadLE64(p + 8));
  meta->capacity = counter_coding::LoadLE64(p + 16);
  meta->max_probes = counter_coding::LoadLE32(p + 24);
  meta->max_used = counter_coding::LoadLE64(p + 28);
  meta->seed1 = counter_coding::LoadLE64(p + 36);
  meta->seed2 = counter_coding::LoadLE64(p + 44);
  in->remove_prefix(kMetaBytes);
  return Status::OK();
}

void CounterTable::SwapWith(CounterTable& other) noexcept {
  std::swap(schema_, other.schema_);
  std::swap(meta_, other.meta_);
  std::swap(slot_bytes_, other.slot_bytes_);
  std::swap(base_, other.base_);
  std::swap(mapped_bytes_, other.mapped_bytes_);
  std::swap(touched_, other.touched_);
  std::swap(used_, other.used_);
  std::swap(tombstones_, other.tombstones_);
  std::swap(probe_sum_, other.probe_sum_);
  std::swap(max_probe_seen_, other.max_probe_seen_);
}

}  // namespace feedkv
