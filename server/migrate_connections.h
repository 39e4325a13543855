// MigrateConnections: the connections MIGRATE sends its RESTOREs over, as
// Redis's migrate socket cache — one per "host:port", kept 10 seconds after
// its last use (at most 64), with the database it last selected, so that a
// run of MIGRATEs to one target connects and SELECTs once
// (INFO migrate_cached_sockets).
//
// Redis does the transfer inside the command, blocking the server; here it is
// asynchronous on the command thread's io_context: Transfer connects, writes
// the request and reads one reply line per command sent, each step within
// `timeout_ms`, then calls `done`. The MIGRATE client stays parked meanwhile,
// so the server keeps serving everyone else. Transfers to one target run one
// after another over its connection, in the order they were asked for.
//
// Thread-safety: command thread only (callbacks run there too).
#pragma once

#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace feedkv::server {

struct MigrateRequest {
  std::string host;
  std::string port;
  int64_t timeout_ms = 1000;
  int64_t db = 0;
  // Sent first when set (AUTH [user] password).
  bool auth = false;
  std::string username, password;
  // The RESTORE commands, RESP-encoded, one per key.
  std::vector<std::string> restores;
};

struct MigrateResult {
  enum Failure { kNone, kConnect, kWrite, kRead };
  Failure failure = kNone;
  // The first line of each reply read (without "\r\n"): AUTH's, SELECT's (when
  // it was sent) and the RESTOREs' in order; fewer after a failure.
  std::vector<std::string> lines;
  bool sent_auth = false;
  bool sent_select = false;
};

class MigrateConnections {
 public:
  using DoneFn = std::function<void(MigrateResult)>;

  explicit MigrateConnections(boost::asio::io_context& io);
  ~MigrateConnections();
  MigrateConnections(const MigrateConnections&) = delete;
  MigrateConnections& operator=(const MigrateConnections&) = delete;

  void Transfer(MigrateRequest req, DoneFn done);
  // Connections open now (INFO migrate_cached_sockets).
  size_t cached() const { return targets_.size(); }

 private:
  struct Target;
  struct Job;
  void StartNext(const std::shared_ptr<Target>& t);
  void Connect(const std::shared_ptr<Target>& t);
  void Send(const std::shared_ptr<Target>& t);
  void WriteMore(const std::shared_ptr<Target>& t);
  void ReadLine(const std::shared_ptr<Target>& t);
  void Finish(const std::shared_ptr<Target>& t, MigrateResult::Failure failure, bool timed_out);
  void Arm(const std::shared_ptr<Target>& t);
  void Close(const std::string& name);

  boost::asio::io_context& io_;
  std::map<std::string, std::shared_ptr<Target>> targets_;
};

}  // namespace feedkv::server
