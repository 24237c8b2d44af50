// Replays issue 32's GPU run (tests/gpu/python/gpu_metrics.py on an H100, recorded in
// tests/data/gpu_runs/2026-12-06_metrics; docs/VALIDATION.md): the live reports carry NVML's
// readings, and reading them back keeps the readings and what they mean.
#include <string>

#include "gmock/gmock.h"
#include "gpuidle/analyze.h"
#include "gtest/gtest.h"

namespace gpuidle {
namespace {

using ::testing::HasSubstr;

std::string RunPath(const std::string& name) {
  return std::string(GPUIDLE_TEST_DATA_DIR) + "/gpu_runs/2026-12-06_metrics/" + name;
}

const GpuMetrics::Finding* FindingOf(const GpuMetrics& m, const std::string& kind) {
  for (const GpuMetrics::Finding& f : m.findings) {
    if (f.kind == kind) return &f;
  }
  return nullptr;
}

// A bf16 matmul loop, 99% busy: the H100 held it at its 700 W limit, the SM clock at 1.41 of
// 1.98 GHz. Nothing idle to fix; busy but slow, and why.
TEST(GpuMetricsOnTheH100, ABusyLoopAtItsPowerLimitIsNamedSo) {
  absl::StatusOr<Report> r = AnalyzeTraceFiles({RunPath("healthy.report.json")});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->devices.size(), 1u);
  ASSERT_TRUE(r->devices[0].gpu_metrics.has_value());
  const GpuMetrics& m = *r->devices[0].gpu_metrics;
  EXPECT_GE(m.samples, 30);
  EXPECT_EQ(m.sm_clock_max_mhz, 1980u);
  EXPECT_LT(m.sm_clock_median_mhz, 0.9 * m.sm_clock_max_mhz);
  EXPECT_EQ(m.slow_clock_reason, "power_cap");
  EXPECT_GT(m.power_median_mw, 0.95 * m.power_limit_mw);
  const GpuMetrics::Finding* clocks = FindingOf(m, "clocks");
  ASSERT_NE(clocks, nullptr);
  EXPECT_THAT(clocks->text, HasSubstr("(power cap)"));
  ASSERT_TRUE(r->verdict.has_value());
  EXPECT_FALSE(r->verdict->worth_fixing);
  EXPECT_THAT(*FormatReport(*r, "text"), HasSubstr("GPU metrics (NVML, "));
}

// item_sync beside a second process running matmuls on the same GPU: that process, by pid.
TEST(GpuMetricsOnTheH100, AnotherProcessOnTheGpuIsNamedWithItsPid) {
  absl::StatusOr<Report> r = AnalyzeTraceFiles({RunPath("shared.report.json")});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->devices[0].gpu_metrics.has_value());
  const GpuMetrics& m = *r->devices[0].gpu_metrics;
  ASSERT_EQ(m.other_processes.size(), 1u);
  EXPECT_GT(m.other_processes[0].memory_bytes, uint64_t{2} << 30);  // it held 2 GB and more
  EXPECT_GT(m.other_processes[0].idle_samples_busy, 0);
  const GpuMetrics::Finding* other = FindingOf(m, "other_process");
  ASSERT_NE(other, nullptr);
  EXPECT_THAT(other->text,
              HasSubstr("another process (pid " + std::to_string(m.other_processes[0].pid)));
}

}  // namespace
}  // namespace gpuidle
