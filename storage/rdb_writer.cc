#include "storage/rdb_writer.h"

#include <xxhash.h>

#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "storage/counter_space.h"

namespace feedkv::rdb {

namespace {

// Streams a counter space image straight into the snapshot (no copy of its tables).
class CounterSinkAdapter : public CounterSnapshotSink {
 public:
  explicit CounterSinkAdapter(RdbSink* sink) : sink_(sink) {}
  void Write(const char* p, size_t n) override { sink_->Write(p, n); }

 private:
  RdbSink* sink_;
};

void WriteHeader(const Header& h, RdbSink* sink) {
  std::string b(kHeaderSize, '\0');
  auto put64 = [&](size_t off, uint64_t v) {
    for (int i = 0; i < 8; i++) b[off + i] = static_cast<char>(v >> (8 * i));
  };
  std::memcpy(b.data(), kMagic.data(), 8);
  for (int i = 0; i < 4; i++) b[8 + i] = static_cast<char>(h.version >> (8 * i));
  // bytes 12..15: flags, zero
  put64(16, h.aof_lineage);
  put64(24, h.aof_segment);
  put64(32, h.aof_segment_offset);
  put64(40, h.aof_offset);
  put64(48, static_cast<uint64_t>(h.ctime_ms));
  put64(56, XXH64(b.data(), 56, 0));
  sink->Write(b.data(), b.size());
}

// Redis's debugDelay.
void KeyDelay(int64_t us) {
  if (us < 0) us = std::rand() % -us == 0 ? 1 : 0;
  if (us > 0) ::usleep(static_cast<useconds_t>(us));
}

void WriteDatabase(int index, const Database& db, bool src_compress, int64_t key_delay_us,
                   RdbSink* sink, SaveStats* stats) {
  sink->BeginSection(kSectionDatabase);
  sink->PutVarint(static_cast<uint64_t>(index));
  sink->PutVarint(db.size());
  sink->PutVarint(db.expires_count());
  std::string scratch;
  db.ForEach([&](const Entry* e) {
    uint8_t expire = e->has_expire ? kHasExpire : 0;
    auto key_and_expire = [&](uint8_t kind) {
      sink->PutU8(kind | expire);
      if (expire) sink->PutFixed64(static_cast<uint64_t>(e->expire_ms()));
      sink->PutString(e->key());
    };
    if (e->type == ValueType::kString) {
      if (e->encoding == kEncInt) {
        key_and_expire(kEntryInteger);
        sink->PutFixed64(static_cast<uint64_t>(e->v.i));
      } else {
        key_and_expire(kEntryString);
        sink->PutString(Database::StringValue(e, &scratch));
      }
    } else {
      key_and_expire(kEntryObject);
      sink->PutU8(static_cast<uint8_t>(e->type));
      scratch.clear();
      Database::GetObject(e)->SerializeTo(&scratch);
      sink->PutBlob(scratch, src_compress);
      if (scratch.capacity() > (1 << 20)) std::string().swap(scratch);
    }
    stats->keys++;
    if (key_delay_us != 0) KeyDelay(key_delay_us);
  });
  sink->PutU8(kEntryEnd);
  sink->EndSection();
}

}  // namespace

Status WriteSnapshot(const SnapshotSource& src, RdbSink* sink, SaveStats* stats) {
  *stats = SaveStats{};
  WriteHeader(src.header, sink);

  sink->BeginSection(kSectionAux);
  sink->PutVarint(src.aux.size());
  for (const auto& [k, v] : src.aux) {
    sink->PutString(k);
    sink->PutString(v);
  }
  sink->EndSection();

  if (!src.function_libraries.empty()) {
    sink->BeginSection(kSectionFunctions);
    sink->PutVarint(src.function_libraries.size());
    for (const std::string& code : src.function_libraries) sink->PutString(code);
    sink->EndSection();
  }

  for (size_t i = 0; i < src.dbs.size(); i++) {
    if (src.dbs[i] != nullptr && src.dbs[i]->size() > 0) {
      WriteDatabase(static_cast<int>(i), *src.dbs[i], src.compress, src.key_delay_us, sink, stats);
    }
    if (!sink->status().ok()) return sink->status();
  }

  // Counter spaces are sparse by format (non-zero chunks, zero runs skipped), so
  // rdbcompression does not apply to them.
  sink->BeginSection(kSectionCounters);
  sink->PutVarint(src.counter_spaces.size());
  for (const auto& [name, space] : src.counter_spaces) {
    sink->PutString(name);
    sink->PutU8(kCounterStream);
    CounterSinkAdapter adapter(sink);
    space->WriteTo(&adapter);
    if (!sink->status().ok()) return sink->status();
  }
  sink->EndSection();

  Status s = sink->Finish();
  stats->bytes = sink->bytes();
  return s;
}

Status WriteSnapshotFile(Env* env, const std::string& path, const SnapshotSource& src,
                         SaveStats* stats) {
  std::unique_ptr<WritableFile> f;
  Status s = env->NewWritableFile(path, true, &f);
  if (!s.ok()) return s;
  {
    RdbSink sink(f.get());
    s = WriteSnapshot(src, &sink, stats);
  }
  if (s.ok()) s = f->Sync();
  Status c = f->Close();
  if (s.ok()) s = c;
  return s;
}

}  // namespace feedkv::rdb
