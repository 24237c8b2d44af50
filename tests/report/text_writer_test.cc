#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "analysis/analyze.h"
#include "gmock/gmock.h"
#include "gpuidle/options.h"
#include "gpuidle/report.h"
#include "gtest/gtest.h"
#include "report/writer.h"
#include "testing/timeline_builder.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::TimelineBuilder;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr int64_t kMs = 1'000'000;

std::string WriteText(const Report& r) { return MakeTextWriter()->Write(r); }

std::vector<std::string> Lines(const std::string& text) { return absl::StrSplit(text, '\n'); }

// The first line that contains needle, or "".
std::string LineWith(const std::string& text, const std::string& needle) {
  for (const std::string& line : Lines(text)) {
    if (line.find(needle) != std::string::npos) return line;
  }
  return "";
}

DeviceReport Device0() {
  DeviceReport d;
  d.rank = 0;
  d.device = 0;
  d.name = "NVIDIA H200";
  d.window_start_ns = d.steady_start_ns = 0;
  d.window_end_ns = d.steady_end_ns = 100 * kMs;
  d.window_ns = 100 * kMs;
  d.busy_ns = 60 * kMs;
  d.idle_ns = 40 * kMs;
  d.idle[Subcause::kDataLoader] = 10 * kMs;
  d.idle[Subcause::kHostSync] = 25 * kMs;
  d.idle[Subcause::kUnattributed] = 5 * kMs;
  return d;
}

DeviceReport Device1() {
  DeviceReport d;
  d.rank = 1;
  d.device = 1;
  d.name = "NVIDIA H200";
  d.window_start_ns = d.steady_start_ns = 0;
  d.window_end_ns = d.steady_end_ns = 100 * kMs;
  d.window_ns = 100 * kMs;
  d.busy_ns = 90 * kMs;
  d.idle_ns = 10 * kMs;
  d.idle[Subcause::kLaunchOverhead] = 6 * kMs;
  d.idle[Subcause::kKernelGap] = 4 * kMs;
  d.comm_ns = 8 * kMs;
  d.exposed_comm_ns = 2 * kMs;
  d.comm_wait_ns = 3 * kMs;
  return d;
}

StepReport Step(int rank, int device, int n, int64_t start_ns, int64_t idle_ns) {
  StepReport s;
  s.rank = rank;
  s.device = device;
  s.name = absl::StrCat("ProfilerStep#", n);
  s.start_ns = start_ns;
  s.end_ns = start_ns + 50 * kMs;
  s.busy_ns = 50 * kMs - idle_ns;
  s.idle[Subcause::kHostSync] = idle_ns;
  return s;
}

Report SampleReport() {
  Report r;
  r.source = "pytorch-profiler";
  r.inputs = {"rank0.json.gz", "rank1.json.gz"};
  r.window_start_ns = 0;
  r.window_end_ns = 100 * kMs;
  r.visible_device_count = 8;
  r.unused_devices = {2, 3, 4, 5, 6, 7};
  r.zero_timestamp_records = 2;
  r.devices = {Device0(), Device1()};

  StepReport s;
  s.rank = 0;
  s.device = 0;
  s.name = "ProfilerStep#1";
  s.start_ns = 0;
  s.end_ns = 50 * kMs;
  s.busy_ns = 28 * kMs;
  s.idle[Subcause::kDataLoader] = 10 * kMs;
  s.idle[Subcause::kHostSync] = 12 * kMs;
  r.steps.push_back(s);

  Offender o;
  o.subcause = Subcause::kHostSync;
  o.what = "cudaStreamSynchronize";
  o.site = "aten::item at train.py(21): step";
  o.idle_ns = 25 * kMs;
  o.count = 12;
  r.offenders.push_back(o);

  Advice a;
  a.subcause = Subcause::kHostSync;
  a.share_of_lost_time = 0.5;
  a.fix = "drop per-step .item()";
  r.advice.push_back(a);
  return r;
}

TEST(TextWriter, SaysWhatWasReadAndHowComplete) {
  const std::string text = WriteText(SampleReport());
  EXPECT_THAT(text, StartsWith("gpuidle: why the GPU was idle\n"));
  EXPECT_THAT(text, HasSubstr("source: pytorch-profiler (rank0.json.gz, rank1.json.gz)\n"));
  EXPECT_THAT(text, HasSubstr("window: 100 ms   records: the source does not report lost "
                              "records; 2 records without time stamps skipped\n"));
  EXPECT_THAT(text, HasSubstr("GPUs: 2 of 8 visible used (never used: 2, 3, 4, 5, 6, 7)\n"));
}

