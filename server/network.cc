#include "server/network.h"

#include <algorithm>
#include <cstring>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "protocol/error_text.h"
#include "protocol/pipeline_scan.h"
#include "protocol/reply_writer.h"
#include "server/script_engine.h"
#include "server/server.h"

namespace feedkv::server {

namespace {
constexpr size_t kReadChunk = 16 * 1024;
// Past this many unsent bytes a connection stops reading new commands.
constexpr size_t kPauseReadingAt = 64 * 1024 * 1024;
}  // namespace

bool IsLocalPeer(const boost::asio::ip::address& peer) {
  // is_loopback: 127.0.0.0/8 for IPv4, exactly ::1 for IPv6.
  return peer.is_loopback();
}

bool ProtectedModeRefuses(const ServerConfig& cfg, bool default_user_nopass, bool local_client) {
  return cfg.protected_mode && default_user_nopass && !local_client;
}

bool OutputBufferOverLimit(const OutputBufferLimit& limit, uint64_t unsent, int64_t now_s,
                           int64_t* soft_since_s) {
  const bool hard = limit.hard_bytes > 0 && unsent >= limit.hard_bytes;
  if (limit.soft_bytes == 0 || unsent < limit.soft_bytes) {
    *soft_since_s = 0;
    return hard;
  }
  // The first sighting starts the clock; whole seconds, as Redis's server.unixtime.
  if (*soft_since_s == 0) {
    *soft_since_s = now_s;
    return hard;
  }
  return hard || now_s - *soft_since_s > limit.soft_seconds;
}

Connection::Connection(Server& server, Socket socket, std::string addr, std::string laddr, bool local)
    : server_(server), socket_(std::move(socket)) {
  client_.id = server.NextClientId();
  client_.addr = std::move(addr);
  client_.laddr = std::move(laddr);
  client_.local = local;
  client_.fd = socket_.native_handle();
  client_.created_ms = client_.last_interaction_ms = NowMs();
  server.SetDefaultAuth(client_);
}

Connection::~Connection() = default;

void Connection::Start() {
  server_.AddConnection(shared_from_this());
  // Flush writes synchronously first; it must never block the command thread.
  boost::system::error_code ec;
  socket_.non_blocking(true, ec);
  if (ec) {
    server_.Log(3, "Cannot make client socket non-blocking: " + ec.message());
    Close();
    return;
  }
  DoRead();
}

void Connection::DoRead() {
  if (closed_ || read_in_flight_ || stop_reading_) return;
  // The client whose script is running is not read until the script ends (its
  // own command is still being answered); its caller reads on afterwards.
  if (server_.scripts().IsCaller(client_)) return;
  // Backpressure: a client whose replies wait for the log is not read until they
  // may go out (Server::SetAckOffset resumes it), as Redis reads a client once per
  // loop turn and writes the AOF before replying. A pipelining client then cannot
  // run the AOF writer arbitrarily far behind.
  if (client_.out.size() + writing_.size() > PauseReadingAt() ||
      server_.waiting().RepliesHeld(client_)) {
    reading_paused_ = true;
    return;
  }
  reading_paused_ = false;
  if (input_held_) {
    // Commands read earlier wait behind a reply backlog that is now gone: run
    // them before reading more. Posted, so a long backlog of held input does
    // not recurse through Flush and DoRead.
    input_held_ = false;
    boost::asio::post(server_.io(), [self = shared_from_this()] { self->RunHeldInput(); });
    return;
  }
  // Compact consumed bytes, then make room for the next read (or for the
  // whole of a large bulk the parser is waiting for).
  if (in_start_ > 0) {
    // Move only the unparsed tail (usually nothing): erasing the prefix of in_ would
    // move the whole buffer, free space included, on every read.
    const size_t live = in_len_ - in_start_;
    if (live > 0) std::memmove(in_.data(), in_.data() + in_start_, live);
    in_len_ = live;
    in_start_ = 0;
  }
  // An idle client holds no read buffer (5,000 idle connections would otherwise
  // pin 16 KiB each): the buffer is made when bytes arrive and given back once
  // every byte is parsed, as Redis frees an idle client's query buffer.
  if (in_len_ == 0 && !in_.empty()) {
    std::string().swap(in_);
    client_.query_buffer_free = 0;  // CLIENT LIST qbuf-free: nothing held
  }
  read_in_flight_ = true;
  auto self = shared_from_this();
  socket_.async_wait(Socket::wait_read,
                     [self](const boost::system::error_code& ec) { self->OnReadable(ec); });
}

void Connection::OnReadable(const boost::system::error_code& ec) {
  read_in_flight_ = false;
  if (closed_) return;
  if (ec) {
    Close();
    return;
  }
  if (!ReadAvailable()) DoRead();  // a spurious wake-up: wait again
}

void Connection::ServeWhileBusy() {
  if (closed_ || client_.blocked || server_.scripts().IsCaller(client_)) return;
  ReadAvailable();
}

bool Connection::ReadAvailable() {
  // A large bulk is read in one piece, but the buffer grows with the bytes that
  // arrive (at most doubling what is there), never to the announced length at
  // once: a client that announces 500 MB and sends a trickle holds a trickle.
  size_t want = kReadChunk;
  uint64_t bulk = parser_.pending_bulk_len();
  if (bulk > want && bulk < static_cast<uint64_t>(server_.cfg().client_query_buffer_limit)) {
    want = static_cast<size_t>(std::min<uint64_t>(bulk + 2, std::max(in_len_, kReadChunk)));
  }
  if (in_.size() < in_len_ + want) in_.resize(in_len_ + want);
  client_.query_buffer_free = in_.size() - in_len_;
  boost::system::error_code rec;
  const size_t n =
      socket_.read_some(boost::asio::buffer(in_.data() + in_len_, in_.size() - in_len_), rec);
  if (rec == boost::asio::error::would_block || rec == boost::asio::error::try_again) return false;
  OnRead(rec, n);
  return true;
}

void Connection::RunHeldInput() {
  // Input that waited (behind a reply backlog or a parked command): run it,
  // send the replies, read on.
  if (closed_) return;
  ProcessInput();
  if (closed_) return;
  Flush();
  DoRead();
}

void Connection::OnRead(const boost::system::error_code& ec, size_t n) {
  if (ec) {
    Close();
    return;
  }
  in_len_ += n;
  client_.net_in += n;
  server_.stats().net_input_bytes += n;
  client_.last_interaction_ms = NowMs();
  ProcessInput();
  if (closed_) return;
  if (in_len_ - in_start_ > static_cast<size_t>(server_.cfg().client_query_buffer_limit)) {
    server_.Log(3, "Closing client that reached max query buffer length");
    server_.stats().client_query_buffer_limit_disconnections++;
    Close();
    return;
  }
  Flush();
  DoRead();
}

void Connection::ProcessInput() {
  protocol::ParserLimits limits;
  limits.max_bulk_len = static_cast<uint64_t>(server_.cfg().proto_max_bulk_len);
  // Redis trims its query buffer once per batch, so a command sees the whole
  // batch in its qbuf.
  const size_t batch_start = in_start_;
  client_.query_buffer_free = in_.size() - in_len_;
  // A parked command stops the loop: what follows it waits in the buffer
  // (ResumeAfterWait runs it), so replies keep their order.
  size_t until_lookahead = 0;
  while (!closed_ && !stop_reading_ && !client_.blocked && in_start_ < in_len_) {
    if (until_lookahead == 0) until_lookahead = PrefetchAhead();
    if (until_lookahead > 0) --until_lookahead;
    // Per command: an AUTH earlier in the same read lifts the limits for the rest.
    limits.unauthenticated = !client_.authenticated;
    parser_.set_limits(limits);
    size_t consumed = 0;
    std::string_view buf(in_.data() + in_start_, in_len_ - in_start_);
    auto r = parser_.Parse(buf, &consumed);
    if (r == protocol::RespParser::Result::kNeedMore) break;
    if (r == protocol::RespParser::Result::kError) {
      protocol::ReplyWriter w(&client_.out, client_.resp);
      w.Error(parser_.error());
      server_.CountError(parser_.error());
      server_.Log(1, "Protocol error from client " + client_.addr + ": " + parser_.error());
      stop_reading_ = true;
      client_.close_after_reply = true;
      in_start_ = in_len_;
      break;
    }
    in_start_ += consumed;
    const auto& args = parser_.args();
    if (args.empty()) continue;
    client_.query_buffer_size = in_len_ - batch_start;
    server_.Execute(client_, args);
    if (client_.close_asap) {
      CloseOverOutputLimit();
      return;
    }
    if (client_.close_after_reply) {
      stop_reading_ = true;
      break;
    }
    // Limits are checked as replies are appended, as Redis does: one read of
    // small commands (GET of a big value × 700) must not build gigabytes of
    // replies before anything looks. Past the hard limit the client is closed
    // at once; past the pause threshold the rest of its input waits until the
    // client has read its replies (DoRead runs it then).
    const size_t unsent = client_.out.size() + writing_.size();
    if (unsent > kUncountedReplyBytes) {
      if (OutputOverLimit()) {
        CloseOverOutputLimit();
        return;
      }
      if (unsent > PauseReadingAt()) {
        input_held_ = in_start_ < in_len_;
        break;
      }
    }
  }
  client_.query_buffer_size = in_len_ - in_start_;
  parser_.ReleaseLargeArrays();
}

size_t Connection::PrefetchAhead() {
  std::string_view keys[kLookahead];
  const size_t n = protocol::ScanPipelinedKeys(std::string_view(in_.data() + in_start_, in_len_ - in_start_), keys);
  // A lone command gains nothing: its lookup follows at once.
  if (n >= 2) server_.db(client_.db).Prefetch(std::span<const std::string_view>(keys, n));
  return n;
}

bool Connection::OutputOverLimit() {
  const ClientClass cls = client_.output_class();
  const OutputBufferLimit& limit = server_.cfg().client_output_buffer_limit[static_cast<size_t>(cls)];
  return OutputBufferOverLimit(limit, client_.OutputBufferBytes(), NowMs() / 1000, &obuf_soft_since_s_);
}

size_t Connection::PauseReadingAt() const {
  // A hard limit at or above the pause closes the client where Redis would,
  // rather than pausing it just short of the limit forever.
  const ClientClass cls = client_.output_class();
  const OutputBufferLimit& limit = server_.cfg().client_output_buffer_limit[static_cast<size_t>(cls)];
  if (limit.hard_bytes == 0) return kPauseReadingAt;
  return std::max<uint64_t>(kPauseReadingAt, limit.hard_bytes + kUncountedReplyBytes);
}

bool Connection::OutputPastLimits() {
  if (closed_ || client_.replica) return false;
  if (client_.out.empty() && writing_.empty()) {
    obuf_soft_since_s_ = 0;
    return client_.close_asap;
  }
  return client_.close_asap || OutputOverLimit();
}

void Connection::CloseOverOutputLimit() {
  server_.Log(3, "Client " + client_.addr + " closed for overcoming of output buffer limits.");
  server_.stats().client_output_buffer_limit_disconnections++;
  Close();
}

void Connection::Flush() {
  if (closed_) return;
  // A replica's socket is written by its ReplicaSender alone.
  if (client_.replica) {
    client_.out.clear();
    return;
  }
  // Checked while a write is in flight too: replies pile up in out_ then.
  if (client_.close_asap || OutputOverLimit()) {
    CloseOverOutputLimit();
    return;
  }
  if (write_in_flight_) return;
  if (client_.out.empty() || server_.waiting().RepliesHeld(client_)) {
    if (client_.out.empty() && client_.close_after_reply) Close();
    return;
  }
  // Most replies fit in the socket's send buffer: write them now, on the non-blocking
  // socket, rather than through an async operation (an op, a post and a handler call
  // per reply). Whatever does not fit goes out asynchronously, in order.
  // An error is left for the async write to report, so Flush only closes on paths it
  // always closed on.
  boost::system::error_code ec;
  const size_t sent = socket_.write_some(boost::asio::buffer(client_.out), ec);
  if (!ec && sent == client_.out.size()) {
    client_.out.clear();
    CountWritten(sent);
    if (client_.close_after_reply) {
      Close();
    } else if (reading_paused_) {
      DoRead();
    }
    return;
  }
  const size_t done = ec ? 0 : sent;
  writing_.swap(client_.out);
  client_.out.clear();
  write_in_flight_ = true;
  client_.out_in_flight = writing_.size() - done;
  auto self = shared_from_this();
  boost::asio::async_write(socket_, boost::asio::buffer(writing_.data() + done, writing_.size() - done),
                           [self, done](const boost::system::error_code& ec2, size_t n) {
                             self->OnWritten(ec2, done + n);
                           });
}

void Connection::CountWritten(size_t n) {
  client_.net_out += n;
  server_.stats().net_output_bytes += n;
  if (client_.out.capacity() > 1024 * 1024 && client_.out.empty()) client_.out.shrink_to_fit();
}

void Connection::OnWritten(const boost::system::error_code& ec, size_t n) {
  write_in_flight_ = false;
  client_.out_in_flight = 0;
  if (closed_) return;
  if (ec) {
    Close();
    return;
  }
  CountWritten(n);
  writing_.clear();
  if (writing_.capacity() > 1024 * 1024) writing_.shrink_to_fit();
  Flush();
  if (reading_paused_) DoRead();
}

void Connection::ResumeAfterWait() {
  // Posted: the wait may end inside another client's command (CLIENT UNBLOCK).
  boost::asio::post(server_.io(), [self = shared_from_this()] {
    if (!self->client_.blocked) self->RunHeldInput();
  });
}

void Connection::Close() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ignored;
  socket_.shutdown(Socket::shutdown_both, ignored);
  socket_.close(ignored);
  server_.UnwatchAll(client_);
  if (client_.monitor) server_.RemoveMonitor(&client_);
  server_.RemoveConnection(this);
}

