// Detaching CUPTI when a collection stops in the middle of a program.
#include "collect/cupti_detach.h"

#include <cupti.h>

#include <cstdint>
#include <mutex>

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

using ::testing::SizeIs;

TEST_F(CollectorTest, DetachesCuptiAtTheExitOfItsOwnDriverCallAndCanStartAgain) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), DetachableOptions()).ok());
  fake::Record(fake::Kernel(0, 7, 1000, 1050, "_Z5firstv", 1));
  const uint64_t detaches = collector().counters().detaches;
  absl::StatusOr<Timeline> first = collector().Stop(CuptiAfterStop::kDetach);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_THAT(first->devices, SizeIs(1));
  EXPECT_THAT(first->devices[0].ops, SizeIs(1)) << "the records came before the detach";
  EXPECT_EQ(collector().counters().detaches, detaches + 1);
  {
    fake::State& s = fake::GetState();
    std::lock_guard<std::mutex> lock(s.mu);
    EXPECT_EQ(s.finalize_calls, 1);
    EXPECT_FALSE(s.subscribed);
    ASSERT_GE(s.calls.size(), 2u);
    // The detach's own subscriber goes first, then CUPTI.
    EXPECT_EQ(s.calls[s.calls.size() - 2], "Unsubscribe");
    EXPECT_EQ(s.calls.back(), "Finalize");
  }

  // CUPTI forgot the buffer callbacks: the next collection registers them again.
  absl::StatusOr<Timeline> second = Collect(
      [] { fake::Record(fake::Kernel(0, 7, 5000, 5050, "_Z6secondv", 2)); }, DetachableOptions());
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_THAT(second->devices, SizeIs(1));
  ASSERT_THAT(second->devices[0].ops, SizeIs(1));
  EXPECT_EQ(Name(*second, second->devices[0].ops[0].name), "second()");
}

TEST_F(CollectorTest, StaysAttachedWhenNoCallbackComesOrNoDetachWasAsked) {
  // No driver: the trigger call never reaches CUPTI, so nothing is finalized and the detach's
  // subscriber is released again.
  ASSERT_TRUE(Collect([] {}, Options()).ok());  // the default stop stays attached
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  ASSERT_TRUE(collector().Stop(CuptiAfterStop::kDetach).ok());
  fake::State& s = fake::GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  EXPECT_EQ(s.finalize_calls, 0);
  EXPECT_FALSE(s.subscribed);
  EXPECT_EQ(s.subscribe_calls, 3);  // two collections, one try at detaching
  EXPECT_EQ(s.unsubscribe_calls, 3);
}

TEST_F(CollectorTest, AFailedFinalizeIsNotCountedAsADetach) {
  fake::GetState().finalize_result = CUPTI_ERROR_UNKNOWN;
  ASSERT_TRUE(collector().Start(fake::FakeApi(), DetachableOptions()).ok());
  const uint64_t detaches = collector().counters().detaches;
  ASSERT_TRUE(collector().Stop(CuptiAfterStop::kDetach).ok());
  EXPECT_EQ(Locked<int>([](fake::State& s) { return s.finalize_calls; }), 1);
  EXPECT_EQ(collector().counters().detaches, detaches);
}

TEST_F(CollectorTest, StaysAttachedWhileCuptiHoldsABuffer) {
  fake::GetState().keeps_held_buffers = true;
  ASSERT_TRUE(collector().Start(fake::FakeApi(), DetachableOptions()).ok());
  ASSERT_TRUE(fake::HoldBuffer());
  ASSERT_TRUE(collector().Stop(CuptiAfterStop::kDetach).ok());
  EXPECT_EQ(Locked<int>([](fake::State& s) { return s.finalize_calls; }), 0)
      << "a buffer CUPTI still held would be lost to the pool";
  // Given back, as CUPTI would at its next flush.
  fake::GetState().keeps_held_buffers = false;
  fake::Deliver();
}

}  // namespace
}  // namespace gpuidle::internal