TEST(TextWriter, SaysWhetherRecordsWereLost) {
  Report r = SampleReport();
  r.zero_timestamp_records = 0;
  r.dropped_records = 0;
  EXPECT_THAT(WriteText(r), HasSubstr("records: complete\n"));
  r.dropped_records = 17;
  EXPECT_THAT(WriteText(r), HasSubstr("records: 17 records lost (not counted as idle)\n"));
}

TEST(TextWriter, WritesTheDeviceLine) {
  const std::string text = WriteText(SampleReport());
  EXPECT_THAT(text, HasSubstr("\nrank 0 GPU 0  NVIDIA H200  busy 60.0%  idle 40.0% of the steady "
                              "state (40.0 ms of 100 ms)\n"));
  EXPECT_THAT(text, HasSubstr("\nrank 1 GPU 1  NVIDIA H200  busy 90.0%  idle 10.0% of the steady "
                              "state (10.0 ms of 100 ms)\n"));
}

TEST(TextWriter, LabelsADeviceWithoutRankOrName) {
  Report r;
  DeviceReport d = Device0();
  d.rank.reset();
  d.name.clear();
  d.device = 3;
  r.devices.push_back(d);
  EXPECT_THAT(WriteText(r), HasSubstr("\nGPU 3  busy 60.0%  idle 40.0% of the steady state "
                                      "(40.0 ms of 100 ms)\n"));
}

TEST(TextWriter, ListsEachNonzeroCauseLargestFirstWithItsSubcauses) {
  const std::string text = WriteText(SampleReport());
  // Device 0: sync 25 ms (62.5%), data 10 ms (25%), unattributed 5 ms (12.5%); no launch_bound.
  const std::string sync = LineWith(text, "  sync_bound ");
  EXPECT_THAT(sync, ContainsRegex("^  sync_bound +25\\.0 +62\\.5% +host_sync 25\\.0$"));
  EXPECT_THAT(LineWith(text, "  data_starved "),
              ContainsRegex("^  data_starved +10\\.0 +25\\.0% +dataloader 10\\.0$"));
  EXPECT_THAT(LineWith(text, "  unattributed "),
              ContainsRegex("^  unattributed +5\\.0 +12\\.5% *$"));
  EXPECT_LT(text.find("  sync_bound "), text.find("  data_starved "));
  EXPECT_LT(text.find("  data_starved "), text.find("  unattributed "));
  // Device 1 has only launch_bound time, split over two subcauses.
  EXPECT_THAT(LineWith(text, "  launch_bound "),
              ContainsRegex("^  launch_bound +10\\.0 +100\\.0% +launch_overhead 6\\.0, "
                            "kernel_gap 4\\.0$"));
}

TEST(TextWriter, OmitsCausesWithoutIdleTime) {
  Report r;
  r.devices.push_back(Device0());
  EXPECT_THAT(WriteText(r), Not(HasSubstr("launch_bound")));
}

TEST(TextWriter, ReportsCommunicationAndTheWaitForPeers) {
  const std::string text = WriteText(SampleReport());
  EXPECT_THAT(text,
              HasSubstr("  communication 8.0 ms, exposed 2.0 ms, waiting for peers 3.0 ms\n"));
  Report one_rank;
  DeviceReport d = Device1();
  d.comm_wait_ns.reset();
  one_rank.devices.push_back(d);
  EXPECT_THAT(WriteText(one_rank), HasSubstr("  communication 8.0 ms, exposed 2.0 ms\n"));
}

TEST(TextWriter, ReportsCommunicationOfADeviceThatWasNeverIdle) {
  Report r;
  DeviceReport d = Device1();
  d.busy_ns = d.window_ns;
  d.idle_ns = 0;
  d.idle = IdleBreakdown();
  r.devices.push_back(d);
  const std::string text = WriteText(r);
  EXPECT_THAT(text, HasSubstr("busy 100.0%  idle 0.0%"));
  EXPECT_THAT(text, HasSubstr("communication 8.0 ms, exposed 2.0 ms, waiting for peers 3.0 ms"));
}

