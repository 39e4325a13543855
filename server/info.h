// INFO: renders the server's state in Redis's section/field format, which
// redis_exporter, ioredis's ready check and redis-cli parse. Field names are
// Redis's; sections registered by subsystems (Server::AddInfoSection) are
// appended, or replace a built-in section of the same name.
#pragma once

#include <string>
#include <vector>

namespace feedkv::server {

class Server;

// `sections` are lower-case names, or "default", "all", "everything"; empty
// means "default".
std::string BuildInfo(Server& server, const std::vector<std::string>& sections);

// "1.50M" style, as Redis's bytesToHuman.
std::string BytesToHuman(uint64_t n);

}  // namespace feedkv::server
