// Replays the H200 runs of issue 28's periodic work (tests/data/gpu_runs/2026-12-04_periodic;
// docs/VALIDATION.md): examples/python/unchanged/periodic_host_work.py under `gpuidle run`, a
// torch.save every 4 steps, an evaluation every 5, a logging call each step. Each program timed
// its own periodic work, untraced in a process of its own (*.untraced.log) and traced
// (*.traced_timing.log). Before issue 28 the checkpoint read as two unrelated causes with two
// fixes (data_starved.host "checkpointing/logging", sync_bound.host_sync "remove .cpu() from the
// hot loop": checkpoint.report_at_the_time.txt).
#include <regex>
#include <string>

#include "gmock/gmock.h"
#include "gpuidle/analyze.h"
#include "gtest/gtest.h"
#include "ingest/report_reader.h"
#include "testing/temp_dir.h"

namespace gpuidle {
namespace {

using ::gpuidle::testing::ReadFileOrDie;
using ::testing::HasSubstr;

std::string RunPath(const std::string& name) {
  return std::string(GPUIDLE_TEST_DATA_DIR) + "/gpu_runs/2026-12-04_periodic/" + name;
}

// The median the program measured around its periodic call: "..., median 395.1 ms, ...".
double ProgramsMedianMs(const std::string& log) {
  std::smatch m;
  const std::string text = ReadFileOrDie(RunPath(log));
  EXPECT_TRUE(std::regex_search(text, m, std::regex("median ([0-9.]+) ms"))) << text;
  return m.empty() ? 0 : std::stod(m[1]);
}

Report Analyzed(const std::string& trace) {
  absl::StatusOr<Report> r = AnalyzeTraceFiles({RunPath(trace)});
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : Report{};
}

double MsEach(const PeriodicWork& w) {
  return static_cast<double>(w.span_ns) / 1e6 / static_cast<double>(w.occurrences);
}

TEST(PeriodicWorkOnTheH200, ACheckpointIsOneActivityAcrossItsCauses) {
  const Report r = Analyzed("checkpoint.trace.json.gz");
  ASSERT_FALSE(r.periodic_work.empty());
  const PeriodicWork& w = r.periodic_work[0];
  EXPECT_EQ(w.activity, "checkpointing");
  EXPECT_THAT(w.site, HasSubstr("periodic_host_work.py:44 in checkpoint"));
  // Steps 4, 8, ..., 20 are in the steady state (the 24th is the wind-down).
  EXPECT_EQ(w.occurrences, 5);
  EXPECT_GT(w.idle[Subcause::kHost], 0);
  EXPECT_GT(w.idle[Subcause::kHostSync], 0);  // the state's copies to the host
  // Each occurrence as long as the program measured around torch.save, untraced: +-10%.
  EXPECT_NEAR(MsEach(w), ProgramsMedianMs("checkpoint.untraced.log"),
              0.1 * ProgramsMedianMs("checkpoint.untraced.log"));
  // Both causes it spans get the checkpoint's fix, not "remove .cpu() from the hot loop".
  int named = 0;
  for (const Advice& a : r.advice) {
    if (a.subcause != Subcause::kHost && a.subcause != Subcause::kHostSync) continue;
    EXPECT_THAT(a.fix, HasSubstr("periodic checkpointing"));
    EXPECT_THAT(a.fix, ::testing::Not(HasSubstr("hot loop")));
    ++named;
  }
  EXPECT_EQ(named, 2);
}

TEST(PeriodicWorkOnTheH200, AnEvaluationEveryFiveSteps) {
  const Report r = Analyzed("evaluate.trace.json.gz");
  ASSERT_EQ(r.periodic_work.size(), 1u);
  const PeriodicWork& w = r.periodic_work[0];
  EXPECT_EQ(w.activity, "evaluation");
  EXPECT_THAT(w.site, HasSubstr("in evaluate"));
  EXPECT_EQ(w.occurrences, 4);
  EXPECT_NEAR(MsEach(w), ProgramsMedianMs("evaluate.untraced.log"),
              0.1 * ProgramsMedianMs("evaluate.untraced.log"));
}

TEST(PeriodicWorkOnTheH200, LoggingEveryStep) {
  const Report r = Analyzed("logging.trace.json.gz");
  ASSERT_EQ(r.periodic_work.size(), 1u);
  const PeriodicWork& w = r.periodic_work[0];
  EXPECT_EQ(w.activity, "logging");
  EXPECT_THAT(w.site, HasSubstr("in log"));
  EXPECT_EQ(w.occurrences, 23);                           // every steady step
  EXPECT_GT(w.idle[Subcause::kHostSync], w.idle_ns / 2);  // its .item() reads
  // Longer than the untraced program's 0.9 ms: the tracer's cost inside a call-heavy activity is
  // not all taken out (docs/VALIDATION.md). Between the untraced and the traced measure.
  EXPECT_GT(MsEach(w), ProgramsMedianMs("logging.untraced.log"));
  EXPECT_LT(MsEach(w), ProgramsMedianMs("logging.traced_timing.log"));
}

TEST(PeriodicWorkOnTheH200, ReadsBackFromItsJson) {
  const Report r = Analyzed("checkpoint.trace.json.gz");
  absl::StatusOr<std::string> json = FormatReport(r, "json");
  ASSERT_TRUE(json.ok());
  absl::StatusOr<Report> back = internal::ParseReportJson(*json, "checkpoint report");
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->periodic_work.size(), r.periodic_work.size());
  EXPECT_EQ(back->periodic_work[0].site, r.periodic_work[0].site);
  EXPECT_EQ(back->periodic_work[0].idle.ns, r.periodic_work[0].idle.ns);
  EXPECT_EQ(back->periodic_work[0].fix, r.periodic_work[0].fix);
}

}  // namespace
}  // namespace gpuidle
