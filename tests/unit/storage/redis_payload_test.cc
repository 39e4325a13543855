// Unit tests for the pieces of Redis's DUMP payload format: Redis's CRC-64 check
// value, the footer, length and string encodings (integer and LZF forms included),
// and the listpack and intset readers on hand-built blobs and corrupt ones.
#include "storage/redis_payload.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace feedkv::redis_payload {
namespace {

TEST(RedisPayloadTest, Crc64IsRedisCrc64) {
  // crc64.c's own test vector.
  EXPECT_EQ(Crc64(0, "123456789"), 0xe9c6d914c4b8d9caULL);
}

TEST(RedisPayloadTest, FooterChecksVersionAndChecksum) {
  Writer w;
  w.Type(kString);
  w.String("hello");
  const std::string payload = w.Finish();
  std::string_view body;
  ASSERT_TRUE(CheckFooter(payload, &body));
  EXPECT_EQ(body, std::string("\x00\x05hello", 7));
  std::string flipped = payload;
  flipped[3] ^= 1;
  EXPECT_FALSE(CheckFooter(flipped, &body));
  // A valid CRC over version 11, which Redis 7.0 would not read either.
  std::string newer = payload.substr(0, payload.size() - 10) + std::string("\x0b\x00", 2);
  const uint64_t crc = Crc64(0, newer);
  for (int i = 0; i < 8; ++i) newer.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  EXPECT_FALSE(CheckFooter(newer, &body));
  EXPECT_FALSE(CheckFooter("short", &body));
}

TEST(RedisPayloadTest, LengthsAndStringsRoundTrip) {
  Writer w;
  const std::vector<uint64_t> lengths = {0, 63, 64, 16383, 16384, UINT32_MAX, uint64_t{UINT32_MAX} + 1};
  for (uint64_t n : lengths) w.Length(n);
  w.String(std::string(70000, 'x'));
  w.BinaryDouble(-2.5);
  std::string body = w.Finish();
  body.resize(body.size() - 10);
  Reader r(body);
  for (uint64_t n : lengths) {
    uint64_t got;
    ASSERT_TRUE(r.Length(&got));
    EXPECT_EQ(got, n);
  }
  std::string s;
  ASSERT_TRUE(r.String(&s));
  EXPECT_EQ(s, std::string(70000, 'x'));
  double d;
  ASSERT_TRUE(r.BinaryDouble(&d));
  EXPECT_EQ(d, -2.5);
  EXPECT_TRUE(r.done());
}

TEST(RedisPayloadTest, ReadsRedisIntegerAndLzfStrings) {
  // int8 -3, int16 1000, int32 -100000, then LZF: literal "abc" + back reference of 6.
  const std::string in("\xc0\xfd" "\xc1\xe8\x03" "\xc2\x60\x79\xfe\xff" "\xc3\x06\x09\x02" "abc\x80\x02", 19);
  Reader r(in);
  std::string s;
  ASSERT_TRUE(r.String(&s));
  EXPECT_EQ(s, "-3");
  ASSERT_TRUE(r.String(&s));
  EXPECT_EQ(s, "1000");
  ASSERT_TRUE(r.String(&s));
  EXPECT_EQ(s, "-100000");
  ASSERT_TRUE(r.String(&s));
  EXPECT_EQ(s, "abcabcabc");
  EXPECT_TRUE(r.done());
  std::string out;
  EXPECT_FALSE(LzfDecompress(std::string("\x80\x05", 2), 7, &out));  // reference before the start
  EXPECT_FALSE(LzfDecompress(std::string("\x05" "ab", 3), 6, &out));  // literal past the input
  EXPECT_FALSE(LzfDecompress(std::string("\x00" "a", 2), size_t{1} << 32, &out));  // a bomb claim
  EXPECT_LT(out.capacity(), size_t{1} << 20);
}

TEST(RedisPayloadTest, ListpackAndIntsetReaders) {
  // [5][ "hi" ][ -1 (13-bit) ][ 1000 (int16) ], each with its back-length.
  const std::string lp("\x14\x00\x00\x00\x04\x00" "\x05\x01" "\x82hi\x03" "\xdf\xff\x02" "\xf1\xe8\x03\x03" "\xff", 20);
  std::vector<std::string> got;
  ASSERT_TRUE(ForEachListpackEntry(lp, [&](std::string_view e) { got.emplace_back(e); }));
  EXPECT_EQ(got, (std::vector<std::string>{"5", "hi", "-1", "1000"}));
  std::string bad = lp;
  bad[6] = '\xf7';  // not an encoding
  EXPECT_FALSE(ForEachListpackEntry(bad, [](std::string_view) {}));
  EXPECT_FALSE(ForEachListpackEntry(lp.substr(0, 19), [](std::string_view) {}));
  const std::string is("\x02\x00\x00\x00\x02\x00\x00\x00\xff\xff\x2c\x01", 12);
  std::vector<int64_t> members;
  ASSERT_TRUE(ForEachIntsetMember(is, [&](int64_t v) { members.push_back(v); }));
  EXPECT_EQ(members, (std::vector<int64_t>{-1, 300}));
  EXPECT_FALSE(ForEachIntsetMember(is.substr(0, 11), [](int64_t) {}));
}

}  // namespace
}  // namespace feedkv::redis_payload
