#include "analysis/step_gpu_metrics.h"

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/analyze.h"
#include "gpuidle/analyze.h"
#include "gtest/gtest.h"
#include "testing/timeline_builder.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::TimelineBuilder;

constexpr int64_t kMs = 1'000'000;

GpuMetricSample Reading(int64_t time_ns, uint32_t clock_mhz, uint32_t power_mw, int device = 0) {
  GpuMetricSample s;
  s.time_ns = time_ns;
  s.device = device;
  s.sm_clock_mhz = clock_mhz;
  s.sm_clock_max_mhz = 1980;
  s.power_mw = power_mw;
  s.power_limit_mw = 700'000;
  return s;
}

GpuThroughputSample Pm(int64_t start_ns, int64_t end_ns, float sm, float dram, int device = 0) {
  GpuThroughputSample s;
  s.start_ns = start_ns;
  s.end_ns = end_ns;
  s.device = device;
  s.sm_active_pct = sm;
  s.dram_pct = dram;
  return s;
}

StepReport Step(int64_t start_ns, int64_t end_ns) {
  StepReport s;
  s.start_ns = start_ns;
  s.end_ns = end_ns;
  return s;
}

TEST(StepGpuMetrics, TakesTheBusyReadingsInsideEachStep) {
  Timeline t;
  // Kernels in [0, 6) and [10, 16) ms; steps [0, 10) and [10, 20) ms.
  const std::vector<Interval> busy = {{0, 6 * kMs}, {10 * kMs, 16 * kMs}};
  // Step 1: three busy readings (one slow) and an idle one at full clock, not counted.
  t.gpu_metrics = {Reading(1 * kMs, 1980, 650'000), Reading(2 * kMs, 1400, 700'000),
                   Reading(3 * kMs, 1900, 690'000), Reading(8 * kMs, 1980, 90'000),
                   // Another device's reading in step 1: not this device's.
                   Reading(4 * kMs, 500, 1, 1),
                   // Step 2: one busy reading.
                   Reading(12 * kMs, 1200, 600'000)};
  std::vector<StepReport> steps = {Step(0, 10 * kMs), Step(10 * kMs, 20 * kMs),
                                   Step(20 * kMs, 30 * kMs)};
  FillStepGpuMetrics(t, 0, busy, steps);
  ASSERT_TRUE(steps[0].gpu.has_value());
  const StepReport::Gpu& g = *steps[0].gpu;
  EXPECT_EQ(g.samples, 4);  // the idle one too
  EXPECT_EQ(g.sm_clock_median_mhz, 1900u);
  EXPECT_EQ(g.sm_clock_max_mhz, 1980u);
  EXPECT_EQ(g.power_median_mw, 690'000u);
  EXPECT_EQ(g.power_limit_mw, 700'000u);
  EXPECT_DOUBLE_EQ(g.slow_clock_share, 1.0 / 3);
  EXPECT_LT(g.sm_active_pct, 0);  // no PM samples
  ASSERT_TRUE(steps[1].gpu.has_value());
  EXPECT_EQ(steps[1].gpu->samples, 1);
  EXPECT_EQ(steps[1].gpu->sm_clock_median_mhz, 1200u);
  EXPECT_DOUBLE_EQ(steps[1].gpu->slow_clock_share, 1.0);
  EXPECT_FALSE(steps[2].gpu.has_value());  // no readings in it
}

TEST(StepGpuMetrics, PmFiguresAreRatesWhileKernelsRan) {
  Timeline t;
  const std::vector<Interval> busy = {{0, 6 * kMs}, {10 * kMs, 16 * kMs}};
  // Averages over each sample, idle time included. [0, 5): all busy, 90%; [5, 10): 1 ms busy,
  // 10%; [10, 20) in step 2: 6 ms busy, 50%. A rate while busy is activity over kernel time.
  t.gpu_throughput = {Pm(0, 5 * kMs, 90, 60), Pm(5 * kMs, 10 * kMs, 10, -1),
                      Pm(8 * kMs, 12 * kMs, 0, 0, 1), Pm(10 * kMs, 20 * kMs, 50, 20)};
  std::vector<StepReport> steps = {Step(0, 10 * kMs), Step(10 * kMs, 20 * kMs)};
  FillStepGpuMetrics(t, 0, busy, steps);
  ASSERT_TRUE(steps[0].gpu.has_value());
  EXPECT_EQ(steps[0].gpu->samples, 0);  // PM samples only
  EXPECT_EQ(steps[0].gpu->sm_clock_median_mhz, 0u);
  EXPECT_NEAR(steps[0].gpu->sm_active_pct, (5 * 90 + 5 * 10) / 6.0, 1e-9);
  EXPECT_NEAR(steps[0].gpu->dram_pct, 60, 1e-9);  // the second did not measure it
  EXPECT_LT(steps[0].gpu->tensor_active_pct, 0);
  ASSERT_TRUE(steps[1].gpu.has_value());
  EXPECT_NEAR(steps[1].gpu->sm_active_pct, 50 * 10 / 6.0, 1e-9);
  EXPECT_NEAR(steps[1].gpu->dram_pct, 20 * 10 / 6.0, 1e-9);
}

TEST(StepGpuMetrics, TheAnalysisFillsTheStepsOfALiveCapture) {
  TimelineBuilder b;
  for (int i = 0; i < 3; ++i) {
    const double s = i * 10'000.0;  // us
    b.Step(1, s, s + 10'000, "ProfilerStep");
    b.Launch(1, s + 100, s + 110).Kernel(s + 200, s + 8'000);
  }
  Timeline t = b.Build();
  // A reading in the middle of each step's kernel; none at all in the last step.
  t.gpu_metrics = {Reading(4 * kMs, 1800, 600'000), Reading(14 * kMs, 1000, 700'000)};
  absl::StatusOr<Report> r = Analyze(t, AnalysisOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_GE(r->steps.size(), 2u);
  int with = 0;
  for (const StepReport& s : r->steps) {
    if (!s.gpu) continue;
    ++with;
    EXPECT_EQ(s.gpu->samples, 1);
    EXPECT_TRUE(s.gpu->sm_clock_median_mhz == 1800 || s.gpu->sm_clock_median_mhz == 1000);
  }
  EXPECT_GE(with, 1);
  EXPECT_LT(with, static_cast<int>(r->steps.size()));  // the last step has none
  // And the timeline's bins hold the readings, for the HTML report's tracks.
  ASSERT_FALSE(r->devices.empty());
  EXPECT_FALSE(r->devices[0].timeline.gpu.empty());
  EXPECT_EQ(r->devices[0].timeline.sm_clock_max_mhz, 1980u);
}

}  // namespace
}  // namespace gpuidle::internal