// --- Listener ---

std::unique_ptr<Listener> Listener::Tcp(Server& server, const std::string& bind, int port,
                                        int backlog, std::string* error) {
  namespace ip = boost::asio::ip;
  std::unique_ptr<Listener> l(new Listener(server));
  boost::system::error_code ec;
  auto addr = ip::make_address(bind == "*" ? "0.0.0.0" : bind, ec);
  if (ec) {
    *error = "invalid bind address '" + bind + "'";
    return nullptr;
  }
  ip::tcp::endpoint ep(addr, static_cast<unsigned short>(port));
  l->tcp_ = std::make_unique<ip::tcp::acceptor>(server.io());
  l->tcp_->open(ep.protocol(), ec);
  if (!ec) l->tcp_->set_option(ip::tcp::acceptor::reuse_address(true), ec);
  if (!ec) l->tcp_->bind(ep, ec);
  if (!ec) l->tcp_->listen(backlog, ec);
  if (ec) {
    *error = "Could not create server TCP listening socket " + bind + ":" + std::to_string(port) +
             ": " + ec.message();
    return nullptr;
  }
  l->port_ = l->tcp_->local_endpoint().port();
  l->AcceptTcp();
  return l;
}

std::unique_ptr<Listener> Listener::Unix(Server& server, const std::string& path, int perm,
                                         std::string* error) {
  namespace local = boost::asio::local;
  std::unique_ptr<Listener> l(new Listener(server));
  ::unlink(path.c_str());
  boost::system::error_code ec;
  l->unix_ = std::make_unique<local::stream_protocol::acceptor>(server.io());
  local::stream_protocol::endpoint ep(path);
  l->unix_->open(ep.protocol(), ec);
  if (!ec) l->unix_->bind(ep, ec);
  if (!ec) l->unix_->listen(511, ec);
  if (ec) {
    *error = "Failed opening Unix socket " + path + ": " + ec.message();
    return nullptr;
  }
  if (perm != 0) ::chmod(path.c_str(), static_cast<mode_t>(perm));
  l->unix_path_ = path;
  l->AcceptUnix();
  return l;
}

