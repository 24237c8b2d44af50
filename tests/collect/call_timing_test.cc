// Timing the needed calls in CUPTI's API callbacks, through the collector and the fake CUPTI.
#include "collect/call_timing.h"

#include <cupti.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collect/collector_fixture.h"
#include "collect/cuda_driver.h"
#include "collect/fake_cupti.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/timeline.h"

namespace gpuidle::internal {
namespace {

using ::testing::Contains;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;
using ::testing::UnorderedElementsAre;

TEST_F(CollectorTest, TimedCallsAreCalledBackForTheNeededIdsOnlyAndRecordNoApiActivity) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  fake::State& s = fake::GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  EXPECT_THAT(s.runtime_callbacks,
              UnorderedElementsAre(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                   CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
                                   CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020,
                                   CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020));
  EXPECT_THAT(s.driver_callbacks,
              UnorderedElementsAre(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
                                   CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize));
  EXPECT_THAT(s.enabled_kinds, Not(Contains(CUPTI_ACTIVITY_KIND_RUNTIME)));
  EXPECT_THAT(s.enabled_kinds, Not(Contains(CUPTI_ACTIVITY_KIND_DRIVER)));
  EXPECT_THAT(s.runtime_ever_enabled, IsEmpty());
  EXPECT_THAT(s.driver_ever_enabled, IsEmpty());
  EXPECT_THAT(s.enabled_kinds, Contains(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
}

TEST_F(CollectorTest, ATimedCallSpansItsEntryAndExitOnItsThread) {
  const int64_t before = fake::FakeClockNs();
  int64_t entered = 0;
  absl::StatusOr<Timeline> t = Collect(
      [&] {
        EXPECT_TRUE(fake::CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, kStreamSync, 9, [&] {
          entered = fake::FakeClockNs();
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }));
        fake::Record(fake::Kernel(0, 7, 1200, 2200, "_Z4spinPfi", 9));
      },
      Options());
  const int64_t after = fake::FakeClockNs();
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_THAT(t->calls, SizeIs(1));
  const HostCall& call = t->calls[0];
  EXPECT_EQ(Name(*t, call.name), "cudaStreamSynchronize");
  EXPECT_EQ(call.category, CallCategory::kSync);
  EXPECT_EQ(call.correlation_id, 9u);
  EXPECT_EQ(call.thread, ThisThreadId());
  EXPECT_GE(call.start_ns, before);
  EXPECT_LE(call.start_ns, entered);
  EXPECT_GE(call.end_ns - call.start_ns, 2'000'000);
  EXPECT_LE(call.end_ns, after);
  EXPECT_EQ(collector().counters().records, 2u) << "the call and the kernel";
}

TEST_F(CollectorTest, ADriverCallInsideATimedRuntimeCallIsTheSameCall) {
  absl::StatusOr<Timeline> t = Collect(
      [] {
        // cudaLaunchKernel calls cuLaunchKernelEx; CUPTI calls back for both.
        EXPECT_TRUE(fake::CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, kLaunch, 21, [] {
          EXPECT_TRUE(fake::CallApi(CUPTI_CB_DOMAIN_DRIVER_API, kLaunchEx, 22, [] {}));
        }));
        // NCCL launches through the driver itself.
        EXPECT_TRUE(fake::CallApi(CUPTI_CB_DOMAIN_DRIVER_API, kLaunchEx, 23, [] {}));
      },
      Options());
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_THAT(t->calls, SizeIs(2));
  EXPECT_EQ(Name(*t, t->calls[0].name), "cudaLaunchKernel");
  EXPECT_EQ(t->calls[0].correlation_id, 21u);
  EXPECT_EQ(Name(*t, t->calls[1].name), "cuLaunchKernelEx");
  EXPECT_EQ(t->calls[1].correlation_id, 23u);
  EXPECT_EQ(t->calls[1].category, CallCategory::kLaunch);
}

TEST_F(CollectorTest, TimedCallsCountTowardsTheRecordLimit) {
  CollectorOptions options = Options();
  options.max_records = 5;
  absl::StatusOr<Timeline> t = Collect(
      [] {
        for (uint32_t c = 1; c <= 20; ++c) fake::CallRuntimeApi(kLaunch, c);
      },
      options);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->info.record_limit_reached);
  EXPECT_GE(t->calls.size(), 5u);
}

