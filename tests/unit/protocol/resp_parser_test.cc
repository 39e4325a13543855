// Tests for RespParser and SplitInlineArgs. Expected behaviour was checked
// against redis-server 7.0 with raw bytes where the two could differ; the
// deliberate differences are noted at the tests that pin them.
#include "protocol/resp_parser.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/error_text.h"
#include "protocol/reply_writer.h"

namespace feedkv::protocol {
namespace {

using Result = RespParser::Result;
using Args = std::vector<std::string>;

Args Copy(const std::vector<std::string_view>& views) { return Args(views.begin(), views.end()); }

// Encodes `args` as a RESP multibulk.
std::string Mb(const Args& args) {
  std::vector<std::string_view> views(args.begin(), args.end());
  std::string out;
  AppendCommand(&out, views.data(), views.size());
  return out;
}

// Parses one complete command that must fill `buf` exactly.
Args ParseOne(std::string_view buf) {
  RespParser p;
  size_t consumed = 99;
  Result r = p.Parse(buf, &consumed);
  EXPECT_EQ(r, Result::kCommand) << p.error();
  EXPECT_EQ(consumed, buf.size());
  return Copy(p.args());
}

// Parses `buf` and expects a protocol error; returns its text.
std::string ParseError(std::string_view buf, ParserLimits limits = {}) {
  RespParser p(limits);
  size_t consumed = 99;
  Result r = p.Parse(buf, &consumed);
  EXPECT_EQ(r, Result::kError);
  EXPECT_EQ(consumed, 0u);
  return p.error();
}

// Parses every command in `buf`, the way a connection does: the unconsumed
// tail is passed on each call. Empty commands are kept (as empty Args).
std::vector<Args> ParseAll(std::string_view buf, size_t* left = nullptr) {
  RespParser p;
  std::vector<Args> out;
  size_t start = 0;
  while (start < buf.size()) {
    size_t consumed = 0;
    Result r = p.Parse(buf.substr(start), &consumed);
    if (r == Result::kNeedMore) break;
    EXPECT_EQ(r, Result::kCommand) << p.error();
    if (r != Result::kCommand) break;
    EXPECT_GT(consumed, 0u);
    out.push_back(Copy(p.args()));
    start += consumed;
  }
  if (left != nullptr) *left = buf.size() - start;
  return out;
}

// Feeds every proper prefix of `wire` to one parser, then the whole: each
// prefix must give kNeedMore with nothing consumed. Every prefix is a fresh
// copy, so a parser that kept pointers instead of offsets reads freed memory.
void ExpectSplitEverywhere(const std::string& wire, const Args& want) {
  for (size_t cut = 0; cut < wire.size(); cut++) {
    RespParser p;
    size_t consumed = 99;
    std::string head = wire.substr(0, cut);
    ASSERT_EQ(p.Parse(head, &consumed), Result::kNeedMore) << "cut at " << cut;
    ASSERT_EQ(consumed, 0u);
    std::string whole = wire;
    ASSERT_EQ(p.Parse(whole, &consumed), Result::kCommand) << "cut at " << cut << ": " << p.error();
    ASSERT_EQ(consumed, wire.size());
    ASSERT_EQ(Copy(p.args()), want) << "cut at " << cut;
  }
  // And one parser fed a byte at a time.
  RespParser p;
  size_t consumed = 0;
  for (size_t len = 1; len < wire.size(); len++) {
    std::string part = wire.substr(0, len);
    ASSERT_EQ(p.Parse(part, &consumed), Result::kNeedMore) << "len " << len;
  }
  std::string whole = wire;
  ASSERT_EQ(p.Parse(whole, &consumed), Result::kCommand) << p.error();
  EXPECT_EQ(consumed, wire.size());
  EXPECT_EQ(Copy(p.args()), want);
}

// ---------------------------------------------------------------------------
// Well-formed input

TEST(RespParser, ReleasingLargeArraysKeepsAHalfReadCommand) {
  RespParser p;
  Args big(5000, "m");
  big[0] = "SADD";
  std::string wire = Mb(big);
  size_t used = 0;
  ASSERT_EQ(p.Parse(wire, &used), Result::kCommand);
  EXPECT_EQ(p.args().size(), 5000u);
  p.ReleaseLargeArrays();  // between commands: the arrays go
  // A command cut in the middle keeps its state across a release.
  const std::string next = Mb({"SET", "key", "value"});
  const std::string first_half = next.substr(0, 20);
  ASSERT_EQ(p.Parse(first_half, &used), Result::kNeedMore);
  p.ReleaseLargeArrays();
  ASSERT_EQ(p.Parse(next, &used), Result::kCommand);
  EXPECT_EQ(used, next.size());
  EXPECT_EQ(Copy(p.args()), (Args{"SET", "key", "value"}));
}

TEST(RespParser, MultibulkCommand) {
  EXPECT_EQ(ParseOne("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n"), (Args{"SET", "k", "value"}));
}

TEST(RespParser, MultibulkArgsAreViewsIntoCallerBuffer) {
  std::string buf = "*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n";
  RespParser p;
  size_t consumed = 0;
  ASSERT_EQ(p.Parse(buf, &consumed), Result::kCommand);
  ASSERT_EQ(p.args().size(), 2u);
  EXPECT_EQ(p.args()[1].data(), buf.data() + 17);
}

TEST(RespParser, InlineCommand) { EXPECT_EQ(ParseOne("SET k  v\r\n"), (Args{"SET", "k", "v"})); }

TEST(RespParser, InlineCommandEndedByBareNewline) { EXPECT_EQ(ParseOne("PING\n"), (Args{"PING"})); }

TEST(RespParser, InlineArgsOutliveCallerBuffer) {
  RespParser p;
  size_t consumed = 0;
  {
    std::string buf = "ECHO \"a\\tb\"\r\n";
    ASSERT_EQ(p.Parse(buf, &consumed), Result::kCommand);
  }
  // Unescaped inline arguments live in the parser, not in the caller's buffer.
  EXPECT_EQ(Copy(p.args()), (Args{"ECHO", "a\tb"}));
}

TEST(RespParser, EmptyInlineLinesAreConsumedWithoutArgs) {
  std::vector<Args> cmds = ParseAll("\r\n\n   \r\nPING\r\n");
  ASSERT_EQ(cmds.size(), 4u);
  EXPECT_TRUE(cmds[0].empty());
  EXPECT_TRUE(cmds[1].empty());
  EXPECT_TRUE(cmds[2].empty());
  EXPECT_EQ(cmds[3], (Args{"PING"}));
}

TEST(RespParser, EmptyBufferNeedsMore) {
  RespParser p;
  size_t consumed = 99;
  EXPECT_EQ(p.Parse("", &consumed), Result::kNeedMore);
  EXPECT_EQ(consumed, 0u);
}

TEST(RespParser, ConsumesOnlyTheFirstCommand) {
  std::string one = "*1\r\n$4\r\nPING\r\n";
  RespParser p;
  size_t consumed = 0;
  ASSERT_EQ(p.Parse(one + "PING\r\n", &consumed), Result::kCommand);
  EXPECT_EQ(consumed, one.size());
  ASSERT_EQ(p.Parse("PING\r\n*1\r\n", &consumed), Result::kCommand);
  EXPECT_EQ(consumed, 6u);
}

TEST(RespParser, EmptyBulk) {
  EXPECT_EQ(ParseOne("*3\r\n$3\r\nSET\r\n$0\r\n\r\n$0\r\n\r\n"), (Args{"SET", "", ""}));
}

TEST(RespParser, ZeroMultibulkIsEmptyCommand) {
  RespParser p;
  size_t consumed = 0;
  ASSERT_EQ(p.Parse("*0\r\nPING\r\n", &consumed), Result::kCommand);
  EXPECT_EQ(consumed, 4u);
  EXPECT_TRUE(p.args().empty());
}

TEST(RespParser, NullMultibulkIsEmptyCommand) {
  RespParser p;
  size_t consumed = 0;
  ASSERT_EQ(p.Parse("*-1\r\nPING\r\n", &consumed), Result::kCommand);
  EXPECT_EQ(consumed, 5u);
  EXPECT_TRUE(p.args().empty());
}

// Redis 7 treats any count <= 0 as an empty command ("*-5\r\nPING\r\n" gets
// +PONG), so a small negative count is not a protocol error.
TEST(RespParser, NegativeMultibulkIsEmptyCommand) {
  std::vector<Args> cmds = ParseAll("*-5\r\nPING\r\n");
  ASSERT_EQ(cmds.size(), 2u);
  EXPECT_TRUE(cmds[0].empty());
  EXPECT_EQ(cmds[1], (Args{"PING"}));
}

TEST(RespParser, EmptyCommandResetsStateForNextCommand) {
  RespParser p;
  size_t consumed = 0;
  ASSERT_EQ(p.Parse("*0\r\n", &consumed), Result::kCommand);
  ASSERT_EQ(p.Parse("*1\r\n$4\r\nPI", &consumed), Result::kNeedMore);
  ASSERT_EQ(p.Parse("*1\r\n$4\r\nPING\r\n", &consumed), Result::kCommand);
  EXPECT_EQ(Copy(p.args()), (Args{"PING"}));
}

// Like Redis, the two bytes after a bulk are its terminator whatever they are.
TEST(RespParser, BulkTerminatorIsNotInspected) {
  std::vector<Args> cmds = ParseAll("*1\r\n$4\r\nPINGxx*1\r\n$4\r\nPING\r\n");
  ASSERT_EQ(cmds.size(), 2u);
  EXPECT_EQ(cmds[0], (Args{"PING"}));
  EXPECT_EQ(cmds[1], (Args{"PING"}));
}

TEST(RespParser, BinarySafeBulks) {
  std::string all_bytes;
  for (int c = 0; c < 256; c++) all_bytes.push_back(static_cast<char>(c));
  Args args = {"SET", std::string("a\0b", 3), "line1\r\nline2\r\n", "\r\n", "*1\r\n$4\r\nPING\r\n",
               all_bytes};
  EXPECT_EQ(ParseOne(Mb(args)), args);
}

TEST(RespParser, LargeBulk) {
  std::string big(1 << 20, 'v');
  big[12345] = '\r';
  big[12346] = '\n';
  Args args = {"SET", "k", big};
  EXPECT_EQ(ParseOne(Mb(args)), args);
}

// ---------------------------------------------------------------------------
// Partial input: every command split at every byte boundary

TEST(RespParser, MultibulkSplitAtEveryByte) {
  Args args = {"SET", "key", std::string("v\r\n\0x", 5), ""};
  ExpectSplitEverywhere(Mb(args), args);
}

TEST(RespParser, MultibulkWithManyArgsSplitAtEveryByte) {
  Args args;
  for (int i = 0; i < 12; i++) args.push_back(std::string(static_cast<size_t>(i * 3), 'a' + i));
  ExpectSplitEverywhere(Mb(args), args);
}

TEST(RespParser, InlineSplitAtEveryByte) {
  ExpectSplitEverywhere("SET \"k\\x41\" 'v w'\r\n", Args{"SET", "kA", "v w"});
}

TEST(RespParser, InlineWithBareNewlineSplitAtEveryByte) {
  ExpectSplitEverywhere("GET key\n", Args{"GET", "key"});
}

TEST(RespParser, EmptyMultibulkSplitAtEveryByte) {
  ExpectSplitEverywhere("*0\r\n", Args{});
  ExpectSplitEverywhere("*-1\r\n", Args{});
}

TEST(RespParser, LongInlineFedByteByByte) {
  // 60 KB arriving one byte per read stays under the inline limit, and the
  // parser resumes its newline search where it stopped.
  std::string line = "SET k " + std::string(60 * 1024, 'x') + "\r\n";
  RespParser p;
  size_t consumed = 0;
  for (size_t len = 1; len < line.size(); len++) {
    ASSERT_EQ(p.Parse(std::string_view(line).substr(0, len), &consumed), Result::kNeedMore);
  }
  ASSERT_EQ(p.Parse(line, &consumed), Result::kCommand);
  EXPECT_EQ(consumed, line.size());
  ASSERT_EQ(p.args().size(), 3u);
  EXPECT_EQ(p.args()[2].size(), 60u * 1024);
}

// ---------------------------------------------------------------------------
// Pipelines

TEST(RespParser, PipelineOfThousandsOfCommands) {
  std::string wire;
  std::vector<Args> want;
  for (int i = 0; i < 5000; i++) {
    Args a = {"SET", "key:" + std::to_string(i), std::string(static_cast<size_t>(i % 37), 'v')};
    if (i % 5 == 0) {
      wire += "SET " + a[1] + " inline" + std::to_string(i) + "\r\n";
      a[2] = "inline" + std::to_string(i);
    } else {
      wire += Mb(a);
    }
    want.push_back(a);
  }
  size_t left = 99;
  EXPECT_EQ(ParseAll(wire, &left), want);
  EXPECT_EQ(left, 0u);
}

TEST(RespParser, PipelineArrivingInRandomChunks) {
  std::string wire;
  std::vector<Args> want;
  for (int i = 0; i < 2000; i++) {
    Args a = {"HSET", "h" + std::to_string(i), "f", std::string(static_cast<size_t>(i % 300), 'z')};
    wire += (i % 7 == 3) ? "PING\r\n" : Mb(a);
    want.push_back(i % 7 == 3 ? Args{"PING"} : a);
  }
  std::mt19937 rng(7);
  std::uniform_int_distribution<size_t> chunk(1, 700);
  // The connection's buffer: received bytes, of which the front is consumed.
  std::string received;
  size_t start = 0, fed = 0;
  std::vector<Args> got;
  RespParser p;
  while (fed < wire.size()) {
    size_t n = std::min(chunk(rng), wire.size() - fed);
    received.append(wire, fed, n);
    fed += n;
    while (true) {
      size_t consumed = 0;
      Result r = p.Parse(std::string_view(received).substr(start), &consumed);
      if (r == Result::kNeedMore) break;
      ASSERT_EQ(r, Result::kCommand) << p.error();
      got.push_back(Copy(p.args()));
      start += consumed;
    }
    // Compact, as the server does, which moves the partial command.
    received.erase(0, start);
    start = 0;
  }
  EXPECT_EQ(got, want);
  EXPECT_TRUE(received.empty());
}

// ---------------------------------------------------------------------------
// pending_bulk_len

TEST(RespParser, PendingBulkLenReportsAwaitedBulk) {
  RespParser p;
  size_t consumed = 0;
  EXPECT_EQ(p.pending_bulk_len(), 0u);
  ASSERT_EQ(p.Parse("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10", &consumed), Result::kNeedMore);
  EXPECT_EQ(p.pending_bulk_len(), 0u);  // header not complete yet
  std::string buf = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100000\r\nabc";
  ASSERT_EQ(p.Parse(buf, &consumed), Result::kNeedMore);
  EXPECT_EQ(p.pending_bulk_len(), 100000u);
  buf += std::string(100000 - 3, 'x') + "\r\n";
  ASSERT_EQ(p.Parse(buf, &consumed), Result::kCommand);
  EXPECT_EQ(p.pending_bulk_len(), 0u);
}

TEST(RespParser, PendingBulkLenIsZeroForEmptyBulk) {
  RespParser p;
  size_t consumed = 0;
  ASSERT_EQ(p.Parse("*1\r\n$0\r\n", &consumed), Result::kNeedMore);
  EXPECT_EQ(p.pending_bulk_len(), 0u);
}

// ---------------------------------------------------------------------------
// Limits

TEST(RespParser, LimitsAreConfigurable) {
  RespParser p;
  ParserLimits limits;
  limits.max_bulk_len = 4;
  p.set_limits(limits);
  size_t consumed = 0;
  EXPECT_EQ(p.Parse("*1\r\n$4\r\nPING\r\n", &consumed), Result::kCommand);
  EXPECT_EQ(p.Parse("*1\r\n$5\r\nHELLO\r\n", &consumed), Result::kError);
  EXPECT_EQ(p.error(), err::kProtoInvalidBulk);
}

TEST(RespParser, UnauthenticatedClientsAnnounceAtMost10ArgsOf16KB) {
  ParserLimits unauth;
  unauth.unauthenticated = true;
  // Rejected on the header alone: the rest never needs to arrive.
  EXPECT_EQ(ParseError("*11\r\n", unauth), err::kProtoUnauthMultibulk);
  EXPECT_EQ(ParseError("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$16385\r\n", unauth), err::kProtoUnauthBulk);
  // Both the quick and the general length paths judge it (a length split across reads
  // takes the general one).
  RespParser p(unauth);
  size_t consumed = 0;
  ASSERT_EQ(p.Parse("*1\r\n$1638", &consumed), Result::kNeedMore);
  EXPECT_EQ(p.Parse("*1\r\n$16385\r\n", &consumed), Result::kError);
  EXPECT_EQ(p.error(), err::kProtoUnauthBulk);
  // At the limits, and for an authenticated client past them, the command parses.
  std::string ok = "*10\r\n$5\r\nRPUSH\r\n";
  for (int i = 0; i < 8; i++) ok += "$1\r\nx\r\n";
  ok += "$16384\r\n" + std::string(16384, 'v') + "\r\n";
  RespParser q(unauth);
  EXPECT_EQ(q.Parse(ok, &consumed), Result::kCommand) << q.error();
  EXPECT_EQ(ParseOne("*1\r\n$16385\r\n" + std::string(16385, 'v') + "\r\n").size(), 1u);
}

TEST(RespParser, InlineOfExactlyLimitIsAccepted) {
  std::string line = "ECHO " + std::string(64 * 1024 - 5, 'a');
  RespParser p;
  size_t consumed = 0;
  ASSERT_EQ(p.Parse(line, &consumed), Result::kNeedMore);  // 64 KB, no newline: wait
  ASSERT_EQ(p.Parse(line + "\n", &consumed), Result::kCommand);
  EXPECT_EQ(consumed, line.size() + 1);
}

TEST(RespParser, ParserIsReusableAfterError) {
  RespParser p;
  size_t consumed = 0;
  ASSERT_EQ(p.Parse("*1\r\n$x\r\n", &consumed), Result::kError);
  ASSERT_EQ(p.Parse("*1\r\n$4\r\nPING\r\n", &consumed), Result::kCommand);
  EXPECT_EQ(Copy(p.args()), (Args{"PING"}));
}

// ---------------------------------------------------------------------------
// Protocol errors: one test per path

TEST(RespParserError, MultibulkLengthNonNumeric) {
  EXPECT_EQ(ParseError("*abc\r\n"), err::kProtoInvalidMultibulk);
}

TEST(RespParserError, MultibulkLengthEmpty) { EXPECT_EQ(ParseError("*\r\n"), err::kProtoInvalidMultibulk); }

TEST(RespParserError, MultibulkLengthTrailingGarbage) {
  EXPECT_EQ(ParseError("*1 \r\n"), err::kProtoInvalidMultibulk);
}

TEST(RespParserError, MultibulkLengthLeadingZero) {
  EXPECT_EQ(ParseError("*01\r\n$4\r\nPING\r\n"), err::kProtoInvalidMultibulk);
}

TEST(RespParserError, MultibulkLengthPlusSign) {
  EXPECT_EQ(ParseError("*+1\r\n$4\r\nPING\r\n"), err::kProtoInvalidMultibulk);
}

TEST(RespParserError, MultibulkLengthLoneMinus) { EXPECT_EQ(ParseError("*-\r\n"), err::kProtoInvalidMultibulk); }

TEST(RespParserError, MultibulkLengthAboveIntMax) {
  EXPECT_EQ(ParseError("*2147483648\r\n"), err::kProtoInvalidMultibulk);
}

TEST(RespParserError, MultibulkLengthAboveLimit) {
  EXPECT_EQ(ParseError("*1048577\r\n"), err::kProtoInvalidMultibulk);
  RespParser p;
  size_t consumed = 0;
  EXPECT_EQ(p.Parse("*1048576\r\n", &consumed), Result::kNeedMore);
}

TEST(RespParserError, MultibulkLengthOverflowsInt64) {
  EXPECT_EQ(ParseError("*99999999999999999999\r\n"), err::kProtoInvalidMultibulk);
}

TEST(RespParserError, MultibulkLengthHugeNegative) {
  EXPECT_EQ(ParseError("*-99999999999999999999\r\n"), err::kProtoInvalidMultibulk);
}

TEST(RespParserError, MultibulkHeaderCrWithoutLf) {
  EXPECT_EQ(ParseError("*1\rX$4\r\nPING\r\n"), err::kProtoInvalidMultibulk);
}

TEST(RespParserError, BulkLengthNegative) { EXPECT_EQ(ParseError("*1\r\n$-1\r\n"), err::kProtoInvalidBulk); }

TEST(RespParserError, BulkLengthNegativeZero) {
  EXPECT_EQ(ParseError("*1\r\n$-0\r\n\r\n"), err::kProtoInvalidBulk);
}

TEST(RespParserError, BulkLengthNonNumeric) { EXPECT_EQ(ParseError("*1\r\n$abc\r\n"), err::kProtoInvalidBulk); }

TEST(RespParserError, BulkLengthEmpty) { EXPECT_EQ(ParseError("*1\r\n$\r\n"), err::kProtoInvalidBulk); }

TEST(RespParserError, BulkLengthLeadingZero) {
  EXPECT_EQ(ParseError("*1\r\n$04\r\nPING\r\n"), err::kProtoInvalidBulk);
}

TEST(RespParserError, BulkLengthOverflowsInt64) {
  EXPECT_EQ(ParseError("*1\r\n$99999999999999999999\r\n"), err::kProtoInvalidBulk);
}

TEST(RespParserError, BulkLengthAboveProtoMaxBulkLen) {
  EXPECT_EQ(ParseError("*1\r\n$536870913\r\n"), err::kProtoInvalidBulk);
  RespParser p;
  size_t consumed = 0;
  EXPECT_EQ(p.Parse("*1\r\n$536870912\r\n", &consumed), Result::kNeedMore);
  EXPECT_EQ(p.pending_bulk_len(), 536870912u);
}

TEST(RespParserError, BulkHeaderCrWithoutLf) {
  EXPECT_EQ(ParseError("*1\r\n$4\rXPING\r\n"), err::kProtoInvalidBulk);
}

TEST(RespParserError, MissingDollar) {
  EXPECT_EQ(ParseError("*1\r\nx4\r\nPING\r\n"), "ERR Protocol error: expected '$', got 'x'");
}

TEST(RespParserError, MissingDollarInLaterArgument) {
  EXPECT_EQ(ParseError("*2\r\n$3\r\nGET\r\n:1\r\n"), "ERR Protocol error: expected '$', got ':'");
}

// Redis prints a CR or LF found in place of '$' as a space.
TEST(RespParserError, MissingDollarShowsCrAsSpace) {
  EXPECT_EQ(ParseError("*1\r\n\r\n"), "ERR Protocol error: expected '$', got ' '");
}

TEST(RespParserError, MissingDollarIsReportedBeforeHeaderEnds) {
  EXPECT_EQ(ParseError("*1\r\nP"), "ERR Protocol error: expected '$', got 'P'");
}

TEST(RespParserError, InlineUnbalancedDoubleQuote) {
  EXPECT_EQ(ParseError("ECHO \"abc\r\n"), err::kProtoUnbalancedQuotes);
}

TEST(RespParserError, InlineUnbalancedSingleQuote) {
  EXPECT_EQ(ParseError("ECHO 'abc\r\n"), err::kProtoUnbalancedQuotes);
}

TEST(RespParserError, InlineClosingDoubleQuoteFollowedByNonSpace) {
  EXPECT_EQ(ParseError("PING \"a\"b\r\n"), err::kProtoUnbalancedQuotes);
}

TEST(RespParserError, InlineClosingSingleQuoteFollowedByNonSpace) {
  EXPECT_EQ(ParseError("ECHO 'a'b\r\n"), err::kProtoUnbalancedQuotes);
}

TEST(RespParserError, InlineTooBigWithoutNewline) {
  EXPECT_EQ(ParseError(std::string(64 * 1024 + 1, 'a')), err::kProtoTooBigInline);
}

TEST(RespParserError, InlineTooBigWithNewline) {
  EXPECT_EQ(ParseError(std::string(64 * 1024 + 1, 'a') + "\r\n"), err::kProtoTooBigInline);
}

TEST(RespParserError, InlineTooBigAfterManyReads) {
  std::string line(64 * 1024 + 1, 'a');
  RespParser p;
  size_t consumed = 0;
  for (size_t len = 1024; len < line.size(); len += 1024) {
    ASSERT_EQ(p.Parse(std::string_view(line).substr(0, len), &consumed), Result::kNeedMore);
  }
  EXPECT_EQ(p.Parse(line, &consumed), Result::kError);
  EXPECT_EQ(p.error(), err::kProtoTooBigInline);
}

TEST(RespParserError, MultibulkCountStringTooBig) {
  EXPECT_EQ(ParseError("*" + std::string(64 * 1024, '1')), err::kProtoTooBigMultibulk);
}

TEST(RespParserError, BulkCountStringTooBig) {
  EXPECT_EQ(ParseError("*1\r\n$" + std::string(64 * 1024, '1')), err::kProtoTooBigBulk);
}

// ---------------------------------------------------------------------------
// Inline argument splitting (sdssplitargs rules)

Args Split(std::string_view line) {
  Args out;
  EXPECT_TRUE(SplitInlineArgs(line, &out)) << line;
  return out;
}

bool SplitFails(std::string_view line) {
  Args out;
  return !SplitInlineArgs(line, &out);
}

TEST(SplitInlineArgs, BlanksSeparateArgs) {
  EXPECT_EQ(Split("  a \t b \v\f c\r\n"), (Args{"a", "b", "c"}));
  EXPECT_TRUE(Split("").empty());
  EXPECT_TRUE(Split(" \t ").empty());
}

// Redis ends an unquoted argument only at space, \t, \r or \n.
TEST(SplitInlineArgs, VerticalTabInsideUnquotedArg) {
  EXPECT_EQ(Split("ECHO a\vb c\fd"), (Args{"ECHO", "a\vb", "c\fd"}));
}

TEST(SplitInlineArgs, DoubleQuoteEscapes) {
  EXPECT_EQ(Split(R"("a\nb\rc\td\be\af\\g\"h")"), (Args{"a\nb\rc\td\be\af\\g\"h"}));
}