Listener::Listener(Server& server) : server_(server), retry_timer_(server.io()) {}

Listener::~Listener() { Close(); }

void Listener::Close() {
  retry_timer_.cancel();
  boost::system::error_code ignored;
  if (tcp_) tcp_->close(ignored);
  if (unix_) {
    unix_->close(ignored);
    ::unlink(unix_path_.c_str());
    unix_.reset();
  }
}

void Listener::AcceptTcp() {
  tcp_->async_accept([this](const boost::system::error_code& ec, boost::asio::ip::tcp::socket s) {
    if (ec == boost::asio::error::operation_aborted) return;
    if (ec) {
      RetryAcceptLater(ec);
      return;
    }
    AdmitTcp(std::move(s));
    if (tcp_ && tcp_->is_open()) AcceptTcp();
  });
}

void Listener::AdmitTcp(boost::asio::ip::tcp::socket s) {
  boost::system::error_code ignored;
  s.set_option(boost::asio::ip::tcp::no_delay(true), ignored);
  if (server_.cfg().tcp_keepalive > 0) {
    s.set_option(boost::asio::socket_base::keep_alive(true), ignored);
    int secs = static_cast<int>(server_.cfg().tcp_keepalive);
    ::setsockopt(s.native_handle(), IPPROTO_TCP, TCP_KEEPIDLE, &secs, sizeof(secs));
  }
  auto remote = s.remote_endpoint(ignored);
  auto local = s.local_endpoint(ignored);
  std::string addr = remote.address().to_string() + ":" + std::to_string(remote.port());
  std::string laddr = local.address().to_string() + ":" + std::to_string(local.port());
  const bool local_peer = IsLocalPeer(remote.address());
  Admit(Connection::Socket(std::move(s)), std::move(addr), std::move(laddr), local_peer);
}

