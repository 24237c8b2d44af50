// Replays the gpuidle traces recorded live on an H200 (tests/gpu/run_on_device.sh, `gpuidle run`
// of each examples/cuda scenario; docs/VALIDATION.md) and checks, on every CI run, what the GPU
// proved: each scenario's idle time goes to its intended cause, and reading the trace back gives
// exactly the report that the live run wrote.
#include <map>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gpuidle/analyze.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "testing/report_json.h"
#include "testing/temp_dir.h"

namespace gpuidle {
namespace {

using ::testing::HasSubstr;

using ::gpuidle::testing::ComparableJson;
using ::gpuidle::testing::ReadFileOrDie;
using ::gpuidle::testing::ReadsBackAs;
using ::gpuidle::testing::ReadsBackAsRecordedBeforeIssue28;

// folder: "live" (the CUDA scenarios, NCCL) or "live_python" (gpuidle.profile() in PyTorch).
std::string LivePath(const std::string& name, const std::string& folder = "live") {
  return std::string(GPUIDLE_TEST_DATA_DIR) + "/traces/" + folder + "/" + name;
}

Report MustAnalyze(const std::string& scenario, const std::string& folder = "live",
                   const AnalysisOptions& options = {}) {
  absl::StatusOr<Report> r =
      AnalyzeTraceFiles({LivePath(scenario + ".trace.json.gz", folder)}, options);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : Report{};
}

double Share(const DeviceReport& d, Subcause s) {
  return static_cast<double>(d.idle[s]) / static_cast<double>(d.idle_ns);
}
double IdleShareOfWindow(const DeviceReport& d) {
  return static_cast<double>(d.idle_ns) / static_cast<double>(d.window_ns);
}
double Share(const DeviceReport& d, Cause c) {
  return static_cast<double>(d.idle.CauseNs(c)) / static_cast<double>(d.idle_ns);
}

struct Expectation {
  std::string scenario;
  Subcause subcause;  // at least 90% of idle time
};

class LiveScenario : public ::testing::TestWithParam<Expectation> {};

TEST_P(LiveScenario, PutsAtLeast90PercentOfIdleTimeInTheIntendedCause) {
  const Expectation& e = GetParam();
  const Report r = MustAnalyze(e.scenario);
  EXPECT_EQ(r.source, "gpuidle");
  ASSERT_TRUE(r.dropped_records.has_value());
  EXPECT_EQ(*r.dropped_records, 0u) << "the recording was complete";
  ASSERT_EQ(r.devices.size(), 1u);
  const DeviceReport& d = r.devices[0];
  EXPECT_EQ(d.name, "NVIDIA H200");
  EXPECT_EQ(d.idle.TotalNs(), d.idle_ns);
  if (e.subcause == Subcause::kLaunchOverhead) {
    EXPECT_GE(Share(d, Cause::kLaunchBound), 0.90);  // tiny kernels: launch-bound as a whole
  } else {
    EXPECT_GE(Share(d, e.subcause), 0.90) << QualifiedSubcauseName(e.subcause);
  }
}

TEST_P(LiveScenario, ReadsBackToTheReportTheLiveRunWrote) {
  const std::string scenario = GetParam().scenario;
  const Report r = MustAnalyze(scenario);
  absl::StatusOr<std::string> replayed = FormatReport(r, "json");
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  EXPECT_TRUE(ReadsBackAs(*replayed, ReadFileOrDie(LivePath(scenario + ".report.json"))));
}

INSTANTIATE_TEST_SUITE_P(RecordedOnH200, LiveScenario,
                         ::testing::Values(Expectation{"host_work_marked", Subcause::kDataLoader},
                                           Expectation{"host_work_unmarked", Subcause::kHost},
                                           Expectation{"pageable_h2d", Subcause::kH2DCopy},
                                           Expectation{"tiny_kernels", Subcause::kLaunchOverhead},
                                           Expectation{"sync_after_kernel", Subcause::kHostSync},
                                           Expectation{"d2h_after_kernel", Subcause::kHostSync},
                                           Expectation{"cross_stream_wait", Subcause::kDeviceWait}),
                         [](const ::testing::TestParamInfo<Expectation>& param) {
                           return param.param.scenario;
                         });

TEST(LiveHealthyTest, HealthyLoopIsIdleUnder3PercentOfItsWindow) {
  const Report r = MustAnalyze("healthy");
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_LT(IdleShareOfWindow(r.devices[0]), 0.03);
}

TEST(LiveMixedTest, MixedNamesBothHostWorkAndLaunchOverhead) {
  const Report r = MustAnalyze("mixed");
  ASSERT_EQ(r.devices.size(), 1u);
  const DeviceReport& d = r.devices[0];
  EXPECT_GE(Share(d, Subcause::kHost), 0.30);
  EXPECT_GE(Share(d, Cause::kLaunchBound), 0.30);
  EXPECT_LT(Share(d, Cause::kUnattributed), 0.05);
}

TEST(LiveTorchTest, UnmodifiedPyTorchUnderGpuidleRunReadsBackIdentically) {
  const Report r = MustAnalyze("torch_tiny_mlp");
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_GT(r.devices[0].kernel_count, 1000);
  absl::StatusOr<std::string> replayed = FormatReport(r, "json");
  ASSERT_TRUE(replayed.ok());
  // Recorded before issue 28: its 4.8 s before cuLibraryLoadData was "compilation" then.
  EXPECT_TRUE(ReadsBackAsRecordedBeforeIssue28(
      *replayed, ReadFileOrDie(LivePath("torch_tiny_mlp.report.json"))));
  for (const OneOffTime& o : r.devices[0].one_off) {
    EXPECT_NE(o.kind, OneOffKind::kCompilation) << "eager PyTorch compiles nothing: " << o.evidence;
  }
}

// tests/gpu/nccl_ranks.py under `gpuidle run` with torchrun on two H200s: 40 all-reduces, rank 1
// sleeps 20 ms of host work before each. Each rank wrote its own trace and report (%r).
TEST(LiveNcclTest, EachRanksTraceReadsBackToItsOwnReport) {
  for (const std::string rank : {"0", "1"}) {
    const Report r = MustAnalyze("torch_nccl.rank" + rank);
    ASSERT_EQ(r.devices.size(), 1u);
    ASSERT_TRUE(r.devices[0].rank.has_value());
    EXPECT_EQ(*r.devices[0].rank, std::stoi(rank));
    EXPECT_GT(r.devices[0].comm_ns, 0) << "NCCL kernels were captured";
    absl::StatusOr<std::string> replayed = FormatReport(r, "json");
    ASSERT_TRUE(replayed.ok());
    EXPECT_TRUE(
        ReadsBackAs(*replayed, ReadFileOrDie(LivePath("torch_nccl.rank" + rank + ".report.json"))))
        << "rank " << rank;
  }
}

TEST(LiveNcclTest, MergedRanksShowThePunctualRankWaitingForTheStraggler) {
  absl::StatusOr<Report> r = AnalyzeTraceFiles(
      {LivePath("torch_nccl.rank0.trace.json.gz"), LivePath("torch_nccl.rank1.trace.json.gz")});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->devices.size(), 2u);
  const DeviceReport* punctual = nullptr;
  const DeviceReport* straggler = nullptr;
  for (const DeviceReport& d : r->devices) {
    ASSERT_TRUE(d.rank.has_value());
    (*d.rank == 0 ? punctual : straggler) = &d;
  }
  ASSERT_NE(punctual, nullptr);
  ASSERT_NE(straggler, nullptr);
  ASSERT_TRUE(punctual->comm_wait_ns.has_value());
  ASSERT_TRUE(straggler->comm_wait_ns.has_value());
  // 40 x 20 ms of the straggler's host work: rank 0's all-reduces wait for most of it.
  EXPECT_GE(*punctual->comm_wait_ns, 700'000'000);
  EXPECT_LT(*straggler->comm_wait_ns, 50'000'000);
  // The straggler's own idle time is its host work.
  EXPECT_GE(Share(*straggler, Cause::kDataStarved), 0.90);
  // At least 80% of rank 0's NCCL time waited for peers; rank 1 is named, late at (nearly)
  // every all-reduce by about its 20 ms of host work, data-starved itself.
  EXPECT_GE(static_cast<double>(*punctual->comm_wait_ns),
            0.8 * static_cast<double>(punctual->comm_ns));
  EXPECT_EQ(r->straggler_rank, 1);
  EXPECT_THAT(r->stragglers, ::testing::ElementsAre(1));
  const RankReport& late = r->ranks.at(1);
  EXPECT_GE(late.arrived_last, 38);
  EXPECT_NEAR(static_cast<double>(late.late_ns) / static_cast<double>(late.arrived_last), 20e6,
              2e6);
  ASSERT_TRUE(late.own_cause.has_value());
  EXPECT_EQ(CauseOf(*late.own_cause), Cause::kDataStarved);
  EXPECT_EQ(late.host, r->ranks.at(0).host) << "one host";
  EXPECT_EQ(r->clock.method, "one clock");
}

// A job merged from its ranks' reports gives what merging their traces gives: the reports carry
// the collective timings (each trace analysed alone stands for a live rank's own report).
TEST(LiveNcclTest, MergingTheRanksReportsGivesTheTracesMerge) {
  std::vector<std::string> reports;
  std::vector<std::string> traces;
  const ::gpuidle::testing::TempDir dir;
  for (const std::string rank : {"0", "1"}) {
    const std::string trace = LivePath("torch_nccl.rank" + rank + ".trace.json.gz");
    traces.push_back(trace);
    absl::StatusOr<Report> one = AnalyzeTraceFiles({trace});
    ASSERT_TRUE(one.ok()) << one.status();
    ASSERT_FALSE(one->devices.at(0).collective_timings.empty());
    reports.push_back(dir.path() + "/rank" + rank + ".json");
    ASSERT_TRUE(SaveReport(*one, reports.back(), "json").ok());
  }
  absl::StatusOr<Report> from_reports = AnalyzeTraceFiles(reports);
  absl::StatusOr<Report> from_traces = AnalyzeTraceFiles(traces);
  ASSERT_TRUE(from_reports.ok()) << from_reports.status();
  ASSERT_TRUE(from_traces.ok()) << from_traces.status();
  EXPECT_EQ(from_reports->straggler_rank, 1);
  absl::StatusOr<std::string> a = FormatReport(*from_reports, "json");
  absl::StatusOr<std::string> b = FormatReport(*from_traces, "json");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(ReadsBackAs(*a, *b));
}

// tests/gpu/run_on_device.sh ranks on one H200: a one-rank torchrun job under `gpuidle run`.
// The live report names the rank's host and pid and the device's UUID and nvidia-smi index; its
// trace keeps them, and reads back to the report.
TEST(LiveRanksTest, ALiveRankReportNamesItsHostAndItsGpusUuid) {
  const std::string dir = std::string(GPUIDLE_TEST_DATA_DIR) + "/gpu_runs/2026-12-01_ranks/";
  absl::StatusOr<Report> r = AnalyzeTraceFiles({dir + "one_rank.trace.json.gz"});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->ranks.size(), 1u);
  EXPECT_EQ(r->ranks[0].rank, 0);
  EXPECT_FALSE(r->ranks[0].host.empty());
  EXPECT_TRUE(r->ranks[0].pid.has_value());
  ASSERT_EQ(r->visible_devices.size(), 1u);
  EXPECT_EQ(r->visible_devices[0].uuid, "GPU-024775e5-4dde-a0ed-cbba-9c9ad82e3f14");
  EXPECT_EQ(r->visible_devices[0].physical_index, 0);
  EXPECT_TRUE(r->visible_devices[0].used);
  EXPECT_FALSE(r->straggler_rank.has_value());
  absl::StatusOr<std::string> replayed = FormatReport(*r, "json");
  ASSERT_TRUE(replayed.ok());
  EXPECT_TRUE(
      ReadsBackAsRecordedBeforeIssue28(*replayed, ReadFileOrDie(dir + "one_rank.report.json")));
}

