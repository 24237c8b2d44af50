// Replays issue 31's proof on real runs (tests/gpu/python/answers.py, recorded on an H100 in
// tests/data/gpu_runs/2026-12-06_answers; docs/VALIDATION.md): what the GPU run showed, CI keeps
// showing from the recorded files.
#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gpuidle/analyze.h"
#include "gtest/gtest.h"
#include "testing/report_json.h"
#include "testing/temp_dir.h"

namespace gpuidle {
namespace {

using ::gpuidle::testing::ReadFileOrDie;
using ::gpuidle::testing::ReadsBackAs;
using ::testing::HasSubstr;

std::string RunPath(const std::string& name) {
  return std::string(GPUIDLE_TEST_DATA_DIR) + "/gpu_runs/2026-12-06_answers/" + name;
}

// A live capture names the line that ran: the .item() call, line 42 of the script as it was.
TEST(AnswersOnTheH100, ALiveCaptureNamesTheLineOfTheSyncAndReadsBackAsRecorded) {
  AnalysisOptions options;
  options.skip_steps = 1;  // as the script's gpuidle.profile(skip_steps=1)
  absl::StatusOr<Report> r = AnalyzeTraceFiles({RunPath("item_sync.live.trace.json.gz")}, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(
      ReadsBackAs(*FormatReport(*r, "json"), ReadFileOrDie(RunPath("item_sync.live.report.json"))));
  ASSERT_FALSE(r->offenders.empty());
  EXPECT_EQ(r->offenders[0].subcause, Subcause::kHostSync);
  EXPECT_THAT(r->offenders[0].site, ::testing::EndsWith("item_sync.py:42 in step"));
  ASSERT_TRUE(r->verdict.has_value());
  EXPECT_TRUE(r->verdict->worth_fixing);
  ASSERT_FALSE(r->advice.empty());
  EXPECT_THAT(r->advice[0].fix, HasSubstr("from the hot loop, at "));
  EXPECT_THAT(r->advice[0].fix, HasSubstr("item_sync.py:42 in step"));
}

// torch.profiler's trace of the healthy loop (99.5% busy): nothing worth fixing, said once.
TEST(AnswersOnTheH100, AHealthyLoopHasNothingWorthFixing) {
  absl::StatusOr<Report> r = AnalyzeTraceFiles({RunPath("healthy_matmul.torch.json.gz")});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->verdict.has_value());
  EXPECT_FALSE(r->verdict->worth_fixing);
  EXPECT_LT(r->verdict->LostShare(), 0.01);
  EXPECT_TRUE(r->advice.empty());
  const std::string text = *FormatReport(*r, "text");
  EXPECT_THAT(text, HasSubstr("\nwhat to do\n  nothing worth fixing here: the GPU lost 0."));
}

// What tensorboard_trace_handler wrote (two traces of one worker, repeat=2): the newest is the
// job, the older one is said to be skipped.
TEST(AnswersOnTheH100, ATensorboardDirectoryIsItsWorkersNewestTrace) {
  absl::StatusOr<Report> r = AnalyzeTraceFiles({RunPath("tb")});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->inputs.size(), 1u);
  EXPECT_TRUE(absl::EndsWith(r->inputs[0], "worker0.1796590828790806227.pt.trace.json"))
      << r->inputs[0];
  EXPECT_FALSE(r->devices.empty());
}

}  // namespace
}  // namespace gpuidle