TEST(TextWriter, SaysSoWhenThereIsNoGpuWork) {
  EXPECT_THAT(WriteText(Report()), HasSubstr("no GPU work in this trace\n"));
  EXPECT_THAT(WriteText(SampleReport()), Not(HasSubstr("no GPU work")));
}

TEST(TextWriter, WritesTheStepTable) {
  const std::string text = WriteText(SampleReport());
  EXPECT_THAT(text, HasSubstr("\nsteps on rank 0 GPU 0\n"));
  EXPECT_THAT(LineWith(text, "  step "),
              ContainsRegex("step +ms +busy +data ms +launch ms +sync ms +other ms +dominant"));
  // 50 ms span, 28 ms busy; 10 ms data, 12 ms sync: sync dominates.
  EXPECT_THAT(LineWith(text, "ProfilerStep#1"),
              ContainsRegex("^  ProfilerStep#1 +50\\.0 +56\\.0% +10\\.0 +0\\.0 +12\\.0 +0\\.0 +"
                            "sync_bound\\.host_sync$"));
  EXPECT_THAT(text, Not(HasSubstr("steps on rank 1 GPU 1")));  // it has no steps
}

TEST(TextWriter, ShowsTheStepsWithTheMostIdleTimeInTimeOrder) {
  Report r;
  r.devices.push_back(Device0());
  for (int i = 0; i < 25; ++i) {
    // Idle time grows with the step number, except step 0, the most idle of all.
    r.steps.push_back(Step(0, 0, i, i * 50 * kMs, i == 0 ? 40 * kMs : i * kMs / 10));
  }
  const std::string text = WriteText(r);
  EXPECT_THAT(text, HasSubstr("steps on rank 0 GPU 0 (20 of 25 with the most idle time; all "
                              "in --format json)\n"));
  EXPECT_THAT(text, HasSubstr("  ProfilerStep#0 "));
  for (int i = 1; i <= 5; ++i) {
    EXPECT_THAT(text, Not(HasSubstr(absl::StrCat("  ProfilerStep#", i, " ")))) << i;
  }
  for (int i = 6; i < 25; ++i)
    EXPECT_THAT(text, HasSubstr(absl::StrCat("  ProfilerStep#", i, " ")));
  EXPECT_LT(text.find("ProfilerStep#0 "), text.find("ProfilerStep#6 "));
  EXPECT_LT(text.find("ProfilerStep#6 "), text.find("ProfilerStep#24 "));
}

TEST(TextWriter, ListsTheTopOffenders) {
  const std::string text = WriteText(SampleReport());
  EXPECT_THAT(text, HasSubstr("\ntop offenders"));
  EXPECT_THAT(LineWith(text, "  sync_bound.host_sync "), ContainsRegex("25\\.0 +12$"));
  EXPECT_THAT(text, HasSubstr("aten::item at train.py(21): step -> cudaStreamSynchronize\n"));
}

TEST(TextWriter, ShortensKernelNamesAndLongSites) {
  Report r = SampleReport();
  Offender o;
  o.subcause = Subcause::kKernelGap;
  o.what =
      "void at::native::vectorized_elementwise_kernel<4, at::native::tanh_kernel>(int, "
      "at::native::tanh_kernel, std::array<char*, 2ul>)";
  o.idle_ns = kMs;
  o.count = 3;
  r.offenders.push_back(o);
  Offender long_site = r.offenders[0];
  long_site.site = std::string(200, 's');
  r.offenders.push_back(long_site);
  const std::string text = WriteText(r);
  EXPECT_THAT(text, HasSubstr("\n    at::native::vectorized_elementwise_kernel<4, "
                              "at::native::tanh_kernel>\n"));
  const std::string shortened = LineWith(text, "ssss");
  EXPECT_EQ(shortened, "    " + std::string(75, 's') + "...");
}

TEST(TextWriter, EndsWithTheFixForEachCause) {
  Report r = SampleReport();
  Advice data;
  data.subcause = Subcause::kDataLoader;
  data.share_of_lost_time = 0.2;
  data.fix = "raise num_workers";
  r.advice.push_back(data);
  const std::string text = WriteText(r);
  EXPECT_THAT(text, HasSubstr("\nwhat to do\n"));
  EXPECT_THAT(
      LineWith(text, "drop per-step"),
      ContainsRegex("^  sync_bound\\.host_sync \\(50% [^)]*\\): drop per-step \\.item\\(\\)$"));
  EXPECT_THAT(LineWith(text, "raise num_workers"),
              ContainsRegex("^  data_starved\\.dataloader \\(20% [^)]*\\): raise num_workers$"));
  EXPECT_GT(text.find("what to do"), text.find("top offenders"));
}

