#include "server/allocator.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace feedkv::server {
namespace {

TEST(AllocatorTest, CountsWhatMallocHandsOutAndFreeReturns) {
  const size_t before = AllocatedBytes();
  void* p = std::malloc(1 << 20);
  ASSERT_NE(p, nullptr);
  EXPECT_GE(AllocatedBytes(), before + (1 << 20));
  std::free(p);
  EXPECT_LT(AllocatedBytes(), before + 4096);
}

TEST(AllocatorTest, FollowsReallocInBothDirections) {
  const size_t before = AllocatedBytes();
  void* p = std::malloc(100);
  p = std::realloc(p, 200000);
  ASSERT_NE(p, nullptr);
  EXPECT_GE(AllocatedBytes(), before + 200000);
  p = std::realloc(p, 50);
  EXPECT_LT(AllocatedBytes(), before + 4096);
  std::free(p);
  EXPECT_LT(AllocatedBytes(), before + 4096);
}

TEST(AllocatorTest, CountsOperatorNewAndAlignedBlocks) {
  const size_t before = AllocatedBytes();
  {
    auto v = std::make_unique<std::vector<char>>(300000);
    void* a = std::aligned_alloc(4096, 8192);
    ASSERT_NE(a, nullptr);
    EXPECT_GE(AllocatedBytes(), before + 300000 + 8192);
    std::free(a);
  }
  EXPECT_LT(AllocatedBytes(), before + 4096);
}

TEST(AllocatorTest, BlocksFreedByAnotherThreadThanTheCommandThreadBalance) {
  MarkCommandThread();
  const size_t before = AllocatedBytes();
  void* mine = std::malloc(500000);
  void* theirs = nullptr;
  std::thread([&] { theirs = std::malloc(700000); }).join();
  EXPECT_GE(AllocatedBytes(), before + 1200000);
  std::thread([&] { std::free(mine); }).join();
  std::free(theirs);
  EXPECT_LT(AllocatedBytes(), before + 4096);
}

}  // namespace
}  // namespace feedkv::server
