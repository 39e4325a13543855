// Counter cold rows: how a counter key is stored in the cold tier, and how a
// table's keys leave it in id order (docs/counters.md, "Cold tables").
//
// A row's value is one tag byte, then either the key's fields exactly as a
// table slot packs them (kPacked: a spilled slot without its id, so a spill
// is a copy per slot) or every field as 8 little-endian bytes (kWide: a key
// with a counter wider than its field, as the aux dict holds it).
//
// ExportSorted hands a table's keys out in ascending id order, in chunks of
// at most `chunk_rows`, without sorting the whole table at once: one pass
// finds the id range, one counts its keys in 4096 equal-width buckets, then
// one pass per chunk of neighbouring buckets gathers and sorts that chunk; a
// bucket holding more than `chunk_rows` keys is split the same way again
// (skewed ids cost a few more passes, never a bigger chunk). Transient memory
// is one chunk; the cost is a scan of the table's touched pages per chunk. It
// only reads the table, so it may run on another thread while nothing writes
// to the table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "storage/counter_schema.h"
#include "storage/counter_table.h"
#include "storage/status.h"

namespace feedkv::counter_cold {

enum Tag : char { kPacked = 1, kWide = 2 };

// The row of a slot (`slot` points at the slot's id).
std::string EncodePacked(const CounterSchema& schema, const char* slot);
// True if every field of the slot is zero (padding is always zero). A spill
// writes no row for such a key: in a cold range, all zeros means absent.
bool SlotIsZero(const CounterSchema& schema, const char* slot);
// The row of counters values[0, num_fields): packed when every value fits its
// field, wide otherwise.
std::string Encode(const CounterSchema& schema, const uint64_t* values);
// Counters of a row into values[0, num_fields). Corruption on a bad tag or size.
Status Decode(const CounterSchema& schema, std::string_view row, uint64_t* values);

// One exported key: its id and its slot in the table.
struct SlotRef {
  int64_t id;
  const char* slot;
};
// Calls fn with each chunk of the table's keys (at most chunk_rows each),
// chunks and keys within them in ascending id order; stops at the first error
// fn returns.
Status ExportSorted(const CounterTable& table, size_t chunk_rows,
                    const std::function<Status(std::span<const SlotRef>)>& fn);

}  // namespace feedkv::counter_cold
