// LatencyHistogram, LATENCY HISTOGRAM, INFO latencystats and the
// latency-tracking options.
#include "server/latency_histogram.h"

#include <gtest/gtest.h>

#include "command_test_util.h"

namespace feedkv::server {
namespace {

TEST(LatencyHistogramTest, BucketsAreContiguousAndPowersOfTwoAreBoundaries) {
  for (size_t i = 0; i + 1 <= LatencyHistogram::IndexOf(LatencyHistogram::kMaxNs); i++) {
    ASSERT_EQ(LatencyHistogram::HighestOf(i) + 1, LatencyHistogram::LowestOf(i + 1)) << i;
    ASSERT_EQ(LatencyHistogram::IndexOf(LatencyHistogram::LowestOf(i)), i);
    ASSERT_EQ(LatencyHistogram::IndexOf(LatencyHistogram::HighestOf(i)), i);
  }
  for (int k = 6; k < 30; k++) {
    uint64_t p = uint64_t{1} << k;
    EXPECT_EQ(LatencyHistogram::LowestOf(LatencyHistogram::IndexOf(p)), p);
    // Relative width of a bucket is at most 1/32.
    size_t i = LatencyHistogram::IndexOf(p);
    EXPECT_LE(LatencyHistogram::HighestOf(i) - LatencyHistogram::LowestOf(i) + 1, p / 32);
  }
  EXPECT_EQ(LatencyHistogram::IndexOf(17), 17u);  // small values are exact
}

TEST(LatencyHistogramTest, PercentilesAsHdrHistogram) {
  LatencyHistogram h;
  EXPECT_EQ(h.ValueAtPercentile(50), 0u);
  for (int i = 0; i < 90; i++) h.Record(1000);
  for (int i = 0; i < 10; i++) h.Record(100000);
  EXPECT_EQ(h.count(), 100u);
  uint64_t p50 = h.ValueAtPercentile(50);
  EXPECT_GE(p50, 1000u);
  EXPECT_LE(p50, 1000u + 1000u / 32);
  uint64_t p99 = h.ValueAtPercentile(99);
  EXPECT_GE(p99, 100000u);
  EXPECT_LE(p99, 100000u + 100000u / 32);
  // p0 is the lowest equivalent value, p100 (and above) the highest.
  EXPECT_LE(h.ValueAtPercentile(0), 1000u);
  EXPECT_EQ(h.ValueAtPercentile(100), p99);
  EXPECT_EQ(h.ValueAtPercentile(120), p99);
}

TEST(LatencyHistogramTest, ValuesAreClampedToOneNanosecondAndOneSecond) {
  LatencyHistogram h;
  h.Record(0);
  h.Record(5'000'000'000);
  EXPECT_EQ(h.ValueAtPercentile(0), 1u);
  EXPECT_GE(h.ValueAtPercentile(100), LatencyHistogram::kMaxNs);
  EXPECT_EQ(h.count(), 2u);
}

TEST(LatencyHistogramTest, PowerOfTwoRowsAreCumulativeAndOnlyWhereTheyGrow) {
  LatencyHistogram h;
  for (int i = 0; i < 7; i++) h.Record(500);      // < 1024 ns
  h.Record(1500);                                  // < 2048
  h.Record(3000);                                  // < 4096
  h.Record(40000);                                 // < 65536
  auto rows = h.PowerOfTwoRows();
  ASSERT_EQ(rows.size(), 4u);
  // Redis prints HdrHistogram's equivalent of 1024<<k ns in usec.
  EXPECT_EQ(rows[0].usec, 1);
  EXPECT_EQ(rows[0].cumulative, 7u);
  EXPECT_EQ(rows[1].usec, 2);
  EXPECT_EQ(rows[1].cumulative, 8u);
  EXPECT_EQ(rows[2].usec, 4);
  EXPECT_EQ(rows[2].cumulative, 9u);
  EXPECT_EQ(rows[3].usec, 66);
  EXPECT_EQ(rows[3].cumulative, 10u);
  LatencyHistogram slow;
  slow.Record(3'000'000'000);
  ASSERT_EQ(slow.PowerOfTwoRows().size(), 1u);
  EXPECT_EQ(slow.PowerOfTwoRows()[0].cumulative, 1u);
  EXPECT_TRUE(LatencyHistogram().PowerOfTwoRows().empty());
}

TEST(LatencyHistogramTest, FormatPercentileTrimsAsRedis) {
  EXPECT_EQ(FormatPercentile(50), "50");
  EXPECT_EQ(FormatPercentile(99.9), "99.9");
  EXPECT_EQ(FormatPercentile(99.99), "99.99");
  EXPECT_EQ(FormatPercentile(0), "0");
  EXPECT_EQ(FormatPercentile(100), "100");
}

class LatencyCommandTest : public CommandTest {};

TEST_F(LatencyCommandTest, HistogramOfNamedCommands) {
  for (int i = 0; i < 10; i++) Run({"set", "k" + std::to_string(i), "v"});
  std::string r = Run({"latency", "histogram", "SET", "nosuch", "config"});
  // set only: unknown names are skipped, CONFIG has no samples.
  const std::string head =
      "*2\r\n" + Bulk("set") + "*4\r\n" + Bulk("calls") + Int(10) + Bulk("histogram_usec");
  ASSERT_EQ(r.substr(0, head.size()), head);
  // The last row of the flattened map is cumulative: every call.
  EXPECT_EQ(r.substr(r.size() - 5), Int(10));
  // RESP3: maps.
  client_.resp = 3;
  r = Run({"latency", "histogram", "set"});
  const std::string head3 = "%1\r\n" + Bulk("set") + "%2\r\n" + Bulk("calls");
  EXPECT_EQ(r.substr(0, head3.size()), head3);
}

TEST_F(LatencyCommandTest, HistogramWithoutNamesListsEverySampledRow) {
  Run({"client", "id"});
  Run({"ping"});
  std::string r = Run({"latency", "histogram"});
  EXPECT_EQ(r.substr(0, 4), "*4\r\n");  // client|id, ping
  EXPECT_NE(r.find(Bulk("client|id")), std::string::npos);
  EXPECT_NE(r.find(Bulk("ping")), std::string::npos);
  // A container's name brings its subcommands.
  r = Run({"latency", "histogram", "client"});
  EXPECT_EQ(r.substr(0, 4 + 15), "*2\r\n" + Bulk("client|id"));
  r = Run({"latency", "histogram", "client|id", "client|id"});
  EXPECT_EQ(r.substr(0, 4), "*4\r\n");  // repeated, as Redis
}

TEST_F(LatencyCommandTest, TrackingCanBeTurnedOff) {
  EXPECT_EQ(Run({"config", "get", "latency-tracking"}),
            "*2\r\n" + Bulk("latency-tracking") + Bulk("yes"));
  EXPECT_EQ(Run({"config", "set", "latency-tracking", "no"}), "+OK\r\n");
  Run({"ping"});
  EXPECT_EQ(Run({"latency", "histogram", "ping"}), "*0\r\n");
  EXPECT_NE(Run({"info", "commandstats"}).find("cmdstat_ping:calls=1,"), std::string::npos);
  EXPECT_EQ(Run({"config", "set", "latency-tracking", "maybe"}),
            Err("ERR CONFIG SET failed (possibly related to argument 'latency-tracking') - "
                "argument must be 'yes' or 'no'"));
}

TEST_F(LatencyCommandTest, InfoLatencystatsUsesTheConfiguredPercentiles) {
  EXPECT_EQ(Run({"config", "get", "latency-tracking-info-percentiles"}),
            "*2\r\n" + Bulk("latency-tracking-info-percentiles") + Bulk("50 99 99.9"));
  Run({"ping"});
  std::string info = Run({"info", "latencystats"});
  EXPECT_NE(info.find("\r\n# Latencystats\r\n"), std::string::npos) << info;
  EXPECT_NE(info.find("\nlatency_percentiles_usec_ping:p50="), std::string::npos) << info;
  EXPECT_NE(info.find(",p99="), std::string::npos);
  EXPECT_NE(info.find(",p99.9="), std::string::npos);
  EXPECT_EQ(Run({"info"}).find("Latencystats"), std::string::npos);  // not a default section
  EXPECT_NE(Run({"info", "all"}).find("# Latencystats"), std::string::npos);

  EXPECT_EQ(Run({"config", "set", "latency-tracking-info-percentiles", "50.5 0 100 99.99"}), "+OK\r\n");
  EXPECT_EQ(Run({"config", "get", "latency-tracking-info-percentiles"}),
            "*2\r\n" + Bulk("latency-tracking-info-percentiles") + Bulk("50.5 0 100 99.99"));
  info = Run({"info", "latencystats"});
  EXPECT_NE(info.find("latency_percentiles_usec_ping:p50.5="), std::string::npos) << info;
  size_t ping = info.find("latency_percentiles_usec_ping:p50.5=");
  EXPECT_NE(info.find(",p0=", ping), std::string::npos) << info;
  EXPECT_NE(info.find(",p100=", ping), std::string::npos) << info;
  EXPECT_NE(info.find(",p99.99=", ping), std::string::npos) << info;
  EXPECT_EQ(Run({"config", "set", "latency-tracking-info-percentiles", ""}), "+OK\r\n");
  info = Run({"info", "latencystats"});
  EXPECT_NE(info.find("latency_percentiles_usec_ping:\r\n"), std::string::npos) << info;

  const std::string prefix =
      "ERR CONFIG SET failed (possibly related to argument 'latency-tracking-info-percentiles') - ";
  EXPECT_EQ(Run({"config", "set", "latency-tracking-info-percentiles", "50 abc"}),
            Err(prefix + "Invalid latency-tracking-info-percentiles parameters"));
  EXPECT_EQ(Run({"config", "set", "latency-tracking-info-percentiles", "101"}),
            Err(prefix + "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"));
  EXPECT_EQ(Run({"config", "set", "latency-tracking-info-percentiles", "-1"}),
            Err(prefix + "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"));
}

TEST_F(LatencyCommandTest, ResetstatDropsHistograms) {
  Run({"ping"});
  EXPECT_EQ(Run({"config", "resetstat"}), "+OK\r\n");
  EXPECT_EQ(Run({"latency", "histogram", "ping"}), "*0\r\n");
  EXPECT_EQ(Run({"info", "latencystats"}).find("_ping:"), std::string::npos);
}

}  // namespace
}  // namespace feedkv::server
