// Each subcause of the idle taxonomy on a small synthetic timeline (times in microseconds).
#include "analysis/analyze.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gpuidle/analyze.h"
#include "gtest/gtest.h"
#include "testing/analysis_helpers.h"
#include "testing/timeline_builder.h"

namespace gpuidle {
namespace {

using ::gpuidle::testing::TimelineBuilder;
using internal::Analyze;
using internal::CopyKind;

using ::gpuidle::testing::kUs;
using ::gpuidle::testing::MustAnalyze;
using ::gpuidle::testing::OnlyDevice;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

// Timelines are built one host call and the op it issued per line.
// clang-format off
TEST(Analyze, SplitsALateLaunchIntoLaunchOverheadAndKernelGap) {
  // The host issues the second kernel 50 us after the first finished; after the launch call
  // returns, the kernel still takes 10 us to start.
  const auto t = TimelineBuilder()
                     .Launch(1, 0, 5).Kernel(10, 100)
                     .Launch(1, 150, 160).Kernel(170, 200)
                     .Build();
  const Report r = MustAnalyze(t);
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(d.window_ns, 200 * kUs);
  // [0,10) before the first kernel is start-up; the steady state is [10,200).
  EXPECT_EQ(d.PhaseNs(Phase::kStartUp), 10 * kUs);
  EXPECT_EQ(d.busy_ns, 120 * kUs);
  EXPECT_EQ(d.idle_ns, 70 * kUs);
  EXPECT_EQ(d.idle[Subcause::kLaunchOverhead], 60 * kUs);
  EXPECT_EQ(d.idle[Subcause::kKernelGap], 10 * kUs);
}

TEST(Analyze, CountsOverlappingKernelsOnceAsBusy) {
  const auto t = TimelineBuilder()
                     .Launch(1, 0, 1).Stream(7).Kernel(10, 100)
                     .Launch(1, 1, 2).Stream(8).Kernel(50, 150)
                     .Launch(1, 2, 3).Stream(9).Kernel(60, 80)
                     .Build();
  const Report r = MustAnalyze(t);
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(d.busy_ns, 140 * kUs);
  EXPECT_EQ(d.idle_ns, 0);  // [0,10) is start-up
  EXPECT_EQ(d.PhaseNs(Phase::kStartUp), 10 * kUs);
}

TEST(Analyze, NamesTheDataLoaderWhenTheLaunchingThreadWaitedInADataRange) {
  const auto t = TimelineBuilder()
                     .Launch(1, 0, 5).Kernel(10, 100)
                     .Data(1, 110, 5000)
                     .Launch(1, 5010, 5020).Kernel(5030, 5100)
                     .Build();
  const Report r = MustAnalyze(t);
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(d.idle[Subcause::kDataLoader], 4890 * kUs);
  // Before and after the range the host was away from CUDA for ~5 ms: host work.
  EXPECT_EQ(d.idle[Subcause::kHost], 20 * kUs);
  EXPECT_EQ(d.idle.CauseNs(Cause::kDataStarved), 4910 * kUs);
}

TEST(Analyze, CallsLongUnmarkedHostWorkDataStarvedHost) {
  const auto t = TimelineBuilder()
                     .Launch(1, 0, 5).Kernel(10, 100)
                     .Launch(1, 5010, 5020).Kernel(5030, 5100)
                     .Build();
  const Report r = MustAnalyze(t);
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(d.idle[Subcause::kHost], 4910 * kUs);
}

TEST(Analyze, TheLaunchGapThresholdSeparatesLaunchOverheadFromHostWork) {
  const auto t = TimelineBuilder()
                     .Launch(1, 0, 5).Kernel(10, 100)
                     .Launch(1, 605, 610).Kernel(615, 700)
                     .Build();
  AnalysisOptions options;
  options.launch_gap_max_ns = 1000 * kUs;
  EXPECT_EQ(OnlyDevice(MustAnalyze(t, options)).idle[Subcause::kHost], 0);
  options.launch_gap_max_ns = 500 * kUs;
  EXPECT_EQ(OnlyDevice(MustAnalyze(t, options)).idle[Subcause::kHost], 505 * kUs);
}

// Inside a framework op that launches, the host is issuing work however long the op lasts
// while nested ops or CUDA calls keep coming (eager dispatch); a long stretch with neither (a
// compiled region's guards, CPU work inside a module) is host work, as outside ops.
TEST(Analyze, TimeInsideAFrameworkOpThatLaunchesIsLaunchOverheadUnlessNothingHappensInIt) {
  auto dispatching = TimelineBuilder();
  dispatching.Launch(1, 0, 5).Kernel(10, 100).Op(1, 50, 5000, "aten::linear");
  for (int i = 0; i < 12; ++i) dispatching.Op(1, 100 + 400 * i, 300 + 400 * i, "aten::t");
  dispatching.Launch(1, 4990, 4995).Kernel(5000, 5100);
  const DeviceReport d = OnlyDevice(MustAnalyze(dispatching.Build()));
  EXPECT_EQ(d.idle[Subcause::kHost], 0);
  EXPECT_EQ(d.idle[Subcause::kLaunchOverhead], 4895 * kUs);

  const auto compiled = TimelineBuilder()
                            .Launch(1, 0, 5).Kernel(10, 100)
                            .Op(1, 50, 9000, "Torch-Compiled Region: 0/0")
                            .Launch(1, 200, 205).Kernel(210, 300)
                            .Launch(1, 8990, 8995).Kernel(9000, 9100)
                            .Build();
  const DeviceReport c = OnlyDevice(MustAnalyze(compiled));
  // 300-8990 us: 8.7 ms without a call or a nested op; the short stretch before the second
  // launch (100-200 us) and the launch calls stay launch overhead.
  EXPECT_EQ(c.idle[Subcause::kHost], 8690 * kUs);
  EXPECT_EQ(c.idle[Subcause::kLaunchOverhead], 110 * kUs);
}

TEST(Analyze, LooksAtEveryLaunchingThreadNotOnlyTheOneThatLaunchedTheNextKernel) {
  // Thread 2 (say, the autograd thread) launches the kernel that ends the gap after a long
  // pause of its own, while thread 1 was issuing work all along.
  auto b = TimelineBuilder();
  b.Launch(2, 0, 5).Kernel(10, 20);
  for (int i = 0; i < 50; ++i) b.OtherCall(1, 30 + 100 * i, 40 + 100 * i);
  b.Launch(1, 5000, 5003).Kernel(5004, 5005);
  b.Launch(2, 5020, 5030).Kernel(5040, 5100);
  const Report r = MustAnalyze(b.Build());
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(d.idle[Subcause::kHost], 0);
  EXPECT_GT(d.idle.CauseNs(Cause::kLaunchBound), 0);
}

TEST(Analyze, CallsAPageableCopyCallInProgressH2DCopy) {
  const auto t = TimelineBuilder()
                     .Launch(1, 0, 5).Kernel(10, 100)
                     .CopyCall(1, 100, 5000).Copy(200, 4990, CopyKind::kHtoD, true)
                     .Launch(1, 5010, 5020).Kernel(5030, 5100)
                     .Build();
  const Report r = MustAnalyze(t);
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(d.idle[Subcause::kH2DCopy], 4900 * kUs);
}

TEST(Analyze, CallsQueuedWorkWaitingForAnAsyncInputCopyH2DCopy) {
  const auto t = TimelineBuilder()
                     .Launch(1, 0, 5).Kernel(10, 100)
                     .CopyCall(1, 20, 25).Copy(100, 3000, CopyKind::kHtoD)
                     .Launch(1, 30, 35).Kernel(3000, 3100)
                     .Build();
  const Report r = MustAnalyze(t);
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(d.idle[Subcause::kH2DCopy], 2900 * kUs);
}

TEST(Analyze, ChargesHostWorkAfterASyncToTheSyncUpToTheTimeItBlocked) {
  // .item() after 10 ms of GPU work, then 4 ms of host work using the value: without the
  // sync those 4 ms would have overlapped the GPU work.
  const auto t = TimelineBuilder()
                     .Launch(1, 0, 5).Kernel(10, 10000)
                     .Sync(1, 6, 10005)
                     .Launch(1, 14000, 14010).Kernel(14020, 15000)
                     .Build();
  const Report r = MustAnalyze(t);
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(d.idle[Subcause::kHostSync], 4010 * kUs);
  EXPECT_EQ(d.idle[Subcause::kKernelGap], 10 * kUs);
}

TEST(Analyze, ChargesOnlyTheBlockedTimeToASyncFollowedByLongDataLoading) {
  const auto t = TimelineBuilder()
                     .Launch(1, 0, 5).Kernel(10, 1000)
                     .Sync(1, 6, 1006)
                     .Data(1, 1010, 50000)
                     .Launch(1, 50005, 50010).Kernel(50020, 51000)
                     .Build();
  const Report r = MustAnalyze(t);
  const DeviceReport& d = OnlyDevice(r);
  // The sync's share is the first 1000 us of the gap; the data range gets what is left of it.
  EXPECT_EQ(d.idle[Subcause::kHostSync], 1000 * kUs);
  EXPECT_EQ(d.idle[Subcause::kDataLoader], (50000 - 2000) * kUs);
  EXPECT_GT(d.idle.CauseNs(Cause::kDataStarved), 10 * d.idle.CauseNs(Cause::kSyncBound));
}

TEST(Analyze, TreatsABlockingCopyToTheHostAsASync) {
  const auto t = TimelineBuilder()
                     .Launch(1, 0, 5).Kernel(10, 10000)
                     .CopyCall(1, 6, 10008, "cudaMemcpy").Copy(10000, 10004, CopyKind::kDtoH)
                     .Launch(1, 12000, 12010).Kernel(12020, 13000)
                     .Build();
  const Report r = MustAnalyze(t);
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(d.idle[Subcause::kHostSync], 2010 * kUs);
}

TEST(Analyze, AFreeThatWaitedForTheDeviceIsAllocatorTimeNotLaunchOverhead) {
  // torch.cuda.empty_cache() after 10 ms of GPU work: cudaFree waits for the device, then
  // returns the memory; the next step allocates again.
  const auto t = TimelineBuilder()
                     .Launch(1, 0, 5).Kernel(10, 10000)
                     .OtherCall(1, 6, 10500, "cudaFree")
                     .OtherCall(1, 10510, 11500, "cudaMalloc")
                     .Launch(1, 11505, 11510).Kernel(11520, 12000)
                     .Build();
  const Report r = MustAnalyze(t);
  const DeviceReport& d = OnlyDevice(r);
  // As a sync: the free blocked 10494 us, so the whole host-late part [10000, 11510) is its.
  EXPECT_EQ(d.idle[Subcause::kAllocator], 1510 * kUs);
  EXPECT_EQ(d.idle[Subcause::kLaunchOverhead], 0);
  EXPECT_EQ(d.idle[Subcause::kKernelGap], 10 * kUs);
  EXPECT_EQ(CauseOf(Subcause::kAllocator), Cause::kSyncBound);
  ASSERT_FALSE(r.advice.empty());
  EXPECT_EQ(r.advice.front().subcause, Subcause::kAllocator);
  EXPECT_THAT(r.advice.front().fix, HasSubstr("empty_cache"));
}

TEST(Analyze, ASyncRightBeforeTheAllocatorReleasesMemoryIsTheAllocators) {
  // empty_cache() with expandable segments: a stream sync, then the pages are unmapped; the
  // next step maps new ones. The same sync before a launch stays a sync.
  const auto t = TimelineBuilder()
                     .Launch(1, 0, 5).Kernel(10, 10000)
                     .Sync(1, 6, 10005)
                     .OtherCall(1, 10006, 10100, "cuMemUnmap")
                     .OtherCall(1, 10101, 10150, "cuMemRelease")
                     .Launch(1, 10200, 10210).Kernel(10220, 11000)
                     .OtherCall(1, 10300, 11100, "cuMemSetAccess")
                     .Launch(1, 11105, 11110).Kernel(11120, 20000)
                     .Sync(1, 11111, 20005)
                     .Launch(1, 20100, 20110).Kernel(20120, 21000)
                     .Build();
  // The run lost 2% of its steady state, which is below the advice's floor: lowered, to see
  // what the advice would say.
  AnalysisOptions options;
  options.worth_fixing_min_share = 0;
  const Report r = MustAnalyze(t, options);
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(d.idle[Subcause::kAllocator], (210 + 100) * kUs);
  EXPECT_EQ(d.idle[Subcause::kHostSync], 110 * kUs);
  // The unmapping says that expandable segments are on already: the advice does not ask for
  // them.
  ASSERT_FALSE(r.advice.empty());
  EXPECT_EQ(r.advice.front().subcause, Subcause::kAllocator);
  EXPECT_THAT(r.advice.front().fix, HasSubstr("expandable segments are on"));
  EXPECT_THAT(r.advice.front().fix, Not(HasSubstr("PYTORCH_CUDA_ALLOC_CONF")));
  EXPECT_THAT(r.advice.front().evidence,
              HasSubstr("cudaStreamSynchronize (the allocator's, right before it released"));
}

TEST(Analyze, AnAllocationIsAllocatorTimeOnlyWhileTheHostIsInsideIt) {
  // A 2 ms cudaMalloc between launches; the host's short stretches around it stay launch
  // overhead, and the stream-ordered free that follows waits for nothing.
  const auto t = TimelineBuilder()
                     .Launch(1, 0, 5).Kernel(10, 100)
                     .OtherCall(1, 120, 2120, "cudaMalloc")
                     .OtherCall(1, 2121, 2125, "cudaFreeAsync")
                     .Launch(1, 2125, 2130).Kernel(2140, 3000)
                     .Build();
  const Report r = MustAnalyze(t);
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(d.idle[Subcause::kAllocator], 2004 * kUs);  // the malloc and the free
  EXPECT_EQ(d.idle[Subcause::kLaunchOverhead], 26 * kUs);
  EXPECT_EQ(d.idle[Subcause::kKernelGap], 10 * kUs);
}

TEST(Analyze, CallsQueuedWorkBehindACrossStreamEventDeviceWait) {
  const auto t = TimelineBuilder()
                     .Stream(7).Launch(1, 0, 5).Kernel(10, 100)
                     .Stream(13).CopyCall(1, 6, 8).Copy(100, 2000, CopyKind::kDtoD)
                     .WaitEvent(1, 20, 22, /*stream=*/7, /*waited_stream=*/13)
                     .Stream(7).Launch(1, 30, 35).Kernel(2000, 2100)
                     .Build();
  const Report r = MustAnalyze(t);
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(d.idle[Subcause::kDeviceWait], 1900 * kUs);
}

TEST(Analyze, AWaitOnAnotherStreamDoesNotExplainAGapOfADifferentStream) {
  const auto t = TimelineBuilder()
                     .Stream(7).Launch(1, 0, 5).Kernel(10, 100)
                     .WaitEvent(1, 20, 22, /*stream=*/9, /*waited_stream=*/13)
                     .Stream(7).Launch(1, 30, 35).Kernel(2000, 2100)
                     .Build();
  const Report r = MustAnalyze(t);
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(d.idle[Subcause::kDeviceWait], 0);
  EXPECT_EQ(d.idle[Subcause::kKernelGap] + d.idle[Subcause::kUnattributed], 1900 * kUs);
}

TEST(Analyze, CallsOnlyDispatchLatencyKernelGapAndALongerUnexplainedWaitUnattributed) {
  // The second kernel was queued long before the GPU went idle, yet started 1900 us later
  // with nothing in the trace holding it back.
  const auto t = TimelineBuilder()
                     .Launch(1, 0, 5).Kernel(10, 100)
                     .Launch(1, 30, 35).Kernel(2000, 2100)
                     .Build();
  AnalysisOptions options;
  options.dispatch_latency_max_ns = 100 * kUs;
  const Report r = MustAnalyze(t, options);
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(d.idle[Subcause::kKernelGap], 100 * kUs);
  EXPECT_EQ(d.idle[Subcause::kUnattributed], 1800 * kUs);
}

TEST(Analyze, QueuedWorkThatWaitedWhileAnotherProcessRanKernelsWaitedBehindIt) {
  // The second kernel was queued at 35 us and started 2.5 s later; NVML saw another process on
  // this GPU run kernels at 0.5 s (within a second of it: [-0.5 s, 1.5 s)), one on another GPU
  // at 2 s, and one that held memory and ran nothing.
  auto t = TimelineBuilder()
               .Launch(1, 0, 5).Kernel(10, 100)
               .Launch(1, 30, 35).Kernel(2'500'000, 2'500'100)
               .Build();
  internal::GpuProcessSeen other, elsewhere, quiet;
  other.pid = 4242;
  other.busy_sample_ns = {500'000 * kUs};
  elsewhere.pid = 77;
  elsewhere.device = 1;
  elsewhere.busy_sample_ns = {2'000'000 * kUs};
  quiet.pid = 7;
  t.gpu_processes = {other, elsewhere, quiet};
  AnalysisOptions options;
  options.dispatch_latency_max_ns = 100 * kUs;
  const DeviceReport d = OnlyDevice(MustAnalyze(t, options));
  EXPECT_EQ(d.idle[Subcause::kKernelGap], 100 * kUs);
  EXPECT_EQ(d.idle[Subcause::kOtherProcess], (1'500'000 - 200) * kUs);
  EXPECT_EQ(d.idle[Subcause::kUnattributed], 1'000'000 * kUs);
  EXPECT_EQ(CauseOf(Subcause::kOtherProcess), Cause::kSyncBound);
}

TEST(Analyze, AnotherProcessDoesNotExplainAHostThatWasLate) {
  // The host launched the second kernel 1 ms after the first ended: its own lateness, whoever
  // else ran on the GPU.
  auto t = TimelineBuilder()
               .Launch(1, 0, 5).Kernel(10, 100)
               .Launch(1, 1000, 1005).Kernel(1010, 1100)
               .Build();
  internal::GpuProcessSeen other;
  other.busy_sample_ns = {500 * kUs};
  t.gpu_processes = {other};
  const DeviceReport d = OnlyDevice(MustAnalyze(t));
  EXPECT_EQ(d.idle_ns, 910 * kUs);
  EXPECT_EQ(d.idle[Subcause::kOtherProcess], 0);
}

TEST(Analyze, LeavesGapsWithoutHostEvidenceUnattributed) {
  const auto t = TimelineBuilder().Kernel(0, 100).Kernel(200, 300).Build();
  const Report r = MustAnalyze(t);
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(d.idle[Subcause::kUnattributed], 100 * kUs);
  EXPECT_EQ(d.idle_ns, 100 * kUs);
}

TEST(Analyze, AttributesTheEndOfTheLastStepByWhatTheHostDid) {
  const auto t = TimelineBuilder()
                     .Step(1, 0, 3000, "step 1")
                     .Launch(1, 0, 5).Kernel(10, 100)
                     .Data(1, 100, 3000)
                     .Build();
  const Report r = MustAnalyze(t);
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(d.window_ns, 3000 * kUs);
  EXPECT_EQ(d.idle[Subcause::kDataLoader], 2900 * kUs);
}

TEST(Analyze, WithoutStepsTheTimeAfterTheLastKernelIsWindDown) {
  const auto t = TimelineBuilder()
                     .Launch(1, 0, 5).Kernel(10, 100)
                     .Data(1, 100, 3000)
                     .Build();
  const Report r = MustAnalyze(t);
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(d.steady_end_ns, 100 * kUs);
  EXPECT_EQ(d.idle_ns, 0);
  EXPECT_EQ(d.PhaseNs(Phase::kWindDown), 2900 * kUs);
  ASSERT_FALSE(d.one_off.empty());
  EXPECT_EQ(d.one_off.back().phase, Phase::kWindDown);
  EXPECT_EQ(d.one_off.back().kind, OneOffKind::kWindDown);
  EXPECT_EQ(d.one_off.back().ns, 2900 * kUs);
}

TEST(Analyze, ASyncAtTheEndOfTheWindowGetsOnlyTheTimeItBlockedInsideTheGap) {
  // A device sync returns 9 us after the GPU ran dry, then 500 us of host work end the
  // window, outside any step: nothing came after it that the sync delayed.
  const auto t = TimelineBuilder()
                     .Step(1, 0, 900, "step 1")
                     .Launch(1, 0, 5).Kernel(10, 1000)
                     .Sync(1, 6, 1009)
                     .OtherCall(1, 1499, 1500)
                     .Build();
  AnalysisOptions options;
  options.launch_gap_max_ns = 100 * kUs;
  const Report r = MustAnalyze(t, options);
  const DeviceReport& d = OnlyDevice(r);
  // The window ends after the step's GPU work: wind-down, with the sync's 9 us in it.
  EXPECT_EQ(d.steady_end_ns, 1000 * kUs);
  EXPECT_EQ(d.idle[Subcause::kHostSync], 0);
  EXPECT_EQ(d.PhaseNs(Phase::kWindDown), 500 * kUs);
}

TEST(Analyze, ASyncInALastStepCutOffByTheEndOfTheTraceIsChargedLikeTheOthers) {
  // .item() and 500 us of host work at the end of the last recorded step: the next step's
  // work would have followed, as in every step before.
  const auto t = TimelineBuilder()
                     .Step(1, 0, 1500, "step 1")
                     .Launch(1, 0, 5).Kernel(10, 1000)
                     .Sync(1, 6, 1009)
                     .Build();
  const Report r = MustAnalyze(t);
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(d.idle[Subcause::kHostSync], 500 * kUs);
}

TEST(Analyze, AccountsCommunicationAndTheExposedPartOfIt) {
  const auto t = TimelineBuilder()
                     .Stream(7).Launch(1, 0, 1).Kernel(10, 110)
                     .Stream(13).Launch(1, 1, 2).NcclKernel(60, 210)
                     .Build();
  const Report r = MustAnalyze(t);
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(d.comm_ns, 150 * kUs);
  EXPECT_EQ(d.exposed_comm_ns, 100 * kUs);
  EXPECT_EQ(d.busy_ns, 200 * kUs);
  EXPECT_FALSE(d.comm_wait_ns.has_value());  // one rank: unknown
}

TEST(Analyze, MeasuresWaitingForPeersAcrossRanks) {
  const auto rank0 = TimelineBuilder().Rank(0)
                         .Launch(1, 0, 1).NcclKernel(100, 600)
                         .Launch(1, 700, 701).NcclKernel(710, 800)
                         .Build();
  const auto rank1 = TimelineBuilder().Rank(1)
                         .Launch(1, 0, 1).NcclKernel(500, 600)
                         .Launch(1, 700, 701).NcclKernel(750, 800)
                         .Build();
  const internal::Timeline* ranks[] = {&rank0, &rank1};
  absl::StatusOr<Report> r = internal::AnalyzeRanks(ranks, {});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->devices.size(), 2u);
  EXPECT_EQ(r->devices[0].rank, 0);
  EXPECT_EQ(r->devices[0].comm_wait_ns, (400 + 40) * kUs);
  EXPECT_EQ(r->devices[1].rank, 1);
  EXPECT_EQ(r->devices[1].comm_wait_ns, 0);
}

TEST(Analyze, ReportsVisibleDevicesThatNeverRan) {
  const auto t = TimelineBuilder()
                     .Visible(0).Visible(1).Visible(2)
                     .Launch(1, 0, 5).Kernel(10, 100)
                     .Build();
  const Report r = MustAnalyze(t);
  EXPECT_EQ(r.visible_device_count, 3);
  EXPECT_THAT(r.unused_devices, ::testing::ElementsAre(1, 2));
}

TEST(Analyze, CutsStepsWhereTheHostRangeBeganAndThePreviousStepsGpuWorkEnded) {
  const auto t = TimelineBuilder()
                     .Step(1, 0, 100, "step 1")
                     .Launch(1, 10, 15).Kernel(20, 300)  // runs long after its host range
                     .Step(1, 100, 400, "step 2")
                     .Launch(1, 110, 115).Kernel(300, 350)
                     .Data(1, 120, 390)
                     .Launch(1, 395, 398).Kernel(400, 450)
                     .Build();
  const Report r = MustAnalyze(t);
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_EQ(r.steps[0].start_ns, 0);
  EXPECT_EQ(r.steps[0].end_ns, 300 * kUs);
  EXPECT_EQ(r.steps[0].busy_ns, 280 * kUs);
  EXPECT_EQ(r.steps[0].idle.TotalNs(), 20 * kUs);
  EXPECT_EQ(r.steps[1].start_ns, 300 * kUs);
  EXPECT_EQ(r.steps[1].end_ns, 450 * kUs);
  EXPECT_EQ(r.steps[1].busy_ns, 100 * kUs);
  EXPECT_EQ(r.steps[1].idle[Subcause::kDataLoader], 40 * kUs);
  EXPECT_EQ(r.steps[1].idle.TotalNs(), 50 * kUs);
}

// The steady state's kernels by how the host issued them: every kernel of a graph replay
// carries the correlation id of its cudaGraphLaunch.
TEST(Analyze, CountsTheSteadyStatesKernelsReplayedFromCudaGraphsApartFromSingleLaunches) {
  TimelineBuilder b;
  for (int i = 0; i < 4; ++i) {
    const double at = 1000.0 * i;
    b.Step(1, at, at + 1000, absl::StrCat("step ", i + 1))
        .Launch(1, at + 10, at + 20, "cudaGraphLaunch").Kernel(at + 30, at + 100)
        .Kernel(at + 110, at + 200).Kernel(at + 210, at + 300)
        .Launch(1, at + 600, at + 610).Kernel(at + 620, at + 700);
  }
  internal::Timeline t = b.Build();
  // The builder joins one kernel to a launch: the graph's other two kernels join it here.
  std::vector<internal::DeviceOp>& ops = t.devices[0].ops;
  for (size_t i = 0; i < ops.size(); i += 4) {
    ops[i + 1].correlation_id = ops[i].correlation_id;
    ops[i + 2].correlation_id = ops[i].correlation_id;
  }
  const DeviceReport d = OnlyDevice(MustAnalyze(t));
  ASSERT_GT(d.step_count, 0);
  EXPECT_EQ(d.graph_replays.launches, d.step_count);
  EXPECT_EQ(d.graph_replays.kernels, 3 * d.step_count);
  EXPECT_EQ(d.graph_replays.kernels_alone, d.step_count);
}

TEST(Analyze, WarmUpStepsAreLeftOutAndTheWindowBeginsAtTheNextStep) {
  // Step 1's first launch call is slow (a profiler's start-up on this thread); steps 2 and 3
  // each sync on a long kernel, then do 4 ms of host work with the result (sync-bound).
  const auto t = TimelineBuilder()
                     .Step(1, 0, 6000, "step 1")
                     .Launch(1, 10, 5900).Kernel(5910, 6000)
                     .Step(1, 6000, 20000, "step 2")
                     .Launch(1, 6000, 6005).Kernel(6010, 16000)
                     .Sync(1, 6006, 16005)
                     .Step(1, 20000, 34000, "step 3")
                     .Launch(1, 20000, 20005).Kernel(20010, 30000)
                     .Sync(1, 20006, 30005)
                     .Launch(1, 34000, 34005).Kernel(34010, 34100)
                     .Build();
  AnalysisOptions options;
  // Without skipping, the slow first call of the thread is one-off time, out of the headline.
  const DeviceReport all = OnlyDevice(MustAnalyze(t, options));
  EXPECT_LT(all.idle[Subcause::kLaunchOverhead], 100 * kUs);
  EXPECT_GE(all.SteadyOneOffNs(), 5800 * kUs);

  options.skip_steps = 1;
  const Report r = MustAnalyze(t, options);
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(r.window_start_ns, 6000 * kUs);
  EXPECT_EQ(d.window_ns, (34100 - 6000) * kUs);
  EXPECT_LT(d.idle[Subcause::kLaunchOverhead], 100 * kUs);
  EXPECT_GE(d.idle[Subcause::kHostSync], 7900 * kUs);
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_EQ(r.steps[0].name, "step 2");
  EXPECT_EQ(r.steps[1].name, "step 3");
}

TEST(Analyze, SkippingEveryStepIsAnErrorThatSaysSo) {
  const auto t = TimelineBuilder().Step(1, 0, 100, "only").Launch(1, 1, 2).Kernel(3, 90).Build();
  AnalysisOptions options;
  options.skip_steps = 1;
  absl::StatusOr<Report> r = internal::Analyze(t, options);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), ::testing::HasSubstr("has 1 step(s): skipping 1 leaves none"));
  options.skip_steps = -1;
  EXPECT_EQ(internal::Analyze(t, options).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(Analyze, NamesTheSyncCallSiteAsTheTopOffender) {
  const auto t = TimelineBuilder()
                     .Launch(1, 0, 5).Kernel(10, 10000)
                     .Op(1, 6, 10006, "aten::item")
                     .Sync(1, 6, 10005)
                     .Launch(1, 14000, 14010).Kernel(14020, 15000)
                     .Build();
  const Report r = MustAnalyze(t);
  ASSERT_FALSE(r.offenders.empty());
  EXPECT_EQ(r.offenders[0].subcause, Subcause::kHostSync);
  EXPECT_EQ(r.offenders[0].what, "cudaStreamSynchronize");
  EXPECT_EQ(r.offenders[0].site, "aten::item");
  EXPECT_EQ(r.offenders[0].count, 1);
  ASSERT_FALSE(r.advice.empty());
  EXPECT_EQ(r.advice[0].subcause, Subcause::kHostSync);
  EXPECT_THAT(r.advice[0].fix, ::testing::HasSubstr(".item()"));
}

TEST(Analyze, KeepsTheLongestGapsLongestFirst) {
  auto b = TimelineBuilder();
  b.Launch(1, 0, 1).Kernel(2, 3);
  for (int i = 1; i <= 10; ++i) b.Launch(1, 1000 * i, 1000 * i + 1).Kernel(1000 * i + i, 1000 * i + 20);
  AnalysisOptions options;
  options.max_gap_records = 3;
  const Report r = MustAnalyze(b.Build(), options);
  ASSERT_EQ(r.longest_gaps.size(), 3u);
  for (size_t i = 1; i < r.longest_gaps.size(); ++i) {
    EXPECT_GE(r.longest_gaps[i - 1].end_ns - r.longest_gaps[i - 1].start_ns,
              r.longest_gaps[i].end_ns - r.longest_gaps[i].start_ns);
  }
  EXPECT_EQ(r.longest_gaps[0].next_op, "kernel");
  EXPECT_EQ(r.longest_gaps[0].thread, 1u);
}

TEST(Analyze, RejectsNonsenseOptions) {
  const auto t = TimelineBuilder().Launch(1, 0, 5).Kernel(10, 100).Build();
  AnalysisOptions options;
  options.launch_gap_max_ns = 0;
  EXPECT_EQ(Analyze(t, options).status().code(), absl::StatusCode::kInvalidArgument);
  options = {};
  options.dispatch_latency_max_ns = -1;
  EXPECT_EQ(Analyze(t, options).status().code(), absl::StatusCode::kInvalidArgument);
  options = {};
  options.max_gap_records = -1;
  EXPECT_EQ(Analyze(t, options).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(Analyze, RefusesATimelineWithoutActivity) {
  const auto t = TimelineBuilder().Build();
  EXPECT_EQ(Analyze(t, {}).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(Taxonomy, QualifiedNamesRoundTrip) {
  for (int i = 0; i < kNumSubcauses; ++i) {
    const auto s = static_cast<Subcause>(i);
    EXPECT_EQ(ParseSubcause(QualifiedSubcauseName(s)), s);
  }
  EXPECT_EQ(QualifiedSubcauseName(Subcause::kHostSync), "sync_bound.host_sync");
  EXPECT_EQ(ParseSubcause("sync_bound.nothing"), std::nullopt);
}

// clang-format on

}  // namespace
}  // namespace gpuidle

namespace gpuidle {
namespace {

// 30,000 steps on 4 devices: the report lists Report::kMaxStepRows of them, says so, and the
// figures of each device still cover every step.
TEST(Analyze, ListsAtMostTheStepRowsItPromisesAndCountsEveryStep) {
  TimelineBuilder b;
  constexpr int kSteps = 7'500;
  for (int device = 0; device < 4; ++device) b.Device(device);
  for (int s = 0; s < kSteps; ++s) {
    const double at = s * 100.0;
    b.Step(1, at, at + 100, absl::StrCat("step ", s + 1));
    for (int device = 0; device < 4; ++device) {
      b.Device(device).Launch(1, at, at + 5).Kernel(at + 10, at + 90);
    }
  }
  const Report r = MustAnalyze(b.Build());
  ASSERT_EQ(r.devices.size(), 4u);
  EXPECT_EQ(r.steps.size(), Report::kMaxStepRows);
  EXPECT_EQ(r.steps_not_listed, 4u * kSteps - Report::kMaxStepRows);
  int64_t idle = 0;
  for (const DeviceReport& d : r.devices) {
    EXPECT_EQ(d.step_count, kSteps);
    idle += d.idle_ns;
  }
  EXPECT_GT(idle, 4 * (kSteps - 2) * 19 * kUs);  // every step's gaps, not only the listed ones
  EXPECT_THAT(r.warnings, Contains(HasSubstr("lists 10000 of 30000 steps")));
  const std::string json = *FormatReport(r, "json");  // the public API
  EXPECT_THAT(json, HasSubstr("\"steps_not_listed\": 20000"));
}

}  // namespace
}  // namespace gpuidle

namespace gpuidle {
namespace {

// A gap where the capture lost records may be a kernel that was never recorded: it is one-off
// time ("records_lost") on every device, never idle.
TEST(Analyze, TimeWhereRecordsWereLostIsNeverIdle) {
  // clang-format off
  TimelineBuilder b;
  b.Step(1, 0, 1000, "step 1").Step(1, 1000, 2000, "step 2").Step(1, 2000, 3000, "step 3");
  b.Launch(1, 0, 5).Kernel(10, 100)
   .Launch(1, 6, 8).Kernel(900, 1000)      // 800 us gap: lost records
   .Launch(1, 1000, 1005).Kernel(1010, 1100)
   .Launch(1, 1006, 1008).Kernel(1900, 2000)  // the same gap, nothing lost
   .Launch(1, 2000, 2005).Kernel(2010, 2990);
  // clang-format on
  internal::Timeline t = b.Build();
  const Report whole = MustAnalyze(t);
  t.info.lost_record_spans.push_back({100 * kUs, 900 * kUs, 12});
  const Report r = MustAnalyze(t);
  const DeviceReport& before = OnlyDevice(whole);
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(d.idle_ns, before.idle_ns - 800 * kUs);
  int64_t lost = 0;
  for (const OneOffTime& o : d.one_off) {
    if (o.kind == OneOffKind::kRecordsLost) lost += o.ns;
  }
  EXPECT_EQ(lost, 800 * kUs);
  const std::string json = *FormatReport(r, "json");
  EXPECT_THAT(json, HasSubstr("\"status\": \"records_lost\""));
  EXPECT_THAT(json, HasSubstr("\"records_lost\""));
}

}  // namespace
}  // namespace gpuidle

namespace gpuidle {
namespace {

// A report carries the options of its analysis: formatted later, anywhere, it prints the
// thresholds it was analysed with, never the defaults.
TEST(Analyze, AReportFormattedLaterPrintsTheThresholdsItWasAnalysedWith) {
  // clang-format off
  TimelineBuilder b;
  b.Step(1, 0, 100, "ProfilerStep#1").Step(1, 100, 200, "ProfilerStep#2");
  b.Launch(1, 0, 5).Kernel(10, 90).Launch(1, 100, 105).Kernel(110, 190);
  // clang-format on
  AnalysisOptions options;
  options.launch_gap_max_ns = 250'000;
  options.dispatch_latency_max_ns = 42'000;
  options.data_range_patterns = {"my_loader"};
  options.skip_steps = 1;
  Report r = MustAnalyze(b.Build(), options);
  EXPECT_EQ(r.options.launch_gap_max_ns, 250'000);
  const Report later = r;  // a copy, formatted with no options at hand
  const std::string json = *FormatReport(later, "json");
  EXPECT_THAT(json, HasSubstr("\"launch_gap_max_ns\": 250000"));
  EXPECT_THAT(json, HasSubstr("\"dispatch_latency_max_ns\": 42000"));
  EXPECT_THAT(json, HasSubstr("\"my_loader\""));
  EXPECT_THAT(json, Not(HasSubstr("\"next_batch\"")));  // a default pattern
  EXPECT_THAT(json, HasSubstr("\"skip_steps\": 1"));
}

TEST(Analyze, MergedRanksCarryTheOptionsOfTheMergingAnalysis) {
  internal::Timeline rank0 = TimelineBuilder().Rank(0).Launch(1, 0, 5).Kernel(10, 90).Build();
  internal::Timeline rank1 = TimelineBuilder().Rank(1).Launch(1, 0, 5).Kernel(20, 80).Build();
  AnalysisOptions options;
  options.launch_gap_max_ns = 333'000;
  const internal::Timeline* ranks[] = {&rank0, &rank1};
  absl::StatusOr<Report> r = internal::AnalyzeRanks(ranks, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->devices.size(), 2u);
  EXPECT_EQ(r->options.launch_gap_max_ns, 333'000);
  EXPECT_THAT(*FormatReport(*r, "json"), HasSubstr("\"launch_gap_max_ns\": 333000"));
}

// A trace of the host's side only (torch.profiler without ProfilerActivity.CUDA, or GPU records
// lost): launch calls and no GPU record. The report says it cannot tell when the GPU was idle,
// and what to record; a trace with both sides, or without launches, gets no such warning.
TEST(Analyze, SaysSoWhenATraceHasOnlyOneSideOfTheProgram) {
  const auto host_only = TimelineBuilder()
                             .Launch(1, 0, 5)
                             .Launch(1, 10, 15)
                             .Launch(1, 20, 25)
                             .OtherCall(1, 30, 31)
                             .Build();
  absl::StatusOr<Report> r = Analyze(host_only, AnalysisOptions());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->devices.empty());
  EXPECT_THAT(r->warnings, Contains(AllOf(HasSubstr("3 launch calls but no record of GPU work"),
                                          HasSubstr("ProfilerActivity.CUDA"))));
  EXPECT_THAT(*FormatReport(*r, "text"), HasSubstr("no GPU activity recorded in this trace"));

  const auto with_kernel =
      TimelineBuilder().Launch(1, 0, 5).Kernel(10, 20).Launch(1, 30, 35).Build();
  EXPECT_THAT(MustAnalyze(with_kernel).warnings, Not(Contains(HasSubstr("no record of GPU work"))));
  // GPU work with no CUDA call at all (a trace filtered to a few kinds of event): why the GPU
  // idled is unknown, and the report says so.
  const auto gpu_only = TimelineBuilder().Kernel(10, 20).Kernel(50, 60).Build();
  EXPECT_THAT(MustAnalyze(gpu_only).warnings,
              Contains(AllOf(HasSubstr("2 GPU operations but no CUDA runtime or driver call"),
                             HasSubstr("ProfilerActivity.CPU"))));
  EXPECT_THAT(MustAnalyze(with_kernel).warnings, Not(Contains(HasSubstr("no CUDA runtime"))));
  const auto no_launch = TimelineBuilder().OtherCall(1, 0, 5).OtherCall(1, 10, 15).Build();
  absl::StatusOr<Report> quiet = Analyze(no_launch, AnalysisOptions());
  ASSERT_TRUE(quiet.ok()) << quiet.status();
  EXPECT_THAT(quiet->warnings, Not(Contains(HasSubstr("no record of GPU work"))));
  // torch.profiler with CUDA activities off: the framework's ops alone.
  const auto cpu_ops_only =
      TimelineBuilder().Op(1, 0, 50, "aten::linear").Op(1, 60, 90, "aten::relu").Build();
  absl::StatusOr<Report> cpu_only = Analyze(cpu_ops_only, AnalysisOptions());
  ASSERT_TRUE(cpu_only.ok()) << cpu_only.status();
  EXPECT_THAT(cpu_only->warnings,
              Contains(AllOf(HasSubstr("2 framework ops but no CUDA call and no record of GPU"),
                             HasSubstr("ProfilerActivity.CUDA"))));
}

// A trace whose events were filtered: GPU work between recorded calls whose launch calls are
// missing. The report says the syncs and copies filtered with them cannot show; a complete
// trace, and one that begins while work launched before it still runs, get no such warning.
TEST(Analyze, SaysSoWhenCallsAreMissingFromInsideTheTrace) {
  auto loop = [](TimelineBuilder& b, int n, double from_us = 0) {
    for (int i = 0; i < n; ++i) {
      const double t = from_us + 100.0 * i;
      b.Launch(1, t, t + 5).Kernel(t + 10, t + 60);
    }
  };
  auto complete = TimelineBuilder();
  loop(complete, 60);
  internal::Timeline filtered = complete.Build();
  EXPECT_THAT(MustAnalyze(filtered).warnings, Not(Contains(HasSubstr("no launch call"))));
  // Every other launch call dropped, as a filter on the exported events would.
  for (size_t i = filtered.calls.size() - 2; i > 0; --i) {
    if (i % 2 == 0) filtered.calls.erase(filtered.calls.begin() + static_cast<ptrdiff_t>(i));
  }
  EXPECT_THAT(MustAnalyze(filtered).warnings,
              Contains(AllOf(HasSubstr("29 GPU operations of 58 between recorded calls have no "
                                       "launch call"),
                             HasSubstr("cannot show as sync-bound"))));
  // Work launched before the trace began has correlation ids below every recorded call's.
  auto late_start = TimelineBuilder();
  for (int i = 0; i < 30; ++i)
    late_start.Launch(1, 0.1 * i, 0.1 * i + 0.05).Kernel(10.0 * i, 10.0 * i + 8);
  loop(late_start, 30, 400);
  internal::Timeline late = late_start.Build();
  late.calls.erase(late.calls.begin(), late.calls.begin() + 30);
  EXPECT_THAT(MustAnalyze(late).warnings, Not(Contains(HasSubstr("no launch call"))));
}

}  // namespace
}  // namespace gpuidle
