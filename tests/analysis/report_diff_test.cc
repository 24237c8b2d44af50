#include "analysis/report_diff.h"

#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuidle::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr int64_t kMs = 1'000'000;

// A device whose steady state is `steps` steps of step_ns each (from 0), busy_ns of each step
// busy and the rest idle with the given subcauses per step (their sum at most step_ns - busy).
struct DeviceSpec {
  std::optional<int> rank;
  int device = 0;
  int64_t steps = 10;
  int64_t step_ns = 20 * kMs;
  int64_t busy_ns = 10 * kMs;
  std::vector<std::pair<Subcause, int64_t>> idle_per_step;
  int64_t start_up_ns = 0;
  std::string name = "NVIDIA H200";
};

DeviceReport DeviceOf(const DeviceSpec& s) {
  DeviceReport d;
  d.rank = s.rank;
  d.device = s.device;
  d.name = s.name;
  d.window_start_ns = -s.start_up_ns;
  d.steady_start_ns = 0;
  d.steady_end_ns = s.steps * s.step_ns;
  d.window_end_ns = d.steady_end_ns;
  d.window_ns = d.window_end_ns - d.window_start_ns;
  d.step_count = s.steps;
  d.busy_ns = s.steps * s.busy_ns;
  int64_t idle = 0;
  for (const auto& [sub, ns] : s.idle_per_step) {
    d.idle[sub] += s.steps * ns;
    idle += ns;
  }
  // Whatever the subcauses leave is unattributed, so that busy + idle tiles the steady state.
  d.idle[Subcause::kUnattributed] += s.steps * (s.step_ns - s.busy_ns - idle);
  d.idle_ns = d.idle.TotalNs();
  if (s.start_up_ns > 0) {
    d.one_off.push_back({Phase::kStartUp, OneOffKind::kCudaInit, s.start_up_ns, 1, "cuInit"});
  }
  return d;
}

// A report of the devices, with their step rows and advice for each subcause with 5% of lost
// time.
Report ReportOf(const std::vector<DeviceSpec>& specs, std::string step_source = "ProfilerStep") {
  Report r;
  r.source = "pytorch-profiler";
  r.step_source = step_source;
  r.inputs = {"trace.json.gz"};
  for (const DeviceSpec& s : specs) {
    r.devices.push_back(DeviceOf(s));
    for (int64_t k = 0; k < s.steps; ++k) {
      StepReport step;
      step.rank = s.rank;
      step.device = s.device;
      step.name = "ProfilerStep#" + std::to_string(k);
      step.start_ns = k * s.step_ns;
      step.end_ns = (k + 1) * s.step_ns;
      step.busy_ns = s.busy_ns;
      r.steps.push_back(step);
    }
  }
  const IdleBreakdown total = r.TotalIdle();
  for (int i = 0; i < kNumSubcauses; ++i) {
    const double share = static_cast<double>(total.ns[i]) / static_cast<double>(total.TotalNs());
    if (share >= 0.05) {
      Advice a;
      a.subcause = static_cast<Subcause>(i);
      a.share_of_lost_time = share;
      a.fix = "fix " + QualifiedSubcauseName(a.subcause);
      r.advice.push_back(a);
    }
  }
  return r;
}

const DeviceSpec kStarved{
    .rank = std::nullopt,
    .step_ns = 23 * kMs,
    .busy_ns = 1 * kMs,
    .idle_per_step = {{Subcause::kDataLoader, 20 * kMs}, {Subcause::kLaunchOverhead, 2 * kMs}}};
const DeviceSpec kFed{.rank = std::nullopt,
                      .step_ns = 13 * kMs,
                      .busy_ns = 1 * kMs,
                      .idle_per_step = {{Subcause::kLaunchOverhead, 12 * kMs}}};

const Change& Sub(const ReportDiff& d, Subcause s) {
  return d.lost_by_subcause[static_cast<int>(s)];
}

bool HasCaveat(const ReportDiff& d, const std::string& code) {
  for (const DiffCaveat& c : d.caveats) {
    if (c.code == code) return true;
  }
  return false;
}

