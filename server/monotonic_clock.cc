// MonotonicClock: TSC with a calibrated rate where the TSC is invariant, else POSIX.
#include "server/monotonic_clock.h"

#include <fmt/format.h>
#include <time.h>

#include <fstream>
#include <mutex>
#include <sstream>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace feedkv::server {

namespace {

std::string g_description = "POSIX clock_gettime";
std::once_flag g_init;

int64_t PosixNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

#if defined(__x86_64__)
// An invariant TSC ticks at one rate on every core and through power states; without
// both flags the TSC can drift between cores or stop, and POSIX is the safe choice.
bool InvariantTsc() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line);
    bool constant = false, nonstop = false;
    for (std::string w; words >> w;) {
      constant |= w == "constant_tsc";
      nonstop |= w == "nonstop_tsc";
    }
    return constant && nonstop;
  }
  return false;
}

// Ticks per microsecond over a ~10 ms busy window (TSC and CLOCK_MONOTONIC read
// together at both ends), so the rate is good to about 0.1%.
double CalibrateTicksPerUs() {
  const int64_t t0 = PosixNs();
  const uint64_t c0 = __rdtsc();
  int64_t t1 = t0;
  while (t1 - t0 < 10000000) t1 = PosixNs();
  const uint64_t c1 = __rdtsc();
  return static_cast<double>(c1 - c0) / static_cast<double>(t1 - t0) * 1000;
}
#endif

}  // namespace

void MonotonicClock::DoInit() {
#if defined(__x86_64__)
  if (!InvariantTsc()) return;
  const double ticks_per_us = CalibrateTicksPerUs();
  if (!(ticks_per_us > 1)) return;  // a TSC slower than 1 MHz is not a real one
  ns_per_tick_ = 1000 / ticks_per_us;
  tsc_origin_ = __rdtsc();
  g_description = fmt::format("X86 TSC @ {:.0f} ticks/us", ticks_per_us);
  use_tsc_.store(true, std::memory_order_release);
#endif
}

void MonotonicClock::Init() { std::call_once(g_init, DoInit); }

int64_t MonotonicClock::SlowNowNs() {
  Init();
  return use_tsc_.load(std::memory_order_acquire) ? NowNs() : PosixNs();
}

const std::string& MonotonicClock::Description() {
  Init();
  return g_description;
}

}  // namespace feedkv::server
