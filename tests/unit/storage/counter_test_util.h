// Helpers shared by the counter space tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string_view>

#include "storage/counter_space.h"

namespace feedkv::counter_test {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
inline constexpr int kScale = 8;  // sanitizers run ~10x slower; keep the suites quick
#else
inline constexpr int kScale = 1;
#endif

inline CounterSchema Schema(std::string_view text) {
  CounterSchema s;
  EXPECT_TRUE(CounterSchema::ParseString(text, &s).ok());
  return s;
}

// IncrBy that expects success; returns the new value.
inline uint64_t Incr(CounterSpace* s, int64_t id, size_t field, int64_t delta) {
  uint64_t v = 0;
  Status st = s->IncrBy(id, field, delta, &v);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return v;
}

}  // namespace feedkv::counter_test
