// The steps stage: which ranges are steps, which are steady, how they are cut onto a device.
#include "analysis/steps.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/analysis_helpers.h"
#include "testing/timeline_builder.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::kUs;
using ::gpuidle::testing::TimelineBuilder;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> Names(const Timeline& t, const std::vector<int32_t>& steps) {
  std::vector<std::string> names;
  for (int32_t s : steps) names.emplace_back(t.strings.Get(t.ranges[s].name));
  return names;
}

TEST(Steps, OutermostStepRangesInTimeOrder) {
  const Timeline t = TimelineBuilder()
                         .Step(1, 0, 100, "ProfilerStep#1")
                         .Step(1, 10, 20, "inner step")  // nested in step 1
                         .Step(1, 100, 200, "ProfilerStep#2")
                         .Op(1, 0, 50, "aten::mm")
                         .Kernel(10, 20)
                         .Build();
  const std::vector<int32_t> steps = StepRanges(t);
  EXPECT_THAT(Names(t, steps), ElementsAre("ProfilerStep#1", "ProfilerStep#2"));
  EXPECT_EQ(StepSource(t, steps), "ProfilerStep");
  EXPECT_EQ(StepSource(t, {}), "");
}

TEST(Steps, OptimizerStepsStandInOnlyWithoutMarkedSteps) {
  const Timeline marked = TimelineBuilder()
                              .Step(1, 0, 100, "gpuidle.step#1")
                              .Step(1, 50, 150, "optimizer.step#1")
                              .Kernel(10, 20)
                              .Build();
  EXPECT_THAT(Names(marked, StepRanges(marked)), ElementsAre("gpuidle.step#1"));
  EXPECT_EQ(StepSource(marked, StepRanges(marked)), "gpuidle.step");
  const Timeline unmarked = TimelineBuilder()
                                .Step(1, 0, 100, "optimizer.step#1")
                                .Step(1, 100, 200, "optimizer.step#2")
                                .Kernel(10, 20)
                                .Build();
  EXPECT_THAT(Names(unmarked, StepRanges(unmarked)),
              ElementsAre("optimizer.step#1", "optimizer.step#2"));
  EXPECT_EQ(StepSource(unmarked, StepRanges(unmarked)), "optimizer.step");
  const Timeline other = TimelineBuilder().Step(1, 0, 100, "epoch 1").Kernel(10, 20).Build();
  EXPECT_EQ(StepSource(other, StepRanges(other)), "marker");
}

TEST(Steps, AFarLongerFirstAndLastStepAreNotSteady) {
  TimelineBuilder b;
  b.Step(1, 0, 10'000, "s1");  // 10 ms: far longer than 1 ms, and 9 ms more
  for (int i = 0; i < 4; ++i) {
    b.Step(1, 10'000 + i * 1000, 11'000 + i * 1000, "s");
  }
  b.Step(1, 14'000, 30'000, "last");
  b.Kernel(1, 2);
  const Timeline t = b.Build();
  const std::vector<int32_t> steps = StepRanges(t);
  ASSERT_EQ(steps.size(), 6u);
  const SteadySteps steady = FindSteadySteps(t, steps, AnalysisOptions());
  EXPECT_TRUE(steady.warm_up_step);
  EXPECT_EQ(steady.first, 1u);
  EXPECT_EQ(steady.end, 5u);
  EXPECT_EQ(steady.count(), 4u);
  AnalysisOptions strict;
  strict.one_off_min_ns = 20'000 * kUs;  // no step is that much longer
  EXPECT_EQ(FindSteadySteps(t, steps, strict).count(), 6u);
}

TEST(Steps, TwoStepsAreBothSteady) {
  const Timeline t = TimelineBuilder()
                         .Step(1, 0, 100'000, "a")
                         .Step(1, 100'000, 101'000, "b")
                         .Kernel(1, 2)
                         .Build();
  const SteadySteps steady = FindSteadySteps(t, StepRanges(t), AnalysisOptions());
  EXPECT_FALSE(steady.warm_up_step);  // needs three steps to compare with
  EXPECT_EQ(steady.count(), 2u);
}

// A step begins on the device when its range has begun and the previous step's work is done.
TEST(Steps, CutStepsWaitsForThePreviousStepsGpuWork) {
  // clang-format off
  const Timeline t = TimelineBuilder()
      .Step(1, 0, 100, "s1").Step(1, 100, 200, "s2")
      .Launch(1, 10, 20).Kernel(30, 150)   // step 1's kernel runs into step 2's range
      .Launch(1, 110, 120).Kernel(160, 190)
      .Build();
  // clang-format on
  const TimelineIndex index(t, AnalysisOptions());
  const std::vector<int32_t> steps = StepRanges(t);
  const std::vector<Interval> spans = CutSteps(index, t.devices[0], steps, Interval{0, 200 * kUs});
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].start_ns, 0);
  EXPECT_EQ(spans[0].end_ns, 150 * kUs);
  EXPECT_EQ(spans[1].start_ns, 150 * kUs);
  EXPECT_EQ(spans[1].end_ns, 200 * kUs);
  // Clamped to the window.
  const std::vector<Interval> clipped =
      CutSteps(index, t.devices[0], steps, Interval{0, 180 * kUs});
  EXPECT_EQ(clipped[1].end_ns, 180 * kUs);
}

TEST(Steps, FillStepsSharesBusyAndIdleTimeOutAndListsAtMostMaxRows) {
  const Timeline t = TimelineBuilder()
                         .Step(1, 0, 100, "s1")
                         .Step(1, 100, 200, "s2")
                         .Step(1, 200, 300, "s3")
                         .Kernel(1, 2)
                         .Build();
  const std::vector<int32_t> steps = StepRanges(t);
  const std::vector<Interval> spans = {
      {0, 100 * kUs}, {100 * kUs, 200 * kUs}, {200 * kUs, 300 * kUs}};
  const std::vector<Interval> busy = {{10 * kUs, 120 * kUs}};
  std::vector<IdlePiece> pieces(2);
  pieces[0].start_ns = 120 * kUs;
  pieces[0].end_ns = 150 * kUs;
  pieces[0].subcause = Subcause::kHostSync;
  pieces[1].start_ns = 150 * kUs;
  pieces[1].end_ns = 210 * kUs;
  pieces[1].subcause = Subcause::kDataLoader;
  DeviceReport device;
  device.rank = 2;
  device.device = 1;
  std::vector<StepReport> out;
  FillSteps(t, steps, spans, 0, 3, busy, pieces, device, /*max_rows=*/2, &out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].name, "s1");
  EXPECT_EQ(out[0].rank, 2);
  EXPECT_EQ(out[0].device, 1);
  EXPECT_EQ(out[0].busy_ns, 90 * kUs);
  EXPECT_EQ(out[0].idle.TotalNs(), 0);
  EXPECT_EQ(out[0].one_off_ns, 10 * kUs);  // [0, 10): neither busy nor a steady piece
  EXPECT_EQ(out[1].busy_ns, 20 * kUs);
  EXPECT_EQ(out[1].idle[Subcause::kHostSync], 30 * kUs);
  EXPECT_EQ(out[1].idle[Subcause::kDataLoader], 50 * kUs);
  EXPECT_EQ(out[1].one_off_ns, 0);
  std::vector<StepReport> none;
  FillSteps(t, steps, spans, 1, 1, busy, pieces, device, 10, &none);
  EXPECT_THAT(none, IsEmpty());
}

}  // namespace
}  // namespace gpuidle::internal
