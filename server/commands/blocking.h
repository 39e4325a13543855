// What every blocking command (BZPOPMIN..., BLPOP, BLMOVE, BLMPOP...) shares: its
// timeout argument and parking its client on keys. A parked command runs again
// when one of its keys changes (WaitingClients kKeyReady), keeping its first
// deadline (Client::retry_deadline_ms), so it either serves from the key that is
// now ready or parks again; at the deadline it answers the timeout reply.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "server/command_context.h"

namespace feedkv::server {

// A blocking command's timeout in seconds (a float), as Redis's
// getTimeoutFromObjectOrReply: *deadline_ms is unix ms, 0 for none. False after
// an error reply.
bool BlockTimeoutArg(CommandContext& ctx, size_t i, int64_t* deadline_ms);

// What a blocking command answers when it times out.
enum class TimeoutReply { kNullArray, kNullBulk };

// True when this run is a parked command running again after a wake-up.
inline bool IsRetry(const CommandContext& ctx) { return ctx.client.retry_deadline_ms >= 0; }

// Parks the client on `keys` until one changes or `deadline_ms` (the first
// run's deadline on a retry), then runs the command again; answers the timeout
// reply at once when the deadline has passed or the client may not block
// (MULTI, a script, the log). `argv`, when not empty, is what runs again
// instead of the command's own arguments (XREAD's "$" resolved to an ID).
void ParkOnKeys(CommandContext& ctx, std::vector<std::string> keys, int64_t deadline_ms, TimeoutReply how,
                std::vector<std::string> argv = {});

// The arguments of [B]ZMPOP and [B]LMPOP after the timeout:
//   numkeys key [key ...] <end_a>|<end_b> [COUNT count]
// checked in Redis's order (numkeys, the end word, COUNT). False after an error reply.
struct MPopArgs {
  size_t first = 0;   // index of the first key
  size_t nkeys = 0;
  bool end_a = false;  // the end word was end_a (MIN, LEFT)
  int64_t count = 1;
};
bool ParseMPopArgs(CommandContext& ctx, size_t numkeys_idx, const char* end_a, const char* end_b, MPopArgs* out);

}  // namespace feedkv::server
