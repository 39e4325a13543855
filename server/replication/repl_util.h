// Small helpers the replication files share: ids, number parsing, files.
// Thread-safety: stateless functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "storage/status.h"

namespace feedkv::server {

class Server;

namespace repl {

// Diverged tails kept in dir/diverged (each may have a .rdb beside it).
inline constexpr size_t kDivergedRetain = 3;
inline constexpr std::string_view kNoReplid = "0000000000000000000000000000000000000000";

std::string RandomHex40(Server& s);
bool IsHex40(std::string_view s);
// "host port" (the replicaof setting); false when malformed.
bool SplitHostPort(std::string_view v, std::string* host, int* port);
// Calls fn(line) for every line of `text` (without the newline).
void ForEachLine(std::string_view text, const std::function<void(std::string_view)>& fn);
// The space-separated words of `line`.
std::vector<std::string_view> Words(std::string_view line);

}  // namespace repl
}  // namespace feedkv::server