TEST_F(CollectorTest, TimedCallsOfManyThreadsAllArriveAcrossManyChunks) {
  constexpr uint32_t kThreads = 4;
  constexpr uint32_t kCallsEach = 5000;  // more than one chunk each
  std::vector<uint32_t> thread_ids(kThreads);
  absl::StatusOr<Timeline> t = Collect(
      [&] {
        std::vector<std::thread> threads;
        for (uint32_t i = 0; i < kThreads; ++i) {
          threads.emplace_back([&thread_ids, i] {
            thread_ids[i] = ThisThreadId();
            for (uint32_t c = 0; c < kCallsEach; ++c) {
              fake::CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, kLaunch, 1 + i * kCallsEach + c, [] {});
            }
          });
        }
        for (std::thread& thread : threads) thread.join();
      },
      Options());
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_THAT(t->calls, SizeIs(kThreads * kCallsEach));
  std::set<uint64_t> correlations;
  std::map<uint32_t, int> per_thread;
  for (const HostCall& c : t->calls) {
    correlations.insert(c.correlation_id);
    ++per_thread[static_cast<uint32_t>(c.thread)];
  }
  EXPECT_THAT(correlations, SizeIs(kThreads * kCallsEach));
  for (uint32_t id : thread_ids) EXPECT_EQ(per_thread[id], static_cast<int>(kCallsEach));
  EXPECT_EQ(t->info.dropped_records, 0u);
}

TEST_F(CollectorTest, KnowsWhichThreadsAreAwayFromCudaForTheHostSampler) {
  const uint64_t me = static_cast<uint64_t>(syscall(SYS_gettid));
  std::vector<uint64_t> away;
  ThreadsAwayFromCuda(fake::FakeClockNs(), 0, &away);
  EXPECT_THAT(away, IsEmpty()) << "nothing collects";
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  ThreadsAwayFromCuda(fake::FakeClockNs(), 0, &away);
  EXPECT_THAT(away, Not(Contains(me))) << "no CUDA call of this collection yet";
  EXPECT_TRUE(fake::CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, kStreamSync, 3, [&] {
    ThreadsAwayFromCuda(fake::FakeClockNs(), 0, &away);
    EXPECT_THAT(away, Not(Contains(me))) << "inside a call";
  }));
  ThreadsAwayFromCuda(fake::FakeClockNs(), 0, &away);
  EXPECT_THAT(away, Contains(me));
  ThreadsAwayFromCuda(fake::FakeClockNs(), int64_t{3600} * 1'000'000'000, &away);
  EXPECT_THAT(away, Not(Contains(me))) << "not away for an hour";
  // Another thread's calls make it a candidate; this thread stays one.
  std::thread other([] { fake::CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, kLaunch, 4, [] {}); });
  other.join();  // it has ended: its slot is free again
  ThreadsAwayFromCuda(fake::FakeClockNs(), 0, &away);
  EXPECT_THAT(away, SizeIs(1));
  ASSERT_TRUE(collector().Stop().ok());
  ThreadsAwayFromCuda(fake::FakeClockNs(), 0, &away);
  EXPECT_THAT(away, IsEmpty()) << "stopped";
}

TEST_F(CollectorTest, TimedCallsStopWithTheCollection) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  ASSERT_TRUE(collector().Stop().ok());
  EXPECT_FALSE(fake::CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, kLaunch, 5, [] {}));
}

TEST_F(CollectorTest, ACallThatBeganInTheLastCollectionIsNotTimedInTheNext) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  absl::StatusOr<Timeline> first;
  // The sync's entry comes during the first collection, its exit during the second.
  EXPECT_TRUE(fake::CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, kStreamSync, 6, [&] {
    first = collector().Stop();
    ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  }));
  fake::CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, kLaunch, 7, [] {});
  absl::StatusOr<Timeline> second = collector().Stop();
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_THAT(first->calls, IsEmpty());  // it had not ended yet
  ASSERT_THAT(second->calls, SizeIs(1));
  EXPECT_EQ(second->calls[0].correlation_id, 7u);
}

}  // namespace
}  // namespace gpuidle::internal
