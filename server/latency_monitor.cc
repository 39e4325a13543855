// LatencyMonitor. See latency_monitor.h.
#include "server/latency_monitor.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

namespace feedkv::server {

void LatencyMonitor::Sample(std::string_view event, int64_t latency_ms, int64_t threshold_ms, int64_t now_s) {
  if (threshold_ms <= 0 || latency_ms < threshold_ms) return;
  auto it = events_.find(event);
  if (it == events_.end()) it = events_.emplace(std::string(event), Series{}).first;
  Series& s = it->second;
  s.max = std::max(s.max, latency_ms);
  // One sample per second: a second's later sample only raises it.
  Point& prev = s.samples[(s.next + kHistoryLen - 1) % kHistoryLen];
  if (prev.time == now_s) {
    prev.latency = std::max(prev.latency, latency_ms);
    return;
  }
  s.samples[s.next] = Point{now_s, latency_ms};
  s.next = (s.next + 1) % kHistoryLen;
}

size_t LatencyMonitor::Reset(const std::vector<std::string>& events) {
  if (events.empty()) {
    const size_t n = events_.size();
    events_.clear();
    return n;
  }
  size_t n = 0;
  for (const std::string& e : events) n += events_.erase(e);
  return n;
}

std::vector<LatencyMonitor::Point> LatencyMonitor::History(std::string_view event) const {
  std::vector<Point> out;
  auto it = events_.find(event);
  if (it == events_.end()) return out;
  for (size_t j = 0; j < kHistoryLen; j++) {
    const Point& p = it->second.samples[(it->second.next + j) % kHistoryLen];
    if (p.time != 0) out.push_back(p);
  }
  return out;
}

std::string LatencyMonitor::Doctor() const {
  if (events_.empty()) {
    return "Dave, no latency spike was observed during the lifetime of this feedkv instance, not in "
           "the slightest bit. I honestly think you ought to sleep tonight.\n";
  }
  std::string report =
      "Dave, I have observed latency spikes in this feedkv instance. You don't mind talking about it, "
      "do you Dave?\n\n";
  int n = 0;
  for (const auto& [name, series] : events_) {
    const std::vector<Point> points = History(name);
    int64_t sum = 0, first = points.front().time, last = points.front().time;
    for (const Point& p : points) {
      sum += p.latency;
      first = std::min(first, p.time);
      last = std::max(last, p.time);
    }
    const int64_t avg = sum / static_cast<int64_t>(points.size());
    int64_t deviation = 0;
    for (const Point& p : points) deviation += std::llabs(p.latency - avg);
    deviation /= static_cast<int64_t>(points.size());
    const double period = static_cast<double>(last - first) / static_cast<double>(points.size());
    report += fmt::format(
        "{}. {}: {} latency spikes (average {}ms, mean deviation {}ms, period {:.2f} sec). Worst all time "
        "event {}ms.\n",
        ++n, name, points.size(), avg, deviation, period, series.max);
  }
  report +=
      "\nI have a few advices for you:\n\n- Check your system for other processes competing for the CPU, "
      "and for swapping.\n- Look at the slow log (SLOWLOG GET) for the commands that took long, and at "
      "the sizes of the keys they touched.\n";
  return report;
}

}  // namespace feedkv::server
