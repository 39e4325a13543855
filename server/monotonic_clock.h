// MonotonicClock: nanoseconds on a monotonic clock, for timing commands (INFO
// commandstats, SLOWLOG, LATENCY). Every command reads it twice, so it is cheap where
// the CPU allows: with an invariant TSC (/proc/cpuinfo flags constant_tsc and
// nonstop_tsc) it reads the TSC and scales by a rate calibrated against
// CLOCK_MONOTONIC at start-up, as Redis's processor clock does; elsewhere it calls
// clock_gettime(CLOCK_MONOTONIC). INFO server's monotonic_clock names the source.
// Thread-safe: Init() runs once (first use); reads are lock-free.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace feedkv::server {

class MonotonicClock {
 public:
  // Nanoseconds since an arbitrary origin; never decreases on one thread. Inline: the
  // command path reads it twice per call, and a call_once check per read showed up.
  static int64_t NowNs() {
#if defined(__x86_64__)
    if (use_tsc_.load(std::memory_order_acquire)) {
      return static_cast<int64_t>(static_cast<double>(__rdtsc() - tsc_origin_) * ns_per_tick_);
    }
#endif
    return SlowNowNs();
  }
  static int64_t NowUs() { return NowNs() / 1000; }
  // The source, worded as Redis's INFO field: "X86 TSC @ 2100 ticks/us" or
  // "POSIX clock_gettime".
  static const std::string& Description();
  // Calibrates (about 10 ms) unless done already. Call at start-up so the first
  // command does not pay for it.
  static void Init();

 private:
  static int64_t SlowNowNs();  // initialises on first use, then POSIX or TSC
  static void DoInit();

  // Written once by Init(); the rate and origin before use_tsc_ is released.
  static inline std::atomic<bool> use_tsc_{false};
  static inline double ns_per_tick_ = 0;
  static inline uint64_t tsc_origin_ = 0;
};

}  // namespace feedkv::server
