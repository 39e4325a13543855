// GlobMatch: Redis's glob-style matching (stringmatchlen in util.c), used by
// every pattern user: KEYS, SCAN/SSCAN/LSSCAN MATCH, CONFIG GET, and later
// PSUBSCRIBE and ACL key patterns.
//
// Pattern elements: `*` (any run, possibly empty), `?` (one byte), `[...]`
// and `[^...]` (one byte in / not in the set; `a-z` ranges, reversed ranges
// allowed, `\x` a literal x), `\x` (the literal x), anything else itself.
// Redis's corner cases are kept byte for byte: an unterminated `[` runs to
// the end of the pattern, `[a-]` is the range a..']', an escaped byte inside
// `[...]` ignores nocase, a trailing `\` is a literal backslash, range bounds
// compare as signed chars (Redis on x86), and an empty string matches only
// the empty pattern (so `*` does not match "").
//
// Work is O(len(pattern) * len(s)) and needs no memory: every element other
// than `*` consumes exactly one byte, so on a mismatch it is enough to retry
// from the most recent `*` one byte further on.
#pragma once

#include <string_view>

namespace feedkv::server {

bool GlobMatch(std::string_view pattern, std::string_view s, bool nocase);

}  // namespace feedkv::server
