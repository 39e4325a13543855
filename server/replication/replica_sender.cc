#include "server/replication/replica_sender.h"

#include "server/replication/socket_send.h"
#include "server/replication/sync_stream_filter.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "storage/rdb_format.h"
#include "storage/rdb_reader.h"

namespace feedkv::server {

namespace {

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void PutLe(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

ReplicaSender::ReplicaSender(SenderOptions options) : o_(std::move(options)) {}

ReplicaSender::~ReplicaSender() {
  RequestStop();
  if (thread_.joinable()) thread_.join();
  if (o_.fd >= 0) ::close(o_.fd);
}

void ReplicaSender::Start() {
  thread_ = std::thread([this] { Run(); });
}

void ReplicaSender::RequestStop() {
  stop_ = true;
  if (o_.tail) o_.tail->Wake();
}

void ReplicaSender::Run() {
  std::string reason = Serve();
  if (o_.tail) o_.tail->Unpin(o_.id);
  // Unblocks the peer at once; the command thread closes its own socket.
  ::shutdown(o_.fd, SHUT_RDWR);
  if (o_.on_exit) o_.on_exit(reason);
  finished_ = true;
}

bool ReplicaSender::WriteAll(std::string_view data, std::string* why) {
  return SendAll(o_.fd, data, stop_, o_.timeout_ms, why);
}

bool ReplicaSender::ChooseSnapshot(int* fd, uint64_t* size, rdb::Header* header, std::string* why) {
  int64_t last_ask = -1;
  int64_t last_newline = SteadyMs();
  while (!stop_) {
    int f = ::open(o_.rdb_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (f >= 0) {
      // The open file stays what it is even if a newer snapshot replaces the
      // name meanwhile: its header names the position it equals.
      char buf[rdb::kHeaderSize];
      rdb::Header h;
      struct stat st;
      ssize_t got = ::pread(f, buf, sizeof(buf), 0);
      bool usable = got == static_cast<ssize_t>(sizeof(buf)) && ::fstat(f, &st) == 0 &&
                    rdb::ParseHeader(std::string_view(buf, sizeof(buf)), &h).ok();
      if (usable) {
        // Pin first, then check the log still holds the position: a segment
        // retired in between shows up below.
        o_.tail->Pin(o_.id, h.aof_offset);
        aof::LogTail::State s = o_.tail->state();
        usable = s.open && !s.manifest.segments.empty() && h.aof_lineage == s.manifest.lineage &&
                 s.manifest.segments.front().start <= h.aof_offset && h.aof_offset >= o_.min_snapshot_offset;
        if (usable) {
          *fd = f;
          *size = static_cast<uint64_t>(st.st_size);
          *header = h;
          return true;
        }
        o_.tail->Unpin(o_.id);
      }
      ::close(f);
    }
    const int64_t now = SteadyMs();
    // Waiting for a snapshot newer than the one being made: ask again soon
    // (the command thread ignores the ask while a snapshot is in progress).
    const int64_t ask_every = o_.min_snapshot_offset > 0 ? 100 : 5000;
    if (last_ask < 0 || now - last_ask > ask_every) {
      if (o_.need_snapshot) o_.need_snapshot();
      last_ask = now;
    }
    // Newlines keep the replica's read timeout from firing while the
    // snapshot is made (a Redis replica skips them too).
    if (now - last_newline >= 1000) {
      if (!WriteAll("\n", why)) return false;
      last_newline = now;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  *why = "stopped";
  return false;
}

bool ReplicaSender::OpenCheckpoint(const rdb::Header& h, std::vector<BundleFile>* files,
                                   std::string* why) {
  if (!o_.bundle || !o_.checkpoint_dir) return true;
  const std::string dir = o_.checkpoint_dir(h);
  std::vector<std::string> names;
  if (!Env::Default()->ListDir(dir, &names).ok()) return true;  // no checkpoint: no cold tables
  const std::string ckpt = dir.substr(dir.find_last_of('/') + 1);
  for (const std::string& n : names) {
    BundleFile f;
    f.name = fmt::format("cold-ckpt.{}.{}", ckpt, n);
    f.fd = ::open(JoinPath(dir, n).c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (f.fd < 0 || ::fstat(f.fd, &st) != 0) {
      *why = fmt::format("opening the cold checkpoint file {}/{}: {}", dir, n, strerror(errno));
      if (f.fd >= 0) ::close(f.fd);
      return false;
    }
    f.size = static_cast<uint64_t>(st.st_size);
    files->push_back(std::move(f));
  }
  return true;
}

bool ReplicaSender::SendSnapshot(const std::vector<BundleFile>& files, std::string* why) {
  static constexpr std::string_view kMagic = "FKVBUNDLE1";
  std::string head;
  if (o_.bundle) {
    uint64_t total = kMagic.size();
    for (const BundleFile& f : files) total += 4 + f.name.size() + 8 + f.size + 8;
    head = fmt::format("${}\r\n", total);
    head.append(kMagic);
  } else {
    head = fmt::format("${}\r\n", files.front().size);  // the snapshot alone, as Redis sends one
  }
  if (!WriteAll(head, why)) return false;
  for (const BundleFile& f : files) {
    if (!SendFile(f, why)) return false;
  }
  return true;
}

bool ReplicaSender::SendFile(const BundleFile& f, std::string* why) {
  if (o_.bundle) {
    std::string head;
    PutLe(&head, f.name.size(), 4);
    head.append(f.name);
    PutLe(&head, f.size, 8);
    if (!WriteAll(head, why)) return false;
  }
  XXH64_state_t* hs = XXH64_createState();
  XXH64_reset(hs, 0);
  std::string buf(1 << 20, '\0');
  uint64_t done = 0;
  bool ok = true;
  while (done < f.size) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), f.size - done));
    ssize_t n = ::pread(f.fd, buf.data(), want, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *why = fmt::format("reading {}: {}", f.name, n < 0 ? strerror(errno) : "short file");
      ok = false;
      break;
    }
    XXH64_update(hs, buf.data(), static_cast<size_t>(n));
    if (!WriteAll(std::string_view(buf.data(), static_cast<size_t>(n)), why)) {
      ok = false;
      break;
    }
    done += static_cast<uint64_t>(n);
  }
  const uint64_t digest = XXH64_digest(hs);
  XXH64_freeState(hs);
  if (!ok) return false;
  if (o_.bundle) {
    std::string tail;
    PutLe(&tail, digest, 8);
    return WriteAll(tail, why);
  }
  return true;
}

std::string ReplicaSender::Serve() {
  std::string why;
  uint64_t from = o_.from;
  if (o_.full) {
    std::vector<BundleFile> files(1);
    files[0].name = "dump.rdb";
    rdb::Header h;
    if (!ChooseSnapshot(&files[0].fd, &files[0].size, &h, &why)) return why;
    from = h.aof_offset;
    bool ok = OpenCheckpoint(h, &files, &why);
    if (ok && o_.full_sync_chosen) o_.full_sync_chosen(from);
    // SYNC (before PSYNC existed) gets the payload alone, as from Redis.
    ok = ok && (!o_.psync || WriteAll(fmt::format("+FULLRESYNC {} {}\r\n", o_.replid, from), &why)) &&
         SendSnapshot(files, &why);
    for (const BundleFile& f : files) ::close(f.fd);
    if (!ok) return why;
  } else {
    o_.tail->Pin(o_.id, from);
    if (!WriteAll(fmt::format("+CONTINUE {}\r\n", o_.replid), &why)) return why;
  }
  sent_ = from;
  aof::LogCursor cursor(o_.aof_dir, o_.aof_base);
  std::string buf;
  SyncStreamFilter sync_filter;  // a SYNC client gets Redis's stream (no trailers)
  std::string sync_out;
  while (!stop_) {
    const uint64_t written = o_.tail->WaitBeyond(from, std::chrono::milliseconds(100));
    aof::LogTail::State s = o_.tail->state();
    if (!s.open) {  // no writer now (the log is being replaced): wait, do not spin
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    if (written <= from) continue;
    buf.clear();
    Status st = cursor.Read(s.manifest, from, written, o_.window, &buf);
    if (!st.ok()) return "reading the log: " + st.ToString();
    if (buf.empty()) {  // the file lags the tail for a moment
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    if (o_.psync) {
      if (!WriteAll(buf, &why)) return why;
    } else {
      sync_out.clear();
      sync_filter.Feed(buf, &sync_out);
      if (!WriteAll(sync_out, &why)) return why;
    }
    from += buf.size();
    sent_ = from;
    o_.tail->Pin(o_.id, from);
  }
  return "stopped";
}

}  // namespace feedkv::server