// examples/python/*.py --gpuidle on an H200: gpuidle.profile() around 12 steps of each scenario,
// started after PyTorch initialised CUDA (tests/gpu/run_on_device.sh python). What that run
// proved stays proved; docs/VALIDATION.md says where it fell short of the 90% target.
// The live run profiled one step more than it reported on and left it out as warm-up
// (examples/python/*.py --gpuidle: skip_steps=1), as the reports it wrote say.
AnalysisOptions PythonExampleOptions() {
  AnalysisOptions options;
  options.skip_steps = 1;
  return options;
}

Report MustAnalyzePython(const std::string& name) {
  return MustAnalyze(name, "live_python", PythonExampleOptions());
}

TEST(LivePythonTest, EachTraceReadsBackToTheReportTheLiveRunWrote) {
  for (const std::string name :
       {"dataloader_starved", "tiny_mlp_launch_bound", "item_sync", "healthy_matmul"}) {
    absl::StatusOr<std::string> replayed = FormatReport(MustAnalyzePython(name), "json");
    ASSERT_TRUE(replayed.ok());
    EXPECT_TRUE(
        ReadsBackAs(*replayed, ReadFileOrDie(LivePath(name + ".report.json", "live_python"))))
        << name;
  }
}

TEST(LivePythonTest, ProfileStartedLateStillRecordsTheHostCalls) {
  // Without them every gap would be unattributed (the first run on the H200 was).
  const Report r = MustAnalyzePython("item_sync");
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_LT(Share(r.devices[0], Cause::kUnattributed), 0.01);
}

