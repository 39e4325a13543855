#include "storage/rdb_reader.h"

#include <xxhash.h>

#include <cstring>

#include <fmt/format.h>

#include "storage/counter_space.h"
#include "storage/object_codec.h"

namespace feedkv::rdb {

namespace {

uint64_t Load64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

// Largest string the reader accepts (a value, key or blob).
constexpr uint64_t kMaxString = 1ull << 36;

// Lets CounterSpace::ReadFrom read (and so checksum) straight from the snapshot.
class CounterSourceAdapter : public CounterSnapshotSource {
 public:
  explicit CounterSourceAdapter(RdbSource* src) : src_(src) {}
  bool Read(char* p, size_t n) override { return src_->Read(p, n); }

 private:
  RdbSource* src_;
};

class Reader {
 public:
  Reader(RdbSource* src, int max_dbs, Visitor* v, LoadStats* st)
      : src_(src), max_dbs_(max_dbs), v_(v), st_(st) {}

  Status Bad(std::string_view what) const {
    if (!src_->status().ok()) {
      return Status::Corruption(fmt::format("{} at offset {}: {}", what, src_->offset(),
                                            src_->status().ToString()));
    }
    return Status::Corruption(fmt::format("{} at offset {}", what, src_->offset()));
  }

  Status Run(Header* h) {
    char hb[kHeaderSize];
    if (!src_->Read(hb, sizeof(hb))) return Bad("file shorter than the header");
    Status s = ParseHeader(std::string_view(hb, sizeof(hb)), h);
    if (!s.ok()) return s;
    while (true) {
      src_->BeginSection();
      uint64_t section_at = src_->offset();
      uint8_t kind;
      if (!src_->GetU8(&kind)) return Bad("unexpected end of file (no end marker)");
      if (kind == kSectionEnd) break;
      switch (kind) {
        case kSectionAux: s = Aux(); break;
        case kSectionDatabase: s = Db(); break;
        case kSectionCounters: s = Counters(); break;
        case kSectionFunctions: s = Functions(); break;
        default:
          return Status::Corruption(fmt::format("unknown section kind 0x{:02x} at offset {}", kind, section_at));
      }
      if (!s.ok()) return s;
      uint64_t stored, computed;
      if (!src_->EndSection(&stored, &computed)) {
        return Status::Corruption(fmt::format(
            "section checksum mismatch for the section at offset {} (stored {:016x}, computed {:016x})",
            section_at, stored, computed));
      }
    }
    uint64_t stored, computed;
    if (!src_->FinishFile(&stored, &computed)) {
      return Status::Corruption(fmt::format("file checksum mismatch (stored {:016x}, computed {:016x})",
                                            stored, computed));
    }
    uint8_t extra;
    if (src_->GetU8(&extra)) return Bad("trailing bytes after the end marker");
    st_->bytes = src_->offset();
    return Status::OK();
  }

 private:
  Status Aux() {
    uint64_t n;
    if (!src_->GetVarint(&n)) return Bad("bad aux count");
    std::string k, val;
    for (uint64_t i = 0; i < n; i++) {
      if (!src_->GetString(&k, 1 << 20) || !src_->GetString(&val, 1 << 20)) return Bad("bad aux field");
      Status s = v_->OnAux(k, val);
      if (!s.ok()) return s;
    }
    return Status::OK();
  }

  Status Functions() {
    uint64_t n;
    if (!src_->GetVarint(&n)) return Bad("bad function library count");
    std::string code;
    for (uint64_t i = 0; i < n; i++) {
      if (!src_->GetString(&code, 512u << 20)) return Bad("bad function library");
      Status s = v_->OnFunctionLibrary(code);
      if (!s.ok()) return s;
    }
    return Status::OK();
  }

