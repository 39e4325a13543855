// ScanPipelinedKeys: a look ahead over a client's input, for prefetching.
//
// A pipelined batch of GETs on a large keyspace spends about a third of the
// server's time waiting for memory: each lookup misses the cache twice, once
// on its hash bucket and once on its entry. Knowing the next commands' keys
// before running the first lets the server ask for all those lines at once
// (Database::Prefetch), so the misses overlap instead of queueing behind each
// other. The scan takes each command's first argument after its name, which
// is the key of nearly every data command; for the others the prefetch is
// wasted, never wrong.
//
// The scan only reads: the parser (resp_parser.h) still parses every command
// as before. It reads multibulk headers and skips bulk bodies by their length,
// so its cost does not depend on the size of the values.
//
// Pure and thread-compatible.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace feedkv::protocol {

// A command with more arguments ends the scan: walking its headers would cost
// more than the prefetch saves.
inline constexpr size_t kMaxScanArgs = 64;

// Fills keys[0..n) with the argv[1] of each complete multibulk command at the
// front of `buf` and returns n (at most keys.size()). Stops at the first
// command that is incomplete, inline, malformed, has fewer than two or more
// than kMaxScanArgs arguments. The views point into `buf`.
size_t ScanPipelinedKeys(std::string_view buf, std::span<std::string_view> keys);

}  // namespace feedkv::protocol
