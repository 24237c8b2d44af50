// The communication stage: collective time on a device, the part no other kernel overlaps, and
// the wait of each rank's collectives for their peers.
#include "analysis/communication.h"

#include <vector>

#include "gtest/gtest.h"
#include "testing/analysis_helpers.h"
#include "testing/timeline_builder.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::kUs;
using ::gpuidle::testing::TimelineBuilder;

TEST(Communication, KernelUnionMergesOneKindClippedToTheWindow) {
  const Timeline t = TimelineBuilder()
                         .NcclKernel(0, 20)
                         .NcclKernel(10, 30)
                         .Kernel(25, 60)
                         .NcclKernel(50, 80)
                         .Memset(80, 90)
                         .Build();
  const DeviceTimeline& d = t.devices[0];
  const std::vector<Interval> comm = KernelUnion(d, Interval{5 * kUs, 70 * kUs}, true);
  ASSERT_EQ(comm.size(), 2u);
  EXPECT_EQ(comm[0].start_ns, 5 * kUs);  // clipped
  EXPECT_EQ(comm[0].end_ns, 30 * kUs);   // merged
  EXPECT_EQ(comm[1].start_ns, 50 * kUs);
  EXPECT_EQ(comm[1].end_ns, 70 * kUs);
  EXPECT_EQ(TotalLength(comm), 45 * kUs);
  const std::vector<Interval> compute = KernelUnion(d, Interval{0, 100 * kUs}, false);
  ASSERT_EQ(compute.size(), 1u);  // the memset is no kernel
  EXPECT_EQ(TotalLength(compute), 35 * kUs);
  // Exposed: collective time while no compute kernel runs: [5,25) and [60,70).
  EXPECT_EQ(LengthNotCovered(comm, compute), 30 * kUs);
  EXPECT_EQ(LengthNotCovered(comm, {}), 45 * kUs);
  EXPECT_EQ(LengthNotCovered({}, compute), 0);
}

Report TwoRankReport(int64_t steady_start_us) {
  Report report;
  for (int rank : {0, 1}) {
    DeviceReport& d = report.devices.emplace_back();
    d.rank = rank;
    d.device = 0;
    d.steady_start_ns = rank == 0 ? steady_start_us * kUs : 0;
    d.steady_end_ns = 1000 * kUs;
  }
  return report;
}

TEST(Communication, EachRanksCollectivesWaitForTheLatestPeer) {
  const Timeline early = TimelineBuilder().Rank(0).NcclKernel(10, 50).NcclKernel(100, 150).Build();
  const Timeline late = TimelineBuilder().Rank(1).NcclKernel(30, 50).NcclKernel(120, 150).Build();
  const Timeline* ranks[] = {&early, &late};
  Report report = TwoRankReport(0);
  AddCommWait(ranks, &report);
  ASSERT_TRUE(report.devices[0].comm_wait_ns.has_value());
  EXPECT_EQ(*report.devices[0].comm_wait_ns, 40 * kUs);  // 20 us in each collective
  EXPECT_EQ(report.devices[1].comm_wait_ns, 0);
  // Waits before the steady state (while ranks start up) are not counted.
  Report steady_later = TwoRankReport(50);
  AddCommWait(ranks, &steady_later);
  EXPECT_EQ(steady_later.devices[0].comm_wait_ns, 20 * kUs);
}

TEST(Communication, AWaitIsAtMostTheCollectivesDuration) {
  const Timeline early = TimelineBuilder().Rank(0).NcclKernel(0, 5).Build();
  const Timeline late = TimelineBuilder().Rank(1).NcclKernel(100, 110).Build();
  const Timeline* ranks[] = {&early, &late};
  Report report = TwoRankReport(0);
  AddCommWait(ranks, &report);
  EXPECT_EQ(report.devices[0].comm_wait_ns, 5 * kUs);
}

TEST(Communication, OneRankHasNoPeersToWaitFor) {
  const Timeline only = TimelineBuilder().NcclKernel(0, 5).Build();
  const Timeline* ranks[] = {&only};
  Report report;
  report.devices.emplace_back();
  AddCommWait(ranks, &report);
  EXPECT_FALSE(report.devices[0].comm_wait_ns.has_value());
}

}  // namespace
}  // namespace gpuidle::internal
