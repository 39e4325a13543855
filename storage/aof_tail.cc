#include "storage/aof_tail.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "storage/aof_format.h"
#include "storage/file_io.h"

namespace feedkv::aof {

void LogTail::Publish(const Manifest& m, uint64_t written) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    state_.manifest = m;
    state_.written = written;
    state_.open = true;
  }
  cv_.notify_all();
}

void LogTail::PublishWritten(uint64_t written) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (written <= state_.written) return;
    state_.written = written;
  }
  cv_.notify_all();
}

void LogTail::PublishManifest(const Manifest& m) {
  std::lock_guard<std::mutex> lk(mu_);
  state_.manifest = m;
}

void LogTail::Close() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    state_.open = false;
  }
  cv_.notify_all();
}

LogTail::State LogTail::state() const {
  std::lock_guard<std::mutex> lk(mu_);
  return state_;
}

uint64_t LogTail::WaitBeyond(uint64_t offset, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lk(mu_);
  const uint64_t wakes = wakes_;
  cv_.wait_for(lk, timeout,
               [&] { return state_.written > offset || !state_.open || wakes_ != wakes; });
  return state_.written;
}

void LogTail::Wake() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    wakes_++;
  }
  cv_.notify_all();
}

void LogTail::Pin(uint64_t owner, uint64_t offset) {
  std::lock_guard<std::mutex> lk(mu_);
  pins_[owner] = offset;
}

void LogTail::Unpin(uint64_t owner) {
  std::lock_guard<std::mutex> lk(mu_);
  pins_.erase(owner);
}

uint64_t LogTail::MinPin() const {
  std::lock_guard<std::mutex> lk(mu_);
  uint64_t m = std::numeric_limits<uint64_t>::max();
  for (const auto& [owner, off] : pins_) m = std::min(m, off);
  return m;
}

LogCursor::~LogCursor() {
  if (fd_ >= 0) ::close(fd_);
}

Status LogCursor::Read(const Manifest& m, uint64_t from, uint64_t limit, size_t max,
                       std::string* out) {
  // The segment holding `from`: the last one starting at or before it.
  const SegmentInfo* seg = nullptr;
  uint64_t seg_end = std::numeric_limits<uint64_t>::max();
  for (size_t i = 0; i < m.segments.size(); i++) {
    if (m.segments[i].start > from) break;
    seg = &m.segments[i];
    seg_end = i + 1 < m.segments.size() ? m.segments[i + 1].start
                                        : std::numeric_limits<uint64_t>::max();
  }
  if (seg == nullptr || from >= seg_end) {
    return Status::NotFound(fmt::format("no AOF segment holds offset {}", from));
  }
  if (fd_ < 0 || fd_seq_ != seg->seq) {
    if (fd_ >= 0) ::close(fd_);
    std::string path = JoinPath(dir_, SegmentName(base_, seg->seq));
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      int e = errno;
      return e == ENOENT ? Status::NotFound(path) : Status::IOError(path + ": " + strerror(e));
    }
    fd_seq_ = seg->seq;
  }
  uint64_t end = std::min(limit, seg_end);
  if (end <= from) return Status::OK();
  size_t n = static_cast<size_t>(std::min<uint64_t>(end - from, max));
  size_t base = out->size();
  out->resize(base + n);
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd_, out->data() + base + got, n - got,
                        static_cast<off_t>(from - seg->start + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      out->resize(base + got);
      return Status::IOError(fmt::format("reading AOF segment {}: {}", seg->seq, strerror(errno)));
    }
    if (r == 0) break;  // the segment is shorter than the tail said: read what is there
    got += static_cast<size_t>(r);
  }
  out->resize(base + got);
  return Status::OK();
}

}  // namespace feedkv::aof
