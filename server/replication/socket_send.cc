#include "server/replication/socket_send.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

namespace feedkv::server {

bool SendAll(int fd, std::string_view data, const std::atomic<bool>& stop, int64_t timeout_ms,
             std::string* why) {
  auto now_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  int64_t last_progress = now_ms();
  while (!data.empty()) {
    if (stop) {
      *why = "stopped";
      return false;
    }
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      last_progress = now_ms();
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      *why = fmt::format("write error: {}", strerror(errno));
      return false;
    }
    if (now_ms() - last_progress > timeout_ms) {
      *why = fmt::format("timeout: the peer accepted no data for {} ms", timeout_ms);
      return false;
    }
    pollfd p{fd, POLLOUT, 0};
    ::poll(&p, 1, 100);
  }
  return true;
}

}  // namespace feedkv::server
