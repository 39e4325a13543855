#include "server/migrate_connections.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <istream>

namespace feedkv::server {

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

constexpr size_t kMaxCached = 64;                     // Redis's MIGRATE_SOCKET_CACHE_ITEMS
constexpr auto kIdleClose = std::chrono::seconds(10);  // Redis's MIGRATE_SOCKET_CACHE_TTL
constexpr size_t kWriteChunk = 64 * 1024;              // as Redis's

void AppendBulk(std::string* out, std::string_view s) {
  fmt::format_to(std::back_inserter(*out), "${}\r\n", s.size());
  out->append(s);
  out->append("\r\n");
}

}  // namespace

struct MigrateConnections::Job {
  MigrateRequest req;
  DoneFn done;
  MigrateResult result;
  std::string out;       // the bytes to send
  size_t written = 0;
  size_t expected = 0;   // reply lines to read
  bool retried = false;  // a stale cached connection is retried once, as Redis
};

struct MigrateConnections::Target {
  Target(asio::io_context& io, std::string n) : name(std::move(n)), socket(io), resolver(io), step(io), idle(io) {}
  std::string name, host, port;
  tcp::socket socket;
  tcp::resolver resolver;
  asio::steady_timer step, idle;
  asio::streambuf in;
  bool connected = false;
  bool closed = false;    // dropped from the cache: late handlers do nothing
  bool busy = false;
  bool timed_out = false;  // the running step's timer fired
  int64_t last_db = -1;
  std::deque<Job> queue;
};

MigrateConnections::MigrateConnections(asio::io_context& io) : io_(io) {}

MigrateConnections::~MigrateConnections() {
  while (!targets_.empty()) Close(targets_.begin()->first);
}

void MigrateConnections::Transfer(MigrateRequest req, DoneFn done) {
  const std::string name = req.host + ":" + req.port;
  auto it = targets_.find(name);
  if (it == targets_.end()) {
    if (targets_.size() >= kMaxCached) {
      // As Redis, a full cache drops one connection (an idle one here).
      for (auto& [n, t] : targets_) {
        if (!t->busy) {
          Close(n);
          break;
        }
      }
    }
    auto t = std::make_shared<Target>(io_, name);
    t->host = req.host;
    t->port = req.port;
    it = targets_.emplace(name, std::move(t)).first;
  }
  std::shared_ptr<Target> t = it->second;
  t->queue.push_back(Job{std::move(req), std::move(done), {}, {}, 0, 0, false});
  StartNext(t);
}

void MigrateConnections::StartNext(const std::shared_ptr<Target>& t) {
  if (t->closed || t->busy || t->queue.empty()) return;
  t->busy = true;
  t->idle.cancel();
  if (t->connected) {
    Send(t);
  } else {
    Connect(t);
  }
}

void MigrateConnections::Arm(const std::shared_ptr<Target>& t) {
  t->timed_out = false;
  t->step.expires_after(std::chrono::milliseconds(t->queue.front().req.timeout_ms));
  t->step.async_wait([t](const boost::system::error_code& ec) {
    if (ec || t->closed) return;
    t->timed_out = true;
    boost::system::error_code ignored;
    t->socket.cancel(ignored);
    t->resolver.cancel();
  });
}

void MigrateConnections::Connect(const std::shared_ptr<Target>& t) {
  Arm(t);
  t->resolver.async_resolve(t->host, t->port, [this, t](const boost::system::error_code& ec,
                                                       tcp::resolver::results_type results) {
    if (t->closed) return;
    if (ec || t->timed_out) return Finish(t, MigrateResult::kConnect, t->timed_out);
    boost::system::error_code ignored;
    t->socket.close(ignored);
    asio::async_connect(t->socket, results, [this, t](const boost::system::error_code& ec2, const tcp::endpoint&) {
      if (t->closed) return;
      // As Redis, whose non-blocking connect "succeeds" on a refused port and
      // whose first write then fails: only a connect that timed out is a
      // connect failure; a refused one is a write failure (and retried once).
      if (t->timed_out) return Finish(t, MigrateResult::kConnect, true);
      if (ec2) return Finish(t, MigrateResult::kWrite, false);
      boost::system::error_code ignored2;
      t->socket.set_option(tcp::no_delay(true), ignored2);
      t->connected = true;
      t->in.consume(t->in.size());
      Send(t);
    });
  });
}