OneOffTime Part(Phase phase, OneOffKind kind, int64_t ns, int64_t count = 1,
                std::string evidence = "") {
  OneOffTime o;
  o.phase = phase;
  o.kind = kind;
  o.ns = ns;
  o.count = count;
  o.evidence = std::move(evidence);
  return o;
}

// A run of 13 s on one GPU: start-up 2.61 s, steady state 10.1 s (busy 40.2%, a 120 ms
// re-compilation), wind-down 310 ms.
DeviceReport PhasedDevice() {
  DeviceReport d;
  d.device = 0;
  d.name = "NVIDIA H200";
  d.window_start_ns = 0;
  d.steady_start_ns = 2610 * kMs;
  d.steady_end_ns = d.steady_start_ns + 10100 * kMs;
  d.window_end_ns = d.steady_end_ns + 310 * kMs;
  d.window_ns = d.window_end_ns;
  d.busy_ns = 4060 * kMs;
  d.idle_ns = 5920 * kMs;
  d.idle[Subcause::kHostSync] = 3920 * kMs;
  d.idle[Subcause::kCopyWait] = 1000 * kMs;
  d.idle[Subcause::kDataLoader] = 1000 * kMs;
  d.one_off = {
      Part(Phase::kStartUp, OneOffKind::kCompilation, 2200 * kMs, 1, "cuModuleLoadData"),
      Part(Phase::kStartUp, OneOffKind::kCudaInit, 310 * kMs, 1, "cuInit"),
      Part(Phase::kStartUp, OneOffKind::kSetUp, 80 * kMs),
      Part(Phase::kStartUp, OneOffKind::kGpuBusy, 20 * kMs),
      Part(Phase::kSteady, OneOffKind::kCompilation, 120 * kMs, 2, "triton_poi_fused_add_0"),
      Part(Phase::kWindDown, OneOffKind::kWindDown, 300 * kMs),
      Part(Phase::kWindDown, OneOffKind::kGpuBusy, 10 * kMs)};
  return d;
}

Report PhasedReport(int steps = 49) {
  Report r;
  r.source = "pytorch-profiler";
  r.inputs = {"trace.json.gz"};
  r.window_start_ns = 0;
  r.window_end_ns = 13020 * kMs;
  r.devices = {PhasedDevice()};
  r.step_source = steps > 0 ? "ProfilerStep" : "";
  for (int i = 0; i < steps; ++i) {
    StepReport s = Step(0, 0, i + 1, 2610 * kMs + i * 200 * kMs, 20 * kMs);
    s.rank.reset();
    r.steps.push_back(s);
  }
  return r;
}

TEST(TextWriter, ShowsTheStartUpApartFromTheSteadyState) {
  const std::string text = WriteText(PhasedReport());
  EXPECT_THAT(text, HasSubstr("\nstart-up 2.61 s (before the first step): compilation 2.20 s "
                              "(cuModuleLoadData), CUDA init 310 ms (cuInit), set-up 80.0 ms, "
                              "GPU busy 20.0 ms\n"
                              "steady state 10.1 s, 49 steps (ProfilerStep)\n"
                              "GPU 0  NVIDIA H200  busy 40.2%  idle 58.6% of the steady state "
                              "(5.92 s of 10.1 s)\n"));
  EXPECT_THAT(text, HasSubstr("\n  one-off in the steady state: re-compilation 120 ms (2x, "
                              "triton_poi_fused_add_0)\n"));
  EXPECT_THAT(text, HasSubstr("\nwind-down 310 ms (after the last step): teardown 300 ms, GPU "
                              "busy 10.0 ms\n"));
  EXPECT_THAT(text, HasSubstr("window: 13.0 s   records:"));
  // In reading order: start-up, the steady state and its device, wind-down, then the steps.
  EXPECT_LT(text.find("start-up "), text.find("steady state "));
  EXPECT_LT(text.find("steady state "), text.find("GPU 0  NVIDIA"));
  EXPECT_LT(text.find("  one-off in the steady state"), text.find("wind-down "));
  EXPECT_LT(text.find("wind-down "), text.find("steps on GPU 0"));
  // One device, alike with itself: no per-device start-up line.
  EXPECT_THAT(text, Not(HasSubstr("\n  start-up ")));
}