TEST(ReportDiff, AReportComparedWithItselfChangesNothing) {
  const Report r = ReportOf({kStarved});
  const ReportDiff d = DiffReports(r, r);
  EXPECT_EQ(d.unit, DiffUnit::kPerStep);
  ASSERT_TRUE(d.mean_step_ns.has_value());
  EXPECT_EQ(d.mean_step_ns->before, 23 * kMs);
  EXPECT_EQ(d.mean_step_ns->Delta(), 0);
  for (int s = 0; s < kNumSubcauses; ++s) EXPECT_EQ(d.lost_by_subcause[s].Delta(), 0) << s;
  EXPECT_EQ(d.lost_share.Delta(), 0);
  EXPECT_THAT(d.caveats, IsEmpty());
  EXPECT_EQ(d.verdict.outcome, DiffOutcome::kUnchanged);
  EXPECT_FALSE(d.verdict.main_change.has_value());
  EXPECT_THAT(d.verdict.text, HasSubstr("no material change"));
  ASSERT_EQ(d.devices.size(), 1u);
  EXPECT_THAT(d.only_before, IsEmpty());
  for (const AdviceChange& a : d.advice) EXPECT_EQ(a.status, AdviceStatus::kRemaining);
}

TEST(ReportDiff, AFedDataLoaderIsAnImprovementNamedByTheCauseThatFell) {
  const ReportDiff d = DiffReports(ReportOf({kStarved}), ReportOf({kFed}));
  ASSERT_TRUE(d.mean_step_ns.has_value());
  EXPECT_EQ(d.mean_step_ns->before, 23 * kMs);
  EXPECT_EQ(d.mean_step_ns->after, 13 * kMs);
  EXPECT_EQ(Sub(d, Subcause::kDataLoader).before, 20 * kMs);
  EXPECT_EQ(Sub(d, Subcause::kDataLoader).after, 0);
  EXPECT_EQ(Sub(d, Subcause::kLaunchOverhead).Delta(), 10 * kMs);
  EXPECT_EQ(d.lost_by_cause[static_cast<int>(Cause::kDataStarved)].Delta(), -20 * kMs);
  EXPECT_EQ(d.verdict.outcome, DiffOutcome::kImproved);
  EXPECT_EQ(d.verdict.metric, "mean_step");
  EXPECT_EQ(d.verdict.main_change, Subcause::kDataLoader);
  EXPECT_EQ(d.verdict.text,
            "step time 23.0 -> 13.0 ms (-43%): data_starved.dataloader -20.0 ms/step; the fix "
            "worked");
  EXPECT_FALSE(d.verdict.weak);
  // The dataloader advice disappeared; launch overhead stays, now most of the lost time.
  ASSERT_EQ(d.advice.size(), 2u);
  EXPECT_EQ(d.advice[0].subcause, Subcause::kDataLoader);
  EXPECT_EQ(d.advice[0].status, AdviceStatus::kResolved);
  EXPECT_FALSE(d.advice[0].share_after.has_value());
  EXPECT_EQ(d.advice[1].subcause, Subcause::kLaunchOverhead);
  EXPECT_EQ(d.advice[1].status, AdviceStatus::kRemaining);
  EXPECT_DOUBLE_EQ(*d.advice[1].share_after, 1.0);
  ASSERT_EQ(d.devices.size(), 1u);
  EXPECT_EQ(d.devices[0].dominant_before, Subcause::kDataLoader);
  EXPECT_EQ(d.devices[0].dominant_after, Subcause::kLaunchOverhead);
}

TEST(ReportDiff, SlowerStepsAreARegressionNamedByTheCauseThatRose) {
  const ReportDiff d = DiffReports(ReportOf({kFed}), ReportOf({kStarved}));
  EXPECT_EQ(d.verdict.outcome, DiffOutcome::kRegressed);
  EXPECT_EQ(d.verdict.main_change, Subcause::kDataLoader);
  EXPECT_THAT(d.verdict.text, HasSubstr("(+77%): data_starved.dataloader +20.0 ms/step"));
  ASSERT_FALSE(d.advice.empty());
  EXPECT_EQ(d.advice.back().subcause, Subcause::kDataLoader);
  EXPECT_EQ(d.advice.back().status, AdviceStatus::kNew);
}

