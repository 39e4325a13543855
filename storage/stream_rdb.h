// A stream in Redis's RDB form (rdb.c, RDB_TYPE_STREAM_LISTPACKS and _2), so
// DUMP on Redis 5.0-7.0 and RESTORE on feedkv work, and the reverse.
//
// The form: the number of nodes, then per node its master ID (16 raw bytes,
// big-endian ms and seq) and a listpack of entries — a master entry (live and
// deleted counts, the master fields, 0), then per entry flags, ms and seq
// deltas from the master, the fields (or only the values when the entry has the
// master's fields: flag SAMEFIELDS) and its element count; then the length, the
// last ID and (v2) the first ID, the largest deleted ID and the entries added;
// then the groups: name, last ID, (v2) entries read, the pending list (raw ID,
// delivery time as 8 little-endian bytes, delivery count) and the consumers
// (name, seen time, the raw IDs they hold).
//
// feedkv writes only live entries, in nodes of up to 100 (Redis's default
// stream-node-max-entries). Pure functions; thread-compatible.
#pragma once

#include <memory>

#include "storage/redis_payload.h"
#include "storage/stream_value.h"

namespace feedkv {

// Writes `s` as RDB type 19 (the caller wrote the type byte).
void WriteRedisStream(const StreamValue& s, redis_payload::Writer* w);
// Reads a stream of RDB type 15 or 19 (after its type byte); false when malformed.
bool ReadRedisStream(redis_payload::Reader* r, uint8_t rdb_type, std::unique_ptr<StreamValue>* out);

}  // namespace feedkv
