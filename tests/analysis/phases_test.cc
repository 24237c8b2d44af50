// Start-up, steady state, wind-down and one-off work (docs/ANALYSIS.md, "Phases"), on small
// synthetic timelines (times in microseconds).
#include "analysis/analyze.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/analysis_helpers.h"
#include "testing/timeline_builder.h"

namespace gpuidle {
namespace {

using ::gpuidle::testing::TimelineBuilder;
using internal::CopyKind;
using internal::RangeKind;

using ::gpuidle::testing::kUs;
using ::gpuidle::testing::MustAnalyze;
using ::gpuidle::testing::OnlyDevice;

// Time of one kind of one-off work in one phase (0 if none).
int64_t OneOffNs(const DeviceReport& d, Phase phase, OneOffKind kind) {
  for (const OneOffTime& o : d.one_off) {
    if (o.phase == phase && o.kind == kind) return o.ns;
  }
  return 0;
}

const OneOffTime* FindOneOff(const DeviceReport& d, Phase phase, OneOffKind kind) {
  for (const OneOffTime& o : d.one_off) {
    if (o.phase == phase && o.kind == kind) return &o;
  }
  return nullptr;
}

// A steady loop of `n` launch-bound iterations from `start_us`: a 5 us launch, a 50 us kernel,
// 100 us of host time before the next launch.
void LaunchBoundLoop(TimelineBuilder& b, double start_us, int n) {
  for (int i = 0; i < n; ++i) {
    const double t = start_us + 155 * i;
    b.Launch(1, t, t + 5).Kernel(t + 5, t + 55);
  }
}

// Timelines are built one host call and the op it issued per line.
// clang-format off
TEST(Phases, StartUpRunsUntilTheFirstStepAndTheHeadlineIsTheSteadyState) {
  auto b = TimelineBuilder();
  b.OtherCall(1, 0, 300000, "cuDevicePrimaryCtxRetain");  // context creation: 300 ms
  b.Launch(1, 300000, 300005).Kernel(300010, 300020);       // a set-up kernel
  b.Data(1, 300100, 500000);                                // ... then loading the dataset
  for (int k = 0; k < 5; ++k) {
    const double s = 500000 + 1000 * k;
    b.Step(1, s, s + 1000, "ProfilerStep#" + std::to_string(k));
    LaunchBoundLoop(b, s, 6);
  }
  const Report r = MustAnalyze(b.Build());
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(r.step_source, "ProfilerStep");
  EXPECT_EQ(d.steady_start_ns, 500000 * kUs);
  EXPECT_EQ(d.PhaseNs(Phase::kStartUp), 500000 * kUs);
  EXPECT_EQ(OneOffNs(d, Phase::kStartUp, OneOffKind::kCudaInit), 300000 * kUs);
  EXPECT_EQ(OneOffNs(d, Phase::kStartUp, OneOffKind::kGpuBusy), 10 * kUs);
  EXPECT_GT(OneOffNs(d, Phase::kStartUp, OneOffKind::kSetUp), 199000 * kUs);
  const OneOffTime* init = FindOneOff(d, Phase::kStartUp, OneOffKind::kCudaInit);
  ASSERT_NE(init, nullptr);
  EXPECT_EQ(init->evidence, "cuDevicePrimaryCtxRetain");
  // The steady state is launch-bound, and the data wait of the start-up is not in it.
  EXPECT_EQ(d.idle[Subcause::kDataLoader], 0);
  EXPECT_GT(d.idle.CauseNs(Cause::kLaunchBound), 0.9 * static_cast<double>(d.idle_ns));
  ASSERT_FALSE(r.advice.empty());
  EXPECT_EQ(CauseOf(r.advice.front().subcause), Cause::kLaunchBound);
}

TEST(Phases, WithoutStepsTheSteadyStateBeginsAfterTheCompilationBeforeTheBulkOfTheKernels) {
  // Two set-up kernels, 2 s of JIT compilation ending in a module load, then the loop.
  auto b = TimelineBuilder();
  b.Launch(1, 0, 5).Kernel(5, 10);
  b.Launch(1, 20, 25).Kernel(25, 30);
  b.OtherCall(1, 2000030, 2000100, "cuModuleLoadData");
  LaunchBoundLoop(b, 2000200, 300);
  const Report r = MustAnalyze(b.Build());
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(r.step_source, "");
  EXPECT_EQ(d.steady_start_ns, 2000205 * kUs);
  EXPECT_EQ(OneOffNs(d, Phase::kStartUp, OneOffKind::kCompilation), 2000000 * kUs);
  EXPECT_EQ(OneOffNs(d, Phase::kStartUp, OneOffKind::kModuleLoad), 70 * kUs);
  const OneOffTime* compile = FindOneOff(d, Phase::kStartUp, OneOffKind::kCompilation);
  ASSERT_NE(compile, nullptr);
  EXPECT_EQ(compile->evidence, "before cuModuleLoadData");
  EXPECT_EQ(d.idle[Subcause::kHost], 0);
}

TEST(Phases, ARecompilationInTheSteadyStateIsNamedAndLeftOutOfTheHeadline) {
  // 155 ms of the loop, 45 ms compiling, then loading, and the loop again.
  auto b = TimelineBuilder();
  LaunchBoundLoop(b, 0, 1000);
  b.OtherCall(1, 200000, 200050, "cuModuleLoadData");
  LaunchBoundLoop(b, 200100, 1000);
  const Report r = MustAnalyze(b.Build());
  const DeviceReport& d = OnlyDevice(r);
  const OneOffTime* recompile = FindOneOff(d, Phase::kSteady, OneOffKind::kCompilation);
  ASSERT_NE(recompile, nullptr);
  EXPECT_GT(recompile->ns, 44000 * kUs);
  EXPECT_EQ(recompile->count, 1);
  EXPECT_EQ(d.idle[Subcause::kHost], 0);
  EXPECT_GT(d.idle.CauseNs(Cause::kLaunchBound), 0.99 * static_cast<double>(d.idle_ns));
}

TEST(Phases, CapturingAndInstantiatingAGraphIsOneOffNotLaunchBound) {
  // The eager loop, then a capture (launches recorded, no kernels run), the graph's
  // instantiation, and the loop again. The runtime's capture calls hold the driver's.
  auto b = TimelineBuilder();
  LaunchBoundLoop(b, 0, 100);  // the last kernel ends at 15400
  b.OtherCall(1, 15500, 15510, "cudaStreamBeginCapture");
  b.OtherCall(1, 15502, 15508, "cuStreamBeginCapture_v2");
  for (int i = 0; i < 150; ++i) b.Launch(1, 15510 + 20 * i, 15520 + 20 * i);
  b.OtherCall(1, 18500, 18510, "cudaStreamEndCapture");
  b.OtherCall(1, 18502, 18509, "cuStreamEndCapture");
  b.OtherCall(1, 18520, 20520, "cudaGraphInstantiateWithFlags");
  LaunchBoundLoop(b, 20600, 100);
  const Report r = MustAnalyze(b.Build());
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(OneOffNs(d, Phase::kSteady, OneOffKind::kGraphCapture), (3010 + 2000) * kUs);
  const OneOffTime* capture = FindOneOff(d, Phase::kSteady, OneOffKind::kGraphCapture);
  ASSERT_NE(capture, nullptr);
  EXPECT_EQ(capture->evidence,
            "cudaStreamBeginCapture to cudaStreamEndCapture: launches recorded, not run");
  // The headline keeps the loops' own launch overhead (105 us a gap) and the host's short
  // stretches around the capture and the instantiation.
  EXPECT_EQ(d.idle[Subcause::kLaunchOverhead], (198 * 105 + 100 + 10 + 85) * kUs);
}

TEST(Phases, ACaptureTheTraceEndsInIsOneOffToTheThreadsLastCall) {
  auto b = TimelineBuilder();
  LaunchBoundLoop(b, 0, 100);
  b.OtherCall(1, 15500, 15510, "cudaStreamBeginCapture");
  for (int i = 0; i < 50; ++i) b.Launch(1, 15510 + 20 * i, 15520 + 20 * i);
  const Report r = MustAnalyze(b.Build());
  const DeviceReport& d = OnlyDevice(r);
  const OneOffTime* capture = FindOneOff(d, Phase::kWindDown, OneOffKind::kGraphCapture);
  ASSERT_NE(capture, nullptr);
  EXPECT_EQ(capture->ns, (16500 - 15500) * kUs);
  EXPECT_THAT(capture->evidence, ::testing::HasSubstr("to the end of the trace"));
}

TEST(Phases, AFirstCallFarSlowerThanItsLaterCallsIsOneOff) {
  // cuBLAS initialisation inside the first aten::linear: 40 ms, later ones 60 us.
  auto b = TimelineBuilder();
  for (int k = 0; k < 6; ++k) {
    const double s = 100000.0 * k;
    b.Step(1, s, s + 100000, "ProfilerStep#" + std::to_string(k));
    const double op_end = k == 0 ? s + 40000 : s + 60;
    b.Op(1, s, op_end, "aten::linear");
    b.Launch(1, op_end - 10, op_end - 5).Kernel(op_end, op_end + 99000);
  }
  const Report r = MustAnalyze(b.Build());
  const DeviceReport& d = OnlyDevice(r);
  const OneOffTime* first = FindOneOff(d, Phase::kSteady, OneOffKind::kFirstCall);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->evidence, "first aten::linear");
  EXPECT_GT(first->ns, 39000 * kUs);
  EXPECT_LT(d.idle[Subcause::kLaunchOverhead], 1000 * kUs);
  // The step holds that time as one-off, not as a cause.
  ASSERT_EQ(r.steps.size(), 6u);
  EXPECT_GT(r.steps[0].one_off_ns, 39000 * kUs);
}

// A trace that begins while the GPU still runs work launched before it (a schedule's active
// phase, a profiler started mid-run): the first aten::copy_ waits 30 ms for that work. It set
// nothing up, so it is not a first call; the same op with the GPU idle meanwhile is.
TEST(Phases, AFirstCallWaitingForWorkLaunchedBeforeTheTraceIsNotOneOff) {
  auto build = [](bool work_before_the_trace) {
    auto b = TimelineBuilder();
    if (work_before_the_trace) b.Kernel(0, 30000, "launched_before_the_trace");
    b.Op(1, 100, 30010, "aten::copy_");
    b.CopyCall(1, 110, 30005).Copy(30000, 30004, CopyKind::kDtoH);
    for (int k = 1; k < 8; ++k) {
      const double s = 30000.0 + 1000 * k;
      b.Launch(1, s, s + 5).Kernel(s + 5, s + 600);
      b.Op(1, s + 610, s + 660, "aten::copy_");
      b.CopyCall(1, s + 615, s + 655).Copy(s + 620, s + 624, CopyKind::kDtoH);
    }
    return b.Build();
  };
  const Report before = MustAnalyze(build(true));
  for (const OneOffTime& o : OnlyDevice(before).one_off) {
    EXPECT_NE(o.kind, OneOffKind::kFirstCall) << o.evidence;
  }
  const Report idle = MustAnalyze(build(false));
  bool first_call = false;
  for (const OneOffTime& o : OnlyDevice(idle).one_off) {
    first_call |= o.kind == OneOffKind::kFirstCall && o.evidence == "first aten::copy_";
  }
  EXPECT_TRUE(first_call);
}

TEST(Phases, AKernelsFirstSlowLaunchIsModuleLoading) {
  auto b = TimelineBuilder();
  LaunchBoundLoop(b, 0, 1000);
  b.Launch(1, 155000, 175000).Kernel(175005, 175100, "gemm");  // lazy loading of gemm: 20 ms
  for (int i = 0; i < 20; ++i) {
    const double t = 175200 + 200 * i;
    b.Launch(1, t, t + 5).Kernel(t + 5, t + 150, "gemm");
  }
  const Report r = MustAnalyze(b.Build());
  const DeviceReport& d = OnlyDevice(r);
  const OneOffTime* load = FindOneOff(d, Phase::kSteady, OneOffKind::kModuleLoad);
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(load->evidence, "first launch of gemm");
  EXPECT_GT(load->ns, 19000 * kUs);
}

TEST(Phases, AFirstStepFarLongerThanTheOthersIsAWarmUpStep) {
  auto b = TimelineBuilder();
  b.Step(1, 0, 50000, "optimizer.step#1");
  b.Launch(1, 0, 5).Kernel(10, 100);
  b.Launch(1, 49000, 49005).Kernel(49010, 49100);
  for (int k = 1; k < 5; ++k) {
    const double s = 50000 + 2000.0 * (k - 1);
    b.Step(1, s, s + 2000, "optimizer.step#" + std::to_string(k + 1));
    LaunchBoundLoop(b, s, 12);
  }
  const Report r = MustAnalyze(b.Build());
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(r.step_source, "optimizer.step");
  EXPECT_EQ(d.steady_start_ns, 50000 * kUs);
  EXPECT_GT(OneOffNs(d, Phase::kStartUp, OneOffKind::kWarmUpStep), 48000 * kUs);
  EXPECT_EQ(r.steps.size(), 4u);
}

TEST(Phases, OptimizerStepsStandInOnlyWhereTheProgramMarksNoSteps) {
  auto b = TimelineBuilder();
  for (int k = 0; k < 4; ++k) {
    const double s = 2000.0 * k;
    b.Step(1, s, s + 2000, "ProfilerStep#" + std::to_string(k));
    b.Step(1, s + 1000, s + 3000, "optimizer.step#" + std::to_string(k + 1));
    LaunchBoundLoop(b, s, 12);
  }
  const Report r = MustAnalyze(b.Build());
  EXPECT_EQ(r.step_source, "ProfilerStep");
  EXPECT_EQ(r.steps.size(), 4u);
  for (const StepReport& s : r.steps) EXPECT_THAT(s.name, ::testing::StartsWith("ProfilerStep#"));
}

TEST(Phases, OptimizerStepsThatEndBeforeMostOfTheWorkAreNoSteps) {
  // A step captured once in a CUDA graph: the optimizer runs in three warm-up steps and the
  // capture; the 1000 replays after it never call it.
  auto b = TimelineBuilder();
  for (int k = 0; k < 3; ++k) {
    b.Step(1, 2000.0 * k, 2000.0 * (k + 1), "optimizer.step#" + std::to_string(k + 1));
    LaunchBoundLoop(b, 2000.0 * k, 12);
  }
  for (int i = 0; i < 1000; ++i) {
    const double t = 7000 + 60.0 * i;
    b.Launch(1, t, t + 5, "cudaGraphLaunch").Kernel(t + 5, t + 55);
  }
  const Report r = MustAnalyze(b.Build());
  EXPECT_EQ(r.step_source, "");
  EXPECT_TRUE(r.steps.empty());
  EXPECT_THAT(r.warnings, ::testing::Contains(::testing::HasSubstr(
                              "the 3 optimizer steps hold 1800 us of kernel time and 50000 us")));
  // Without steps the replays are the steady state.
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_GT(d.busy_ns, 45000 * kUs);
}

TEST(Phases, SampledStacksTellAnInputPipelineFromOtherHostWork) {
  // Two long host stretches: one in a collate function, one in a logging call.
  auto b = TimelineBuilder();
  LaunchBoundLoop(b, 0, 10);
  for (int i = 1; i < 20; ++i) {
    b.Sample(1, 1600 + 500 * i, "train.py:90 main\ntrain.py:40 collate_batch\n"
                 "/usr/lib/python3.12/json/decoder.py:353 raw_decode");
  }
  LaunchBoundLoop(b, 12000, 10);
  for (int i = 1; i < 20; ++i) {
    b.Sample(1, 13600 + 500 * i,
             "train.py:90 main\n/usr/lib/python3.12/logging/__init__.py:1600 info");
  }
  LaunchBoundLoop(b, 24000, 10);
  const Report r = MustAnalyze(b.Build());
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_GT(d.idle[Subcause::kDataLoader], 10000 * kUs);
  EXPECT_GT(d.idle[Subcause::kHost], 10000 * kUs);
  bool input = false, logging = false;
  for (const Offender& o : r.offenders) {
    if (o.subcause == Subcause::kDataLoader) {
      input = true;
      EXPECT_EQ(o.what, "input pipeline (sampled stack)");
      EXPECT_EQ(o.site, "train.py:40 collate_batch");
    }
    if (o.subcause == Subcause::kHost) {
      logging = true;
      EXPECT_EQ(o.what, "logging (sampled stack)");
      EXPECT_EQ(o.site, "train.py:90 main");
    }
  }
  EXPECT_TRUE(input);
  EXPECT_TRUE(logging);
  ASSERT_FALSE(r.longest_gaps.empty());
  EXPECT_THAT(r.longest_gaps.front().call_site, ::testing::StartsWith("train.py:"));
}

TEST(Phases, AStretchWhoseStackIsInACompilerIsCompilationWhereverItFalls) {
  auto b = TimelineBuilder();
  LaunchBoundLoop(b, 0, 1000);
  for (int i = 1; i < 40; ++i) {
    b.Sample(1, 155200 + 1000 * i,
             "train.py:12 <module>\n/venv/site-packages/torch/_dynamo/eval_frame.py:600 _fn\n"
             "/venv/site-packages/torch/_inductor/compile_fx.py:700 compile_fx");
  }
  LaunchBoundLoop(b, 197000, 20);
  const Report r = MustAnalyze(b.Build());
  const DeviceReport& d = OnlyDevice(r);
  const OneOffTime* compile = FindOneOff(d, Phase::kSteady, OneOffKind::kCompilation);
  ASSERT_NE(compile, nullptr);
  EXPECT_GT(compile->ns, 40000 * kUs);
  EXPECT_EQ(compile->evidence, "train.py:12 <module>");
  EXPECT_EQ(d.idle[Subcause::kHost], 0);
}

TEST(Phases, WithoutStepsCompilingBetweenSetUpKernelsAndTheLoopIsStartUp) {
  // A few set-up kernels, then a compiler's stack for 40 ms, then the loop.
  auto b = TimelineBuilder();
  LaunchBoundLoop(b, 0, 3);
  for (int i = 1; i < 40; ++i) {
    b.Sample(1, 600 + 1000 * i, "main.py:3 <module>\n/venv/site-packages/jax/_src/compiler.py:395 "
                                "backend_compile_and_load");
  }
  LaunchBoundLoop(b, 41000, 500);
  const Report r = MustAnalyze(b.Build());
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(d.steady_start_ns, 41005 * kUs);
  EXPECT_GT(OneOffNs(d, Phase::kStartUp, OneOffKind::kCompilation), 39000 * kUs);
  EXPECT_EQ(FindOneOff(d, Phase::kSteady, OneOffKind::kCompilation), nullptr);
}

TEST(Phases, ALastStepFarLongerThanTheOthersIsWindDown) {
  // torch.profiler closes its last step only when it stops: a 2 s save inside it.
  auto b = TimelineBuilder();
  for (int k = 0; k < 5; ++k) {
    const double s = 2000.0 * k;
    const double e = k == 4 ? s + 2000000 : s + 2000;
    b.Step(1, s, e, "ProfilerStep#" + std::to_string(k));
    LaunchBoundLoop(b, s, 12);
  }
  const Report r = MustAnalyze(b.Build());
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(d.steady_end_ns, 8000 * kUs);
  EXPECT_GT(d.PhaseNs(Phase::kWindDown), 1990000 * kUs);
  EXPECT_EQ(r.steps.size(), 4u);
  EXPECT_EQ(d.idle[Subcause::kHost], 0);
}

TEST(Phases, AStretchBeforeAModuleLoadIsNotCompilationWhenItsStacksSaySo) {
  // 200 ms of numpy before a kernel loaded from a warm cache.
  auto b = TimelineBuilder();
  LaunchBoundLoop(b, 0, 1000);
  for (int i = 1; i < 40; ++i) {
    b.Sample(1, 155000 + 5000 * i, "prep.py:9 main\n/venv/site-packages/numpy/core/fromnumeric.py:88 sum");
  }
  b.OtherCall(1, 355000, 355100, "cuModuleLoadData");
  LaunchBoundLoop(b, 355200, 1000);
  const Report r = MustAnalyze(b.Build());
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(FindOneOff(d, Phase::kSteady, OneOffKind::kCompilation), nullptr);
  EXPECT_GT(d.idle[Subcause::kHost], 190000 * kUs);
}

// A context, then 2 s of host work (sampled every 10 ms with `stack` where one is given), then
// the CUDA runtime loads the program's kernels (compiled ahead of time) at their first launch
// through cuLibraryLoadData, and the loop runs.
DeviceReport BeforeALibraryLoad(const std::string& stack) {
  auto b = TimelineBuilder();
  b.OtherCall(1, 0, 100000, "cuDevicePrimaryCtxRetain");
  for (int i = 1; i < 200 && !stack.empty(); ++i) b.Sample(1, 100000 + 10000 * i, stack);
  b.OtherCall(1, 2100000, 2100050, "cuLibraryLoadData");
  LaunchBoundLoop(b, 2100100, 300);
  return OnlyDevice(MustAnalyze(b.Build()));
}

// The host work before that load (imports, building the model) is set-up, not compilation,
// unless a compiler is seen there.
TEST(Phases, AStretchBeforeALoadOfCodeCompiledAheadOfTimeIsSetUpWithoutACompilersStacks) {
  const DeviceReport d = BeforeALibraryLoad("");
  EXPECT_EQ(OneOffNs(d, Phase::kStartUp, OneOffKind::kCompilation), 0);
  EXPECT_GT(OneOffNs(d, Phase::kStartUp, OneOffKind::kSetUp), 1990000 * kUs);
  EXPECT_EQ(OneOffNs(d, Phase::kStartUp, OneOffKind::kModuleLoad), 50 * kUs);
}

TEST(Phases, SetUpIsNamedByTheFrameItsLongestSampledStretchWasSpentIn) {
  const DeviceReport d = BeforeALibraryLoad(
      "train.py:40 main\n/venv/site-packages/transformers/modeling_utils.py:900 from_pretrained");
  EXPECT_EQ(OneOffNs(d, Phase::kStartUp, OneOffKind::kCompilation), 0);
  const OneOffTime* set_up = FindOneOff(d, Phase::kStartUp, OneOffKind::kSetUp);
  ASSERT_NE(set_up, nullptr);
  EXPECT_GT(set_up->ns, 1990000 * kUs);
  EXPECT_EQ(set_up->evidence, "train.py:40 main");
}

TEST(Phases, AStretchBeforeALoadOfCodeCompiledAheadOfTimeIsCompilationWhereItsStacksCompile) {
  // torch.compile: Inductor compiles, then the runtime loads the kernels it launches first.
  const DeviceReport d = BeforeALibraryLoad(
      "train.py:12 <module>\n/venv/site-packages/torch/_inductor/compile_fx.py:700 compile_fx");
  EXPECT_GT(OneOffNs(d, Phase::kStartUp, OneOffKind::kCompilation), 1990000 * kUs);
}

// torch.compile's own ranges in a torch.profiler trace name its compilation, each time it
// compiles, wherever they nest (here in an optimizer step that compiles once); its run-time
// ranges, opened at every call of the compiled code, are not compilation.
TEST(Phases, TorchCompilesOwnRangesAreCompilationAndItsRunTimeRangesAreNot) {
  auto b = TimelineBuilder();
  b.Range(1, 0, 1500000, RangeKind::kUser, "Optimizer.step#AdamW.step");
  b.Range(1, 10, 1400000, RangeKind::kUser, "entire_frame_compile (dynamo_timed)");
  b.Range(1, 500000, 1300000, RangeKind::kUser, "backend_compile (dynamo_timed)");
  b.Launch(1, 1400100, 1400105).Kernel(1400110, 1400120);
  for (int k = 0; k < 20; ++k) {
    const double s = 1500000 + 1000 * k;
    b.Step(1, s, s + 1000, "ProfilerStep#" + std::to_string(k));
    b.Range(1, s, s + 900, RangeKind::kUser, "Torch-Compiled Region: 0/0");
    b.Range(1, s, s + 20, RangeKind::kUser, "TorchDynamo Cache Lookup");
    LaunchBoundLoop(b, s + 20, 6);
  }
  const Report r = MustAnalyze(b.Build());
  const DeviceReport& d = OnlyDevice(r);
  const OneOffTime* compile = FindOneOff(d, Phase::kStartUp, OneOffKind::kCompilation);
  ASSERT_NE(compile, nullptr);
  EXPECT_GE(compile->ns, 1399990 * kUs);
  EXPECT_EQ(compile->evidence, "entire_frame_compile (dynamo_timed)");
  EXPECT_EQ(FindOneOff(d, Phase::kSteady, OneOffKind::kCompilation), nullptr);
  EXPECT_GT(d.idle.CauseNs(Cause::kLaunchBound), 0.9 * static_cast<double>(d.idle_ns));
}

TEST(Phases, AnotherThreadsSyncOfAnotherDevicesStreamIsNoEvidence) {
  // Thread 2 drives GPU 1 and waits for its stream; GPU 0's gaps are its own thread's.
  auto b = TimelineBuilder();
  b.Device(1).Stream(9).Launch(2, 0, 5).Kernel(10, 50000).Sync(2, 6, 50005);
  b.Device(0).Stream(7);
  for (int i = 0; i < 20; ++i) {
    const double t = 100 + 500 * i;
    b.Launch(1, t, t + 5).Kernel(t + 10, t + 50);
  }
  internal::Timeline t = b.Build();
  for (internal::HostCall& c : t.calls) {
    if (c.category == internal::CallCategory::kSync) c.stream = 9;  // GPU 1's stream
  }
  const Report r = MustAnalyze(t);
  ASSERT_EQ(r.devices.size(), 2u);
  const DeviceReport& gpu0 = r.devices[0];
  EXPECT_EQ(gpu0.device, 0);
  EXPECT_EQ(gpu0.idle[Subcause::kHostSync], 0);
  EXPECT_GT(gpu0.idle.CauseNs(Cause::kLaunchBound), 0.9 * static_cast<double>(gpu0.idle_ns));
}

TEST(Phases, AnotherDevicesThreadsOneOffWorkLeavesThisDevicesSteadyStateAlone) {
  // Thread 1 drives GPU 0 in a steady loop; thread 2, GPU 1's, compiles for 60 ms meanwhile.
  auto b = TimelineBuilder();
  b.Device(1).Launch(2, 0, 5).Kernel(5, 10);
  b.OtherCall(2, 60010, 60100, "cuModuleLoadData");
  b.Launch(2, 60200, 60205).Kernel(60205, 60300);
  b.Device(0);
  LaunchBoundLoop(b, 0, 1000);
  const Report r = MustAnalyze(b.Build());
  ASSERT_EQ(r.devices.size(), 2u);
  const DeviceReport& gpu0 = r.devices[0];
  EXPECT_EQ(FindOneOff(gpu0, Phase::kSteady, OneOffKind::kCompilation), nullptr);
  EXPECT_GT(gpu0.idle.CauseNs(Cause::kLaunchBound), 0.99 * static_cast<double>(gpu0.idle_ns));
}

TEST(Phases, PythonFramesOfAProfilerTraceAreStacksToo) {
  // torch.profiler with_stack: python_function ranges nest like a call stack.
  auto b = TimelineBuilder();
  LaunchBoundLoop(b, 0, 10);
  b.Range(1, 1600, 11000, internal::RangeKind::kPython, "train.py(88): main");
  b.Range(1, 1600, 11000, internal::RangeKind::kPython,
          "torch/utils/data/dataloader.py(630): __next__");
  b.Range(1, 1700, 10900, internal::RangeKind::kPython, "train.py(30): __getitem__");
  LaunchBoundLoop(b, 11000, 10);
  const Report r = MustAnalyze(b.Build());
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_GT(d.idle[Subcause::kDataLoader], 9000 * kUs);
  ASSERT_FALSE(r.offenders.empty());
  EXPECT_EQ(r.offenders.front().site, "__getitem__() in train.py (def at line 30)");
}

TEST(Phases, QueuedBehindADeviceToDeviceCopyOnItsStreamIsCopyWait) {
  const auto t = TimelineBuilder()
                     .Stream(7).Launch(1, 0, 5).Kernel(10, 100)
                     .CopyCall(1, 6, 8).Copy(100, 2000, CopyKind::kDtoD)
                     .Launch(1, 30, 35).Kernel(2000, 2100)
                     .Build();
  const Report r = MustAnalyze(t);
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(d.idle[Subcause::kCopyWait], 1900 * kUs);
  EXPECT_EQ(d.idle[Subcause::kUnattributed], 0);
}

TEST(Phases, AWaitForTheDeviceOnAnotherThreadIsSyncBound) {
  // JAX-like: thread 1 launches; thread 2 reads the result (a blocking copy to the host), and
  // thread 1 waits for that value before launching the next step.
  auto b = TimelineBuilder();
  for (int i = 0; i < 5; ++i) {
    const double s = 10000.0 * i;
    b.Launch(1, s, s + 5).Kernel(s + 10, s + 5000);
    b.CopyCall(2, s + 20, s + 5010, "cuMemcpyDtoH").Copy(s + 5000, s + 5004, CopyKind::kDtoH);
  }
  const Report r = MustAnalyze(b.Build());
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_GT(d.idle[Subcause::kHostSync], 0.9 * static_cast<double>(d.idle_ns));
}

// clang-format on

}  // namespace
}  // namespace gpuidle
