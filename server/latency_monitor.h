// LatencyMonitor: Redis's latency monitor (LATENCY LATEST / HISTORY / RESET /
// DOCTOR). Named events ("command", "fast-command", "expire-cycle", ...) keep
// their last 160 samples of at least `latency-monitor-threshold` milliseconds,
// one per second (a second's worst), and their all-time maximum. The server
// calls Sample for every occurrence; with the threshold at 0 (the default)
// nothing is recorded, as in Redis.
// Not thread-safe: owned by the command thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace feedkv::server {

class LatencyMonitor {
 public:
  static constexpr size_t kHistoryLen = 160;  // Redis's LATENCY_TS_LEN

  struct Point {
    int64_t time = 0;     // unix seconds; 0: an unused slot
    int64_t latency = 0;  // milliseconds
  };
  struct Series {
    Point samples[kHistoryLen];
    size_t next = 0;  // the slot the next second's sample goes to
    int64_t max = 0;
    const Point& latest() const { return samples[(next + kHistoryLen - 1) % kHistoryLen]; }
  };

  // Records `latency_ms` for `event` at `now_s` if `threshold_ms` > 0 and the
  // latency reaches it (Redis's latencyAddSampleIfNeeded).
  void Sample(std::string_view event, int64_t latency_ms, int64_t threshold_ms, int64_t now_s);
  // Forgets `events` (all when empty); returns how many existed.
  size_t Reset(const std::vector<std::string>& events);
  // A series' samples, oldest first.
  std::vector<Point> History(std::string_view event) const;
  const std::map<std::string, Series, std::less<>>& events() const { return events_; }
  // LATENCY DOCTOR's report.
  std::string Doctor() const;

 private:
  std::map<std::string, Series, std::less<>> events_;
};

}  // namespace feedkv::server
