// SendAll: writes a whole buffer to a non-blocking socket from a thread that
// may wait (a replica sender, a master link), never from the command thread.
// Thread-safety: stateless.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace feedkv::server {

// Sends all of `data` on `fd`, waiting (poll, 100 ms steps) while the socket is
// full. False with *why on an error, when `stop` is set, or when no byte was
// accepted for `timeout_ms`.
bool SendAll(int fd, std::string_view data, const std::atomic<bool>& stop, int64_t timeout_ms,
             std::string* why);

}  // namespace feedkv::server