TEST(ReportDiff, AStepTimeWithinFivePercentIsUnchanged) {
  DeviceSpec a = kFed, b = kFed;
  b.step_ns = a.step_ns + a.step_ns * 4 / 100;  // 4% slower, all of it unattributed
  const ReportDiff d = DiffReports(ReportOf({a}), ReportOf({b}));
  EXPECT_EQ(d.verdict.outcome, DiffOutcome::kUnchanged);
  b.step_ns = a.step_ns + a.step_ns * 6 / 100;
  EXPECT_EQ(DiffReports(ReportOf({a}), ReportOf({b})).verdict.outcome, DiffOutcome::kRegressed);
}

TEST(ReportDiff, LostTimeIsPerStepSoRunsOfDifferentLengthsCompare) {
  DeviceSpec longer = kStarved;
  longer.steps = 3 * kStarved.steps;
  const ReportDiff d = DiffReports(ReportOf({kStarved}), ReportOf({longer}));
  EXPECT_EQ(d.steady_ns.after, 3 * d.steady_ns.before);
  EXPECT_EQ(d.steps.after, 30);
  for (int s = 0; s < kNumSubcauses; ++s) EXPECT_EQ(d.lost_by_subcause[s].Delta(), 0) << s;
  EXPECT_EQ(d.verdict.outcome, DiffOutcome::kUnchanged);
}

TEST(ReportDiff, RunsWithoutStepsCompareLostTimePerSecondOfSteadyState) {
  Report before = ReportOf({kStarved}, ""), after = ReportOf({kFed}, "");
  for (Report* r : {&before, &after}) {
    r->steps.clear();
    r->devices[0].step_count = 0;
  }
  const ReportDiff d = DiffReports(before, after);
  EXPECT_EQ(d.unit, DiffUnit::kPerSecond);
  EXPECT_FALSE(d.mean_step_ns.has_value());
  // 20 of every 23 ms: 870 ms of each second.
  EXPECT_EQ(Sub(d, Subcause::kDataLoader).before, 869'565'217);
  EXPECT_EQ(Sub(d, Subcause::kDataLoader).after, 0);
  EXPECT_TRUE(HasCaveat(d, "no_steps"));
  EXPECT_EQ(d.verdict.metric, "lost_share");
  // 22 of 23 ms lost before, 12 of 13 after: 95.7% -> 92.3%, more than 2 points.
  EXPECT_EQ(d.verdict.outcome, DiffOutcome::kImproved);
  EXPECT_THAT(d.verdict.text, HasSubstr("lost time 95.7% -> 92.3% of the steady state"));
  EXPECT_THAT(d.verdict.text, HasSubstr("ms/s"));
  EXPECT_TRUE(d.verdict.weak);
}

TEST(ReportDiff, StepsOnOneSideOnlyAreComparedPerSecondWithACaveat) {
  Report after = ReportOf({kFed}, "");
  after.steps.clear();
  after.devices[0].step_count = 0;
  const ReportDiff d = DiffReports(ReportOf({kStarved}), after);
  EXPECT_EQ(d.unit, DiffUnit::kPerSecond);
  ASSERT_TRUE(HasCaveat(d, "no_steps"));
  EXPECT_THAT(d.caveats[0].message, HasSubstr("the run after has no steps"));
}

TEST(ReportDiff, DifferentStepSourcesAreACaveatButStillCompared) {
  const ReportDiff d =
      DiffReports(ReportOf({kStarved}, "ProfilerStep"), ReportOf({kFed}, "gpuidle.step"));
  EXPECT_TRUE(HasCaveat(d, "different_step_sources"));
  EXPECT_EQ(d.unit, DiffUnit::kPerStep);
  EXPECT_EQ(d.verdict.outcome, DiffOutcome::kImproved);
  EXPECT_TRUE(d.verdict.weak);
  EXPECT_THAT(d.verdict.text, HasSubstr("(weak comparison: different_step_sources)"));
}