  Status Db() {
    uint64_t db, keys, expires;
    if (!src_->GetVarint(&db) || !src_->GetVarint(&keys) || !src_->GetVarint(&expires)) {
      return Bad("bad database section header");
    }
    if (db >= static_cast<uint64_t>(max_dbs_)) {
      return Bad(fmt::format("database {} out of range (databases {})", db, max_dbs_));
    }
    Status s = v_->OnDatabase(static_cast<int>(db), keys, expires);
    if (!s.ok()) return s;
    uint64_t seen = 0, seen_expires = 0;
    std::string key_scratch, val_scratch, key;
    while (true) {
      uint8_t tag;
      if (!src_->GetU8(&tag)) return Bad("unexpected end of file in a database section");
      if (tag == kEntryEnd) break;
      uint8_t kind = tag & ~kHasExpire;
      int64_t expire = kNoExpire;
      if (tag & kHasExpire) {
        uint64_t e;
        if (!src_->GetFixed64(&e)) return Bad("truncated expire time");
        expire = static_cast<int64_t>(e);
        if (expire <= 0) return Bad("bad expire time");
        seen_expires++;
      }
      std::string_view kv;
      if (!src_->GetStringView(&kv, kMaxString, &key_scratch)) return Bad("bad key");
      key.assign(kv);  // the value read below may reuse the buffer
      switch (kind) {
        case kEntryString: {
          std::string_view val;
          if (!src_->GetStringView(&val, kMaxString, &val_scratch)) return Bad("bad string value");
          s = v_->OnString(key, val, expire);
          break;
        }
        case kEntryInteger: {
          uint64_t iv;
          if (!src_->GetFixed64(&iv)) return Bad("bad integer value");
          s = v_->OnInteger(key, static_cast<int64_t>(iv), expire);
          break;
        }
        case kEntryObject: {
          uint8_t type;
          std::string_view blob;
          if (!src_->GetU8(&type)) return Bad("bad object type");
          if (type == static_cast<uint8_t>(ValueType::kString) || type > 63) {
            return Bad(fmt::format("bad object type {}", type));
          }
          if (!src_->GetBlob(&blob, kMaxString, &val_scratch)) return Bad("bad object value");
          s = v_->OnObject(key, static_cast<ValueType>(type), blob, expire);
          break;
        }
        default:
          return Bad(fmt::format("unknown entry tag 0x{:02x}", tag));
      }
      if (!s.ok()) {
        return Status::Corruption(fmt::format("key '{}' in db {} before offset {}: {}", key, db,
                                              src_->offset(), s.message()));
      }
      seen++;
      st_->keys++;
    }
    if (seen != keys || seen_expires != expires) {
      return Bad(fmt::format("database {} holds {} keys ({} with expire) but its header says {} ({})",
                             db, seen, seen_expires, keys, expires));
    }
    return Status::OK();
  }

  Status Counters() {
    uint64_t n;
    if (!src_->GetVarint(&n)) return Bad("bad counter space count");
    std::string name, scratch;
    for (uint64_t i = 0; i < n; i++) {
      uint8_t form;
      if (!src_->GetString(&name, 1 << 20)) return Bad("bad counter space name");
      if (!src_->GetU8(&form)) return Bad("bad counter space body");
      std::unique_ptr<CounterSpace> space;
      Status s;
      if (form == kCounterStream) {
        CounterSourceAdapter in(src_);
        s = CounterSpace::ReadFrom(&in, &space);
      } else {
        // Version 1 files: a blob holding a whole-table image.
        std::string_view blob;
        if (!src_->GetBlobBody(form, &blob, kMaxString, &scratch)) {
          return Bad("bad counter space body");
        }
        s = CounterSpace::DeserializeFrom(blob, &space);
      }
      if (s.ok()) s = v_->OnCounterSpace(name, std::move(space));
      if (!s.ok()) {
        return Status::Corruption(fmt::format("counter space '{}' before offset {}: {}", name,
                                              src_->offset(), s.message()));
      }
      st_->counter_spaces++;
    }
    return Status::OK();
  }