TEST(LivePythonTest, TinyMlpIsLaunchBound) {
  const Report r = MustAnalyzePython("tiny_mlp_launch_bound");
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_GE(Share(r.devices[0], Cause::kLaunchBound), 0.90);
}

TEST(LivePythonTest, TinyMlpLaunchOffendersNameTheForwardBackwardAndOptimizerLines) {
  // PyTorch launches with the GIL released: the lines come from the markers gpuidle/_torch.py
  // puts around the outermost module call, Optimizer.step and Tensor.backward.
  const Report r = MustAnalyzePython("tiny_mlp_launch_bound");
  std::map<std::string, int64_t> named_ns;
  int64_t launch_ns = 0;
  for (const Offender& o : r.offenders) {
    if (CauseOf(o.subcause) != Cause::kLaunchBound) continue;
    launch_ns += o.idle_ns;
    for (const char* line : {"py:23 in step", "py:25 in step", "py:26 in step"}) {
      if (absl::StrContains(o.site, absl::StrCat("tiny_mlp_launch_bound.", line))) {
        named_ns[line] += o.idle_ns;
      }
    }
  }
  ASSERT_GT(launch_ns, 0);
  int64_t named = 0;
  for (const auto& [line, ns] : named_ns) named += ns;
  EXPECT_GE(static_cast<double>(named) / static_cast<double>(launch_ns), 0.90);
  EXPECT_EQ(named_ns.size(), 3u) << "model(x), loss.backward() and opt.step() each named";
}

