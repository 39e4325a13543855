#include "server/replication/master_link.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "server/replication/socket_send.h"
#include "storage/aof_format.h"
#include "storage/aof_reader.h"
#include "storage/file_io.h"
#include "storage/int_text.h"

namespace feedkv::server {

namespace {

constexpr uint64_t kMaxInflight = 64 << 20;
constexpr std::string_view kMagic = "FKVBUNDLE1";

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

uint64_t GetLe(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

bool SafeName(std::string_view n) {
  if (n.empty() || n.size() > 255 || n == "." || n == "..") return false;
  for (char c : n) {
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) return false;
  }
  return true;
}

// A non-negative integer in Redis's strict form.
bool ParseU64(std::string_view s, uint64_t* out) {
  int64_t v = 0;
  if (!ParseCanonicalInt64(s, &v) || v < 0) return false;
  *out = static_cast<uint64_t>(v);
  return true;
}

std::string Resp(std::initializer_list<std::string_view> argv) {
  std::string out;
  aof::AppendCommand(&out, std::span<const std::string_view>(argv.begin(), argv.size()));
  return out;
}

}  // namespace

MasterLink::MasterLink(LinkOptions options) : o_(std::move(options)) {}

MasterLink::~MasterLink() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (fd_ >= 0) ::close(fd_);
}

void MasterLink::Start() {
  thread_ = std::thread([this] { Run(); });
}

void MasterLink::Run() {
  int64_t backoff = 1000;
  while (!stop_) {
    bool was_up = false;
    std::string why = Session();
    was_up = o_.shared->state.load() == LinkShared::State::kUp;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    in_.clear();
    o_.shared->state = LinkShared::State::kDown;
    if (stop_) break;
    if (o_.shared->stopped_on_error) {
      o_.log(3, "Replication stopped: " + why + " (REPLICAOF again to retry)");
      while (!stop_) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      break;
    }
    if (was_up) backoff = 1000;
    if (reconnect_now_) {
      reconnect_now_ = false;
      continue;
    }
    o_.log(2, fmt::format("Connection with master {}:{} lost ({}); retrying in {} ms", o_.host,
                          o_.port, why, backoff));
    for (int64_t t = 0; t < backoff && !stop_; t += 100) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    backoff = std::min<int64_t>(backoff * 2, 30000);
  }
}

bool MasterLink::Connect(std::string* why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = ::getaddrinfo(o_.host.c_str(), std::to_string(o_.port).c_str(), &hints, &res);
  if (rc != 0) {
    *why = fmt::format("can't resolve {}: {}", o_.host, gai_strerror(rc));
    return false;
  }
  *why = "no address";
  for (addrinfo* a = res; a != nullptr && !stop_; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc < 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      const int64_t deadline = SteadyMs() + std::min<int64_t>(o_.timeout_ms, 10000);
      while (!stop_ && SteadyMs() < deadline && ::poll(&p, 1, 100) == 0) {
      }
      int err = 0;
      socklen_t len = sizeof(err);
      if ((p.revents & (POLLOUT | POLLERR | POLLHUP)) != 0 &&
          ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) {
        rc = 0;
      } else {
        errno = err != 0 ? err : ETIMEDOUT;
      }
    }
    if (rc == 0) {
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      fd_ = fd;
      ::freeaddrinfo(res);
      o_.shared->last_io_ms = WallMs();
      return true;
    }
    *why = fmt::format("can't connect to {}:{}: {}", o_.host, o_.port, strerror(errno));
    ::close(fd);
  }
  ::freeaddrinfo(res);
  return false;
}

bool MasterLink::Send(std::string_view data, std::string* why) {
  return SendAll(fd_, data, stop_, o_.timeout_ms, why);
}

