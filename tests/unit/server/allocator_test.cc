#include "server/allocator.h"

#include <gtest/gtest.h>

#include <malloc.h>

#include <cstdint>
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

TEST(AllocatorTest, BackendReportsItsTotals) {
  std::vector<void*> blocks;
  for (int i = 0; i < 1000; i++) blocks.push_back(std::malloc(1000));
  const AllocatorStats st = ReadAllocatorStats();
  EXPECT_GE(st.allocated, 1000u * 1000u);
  EXPECT_GE(st.active, st.allocated);
  for (void* p : blocks) std::free(p);
#if defined(FEEDKV_JEMALLOC)
  EXPECT_EQ(AllocatorName().rfind("jemalloc-", 0), 0u) << AllocatorName();
  EXPECT_NE(AllocatorReport().find("jemalloc statistics"), std::string::npos);
  EXPECT_GE(st.resident, st.active);
#else
  EXPECT_EQ(AllocatorName(), "libc");
  EXPECT_EQ(AllocatorReport(), "Stats not supported for the current allocator");
#endif
  ReleaseFreeMemory();
}

TEST(AllocatorTest, UsableSizeAndCallocAgreeWithTheCount) {
  const size_t before = AllocatedBytes();
  auto* p = static_cast<unsigned char*>(std::calloc(1000, 10));
  ASSERT_NE(p, nullptr);
  for (int i = 0; i < 10000; i++) ASSERT_EQ(p[i], 0);
  const size_t usable = malloc_usable_size(p);
  EXPECT_GE(usable, 10000u);
  EXPECT_GE(AllocatedBytes(), before + usable);
  std::free(p);
#if !defined(__SANITIZE_ADDRESS__)  // ASan reports the overflow and stops
  volatile size_t huge = SIZE_MAX / 2;  // opaque to the compiler's own check
  EXPECT_EQ(std::calloc(huge, 4), nullptr);  // n * size overflows: refused
#endif
  EXPECT_LT(AllocatedBytes(), before + 4096);
}

}  // namespace
}  // namespace feedkv::server
