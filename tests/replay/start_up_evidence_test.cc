// Replays the H200 run of issue 28's start-up rule (tests/data/gpu_runs/2026-12-04_startup;
// docs/VALIDATION.md): a torch.profiler trace of a torch.compile'd MLP profiled from its first
// call (examples/python/unchanged/torch_profiler_traces.py compile). The compiler's own ranges
// name its time outright; before the rule the same trace read "set-up 4.48 s, compilation
// 1.08 s". The eager programs that compile nothing are checked on their own recordings
// (tests/replay/live_traces_test.cc, unchanged_programs_test.cc).
#include <string>

#include "gmock/gmock.h"
#include "gpuidle/analyze.h"
#include "gtest/gtest.h"
#include "testing/report_json.h"
#include "testing/temp_dir.h"

namespace gpuidle {
namespace {

using ::gpuidle::testing::ReadFileOrDie;
using ::gpuidle::testing::ReadsBackAs;

std::string RunPath(const std::string& name) {
  return std::string(GPUIDLE_TEST_DATA_DIR) + "/gpu_runs/2026-12-04_startup/" + name;
}

const OneOffTime* StartUpPart(const DeviceReport& d, OneOffKind kind) {
  for (const OneOffTime& o : d.one_off) {
    if (o.phase == Phase::kStartUp && o.kind == kind) return &o;
  }
  return nullptr;
}

TEST(StartUpOnTheH200, TorchCompilesRangesNameItsCompilationInATorchProfilerTrace) {
  absl::StatusOr<Report> r = AnalyzeTraceFiles({RunPath("profiler_compile.json.gz")});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->devices.size(), 1u);
  const DeviceReport& d = r->devices[0];
  const OneOffTime* compilation = StartUpPart(d, OneOffKind::kCompilation);
  ASSERT_NE(compilation, nullptr);
  EXPECT_GT(compilation->ns, 5'000'000'000);
  EXPECT_EQ(compilation->evidence, "entire_frame_compile");
  const OneOffTime* set_up = StartUpPart(d, OneOffKind::kSetUp);
  EXPECT_TRUE(set_up == nullptr || set_up->ns < 100'000'000) << set_up->ns;
  // The compiled steps: each waits 5 ms for its batch on the host, then launches.
  EXPECT_EQ(d.step_count, 7);
  EXPECT_GT(d.idle.CauseNs(Cause::kDataStarved), d.idle.CauseNs(Cause::kLaunchBound));
  // What the GPU machine's gpuidle wrote from the same trace.
  absl::StatusOr<std::string> replayed = FormatReport(*r, "json");
  ASSERT_TRUE(replayed.ok());
  EXPECT_TRUE(ReadsBackAs(*replayed, ReadFileOrDie(RunPath("profiler_compile.report.json"))));
}

}  // namespace
}  // namespace gpuidle
