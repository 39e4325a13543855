// Reading snapshots. ReadSnapshot parses and verifies a stream (header and
// section checksums, every length, the whole-file checksum) and hands what it
// finds to a visitor. DatasetLoader is the visitor that rebuilds databases and
// counter spaces; ValidatingVisitor decodes everything and keeps nothing
// (tools/feedkv-check-rdb). Errors are Corruption("... at offset N").
// Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/counter_space.h"
#include "storage/database.h"
#include "storage/file_io.h"
#include "storage/rdb_format.h"
#include "storage/rdb_stream.h"
#include "storage/status.h"

namespace feedkv::rdb {

class Visitor {
 public:
  virtual ~Visitor() = default;
  virtual Status OnAux(std::string_view name, std::string_view value) {
    (void)name;
    (void)value;
    return Status::OK();
  }
  virtual Status OnDatabase(int db, uint64_t keys, uint64_t expires) = 0;
  // expire_ms is kNoExpire when the key has none.
  virtual Status OnString(std::string_view key, std::string_view value, int64_t expire_ms) = 0;
  virtual Status OnInteger(std::string_view key, int64_t value, int64_t expire_ms) = 0;
  virtual Status OnObject(std::string_view key, ValueType type, std::string_view bytes,
                          int64_t expire_ms) = 0;
  // A decoded and validated counter space.
  virtual Status OnCounterSpace(std::string_view name, std::unique_ptr<CounterSpace> space) = 0;
  // A function library's code (FUNCTION LOAD's argument); ignored by default.
  virtual Status OnFunctionLibrary(std::string_view code) {
    (void)code;
    return Status::OK();
  }
};

struct LoadStats {
  uint64_t keys = 0;
  uint64_t expired_keys = 0;  // keys whose expire time was already past (still loaded)
  uint64_t counter_spaces = 0;
  uint64_t bytes = 0;
};

// Parses the 64-byte header and checks magic, version and its checksum.
Status ParseHeader(std::string_view bytes, Header* h);
// Reads just the header of a snapshot file.
Status ReadHeaderFile(Env* env, const std::string& path, Header* h);

// Reads a whole snapshot. `max_databases` bounds db numbers.
Status ReadSnapshot(RdbSource* src, int max_databases, Visitor* v, Header* h, LoadStats* stats);
Status ReadSnapshotFile(Env* env, const std::string& path, int max_databases, Visitor* v,
                        Header* h, LoadStats* stats);

// Rebuilds the dataset into `dbs` (which the caller has emptied) and
// `counter_spaces`. Keys are loaded even if their expire time has passed;
// expiry removes them afterwards (and logs the DEL).
class DatasetLoader : public Visitor {
 public:
  DatasetLoader(std::vector<Database*> dbs, int64_t now_ms) : dbs_(std::move(dbs)), now_ms_(now_ms) {}
  ~DatasetLoader() override;

  Status OnDatabase(int db, uint64_t keys, uint64_t expires) override;
  Status OnString(std::string_view key, std::string_view value, int64_t expire_ms) override;
  Status OnInteger(std::string_view key, int64_t value, int64_t expire_ms) override;
  Status OnObject(std::string_view key, ValueType type, std::string_view bytes,
                  int64_t expire_ms) override;
  Status OnCounterSpace(std::string_view name, std::unique_ptr<CounterSpace> space) override;

  std::vector<std::pair<std::string, std::unique_ptr<CounterSpace>>>& counter_spaces() {
    return counter_spaces_;
  }
  uint64_t expired_keys() const { return expired_; }
  // DEBUG RELOAD MERGE: a key the databases already hold is replaced, not
  // refused as a duplicate.
  void set_merge(bool merge) { merge_ = merge; }
  Status OnFunctionLibrary(std::string_view code) override {
    function_libraries_.emplace_back(code);
    return Status::OK();
  }
  // The function libraries, for the server's script engine to load.
  std::vector<std::string>& function_libraries() { return function_libraries_; }

 private:
  std::vector<Database*> dbs_;
  int64_t now_ms_;
  Database* cur_ = nullptr;
  uint64_t expired_ = 0;
  bool merge_ = false;
  std::vector<std::pair<std::string, std::unique_ptr<CounterSpace>>> counter_spaces_;
  std::vector<std::string> function_libraries_;
};

// Decodes every object and counter space to check it, and keeps nothing.
class ValidatingVisitor : public Visitor {
 public:
  Status OnAux(std::string_view name, std::string_view value) override;
  Status OnDatabase(int db, uint64_t keys, uint64_t expires) override;
  Status OnString(std::string_view, std::string_view, int64_t) override { return Count(); }
  Status OnInteger(std::string_view, int64_t, int64_t) override { return Count(); }
  Status OnObject(std::string_view key, ValueType type, std::string_view bytes,
                  int64_t expire_ms) override;
  Status OnCounterSpace(std::string_view name, std::unique_ptr<CounterSpace> space) override;

  std::vector<std::pair<std::string, std::string>> aux;
  std::vector<std::pair<int, uint64_t>> db_keys;  // (db, keys)
  uint64_t objects = 0;
  uint64_t counter_spaces = 0;

 private:
  Status Count() { return Status::OK(); }
};

}  // namespace feedkv::rdb
