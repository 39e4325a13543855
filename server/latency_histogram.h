// LatencyHistogram: the latencies of one command, for LATENCY HISTOGRAM and
// INFO latencystats (Redis 7's per-command latency tracking).
//
// Values are nanoseconds, clamped to [1 ns, 1 s] as Redis does. Buckets are
// log-linear like HdrHistogram's: each power-of-two range is split into 32
// equal sub-buckets (values below 64 ns are exact), so a percentile is within
// ~3% of the true value, and every power of two is a bucket boundary, which
// is what LATENCY HISTOGRAM reports. Recording is a few instructions and
// never allocates. Not thread-safe: owned by the command thread.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace feedkv::server {

class LatencyHistogram {
 public:
  static constexpr uint64_t kMinNs = 1;
  static constexpr uint64_t kMaxNs = 1'000'000'000;

  void Record(uint64_t ns) {
    ns = ns < kMinNs ? kMinNs : (ns > kMaxNs ? kMaxNs : ns);
    counts_[IndexOf(ns)]++;
    total_++;
  }
  uint64_t count() const { return total_; }

  // The value at `percentile` (0..100) as HdrHistogram's
  // hdr_value_at_percentile: the highest value equivalent to the bucket that
  // holds the percentile's sample (the lowest for percentile 0). 0 when empty.
  uint64_t ValueAtPercentile(double percentile) const;

  // LATENCY HISTOGRAM's rows: for successive powers of two 1024·2^k ns, the
  // number of samples below it (cumulative), listed only where it grew, up to
  // the bucket holding the largest sample. `usec` is the boundary as Redis
  // prints it (HdrHistogram's highest equivalent value / 1000: 1, 2, 4, 8,
  // 16, 33, 66, ...).
  struct Row {
    int64_t usec;
    uint64_t cumulative;
  };
  std::vector<Row> PowerOfTwoRows() const;

  // The bucket layout, exposed for tests.
  static constexpr size_t IndexOf(uint64_t ns) {
    if (ns < kSubBuckets) return static_cast<size_t>(ns);
    int shift = 63 - __builtin_clzll(ns) - kSubBits;
    return (static_cast<size_t>(shift) << kSubBits) + static_cast<size_t>(ns >> shift);
  }
  static uint64_t LowestOf(size_t index);
  static uint64_t HighestOf(size_t index);

 private:
  static constexpr int kSubBits = 5;
  static constexpr uint64_t kSubBuckets = 1u << kSubBits;

  std::array<uint64_t, 32 * 26> counts_{};  // IndexOf(kMaxNs) < 32 * 26
  uint64_t total_ = 0;
};

// A percentile as Redis prints it in latency-tracking-info-percentiles and
// INFO latencystats ("%f" without trailing zeros): 50 -> "50", 99.9 -> "99.9".
std::string FormatPercentile(double p);

}  // namespace feedkv::server
