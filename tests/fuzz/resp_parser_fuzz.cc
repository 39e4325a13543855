// libFuzzer target for RespParser (build with -DFEEDKV_FUZZ=ON and clang; run
// with tools/run-fuzz.sh). Input: one config byte, then the client's bytes.
//
// Config byte: bit 0 small inline limit (24 instead of 64 KB), bit 1 small
// bulk limit (8), bit 2 small multibulk limit (4), bits 3-7 seed the chunk
// sizes. Small limits let short inputs reach the "too big" paths.
//
// Checked, beyond ASan/UBSan cleanliness:
//  1. Every kCommand consumes at least one byte and no more than was given;
//     multibulk arguments are views inside the caller's buffer.
//  2. Feeding the same bytes in random chunks, each call on a fresh heap copy
//     of the unconsumed bytes (so offsets, not pointers, must carry the state),
//     yields the same commands and the same final outcome as one big buffer.
//     The one allowed difference: when a header line longer than the limit
//     does end in the full buffer, the single call reports the bad number and
//     the chunked run may report "too big ..." first (as Redis would).
//  3. Every command re-encoded with AppendCommand parses back identically.
//  4. ReplyWriter::Error never emits a CR or LF inside the line.
//  5. The pipelined-key look ahead (protocol/pipeline_scan.h) agrees with the
//     parser: each key it reports is the argv[1] the parser gives that command.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/pipeline_scan.h"
#include "protocol/reply_writer.h"
#include "protocol/resp_parser.h"

// The protocol sources are compiled into this translation unit so that they
// get the fuzzer's coverage and ASan/UBSan instrumentation: CMake builds the
// feedkv_protocol library without them. The library's members are then never
// pulled in by the linker, so nothing is defined twice.
#include "protocol/pipeline_scan.cc"  // NOLINT(bugprone-suspicious-include)
#include "protocol/reply_writer.cc"  // NOLINT(bugprone-suspicious-include)
#include "protocol/resp_parser.cc"   // NOLINT(bugprone-suspicious-include)

namespace {

using feedkv::protocol::AppendCommand;
using feedkv::protocol::ParserLimits;
using feedkv::protocol::ReplyWriter;
using feedkv::protocol::RespParser;
using Args = std::vector<std::string>;

struct Outcome {
  std::vector<Args> commands;
  bool error = false;
  std::string error_text;
};

void Check(bool ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "invariant violated: %s\n", what);
    abort();
  }
}

Args Copy(const RespParser& p) { return Args(p.args().begin(), p.args().end()); }

Outcome ParseWhole(std::string_view in, const ParserLimits& limits) {
  Outcome o;
  RespParser p(limits);
  size_t start = 0;
  while (start < in.size()) {
    std::string_view buf = in.substr(start);
    size_t consumed = 0;
    RespParser::Result r = p.Parse(buf, &consumed);
    if (r == RespParser::Result::kNeedMore) {
      Check(consumed == 0, "kNeedMore consumed bytes");
      break;
    }
    if (r == RespParser::Result::kError) {
      o.error = true;
      o.error_text = p.error();
      break;
    }
    Check(consumed > 0 && consumed <= buf.size(), "kCommand consumed out of range");
    if (buf[0] == '*') {
      for (std::string_view a : p.args()) {
        Check(a.data() >= buf.data() && a.data() + a.size() <= buf.data() + consumed,
              "multibulk argument outside the command's bytes");
      }
    }
    o.commands.push_back(Copy(p));
    start += consumed;
  }
  return o;
}

Outcome ParseChunked(std::string_view in, const ParserLimits& limits, uint32_t seed) {
  Outcome o;
  RespParser p(limits);
  std::string received;  // the connection's buffer; its front is consumed
  size_t fed = 0;
  uint32_t rng = seed * 2654435761u + 1;
  while (fed < in.size()) {
    rng = rng * 1103515245u + 12345u;
    size_t n = 1 + (rng >> 16) % 48;
    if (n > in.size() - fed) n = in.size() - fed;
    received.append(in.data() + fed, n);
    fed += n;
    while (!received.empty()) {
      // A fresh allocation every call: stale pointers into an old copy would
      // be use-after-free.
      std::vector<char> fresh(received.begin(), received.end());
      std::string_view buf(fresh.data(), fresh.size());
      size_t consumed = 0;
      RespParser::Result r = p.Parse(buf, &consumed);
      if (r == RespParser::Result::kNeedMore) break;
      if (r == RespParser::Result::kError) {
        o.error = true;
        o.error_text = p.error();
        return o;
      }
      Check(consumed > 0 && consumed <= buf.size(), "kCommand consumed out of range (chunked)");
      o.commands.push_back(Copy(p));
      received.erase(0, consumed);
    }
  }
  return o;
}

bool IsTooBig(const std::string& e) { return e.find("Protocol error: too big") != std::string::npos; }

void CheckRoundTrip(const Args& args) {
  std::vector<std::string_view> views(args.begin(), args.end());
  std::string wire;
  AppendCommand(&wire, views.data(), views.size());
  RespParser p;  // default limits: fuzz arguments are far below them
  size_t consumed = 0;
  Check(p.Parse(wire, &consumed) == RespParser::Result::kCommand, "AppendCommand output rejected");
  Check(consumed == wire.size(), "AppendCommand output not fully consumed");
  Check(Copy(p) == args, "AppendCommand round trip changed the arguments");
}

void CheckErrorReply(const std::string& text) {
  std::string out;
  ReplyWriter w(&out, 2);
  w.Error(text);
  Check(out.size() >= 3 && out[0] == '-', "error reply does not start with '-'");
  Check(out.compare(out.size() - 2, 2, "\r\n") == 0, "error reply does not end in CRLF");
  std::string_view body(out.data(), out.size() - 2);
  Check(body.find('\r') == std::string_view::npos && body.find('\n') == std::string_view::npos,
        "CR or LF inside an error reply");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t config = data[0];
  std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);

  ParserLimits limits;
  if (config & 1) limits.max_inline_len = 24;
  if (config & 2) limits.max_bulk_len = 8;
  if (config & 4) limits.max_multibulk_len = 4;

  Outcome whole = ParseWhole(in, limits);
  Outcome chunked = ParseChunked(in, limits, config >> 3);

  Check(whole.commands == chunked.commands, "chunked feeding changed the commands");
  Check(whole.error == chunked.error, "chunked feeding changed error vs need-more");
  if (whole.error_text != chunked.error_text) {
    Check(IsTooBig(chunked.error_text) && !IsTooBig(whole.error_text),
          "chunked feeding changed the error text");
  }
  if (whole.error) Check(whole.error_text.rfind("ERR Protocol error: ", 0) == 0, "odd error text");

  for (const Args& a : whole.commands) {
    CheckRoundTrip(a);
    if (!a.empty()) CheckErrorReply(a[0]);
  }
  if (whole.error) CheckErrorReply(whole.error_text);

  std::string_view keys[16];
  const size_t n = feedkv::protocol::ScanPipelinedKeys(in, keys);
  for (size_t i = 0; i < n && i < whole.commands.size(); i++) {
    Check(whole.commands[i].size() >= 2 && whole.commands[i][1] == keys[i],
          "the look ahead disagrees with the parser");
  }
  return 0;
}
