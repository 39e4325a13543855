// Unit tests for AccessClock (Redis's LRU clock and LFU counter arithmetic)
// and for how Database stamps, touches and peeks at keys with it.
#include "storage/access_clock.h"

#include <gtest/gtest.h>

#include "storage/database.h"

namespace feedkv {
namespace {

constexpr int64_t kMinute = 60 * 1000;
constexpr int64_t kT0 = 1'700'000'000'000;  // a wall-clock time in ms

TEST(AccessClockTest, LruIdleTimeInSecondsAndAcrossTheWrap) {
  AccessClock clock;
  clock.Tick(kT0);
  uint32_t stamp = clock.Fresh();
  clock.Tick(kT0 + 7'500);
  EXPECT_EQ(clock.IdleMs(stamp), 7'000u);  // second resolution
  EXPECT_EQ(clock.IdleMs(clock.Touch(stamp)), 0u);
  // The 24-bit clock wraps (about every 194 days); idle time stays right.
  clock.Tick(int64_t{AccessClock::kLruMax} * 1000);
  stamp = clock.Fresh();
  clock.Tick((int64_t{AccessClock::kLruMax} + 10) * 1000);
  EXPECT_EQ(clock.IdleMs(stamp), 9'000u);  // Redis's estimate: LRU_CLOCK_MAX - stamp + now
}

TEST(AccessClockTest, LfuCounterStartsAtFiveGrowsAndDecays) {
  AccessClock clock;
  clock.set_lfu(true);
  clock.set_lfu_log_factor(0);  // every access counts
  clock.Tick(kT0);
  uint32_t stamp = clock.Fresh();
  EXPECT_EQ(clock.Frequency(stamp), AccessClock::kLfuInitVal);
  for (int i = 0; i < 300; i++) stamp = clock.Touch(stamp);
  EXPECT_EQ(clock.Frequency(stamp), 255u);  // saturates
  clock.Tick(kT0 + 10 * kMinute);
  EXPECT_EQ(clock.Frequency(stamp), 245u);  // one per lfu-decay-time minute
  clock.set_lfu_decay_time(0);
  EXPECT_EQ(clock.Frequency(stamp), 255u);  // 0: never decays
  clock.set_lfu_decay_time(1);
  clock.Tick(kT0 + 1000 * kMinute);
  EXPECT_EQ(clock.Frequency(stamp), 0u);
}

TEST(AccessClockTest, LfuLogFactorMakesHighCountersRare) {
  AccessClock clock;
  clock.set_lfu(true);  // default factor 10
  clock.Tick(kT0);
  uint32_t stamp = clock.Fresh();
  for (int i = 0; i < 1000; i++) stamp = clock.Touch(stamp);
  // Redis's table for factor 10: 1K hits give about 18; never near 1000.
  EXPECT_GT(clock.Frequency(stamp), 10u);
  EXPECT_LT(clock.Frequency(stamp), 40u);
}

TEST(AccessClockTest, FrozenLeavesStampsAlone) {
  AccessClock clock;
  clock.Tick(kT0);
  const uint32_t stamp = clock.Fresh();
  clock.Tick(kT0 + 5'000);
  clock.set_frozen(true);
  EXPECT_EQ(clock.Touch(stamp), stamp);
  clock.set_frozen(false);
  EXPECT_NE(clock.Touch(stamp), stamp);
}

TEST(AccessClockTest, DatabaseTouchesOnLookupNotOnPeek) {
  AccessClock clock;
  clock.Tick(kT0);
  Database db(0);
  db.set_access_clock(&clock);
  db.SetString("k", "v", kNoExpire, false);
  clock.Tick(kT0 + 3'000);
  EXPECT_EQ(db.IdleMs(db.Peek("k", 0)), 3'000u);
  EXPECT_EQ(db.IdleMs(db.Find("k")), 3'000u);
  EXPECT_EQ(db.IdleMs(db.Lookup("k", 0)), 0u);
  // A rename keeps the value's stamp; a copy is a new value.
  clock.Tick(kT0 + 6'000);
  db.MoveKey("k", &db, "renamed");
  EXPECT_EQ(db.IdleMs(db.Find("renamed")), 3'000u);
  db.CopyKey(db.Find("renamed"), &db, "copy");
  EXPECT_EQ(db.IdleMs(db.Find("copy")), 0u);
  // Adding an expire rebuilds the block, not the stamp.
  db.SetExpire("renamed", kT0 + 1'000'000);
  EXPECT_EQ(db.IdleMs(db.Find("renamed")), 3'000u);
}

TEST(AccessClockTest, LfuOverwriteKeepsTheCounter) {
  AccessClock clock;
  clock.set_lfu(true);
  clock.set_lfu_log_factor(0);
  clock.Tick(kT0);
  Database db(0);
  db.set_access_clock(&clock);
  db.SetString("k", "v", kNoExpire, false);
  for (int i = 0; i < 10; i++) db.Lookup("k", 0);
  EXPECT_EQ(db.Frequency(db.Find("k")), 15u);
  db.SetString("k", "w", kNoExpire, false);  // as Redis's dbOverwrite under LFU
  EXPECT_EQ(db.Frequency(db.Find("k")), 15u);
}

}  // namespace
}  // namespace feedkv
