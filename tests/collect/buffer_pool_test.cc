#include "collect/buffer_pool.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuidle::internal {
namespace {

TEST(BufferPool, HandsOutEveryBufferOnceThenNothing) {
  BufferPool pool(1024, 4);
  std::set<uint8_t*> buffers;
  for (int i = 0; i < 4; ++i) {
    uint8_t* b = pool.Acquire();
    ASSERT_NE(b, nullptr) << "buffer " << i;
    EXPECT_TRUE(buffers.insert(b).second) << "buffer " << i << " handed out twice";
  }
  EXPECT_EQ(pool.in_use(), 4u);
  EXPECT_EQ(pool.exhausted(), 0u);

  EXPECT_EQ(pool.Acquire(), nullptr);
  EXPECT_EQ(pool.Acquire(), nullptr);
  EXPECT_EQ(pool.exhausted(), 2u);
  EXPECT_EQ(pool.in_use(), 4u);
}

TEST(BufferPool, BuffersDoNotOverlap) {
  BufferPool pool(1000, 3);
  std::vector<uint8_t*> buffers;
  for (int i = 0; i < 3; ++i) buffers.push_back(pool.Acquire());
  std::sort(buffers.begin(), buffers.end());
  for (size_t i = 1; i < buffers.size(); ++i) {
    EXPECT_GE(static_cast<size_t>(buffers[i] - buffers[i - 1]), pool.buffer_bytes());
  }
}

TEST(BufferPool, ReleaseMakesExactlyOneBufferAvailableAgain) {
  BufferPool pool(256, 2);
  uint8_t* a = pool.Acquire();
  uint8_t* b = pool.Acquire();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(pool.Acquire(), nullptr);

  EXPECT_TRUE(pool.Release(a));
  EXPECT_EQ(pool.in_use(), 1u);
  EXPECT_EQ(pool.Acquire(), a);
  EXPECT_EQ(pool.Acquire(), nullptr);
  EXPECT_EQ(pool.in_use(), 2u);
}

TEST(BufferPool, OwnsOnlyTheStartOfItsOwnBuffers) {
  BufferPool pool(128, 2);
  uint8_t* a = pool.Acquire();
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(pool.Owns(a));
  EXPECT_FALSE(pool.Owns(a + 1));
  EXPECT_FALSE(pool.Owns(a + 8));
  EXPECT_FALSE(pool.Owns(nullptr));

  // One past the last buffer, and memory that is not the pool's at all.
  EXPECT_FALSE(pool.Owns(a + pool.buffer_bytes() * pool.count()));
  auto foreign = std::make_unique<uint8_t[]>(128);
  EXPECT_FALSE(pool.Owns(foreign.get()));
}

TEST(BufferPool, ReleaseIgnoresForeignAndMisalignedPointers) {
  BufferPool pool(128, 1);
  uint8_t* a = pool.Acquire();
  ASSERT_NE(a, nullptr);
  auto foreign = std::make_unique<uint8_t[]>(128);

  EXPECT_FALSE(pool.Release(foreign.get()));
  EXPECT_FALSE(pool.Release(a + 8));
  EXPECT_FALSE(pool.Release(nullptr));
  EXPECT_EQ(pool.in_use(), 1u);
  EXPECT_EQ(pool.Acquire(), nullptr) << "a rejected release must not free a buffer";
}

TEST(BufferPool, BuffersAreEightByteAlignedEvenForOddSizes) {
  BufferPool pool(1001, 5);
  EXPECT_EQ(pool.buffer_bytes() % 8, 0u);
  EXPECT_GE(pool.buffer_bytes(), 1001u);
  for (int i = 0; i < 5; ++i) {
    uint8_t* b = pool.Acquire();
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 8, 0u) << "buffer " << i;
  }
}

TEST(BufferPool, CountThatIsNotAPowerOfTwoStillHandsOutExactlyCount) {
  BufferPool pool(64, 5);  // the free ring has 8 slots
  int acquired = 0;
  while (pool.Acquire() != nullptr) ++acquired;
  EXPECT_EQ(acquired, 5);
}

TEST(BufferPool, EmptyPoolNeverHandsOutABuffer) {
  BufferPool pool(64, 0);
  EXPECT_EQ(pool.Acquire(), nullptr);
  EXPECT_EQ(pool.exhausted(), 1u);
  EXPECT_EQ(pool.in_use(), 0u);
}