TEST(TextWriter, SaysWhenThereAreNoSteps) {
  Report r = PhasedReport(0);
  const std::string text = WriteText(r);
  EXPECT_THAT(text, HasSubstr("\nstart-up 2.61 s (before the loop's kernels): "));
  EXPECT_THAT(text, HasSubstr("\nsteady state 10.1 s (no steps found: the steady state runs from "
                              "the kernels after the start-up to the last kernel)\n"));
  EXPECT_THAT(text, HasSubstr("\nwind-down 310 ms (after the last kernel): "));
  EXPECT_THAT(text, Not(HasSubstr("steps on")));
  r.step_source = "gpuidle.step";  // its only step was a warm-up step, in the start-up
  EXPECT_THAT(WriteText(r), HasSubstr("\nsteady state 10.1 s, no steps after the start-up "
                                      "(gpuidle.step)\n"));
  r.steps = {Step(0, 0, 1, 2610 * kMs, 0)};
  r.steps[0].rank.reset();
  EXPECT_THAT(WriteText(r), HasSubstr("\nsteady state 10.1 s, 1 step (gpuidle.step)\n"));
}

TEST(TextWriter, LeavesOutPhasesThatTookNoTime) {
  Report r = PhasedReport();
  DeviceReport& d = r.devices[0];
  d.window_start_ns = d.steady_start_ns;
  d.window_end_ns = d.steady_end_ns;
  d.window_ns = d.window_end_ns - d.window_start_ns;
  d.one_off.clear();
  const std::string text = WriteText(r);
  EXPECT_THAT(text, Not(HasSubstr("start-up")));
  EXPECT_THAT(text, Not(HasSubstr("wind-down")));
  EXPECT_THAT(text, Not(HasSubstr("one-off")));
  EXPECT_THAT(text, HasSubstr("\nsteady state 10.1 s, 49 steps (ProfilerStep)\n"));
}

// Eight ranks: one compiled far longer than the others.
Report EightRanks(int64_t slow_start_up_ns) {
  Report r;
  r.source = "pytorch-profiler";
  for (int rank = 0; rank < 8; ++rank) {
    DeviceReport d = PhasedDevice();
    d.rank = rank;
    const int64_t start_up = rank == 3 ? slow_start_up_ns : 2610 * kMs;
    d.one_off[0].ns += start_up - 2610 * kMs;  // the compilation
    d.steady_start_ns = start_up;
    d.steady_end_ns = d.steady_start_ns + 10100 * kMs;
    d.window_end_ns = d.steady_end_ns + 310 * kMs;
    d.window_ns = d.window_end_ns;
    r.devices.push_back(d);
  }
  r.window_end_ns = r.devices[3].window_end_ns;
  r.step_source = "ProfilerStep";
  for (int rank = 0; rank < 8; ++rank) {
    for (int i = 0; i < 3; ++i) r.steps.push_back(Step(rank, 0, i + 1, (3 + i) * 1000 * kMs, 0));
  }
  return r;
}

TEST(TextWriter, ShowsEachDevicesStartUpOnlyWhenTheyDiffer) {
  const std::string alike = WriteText(EightRanks(2610 * kMs));
  EXPECT_THAT(alike, HasSubstr("\nstart-up 2.61 s (before the first step): compilation 2.20 s"));
  EXPECT_THAT(alike, Not(HasSubstr("\n  start-up ")));
  EXPECT_THAT(alike, HasSubstr("\nsteady state 10.1 s, 3 steps (ProfilerStep)\n"));

  const std::string text = WriteText(EightRanks(9610 * kMs));
  EXPECT_THAT(text, HasSubstr("\nstart-up 9.61 s (before the first step; the longest, on rank 3 "
                              "GPU 0; the shortest 2.61 s): compilation 9.20 s (cuModuleLoadData), "
                              "CUDA init 310 ms (cuInit), set-up 80.0 ms, GPU busy 20.0 ms\n"));
  // Then each device says its own, under its line.
  const std::vector<std::string> lines = Lines(text);
  int per_device = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!absl::StartsWith(lines[i], "  start-up ")) continue;
    ++per_device;
    EXPECT_EQ(lines[i], per_device == 4
                            ? "  start-up 9.61 s (compilation 9.20 s, CUDA init 310 ms)"
                            : "  start-up 2.61 s (compilation 2.20 s, CUDA init 310 ms)");
  }
  EXPECT_EQ(per_device, 8);
  // The wind-downs are alike: one line, no rank named.
  EXPECT_THAT(text, HasSubstr("\nwind-down 310 ms (after the last step): teardown 300 ms"));
  EXPECT_THAT(text, Not(HasSubstr("\n  wind-down ")));
}