TEST(SplitInlineArgs, DoubleQuoteHexEscapes) {
  EXPECT_EQ(Split(R"("\x41\x7a\xFf\x00")"), (Args{std::string("Az\xff\0", 4)}));
}

TEST(SplitInlineArgs, DoubleQuoteBadHexEscapeIsLiteral) {
  EXPECT_EQ(Split(R"("\x41\x4g\x4")"), (Args{"Ax4gx4"}));
}

TEST(SplitInlineArgs, DoubleQuoteUnknownEscapeKeepsChar) { EXPECT_EQ(Split(R"("\q\'")"), (Args{"q'"})); }

TEST(SplitInlineArgs, DoubleQuoteKeepsSpacesAndSingleQuotes) {
  EXPECT_EQ(Split(R"(SET "a b 'c'" d)"), (Args{"SET", "a b 'c'", "d"}));
}

TEST(SplitInlineArgs, SingleQuoteEscapesOnlyQuote) {
  EXPECT_EQ(Split(R"('a\'b' 'c\nd' 'e"f')"), (Args{"a'b", "c\\nd", "e\"f"}));
}

TEST(SplitInlineArgs, EmptyQuotedArgs) { EXPECT_EQ(Split(R"("" '' x)"), (Args{"", "", "x"})); }

TEST(SplitInlineArgs, QuoteInsideUnquotedArgOpensQuoting) {
  EXPECT_EQ(Split(R"(ab"c d" e'f g')"), (Args{"abc d", "ef g"}));
}

TEST(SplitInlineArgs, ClosingQuoteFollowedByBlank) {
  EXPECT_EQ(Split("\"a\"\tb \"c\"\vd 'e'\ff"), (Args{"a", "b", "c", "d", "e", "f"}));
}

TEST(SplitInlineArgs, ClosingQuoteFollowedByNonBlankFails) {
  EXPECT_TRUE(SplitFails(R"("a"b)"));
  EXPECT_TRUE(SplitFails(R"('a'b)"));
  EXPECT_TRUE(SplitFails(R"("a""b")"));
}

TEST(SplitInlineArgs, UnterminatedQuoteFails) {
  EXPECT_TRUE(SplitFails(R"("abc)"));
  EXPECT_TRUE(SplitFails(R"('abc)"));
  EXPECT_TRUE(SplitFails(R"(a "b)"));
  EXPECT_TRUE(SplitFails(R"("abc\")"));  // the escaped quote does not close
  EXPECT_TRUE(SplitFails(R"('abc\')"));
  EXPECT_TRUE(SplitFails(R"("abc\)"));   // trailing backslash
}

// Redis's C-string splitting stops at NUL (and the server never sees the
// newline after it); feedkv keeps NUL as an ordinary byte.
TEST(SplitInlineArgs, NulIsOrdinaryByte) {
  EXPECT_EQ(Split(std::string_view("a\0b \"c\0d\"", 9)),
            (Args{std::string("a\0b", 3), std::string("c\0d", 3)}));
}

}  // namespace
}  // namespace feedkv::protocol
