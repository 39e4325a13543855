// Unit tests for the canonical int64 text (storage/int_text.h): what is
// canonical, every length of the word-at-a-time path against std::from_chars,
// and the formatter's round trip.
#include "storage/int_text.h"

#include <gtest/gtest.h>

#include <charconv>
#include <limits>
#include <random>
#include <string>

namespace feedkv {
namespace {

TEST(ParseCanonicalInt64, AcceptsOnlyCanonicalDecimal) {
  int64_t v;
  EXPECT_TRUE(ParseCanonicalInt64("0", &v));
  EXPECT_EQ(v, 0);
  EXPECT_TRUE(ParseCanonicalInt64("-17", &v));
  EXPECT_EQ(v, -17);
  EXPECT_TRUE(ParseCanonicalInt64("9223372036854775807", &v));
  EXPECT_TRUE(ParseCanonicalInt64("-9223372036854775808", &v));
  EXPECT_EQ(v, std::numeric_limits<int64_t>::min());
  EXPECT_TRUE(ParseCanonicalInt64("-999999999999999999", &v));  // 18 digits: fast path
  EXPECT_EQ(v, -999999999999999999);
  EXPECT_TRUE(ParseCanonicalInt64("1000000000000000000", &v));   // 19 digits
  EXPECT_EQ(v, 1000000000000000000);
  for (const char* bad : {"", "-", "007", "-0", "+5", " 5", "5 ", "1.5", "abc", "0x10",
                          "9223372036854775808", "-9223372036854775809", "123456789012345678901",
                          "-00", "1-2", "--5", "-a", "12345678901234567890"}) {
    EXPECT_FALSE(ParseCanonicalInt64(bad, &v)) << bad;
  }
}

// The 8-16 digit path reads two overlapping words: check every length, and a non-digit
// byte at every position, against std::from_chars.
TEST(ParseCanonicalInt64, EveryLengthAndEveryBadBytePositionMatchFromChars) {
  std::mt19937_64 rng(11);
  for (size_t len = 1; len <= 19; ++len) {
    for (int trial = 0; trial < 200; ++trial) {
      std::string digits;
      digits.push_back(static_cast<char>('1' + rng() % 9));
      while (digits.size() < len) digits.push_back(static_cast<char>('0' + rng() % 10));
      for (const std::string& s : {digits, "-" + digits}) {
        int64_t want = 0, got = 0;
        auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), want);
        const bool ok = ec == std::errc() && ptr == s.data() + s.size();
        ASSERT_EQ(ParseCanonicalInt64(s, &got), ok) << s;
        if (ok) {
          ASSERT_EQ(got, want) << s;
        }
        for (size_t pos = s[0] == '-' ? 1 : 0; pos < s.size(); ++pos) {
          for (char bad : {'/', ':', 'a', ' ', '\0', '\xb0'}) {
            std::string t = s;
            t[pos] = bad;
            ASSERT_FALSE(ParseCanonicalInt64(t, &got)) << t;
          }
        }
      }
    }
  }
}

TEST(FormatInt64, RoundTripsThroughTheParser) {
  char buf[20];
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{42}, std::numeric_limits<int64_t>::min(),
                    std::numeric_limits<int64_t>::max()}) {
    int64_t back = 0;
    ASSERT_TRUE(ParseCanonicalInt64(FormatInt64(v, buf), &back));
    EXPECT_EQ(back, v);
  }
}

}  // namespace
}  // namespace feedkv