TEST(TextWriter, GivesTheRangeOfSteadyStatesAndStepsWhenDevicesDiffer) {
  Report r = EightRanks(2610 * kMs);
  r.devices.resize(2);
  r.devices[1].steady_end_ns = r.devices[1].steady_start_ns + 5 * 1000 * kMs;
  r.steps = {Step(0, 0, 1, 0, 0), Step(0, 0, 2, 50 * kMs, 0), Step(1, 0, 1, 0, 0)};
  r.steps[0].name = "ProfilerStep#1";
  EXPECT_THAT(WriteText(r),
              HasSubstr("\nsteady state 5.00 s to 10.1 s, 1 to 2 steps per GPU (ProfilerStep)\n"));
}

TEST(TextWriter, ListsTheWarnings) {
  Report r = PhasedReport();
  r.warnings = {"rank 2: trace missing"};
  std::string text = WriteText(r);
  EXPECT_THAT(text, HasSubstr("\nwarning: rank 2: trace missing\n"));
  EXPECT_LT(text.find("warning: "), text.find("steps on"));
  for (int i = 0; i < 7; ++i) r.warnings.push_back(absl::StrCat("problem ", i));
  text = WriteText(r);
  EXPECT_THAT(text, HasSubstr("\nwarnings:\n  rank 2: trace missing\n  problem 0\n"));
  EXPECT_THAT(text, HasSubstr("\n  problem 3\n  and 3 more (all in --format json)\n"));
  EXPECT_THAT(text, Not(HasSubstr("problem 4")));
  EXPECT_THAT(WriteText(PhasedReport()), Not(HasSubstr("warning")));
}

TEST(TextWriter, ListsCopyWaitUnderSyncBound) {
  const std::string text = WriteText(PhasedReport());
  EXPECT_THAT(LineWith(text, "  sync_bound "),
              ContainsRegex("^  sync_bound +4920\\.0 +83\\.1% +host_sync 3920\\.0, "
                            "copy_wait 1000\\.0$"));
  Report r = PhasedReport();
  Offender o;
  o.subcause = Subcause::kCopyWait;
  o.what = "cudaMemcpyAsync";
  o.site = "aten::copy_ at train.py(9): load";
  o.idle_ns = 1000 * kMs;
  o.count = 49;
  r.offenders.push_back(o);
  Advice a;
  a.subcause = Subcause::kCopyWait;
  a.share_of_lost_time = 0.17;
  a.fix = "move the copy to its own stream";
  r.advice.push_back(a);
  const std::string with_offender = WriteText(r);
  EXPECT_THAT(LineWith(with_offender, "  sync_bound.copy_wait "), ContainsRegex("1000\\.0 +49$"));
  EXPECT_THAT(with_offender,
              HasSubstr("\n    aten::copy_ at train.py(9): load -> cudaMemcpyAsync\n"));
  EXPECT_THAT(with_offender, HasSubstr("\n  sync_bound.copy_wait (17% of lost time): move the "
                                       "copy to its own stream\n"));
}

// Every byte of the summary a terminal would act on: anything below 0x20 but the newline, DEL.
bool HasControlBytes(const std::string& text) {
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && u != '\n') || u == 0x7f) return true;
  }
  return false;
}

