// AccessClock: the per-key access stamp Redis keeps in 24 bits of its object
// header, here in Entry::access (storage/database.h), which costs no memory:
// the bits were padding. Under an LFU maxmemory-policy a stamp is a 16-bit
// minute clock of the last decay and an 8-bit logarithmic access counter
// (OBJECT FREQ); otherwise it is the 24-bit LRU clock in seconds (OBJECT
// IDLETIME). The arithmetic is Redis's (evict.c), wrap-around included.
//
// The server owns one clock, sets the policy on CONFIG SET, advances it from
// its cron (Tick) and freezes it while a fork child runs (touching keys then
// would copy pages on write); every Database stamps and touches its entries
// through it. Not thread-safe: the command thread only.
#pragma once

#include <cstdint>

namespace feedkv {

class AccessClock {
 public:
  static constexpr uint32_t kLruMax = (1u << 24) - 1;
  static constexpr uint32_t kLfuInitVal = 5;  // a new key's counter (LFU_INIT_VAL)

  AccessClock();

  // An LFU policy is selected: stamps hold frequencies, not idle times.
  void set_lfu(bool lfu) { lfu_ = lfu; }
  bool lfu() const { return lfu_; }
  // lfu-log-factor and lfu-decay-time (minutes per counter decrement; 0: never).
  void set_lfu_log_factor(int64_t f) { lfu_log_factor_ = f; }
  void set_lfu_decay_time(int64_t minutes) { lfu_decay_time_ = minutes; }
  // While frozen, Touch leaves stamps alone.
  void set_frozen(bool frozen) { frozen_ = frozen; }

  // Advances the clocks to wall-clock time `now_ms`.
  void Tick(int64_t now_ms);

  // The stamp of a key created now.
  uint32_t Fresh() const;
  // The stamp after an access to a key stamped `stamp`.
  uint32_t Touch(uint32_t stamp);
  // LRU: milliseconds since the access that left `stamp` (second resolution).
  uint64_t IdleMs(uint32_t stamp) const;
  // LFU: the counter of `stamp` after the decay due now (LFUDecrAndReturn).
  uint32_t Frequency(uint32_t stamp) const;
  // RESTORE ... IDLETIME / FREQ (Redis's objectSetLRUOrLFU): the stamp of a key
  // last used `idle_s` seconds ago (LRU), or with counter `freq` now (LFU).
  uint32_t StampIdle(uint64_t idle_s) const;
  uint32_t StampFrequency(uint8_t freq) const { return (lfu_minutes_ << 8) | freq; }

 private:
  uint32_t LfuMinutesSince(uint32_t minutes) const;
  double Random();

  bool lfu_ = false;
  bool frozen_ = false;
  int64_t lfu_log_factor_ = 10;
  int64_t lfu_decay_time_ = 1;
  uint32_t lru_clock_ = 0;    // seconds, 24 bits
  uint32_t lfu_minutes_ = 0;  // minutes, 16 bits
  uint64_t rng_ = 0x9E3779B97F4A7C15ull;
};

}  // namespace feedkv
