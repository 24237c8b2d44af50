#include "analysis/advice.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/advice_text.h"

namespace gpuidle::internal {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kMs = 1'000'000;

// A device whose steady state runs `steps` steps of `step_ms` each.
DeviceReport Device(int device, int64_t steps, int64_t step_ms) {
  DeviceReport d;
  d.device = device;
  d.name = "NVIDIA H200";
  d.step_count = steps;
  d.steady_start_ns = 0;
  d.steady_end_ns = steps * step_ms * kMs;
  d.window_end_ns = d.steady_end_ns;
  d.window_ns = d.steady_end_ns;
  return d;
}

void SetIdle(DeviceReport* d, Subcause s, int64_t ns) {
  d->idle[s] = ns;
  d->idle_ns = d->idle.TotalNs();
  d->busy_ns = d->steady_end_ns - d->steady_start_ns - d->idle_ns;
}

const Advice& AdviceFor(const Report& r, Subcause s) {
  for (const Advice& a : r.advice) {
    if (a.subcause == s) return a;
  }
  ADD_FAILURE() << "no advice for " << QualifiedSubcauseName(s);
  static const Advice kNone;
  return kNone;
}

Report Advised(Report r) {
  AddAdvice(AnalysisOptions{}, &r);
  return r;
}

TEST(Advice, PredictsTheDataLoaderWaitPerStepAndNamesTheWorkersThatHideIt) {
  Report r;
  r.devices.push_back(Device(0, 10, 44));
  SetIdle(&r.devices[0], Subcause::kDataLoader, 400 * kMs);
  r.offenders.push_back(Offender{Subcause::kDataLoader,
                                 "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                                 "train.py(12): main", 400 * kMs, 10});
  const Report a_report = Advised(r);
  const Advice& a = AdviceFor(a_report, Subcause::kDataLoader);
  EXPECT_EQ(a.gain_ns, 400 * kMs);
  ASSERT_TRUE(a.gain_per_step_ns.has_value());
  EXPECT_EQ(*a.gain_per_step_ns, 40 * kMs);
  ASSERT_TRUE(a.gain_share_of_step.has_value());
  EXPECT_NEAR(*a.gain_share_of_step, 40.0 / 44.0, 1e-9);
  // A batch must arrive every 4 ms while loading one takes 40 ms: ten workers at once.
  EXPECT_THAT(a.fix, HasSubstr("num_workers=10,"));
  EXPECT_THAT(a.evidence, HasSubstr("40.0 ms per step"));
  EXPECT_THAT(a.evidence, HasSubstr("loads in the training process"));
  EXPECT_EQ(PredictedGain(a), "up to 40.0 ms/step, 91% of step time");
}

TEST(Advice, PredictsAPinnedCopyAtTheAssumedLinkSpeedWhenTheRunHasNoPinnedCopies) {
  Report r;
  r.devices.push_back(Device(0, 4, 50));
  SetIdle(&r.devices[0], Subcause::kH2DCopy, 170 * kMs);
  r.devices[0].h2d_pageable = {4, 1'000'000'000, 160 * kMs};  // 6.25 GB/s
  const Report a_report = Advised(r);
  const Advice& a = AdviceFor(a_report, Subcause::kH2DCopy);
  // 1 GB at 50 GB/s takes 20 ms of the 160 ms the pageable copies took.
  EXPECT_EQ(a.gain_ns, 140 * kMs);
  EXPECT_EQ(*a.gain_per_step_ns, 35 * kMs);
  EXPECT_THAT(a.fix, HasSubstr("pin_memory=True"));
  EXPECT_THAT(a.fix, HasSubstr("non_blocking=True"));
  EXPECT_THAT(a.evidence, HasSubstr("assumed for NVIDIA H200"));
}

TEST(Advice, PredictsAPinnedCopyAtTheSpeedOfTheRunsOwnPinnedCopies) {
  Report r;
  r.devices.push_back(Device(0, 4, 50));
  SetIdle(&r.devices[0], Subcause::kH2DCopy, 170 * kMs);
  r.devices[0].h2d_pageable = {4, 1'000'000'000, 160 * kMs};
  r.devices[0].h2d_pinned = {2, 100'000'000, 4 * kMs};  // 25 GB/s
  const Report a_report = Advised(r);
  const Advice& a = AdviceFor(a_report, Subcause::kH2DCopy);
  EXPECT_EQ(a.gain_ns, 120 * kMs);
  EXPECT_THAT(a.evidence, HasSubstr("this run's pinned copies"));
}

TEST(Advice, NeverPredictsMoreThanTheTimeLostToTheCause) {
  Report r;
  r.devices.push_back(Device(0, 4, 50));
  SetIdle(&r.devices[0], Subcause::kH2DCopy, 30 * kMs);  // most copies overlapped compute
  r.devices[0].h2d_pageable = {4, 1'000'000'000, 160 * kMs};
  const Report advised = Advised(r);
  EXPECT_EQ(AdviceFor(advised, Subcause::kH2DCopy).gain_ns, 30 * kMs);
}

TEST(Advice, PredictsNothingForTimeWithoutEvidence) {
  Report r;
  r.devices.push_back(Device(0, 4, 50));
  SetIdle(&r.devices[0], Subcause::kUnattributed, 100 * kMs);
  const Report a_report = Advised(r);
  const Advice& a = AdviceFor(a_report, Subcause::kUnattributed);
  EXPECT_EQ(a.gain_ns, 0);
  EXPECT_FALSE(a.gain_per_step_ns.has_value());
  EXPECT_EQ(PredictedGain(a), "");
  EXPECT_THAT(a.evidence, HasSubstr("no evidence"));
}

// Unattributed time whose launch calls are in the trace (queued work that started late) is
// not "launched outside the trace": the advice says which kind the longest gaps show.
TEST(Advice, SaysWhetherUnattributedTimeLackedItsLaunchCallsOrWasQueuedWork) {
  Report r;
  r.devices.push_back(Device(0, 4, 50));
  SetIdle(&r.devices[0], Subcause::kUnattributed, 100 * kMs);
  GapRecord queued;
  queued.subcause = Subcause::kUnattributed;
  queued.start_ns = 0;
  queued.end_ns = 60 * kMs;
  queued.next_op = "gemm";
  queued.thread = 4242;  // its launch call is in the trace
  GapRecord no_call = queued;
  no_call.end_ns = 40 * kMs;
  no_call.thread = 0;
  r.longest_gaps = {queued, no_call};
  EXPECT_THAT(AdviceFor(Advised(r), Subcause::kUnattributed).fix,
              AllOf(HasSubstr("launch calls are in the trace"), HasSubstr("another process"),
                    Not(HasSubstr("fell outside"))));
  r.longest_gaps = {no_call};
  EXPECT_THAT(AdviceFor(Advised(r), Subcause::kUnattributed).fix, HasSubstr("fell outside"));
}

TEST(Advice, NamesTheProcessesThatQueuedWorkWaitedBehind) {
  Report r;
  DeviceReport d = Device(0, 10, 100);
  SetIdle(&d, Subcause::kOtherProcess, 400 * kMs);
  d.gpu_metrics.emplace().other_processes = {{4242, uint64_t{3} << 30, 2}};
  r.devices.push_back(d);
  const Report advised = Advised(r);
  const Advice& a = AdviceFor(advised, Subcause::kOtherProcess);
  EXPECT_THAT(a.fix, HasSubstr("separate GPUs"));
  EXPECT_THAT(a.evidence, HasSubstr("40.0 ms per step lost to sync_bound.other_process"));
  EXPECT_THAT(a.evidence, HasSubstr("NVML saw pid 4242 (3.0 GiB, GPU 0) on the GPU"));
}

TEST(Advice, GivesTheGainOverTheSteadyStateWhenTheRunHasNoSteps) {
  Report r;
  r.devices.push_back(Device(0, 0, 0));
  r.devices[0].steady_end_ns = 500 * kMs;
  SetIdle(&r.devices[0], Subcause::kLaunchOverhead, 200 * kMs);
  r.devices[0].kernel_count = 4000;
  const Report a_report = Advised(r);
  const Advice& a = AdviceFor(a_report, Subcause::kLaunchOverhead);
  EXPECT_EQ(a.gain_ns, 200 * kMs);
  EXPECT_FALSE(a.gain_per_step_ns.has_value());
  EXPECT_FALSE(a.gain_share_of_step.has_value());
  EXPECT_EQ(PredictedGain(a), "up to 200.0 ms of the steady state");
}

TEST(Advice, NamesTheKernelsACudaGraphWouldReplayAndAFusedOptimizerWhenItLaunchesThem) {
  Report r;
  r.devices.push_back(Device(0, 10, 3));
  SetIdle(&r.devices[0], Subcause::kLaunchOverhead, 25 * kMs);
  r.devices[0].kernel_count = 1500;
  r.offenders.push_back(Offender{Subcause::kLaunchOverhead,
                                 "void at::native::multi_tensor_apply_kernel<...>",
                                 "aten::_foreach_add_ at train.py(30): step", 20 * kMs, 900});
  const Report a_report = Advised(r);
  const Advice& a = AdviceFor(a_report, Subcause::kLaunchOverhead);
  EXPECT_EQ(*a.gain_per_step_ns, 2'500'000);
  EXPECT_THAT(a.fix, HasSubstr("CUDA graph"));
  EXPECT_THAT(a.fix, HasSubstr("replays its 150 kernels"));
  EXPECT_THAT(a.fix, HasSubstr("fused=True"));
  EXPECT_THAT(a.evidence, HasSubstr("150 kernels per step"));
}

// A step that already replays CUDA graphs (torch.compile's reduce-overhead, torch.cuda.graph)
// is told about what it launches outside them, not to capture the step in a graph.
TEST(Advice, ToAStepThatReplaysCudaGraphsSpeaksOfTheKernelsLaunchedOutsideThem) {
  Report r;
  r.devices.push_back(Device(0, 10, 2));
  SetIdle(&r.devices[0], Subcause::kLaunchOverhead, 15 * kMs);
  r.devices[0].kernel_count = 900;  // the whole window: start-up's kernels too
  r.devices[0].graph_replays = GraphReplays{.launches = 20, .kernels = 250, .kernels_alone = 150};
  r.offenders.push_back(Offender{Subcause::kLaunchOverhead,
                                 "void at::native::multi_tensor_apply_kernel<...>",
                                 "aten::_foreach_add_ at train.py(30): step", 10 * kMs, 100});
  const Report a_report = Advised(r);
  const Advice& a = AdviceFor(a_report, Subcause::kLaunchOverhead);
  EXPECT_THAT(a.fix, AllOf(HasSubstr("already replays CUDA graphs"),
                           HasSubstr("kernels launched outside them"), HasSubstr("fused=True"),
                           Not(HasSubstr("reduce-overhead"))));
  EXPECT_THAT(a.evidence, AllOf(HasSubstr("40 kernels per step"),
                                HasSubstr("25 of them replayed from 2 CUDA graph launches per "
                                          "step, 15 launched one at a time")));
  EXPECT_EQ(*a.gain_per_step_ns, 1'500'000);  // the prediction does not depend on the wording
}

TEST(Advice, ToAStepThatReplaysCudaGraphsSpeaksOfFusionForTheGapsInsideThem) {
  Report r;
  r.devices.push_back(Device(0, 10, 2));
  SetIdle(&r.devices[0], Subcause::kKernelGap, 5 * kMs);
  r.devices[0].kernel_count = 400;
  r.devices[0].graph_replays = GraphReplays{.launches = 10, .kernels = 400, .kernels_alone = 0};
  const Report advised = Advised(r);
  const Advice& a = AdviceFor(advised, Subcause::kKernelGap);
  EXPECT_THAT(a.fix, AllOf(HasSubstr("inside the replayed CUDA graphs"), HasSubstr("fuse"),
                           Not(HasSubstr("replay them as a CUDA graph"))));
}

// A few graph launches beside many single launches (a small graph of one helper) are not a
// program that replays its step: the usual advice stands.
TEST(Advice, AFewGraphKernelsAmongManyDoNotChangeTheLaunchAdvice) {
  Report r;
  r.devices.push_back(Device(0, 10, 3));
  SetIdle(&r.devices[0], Subcause::kLaunchOverhead, 25 * kMs);
  r.devices[0].kernel_count = 1500;
  r.devices[0].graph_replays = GraphReplays{.launches = 10, .kernels = 100, .kernels_alone = 1400};
  const Report advised = Advised(r);
  const Advice& a = AdviceFor(advised, Subcause::kLaunchOverhead);
  EXPECT_THAT(a.fix, HasSubstr("capture the step in a CUDA graph"));
  EXPECT_THAT(a.evidence, Not(HasSubstr("replayed")));
}

TEST(Advice, WithoutStepsAProgramThatReplaysGraphsIsStillToldSo) {
  Report r;
  r.devices.push_back(Device(0, 0, 0));
  r.devices[0].steady_end_ns = 100 * kMs;
  SetIdle(&r.devices[0], Subcause::kKernelGap, 10 * kMs);
  r.devices[0].kernel_count = 29400;
  r.devices[0].graph_replays = GraphReplays{.launches = 300, .kernels = 29400};
  const Report advised = Advised(r);
  const Advice& a = AdviceFor(advised, Subcause::kKernelGap);
  EXPECT_THAT(a.fix, HasSubstr("inside the replayed CUDA graphs"));
  EXPECT_EQ(a.evidence,
            "29400 of the steady state's 29400 kernels replayed from 300 CUDA graph "
            "launches");
}

TEST(Advice, NamesTheItemCallSiteOnlyWhenTheFrameworkOpSaysSo) {
  Report r;
  r.devices.push_back(Device(0, 10, 12));
  SetIdle(&r.devices[0], Subcause::kHostSync, 40 * kMs);
  r.offenders.push_back(Offender{Subcause::kHostSync, "cudaStreamSynchronize",
                                 "aten::item at step() in train.py (def at line 42)", 40 * kMs,
                                 10});
  const Report item_report = Advised(r);
  const Advice& item = AdviceFor(item_report, Subcause::kHostSync);
  // The op is in the evidence; the fix names the sync and the program's place.
  EXPECT_THAT(item.fix, HasSubstr("remove .item() from the hot loop, at step() in train.py (def "
                                  "at line 42): keep the value"));
  EXPECT_THAT(item.evidence, HasSubstr("cudaStreamSynchronize at aten::item at step()"));
  EXPECT_THAT(item.evidence, HasSubstr("1x per step"));
  EXPECT_EQ(*item.gain_per_step_ns, 4 * kMs);

  // A file named after items is no evidence of .item().
  r.offenders[0].site = "item_sync.py:26 in step";
  const Report other_report = Advised(r);
  const Advice& other = AdviceFor(other_report, Subcause::kHostSync);
  EXPECT_THAT(other.fix, Not(HasSubstr("remove .item()")));
  EXPECT_THAT(other.fix, HasSubstr("from the hot loop, at item_sync.py:26 in step:"));
  // An op without a place in the program: no place.
  r.offenders[0].site = "aten::item";
  EXPECT_THAT(AdviceFor(Advised(r), Subcause::kHostSync).fix,
              HasSubstr("remove .item() from the hot loop: keep"));
}

TEST(Advice, GivesThePerStepGainOfTheDeviceThatGainsMost) {
  Report r;
  r.devices.push_back(Device(0, 10, 10));
  r.devices.push_back(Device(1, 10, 10));
  SetIdle(&r.devices[0], Subcause::kDataLoader, 10 * kMs);
  SetIdle(&r.devices[1], Subcause::kDataLoader, 60 * kMs);
  const Report a_report = Advised(r);
  const Advice& a = AdviceFor(a_report, Subcause::kDataLoader);
  EXPECT_EQ(a.gain_ns, 70 * kMs);
  EXPECT_EQ(*a.gain_per_step_ns, 6 * kMs);
  EXPECT_NEAR(*a.gain_share_of_step, 0.6, 1e-9);
}

TEST(Advice, PredictsTheWaitForPeersAsTheGainOfFixingTheStraggler) {
  Report r;
  r.devices.push_back(Device(0, 10, 20));
  r.devices[0].comm_wait_ns = 150 * kMs;
  const Report a_report = Advised(r);
  const Advice& a = AdviceFor(a_report, Subcause::kCommWait);
  EXPECT_EQ(a.gain_ns, 150 * kMs);
  EXPECT_EQ(*a.gain_per_step_ns, 15 * kMs);
}

TEST(Advice, SaysNothingIsWorthFixingBelowTheThresholdWithTheFigure) {
  Report r;
  r.devices.push_back(Device(0, 10, 10));  // 100 ms of steady state
  SetIdle(&r.devices[0], Subcause::kKernelGap, 3 * kMs);
  r.devices[0].idle[Subcause::kUnattributed] = 1 * kMs;
  r.devices[0].idle_ns = 4 * kMs;
  const Report healthy = Advised(r);
  EXPECT_TRUE(healthy.advice.empty());
  ASSERT_TRUE(healthy.verdict.has_value());
  EXPECT_FALSE(healthy.verdict->worth_fixing);
  EXPECT_EQ(healthy.verdict->lost_ns, 4 * kMs);
  EXPECT_EQ(healthy.verdict->steady_ns, 100 * kMs);
  EXPECT_DOUBLE_EQ(healthy.verdict->threshold_share, AnalysisOptions{}.worth_fixing_min_share);
  EXPECT_DOUBLE_EQ(healthy.verdict->LostShare(), 0.04);

  // Waiting for peers is lost time too: with it the same device is worth fixing.
  r.devices[0].comm_wait_ns = 2 * kMs;
  const Report waiting = Advised(r);
  ASSERT_TRUE(waiting.verdict.has_value());
  EXPECT_TRUE(waiting.verdict->worth_fixing);
  EXPECT_EQ(waiting.verdict->lost_ns, 6 * kMs);
  EXPECT_FALSE(waiting.advice.empty());
}

TEST(Advice, GivesNoVerdictWithoutASteadyState) {
  Report r;
  EXPECT_FALSE(Advised(r).verdict.has_value());
}

TEST(Advice, LeavesOutASubcauseUnderOnePercentOfTheSteadyState) {
  Report r;
  r.devices.push_back(Device(0, 10, 10));  // 100 ms
  SetIdle(&r.devices[0], Subcause::kHostSync, 8 * kMs);
  r.devices[0].idle[Subcause::kKernelGap] = 900'000;  // 10% of the lost time, 0.9% of the state
  r.devices[0].idle_ns = r.devices[0].idle.TotalNs();
  const Report a_report = Advised(r);
  ASSERT_EQ(a_report.advice.size(), 1u);
  const Advice& a = a_report.advice.front();
  EXPECT_EQ(a.subcause, Subcause::kHostSync);
  EXPECT_NEAR(a.share_of_steady_state, 0.08, 1e-9);
  EXPECT_NEAR(a.share_of_lost_time, 8.0 / 8.9, 1e-9);
}

TEST(Advice, NeverAsksForWhatTheDataLoaderAlreadyDoes) {
  Report r;
  r.devices.push_back(Device(0, 10, 44));
  SetIdle(&r.devices[0], Subcause::kDataLoader, 400 * kMs);
  // gpuidle's Python marker names the loader's workers.
  r.offenders.push_back(
      Offender{Subcause::kDataLoader, "DataLoader.__next__ (num_workers=18)", "", 400 * kMs, 10});
  const Report many = Advised(r);
  const Advice& a = AdviceFor(many, Subcause::kDataLoader);
  EXPECT_THAT(a.fix, HasSubstr("cannot keep up with its 18 workers"));
  EXPECT_THAT(a.fix, HasSubstr("make each batch cheaper to produce"));
  EXPECT_THAT(a.fix, Not(HasSubstr("num_workers=")));
  EXPECT_THAT(a.evidence, HasSubstr("the DataLoader has 18 workers"));

  // torch.profiler's names tell workers from none, not how many.
  r.offenders[0].what = "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__";
  const Report some = Advised(r);
  EXPECT_THAT(AdviceFor(some, Subcause::kDataLoader).fix,
              AllOf(HasSubstr("cannot keep up with its workers"), Not(HasSubstr("num_workers="))));
  EXPECT_THAT(AdviceFor(some, Subcause::kDataLoader).evidence,
              HasSubstr("loads in worker processes"));

  // Unknown: both cases, each said as such.
  r.offenders[0].what = "next_batch";
  const Report unknown = Advised(r);
  EXPECT_THAT(
      AdviceFor(unknown, Subcause::kDataLoader).fix,
      AllOf(HasSubstr("if it loads in the training process"), HasSubstr("x the workers it has")));
}

}  // namespace
}  // namespace gpuidle::internal
