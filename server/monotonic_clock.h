// MonotonicClock: nanoseconds on a monotonic clock, for timing commands (INFO
// commandstats, SLOWLOG, LATENCY). Every command reads it twice, so it is cheap where
// the CPU allows: with an invariant TSC (/proc/cpuinfo flags constant_tsc and
// nonstop_tsc) it reads the TSC and scales by a rate calibrated against
// CLOCK_MONOTONIC at start-up, as Redis's processor clock does; elsewhere it calls
// clock_gettime(CLOCK_MONOTONIC). INFO server's monotonic_clock names the source.
// Thread-safe: Init() runs once (first use); reads are lock-free.
#pragma once

#include <cstdint>
#include <string>

namespace feedkv::server {

class MonotonicClock {
 public:
  // Nanoseconds since an arbitrary origin; never decreases on one thread.
  static int64_t NowNs();
  static int64_t NowUs() { return NowNs() / 1000; }
  // The source, worded as Redis's INFO field: "X86 TSC @ 2100 ticks/us" or
  // "POSIX clock_gettime".
  static const std::string& Description();
  // Calibrates (about 10 ms) unless done already. Call at start-up so the first
  // command does not pay for it.
  static void Init();
};

}  // namespace feedkv::server