TEST(BufferPool, ManyThreadsNeverHoldTheSameBufferAtOnce) {
  constexpr size_t kBuffers = 6;
  constexpr int kThreads = 8;
  constexpr int kRoundsPerThread = 20000;
  BufferPool pool(64, kBuffers);
  uint8_t* const base = [&] {
    // The lowest buffer address: buffers are consecutive, so index = (b - base) / buffer_bytes.
    std::vector<uint8_t*> all;
    for (size_t i = 0; i < kBuffers; ++i) all.push_back(pool.Acquire());
    uint8_t* lowest = *std::min_element(all.begin(), all.end());
    for (uint8_t* b : all) pool.Release(b);
    return lowest;
  }();
  ASSERT_EQ(pool.in_use(), 0u);

  std::atomic<int> holders[kBuffers] = {};
  std::atomic<int> double_handouts{0};
  std::atomic<int> acquisitions{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      while (!go.load()) {
      }
      for (int i = 0; i < kRoundsPerThread; ++i) {
        uint8_t* b = pool.Acquire();
        if (b == nullptr) continue;
        acquisitions.fetch_add(1, std::memory_order_relaxed);
        const size_t index = static_cast<size_t>(b - base) / pool.buffer_bytes();
        if (index >= kBuffers || holders[index].fetch_add(1) != 0) double_handouts.fetch_add(1);
        // Write to the whole buffer while holding it, so that sanitizers see any sharing.
        for (size_t j = 0; j < pool.buffer_bytes(); ++j) b[j] = static_cast<uint8_t>(i);
        if (index < kBuffers) holders[index].fetch_sub(1);
        EXPECT_TRUE(pool.Release(b));
      }
    });
  }
  go.store(true);
  for (std::thread& t : threads) t.join();

  EXPECT_EQ(double_handouts.load(), 0);
  EXPECT_GT(acquisitions.load(), 0);
  EXPECT_EQ(pool.in_use(), 0u);
  // Everything came back: all buffers can be taken again, and no more.
  std::set<uint8_t*> again;
  for (size_t i = 0; i < kBuffers; ++i) again.insert(pool.Acquire());
  EXPECT_EQ(again.size(), kBuffers);
  EXPECT_EQ(again.count(nullptr), 0u);
  EXPECT_EQ(pool.Acquire(), nullptr);
}

TEST(BufferPool, ABufferReturnedTwiceEntersTheFreeListOnce) {
  BufferPool pool(256, 2);
  uint8_t* a = pool.Acquire();
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(pool.Release(a));
  EXPECT_FALSE(pool.Release(a)) << "a second return of the same buffer";
  EXPECT_EQ(pool.in_use(), 0u);
  // Two buffers, each handed out once: a duplicate in the free list would hand out a third.
  std::set<uint8_t*> taken = {pool.Acquire(), pool.Acquire()};
  EXPECT_EQ(taken.size(), 2u);
  EXPECT_EQ(taken.count(nullptr), 0u);
  EXPECT_EQ(pool.Acquire(), nullptr);
}

TEST(BufferPool, TellsWhichBuffersHandedOutSinceATimeNeverCameBack) {
  BufferPool pool(256, 4);
  uint8_t* before = pool.Acquire(/*now_ns=*/100);  // an earlier collection's, never returned
  uint8_t* first = pool.Acquire(/*now_ns=*/500);
  uint8_t* second = pool.Acquire(/*now_ns=*/700);
  ASSERT_NE(before, nullptr);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);

  BufferPool::Outstanding o = pool.OutstandingSince(/*since_ns=*/200);
  EXPECT_EQ(o.count, 2u);
  EXPECT_EQ(o.earliest_ns, 500);

  ASSERT_TRUE(pool.Release(first));
  o = pool.OutstandingSince(200);
  EXPECT_EQ(o.count, 1u);
  EXPECT_EQ(o.earliest_ns, 700);

  ASSERT_TRUE(pool.Release(second));
  EXPECT_EQ(pool.OutstandingSince(200).count, 0u);
  EXPECT_EQ(pool.OutstandingSince(0).count, 1u) << "the earlier one is still out";
}

}  // namespace
}  // namespace gpuidle::internal
