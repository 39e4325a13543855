// MonotonicClock: never goes backwards, and keeps pace with CLOCK_MONOTONIC whichever
// source it uses.
#include "server/monotonic_clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace feedkv::server {
namespace {

TEST(MonotonicClock, NeverDecreases) {
  int64_t last = MonotonicClock::NowUs();
  for (int i = 0; i < 1000000; ++i) {
    const int64_t now = MonotonicClock::NowUs();
    ASSERT_GE(now, last);
    last = now;
  }
}

TEST(MonotonicClock, KeepsPaceWithSteadyClock) {
  using namespace std::chrono;
  const int64_t c0 = MonotonicClock::NowUs();
  const auto s0 = steady_clock::now();
  std::this_thread::sleep_for(milliseconds(200));
  const int64_t c1 = MonotonicClock::NowUs();
  const auto s1 = steady_clock::now();
  const double steady_us = static_cast<double>(duration_cast<microseconds>(s1 - s0).count());
  // The calibration is good to ~0.1%; 2% leaves room for a preempted read on a busy host.
  EXPECT_NEAR(static_cast<double>(c1 - c0), steady_us, steady_us * 0.02 + 200)
      << MonotonicClock::Description();
}

TEST(MonotonicClock, NamesItsSourceAsRedisDoes) {
  const std::string& d = MonotonicClock::Description();
  EXPECT_TRUE(d == "POSIX clock_gettime" || (d.rfind("X86 TSC @ ", 0) == 0 &&
                                             d.find(" ticks/us") != std::string::npos))
      << d;
}

}  // namespace
}  // namespace feedkv::server
