// Small helpers the replication files share: ids, number parsing, files.
// Thread-safety: stateless functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "storage/status.h"

namespace feedkv::server {

class Server;

namespace repl {

// Diverged tails kept in dir/diverged (each may have a .rdb beside it).
inline constexpr size_t kDivergedRetain = 3;
inline constexpr std::string_view kNoReplid = "0000000000000000000000000000000000000000";

std::string RandomHex40(Server& s);
bool ParseI64(std::string_view s, int64_t* out);
bool IsHex40(std::string_view s);
// "host port" (the replicaof setting); false when malformed.
bool SplitHostPort(std::string_view v, std::string* host, int* port);
// Percent of the file system holding `dir` that is free; -1 if unknown.
int64_t FreeDiskPercent(const std::string& dir);
// Write temp, fsync, rename.
Status WriteFileAtomically(const std::string& path, const std::string& text);

}  // namespace repl
}  // namespace feedkv::server