TEST(TextWriter, EscapesControlCharactersInEveryStringFromTheTrace) {
  const std::string red = "\x1b[31m";
  Report r = PhasedReport();
  r.source = "pytorch\x07";
  r.inputs = {"trace\x1b]0;title\x07.json"};
  r.devices[0].name = "NVIDIA\tH200" + red;
  r.devices[0].one_off[0].evidence = "cuModuleLoadData" + red;
  r.devices[0].one_off[4].evidence = "triton\rkernel";
  r.step_source = "nvtx" + red;
  r.steps[0].name = "step" + red;
  r.warnings = {"bad field" + red, "\x1b[2Jcleared"};
  Offender kernel;
  kernel.subcause = Subcause::kKernelGap;
  kernel.what = "void evil" + red + "<int>(int)";
  kernel.site = "aten::mm at x.py(1)\x1b[0m";
  kernel.idle_ns = kMs;
  kernel.count = 1;
  r.offenders.push_back(kernel);
  Offender host = kernel;
  host.subcause = Subcause::kHost;
  host.what = "next_batch\x7f";
  r.offenders.push_back(host);
  Advice a;
  a.subcause = Subcause::kHostSync;
  a.share_of_lost_time = 0.5;
  a.fix = "avoid .item() in " + red;
  r.advice.push_back(a);
  const std::string text = WriteText(r);
  EXPECT_FALSE(HasControlBytes(text)) << text;
  EXPECT_THAT(text, HasSubstr("source: pytorch\\x07 (trace\\x1b]0;title\\x07.json)\n"));
  EXPECT_THAT(text, HasSubstr("GPU 0  NVIDIA\\x09H200\\x1b[31m  busy"));
  EXPECT_THAT(text, HasSubstr("compilation 2.20 s (cuModuleLoadData\\x1b[31m)"));
  EXPECT_THAT(text, HasSubstr("re-compilation 120 ms (2x, triton\\x0dkernel)"));
  EXPECT_THAT(text, HasSubstr("49 steps (nvtx\\x1b[31m)"));
  EXPECT_THAT(text, HasSubstr("\n  step\\x1b[31m "));
  EXPECT_THAT(text, HasSubstr("\n  bad field\\x1b[31m\n  \\x1b[2Jcleared\n"));
  EXPECT_THAT(text, HasSubstr("\n    aten::mm at x.py(1)\\x1b[0m -> evil\\x1b[31m<int>\n"));
  EXPECT_THAT(text, HasSubstr("\n    next_batch\\x7f before aten::mm at x.py(1)\\x1b[0m\n"));
  EXPECT_THAT(text, HasSubstr("avoid .item() in \\x1b[31m\n"));
}

TEST(TextWriter, EscapesC1AndBidiControlsAndBadUtf8ButKeepsUtf8) {
  Report r = PhasedReport();
  // U+009B (CSI in one character), U+202E (right-to-left override), a lone 0xff, "étÉ ✓ 😀".
  r.warnings = {
      "a\xc2\x9b"
      "31mb",
      "c\xe2\x80\xae"
      "d",
      "e\xff"
      "f",
      "\xc3\xa9t\xc3\x89 \xe2\x9c\x93 \xf0\x9f\x98\x80", "cut \xe2\x9c"};
  const std::string text = WriteText(r);
  EXPECT_THAT(text, HasSubstr("\n  a\\u009b31mb\n"));
  EXPECT_THAT(text, HasSubstr("\n  c\\u202ed\n"));
  EXPECT_THAT(text, HasSubstr("\n  e\\xfff\n"));
  EXPECT_THAT(text, HasSubstr("\n  \xc3\xa9t\xc3\x89 \xe2\x9c\x93 \xf0\x9f\x98\x80\n"));
  EXPECT_THAT(text, HasSubstr("\n  cut \\xe2\\x9c\n"));  // a sequence cut short
  EXPECT_THAT(text, Not(HasSubstr("\xc2\x9b")));
  EXPECT_THAT(text, Not(HasSubstr("\xe2\x80\xae")));
  // Overlong forms and UTF-16 surrogates are not UTF-8 either.
  r.warnings = {"\xc0\xaf", "\xed\xa0\x80"};
  const std::string bad = WriteText(r);
  EXPECT_THAT(bad, HasSubstr("\n  \\xc0\\xaf\n"));
  EXPECT_THAT(bad, HasSubstr("\n  \\xed\\xa0\\x80\n"));
}

TEST(TextWriter, ShortensWithoutCuttingAUtf8Sequence) {
  Report r = SampleReport();
  r.offenders[0].site = std::string(73, 's') + "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9";
  r.offenders[0].what = "x";
  const std::string line = LineWith(WriteText(r), "sss");
  // 78 bytes at most; the cut falls before the e-acute whose second byte would be past it.
  EXPECT_EQ(line, "    " + std::string(73, 's') + "\xc3\xa9...");
}