void MigrateConnections::Send(const std::shared_ptr<Target>& t) {
  Job& job = t->queue.front();
  const MigrateRequest& req = job.req;
  job.out.clear();
  job.written = 0;
  job.result = MigrateResult{};
  if (req.auth) {
    const bool user = !req.username.empty();
    job.out += user ? "*3\r\n" : "*2\r\n";
    AppendBulk(&job.out, "AUTH");
    if (user) AppendBulk(&job.out, req.username);
    AppendBulk(&job.out, req.password);
    job.result.sent_auth = true;
  }
  if (t->last_db != req.db) {
    job.out += "*2\r\n";
    AppendBulk(&job.out, "SELECT");
    AppendBulk(&job.out, std::to_string(req.db));
    job.result.sent_select = true;
  }
  for (const std::string& r : req.restores) job.out += r;
  job.expected = (job.result.sent_auth ? 1 : 0) + (job.result.sent_select ? 1 : 0) + req.restores.size();
  WriteMore(t);
}

void MigrateConnections::WriteMore(const std::shared_ptr<Target>& t) {
  Job& job = t->queue.front();
  const size_t n = std::min(kWriteChunk, job.out.size() - job.written);
  Arm(t);  // each chunk gets the whole timeout, as Redis's connSyncWrite calls
  asio::async_write(t->socket, asio::buffer(job.out.data() + job.written, n),
                    [this, t](const boost::system::error_code& ec, size_t written) {
                      if (t->closed) return;
                      if (ec || t->timed_out) return Finish(t, MigrateResult::kWrite, t->timed_out);
                      Job& j = t->queue.front();
                      j.written += written;
                      if (j.written < j.out.size()) return WriteMore(t);
                      Arm(t);
                      ReadLine(t);
                    });
}

void MigrateConnections::ReadLine(const std::shared_ptr<Target>& t) {
  asio::async_read_until(t->socket, t->in, "\r\n", [this, t](const boost::system::error_code& ec, size_t n) {
    if (t->closed) return;
    if (ec || t->timed_out) return Finish(t, MigrateResult::kRead, t->timed_out);
    Job& job = t->queue.front();
    std::string line(n - 2, '\0');
    std::istream is(&t->in);
    is.read(line.data(), static_cast<std::streamsize>(n - 2));
    t->in.consume(2);
    job.result.lines.push_back(std::move(line));
    if (job.result.lines.size() < job.expected) {
      Arm(t);
      ReadLine(t);
      return;
    }
    Finish(t, MigrateResult::kNone, false);
  });
}

void MigrateConnections::Finish(const std::shared_ptr<Target>& t, MigrateResult::Failure failure, bool timed_out) {
  t->step.cancel();
  Job& job = t->queue.front();
  if (failure != MigrateResult::kNone) {
    boost::system::error_code ignored;
    t->socket.close(ignored);
    t->connected = false;
    t->last_db = -1;
    // A cached connection the target closed meanwhile fails at once: Redis
    // connects again and retries once, unless the step timed out or a reply
    // was read (the target may have acted on the request).
    if (failure != MigrateResult::kConnect && !timed_out && job.result.lines.empty() && !job.retried) {
      job.retried = true;
      Connect(t);
      return;
    }
  } else {
    bool error = false;
    for (const std::string& l : job.result.lines) error |= !l.empty() && l[0] == '-';
    // A target that answered an error may not have selected the database.
    t->last_db = error ? -1 : job.req.db;
  }
  job.result.failure = failure;
  Job done = std::move(job);
  t->queue.pop_front();
  t->busy = false;
  if (failure == MigrateResult::kConnect && t->queue.empty()) {
    Close(t->name);  // as Redis: a failed connection is not cached
  } else if (!t->connected && t->queue.empty()) {
    Close(t->name);
  } else if (t->queue.empty()) {
    t->idle.expires_after(kIdleClose);
    t->idle.async_wait([this, t](const boost::system::error_code& ec) {
      if (ec || t->closed || t->busy) return;
      Close(t->name);
    });
  }
  done.done(std::move(done.result));
  StartNext(t);
}

void MigrateConnections::Close(const std::string& name) {
  auto it = targets_.find(name);
  if (it == targets_.end()) return;
  std::shared_ptr<Target> t = it->second;
  targets_.erase(it);
  t->closed = true;
  boost::system::error_code ignored;
  t->socket.close(ignored);
  t->step.cancel();
  t->idle.cancel();
  t->resolver.cancel();
}

}  // namespace feedkv::server
