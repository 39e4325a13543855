#include "storage/access_clock.h"

#include <chrono>

namespace feedkv {

AccessClock::AccessClock() {
  using namespace std::chrono;
  Tick(duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count());
}

void AccessClock::Tick(int64_t now_ms) {
  lru_clock_ = static_cast<uint32_t>(now_ms / 1000) & kLruMax;
  lfu_minutes_ = static_cast<uint32_t>(now_ms / 60000) & 0xFFFF;
}

uint32_t AccessClock::Fresh() const {
  return lfu_ ? (lfu_minutes_ << 8) | kLfuInitVal : lru_clock_;
}

uint32_t AccessClock::LfuMinutesSince(uint32_t minutes) const {
  // Redis's LFUTimeElapsed: the 16-bit clock wraps about every 45 days.
  return lfu_minutes_ >= minutes ? lfu_minutes_ - minutes : 65535 - minutes + lfu_minutes_;
}

uint32_t AccessClock::Frequency(uint32_t stamp) const {
  const uint32_t counter = stamp & 255;
  const uint32_t periods =
      lfu_decay_time_ > 0 ? LfuMinutesSince(stamp >> 8) / static_cast<uint32_t>(lfu_decay_time_) : 0;
  return periods > counter ? 0 : counter - periods;
}

double AccessClock::Random() {
  // xorshift64*: cheap, and the counter only needs a fair coin.
  rng_ ^= rng_ >> 12;
  rng_ ^= rng_ << 25;
  rng_ ^= rng_ >> 27;
  return static_cast<double>((rng_ * 0x2545F4914F6CDD1Dull) >> 11) * 0x1.0p-53;
}

uint32_t AccessClock::Touch(uint32_t stamp) {
  if (frozen_) return stamp;
  if (!lfu_) return lru_clock_;
  // Redis's updateLFU: decay, then a logarithmic increment (LFULogIncr).
  uint32_t counter = Frequency(stamp);
  if (counter < 255) {
    const double base = counter > kLfuInitVal ? counter - kLfuInitVal : 0;
    if (Random() < 1.0 / (base * static_cast<double>(lfu_log_factor_) + 1)) counter++;
  }
  return (lfu_minutes_ << 8) | counter;
}

uint32_t AccessClock::StampIdle(uint64_t idle_s) const {
  // The 24-bit clock wraps: an access further back than the clock lands before zero.
  const uint64_t idle = idle_s % (uint64_t{kLruMax} + 1);
  return lru_clock_ >= idle ? static_cast<uint32_t>(lru_clock_ - idle)
                            : static_cast<uint32_t>(lru_clock_ + kLruMax - idle);
}

uint64_t AccessClock::IdleMs(uint32_t stamp) const {
  // Redis's estimateObjectIdleTime: the 24-bit clock wraps about every 194 days.
  const uint64_t ticks = lru_clock_ >= stamp ? lru_clock_ - stamp : lru_clock_ + (kLruMax - stamp);
  return ticks * 1000;
}

}  // namespace feedkv
