// Persistence: loading the dataset at start-up (snapshot, then the AOF through
// the LogApplier) and DEBUG RELOAD.
#include <fmt/format.h>

#include "server/log_applier.h"
#include "server/persistence.h"
#include "server/script_engine.h"

#include "server/cold_tier.h"
#include "storage/aof_reader.h"
#include "storage/rdb_reader.h"

namespace feedkv::server {

namespace {

// The segment of `m` holding global offset `offset` (the last one starting at
// or before it), or null.
const aof::SegmentInfo* SegmentHolding(const aof::Manifest& m, uint64_t offset) {
  const aof::SegmentInfo* found = nullptr;
  for (const auto& seg : m.segments) {
    if (seg.start > offset) break;
    found = &seg;
  }
  return found;
}

}  // namespace

bool Persistence::LoadAtStartup() {
  const ServerConfig& cfg = server_.cfg();
  std::string rdb = rdb_path();
  auto fatal = [&](const std::string& msg) {
    server_.Log(3, msg);
    return false;
  };
  if (!cfg.appendonly) {
    if (!env_->FileExists(rdb)) return true;
    rdb::Header h;
    Status s = LoadSnapshot(rdb, &h);
    if (!s.ok()) return fatal("Fatal error loading the snapshot: " + s.ToString());
    last_snapshot_ = h;
    // The journal continues where the snapshot's log position was.
    server_.journal().ResetOffset(h.aof_offset);
    return true;
  }
  Status s = env_->CreateDirIfMissing(aof_dir_);
  if (!s.ok()) return fatal("Can't open the append-only directory: " + s.ToString());
  aof::Manifest m;
  s = aof::LoadManifest(env_, aof_dir_, cfg.appendfilename, &m);
  if (s.ok() && m.base_pending) {
    // The log was turned on at runtime and stopped before any snapshot of it
    // was durable. With one (renamed just before the mark was cleared) it is
    // whole; without, it has no base: dropped, and dump.rdb is loaded, as
    // Redis ignores an AOF whose first rewrite never finished.
    rdb::Header h;
    const bool based = env_->FileExists(rdb) && rdb::ReadHeaderFile(env_, rdb, &h).ok() &&
                       h.aof_lineage == m.lineage && SegmentHolding(m, h.aof_offset) != nullptr;
    if (based) {
      m.base_pending = false;
      s = aof::StoreManifest(env_, aof_dir_, cfg.appendfilename, m);
      if (!s.ok()) return fatal("Can't update the AOF manifest: " + s.ToString());
    } else {
      server_.Log(3, fmt::format("The AOF in {} was turned on at runtime and its base snapshot never "
                                 "finished: discarding it and loading {} (as Redis)",
                                 aof_dir_, env_->FileExists(rdb) ? rdb : std::string("no snapshot")));
      RemoveLogFiles();
      s = Status::NotFound("discarded");
    }
  }
  if (s.IsNotFound()) {
    std::vector<std::string> names;
    env_->ListDir(aof_dir_, &names).PermitUnchecked();
    for (const auto& n : names) {
      uint64_t seq;
      if (aof::ParseSegmentName(cfg.appendfilename, n, &seq)) {
        return fatal(fmt::format("AOF segment {} exists in {} but there is no manifest; refusing "
                                 "to start (see docs/persistence.md)", n, aof_dir_));
      }
    }
    // A new log. Whatever the snapshot holds becomes its base.
    bool loaded = false;
    if (env_->FileExists(rdb)) {
      rdb::Header h;
      s = LoadSnapshot(rdb, &h);
      if (!s.ok()) return fatal("Fatal error loading the snapshot: " + s.ToString());
      server_.journal().ResetOffset(h.aof_offset);
      loaded = true;
    }
    s = StartNewLog(loaded);
    if (!s.ok()) return fatal("Can't create the append-only log: " + s.ToString());
    return true;
  }
  if (!s.ok()) return fatal("Bad AOF manifest: " + s.ToString());

  // Pick the starting point: the snapshot, if it belongs to this log.
  aof::Position from{m.segments.front().seq, 0};
  bool whole_log = m.segments.front().start == 0;
  if (env_->FileExists(rdb)) {
    rdb::Header h;
    s = rdb::ReadHeaderFile(env_, rdb, &h);
    // The snapshot belongs to this log when it names the log's lineage; its
    // global offset says where replay starts. (Offsets, not segment numbers:
    // a replica's log holds its master's bytes under its own segment files.)
    const aof::SegmentInfo* seg =
        s.ok() && h.aof_lineage == m.lineage ? SegmentHolding(m, h.aof_offset) : nullptr;
    bool matches = seg != nullptr;
    if (matches) {
      s = LoadSnapshot(rdb, &h);
      if (s.ok()) {
        from = {seg->seq, h.aof_offset - seg->start};
        last_snapshot_ = h;
      } else if (!whole_log) {
        return fatal("Fatal error loading the snapshot: " + s.ToString());
      } else {
        server_.Log(3, "The snapshot is damaged (" + s.ToString() +
                           "); replaying the whole AOF instead");
        server_.dataset().Clear();
      }
    } else if (!whole_log) {
      return fatal(fmt::format("{} does not match the AOF (lineage {:016x}) and the AOF no longer "
                               "starts at offset 0: cannot recover; see docs/persistence.md",
                               rdb, m.lineage));
    } else {
      server_.Log(3, fmt::format("{} does not belong to this AOF; replaying the whole AOF", rdb));
    }
  } else if (!whole_log) {
    return fatal("No snapshot and the AOF no longer starts at offset 0: cannot recover");
  }

  aof::LogReport report;
  s = ReplayAof(m, from, &report);
  if (!s.ok()) {
    return fatal("Fatal error replaying the AOF: " + s.ToString() +
                 ". Run tools/feedkv-check-aof on " + aof_dir_ + " (--fix truncates it).");
  }
  if (report.truncated) {
    server_.Log(3, fmt::format("!!! Warning: torn last write in {}: bytes [{}, {}) ({} bytes) were "
                               "cut (aof-load-truncated yes): {}",
                               report.truncated_file, report.truncated_at,
                               report.truncated_at + report.truncated_bytes, report.truncated_bytes,
                               report.truncated_reason));
  }
  server_.journal().ResetOffset(report.end_offset);
  server_.Log(2, fmt::format("AOF replayed from {}:{}: {} commands; log ends at {}:{} (offset {})",
                             from.segment, from.offset, report.records, report.end.segment,
                             report.end.offset, report.end_offset));
  // Orphans: segment files the manifest does not name (a roll or a
  // retirement interrupted by a crash).
  std::vector<std::string> names;
  env_->ListDir(aof_dir_, &names).PermitUnchecked();
  for (const auto& n : names) {
    uint64_t seq;
    if (aof::ParseSegmentName(cfg.appendfilename, n, &seq) && m.Find(seq) == nullptr) {
      server_.Log(2, "Removing orphan AOF segment " + n);
      env_->RemoveFile(JoinPath(aof_dir_, n)).PermitUnchecked();
    }
  }
  s = OpenWriter(m, report.tail_size);
  if (!s.ok()) return fatal("Can't open the AOF for writing: " + s.ToString());
  return true;
}

Status Persistence::LoadSnapshot(const std::string& path, rdb::Header* h, bool flushed, bool merge) {
  Dataset& data = server_.dataset();
  std::unique_ptr<rdb::DatasetLoader> loader = data.NewLoader(NowMs());
  loader->set_merge(merge);
  rdb::LoadStats st;
  // A failed load into an emptied dataset leaves it empty; one into a kept
  // dataset (DEBUG RELOAD NOFLUSH) leaves what was there and what loaded.
  auto fail = [&](Status why) {
    if (flushed) data.Clear();
    return why;
  };
  Status s = rdb::ReadSnapshotFile(env_, path, data.num_dbs(), loader.get(), h, &st);
  if (!s.ok()) return fail(s);
  data.Adopt(*loader);
  // The snapshot's function libraries replace the server's, as Redis's rdbLoad
  // (NOFLUSH: they join them; MERGE: same-named ones are replaced).
  ScriptEngine& scripts = server_.scripts();
  if (flushed) scripts.FlushLibraries();
  for (const std::string& code : loader->function_libraries()) {
    std::string name, error;
    if (!scripts.LoadLibrary(code, merge, &name, &error)) {
      return fail(Status::Corruption(fmt::format("function library in {} does not load: {}", path, error)));
    }
  }
  if (ColdTier* cold = server_.cold_tier()) {
    s = cold->AttachLoaded(*h);
    if (!s.ok()) {
      data.Clear();
      return s;
    }
  }
  load_keys_ = st.keys;
  load_expired_ = loader->expired_keys();
  server_.Log(2, fmt::format("Snapshot {} loaded: {} keys, {} counter spaces, {} bytes", path,
                             st.keys, st.counter_spaces, st.bytes));
  return Status::OK();
}

Status Persistence::ReplayAof(const aof::Manifest& m, aof::Position from, aof::LogReport* report) {
  LogApplier::Options o;
  o.source = "AOF";
  LogApplier applier(server_, o);
  const std::string& base = server_.cfg().appendfilename;
  aof::ReadOptions opts;
  opts.truncate_torn_tail = server_.cfg().aof_load_truncated;
  return aof::ReadLog(
      env_, aof_dir_, base, m, from, opts,
      [&](uint64_t seq, const aof::Group& g) -> Status {
        return applier.ApplyGroup(g.records, aof::SegmentName(base, seq), g.begin);
      },
      report);
}


Status Persistence::Reload(bool save, bool flush, bool merge) {
  if (save) {
    Status s = Save();
    if (!s.ok()) return s;
  }
  if (flush) {
    server_.SignalFlushed(-1);
    server_.dataset().Clear();
  }
  // The journal goes on at its own offset: after a save the snapshot equals
  // it; DEBUG RELOAD NOSAVE puts older data under it, as in Redis.
  rdb::Header h;
  return LoadSnapshot(rdb_path(), &h, flush, merge);
}

Status Persistence::ReloadFromLog() {
  if (!log_on()) return Reload(false);
  const aof::Manifest m = tail_->state().manifest;
  if (m.segments.empty()) return Status::Corruption("the AOF manifest names no segment");
  aof::Position from{m.segments.front().seq, 0};
  rdb::Header h;
  const aof::SegmentInfo* seg = nullptr;
  if (env_->FileExists(rdb_path()) && rdb::ReadHeaderFile(env_, rdb_path(), &h).ok() &&
      h.aof_lineage == m.lineage) {
    seg = SegmentHolding(m, h.aof_offset);
  }
  if (seg == nullptr && m.segments.front().start != 0) {
    return Status::Corruption("no snapshot belongs to the AOF and the AOF no longer starts at offset 0");
  }
  server_.SignalFlushed(-1);
  server_.dataset().Clear();
  if (seg != nullptr) {
    Status s = LoadSnapshot(rdb_path(), &h);
    if (!s.ok()) return s;
    from = {seg->seq, h.aof_offset - seg->start};
  }
  aof::LogReport report;
  Status s = ReplayAof(m, from, &report);
  if (s.ok()) server_.Log(3, "Append Only File loaded by DEBUG LOADAOF");
  return s;
}

}  // namespace feedkv::server
