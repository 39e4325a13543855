#include "server/latency_histogram.h"

#include <cmath>
#include <cstdio>

namespace feedkv::server {

static_assert(LatencyHistogram::IndexOf(LatencyHistogram::kMaxNs) < 32 * 26);

uint64_t LatencyHistogram::LowestOf(size_t index) {
  if (index < 2 * kSubBuckets) return index;
  size_t shift = (index >> kSubBits) - 1;
  return static_cast<uint64_t>(index - (shift << kSubBits)) << shift;
}

uint64_t LatencyHistogram::HighestOf(size_t index) {
  if (index < 2 * kSubBuckets) return index;
  size_t shift = (index >> kSubBits) - 1;
  return LowestOf(index) + (uint64_t{1} << shift) - 1;
}

uint64_t LatencyHistogram::ValueAtPercentile(double percentile) const {
  if (total_ == 0) return 0;
  double p = percentile < 100.0 ? percentile : 100.0;
  auto target = static_cast<uint64_t>(p / 100.0 * static_cast<double>(total_) + 0.5);
  if (target < 1) target = 1;
  uint64_t seen = 0;
  for (size_t i = 0; i < counts_.size(); i++) {
    seen += counts_[i];
    if (seen >= target) return percentile == 0.0 ? LowestOf(i) : HighestOf(i);
  }
  return kMaxNs;
}

std::vector<LatencyHistogram::Row> LatencyHistogram::PowerOfTwoRows() const {
  std::vector<Row> rows;
  uint64_t cumulative = 0, reported = 0;
  size_t i = 0;
  for (int k = 0; reported < total_; k++) {
    uint64_t bound = uint64_t{1024} << k;
    size_t end = IndexOf(bound);  // buckets below end hold values below bound
    for (; i < end && i < counts_.size(); i++) cumulative += counts_[i];
    if (i >= counts_.size()) cumulative = total_;
    if (cumulative > reported) {
      // HdrHistogram (2 significant digits) reports the highest value
      // equivalent to the boundary: bound + bound/128 - 1.
      rows.push_back({static_cast<int64_t>((bound + bound / 128 - 1) / 1000), cumulative});
      reported = cumulative;
    }
  }
  return rows;
}

std::string FormatPercentile(double p) {
  char buf[128];
  int n = std::snprintf(buf, sizeof(buf), "%f", p);
  std::string s(buf, n > 0 ? static_cast<size_t>(n) : 0);
  // Redis's trimDoubleString: drop trailing zeros, then a trailing dot.
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  return s;
}

}  // namespace feedkv::server
