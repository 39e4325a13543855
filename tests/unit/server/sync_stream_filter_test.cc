// SyncStreamFilter: log groups in, Redis's SYNC stream out (no trailers, a
// SELECT only where the database changes), whatever the cuts in the input.
#include "server/replication/sync_stream_filter.h"

#include <gtest/gtest.h>

#include <string>

namespace feedkv::server {
namespace {

std::string Cmd(std::initializer_list<std::string> args) {
  std::string s = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) s += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return s;
}

const std::string kTrailer = "#xxh64:0123456789abcdef\r\n";

std::string FeedWhole(const std::string& in) {
  SyncStreamFilter f;
  std::string out;
  f.Feed(in, &out);
  return out;
}

TEST(SyncStreamFilterTest, DropsTrailersAndRepeatedSelects) {
  const std::string log = Cmd({"SELECT", "0"}) + Cmd({"SET", "a", "b"}) + kTrailer +
                          Cmd({"SELECT", "0"}) + Cmd({"INCR", "n"}) + kTrailer +
                          Cmd({"SELECT", "1"}) + Cmd({"RPUSH", "k", "hello"}) + kTrailer +
                          Cmd({"SELECT", "1"}) + Cmd({"DEL", "k"}) + kTrailer;
  EXPECT_EQ(FeedWhole(log), Cmd({"SELECT", "0"}) + Cmd({"SET", "a", "b"}) + Cmd({"INCR", "n"}) +
                                Cmd({"SELECT", "1"}) + Cmd({"RPUSH", "k", "hello"}) + Cmd({"DEL", "k"}));
}

TEST(SyncStreamFilterTest, SameOutputWhereverTheInputIsCut) {
  const std::string big(3000, 'x');
  const std::string log = Cmd({"select", "10"}) + Cmd({"SET", "#not-a-trailer", big}) + kTrailer +
                          Cmd({"SELECT", "10"}) + Cmd({"SELECTX", "1"}) + Cmd({"SELECT", "2", "x"}) +
                          kTrailer + Cmd({"SELECT", "3"}) + Cmd({"PING"}) + kTrailer;
  const std::string want = FeedWhole(log);
  EXPECT_EQ(want, Cmd({"select", "10"}) + Cmd({"SET", "#not-a-trailer", big}) + Cmd({"SELECTX", "1"}) +
                      Cmd({"SELECT", "2", "x"}) + Cmd({"SELECT", "3"}) + Cmd({"PING"}));
  for (size_t step : {1u, 2u, 7u, 64u, 1000u}) {
    SyncStreamFilter f;
    std::string out;
    for (size_t i = 0; i < log.size(); i += step) f.Feed(std::string_view(log).substr(i, step), &out);
    EXPECT_EQ(out, want) << "step " << step;
  }
}

TEST(SyncStreamFilterTest, PassesNewlinesOn) {
  EXPECT_EQ(FeedWhole("\n" + Cmd({"PING"})), "\n" + Cmd({"PING"}));
}

}  // namespace
}  // namespace feedkv::server
