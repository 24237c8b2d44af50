// Replays issue 32's shared-GPU run (tests/gpu/python/shared_gpu.py on an H100, recorded in
// tests/data/gpu_runs/2026-12-07_shared; docs/VALIDATION.md): a bf16 matmul loop alone, then
// beside a second process's matmul loop on the same GPU. The trace carries NVML's readings and
// the other process's samples, so its analysis names that process in both of the places where
// it cost this job time: queued work that waited behind it, and its turns inside this job's
// kernels.
#include <string>

#include "gmock/gmock.h"
#include "gpuidle/analyze.h"
#include "gtest/gtest.h"

namespace gpuidle {
namespace {

using ::testing::HasSubstr;

std::string RunPath(const std::string& name) {
  return std::string(GPUIDLE_TEST_DATA_DIR) + "/gpu_runs/2026-12-07_shared/" + name;
}

TEST(SharedGpuOnTheH100, QueuedWorkThatWaitedBehindTheOtherProcessIsNamedSo) {
  absl::StatusOr<Report> r = AnalyzeTraceFiles({RunPath("shared.report.trace.json.gz")});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->devices.size(), 1u);
  const DeviceReport& d = r->devices[0];
  // Its idle time is small (time-slicing stretches kernels rather than opening gaps), and most
  // of it waited behind the other process: neither launch-bound nor unattributed.
  ASSERT_GT(d.idle_ns, 0);
  EXPECT_GE(d.idle[Subcause::kOtherProcess], d.idle_ns * 4 / 10);
  EXPECT_EQ(d.idle[Subcause::kUnattributed], 0);
  ASSERT_TRUE(d.gpu_metrics.has_value());
  ASSERT_EQ(d.gpu_metrics->other_processes.size(), 1u);
  const GpuMetrics::OtherProcess& other = d.gpu_metrics->other_processes[0];
  EXPECT_GT(other.busy_samples_busy, d.gpu_metrics->busy_samples / 5);
  bool named = false;
  for (const GpuMetrics::Finding& f : d.gpu_metrics->findings) {
    if (f.kind != "other_process") continue;
    named = true;
    EXPECT_THAT(f.text, HasSubstr("another process (pid " + std::to_string(other.pid)));
    EXPECT_THAT(f.text, HasSubstr("of its busy readings (the GPU takes turns"));
    EXPECT_THAT(f.text, HasSubstr("waited behind other processes"));
  }
  EXPECT_TRUE(named);
}

TEST(SharedGpuOnTheH100, AloneTheJobHasNoOtherProcessAndNothingWaitsBehindOne) {
  absl::StatusOr<Report> r = AnalyzeTraceFiles({RunPath("alone.report.json")});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->devices.size(), 1u);
  EXPECT_EQ(r->devices[0].idle[Subcause::kOtherProcess], 0);
  ASSERT_TRUE(r->devices[0].gpu_metrics.has_value());
  EXPECT_TRUE(r->devices[0].gpu_metrics->other_processes.empty());
}

}  // namespace
}  // namespace gpuidle