void Listener::AcceptWhileBusy() {
  // The event loop is held by a busy script, so the pending async_accept cannot
  // run: take what waits in the backlog with non-blocking accepts (the pending
  // operation then finds nothing and keeps waiting). Bounded per call, so a
  // connection storm cannot hold the script's hook.
  constexpr int kMaxPerCall = 16;
  boost::system::error_code ec;
  if (tcp_ && tcp_->is_open()) {
    tcp_->non_blocking(true, ec);
    for (int i = 0; i < kMaxPerCall && !ec; ++i) {
      boost::asio::ip::tcp::socket s = tcp_->accept(ec);
      if (!ec) AdmitTcp(std::move(s));
    }
  }
  ec.clear();
  if (unix_ && unix_->is_open()) {
    unix_->non_blocking(true, ec);
    for (int i = 0; i < kMaxPerCall && !ec; ++i) {
      boost::asio::local::stream_protocol::socket s = unix_->accept(ec);
      if (!ec) Admit(Connection::Socket(std::move(s)), unix_path_ + ":0", unix_path_, true);
    }
  }
}

void Listener::AcceptUnix() {
  unix_->async_accept(
      [this](const boost::system::error_code& ec, boost::asio::local::stream_protocol::socket s) {
        if (ec == boost::asio::error::operation_aborted) return;
        if (ec) {
          RetryAcceptLater(ec);
          return;
        }
        Admit(Connection::Socket(std::move(s)), unix_path_ + ":0", unix_path_, true);
        if (unix_ && unix_->is_open()) AcceptUnix();
      });
}

