#include "storage/aof_writer.h"

#include <sys/statvfs.h>

#include <cassert>

#include <fmt/format.h>

namespace feedkv::aof {

namespace {
int64_t MicrosSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t)
      .count();
}
}  // namespace

AofWriter::AofWriter(WriterOptions options, Manifest manifest, uint64_t tail_size,
                     Journal* journal, WriterCallbacks callbacks)
    : opts_(std::move(options)),
      cb_(std::move(callbacks)),
      lineage_(manifest.lineage),
      seq_(manifest.last().seq),
      seg_start_(manifest.last().start),
      seg_offset_(tail_size),
      journal_(journal),
      segment_size_(opts_.segment_size),
      policy_(opts_.policy),
      thread_policy_(opts_.policy),
      manifest_(std::move(manifest)),
      tail_size_(tail_size) {
  stats_.written_offset = stats_.durable_offset = seg_start_ + tail_size;
}

AofWriter::~AofWriter() {
  if (started_) Stop().PermitUnchecked();
}

Status AofWriter::Start() {
  const SegmentInfo& last = manifest_.last();
  Status s = OpenSegment(last.seq, last.start, false, tail_size_);
  if (!s.ok()) return s;
  last_sync_ = std::chrono::steady_clock::now();
  if (opts_.tail) opts_.tail->Publish(manifest_, seg_start_ + tail_size_);
  started_ = true;
  thread_ = std::thread([this] { Run(); });
  return Status::OK();
}

Status AofWriter::Stop() {
  if (!started_) return Status::OK();
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  started_ = false;
  if (opts_.tail) opts_.tail->Close();
  Status s = last_error_;
  if (file_) {
    Status c = file_->Close();
    if (s.ok()) s = c;
    file_.reset();
  }
  return s;
}

// --- command thread ---

void AofWriter::OnGroup(const JournalGroup& g) {
  assert(g.start == seg_start_ + seg_offset_);  // the journal hands over every group
  seg_offset_ += g.bytes->size();
  {
    std::lock_guard<std::mutex> lk(mu_);
    stats_.pending_bytes += g.bytes->size();
    queue_.push_back(Chunk{seq_, seg_start_, seg_offset_ - g.bytes->size(), g.bytes, false});
  }
  cv_.notify_one();
  if (seg_offset_ >= segment_size_) Roll();
}

void AofWriter::RequestRoll() {
  if (seg_offset_ > 0) Roll();
}

void AofWriter::Roll() {
  // The next group starts a new segment; each segment opens with SELECT so
  // it can be read on its own.
  seg_start_ += seg_offset_;
  seg_offset_ = 0;
  seq_++;
  if (journal_ != nullptr) journal_->ForgetSelectedDb();
  // An empty chunk makes the writer open (and list) the new segment now, so a
  // snapshot taken at (seq_, 0) names a segment that exists.
  {
    std::lock_guard<std::mutex> lk(mu_);
    queue_.push_back(Chunk{seq_, seg_start_, 0, nullptr, true});
  }
  cv_.notify_one();
}

void AofWriter::set_policy(FsyncPolicy p) {
  policy_ = p;
  {
    std::lock_guard<std::mutex> lk(mu_);
    thread_policy_ = p;
  }
  cv_.notify_one();
}

void AofWriter::RunWhenDurable(std::function<void(const Status&)> fn) {
  uint64_t after = sealed_offset();
  {
    std::lock_guard<std::mutex> lk(mu_);
    jobs_.push_back(Job{after, std::move(fn), 0});
  }
  cv_.notify_one();
}

void AofWriter::RetireBefore(uint64_t keep_from) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    jobs_.push_back(Job{0, nullptr, keep_from});
  }
  cv_.notify_one();
}

Manifest AofWriter::manifest() const {
  std::lock_guard<std::mutex> lk(mu_);
  return manifest_;
}

WriterStats AofWriter::stats() const {
  std::lock_guard<std::mutex> lk(mu_);
  return stats_;
}

// --- writer thread ---

void AofWriter::Run() {
  std::unique_lock<std::mutex> lk(mu_);
  while (true) {
    auto now = std::chrono::steady_clock::now();
    auto deadline = now + std::chrono::hours(1);
    if (failing_) {
      // Only the retry: the everysec deadline below is already past while the
      // disk fails, and waiting for it would spin.
      deadline = last_attempt_ + opts_.retry_interval;
    } else if (thread_policy_ == FsyncPolicy::kEverySec && file_ && file_->Size() > synced_size_) {
      deadline = std::min(deadline, last_sync_ + std::chrono::seconds(1));
    }
    cv_.wait_until(lk, deadline, [&] {
      return stop_ || (!failing_ && (!queue_.empty() || !jobs_.empty()));
    });
    bool stopping = stop_;
    ProcessLocked(lk);
    if (stopping && queue_.empty() && jobs_.empty()) {
      if (!failing_ && pending_.empty()) break;
      // Stopping with a failing disk: a few more attempts, then give up.
      static constexpr int kStopAttempts = 3;
      int attempts = 0;
      while (failing_ && ++attempts < kStopAttempts) {
        lk.unlock();
        std::this_thread::sleep_for(opts_.retry_interval);
        lk.lock();
        ProcessLocked(lk);
      }
      break;
    }
  }
}

