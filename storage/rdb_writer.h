// Writing snapshots: every database (keys, expiries, values in their compact
// snapshot form) and every counter space, in the format of rdb_format.h.
// The functions only read the dataset; the caller makes sure it does not
// change meanwhile (the command thread calls them, or a forked child does).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/database.h"
#include "storage/file_io.h"
#include "storage/rdb_format.h"
#include "storage/rdb_stream.h"
#include "storage/status.h"

namespace feedkv {
class CounterSpace;
}

namespace feedkv::rdb {

// What a snapshot is taken of. Pointers are not owned.
struct SnapshotSource {
  Header header;
  std::vector<std::pair<std::string, std::string>> aux;  // informational fields
  std::vector<const Database*> dbs;                       // index = db number
  std::vector<std::pair<std::string_view, const CounterSpace*>> counter_spaces;
  std::vector<std::string> function_libraries;  // FUNCTION LOAD code, in load order
  bool compress = true;  // rdbcompression: zero runs in large blobs
  // Redis's rdb-key-save-delay (a test hook): microseconds to sleep after
  // each key; a negative -n sleeps 1 us with probability 1/n. Only a
  // snapshot child sets it.
  int64_t key_delay_us = 0;
};

struct SaveStats {
  uint64_t keys = 0;
  uint64_t bytes = 0;
};

// Streams a whole snapshot into `sink` and finishes it.
Status WriteSnapshot(const SnapshotSource& src, RdbSink* sink, SaveStats* stats);

// Writes a snapshot to `path` (created or truncated), fsyncs and closes it.
// The caller renames it into place.
Status WriteSnapshotFile(Env* env, const std::string& path, const SnapshotSource& src,
                         SaveStats* stats);

}  // namespace feedkv::rdb
