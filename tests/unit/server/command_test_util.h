// CommandTest: runs commands through the real dispatch path (Server::Execute)
// without sockets, and returns the RESP bytes a client would receive.
// Use: Run({"SET", "k", "v"}) == "+OK\r\n". Not thread-safe.
#pragma once

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>
#include <vector>

#include "server/config.h"
#include "server/server.h"

namespace feedkv::server {

class CommandTest : public ::testing::Test {
 protected:
  CommandTest() { Reset(Config()); }

  void Reset(Config config) {
    server_.reset();
    server_ = std::make_unique<Server>(io_, std::move(config));
    client_ = Client{};
    client_.id = server_->NextClientId();
    client_.authenticated = server_->cfg().requirepass.empty();
  }

  std::string Run(const std::vector<std::string>& args) { return RunAs(client_, args); }

  std::string RunAs(Client& c, const std::vector<std::string>& args) {
    std::vector<std::string_view> views(args.begin(), args.end());
    c.out.clear();
    server_->Execute(c, views);
    return c.out;
  }

  static std::string Bulk(std::string_view s) {
    return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
  }
  static std::string Int(int64_t v) { return ":" + std::to_string(v) + "\r\n"; }
  static std::string Err(std::string_view s) { return "-" + std::string(s) + "\r\n"; }

  boost::asio::io_context io_;
  std::unique_ptr<Server> server_;
  Client client_;
};

}  // namespace feedkv::server
