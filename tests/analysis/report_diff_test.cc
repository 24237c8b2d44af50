#include "analysis/report_diff.h"

#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ingest/report_reader.h"

namespace gpuidle::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

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
  int64_t kernels_per_step = 0;
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
  d.kernel_count = s.steps * s.kernels_per_step;
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

std::vector<std::string> ReasonCodes(const ReportDiff& d) {
  std::vector<std::string> codes;
  for (const DiffCaveat& r : d.comparability.reasons) codes.push_back(r.code);
  return codes;
}

// The report with kernels of these names ending its longest gaps (as the analysis lists them).
Report WithKernelNames(Report r, const std::vector<std::string>& names) {
  for (const std::string& n : names) {
    GapRecord g;
    g.start_ns = 0;
    g.end_ns = 1;
    g.next_op = n;
    r.longest_gaps.push_back(g);
  }
  return r;
}

// kStarved and kFed with kernels: the same program before and after its fix.
DeviceSpec WithKernels(DeviceSpec s, int64_t per_step) {
  s.kernels_per_step = per_step;
  return s;
}

Report Bundled(const std::string& path) {
  absl::StatusOr<Report> r = ReadReportFile(std::string(GPUIDLE_TEST_DATA_DIR) + "/" + path);
  EXPECT_TRUE(r.ok()) << path << ": " << r.status();
  return r.ok() ? *std::move(r) : Report{};
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
  EXPECT_TRUE(d.comparability.comparable);
  EXPECT_THAT(d.comparability.reasons, IsEmpty());
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

TEST(ReportDiff, DifferentStepSourcesAreNotComparableButStillCompared) {
  const ReportDiff d =
      DiffReports(ReportOf({kStarved}, "ProfilerStep"), ReportOf({kFed}, "gpuidle.step"));
  EXPECT_THAT(ReasonCodes(d), ElementsAre("step_source"));
  EXPECT_THAT(d.comparability.reasons[0].message,
              HasSubstr("from ProfilerStep before and gpuidle.step after"));
  EXPECT_FALSE(HasCaveat(d, "different_step_sources"));
  EXPECT_EQ(d.unit, DiffUnit::kPerStep);
  EXPECT_EQ(d.mean_step_ns->Delta(), -10 * kMs);  // the figures are still compared
  EXPECT_EQ(d.verdict.outcome, DiffOutcome::kNotComparable);
  EXPECT_TRUE(d.verdict.weak);
  EXPECT_THAT(d.verdict.text, HasSubstr("not comparable (step_source): step time"));
  // The same step source on both sides, or steps on one side only, is no reason.
  EXPECT_TRUE(DiffReports(ReportOf({kStarved}), ReportOf({kFed})).comparability.comparable);
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

TEST(ReportDiff, AnotherGpuModelIsNotComparable) {
  DeviceSpec other = kFed;
  other.name = "NVIDIA A100";
  const ReportDiff d = DiffReports(ReportOf({kStarved}), ReportOf({other}));
  EXPECT_THAT(ReasonCodes(d), ElementsAre("gpu_model"));
  EXPECT_THAT(d.comparability.reasons[0].message,
              HasSubstr("GPU 0 is a NVIDIA H200 before and a NVIDIA A100 after"));
  EXPECT_EQ(d.verdict.outcome, DiffOutcome::kNotComparable);
  EXPECT_TRUE(DiffReports(ReportOf({kStarved}), ReportOf({kFed})).comparability.comparable);
  // A name one report lacks is no other model.
  other.name = "";
  EXPECT_TRUE(DiffReports(ReportOf({kStarved}), ReportOf({other})).comparability.comparable);
}

TEST(ReportDiff, AnotherNumberOfGpusIsNotComparable) {
  DeviceSpec r0 = kFed, r1 = kFed;
  r0.rank = 0;
  r1.rank = 1;
  DeviceSpec starved0 = kStarved;
  starved0.rank = 0;
  const ReportDiff d = DiffReports(ReportOf({starved0}), ReportOf({r0, r1}));
  EXPECT_THAT(ReasonCodes(d), ElementsAre("device_count"));
  EXPECT_THAT(d.comparability.reasons[0].message, HasSubstr("1 ran work before, 2 after"));
  EXPECT_EQ(d.verdict.outcome, DiffOutcome::kNotComparable);
  EXPECT_TRUE(HasCaveat(d, "different_devices"));  // which devices, as before
  // A run without GPU work is a caveat of its own (no_devices), not another count.
  Report empty;
  empty.source = "pytorch-profiler";
  EXPECT_TRUE(DiffReports(empty, ReportOf({kFed})).comparability.comparable);
}

// Issue 4: two programs, 29 and 244 kernels per step, were "the fix worked".
TEST(ReportDiff, KernelsPerStepBeyondOneAndAHalfTimesAreAnotherProgram) {
  const ReportDiff d =
      DiffReports(ReportOf({WithKernels(kStarved, 29)}), ReportOf({WithKernels(kFed, 244)}));
  EXPECT_FALSE(d.comparability.comparable);
  EXPECT_THAT(ReasonCodes(d), ElementsAre("kernels_per_step"));
  EXPECT_EQ(d.comparability.reasons[0].message,
            "kernels per step: 29 before, 244 after (x8.4, more than x1.5)");
  EXPECT_DOUBLE_EQ(*d.comparability.kernels_per_step_before, 29.0);
  EXPECT_DOUBLE_EQ(*d.comparability.kernels_per_step_after, 244.0);
  // The figures are compared all the same; the verdict is withheld.
  EXPECT_EQ(d.mean_step_ns->after, 13 * kMs);
  EXPECT_EQ(d.verdict.outcome, DiffOutcome::kNotComparable);
  EXPECT_FALSE(d.verdict.main_change.has_value());
  EXPECT_TRUE(d.verdict.weak);
  EXPECT_EQ(d.verdict.text,
            "not comparable (kernels_per_step): step time 23.0 -> 13.0 ms (-43%) between what "
            "look like different programs; no verdict on a fix");
  EXPECT_THAT(d.verdict.text, Not(HasSubstr("worked")));
  // Fewer kernels per step count as much as more.
  EXPECT_FALSE(
      DiffReports(ReportOf({WithKernels(kStarved, 244)}), ReportOf({WithKernels(kFed, 29)}))
          .comparability.comparable);
}

TEST(ReportDiff, KernelsPerStepWithinOneAndAHalfTimesAreTheSameProgram) {
  const ReportDiff same = DiffReports(ReportOf({WithKernels(kStarved, 20)}),
                                      ReportOf({WithKernels(kFed, 30)}));  // x1.5 exactly
  EXPECT_TRUE(same.comparability.comparable);
  EXPECT_EQ(same.verdict.outcome, DiffOutcome::kImproved);
  EXPECT_THAT(same.verdict.text, HasSubstr("the fix worked"));
  EXPECT_FALSE(DiffReports(ReportOf({WithKernels(kStarved, 20)}), ReportOf({WithKernels(kFed, 31)}))
                   .comparability.comparable);
  // Without steps on a side, kernels per step are not known: no reason.
  Report after = ReportOf({WithKernels(kFed, 244)}, "");
  after.steps.clear();
  after.devices[0].step_count = 0;
  after.devices[0].kernel_count = 2440;
  const ReportDiff no_steps = DiffReports(ReportOf({WithKernels(kStarved, 29)}), after);
  EXPECT_TRUE(no_steps.comparability.comparable);
  EXPECT_FALSE(no_steps.comparability.kernels_per_step_before.has_value());
}

// A CUDA graph with a capturable optimizer: 252 -> 599 kernels per step, the same kernels.
TEST(ReportDiff, MoreKernelsPerStepOfTheSameKernelsAreACaveatNotAnotherProgram) {
  const std::vector<std::string> kernels = {"gemmSN_TN_kernel", "gemmSN_NN_kernel",
                                            "elementwise_kernel<relu>", "adam_kernel"};
  const ReportDiff d =
      DiffReports(WithKernelNames(ReportOf({WithKernels(kStarved, 252)}), kernels),
                  WithKernelNames(ReportOf({WithKernels(kFed, 599)}),
                                  {"gemmSN_TN_kernel", "gemmSN_NN_kernel",
                                   "elementwise_kernel<relu>", "copy_kernel", "adam_kernel"}));
  EXPECT_TRUE(d.comparability.comparable);
  EXPECT_EQ(d.comparability.kernel_names_shared, 4);
  EXPECT_TRUE(HasCaveat(d, "different_kernel_count"));
  EXPECT_EQ(d.verdict.outcome, DiffOutcome::kImproved);
  // The same counts with other kernels: another program.
  const ReportDiff other =
      DiffReports(WithKernelNames(ReportOf({WithKernels(kStarved, 252)}), kernels),
                  WithKernelNames(ReportOf({WithKernels(kFed, 599)}),
                                  {"gemmSN_TN_kernel", "gemmSN_NN_kernel", "conv", "bn", "pool"}));
  EXPECT_THAT(ReasonCodes(other), ElementsAre("kernels_per_step"));
}

TEST(ReportDiff, KernelNamesMostlyDifferentAreAnotherProgram) {
  const Report before = WithKernelNames(ReportOf({kStarved}), {"a", "b", "c", "d"});
  const ReportDiff d = DiffReports(before, WithKernelNames(ReportOf({kFed}), {"a", "x", "y"}));
  EXPECT_THAT(ReasonCodes(d), ElementsAre("kernel_names"));
  EXPECT_THAT(d.comparability.reasons[0].message,
              HasSubstr("the reports name 4 and 3 kernels (offenders, longest gaps), 1 of them in "
                        "both"));
  EXPECT_EQ(d.comparability.kernel_names_before, 4);
  EXPECT_EQ(d.comparability.kernel_names_after, 3);
  EXPECT_EQ(d.comparability.kernel_names_shared, 1);
  EXPECT_EQ(d.verdict.outcome, DiffOutcome::kNotComparable);
  // Half the shorter list in common: the same program.
  EXPECT_TRUE(DiffReports(before, WithKernelNames(ReportOf({kFed}), {"a", "b", "x", "y"}))
                  .comparability.comparable);
  // Too few names to judge by.
  EXPECT_TRUE(
      DiffReports(before, WithKernelNames(ReportOf({kFed}), {"x", "y"})).comparability.comparable);
  // Launch-bound offenders are kernels too; other offenders (API calls, ranges) are not.
  Report offenders = ReportOf({kFed});
  for (const char* what : {"x", "y", "z"}) {
    offenders.offenders.push_back({Subcause::kLaunchOverhead, what, "", 1, 1});
  }
  EXPECT_FALSE(DiffReports(before, offenders).comparability.comparable);
  for (Offender& o : offenders.offenders) o.subcause = Subcause::kHostSync;
  EXPECT_TRUE(DiffReports(before, offenders).comparability.comparable);
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

TEST(ReportDiff, MoreGpuWorkPerStepIsACaveatAndBeyondOneAndAHalfTimesAnotherProgram) {
  DeviceSpec more = kStarved;
  more.busy_ns = kStarved.busy_ns * 14 / 10;  // +40%: another batch size?
  more.step_ns += more.busy_ns - kStarved.busy_ns;
  const ReportDiff d = DiffReports(ReportOf({kStarved}), ReportOf({more}));
  EXPECT_TRUE(HasCaveat(d, "different_work"));
  EXPECT_TRUE(d.comparability.comparable);

  DeviceSpec twice = kStarved;
  twice.busy_ns = 2 * kStarved.busy_ns;
  twice.step_ns += kStarved.busy_ns;
  const ReportDiff other = DiffReports(ReportOf({kStarved}), ReportOf({twice}));
  EXPECT_THAT(ReasonCodes(other), ElementsAre("busy_per_step"));
  EXPECT_EQ(other.comparability.reasons[0].message,
            "GPU work per step (busy outside collectives that ran alone): 1.00 ms before, 2.00 ms "
            "after (x2.0, more than x1.5)");
  EXPECT_TRUE(HasCaveat(other, "different_work"));  // the caveat of over 25% stays

  // The same kernels doing twice the work: a caveat (a larger batch), no other program.
  const std::vector<std::string> kernels = {"gemm", "relu", "adam"};
  const ReportDiff batch = DiffReports(WithKernelNames(ReportOf({kStarved}), kernels),
                                       WithKernelNames(ReportOf({twice}), kernels));
  EXPECT_TRUE(batch.comparability.comparable);
  EXPECT_TRUE(HasCaveat(batch, "different_work"));

  // Collectives that ran alone are no work of the step: a straggler's peers wait in them.
  Report waited = ReportOf({kFed}), fixed = ReportOf({kFed});
  waited.devices[0].busy_ns += 100 * kMs;
  waited.devices[0].comm_ns = waited.devices[0].exposed_comm_ns = 100 * kMs;
  EXPECT_TRUE(DiffReports(waited, fixed).comparability.comparable);
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

TEST(ReportDiff, ARunOfMadeUpDeviceTimesIsACaveat) {
  Report ranges = ReportOf({kFed}), kernels = ReportOf({kFed});
  ranges.device_times = "made_up";
  EXPECT_TRUE(HasCaveat(DiffReports(ranges, kernels), "device_times_made_up"));
  EXPECT_TRUE(HasCaveat(DiffReports(kernels, ranges), "device_times_made_up"));
  EXPECT_FALSE(HasCaveat(DiffReports(kernels, kernels), "device_times_made_up"));
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

TEST(ReportDiff, AdviceIsNewOnlyForACauseThatLostNoTimeBefore) {
  // Launch overhead lost time before too (1 of 21 ms lost: below the advice's 5%), and less of
  // it after: advised after only, yet no new cause.
  DeviceSpec before = kStarved, after = kFed;
  before.idle_per_step = {{Subcause::kDataLoader, 20 * kMs}, {Subcause::kLaunchOverhead, 1 * kMs}};
  before.step_ns = 22 * kMs;
  after.idle_per_step = {{Subcause::kLaunchOverhead, 500'000}};
  after.step_ns = 1 * kMs + 500'000;
  const ReportDiff d = DiffReports(ReportOf({before}), ReportOf({after}));
  ASSERT_EQ(d.advice.size(), 2u);
  EXPECT_EQ(d.advice[0].subcause, Subcause::kDataLoader);
  EXPECT_EQ(d.advice[0].status, AdviceStatus::kResolved);
  EXPECT_EQ(d.advice[1].subcause, Subcause::kLaunchOverhead);
  EXPECT_EQ(d.advice[1].status, AdviceStatus::kRemaining);
  EXPECT_FALSE(d.advice[1].share_before.has_value());  // no advice for it before
  EXPECT_LT(Sub(d, Subcause::kLaunchOverhead).Delta(), 0);
  // Absent before: new.
  after.idle_per_step = {{Subcause::kHostSync, 500'000}};
  const ReportDiff added = DiffReports(ReportOf({before}), ReportOf({after}));
  ASSERT_FALSE(added.advice.empty());
  EXPECT_EQ(added.advice.back().subcause, Subcause::kHostSync);
  EXPECT_EQ(added.advice.back().status, AdviceStatus::kNew);
}

// A report written before devices[].step_count lists its steps: their rows count.
TEST(ReportDiff, CountsTheListedStepsOfAReportWithoutStepCounts) {
  Report old = ReportOf({kStarved});
  old.devices[0].step_count = 0;
  const ReportDiff d = DiffReports(old, ReportOf({kFed}));
  EXPECT_EQ(d.unit, DiffUnit::kPerStep);
  EXPECT_EQ(d.steps.before, 10);
  EXPECT_EQ(d.mean_step_ns->before, 23 * kMs);
  // Not where rows were left out.
  old.steps_not_listed = 3;
  EXPECT_EQ(DiffReports(old, ReportOf({kFed})).unit, DiffUnit::kPerSecond);
}

// The bundled reports of two programs recorded on the H200 (issue 4): 31 and 264 kernels per
// listed step, 4 of 15 kernel names in common.
TEST(ReportDiff, TheBundledReportsOfTwoProgramsAreNotComparable) {
  const Report starved = Bundled("traces/live_python/dataloader_starved.report.json");
  const Report tiny = Bundled("traces/live_python/tiny_mlp_launch_bound.report.json");
  const ReportDiff d = DiffReports(starved, tiny);
  EXPECT_THAT(ReasonCodes(d), ElementsAre("kernels_per_step", "kernel_names"));
  EXPECT_EQ(d.unit, DiffUnit::kPerStep);
  EXPECT_GT(*d.comparability.kernels_per_step_after, 5 * *d.comparability.kernels_per_step_before);
  EXPECT_EQ(d.verdict.outcome, DiffOutcome::kNotComparable);
  EXPECT_THAT(d.verdict.text, Not(HasSubstr("worked")));
  // The launch overhead the run before had too is not new.
  for (const AdviceChange& a : d.advice) EXPECT_NE(a.status, AdviceStatus::kNew) << a.fix;
  EXPECT_FALSE(DiffReports(tiny, starved).comparability.comparable);
  // Each against itself, and against the other bundled runs of its own program.
  EXPECT_TRUE(DiffReports(starved, starved).comparability.comparable);
  EXPECT_TRUE(DiffReports(tiny, tiny).comparability.comparable);
}

// The runs before and after each advised fix (tests/data/gpu_runs/2026-12-02_gains) are one
// program each: comparable, and the fix worked; the CUDA graph's more kernels are a caveat.
TEST(ReportDiff, TheBundledRunsBeforeAndAfterAFixAreComparable) {
  for (const std::string name :
       {"dataloader_starved", "item_sync", "pageable_h2d", "tiny_mlp_launch_bound"}) {
    const std::string dir = "gpu_runs/2026-12-02_gains/" + name;
    const ReportDiff d =
        DiffReports(Bundled(dir + ".before.report.json"), Bundled(dir + ".after.report.json"));
    EXPECT_TRUE(d.comparability.comparable) << name << ": " << d.verdict.text;
    EXPECT_EQ(d.verdict.outcome, DiffOutcome::kImproved) << name;
    EXPECT_THAT(d.verdict.text, HasSubstr("the fix worked")) << name;
    EXPECT_EQ(HasCaveat(d, "different_kernel_count"), name == "tiny_mlp_launch_bound") << name;
  }
  // And across programs, none is.
  const ReportDiff across =
      DiffReports(Bundled("gpu_runs/2026-12-02_gains/dataloader_starved.before.report.json"),
                  Bundled("gpu_runs/2026-12-02_gains/item_sync.after.report.json"));
  EXPECT_FALSE(across.comparability.comparable);
}

TEST(ReportDiff, NamesItsUnitsStatusesAndOutcomes) {
  EXPECT_EQ(DiffUnitName(DiffUnit::kPerStep), "per_step");
  EXPECT_EQ(DiffUnitName(DiffUnit::kPerSecond), "per_second");
  EXPECT_EQ(AdviceStatusName(AdviceStatus::kResolved), "resolved");
  EXPECT_EQ(AdviceStatusName(AdviceStatus::kNew), "new");
  EXPECT_EQ(DiffOutcomeName(DiffOutcome::kRegressed), "regressed");
  EXPECT_EQ(DiffOutcomeName(DiffOutcome::kNotComparable), "not_comparable");
  Change c{0, 5};
  EXPECT_FALSE(c.Relative().has_value());
  c = {4, 5};
  EXPECT_DOUBLE_EQ(*c.Relative(), 0.25);
}

}  // namespace
}  // namespace gpuidle::internal
