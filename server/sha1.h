// SHA-1 (FIPS 180-4), for script names: EVAL's scripts are cached and called
// by the SHA-1 of their body, in lower-case hex, as in Redis (redis.sha1hex
// too). Not for security. Pure function; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace feedkv::server {

// The 40-character lower-case hex digest of `data`.
std::string Sha1Hex(std::string_view data);

}  // namespace feedkv::server