void AofWriter::ProcessLocked(std::unique_lock<std::mutex>& lk) {
  while (!queue_.empty()) {
    pending_.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  std::deque<Job> jobs;
  jobs.swap(jobs_);
  FsyncPolicy policy = thread_policy_;
  bool stopping = stop_;
  lk.unlock();

  last_attempt_ = std::chrono::steady_clock::now();
  Status s = WritePending(policy);
  // Written data survives a kill of the process: report it before any fsync,
  // so replies under everysec and no wait for write(2) only.
  ReportWritten(policy);
  bool want_sync = false;
  if (s.ok() && file_ && file_->Size() > synced_size_) {
    if (policy == FsyncPolicy::kAlways || stopping || !jobs.empty()) want_sync = true;
    if (policy == FsyncPolicy::kEverySec &&
        std::chrono::steady_clock::now() - last_sync_ >= std::chrono::seconds(1)) {
      want_sync = true;
    }
  }
  if (s.ok() && want_sync) s = SyncNow();
  if (s.ok() && policy == FsyncPolicy::kNo && !want_sync) {
    // Nothing is promised under "no": forget written data at once.
    unsynced_.clear();
  }
  if (!s.ok()) {
    SetFailing(s);
  } else if (failing_ && pending_.empty()) {
    failing_ = false;
    last_error_ = Status::OK();
    {
      std::lock_guard<std::mutex> g(mu_);
      stats_.failing = false;
    }
    if (cb_.on_status) cb_.on_status(Status::OK());
  }
  for (auto& job : jobs) RunJob(job, s);
  lk.lock();
}

Status AofWriter::WritePending(FsyncPolicy policy) {
  if (need_truncate_) {
    Status s = file_->Truncate(file_->Size());
    if (!s.ok()) return s;
    need_truncate_ = false;
  }
  while (!pending_.empty()) {
    Chunk& c = pending_.front();
    if (c.seq != file_seq_) {
      // Close the current segment durably before the manifest names the next.
      Status s = SyncNow();
      if (!s.ok()) return s;
      s = OpenSegment(c.seq, c.start, true, 0);
      if (!s.ok()) return s;
    }
    assert(c.offset == file_->Size());  // chunks are contiguous in a segment
    if (c.data == nullptr) {
      pending_.pop_front();
      continue;
    }
    Status s = file_->Append(*c.data);
    if (!s.ok()) {
      need_truncate_ = true;
      return s;
    }
    {
      std::lock_guard<std::mutex> g(mu_);
      stats_.written_offset = file_start_ + file_->Size();
      if (!c.counted) stats_.pending_bytes -= c.size();
    }
    if (opts_.tail) opts_.tail->PublishWritten(file_start_ + file_->Size());
    c.counted = true;
    unsynced_.push_back(std::move(c));
    pending_.pop_front();
    if (policy == FsyncPolicy::kEverySec && file_->Size() - synced_size_ >= opts_.max_unsynced_bytes) {
      ReportWritten(policy);  // replies wait for write(2), not for this fsync
      Status st = SyncNow();
      if (!st.ok()) return st;
    }
  }
  return Status::OK();
}

void AofWriter::ReportWritten(FsyncPolicy policy) {
  if (policy == FsyncPolicy::kAlways || !file_ || !cb_.on_written) return;
  const uint64_t written = file_start_ + file_->Size();
  if (written > reported_written_) {
    reported_written_ = written;
    cb_.on_written(written);
  }
}

Status AofWriter::SyncNow() {
  if (!file_) return Status::OK();
  auto t0 = std::chrono::steady_clock::now();
  Status s = file_->Sync();
  if (!s.ok()) {
    // After a failed fsync the page cache can no longer be trusted: write
    // everything since the last good fsync again, at its own offsets.
    if (!unsynced_.empty()) {
      Status t = file_->Truncate(unsynced_.front().offset);
      need_truncate_ = !t.ok();
      while (!unsynced_.empty()) {
        pending_.push_front(std::move(unsynced_.back()));
        unsynced_.pop_back();
      }
    }
    return s;
  }
  last_sync_ = std::chrono::steady_clock::now();
  synced_size_ = file_->Size();
  unsynced_.clear();
  uint64_t durable = file_start_ + synced_size_;
  int64_t free_pct = -1;
  if (last_sync_ - last_statvfs_ >= std::chrono::seconds(1)) {
    last_statvfs_ = last_sync_;
    struct statvfs v;
    if (::statvfs(opts_.dir.c_str(), &v) == 0 && v.f_blocks > 0) {
      free_pct = static_cast<int64_t>(100.0 * static_cast<double>(v.f_bavail) /
                                      static_cast<double>(v.f_blocks));
    }
  }
  {
    std::lock_guard<std::mutex> g(mu_);
    stats_.durable_offset = durable;
    stats_.fsyncs++;
    stats_.last_fsync_us = MicrosSince(t0);
    if (free_pct >= 0) stats_.free_disk_percent = free_pct;
  }
  if (cb_.on_durable) cb_.on_durable(durable);
  return Status::OK();
}

Status AofWriter::OpenSegment(uint64_t seq, uint64_t start, bool create, uint64_t tail_size) {
  std::string path = JoinPath(opts_.dir, SegmentName(opts_.base_name, seq));
  std::unique_ptr<WritableFile> f;
  Status s = opts_.env->NewWritableFile(path, create, &f);
  if (!s.ok()) return s;
  if (!create && f->Size() != tail_size) {
    s = f->Truncate(tail_size);
    if (!s.ok()) return s;
  }
  if (create) {
    s = opts_.env->SyncDir(opts_.dir);
    if (!s.ok()) return s;
    Manifest m;
    {
      std::lock_guard<std::mutex> g(mu_);
      m = manifest_;
    }
    if (m.last().seq != seq) {
      m.segments.push_back({seq, start});
      s = StoreManifest(opts_.env, opts_.dir, opts_.base_name, m);
      if (!s.ok()) return s;
      std::lock_guard<std::mutex> g(mu_);
      manifest_ = std::move(m);
      if (opts_.tail) opts_.tail->PublishManifest(manifest_);
    }
  }
  if (file_) file_->Close().PermitUnchecked();
  file_ = std::move(f);
  file_seq_ = seq;
  file_start_ = start;
  synced_size_ = file_->Size();
  unsynced_.clear();
  return Status::OK();
}

void AofWriter::RunJob(Job& job, const Status& st) {
  if (job.retire_before > 0) {
    if (st.ok()) Retire(job.retire_before);
    return;
  }
  Status s = st;
  if (s.ok() && !pending_.empty()) s = last_error_.ok() ? Status::IOError("AOF not written") : last_error_;
  if (s.ok() && file_ && file_->Size() > synced_size_) {
    s = SyncNow();
    if (!s.ok()) SetFailing(s);
  }
  if (s.ok() && file_start_ + synced_size_ < job.after_offset) {
    s = Status::IOError("AOF behind the requested position");
  }
  job.fn(s);
}

void AofWriter::Retire(uint64_t keep_from) {
  Manifest m;
  {
    std::lock_guard<std::mutex> g(mu_);
    m = manifest_;
  }
  keep_from = std::min(keep_from, file_seq_);
  // A segment holding a byte a reader has pinned stays.
  const uint64_t pinned = opts_.tail ? opts_.tail->MinPin() : UINT64_MAX;
  std::vector<uint64_t> gone;
  while (m.segments.size() > 1 && m.segments.front().seq < keep_from &&
         m.segments[1].start <= pinned) {
    gone.push_back(m.segments.front().seq);
    m.segments.erase(m.segments.begin());
  }
  const bool base_was_pending = m.base_pending;
  m.base_pending = false;
  if (gone.empty() && !base_was_pending) return;
  Status s = StoreManifest(opts_.env, opts_.dir, opts_.base_name, m);
  if (!s.ok()) return;  // retried at the next snapshot
  {
    std::lock_guard<std::mutex> g(mu_);
    manifest_ = std::move(m);
    if (opts_.tail) opts_.tail->PublishManifest(manifest_);
  }
  for (uint64_t seq : gone) {
    opts_.env->RemoveFile(JoinPath(opts_.dir, SegmentName(opts_.base_name, seq))).PermitUnchecked();
  }
}

void AofWriter::SetFailing(const Status& s) {
  bool first = !failing_;
  failing_ = true;
  last_error_ = s;
  {
    std::lock_guard<std::mutex> g(mu_);
    stats_.failing = true;
    stats_.write_errors++;
  }
  if (first && cb_.on_status) cb_.on_status(s);
}

}  // namespace feedkv::aof
