// feedkv-check-rdb: validates a snapshot: header, every section checksum,
// the whole-file checksum, and every value (objects and counter spaces are
// decoded with the same code the server loads them with).
//
//   feedkv-check-rdb <dump.rdb> [--databases N]
//
// Exit status: 0 valid, 1 damaged, 2 usage or I/O error.
#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "storage/file_io.h"
#include "storage/rdb_reader.h"

using namespace feedkv;

int main(int argc, char** argv) {
  std::string path;
  int databases = 1 << 20;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--databases" && i + 1 < argc) {
      databases = std::atoi(argv[++i]);
    } else if (path.empty() && a.rfind("--", 0) != 0) {
      path = a;
    } else {
      path.clear();
      break;
    }
  }
  if (path.empty()) {
    fmt::print(stderr, "Usage: {} <dump.rdb> [--databases N]\n", argv[0]);
    return 2;
  }
  Env* env = Env::Default();
  if (!env->FileExists(path)) {
    fmt::print(stderr, "{}: no such file\n", path);
    return 2;
  }
  rdb::ValidatingVisitor v;
  rdb::Header h;
  rdb::LoadStats st;
  Status s = rdb::ReadSnapshotFile(env, path, databases, &v, &h, &st);
  if (h.version != 0 && (s.ok() || st.keys > 0 || !v.aux.empty())) {
    fmt::print("version {}, created {} ms, AOF lineage {:016x} position {}:{} (offset {})\n",
               h.version, h.ctime_ms, h.aof_lineage, h.aof_segment, h.aof_segment_offset,
               h.aof_offset);
  }
  for (const auto& [k, val] : v.aux) fmt::print("aux {} = {}\n", k, val);
  for (const auto& [db, keys] : v.db_keys) fmt::print("db{}: {} keys\n", db, keys);
  fmt::print("{} keys ({} objects), {} counter spaces checked\n", st.keys, v.objects,
             v.counter_spaces);
  if (!s.ok()) {
    fmt::print("Snapshot is damaged: {}\n", s.ToString());
    return s.IsCorruption() ? 1 : 2;
  }
  fmt::print("Snapshot is valid ({} bytes)\n", st.bytes);
  return 0;
}
