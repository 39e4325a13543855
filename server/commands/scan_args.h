// The argument rules of the SCAN family's per-key commands (SSCAN, LSSCAN, ZSCAN),
// as Redis's scanGenericCommand reads them. Defined in cmd_sets.cc.
#pragma once

#include <cstdint>
#include <string_view>

#include "server/command_context.h"

namespace feedkv::server {

// A SCAN/SSCAN/LSSCAN/ZSCAN cursor at argument i; false after replying "invalid cursor".
bool ParseScanCursor(CommandContext& ctx, size_t i, uint64_t* cursor);
// The reply to a scan of a missing key: cursor 0, no members.
void ReplyEmptyScan(CommandContext& ctx);

struct ScanOptions {
  std::string_view pattern;  // empty with has_pattern false: everything
  bool has_pattern = false;
  int64_t count = 10;
};
// [MATCH pattern] [COUNT n] from argument `first` on; false after replying an error.
// Without `allow_match` (LSSCAN) MATCH is a syntax error.
bool ParseScanOptions(CommandContext& ctx, size_t first, ScanOptions* out, bool allow_match = true);

}  // namespace feedkv::server
