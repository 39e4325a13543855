// Tests for ReplyWriter, FormatDouble and AppendCommand. The RESP2 mappings
// of RESP3 types were checked against redis-server 7.0's DEBUG PROTOCOL.
#include "protocol/reply_writer.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/resp_parser.h"

namespace feedkv::protocol {
namespace {

// Runs `fn` against a writer for protocol `resp` and returns the bytes.
template <typename Fn>
std::string Encode(int resp, Fn fn) {
  std::string out;
  ReplyWriter w(&out, resp);
  fn(w);
  return out;
}

template <typename Fn>
std::string R2(Fn fn) {
  return Encode(2, fn);
}

template <typename Fn>
std::string R3(Fn fn) {
  return Encode(3, fn);
}

TEST(ReplyWriter, ReportsProtocolAndBuffer) {
  std::string out;
  ReplyWriter w(&out, 3);
  EXPECT_EQ(w.resp(), 3);
  EXPECT_EQ(w.buffer(), &out);
}

TEST(ReplyWriter, AppendsToExistingBytes) {
  std::string out = "+PONG\r\n";
  ReplyWriter w(&out, 2);
  w.Integer(1);
  EXPECT_EQ(out, "+PONG\r\n:1\r\n");
}

TEST(ReplyWriter, SimpleAndOk) {
  for (int resp : {2, 3}) {
    EXPECT_EQ(Encode(resp, [](ReplyWriter& w) { w.Simple("PONG"); }), "+PONG\r\n");
    EXPECT_EQ(Encode(resp, [](ReplyWriter& w) { w.Ok(); }), "+OK\r\n");
  }
}

TEST(ReplyWriter, Integer) {
  for (int resp : {2, 3}) {
    EXPECT_EQ(Encode(resp, [](ReplyWriter& w) { w.Integer(0); }), ":0\r\n");
    EXPECT_EQ(Encode(resp, [](ReplyWriter& w) { w.Integer(-42); }), ":-42\r\n");
    EXPECT_EQ(Encode(resp, [](ReplyWriter& w) { w.Integer(INT64_MAX); }), ":9223372036854775807\r\n");
    EXPECT_EQ(Encode(resp, [](ReplyWriter& w) { w.Integer(INT64_MIN); }), ":-9223372036854775808\r\n");
  }
}

TEST(ReplyWriter, Bulk) {
  for (int resp : {2, 3}) {
    EXPECT_EQ(Encode(resp, [](ReplyWriter& w) { w.Bulk("hello"); }), "$5\r\nhello\r\n");
    EXPECT_EQ(Encode(resp, [](ReplyWriter& w) { w.Bulk(""); }), "$0\r\n\r\n");
    EXPECT_EQ(Encode(resp, [](ReplyWriter& w) { w.Bulk(std::string_view("a\0\r\n", 4)); }),
              std::string("$4\r\na\0\r\n\r\n", 10));
  }
}

TEST(ReplyWriter, NullVersusNullArray) {
  EXPECT_EQ(R2([](ReplyWriter& w) { w.Null(); }), "$-1\r\n");
  EXPECT_EQ(R2([](ReplyWriter& w) { w.NullArray(); }), "*-1\r\n");
  EXPECT_EQ(R3([](ReplyWriter& w) { w.Null(); }), "_\r\n");
  EXPECT_EQ(R3([](ReplyWriter& w) { w.NullArray(); }), "_\r\n");
}

TEST(ReplyWriter, ArrayHeader) {
  for (int resp : {2, 3}) {
    EXPECT_EQ(Encode(resp, [](ReplyWriter& w) { w.ArrayHeader(0); }), "*0\r\n");
    EXPECT_EQ(Encode(resp, [](ReplyWriter& w) { w.ArrayHeader(12); }), "*12\r\n");
  }
}

TEST(ReplyWriter, MapIsFlatArrayInResp2) {
  auto body = [](ReplyWriter& w) {
    w.MapHeader(2);
    w.Bulk("a");
    w.Integer(1);
    w.Bulk("b");
    w.Bool(true);
  };
  EXPECT_EQ(R2(body), "*4\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n:1\r\n");
  EXPECT_EQ(R3(body), "%2\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n#t\r\n");
}

TEST(ReplyWriter, EmptyMap) {
  EXPECT_EQ(R2([](ReplyWriter& w) { w.MapHeader(0); }), "*0\r\n");
  EXPECT_EQ(R3([](ReplyWriter& w) { w.MapHeader(0); }), "%0\r\n");
}

TEST(ReplyWriter, SetIsArrayInResp2) {
  EXPECT_EQ(R2([](ReplyWriter& w) { w.SetHeader(3); }), "*3\r\n");
  EXPECT_EQ(R3([](ReplyWriter& w) { w.SetHeader(3); }), "~3\r\n");
}

TEST(ReplyWriter, PushIsArrayInResp2) {
  EXPECT_EQ(R2([](ReplyWriter& w) { w.PushHeader(3); }), "*3\r\n");
  EXPECT_EQ(R3([](ReplyWriter& w) { w.PushHeader(3); }), ">3\r\n");
}

TEST(ReplyWriter, BoolIsIntegerInResp2) {
  EXPECT_EQ(R2([](ReplyWriter& w) { w.Bool(true); }), ":1\r\n");
  EXPECT_EQ(R2([](ReplyWriter& w) { w.Bool(false); }), ":0\r\n");
  EXPECT_EQ(R3([](ReplyWriter& w) { w.Bool(true); }), "#t\r\n");
  EXPECT_EQ(R3([](ReplyWriter& w) { w.Bool(false); }), "#f\r\n");
}

TEST(ReplyWriter, DoubleIsBulkInResp2) {
  EXPECT_EQ(R2([](ReplyWriter& w) { w.Double(3.141); }), "$5\r\n3.141\r\n");
  EXPECT_EQ(R3([](ReplyWriter& w) { w.Double(3.141); }), ",3.141\r\n");
}

TEST(ReplyWriter, DoubleInfinitiesAndNan) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(R3([&](ReplyWriter& w) { w.Double(inf); }), ",inf\r\n");
  EXPECT_EQ(R3([&](ReplyWriter& w) { w.Double(-inf); }), ",-inf\r\n");
  EXPECT_EQ(R3([&](ReplyWriter& w) { w.Double(nan); }), ",nan\r\n");
  EXPECT_EQ(R3([&](ReplyWriter& w) { w.Double(-nan); }), ",nan\r\n");
  EXPECT_EQ(R2([&](ReplyWriter& w) { w.Double(inf); }), "$3\r\ninf\r\n");
  EXPECT_EQ(R2([&](ReplyWriter& w) { w.Double(-inf); }), "$4\r\n-inf\r\n");
  EXPECT_EQ(R2([&](ReplyWriter& w) { w.Double(nan); }), "$3\r\nnan\r\n");
}

TEST(ReplyWriter, DoubleIntegralValue) {
  EXPECT_EQ(R3([](ReplyWriter& w) { w.Double(10.0); }), ",10\r\n");
  EXPECT_EQ(R2([](ReplyWriter& w) { w.Double(-3.0); }), "$2\r\n-3\r\n");
}

TEST(ReplyWriter, VerbatimInResp3) {
  EXPECT_EQ(R3([](ReplyWriter& w) { w.Verbatim("This is a verbatim\nstring"); }),
            "=29\r\ntxt:This is a verbatim\nstring\r\n");
  EXPECT_EQ(R3([](ReplyWriter& w) { w.Verbatim("# x", "mkd"); }), "=7\r\nmkd:# x\r\n");
}

TEST(ReplyWriter, VerbatimIsPlainBulkInResp2) {
  EXPECT_EQ(R2([](ReplyWriter& w) { w.Verbatim("This is a verbatim\nstring"); }),
            "$25\r\nThis is a verbatim\nstring\r\n");
}

// The format is exactly three bytes; anything else must not break the
// declared length.
TEST(ReplyWriter, VerbatimFormatIsThreeBytes) {
  EXPECT_EQ(R3([](ReplyWriter& w) { w.Verbatim("x", "markdown"); }), "=5\r\nmar:x\r\n");
  EXPECT_EQ(R3([](ReplyWriter& w) { w.Verbatim("x", "md"); }), "=5\r\ntxt:x\r\n");
  EXPECT_EQ(R3([](ReplyWriter& w) { w.Verbatim("x", ""); }), "=5\r\ntxt:x\r\n");
}

TEST(ReplyWriter, BulkArray) {
  std::vector<std::string_view> items = {"a", "", "ccc"};
  for (int resp : {2, 3}) {
    EXPECT_EQ(Encode(resp, [&](ReplyWriter& w) { w.BulkArray(items.data(), items.size()); }),
              "*3\r\n$1\r\na\r\n$0\r\n\r\n$3\r\nccc\r\n");
  }
  EXPECT_EQ(R2([](ReplyWriter& w) { w.BulkArray(nullptr, 0); }), "*0\r\n");
}

TEST(ReplyWriter, RawIsVerbatimBytes) {
  EXPECT_EQ(R2([](ReplyWriter& w) { w.Raw("(123\r\n"); }), "(123\r\n");
}

// ---------------------------------------------------------------------------
// Error(): "ERR " only when the text has no upper-case code word.

TEST(ReplyWriterError, KeepsErrCode) {
  EXPECT_EQ(R2([](ReplyWriter& w) { w.Error("ERR syntax error"); }), "-ERR syntax error\r\n");
}

TEST(ReplyWriterError, KeepsOtherCode) {
  EXPECT_EQ(R3([](ReplyWriter& w) { w.Error("WRONGTYPE Operation against a key"); }),
            "-WRONGTYPE Operation against a key\r\n");
}

TEST(ReplyWriterError, AddsErrWithoutCode) {
  EXPECT_EQ(R2([](ReplyWriter& w) { w.Error("syntax error"); }), "-ERR syntax error\r\n");
}

TEST(ReplyWriterError, AddsErrWhenFirstWordNotAllUpperCase) {
  EXPECT_EQ(R2([](ReplyWriter& w) { w.Error("Protocol error: x"); }), "-ERR Protocol error: x\r\n");
  EXPECT_EQ(R2([](ReplyWriter& w) { w.Error("ERR2 x"); }), "-ERR ERR2 x\r\n");
}

TEST(ReplyWriterError, AddsErrToEmptyText) {
  EXPECT_EQ(R2([](ReplyWriter& w) { w.Error(""); }), "-ERR \r\n");
  EXPECT_EQ(R2([](ReplyWriter& w) { w.Error(" leading space"); }), "-ERR  leading space\r\n");
}

TEST(ReplyWriterError, SingleUpperCaseWordIsCode) {
  EXPECT_EQ(R2([](ReplyWriter& w) { w.Error("NOAUTH"); }), "-NOAUTH\r\n");
}

TEST(ReplyWriterError, ReplacesCrLf) {
  EXPECT_EQ(R2([](ReplyWriter& w) { w.Error("ERR bad\r\nline\rx\ny"); }), "-ERR bad  line x y\r\n");
  EXPECT_EQ(R2([](ReplyWriter& w) { w.Error("bad\r\n"); }), "-ERR bad  \r\n");
}

// ---------------------------------------------------------------------------
// FormatDouble

TEST(FormatDouble, ShortestRoundTrip) {
  EXPECT_EQ(FormatDouble(3.14), "3.14");
  EXPECT_EQ(FormatDouble(0.1), "0.1");
  EXPECT_EQ(FormatDouble(-2.5), "-2.5");
  EXPECT_EQ(FormatDouble(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(FormatDouble(123456.789), "123456.789");
}

TEST(FormatDouble, Zero) {
  EXPECT_EQ(FormatDouble(0.0), "0");
  EXPECT_EQ(FormatDouble(-0.0), "-0");
}

TEST(FormatDouble, IntegralValuesHaveNoFraction) {
  EXPECT_EQ(FormatDouble(1.0), "1");
  EXPECT_EQ(FormatDouble(-17.0), "-17");
  EXPECT_EQ(FormatDouble(1e15), "1000000000000000");
  EXPECT_EQ(FormatDouble(1e17), "100000000000000000");
  EXPECT_EQ(FormatDouble(9007199254740993.0), "9007199254740992");
  EXPECT_EQ(FormatDouble(4611686018427387904.0 / 2), "2305843009213693952");
}

TEST(FormatDouble, LargeValuesUseExponent) {
  EXPECT_EQ(FormatDouble(4611686018427387904.0), "4.611686018427388e+18");
  EXPECT_EQ(FormatDouble(1e20), "1e+20");
  EXPECT_EQ(FormatDouble(-1.5e300), "-1.5e+300");
  EXPECT_EQ(FormatDouble(DBL_MAX), "1.7976931348623157e+308");
}

TEST(FormatDouble, SmallValues) {
  EXPECT_EQ(FormatDouble(0.0003), "0.0003");
  EXPECT_EQ(FormatDouble(1.1e-5), "0.000011");
  EXPECT_EQ(FormatDouble(1.5e-7), "1.5e-07");
  EXPECT_EQ(FormatDouble(-1e-10), "-1e-10");
  EXPECT_EQ(FormatDouble(5e-324), "5e-324");
}

TEST(FormatDouble, SpecialValues) {
  EXPECT_EQ(FormatDouble(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(FormatDouble(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(FormatDouble(std::numeric_limits<double>::quiet_NaN()), "nan");
}

TEST(FormatDouble, RandomValuesRoundTrip) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 100000; i++) {
    uint64_t bits = rng();
    double d;
    static_assert(sizeof(d) == sizeof(bits));
    std::memcpy(&d, &bits, sizeof(d));
    if (!std::isfinite(d)) continue;
    std::string s = FormatDouble(d);
    ASSERT_EQ(std::strtod(s.c_str(), nullptr), d) << s;
    ASSERT_LE(s.size(), 24u) << s;
  }
}

// ---------------------------------------------------------------------------
// AppendCommand

std::vector<std::string> RoundTrip(const std::vector<std::string>& args) {
  std::vector<std::string_view> views(args.begin(), args.end());
  std::string wire;
  AppendCommand(&wire, views.data(), views.size());
  RespParser p;
  size_t consumed = 0;
  EXPECT_EQ(p.Parse(wire, &consumed), RespParser::Result::kCommand) << p.error();
  EXPECT_EQ(consumed, wire.size());
  return std::vector<std::string>(p.args().begin(), p.args().end());
}

TEST(AppendCommand, Encoding) {
  std::vector<std::string_view> args = {"SET", "k", ""};
  std::string wire = "junk";
  AppendCommand(&wire, args.data(), args.size());
  EXPECT_EQ(wire, "junk*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n");
}

TEST(AppendCommand, RoundTripsThroughParser) {
  std::string all_bytes;
  for (int c = 0; c < 256; c++) all_bytes.push_back(static_cast<char>(c));
  std::vector<std::vector<std::string>> cases = {
      {"PING"},
      {"SET", "key", "value"},
      {"SET", "", ""},
      {"SET", std::string("\0\r\n", 3), all_bytes},
      {"SET", "big", std::string(100000, 'b')},
  };
  std::vector<std::string> many = {"RPUSH", "list"};
  for (int i = 0; i < 3000; i++) many.push_back(std::to_string(i));
  cases.push_back(many);
  for (const auto& c : cases) EXPECT_EQ(RoundTrip(c), c);
}

TEST(AppendCommand, EmptyCommandRoundTrips) {
  std::string wire;
  AppendCommand(&wire, nullptr, 0);
  EXPECT_EQ(wire, "*0\r\n");
  RespParser p;
  size_t consumed = 0;
  ASSERT_EQ(p.Parse(wire, &consumed), RespParser::Result::kCommand);
  EXPECT_EQ(consumed, 4u);
  EXPECT_TRUE(p.args().empty());
}

}  // namespace
}  // namespace feedkv::protocol
