// CLIENT INFO / CLIENT LIST's line for one client (cmd_connection.cc), which
// ACL LOG also records as an entry's client-info.
#pragma once

#include <string>

namespace feedkv::server {

class Server;
struct Client;

std::string ClientInfoLine(const Server& server, const Client& c);

}  // namespace feedkv::server
