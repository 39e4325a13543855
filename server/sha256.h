// SHA-256 (FIPS 180-4), for ACL passwords: Redis stores and shows a user's
// passwords as the lower-case hex SHA-256 of the clear text (ACL GETUSER,
// ACL LIST, the "#<hash>" rule), so feedkv does the same and an ACL file
// moves between the two servers. Pure function; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace feedkv::server {

// The 64-character lower-case hex digest of `data`.
std::string Sha256Hex(std::string_view data);

}  // namespace feedkv::server