void Listener::RetryAcceptLater(const boost::system::error_code& ec) {
  // accept() failing (out of descriptors: EMFILE/ENFILE, or out of memory) would
  // fail again at once while the connection waits in the backlog: accepting again
  // straight away spins the command thread. Wait a little, as the client does.
  server_.Log(3, "Accepting client connection: " + ec.message());
  retry_timer_.expires_after(std::chrono::milliseconds(100));
  retry_timer_.async_wait([this](const boost::system::error_code& tec) {
    if (tec) return;
    if (tcp_ && tcp_->is_open()) AcceptTcp();
    if (unix_ && unix_->is_open()) AcceptUnix();
  });
}

void Listener::Admit(Connection::Socket socket, std::string addr, std::string laddr, bool local) {
  server_.stats().total_connections_received++;
  // Refused clients get one error line, then the socket is closed (maxclients first, as Redis).
  const char* refusal = nullptr;
  if (static_cast<int64_t>(server_.num_clients()) >= server_.cfg().maxclients) {
    refusal = protocol::err::kMaxClients;
  } else if (ProtectedModeRefuses(server_.cfg(), server_.acl().default_user()->nopass, local)) {
    refusal = protocol::err::kProtectedMode;
  }
  if (refusal != nullptr) {
    server_.stats().rejected_connections++;
    std::string msg = std::string("-") + refusal + "\r\n";
    boost::system::error_code ignored;
    boost::asio::write(socket, boost::asio::buffer(msg), ignored);
    socket.close(ignored);
    return;
  }
  auto conn = std::make_shared<Connection>(server_, std::move(socket), std::move(addr),
                                           std::move(laddr), local);
  conn->Start();
}

}  // namespace feedkv::server