TEST(LivePythonTest, HealthyMatmulIdlesUnder5PercentOfItsWindow) {
  const Report r = MustAnalyzePython("healthy_matmul");
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_LT(IdleShareOfWindow(r.devices[0]), 0.05);
}

TEST(LivePythonTest, DataLoaderWaitsAreNamedWithoutUserMarkers) {
  // The DataLoader's __next__ became a data range by itself (gpuidle/_torch.py).
  const Report r = MustAnalyzePython("dataloader_starved");
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_GE(Share(r.devices[0], Subcause::kDataLoader), 0.90);
  ASSERT_FALSE(r.offenders.empty());
  EXPECT_EQ(r.offenders[0].what, "DataLoader.__next__");
}

TEST(LivePythonTest, ItemAfterLargeKernelsIsSyncBoundAtTheItemLine) {
  const Report r = MustAnalyzePython("item_sync");
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_GE(Share(r.devices[0], Subcause::kHostSync), 0.90);
  EXPECT_EQ(r.steps.size(), 12u);
  // The line of `loss.item()`, though PyTorch releases the GIL inside it (gpuidle/_torch.py).
  ASSERT_FALSE(r.offenders.empty());
  EXPECT_EQ(r.offenders[0].subcause, Subcause::kHostSync);
  EXPECT_THAT(r.offenders[0].site, HasSubstr("item_sync.py:26 in step"));
}

}  // namespace
}  // namespace gpuidle