TEST(ReportDiff, DevicesAreMatchedByRankAndDeviceAndTheOthersNamed) {
  DeviceSpec r0 = kStarved, r1 = kStarved, r2 = kFed;
  r0.rank = 0;
  r1.rank = 1;
  r2.rank = 2;
  DeviceSpec r1_after = kFed;
  r1_after.rank = 1;
  const ReportDiff d = DiffReports(ReportOf({r0, r1}), ReportOf({r1_after, r2}));
  ASSERT_EQ(d.devices.size(), 1u);
  EXPECT_EQ(d.devices[0].after.rank, 1);
  EXPECT_EQ(d.devices[0].before.rank, 1);
  ASSERT_TRUE(d.devices[0].mean_step_ns.has_value());
  EXPECT_EQ(d.devices[0].mean_step_ns->Delta(), -10 * kMs);
  ASSERT_EQ(d.only_before.size(), 1u);
  EXPECT_EQ(d.only_before[0].rank, 0);
  ASSERT_EQ(d.only_after.size(), 1u);
  EXPECT_EQ(d.only_after[0].rank, 2);
  ASSERT_TRUE(HasCaveat(d, "different_devices"));
  EXPECT_THAT(d.caveats[0].message,
              HasSubstr("before only: rank 0 GPU 0; after only: rank 2 GPU 0"));
}

TEST(ReportDiff, OneDeviceOnEachSideIsComparedEvenOnAnotherOrdinal) {
  DeviceSpec moved = kFed;
  moved.device = 3;
  const ReportDiff d = DiffReports(ReportOf({kStarved}), ReportOf({moved}));
  ASSERT_EQ(d.devices.size(), 1u);
  EXPECT_EQ(d.devices[0].before.device, 0);
  EXPECT_EQ(d.devices[0].after.device, 3);
  EXPECT_THAT(d.only_before, IsEmpty());
  EXPECT_TRUE(HasCaveat(d, "different_devices"));
}

TEST(ReportDiff, AnotherGpuModelIsACaveat) {
  DeviceSpec other = kFed;
  other.name = "NVIDIA A100";
  EXPECT_TRUE(HasCaveat(DiffReports(ReportOf({kStarved}), ReportOf({other})), "different_gpus"));
  EXPECT_FALSE(HasCaveat(DiffReports(ReportOf({kStarved}), ReportOf({kFed})), "different_gpus"));
}

TEST(ReportDiff, LostRecordsSamplingAndOtherThresholdsAreCaveats) {
  Report before = ReportOf({kStarved}), after = ReportOf({kFed});
  before.dropped_records = 12;
  after.coverage = Coverage{3, 30 * kMs, 90 * kMs};
  after.options.launch_gap_max_ns = 2 * kMs;
  const ReportDiff d = DiffReports(before, after);
  EXPECT_TRUE(HasCaveat(d, "records_lost"));
  EXPECT_TRUE(HasCaveat(d, "sampled"));
  EXPECT_TRUE(HasCaveat(d, "different_options"));
  EXPECT_EQ(d.before.completeness, "records_lost");
  EXPECT_EQ(d.after.completeness, "unknown");
  EXPECT_TRUE(d.after.sampled);
}

TEST(ReportDiff, MuchMoreGpuWorkPerStepIsACaveat) {
  DeviceSpec bigger = kStarved;
  bigger.busy_ns = 2 * kStarved.busy_ns;
  bigger.step_ns += kStarved.busy_ns;
  EXPECT_TRUE(HasCaveat(DiffReports(ReportOf({kStarved}), ReportOf({bigger})), "different_work"));
}

TEST(ReportDiff, WaitingForPeersIsLostTimeUnderCommWait) {
  Report before = ReportOf({kFed}), after = ReportOf({kFed});
  before.devices[0].comm_ns = 50 * kMs;
  before.devices[0].comm_wait_ns = 30 * kMs;  // 3 ms per step
  after.devices[0].comm_ns = 50 * kMs;
  after.devices[0].comm_wait_ns = 0;
  const ReportDiff d = DiffReports(before, after);
  EXPECT_EQ(Sub(d, Subcause::kCommWait).before, 3 * kMs);
  EXPECT_EQ(Sub(d, Subcause::kCommWait).after, 0);
  ASSERT_TRUE(d.comm_wait_per_unit.has_value());
  EXPECT_EQ(d.comm_wait_per_unit->Delta(), -3 * kMs);
  EXPECT_EQ(d.comm_per_unit.before, 5 * kMs);
  EXPECT_GT(d.lost_share.before, d.lost_share.after);
  ASSERT_TRUE(d.devices[0].comm_wait_ns.has_value());
  EXPECT_EQ(d.devices[0].comm_wait_ns->before, 3 * kMs);
}

