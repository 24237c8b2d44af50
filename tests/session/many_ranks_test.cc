// A job of 1024 ranks merged end to end from its ranks' report files (issue 16: "a job of any
// size is merged from its small per-rank reports"): generated one-process reports with a known
// straggler and hosts whose clocks are hours apart, written by gpuidle::FormatReport, read back and
// merged by gpuidle::AnalyzeTraceFiles, as `gpuidle analyze rank*.json` does. The timing of the
// same at full size is tests/benchmarks/merge_benchmark.cc's (docs/PERFORMANCE.md).
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gpuidle/analyze.h"
#include "gpuidle/report.h"
#include "gtest/gtest.h"
#include "testing/rank_reports.h"
#include "testing/realistic_rank_reports.h"
#include "testing/temp_dir.h"

namespace gpuidle {
namespace {

using ::gpuidle::testing::HostClock;
using ::gpuidle::testing::JobSpec;
using ::gpuidle::testing::RealisticJob;
using ::gpuidle::testing::RealisticRankReport;
using ::gpuidle::testing::TempDir;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kRanks = 1024;
constexpr int kStraggler = 643;  // on host 80, whose clock reads 80 hours ahead of host 0's

// The reports of the job's ranks, but those in s.missing, as files in dir.
std::vector<std::string> WriteReports(const JobSpec& s, const TempDir& dir) {
  std::vector<std::string> paths;
  for (int r = 0; r < s.world_size; ++r) {
    if (s.missing.contains(r)) continue;
    char name[32];
    std::snprintf(name, sizeof(name), "rank%04d.json", r);
    // FormatReport, as SaveReport writes it, without SaveReport's fsync of every file.
    const absl::StatusOr<std::string> json = FormatReport(RealisticRankReport(s, r), "json");
    EXPECT_TRUE(json.ok()) << json.status();
    if (!json.ok()) return {};
    paths.push_back(dir.Write(name, *json));
  }
  return paths;
}

// Issue 29: --skip-steps was ignored without a word when the inputs were reports, which were
// analysed once with their own warm-up left out.
TEST(ManyRanksTest, SkippingWarmUpStepsSaysItAppliesToTracesOnly) {
  TempDir dir;
  const std::vector<std::string> paths = WriteReports(RealisticJob(16, 13), dir);
  ASSERT_EQ(paths.size(), 16u);
  AnalysisOptions skip;
  skip.skip_steps = 7;
  absl::StatusOr<Report> merged = AnalyzeTraceFiles(paths, skip);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_THAT(merged->warnings,
              Contains(AllOf(HasSubstr("skipping 7 warm-up steps applies to traces only"),
                             HasSubstr("rank0000.json"), HasSubstr("and 13 more"))));
  // Asked nothing of the kind: no such warning.
  absl::StatusOr<Report> plain = AnalyzeTraceFiles(paths);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_THAT(plain->warnings, Not(Contains(HasSubstr("applies to traces only"))));
}

TEST(ManyRanksTest, AJobOf1024RanksMergesFromItsReportFiles) {
  // Short runs (8 steps of 4 all-reduces per rank), so that the test stays quick under ASan;
  // the benchmark merges the full-size reports. 8 steps of 1021 devices: the merged report
  // lists them all within Report::kMaxStepRows, and reads back.
  JobSpec s = RealisticJob(kRanks, kStraggler);
  s.steps = 8;
  s.collectives_per_step = 4;
  s.missing = {100, 101, 777};
  TempDir dir;
  const std::vector<std::string> paths = WriteReports(s, dir);
  ASSERT_EQ(paths.size(), size_t{kRanks - 3});
  // Step 0's first all-reduce is not on every rank (rank r's window begins r % 3 collectives
  // late): it is not a complete instance, the other steps' first ones are.
  const int64_t late_steps = s.steps - 1;

  absl::StatusOr<Report> merged = AnalyzeTraceFiles(paths);
  ASSERT_TRUE(merged.ok()) << merged.status();
  // Written and read back: what a user of `gpuidle analyze --out` gets.
  const std::string out = dir.Path("merged.json");
  ASSERT_TRUE(SaveReport(*merged, out, "json").ok());
  absl::StatusOr<Report> again = AnalyzeTraceFiles({out});
  ASSERT_TRUE(again.ok()) << again.status();

  for (const Report* r : {&*merged, &*again}) {
    SCOPED_TRACE(r == &*merged ? "merged" : "read back");
    EXPECT_EQ(r->ranks.size(), size_t{kRanks - 3});
    EXPECT_EQ(r->devices.size(), size_t{kRanks - 3});
    EXPECT_EQ(r->straggler_rank, kStraggler);
    EXPECT_THAT(r->stragglers, ElementsAre(kStraggler));
    EXPECT_THAT(r->warnings, Contains(HasSubstr("missing: ranks 100-101, 777 (waits for peers "
                                                "are then underestimated")));
    EXPECT_EQ(r->clock.method, "aligned");
    EXPECT_EQ(r->clock.hosts, kRanks / 8);
    EXPECT_LT(r->clock.residual_ns, 5'000);
    std::set<int> seen;
    for (const RankReport& rr : r->ranks) {
      seen.insert(rr.rank);
      const int host = rr.rank / s.ranks_per_host;
      EXPECT_NEAR(static_cast<double>(rr.clock_offset_ns),
                  static_cast<double>(HostClock(s, 0) - HostClock(s, host)), 5'000)
          << "rank " << rr.rank;
      if (rr.rank == kStraggler) {
        // At every step's first all-reduce, 5 ms after the others, for its own host work.
        EXPECT_EQ(rr.arrived_last, late_steps);
        EXPECT_NEAR(static_cast<double>(rr.late_ns), static_cast<double>(late_steps * s.late_ns),
                    0.01 * static_cast<double>(late_steps * s.late_ns));
        EXPECT_EQ(rr.own_cause, Subcause::kHost);
      } else {
        EXPECT_EQ(rr.arrived_last, 0) << "rank " << rr.rank;
      }
    }
    EXPECT_FALSE(seen.contains(100) || seen.contains(101) || seen.contains(777));
    // Every punctual rank waited for the straggler at each of those: 5 ms a step.
    for (const DeviceReport& d : r->devices) {
      ASSERT_TRUE(d.comm_wait_ns.has_value()) << "rank " << d.rank.value_or(-1);
      if (d.rank == kStraggler) {
        EXPECT_LT(*d.comm_wait_ns, s.steps * 100'000) << "the straggler waits for nobody";
      } else {
        EXPECT_GE(*d.comm_wait_ns, late_steps * s.late_ns * 9 / 10) << "rank " << *d.rank;
      }
    }
  }
}

}  // namespace
}  // namespace gpuidle
