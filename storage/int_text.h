// The decimal text of 64-bit integers: the one canonical int64 parser every
// layer uses (command arguments, the keyspace's int encoding, set members)
// and the matching formatter (also the log's).
//
// Canonical means Redis's string2ll: an optional '-', then digits, no '+', no
// leading zeros, no "-0", no spaces, in range. "007" is not 7, so that a value
// stored as an integer reads back byte for byte, and a set keeps "007" and "7"
// apart whatever its encoding. Thread-safe: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

namespace feedkv {

// Parses `s` as an int64 in canonical decimal form only; false (and *out
// unspecified) otherwise. Ids of 8-16 digits take a branch-light path.
bool ParseCanonicalInt64(std::string_view s, int64_t* out);

// The decimal text of v into buf (at least 20 bytes); returns the view.
std::string_view FormatInt64(int64_t v, char* buf);

}  // namespace feedkv