bool MasterLink::Fill(int wait_ms, std::string* why) {
  pollfd p{fd_, POLLIN, 0};
  int rc = ::poll(&p, 1, wait_ms);
  if (rc <= 0) return true;
  char buf[64 * 1024];
  for (;;) {
    ssize_t n = ::recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
    if (n > 0) {
      in_.append(buf, static_cast<size_t>(n));
      o_.shared->last_io_ms = WallMs();
      if (in_.size() > (8u << 20)) return true;
      continue;
    }
    if (n == 0) {
      *why = "the master closed the connection";
      return false;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
    *why = fmt::format("read error: {}", strerror(errno));
    return false;
  }
}

bool MasterLink::ReadLine(std::string* line, std::string* why) {
  for (;;) {
    size_t nl = in_.find('\n');
    if (nl != std::string::npos) {
      std::string l = in_.substr(0, nl);
      in_.erase(0, nl + 1);
      if (!l.empty() && l.back() == '\r') l.pop_back();
      if (l.empty()) continue;  // a keep-alive newline
      *line = std::move(l);
      return true;
    }
    if (in_.size() > 64 * 1024) {
      *why = "protocol error: line too long";
      return false;
    }
    if (stop_) {
      *why = "stopped";
      return false;
    }
    if (WallMs() - o_.shared->last_io_ms.load() > o_.timeout_ms) {
      *why = "timeout: no data from the master";
      return false;
    }
    if (!Fill(100, why)) return false;
  }
}

bool MasterLink::ReadExact(char* dst, size_t n, std::string* why) {
  while (in_.size() < n) {
    if (stop_) {
      *why = "stopped";
      return false;
    }
    if (WallMs() - o_.shared->last_io_ms.load() > o_.timeout_ms) {
      *why = "timeout: no data from the master";
      return false;
    }
    if (!Fill(100, why)) return false;
  }
  memcpy(dst, in_.data(), n);
  in_.erase(0, n);
  return true;
}

bool MasterLink::Command(std::initializer_list<std::string_view> argv, std::string* reply,
                         std::string* why) {
  return Send(Resp(argv), why) && ReadLine(reply, why);
}

std::string MasterLink::Session() {
  std::string why;
  o_.shared->state = LinkShared::State::kConnecting;
  if (!Connect(&why)) return why;
  o_.shared->state = LinkShared::State::kHandshake;
  std::string r;
  if (!Command({"PING"}, &r, &why)) return why;
  // As Redis: a master that wants AUTH answers PING with -NOAUTH.
  if (r[0] == '-' && !r.starts_with("-NOAUTH") && !r.starts_with("-NOPERM") &&
      !r.starts_with("-ERR operation not permitted")) {
    return "error reply to PING from master: " + r;
  }
  const auto [masteruser, masterauth] = o_.shared->auth();
  if (!masterauth.empty()) {
    bool ok = masteruser.empty() ? Command({"AUTH", masterauth}, &r, &why)
                                 : Command({"AUTH", masteruser, masterauth}, &r, &why);
    if (!ok) return why;
    if (r != "+OK") return "Unable to AUTH to MASTER: " + r;  // Redis's log text
  }
  const std::string port = std::to_string(o_.listening_port);
  if (!Command({"REPLCONF", "listening-port", port}, &r, &why)) return why;
  if (r[0] == '-') return "master refused REPLCONF listening-port: " + r;
  if (!o_.announce_ip.empty()) {
    if (!Command({"REPLCONF", "ip-address", o_.announce_ip}, &r, &why)) return why;
    if (r[0] == '-') return "master refused REPLCONF ip-address: " + r;
  }
  if (!Command({"REPLCONF", "capa", "eof", "capa", "psync2", "capa", "aofpos"}, &r, &why)) return why;
  if (!Command({"REPLCONF", "replica-id", o_.replica_id}, &r, &why)) return why;
  // Bytes handed over earlier are applied before the offset is asked for (the
  // command thread may hold them while cold rows load), so none comes twice.
  while (o_.shared->inflight.load() > 0) {
    if (stop_) return "stopping";
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  std::string replid = o_.shared->replid();
  const uint64_t applied = o_.shared->applied.load();
  std::string offset = std::to_string(applied + 1);
  bool ok = replid.empty()   ? Send(Resp({"PSYNC", "?", "-1"}), &why)
            : o_.failover ? Send(Resp({"PSYNC", replid, offset, "FAILOVER"}), &why)
                          : Send(Resp({"PSYNC", replid, offset}), &why);
  if (!ok || !ReadLine(&r, &why)) return why;
  if (r.starts_with("+FULLRESYNC")) {
    // +FULLRESYNC <replid> <offset>
    size_t a = r.find(' ');
    size_t b = a == std::string::npos ? a : r.find(' ', a + 1);
    if (b == std::string::npos) return "bad FULLRESYNC reply: " + r;
    std::string id = r.substr(a + 1, b - a - 1);
    uint64_t off = 0;
    if (!ParseU64(r.substr(b + 1), &off)) return "bad FULLRESYNC offset: " + r;
    o_.log(2, fmt::format("Full resync from master: {}:{}", id, off));
    if (!ReceiveFullSync(id, off, &why)) return why;
  } else if (r.starts_with("+CONTINUE")) {
    std::string id = r.size() > 10 ? r.substr(10) : std::string();
    if (!id.empty() && id != replid) {
      o_.log(2, fmt::format("Master replication ID changed to {}", id));
      o_.shared->set_replid(id);
    }
    o_.log(2, fmt::format("Successful partial resynchronization with master from offset {}",
                          offset));
  } else if (r.starts_with("+TRUNCATE")) {
    // +TRUNCATE <replid> <offset>: our log diverges from the master's after
    // <offset>; cut it there and ask again.
    size_t a = r.find(' ');
    size_t b = a == std::string::npos ? a : r.find(' ', a + 1);
    uint64_t at = 0;
    if (b == std::string::npos || !ParseU64(r.substr(b + 1), &at)) return "bad TRUNCATE reply: " + r;
    std::string id = r.substr(a + 1, b - a - 1);
    o_.log(2, fmt::format("The master says our log diverges after offset {}: cutting it there", at));
    Status s = o_.truncate(at, id);
    if (!s.ok()) {
      o_.log(3, "Could not rewind to the master's history (" + s.ToString() + "); full resync");
      o_.shared->set_replid("");
    }
    reconnect_now_ = true;
    return "diverged history cut; resynchronizing";
  } else {
    return "unexpected reply to PSYNC: " + r;
  }
  o_.shared->state = LinkShared::State::kUp;
  o_.log(2, "MASTER <-> REPLICA sync: the link is up");
  return Stream();
}

bool MasterLink::ReceiveFullSync(const std::string& replid, uint64_t offset, std::string* why) {
  o_.shared->state = LinkShared::State::kSyncing;
  std::string line;
  if (!ReadLine(&line, why)) return false;
  uint64_t total = 0;
  if (line[0] != '$' || !ParseU64(line.substr(1), &total)) {
    *why = "bad full-sync payload header: " + line.substr(0, 64);
    return false;
  }
  o_.shared->sync_total = total;
  o_.shared->sync_read = 0;
  char magic[10];
  if (total < kMagic.size() || !ReadExact(magic, kMagic.size(), why)) {
    if (why->empty()) *why = "short full-sync payload";
    return false;
  }
  if (std::string_view(magic, sizeof(magic)) != kMagic) {
    *why = "the master's full-sync payload is not a feedkv bundle (is it a Redis master?)";
    return false;
  }
  uint64_t left = total - kMagic.size();
  const std::string stage = JoinPath(o_.dir, fmt::format("sync-tmp-{}", getpid()));
  Env* env = Env::Default();
  env->CreateDirIfMissing(stage).PermitUnchecked();
  std::string rdb;
  auto fail = [&](std::string msg) {
    *why = std::move(msg);
    return false;
  };
  while (left > 0) {
    char hdr[4];
    if (left < 4 || !ReadExact(hdr, 4, why)) return why->empty() ? fail("short bundle") : false;
    uint64_t name_len = GetLe(hdr, 4);
    left -= 4;
    if (name_len > left || name_len > 255) return fail("bad bundle entry");
    std::string name(name_len, '\0');
    if (!ReadExact(name.data(), name_len, why)) return false;
    left -= name_len;
    if (!SafeName(name)) return fail("bad file name in bundle: " + name);
    char sz[8];
    if (left < 8 || !ReadExact(sz, 8, why)) return why->empty() ? fail("short bundle") : false;
    left -= 8;
    uint64_t size = GetLe(sz, 8);
    if (size + 8 > left) return fail("bundle entry larger than the bundle");
    const std::string path = JoinPath(stage, name);
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return fail(fmt::format("can't create {}: {}", path, strerror(errno)));
    XXH64_state_t* hs = XXH64_createState();
    XXH64_reset(hs, 0);
    uint64_t got = 0;
    bool ok = true;
    while (got < size && ok) {
      if (in_.empty()) {
        if (stop_) {
          *why = "stopped";
          ok = false;
          break;
        }
        if (WallMs() - o_.shared->last_io_ms.load() > o_.timeout_ms) {
          *why = "timeout receiving the full sync";
          ok = false;
          break;
        }
        if (!Fill(100, why)) {
          ok = false;
          break;
        }
        continue;
      }
      size_t n = static_cast<size_t>(std::min<uint64_t>(in_.size(), size - got));
      XXH64_update(hs, in_.data(), n);
      size_t w = 0;
      while (w < n) {
        ssize_t r = ::write(fd, in_.data() + w, n - w);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
          *why = fmt::format("writing {}: {}", path, strerror(errno));
          ok = false;
          break;
        }
        w += static_cast<size_t>(r);
      }
      in_.erase(0, n);
      got += n;
      o_.shared->sync_read = total - left + got;
    }
    const uint64_t digest = XXH64_digest(hs);
    XXH64_freeState(hs);
    if (ok && ::fsync(fd) != 0) {
      *why = fmt::format("fsync {}: {}", path, strerror(errno));
      ok = false;
    }
    ::close(fd);
    if (!ok) return false;
    left -= size;
    char sum[8];
    if (!ReadExact(sum, 8, why)) return false;
    left -= 8;
    if (GetLe(sum, 8) != digest) return fail("checksum mismatch in bundle file " + name);
    if (name == "dump.rdb") rdb = path;
  }
  if (rdb.empty()) return fail("the bundle holds no snapshot");
  Status s = o_.install(rdb, replid, offset);
  // Whatever happened, the staging directory goes (install moved the file).
  std::vector<std::string> names;
  env->ListDir(stage, &names).PermitUnchecked();
  for (const auto& n : names) env->RemoveFile(JoinPath(stage, n)).PermitUnchecked();
  ::rmdir(stage.c_str());
  if (!s.ok()) return fail("loading the full sync: " + s.ToString());
  return true;
}

bool MasterLink::MaybeAck(bool force, std::string* why) {
  const int64_t now = SteadyMs();
  const uint64_t applied = o_.shared->applied.load();
  const uint64_t durable = o_.shared->durable.load();
  // Progress (applied or fsynced) is reported at once, at most once a
  // millisecond; with none, once an ack period.
  const bool progress = applied != last_acked_ || durable != last_facked_;
  if (!force && now - last_ack_ms_ < o_.ack_period_ms && (!progress || now - last_ack_ms_ < 1)) {
    return true;
  }
  last_ack_ms_ = now;
  last_acked_ = applied;
  last_facked_ = durable;
  return Send(Resp({"REPLCONF", "ACK", std::to_string(applied), "FACK", std::to_string(durable)}),
              why);
}

std::string MasterLink::Stream() {
  std::string why;
  if (!MaybeAck(true, &why)) return why;
  size_t incomplete_at = 0;  // in_.size() when the last scan found no whole group
  while (!stop_) {
    if (o_.shared->stopped_on_error) return "apply error";
    if (o_.shared->inflight.load() > kMaxInflight) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      if (!MaybeAck(false, &why)) return why;
      continue;
    }
    const size_t before = in_.size();
    if (!Fill(10, &why)) return why;
    if (WallMs() - o_.shared->last_io_ms.load() > o_.timeout_ms) {
      return "timeout: no data from the master";
    }
    // Rescan a partial group only once it has grown well (or the socket
    // went quiet), so a big group arriving in pieces is not parsed over and
    // over.
    const bool grew = in_.size() != before;
    if (!in_.empty() && (incomplete_at == 0 || in_.size() >= 2 * incomplete_at ||
                         (!grew && in_.size() != incomplete_at))) {
      aof::ScanResult r;
      aof::ScanSegment(in_, 0, [](const aof::Group&) { return Status::OK(); }, &r)
          .PermitUnchecked();
      if (r.end == aof::ScanEnd::kCorrupt) {
        o_.shared->stopped_on_error = true;
        return fmt::format("corrupt replication stream at offset {}: {}",
                           o_.shared->applied.load() + r.error_offset, r.error);
      }
      if (r.valid_end > 0) {
        auto bytes = std::make_shared<const std::string>(in_.substr(0, r.valid_end));
        o_.shared->inflight += r.valid_end;
        in_.erase(0, r.valid_end);
        o_.deliver(std::move(bytes));
        incomplete_at = 0;
      } else {
        incomplete_at = in_.size();
      }
    }
    if (!MaybeAck(false, &why)) return why;
  }
  return "stopped";
}

}  // namespace feedkv::server