  RdbSource* src_;
  int max_dbs_;
  Visitor* v_;
  LoadStats* st_;
};

}  // namespace

Status ParseHeader(std::string_view b, Header* h) {
  if (b.size() < kHeaderSize) return Status::Corruption("file shorter than the 64-byte header");
  if (b.substr(0, 8) != kMagic) return Status::Corruption("not a feedkv snapshot (bad magic)");
  if (Load64(b.data() + 56) != XXH64(b.data(), 56, 0)) {
    return Status::Corruption("header checksum mismatch at offset 56");
  }
  uint32_t version = 0;
  for (int i = 0; i < 4; i++) version |= static_cast<uint32_t>(static_cast<unsigned char>(b[8 + i])) << (8 * i);
  if (version == 0 || version > kRdbVersion) {
    return Status::Corruption(fmt::format("unsupported snapshot version {} (this build reads up to {})",
                                          version, kRdbVersion));
  }
  h->version = version;
  h->aof_lineage = Load64(b.data() + 16);
  h->aof_segment = Load64(b.data() + 24);
  h->aof_segment_offset = Load64(b.data() + 32);
  h->aof_offset = Load64(b.data() + 40);
  h->ctime_ms = static_cast<int64_t>(Load64(b.data() + 48));
  return Status::OK();
}

Status ReadHeaderFile(Env* env, const std::string& path, Header* h) {
  std::unique_ptr<SequentialFile> f;
  Status s = env->NewSequentialFile(path, &f);
  if (!s.ok()) return s;
  char b[kHeaderSize];
  size_t got = 0;
  s = f->Read(sizeof(b), b, &got);
  if (!s.ok()) return s;
  return ParseHeader(std::string_view(b, got), h);
}

Status ReadSnapshot(RdbSource* src, int max_databases, Visitor* v, Header* h, LoadStats* stats) {
  *stats = LoadStats{};
  return Reader(src, max_databases, v, stats).Run(h);
}

Status ReadSnapshotFile(Env* env, const std::string& path, int max_databases, Visitor* v,
                        Header* h, LoadStats* stats) {
  std::unique_ptr<SequentialFile> f;
  Status s = env->NewSequentialFile(path, &f);
  if (!s.ok()) return s;
  RdbSource src(f.get());
  s = ReadSnapshot(&src, max_databases, v, h, stats);
  if (!s.ok() && s.IsCorruption()) return Status::Corruption(path + ": " + s.message());
  return s;
}

// --- DatasetLoader ---

DatasetLoader::~DatasetLoader() = default;

Status DatasetLoader::OnDatabase(int db, uint64_t, uint64_t) {
  if (db < 0 || static_cast<size_t>(db) >= dbs_.size()) return Status::Corruption("database out of range");
  cur_ = dbs_[static_cast<size_t>(db)];
  return Status::OK();
}

namespace {
Status CheckFresh(Database* db, std::string_view key, bool merge) {
  if (!merge && db->Find(key) != nullptr) return Status::Corruption("duplicate key");
  return Status::OK();
}
}  // namespace

Status DatasetLoader::OnString(std::string_view key, std::string_view value, int64_t expire_ms) {
  Status s = CheckFresh(cur_, key, merge_);
  if (!s.ok()) return s;
  if (expire_ms != kNoExpire && expire_ms <= now_ms_) expired_++;
  cur_->SetString(key, value, expire_ms, false);
  return Status::OK();
}

Status DatasetLoader::OnInteger(std::string_view key, int64_t value, int64_t expire_ms) {
  Status s = CheckFresh(cur_, key, merge_);
  if (!s.ok()) return s;
  if (expire_ms != kNoExpire && expire_ms <= now_ms_) expired_++;
  cur_->SetInteger(key, value, expire_ms, false);
  return Status::OK();
}

Status DatasetLoader::OnObject(std::string_view key, ValueType type, std::string_view bytes,
                               int64_t expire_ms) {
  Status s = CheckFresh(cur_, key, merge_);
  if (!s.ok()) return s;
  std::unique_ptr<Object> obj;
  s = DecodeObject(type, bytes, &obj);
  if (!s.ok()) return s;
  if (!obj || obj->type() != type) return Status::Corruption("decoded object has the wrong type");
  if (expire_ms != kNoExpire && expire_ms <= now_ms_) expired_++;
  cur_->SetObject(key, std::move(obj), expire_ms, false);
  return Status::OK();
}

Status DatasetLoader::OnCounterSpace(std::string_view name, std::unique_ptr<CounterSpace> space) {
  for (const auto& [n, sp] : counter_spaces_) {
    if (n == name) return Status::Corruption("duplicate counter space");
  }
  counter_spaces_.emplace_back(std::string(name), std::move(space));
  return Status::OK();
}

// --- ValidatingVisitor ---

Status ValidatingVisitor::OnAux(std::string_view name, std::string_view value) {
  aux.emplace_back(std::string(name), std::string(value));
  return Status::OK();
}

Status ValidatingVisitor::OnDatabase(int db, uint64_t keys, uint64_t) {
  db_keys.emplace_back(db, keys);
  return Status::OK();
}

Status ValidatingVisitor::OnObject(std::string_view, ValueType type, std::string_view bytes,
                                   int64_t) {
  std::unique_ptr<Object> obj;
  Status s = DecodeObject(type, bytes, &obj);
  if (s.ok()) objects++;
  return s;
}

Status ValidatingVisitor::OnCounterSpace(std::string_view, std::unique_ptr<CounterSpace>) {
  counter_spaces++;
  return Status::OK();
}

}  // namespace feedkv::rdb
