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

TEST(Communication, NamesTheCollectiveOfNcclKernelsOfEveryGeneration) {
  EXPECT_EQ(CollectiveOpOfKernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgs)"),
            "allreduce");
  EXPECT_EQ(CollectiveOpOfKernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"),
            "allreduce");
  EXPECT_EQ(CollectiveOpOfKernel("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"),
            "sendrecv");
  EXPECT_EQ(CollectiveOpOfKernel("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL"), "reducescatter");
  EXPECT_EQ(CollectiveOpOfKernel("rcclGenericKernel(int)"), "rcclGenericKernel");
}

// The device report AnalyzeDevice would start from: its steady state.
DeviceReport Steady(int64_t start_us, int64_t end_us) {
  DeviceReport d;
  d.steady_start_ns = start_us * kUs;
  d.steady_end_ns = end_us * kUs;
  return d;
}

TEST(Communication, CountsEachKindOfCollectiveInTheSteadyStateAndListsEveryOne) {
  Timeline t = TimelineBuilder()
                   .NcclKernel(0, 10)   // start-up
                   .NcclKernel(20, 40)  // exposed 10 us: [30, 40)
                   .Kernel(10, 30)
                   .NcclKernel(50, 60)
                   .Build();
  // The second and third collectives carry the trace's arguments: one kind of their own.
  const StringId group = t.strings.Intern("0");
  const StringId op = t.strings.Intern("allgather");
  t.collectives.push_back(CollectiveArgs{group, op, 7, 4096});
  for (DeviceOp& o : t.devices[0].ops) {
    if (o.communication && o.start_ns >= 20 * kUs) o.collective = 0;
  }
  DeviceReport d = Steady(10, 100);
  const std::vector<Interval> compute =
      KernelUnion(t.devices[0], Interval{10 * kUs, 100 * kUs}, false);
  AddCollectives(t, t.devices[0], Interval{0, 100 * kUs}, compute, &d);
  ASSERT_EQ(d.collectives.size(), 2u);
  const CollectiveStats& k = d.collectives[0];  // most time first
  EXPECT_EQ(k.group, "0");
  EXPECT_EQ(k.op, "allgather");
  EXPECT_EQ(k.count, 2);
  EXPECT_EQ(k.ns, 30 * kUs);
  EXPECT_EQ(k.exposed_ns, 20 * kUs);
  EXPECT_EQ(k.bytes, 8192);
  EXPECT_EQ(d.collectives[1].count, 0) << "the start-up collective is listed, not counted";
  ASSERT_EQ(d.collective_timings.size(), 3u);
  EXPECT_EQ(d.collective_timings[0].kind, 1);
  EXPECT_EQ(d.collective_timings[1].kind, 0);
  EXPECT_EQ(d.collective_timings[1].seq, 7);
  EXPECT_EQ(d.collective_timings[2].start_ns, 50 * kUs);
  EXPECT_EQ(d.collectives_not_listed, 0);
}

TEST(Communication, ListsAContiguousStretchOfCollectivesFromTheSteadyState) {
  TimelineBuilder b;
  const size_t n = DeviceReport::kMaxCollectiveRows + 10;
  for (size_t i = 0; i < n; ++i) {
    const double at = 10.0 * static_cast<double>(i);
    b.NcclKernel(at, at + 5);
  }
  const Timeline t = b.Build();
  DeviceReport d = Steady(50, 10 * n);  // five collectives of start-up
  AddCollectives(t, t.devices[0], Interval{0, 10 * static_cast<int64_t>(n) * kUs}, {}, &d);
  ASSERT_EQ(d.collective_timings.size(), DeviceReport::kMaxCollectiveRows);
  EXPECT_EQ(d.collective_timings.front().start_ns, 50 * kUs) << "the steady state's first";
  EXPECT_EQ(d.collectives_not_listed, 10);
  EXPECT_EQ(d.collectives[0].count, static_cast<int64_t>(n) - 5);
}

}  // namespace
}  // namespace gpuidle::internal
