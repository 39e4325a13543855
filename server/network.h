// Listener accepts TCP or Unix-socket clients; Connection moves bytes between
// one socket and the server: read → parse → Server::Execute → coalesced write.
//
// All replies produced while handling one read are sent with one write, so a
// pipeline of N commands costs about one syscall each way. A connection whose
// unsent replies grow past a limit stops reading until the client catches up
// (or is closed, if client-output-buffer-limit says so). Both classes run on
// the command thread only.
#pragma once

#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>

#include <memory>
#include <string>

#include "protocol/resp_parser.h"
#include "server/client.h"
#include "server/config.h"

namespace feedkv::server {

class Server;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  using Socket = boost::asio::generic::stream_protocol::socket;

  Connection(Server& server, Socket socket, std::string addr, std::string laddr, bool local);
  ~Connection();

  void Start();
  // Sends what is pending, if the client may receive it now.
  void Flush();
  // Reads again if reading was paused (output backlog, replies waiting for the log)
  // and the reason is gone.
  void ResumeReading() {
    if (reading_paused_) DoRead();
  }
  // The client's parked command has replied: send, then run the input that
  // queued behind it and read on.
  void ResumeAfterWait();
  // Closes at once, dropping unsent replies.
  void Close();
  // Whether the unsent replies are past client-output-buffer-limit (the soft
  // limit's time counts from when it was first seen reached); the cron asks
  // it of every client, as Redis's clientsCron, so a soft limit expires
  // without traffic. Then CloseOverOutputLimit closes it.
  bool OutputPastLimits();
  void CloseOverOutputLimit();
  Client& client() { return client_; }
  bool closed() const { return closed_; }
  // While a script runs past busy-reply-threshold: reads what the client sent
  // and answers it now (Server::Execute replies -BUSY to all but SCRIPT KILL and
  // SHUTDOWN NOSAVE), without the event loop, so nothing else runs meanwhile.
  void ServeWhileBusy();

 private:
  void DoRead();
  // The socket is readable: one non-blocking read into the (re)made buffer.
  void OnReadable(const boost::system::error_code& ec);
  // One non-blocking read and its processing; false when nothing was there.
  bool ReadAvailable();
  void OnRead(const boost::system::error_code& ec, size_t n);
  void ProcessInput();
  // Scans the next commands waiting in the input and prefetches their keys
  // (protocol/pipeline_scan.h); how many it found, at most kLookahead.
  size_t PrefetchAhead();
  static constexpr size_t kLookahead = 16;
  void OnWritten(const boost::system::error_code& ec, size_t n);
  void CountWritten(size_t n);
  // client-output-buffer-limit for the normal class; updates the soft-limit clock.
  bool OutputOverLimit();
  // Unsent reply bytes past which no more input is read or run.
  size_t PauseReadingAt() const;
  // Runs input that waited (reply backlog, parked command), flushes, reads on.
  void RunHeldInput();

  Server& server_;
  Socket socket_;
  Client client_;
  protocol::RespParser parser_;
  std::string in_;          // bytes read; [in_start_, in_len_) not yet parsed
  size_t in_start_ = 0;
  size_t in_len_ = 0;
  std::string writing_;     // bytes handed to the socket
  bool write_in_flight_ = false;
  bool read_in_flight_ = false;
  bool reading_paused_ = false;
  bool closed_ = false;
  bool stop_reading_ = false;  // after a protocol error or QUIT
  // Parsed-ahead input waits: the reply backlog passed the pause threshold.
  bool input_held_ = false;
  int64_t obuf_soft_since_s_ = 0;  // unix seconds the soft limit was first seen reached; 0: not
};

// Whether a TCP peer is local as Redis's connIsLocal: 127.0.0.0/8 or ::1 (an
// IPv4-mapped ::ffff:127.x is not, as in Redis). Unix-socket clients are local.
bool IsLocalPeer(const boost::asio::ip::address& peer);

// Protected mode: a client that is not local (loopback or Unix socket) is
// refused while protected-mode is yes and the default user needs no
// password, as Redis 7.
bool ProtectedModeRefuses(const ServerConfig& cfg, bool default_user_nopass, bool local_client);

// Redis's checkClientOutputBufferLimits for `unsent` bytes at unix second
// `now_s`: over when at or past the hard limit, or at or past the soft limit
// for more than soft_seconds since *soft_since_s (0: not yet seen; set here,
// and cleared when the buffer drops below the soft limit).
bool OutputBufferOverLimit(const OutputBufferLimit& limit, uint64_t unsent, int64_t now_s,
                           int64_t* soft_since_s);

class Listener {
 public:
  // TCP on bind:port (port 0 picks a free port).
  static std::unique_ptr<Listener> Tcp(Server& server, const std::string& bind, int port,
                                      int backlog, std::string* error);
  // Unix socket at path.
  static std::unique_ptr<Listener> Unix(Server& server, const std::string& path, int perm,
                                       std::string* error);
  ~Listener();
  int port() const { return port_; }
  bool tcp() const { return tcp_ != nullptr; }
  void Close();
  // Admits the connections waiting in the backlog without the event loop (which a
  // busy script holds), so they can be answered -BUSY as Redis does.
  void AcceptWhileBusy();

 private:
  explicit Listener(Server& server);
  void AcceptTcp();
  void AcceptUnix();
  void RetryAcceptLater(const boost::system::error_code& ec);
  void AdmitTcp(boost::asio::ip::tcp::socket s);
  void Admit(Connection::Socket socket, std::string addr, std::string laddr, bool local);

  Server& server_;
  std::unique_ptr<boost::asio::ip::tcp::acceptor> tcp_;
  std::unique_ptr<boost::asio::local::stream_protocol::acceptor> unix_;
  std::string unix_path_;
  int port_ = 0;
  boost::asio::steady_timer retry_timer_;  // accept again after a failed accept
};

}  // namespace feedkv::server