TEST(TextWriter, WritesDurationsInTheUnitThatSuitsThem) {
  Report r;
  for (const auto& [ns, text] :
       std::vector<std::pair<int64_t, std::string>>{{999, "999 ns"},
                                                    {1500, "1.50 us"},
                                                    {190'000, "190 us"},
                                                    {999'400, "999 us"},
                                                    {999'600, "1.00 ms"},
                                                    {80 * kMs, "80.0 ms"},
                                                    {999'960'000, "1.00 s"},
                                                    {12'345 * kMs, "12.3 s"},
                                                    {123'456 * kMs, "123 s"}}) {
    r.window_end_ns = ns;
    EXPECT_THAT(WriteText(r), HasSubstr(absl::StrCat("window: ", text, "   records:"))) << ns;
  }
}

// The summary of a report that the analysis made.
TEST(TextWriter, SummarisesAnAnalysedTimeline) {
  const Timeline t = TimelineBuilder()
                         .Step(1, 0, 400, "ProfilerStep#0")
                         .Launch(1, 0, 10)
                         .Kernel(20, 100)
                         .Sync(1, 12, 110)
                         .Data(1, 120, 220)
                         .Launch(1, 225, 235)
                         .Kernel(240, 300)
                         .Launch(1, 300, 305)
                         .Kernel(330, 400)
                         .Build();
  const absl::StatusOr<Report> report = Analyze(t, AnalysisOptions());
  ASSERT_TRUE(report.ok()) << report.status();
  const std::string text = WriteText(*report);
  // Window 0.4 ms, busy 0.21 ms (52.5%), idle 0.19 ms (47.5%).
  EXPECT_THAT(text, HasSubstr("GPU 0  busy 52.5%  idle 47.5% of the steady state (190 us of "
                              "400 us)\n"));
  for (int c = 0; c < kNumCauses; ++c) {
    const auto cause = static_cast<Cause>(c);
    const std::string line = LineWith(text, absl::StrCat("  ", CauseName(cause), " "));
    if (report->devices[0].idle.CauseNs(cause) > 0) {
      EXPECT_FALSE(line.empty()) << CauseName(cause);
    } else {
      EXPECT_TRUE(line.empty()) << line;
    }
  }
  EXPECT_THAT(text, HasSubstr("\nsteps on GPU 0\n"));
  EXPECT_THAT(text, HasSubstr("  ProfilerStep#0 "));
  ASSERT_FALSE(report->advice.empty());
  EXPECT_THAT(text, HasSubstr(report->advice[0].fix));
}

TEST(WriterForFormat, GivesAWriterForEachFormat) {
  EXPECT_TRUE(WriterForFormat("text").ok());
  EXPECT_TRUE(WriterForFormat("txt").ok());
  EXPECT_TRUE(WriterForFormat("json").ok());
  const Report r = SampleReport();
  EXPECT_THAT((*WriterForFormat("json"))->Write(r), HasSubstr("\"schema\": \"gpuidle.report/2\""));
  EXPECT_THAT((*WriterForFormat("text"))->Write(r), StartsWith("gpuidle: why the GPU was idle"));
}

TEST(WriterForFormat, RejectsUnknownFormatsNamingTheKnownOnes) {
  for (const char* format : {"xml", "", "html ", "JSONL", "csv"}) {
    const absl::StatusOr<std::unique_ptr<ReportWriter>> w = WriterForFormat(format);
    ASSERT_FALSE(w.ok()) << format;
    EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(w.status().message()),
                HasSubstr(absl::StrCat("unknown report format \"", format, "\"")));
    EXPECT_THAT(std::string(w.status().message()), HasSubstr("text, json"));
  }
}

TEST(FormatForPath, TakesJsonFromTheExtension) {
  EXPECT_EQ(FormatForPath("report.json"), "json");
  EXPECT_EQ(FormatForPath("/tmp/out/REPORT.JSON"), "json");
  EXPECT_EQ(FormatForPath("report.txt"), "text");
  EXPECT_EQ(FormatForPath("report"), "text");
  EXPECT_EQ(FormatForPath("report.json.gz"), "json");  // written compressed
  EXPECT_EQ(FormatForPath("report.txt.gz"), "text");
  EXPECT_EQ(FormatForPath("out.json/report"), "text");
  EXPECT_EQ(FormatForPath(""), "text");
}

}  // namespace
}  // namespace gpuidle::internal
