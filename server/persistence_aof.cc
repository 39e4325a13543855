// Persistence: the AOF sink. The AofWriter consumes the server's journal; its
// thread's progress comes back as WaitingClients::LogProgress, and its errors
// as MISCONF (UpdateWriteError).
#include <boost/asio/post.hpp>

#include <random>

#include <fmt/format.h>

#include "server/persistence.h"
#include "storage/aof_tail.h"
#include "storage/rdb_reader.h"
#include "storage/rdb_writer.h"

namespace feedkv::server {

Status Persistence::StartNewLog(bool save_base, uint64_t lineage, bool base_pending) {
  aof::Manifest m;
  m.base_pending = base_pending;
  std::random_device rd;
  m.lineage = lineage != 0 ? lineage
                           : (static_cast<uint64_t>(rd()) << 32) ^ rd() ^ static_cast<uint64_t>(NowUs());
  // The log starts at the journal's offset: positions in it and journal
  // offsets are the same numbers, whenever the AOF was turned on.
  Journal& journal = server_.journal();
  journal.Seal();
  m.segments.push_back({1, journal.sealed_offset()});
  std::string seg = JoinPath(aof_dir_, aof::SegmentName(server_.cfg().appendfilename, 1));
  std::unique_ptr<WritableFile> f;
  Status s = env_->NewWritableFile(seg, true, &f);
  if (s.ok()) s = f->Close();
  if (!s.ok()) return s;
  if (save_base) {
    // The snapshot becomes the log's base: it must name the new lineage
    // before the manifest exists.
    rdb::Header h;
    h.aof_lineage = m.lineage;
    h.aof_segment = 1;
    h.aof_offset = journal.sealed_offset();
    h.ctime_ms = NowMs();
    rdb::SnapshotSource src = Source(h);
    std::string tmp = JoinPath(server_.cfg().dir, fmt::format("temp-base-{}.rdb", getpid()));
    rdb::SaveStats st;
    s = rdb::WriteSnapshotFile(env_, tmp, src, &st);
    if (s.ok()) s = env_->RenameFile(tmp, rdb_path());
    if (s.ok()) s = env_->SyncDir(DirName(rdb_path()));
    if (!s.ok()) return s;
    last_snapshot_ = src.header;
  }
  s = aof::StoreManifest(env_, aof_dir_, server_.cfg().appendfilename, m);
  if (!s.ok()) return s;
  server_.Log(2, fmt::format("Created a new AOF (lineage {:016x}) in {}", m.lineage, aof_dir_));
  return OpenWriter(m, 0);
}

Status Persistence::OpenWriter(const aof::Manifest& m, uint64_t tail_size) {
  aof::WriterOptions o;
  o.env = env_;
  o.dir = aof_dir_;
  o.base_name = server_.cfg().appendfilename;
  o.policy = fsync_policy();
  o.segment_size = static_cast<uint64_t>(std::max<int64_t>(server_.cfg().aof_segment_size, 1024));
  o.tail = tail_;
  aof::WriterCallbacks cb;
  boost::asio::io_context& io = server_.io();
  // The writer thread's progress releases the replies held for it (each hold
  // names the progress it needs: written, or fsynced under always).
  cb.on_durable = [this, &io](uint64_t off) {
    boost::asio::post(io, [this, off] { server_.waiting().LogProgress(WaitFor::kLogDurable, off); });
  };
  cb.on_written = [this, &io](uint64_t off) {
    boost::asio::post(io, [this, off] { server_.waiting().LogProgress(WaitFor::kLogWritten, off); });
  };
  cb.on_status = [this, &io](const Status& st) {
    std::string msg = st.ok() ? std::string() : st.ToString();
    boost::asio::post(io, [this, msg] {
      if (msg.empty()) {
        server_.Log(3, "AOF write error is solved: the AOF can be written again");
      } else {
        server_.Log(3, "Error writing to the AOF: " + msg);
      }
      aof_error_ = msg;
      UpdateWriteError();
    });
  };
  Journal& journal = server_.journal();
  journal.Seal();
  auto w = std::make_unique<aof::AofWriter>(o, m, tail_size, &journal, cb);
  if (w->sealed_offset() != journal.sealed_offset()) {
    return Status::Corruption(fmt::format("the AOF ends at offset {} but the journal at {}",
                                          w->sealed_offset(), journal.sealed_offset()));
  }
  Status s = w->Start();
  if (!s.ok()) return s;
  writer_ = std::move(w);
  // The first group a new writer stores opens with SELECT.
  journal.ForgetSelectedDb();
  journal.AddConsumer(writer_.get());
  // Everything loaded is durable: replies need not wait for older offsets.
  server_.waiting().LogProgress(WaitFor::kLogDurable, journal.sealed_offset());
  UpdateReplyAck();
  return Status::OK();
}

void Persistence::UpdateReplyAck() {
  if (!writer_) {
    server_.set_reply_ack(std::nullopt);
    return;
  }
  server_.set_reply_ack(writer_->policy() == aof::FsyncPolicy::kAlways ? WaitFor::kLogDurable
                                                                       : WaitFor::kLogWritten);
}

void Persistence::RemoveLogFiles() {
  const std::string& base = server_.cfg().appendfilename;
  std::vector<std::string> names;
  env_->ListDir(aof_dir_, &names).PermitUnchecked();
  for (const auto& n : names) {
    uint64_t seq;
    if (aof::ParseSegmentName(base, n, &seq) || n == aof::ManifestName(base)) {
      env_->RemoveFile(JoinPath(aof_dir_, n)).PermitUnchecked();
    }
  }
}

Status Persistence::TurnOnLog(std::string_view why) {
  if (writer_) return Status::OK();
  server_.config().values().appendonly = true;
  Status s = env_->CreateDirIfMissing(aof_dir_);
  if (s.ok()) {
    RemoveLogFiles();
    s = StartNewLog(true);
  }
  if (!s.ok()) {
    server_.Log(3, "Could not turn the AOF on: " + s.ToString());
    return s;
  }
  server_.Log(2, fmt::format("AOF turned on: {}", why));
  return Status::OK();
}

Status Persistence::AdoptSnapshot(const std::string& staged, rdb::Header* h) {
  Status s = rdb::ReadHeaderFile(env_, staged, h);
  if (!s.ok()) return s;
  // The old dataset served until now; from here the new one replaces it.
  StopWriter();
  s = env_->CreateDirIfMissing(aof_dir_);
  if (!s.ok()) return s;
  RemoveLogFiles();
  s = env_->RenameFile(staged, rdb_path());
  if (s.ok()) s = env_->SyncDir(DirName(rdb_path()));
  if (!s.ok()) return s;
  server_.SignalFlushed(-1);
  // The loader fills the databases in place. The file's every byte was
  // checked against the master's checksum, so only a format error this
  // build cannot read empties the dataset here (logged by the caller).
  server_.dataset().Clear();
  s = LoadSnapshot(rdb_path(), h);
  if (!s.ok()) return s;
  last_snapshot_ = *h;
  Journal& journal = server_.journal();
  journal.Seal();
  journal.ResetOffset(h->aof_offset);
  server_.config().values().appendonly = true;
  return StartNewLog(false, h->aof_lineage);
}

Status Persistence::RewindTo(uint64_t at, const std::string& aside) {
  if (!writer_) return Status::NotFound("no log");
  const aof::Manifest m = writer_->manifest();
  const uint64_t end = server_.journal().end_offset();
  if (at > end || m.segments.empty() || m.segments.front().start > at) {
    return Status::NotFound(fmt::format("the log holds no offset {}", at));
  }
  const bool whole_log = m.segments.front().start == 0;
  rdb::Header h;
  const bool snapshot = env_->FileExists(rdb_path()) && rdb::ReadHeaderFile(env_, rdb_path(), &h).ok() &&
                        h.aof_lineage == m.lineage && h.aof_offset >= m.segments.front().start;
  const bool snapshot_usable = snapshot && h.aof_offset <= at;
  if (!snapshot_usable && !whole_log) {
    return Status::NotFound(fmt::format("no local snapshot at or before offset {}", at));
  }
  StopWriter();
  // The bytes after `at` go aside, for forensics.
  Status s = env_->CreateDirIfMissing(DirName(aside));
  std::unique_ptr<WritableFile> out;
  if (s.ok()) s = env_->NewWritableFile(aside, true, &out);
  aof::LogCursor cursor(aof_dir_, server_.cfg().appendfilename);
  for (uint64_t off = at; s.ok() && off < end;) {
    std::string buf;
    s = cursor.Read(m, off, end, 1 << 20, &buf);
    if (s.ok() && buf.empty()) s = Status::Corruption("the log is shorter than the journal");
    if (s.ok()) s = out->Append(buf);
    off += buf.size();
  }
  if (s.ok()) s = out->Sync();
  if (out) out->Close().PermitUnchecked();
  // Cut: segments starting after `at` go, the one holding it is shortened.
  aof::Manifest cut = m;
  while (cut.segments.size() > 1 && cut.segments.back().start > at) cut.segments.pop_back();
  if (s.ok()) s = aof::StoreManifest(env_, aof_dir_, server_.cfg().appendfilename, cut);
  if (s.ok()) {
    for (const auto& seg : m.segments) {
      if (cut.Find(seg.seq) == nullptr) {
        env_->RemoveFile(JoinPath(aof_dir_, aof::SegmentName(server_.cfg().appendfilename, seg.seq)))
            .PermitUnchecked();
      }
    }
    const aof::SegmentInfo& last = cut.last();
    s = env_->TruncateFile(JoinPath(aof_dir_, aof::SegmentName(server_.cfg().appendfilename, last.seq)),
                           at - last.start);
  }
  // A snapshot newer than the cut describes the diverged history: aside too.
  if (s.ok() && snapshot && !snapshot_usable) s = env_->RenameFile(rdb_path(), aside + ".rdb");
  if (!s.ok()) {
    server_.Log(3, "Could not cut the diverged log: " + s.ToString());
    OpenWriter(m, end - m.last().start).PermitUnchecked();
    return s;
  }
  server_.SignalFlushed(-1);
  server_.dataset().Clear();
  server_.journal().Seal();
  server_.journal().ResetOffset(0);
  server_.set_loading(true);
  const bool ok = LoadAtStartup();
  server_.set_loading(false);
  if (!ok) return Status::Corruption("reloading after the cut failed (see the log)");
  return Status::OK();
}

void Persistence::StopWriter() {
  if (!writer_) return;
  server_.journal().RemoveConsumer(writer_.get());  // seals the open group first
  Status s = writer_->Stop();
  if (!s.ok()) server_.Log(3, "Could not make the AOF durable at stop: " + s.ToString());
  writer_.reset();
  // Nothing is stored any more: replies still waiting for the log go out.
  server_.set_reply_ack(std::nullopt);
  server_.waiting().ReleaseLogHolds();
  aof_error_.clear();
  UpdateWriteError();
}

}  // namespace feedkv::server