TEST(ReportDiff, AWaitForPeersKnownInOneRunOnlyIsACaveat) {
  Report merged = ReportOf({kFed}), alone = ReportOf({kFed});
  merged.devices[0].comm_ns = alone.devices[0].comm_ns = 50 * kMs;
  merged.devices[0].comm_wait_ns = 30 * kMs;  // alone: nobody to wait for, as far as it knows
  EXPECT_TRUE(HasCaveat(DiffReports(merged, alone), "peer_waits_unknown"));
  EXPECT_TRUE(HasCaveat(DiffReports(alone, merged), "peer_waits_unknown"));
  EXPECT_FALSE(HasCaveat(DiffReports(merged, merged), "peer_waits_unknown"));
  EXPECT_FALSE(HasCaveat(DiffReports(alone, alone), "peer_waits_unknown"));
}

TEST(ReportDiff, StartUpIsComparedApartFromTheSteadyState) {
  DeviceSpec cold = kFed, warm = kFed;
  cold.start_up_ns = 2000 * kMs;
  warm.start_up_ns = 300 * kMs;
  const ReportDiff d = DiffReports(ReportOf({cold}), ReportOf({warm}));
  EXPECT_EQ(d.start_up_ns.before, 2000 * kMs);
  EXPECT_EQ(d.start_up_ns.after, 300 * kMs);
  ASSERT_EQ(d.start_up_parts.size(), 1u);
  EXPECT_EQ(d.start_up_parts[0].kind, OneOffKind::kCudaInit);
  EXPECT_EQ(d.start_up_parts[0].ns.Delta(), -1700 * kMs);
  EXPECT_EQ(d.verdict.outcome, DiffOutcome::kUnchanged);  // the steady state did not change
}

TEST(ReportDiff, TheMedianStepComesFromTheListedRows) {
  Report before = ReportOf({kFed}), after = ReportOf({kFed});
  after.steps[0].end_ns += 100 * kMs;  // one slow step row moves the mean, not the median
  after.devices[0].steady_end_ns += 100 * kMs;
  const ReportDiff d = DiffReports(before, after);
  ASSERT_TRUE(d.median_step_ns.has_value());
  EXPECT_EQ(d.median_step_ns->Delta(), 0);
  EXPECT_EQ(d.mean_step_ns->Delta(), 10 * kMs);
}

TEST(ReportDiff, ARunWithoutGpuWorkIsComparedWithACaveat) {
  Report empty;
  empty.source = "pytorch-profiler";
  const ReportDiff d = DiffReports(empty, ReportOf({kFed}));
  EXPECT_TRUE(HasCaveat(d, "no_devices"));
  EXPECT_THAT(d.devices, IsEmpty());
  EXPECT_EQ(d.only_after.size(), 1u);
}

TEST(ReportDiff, NamesItsUnitsStatusesAndOutcomes) {
  EXPECT_EQ(DiffUnitName(DiffUnit::kPerStep), "per_step");
  EXPECT_EQ(DiffUnitName(DiffUnit::kPerSecond), "per_second");
  EXPECT_EQ(AdviceStatusName(AdviceStatus::kResolved), "resolved");
  EXPECT_EQ(AdviceStatusName(AdviceStatus::kNew), "new");
  EXPECT_EQ(DiffOutcomeName(DiffOutcome::kRegressed), "regressed");
  Change c{0, 5};
  EXPECT_FALSE(c.Relative().has_value());
  c = {4, 5};
  EXPECT_DOUBLE_EQ(*c.Relative(), 0.25);
}

}  // namespace
}  // namespace gpuidle::internal
