// Unit tests for CommandQueue: records come back in order with their exact
// bytes across block boundaries, huge arguments get a block of their own, and
// Clear gives every block back.
#include "server/command_queue.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/command_table.h"

namespace feedkv::server {
namespace {

std::vector<std::vector<std::string>> Drain(const CommandQueue& q,
                                            std::vector<const CommandSpec*>* specs = nullptr) {
  std::vector<std::vector<std::string>> out;
  q.ForEach([&](const CommandSpec& spec, std::span<const std::string_view> args) {
    if (specs != nullptr) specs->push_back(&spec);
    out.emplace_back(args.begin(), args.end());
  });
  return out;
}

TEST(CommandQueue, ReturnsEveryCommandInOrderWithItsBytes) {
  CommandTable table;
  const CommandSpec* set = table.Find("set");
  const CommandSpec* ping = table.Find("ping");
  ASSERT_NE(set, nullptr);
  ASSERT_NE(ping, nullptr);
  CommandQueue q;
  std::vector<std::vector<std::string>> want;
  std::vector<const CommandSpec*> want_specs;
  for (int i = 0; i < 5000; ++i) {  // many blocks
    std::vector<std::string> args = {"SET", "k" + std::to_string(i),
                                     std::string(static_cast<size_t>(i % 300), 'a' + i % 26)};
    if (i % 7 == 0) args = {"PING"};
    if (i % 11 == 0) args.push_back(std::string("\0\r\n", 3));  // binary-safe, empty-safe
    std::vector<std::string_view> views(args.begin(), args.end());
    const CommandSpec* spec = i % 7 == 0 ? ping : set;
    q.Push(spec, views);
    want.push_back(args);
    want_specs.push_back(spec);
  }
  EXPECT_EQ(q.size(), 5000u);
  std::vector<const CommandSpec*> specs;
  EXPECT_EQ(Drain(q, &specs), want);
  EXPECT_EQ(specs, want_specs);
  // Packed: not much more than the bytes themselves.
  size_t payload = 0;
  for (const auto& args : want) {
    for (const auto& a : args) payload += a.size();
  }
  EXPECT_LT(q.bytes(), 2 * payload + (64 << 10));
}

TEST(CommandQueue, HugeArgumentGetsItsOwnBlockAndClearFreesAll) {
  CommandTable table;
  const CommandSpec* set = table.Find("set");
  CommandQueue q;
  const std::string big(20 << 20, 'x');  // over the largest block
  const std::vector<std::string_view> a = {"SET", "small", "v"};
  const std::vector<std::string_view> b = {"SET", "big", big};
  q.Push(set, a);
  q.Push(set, b);
  q.Push(set, a);
  auto got = Drain(q);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[1][2].size(), big.size());
  EXPECT_EQ(got[2], (std::vector<std::string>{"SET", "small", "v"}));
  EXPECT_GE(q.bytes(), big.size());
  std::vector<std::vector<std::string>> drained;
  q.Drain([&](const CommandSpec&, std::span<const std::string_view> args) {
    drained.emplace_back(args.begin(), args.end());
  });
  EXPECT_EQ(drained, got);
  EXPECT_TRUE(q.empty());
  q.Push(set, a);
  q.Clear();
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.bytes(), 0u);
  EXPECT_TRUE(Drain(q).empty());
}

}  // namespace
}  // namespace feedkv::server
