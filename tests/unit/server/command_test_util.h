// CommandTest: runs commands through the real dispatch path (Server::Execute)
// without sockets, and returns the RESP bytes a client would receive.
// Use: Run({"SET", "k", "v"}) == "+OK\r\n". Connect() registers further
// clients as connections (for CLIENT LIST/KILL). Not thread-safe.
#pragma once

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>
#include <vector>

#include "server/config.h"
#include "server/network.h"
#include "server/server.h"

namespace feedkv::server {

class CommandTest : public ::testing::Test {
 protected:
  CommandTest() { Reset(Config()); }
  ~CommandTest() override { DropConnections(); }

  void Reset(Config config) {
    DropConnections();
    server_.reset();
    server_ = std::make_unique<Server>(io_, std::move(config));
    client_ = Client{};
    client_.id = server_->NextClientId();
    server_->SetDefaultAuth(client_);
  }

  std::string Run(const std::vector<std::string>& args) { return RunAs(client_, args); }

  std::string RunAs(Client& c, const std::vector<std::string>& args) {
    std::vector<std::string_view> views(args.begin(), args.end());
    c.out.clear();
    server_->Execute(c, views);
    return c.out;
  }

  // A client the server lists as connected (CLIENT LIST, CLIENT KILL), over
  // one end of a socketpair nobody reads; its addr is 127.0.0.1:<40000+n>.
  Client& Connect() {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    ::close(fds[1]);
    Connection::Socket socket(io_, boost::asio::generic::stream_protocol(AF_UNIX, 0), fds[0]);
    auto conn = std::make_shared<Connection>(*server_, std::move(socket),
                                             "127.0.0.1:" + std::to_string(40000 + connections_.size()),
                                             "127.0.0.1:6379", /*local=*/true);
    server_->AddConnection(conn);
    connections_.push_back(conn);
    return conn->client();
  }

  void DropConnections() {
    for (auto& c : connections_) c->Close();
    connections_.clear();
  }

  static std::string Bulk(std::string_view s) {
    return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
  }
  static std::string Int(int64_t v) { return ":" + std::to_string(v) + "\r\n"; }
  static std::string Err(std::string_view s) { return "-" + std::string(s) + "\r\n"; }

  boost::asio::io_context io_;
  std::unique_ptr<Server> server_;
  Client client_;
  std::vector<std::shared_ptr<Connection>> connections_;
};

}  // namespace feedkv::server
