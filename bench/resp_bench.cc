// Micro-benchmarks of the RESP layer, single-threaded (so items/s is per core).
//
//   build-proto/resp_bench --benchmark_min_time=1
//
// Parsing: items = commands parsed. Encoding: items = replies written into a
// reused buffer (its capacity is kept, as a connection's output buffer is).
// Results measured on the project machine are in docs/protocol.md.
#include <benchmark/benchmark.h>

#include <string>
#include <string_view>
#include <vector>

#include "protocol/reply_writer.h"
#include "protocol/resp_parser.h"

namespace feedkv::protocol {
namespace {

std::string Command(const std::vector<std::string>& args) {
  std::vector<std::string_view> views(args.begin(), args.end());
  std::string out;
  AppendCommand(&out, views.data(), views.size());
  return out;
}

// Parses every command of `wire` per iteration; `per_iter` commands each.
void ParseAll(benchmark::State& state, const std::string& wire, int64_t per_iter) {
  RespParser parser;
  for (auto _ : state) {
    std::string_view buf(wire);
    while (!buf.empty()) {
      size_t consumed = 0;
      if (parser.Parse(buf, &consumed) != RespParser::Result::kCommand) {
        state.SkipWithError("parse failed");
        return;
      }
      benchmark::DoNotOptimize(parser.args().data());
      buf.remove_prefix(consumed);
    }
  }
  state.SetItemsProcessed(state.iterations() * per_iter);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(wire.size()));
}

void BM_RespParserGet(benchmark::State& state) {
  ParseAll(state, Command({"GET", "user:1000:profile"}), 1);
}
BENCHMARK(BM_RespParserGet);

void BM_RespParserSet(benchmark::State& state) {
  ParseAll(state, Command({"SET", "user:1000:profile", std::string(64, 'v')}), 1);
}
BENCHMARK(BM_RespParserSet);

void BM_RespParserPipeline16(benchmark::State& state) {
  std::string wire;
  for (int i = 0; i < 16; i++) {
    std::string key = "key:" + std::to_string(1000 + i);
    wire += i % 2 ? Command({"GET", key}) : Command({"SET", key, std::string(32, 'v')});
  }
  ParseAll(state, wire, 16);
}
BENCHMARK(BM_RespParserPipeline16);

void BM_RespParserInlinePing(benchmark::State& state) { ParseAll(state, "PING\r\n", 1); }
BENCHMARK(BM_RespParserInlinePing);

void BM_RespParserInlineSet(benchmark::State& state) {
  ParseAll(state, "SET user:1000:profile \"some value\"\r\n", 1);
}
BENCHMARK(BM_RespParserInlineSet);

// A 1 MB SET value already in the buffer: the bulk is located, not scanned.
void BM_RespParserBulk1MB(benchmark::State& state) {
  ParseAll(state, Command({"SET", "blob", std::string(1 << 20, 'x')}), 1);
}
BENCHMARK(BM_RespParserBulk1MB);

// The same command arriving in 16 KB reads: 65 calls, 64 of them kNeedMore.
void BM_RespParserBulk1MBIn16KReads(benchmark::State& state) {
  const std::string wire = Command({"SET", "blob", std::string(1 << 20, 'x')});
  RespParser parser;
  for (auto _ : state) {
    size_t consumed = 0;
    for (size_t have = 16384; have < wire.size(); have += 16384) {
      benchmark::DoNotOptimize(parser.Parse(std::string_view(wire).substr(0, have), &consumed));
    }
    if (parser.Parse(wire, &consumed) != RespParser::Result::kCommand) {
      state.SkipWithError("parse failed");
      return;
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(wire.size()));
}
BENCHMARK(BM_RespParserBulk1MBIn16KReads);

// Encodes with `fn` into a reused buffer; one reply per call.
template <typename Fn>
void Encode(benchmark::State& state, int resp, Fn fn) {
  std::string out;
  out.reserve(1 << 16);
  ReplyWriter w(&out, resp);
  for (auto _ : state) {
    out.clear();
    fn(w);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_ReplyWriterBulk(benchmark::State& state) {
  const std::string value(64, 'v');
  Encode(state, 2, [&](ReplyWriter& w) { w.Bulk(value); });
}
BENCHMARK(BM_ReplyWriterBulk);

void BM_ReplyWriterInteger(benchmark::State& state) {
  int64_t v = 1234567;
  Encode(state, 2, [&](ReplyWriter& w) { w.Integer(v++); });
}
BENCHMARK(BM_ReplyWriterInteger);

void BM_ReplyWriterArray10Bulks(benchmark::State& state) {
  std::vector<std::string> values;
  for (int i = 0; i < 10; i++) values.push_back("member:" + std::to_string(i * 7919));
  std::vector<std::string_view> views(values.begin(), values.end());
  Encode(state, 2, [&](ReplyWriter& w) { w.BulkArray(views.data(), views.size()); });
}
BENCHMARK(BM_ReplyWriterArray10Bulks);

// An HGETALL-like RESP3 map of 5 field/value pairs.
void BM_ReplyWriterResp3Map(benchmark::State& state) {
  std::vector<std::string> fields, values;
  for (int i = 0; i < 5; i++) {
    fields.push_back("field" + std::to_string(i));
    values.push_back("value-" + std::to_string(i * 31337));
  }
  Encode(state, 3, [&](ReplyWriter& w) {
    w.MapHeader(fields.size());
    for (size_t i = 0; i < fields.size(); i++) {
      w.Bulk(fields[i]);
      w.Bulk(values[i]);
    }
  });
}
BENCHMARK(BM_ReplyWriterResp3Map);

void BM_ReplyWriterDouble(benchmark::State& state) {
  double d = 3.14159;
  Encode(state, 3, [&](ReplyWriter& w) {
    w.Double(d);
    d += 0.25;
  });
}
BENCHMARK(BM_ReplyWriterDouble);

}  // namespace
}  // namespace feedkv::protocol
