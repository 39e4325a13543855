#include "storage/counter_cold_rows.h"

#include <algorithm>
#include <limits>
#include <vector>

#include <fmt/format.h>

namespace feedkv::counter_cold {

std::string EncodePacked(const CounterSchema& schema, const char* slot) {
  const size_t packed = schema.slot_bytes() - CounterSchema::kIdBytes;
  std::string row(1 + packed, '\0');
  row[0] = kPacked;
  std::memcpy(row.data() + 1, slot + CounterSchema::kIdBytes, packed);
  return row;
}

bool SlotIsZero(const CounterSchema& schema, const char* slot) {
  const char* fields = slot + CounterSchema::kIdBytes;
  const size_t packed = schema.slot_bytes() - CounterSchema::kIdBytes;
  return std::all_of(fields, fields + packed, [](char c) { return c == 0; });
}

std::string Encode(const CounterSchema& schema, const uint64_t* values) {
  const size_t n = schema.num_fields();
  bool fits = true;
  for (size_t i = 0; i < n; i++) fits = fits && values[i] <= schema.field_max(i);
  if (fits) {
    // Field loads and stores touch 8 bytes from a field's word: pad the slot.
    std::string slot(schema.slot_bytes() + 8, '\0');
    for (size_t i = 0; i < n; i++) schema.Store(slot.data(), i, values[i]);
    return EncodePacked(schema, slot.data());
  }
  std::string row(1 + 8 * n, '\0');
  row[0] = kWide;
  for (size_t i = 0; i < n; i++) counter_coding::StoreLE64(row.data() + 1 + 8 * i, values[i]);
  return row;
}

Status Decode(const CounterSchema& schema, std::string_view row, uint64_t* values) {
  const size_t n = schema.num_fields();
  const size_t packed = schema.slot_bytes() - CounterSchema::kIdBytes;
  if (!row.empty() && row[0] == kPacked && row.size() == 1 + packed) {
    std::string slot(schema.slot_bytes() + 8, '\0');
    std::memcpy(slot.data() + CounterSchema::kIdBytes, row.data() + 1, packed);
    schema.LoadAll(slot.data(), values);
    return Status::OK();
  }
  if (!row.empty() && row[0] == kWide && row.size() == 1 + 8 * n) {
    for (size_t i = 0; i < n; i++) values[i] = counter_coding::LoadLE64(row.data() + 1 + 8 * i);
    return Status::OK();
  }
  return Status::Corruption(
      fmt::format("bad cold counter row: {} bytes, tag {}", row.size(),
                  row.empty() ? -1 : static_cast<int>(static_cast<unsigned char>(row[0]))));
}

namespace {

// Emits the keys with ids in [lo, hi] (there are `keys` of them) in id order.
class SortedExport {
 public:
  SortedExport(const CounterTable& t, size_t chunk_rows,
               const std::function<Status(std::span<const SlotRef>)>& fn)
      : t_(t), chunk_rows_(chunk_rows), fn_(fn) {}

  Status Range(int64_t lo, int64_t hi, uint64_t keys) {
    if (keys <= chunk_rows_ || lo == hi) return Emit(lo, hi, keys);
    // Split [lo, hi] into equal-width buckets (the span may exceed int64, so
    // in uint64), count each in one pass, and group neighbours into chunks.
    // A bucket still too big is split again: each level narrows the width
    // 4096 times, so skew costs a few more passes, never a huge chunk.
    constexpr uint64_t kBuckets = 4096;
    const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    const uint64_t width = span / kBuckets + 1;
    auto bucket = [&](int64_t id) { return (static_cast<uint64_t>(id) - static_cast<uint64_t>(lo)) / width; };
    auto start = [&](uint64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(lo) + b * width); };
    const uint64_t last = bucket(hi);
    std::vector<uint64_t> counts(last + 1, 0);
    t_.ForEachUsed([&](int64_t id, const char*) {
      if (id >= lo && id <= hi) counts[bucket(id)]++;
    });
    for (uint64_t b = 0; b <= last;) {
      uint64_t e = b;
      uint64_t n = 0;
      while (e <= last && (e == b || n + counts[e] <= chunk_rows_)) n += counts[e++];
      const int64_t sub_hi = e > last ? hi : start(e) - 1;
      if (n > 0) {
        Status s = e == b + 1 && n > chunk_rows_ ? Range(start(b), sub_hi, n) : Emit(start(b), sub_hi, n);
        if (!s.ok()) return s;
      }
      b = e;
    }
    return Status::OK();
  }

 private:
  Status Emit(int64_t lo, int64_t hi, uint64_t keys) {
    chunk_.clear();
    chunk_.reserve(keys);
    t_.ForEachUsed([&](int64_t id, const char* slot) {
      if (id >= lo && id <= hi) chunk_.push_back(SlotRef{id, slot});
    });
    std::sort(chunk_.begin(), chunk_.end(), [](const SlotRef& x, const SlotRef& y) { return x.id < y.id; });
    return fn_(chunk_);
  }

  const CounterTable& t_;
  const size_t chunk_rows_;
  const std::function<Status(std::span<const SlotRef>)>& fn_;
  std::vector<SlotRef> chunk_;
};

}  // namespace

Status ExportSorted(const CounterTable& table, size_t chunk_rows,
                    const std::function<Status(std::span<const SlotRef>)>& fn) {
  if (table.used() == 0) return Status::OK();
  int64_t lo = std::numeric_limits<int64_t>::max();
  int64_t hi = std::numeric_limits<int64_t>::min();
  table.ForEachUsed([&](int64_t id, const char*) {
    lo = std::min(lo, id);
    hi = std::max(hi, id);
  });
  SortedExport e(table, std::max<size_t>(chunk_rows, 1), fn);
  return e.Range(lo, hi, table.used());
}

}  // namespace feedkv::counter_cold
