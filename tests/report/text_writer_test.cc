#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "analysis/analyze.h"
#include "core/terminal.h"
#include "core/text_safety.h"
#include "gmock/gmock.h"
#include "gpuidle/analyze.h"
#include "gpuidle/options.h"
#include "gpuidle/report.h"
#include "gtest/gtest.h"
#include "report/writer.h"
#include "testing/timeline_builder.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::TimelineBuilder;
using ::testing::ContainsRegex;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr int64_t kMs = 1'000'000;

std::string WriteText(const Report& r) { return MakeTextWriter()->Write(r); }

std::vector<std::string> Lines(const std::string& text) { return absl::StrSplit(text, '\n'); }

// The text with the lines FitLines wrapped joined again: a continuation line is indented four
// more than the line it continues.
std::string Unwrapped(const std::string& text) {
  std::vector<std::string> lines = Lines(text);
  std::string out;
  size_t indent = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    const size_t own = l.find_first_not_of(' ') == std::string::npos ? 0 : l.find_first_not_of(' ');
    if (i > 0 && own == indent + 4 && own > 0) {
      absl::StrAppend(&out, " ", l.substr(own));
      continue;
    }
    if (i > 0) out += "\n";
    out += l;
    indent = own;
  }
  return out;
}

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
  a.share_of_steady_state = 0.25;
  a.fix = "drop per-step .item()";
  r.advice.push_back(a);
  return r;
}

TEST(TextWriter, SaysWhatWasReadAndHowComplete) {
  const std::string text = WriteText(SampleReport());
  EXPECT_THAT(text, StartsWith("gpuidle: why the GPUs were idle\n"));  // two devices
  EXPECT_THAT(text, HasSubstr("source: pytorch-profiler (rank0.json.gz, rank1.json.gz)\n"));
  EXPECT_THAT(Unwrapped(text),
              HasSubstr("window: 100 ms   records: the source does not report lost "
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
  // Rank 1 has communication: its headline splits the busy time (docs/ANALYSIS.md).
  EXPECT_THAT(text, HasSubstr("\nrank 1 GPU 1  NVIDIA H200  compute 88.0%  communication 2.0%  "
                              "waiting for peers 3.0%  idle 10.0%\n"));
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
  // Device 0 of a 100 ms steady state: sync 25 ms, data 10 ms, unattributed 5 ms; no
  // launch_bound. Every share is of the steady state, as the header says.
  EXPECT_THAT(LineWith(text, "  lost to "), ContainsRegex("^  lost to +ms +of steady +subcauses"));
  const std::string sync = LineWith(text, "  sync_bound ");
  EXPECT_THAT(sync, ContainsRegex("^  sync_bound +25\\.0 +25\\.0% +host_sync 25\\.0$"));
  EXPECT_THAT(LineWith(text, "  data_starved "),
              ContainsRegex("^  data_starved +10\\.0 +10\\.0% +dataloader 10\\.0$"));
  EXPECT_THAT(LineWith(text, "  unattributed "),
              ContainsRegex("^  unattributed +5\\.0 +5\\.0% +no evidence in the trace$"));
  EXPECT_LT(text.find("  sync_bound "), text.find("  data_starved "));
  EXPECT_LT(text.find("  data_starved "), text.find("  unattributed "));
  // Device 1 has only launch_bound time, split over two subcauses.
  EXPECT_THAT(LineWith(text, "  launch_bound "),
              ContainsRegex("^  launch_bound +10\\.0 +10\\.0% +launch_overhead 6\\.0, "
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
  EXPECT_THAT(text, HasSubstr("compute 98.0%  communication 2.0%  waiting for peers 3.0%  idle "
                              "0.0%\n"));
  EXPECT_THAT(text, HasSubstr("communication 8.0 ms, exposed 2.0 ms, waiting for peers 3.0 ms"));
}

TEST(TextWriter, SaysSoWhenThereIsNoGpuWork) {
  EXPECT_THAT(WriteText(Report()), HasSubstr("no GPU activity recorded in this trace\n"));
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

TEST(TextWriter, ShowsAStepsReadingsUnderItsRow) {
  Report r = SampleReport();
  r.steps[0].gpu = StepReport::Gpu{.samples = 5,
                                   .sm_clock_median_mhz = 1410,
                                   .sm_clock_max_mhz = 1980,
                                   .power_median_mw = 655'000,
                                   .power_limit_mw = 700'000,
                                   .sm_active_pct = 82.4,
                                   .dram_pct = 55};
  const std::string text = WriteText(r);
  EXPECT_THAT(text, HasSubstr("ProfilerStep#1"));
  EXPECT_THAT(text, HasSubstr("\n    gpu 1.41/1.98 GHz  655/700 W  SM 82%  DRAM 55%\n"));
  EXPECT_THAT(text, Not(HasSubstr("tensor")));  // not measured
  // Without readings, no such line.
  EXPECT_THAT(WriteText(SampleReport()), Not(HasSubstr("    gpu ")));
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
  // Elided in the middle, in 78 columns: the start and the end of a site stay.
  const std::string shortened = LineWith(text, "ssss");
  EXPECT_LE(DisplayWidth(shortened), 4u + 78u);
  EXPECT_THAT(shortened, StartsWith("    sssss"));
  EXPECT_THAT(shortened, HasSubstr("s...s"));
  EXPECT_THAT(shortened, EndsWith("s -> cudaStreamSynchronize"));  // the call stays whole
}

TEST(TextWriter, EndsWithTheFixForEachCause) {
  Report r = SampleReport();
  Advice data;
  data.subcause = Subcause::kDataLoader;
  data.share_of_lost_time = 0.2;
  data.share_of_steady_state = 0.1;
  data.fix = "raise num_workers";
  r.advice.push_back(data);
  const std::string text = WriteText(r);
  EXPECT_THAT(text, HasSubstr("\nwhat to do\n"));
  EXPECT_THAT(
      LineWith(text, "drop per-step"),
      ContainsRegex("^  sync_bound\\.host_sync \\(25% of the steady state\\): drop per-step "
                    "\\.item\\(\\)$"));
  EXPECT_THAT(LineWith(text, "raise num_workers"),
              ContainsRegex("^  data_starved\\.dataloader \\(10% of the steady state\\): "
                            "raise num_workers$"));
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
  EXPECT_THAT(Unwrapped(text),
              HasSubstr("\nstart-up 2.61 s (before the first step): compilation 2.20 s "
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
  EXPECT_THAT(Unwrapped(text),
              HasSubstr("\nsteady state 10.1 s (no steps found: the steady state runs from "
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
  EXPECT_THAT(Unwrapped(text),
              HasSubstr("\nstart-up 9.61 s (before the first step; the longest, on rank 3 "
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
  EXPECT_THAT(text, StartsWith("gpuidle: why the GPU was idle\n"));  // one device
  EXPECT_THAT(LineWith(text, "  sync_bound "),
              ContainsRegex("^  sync_bound +4920\\.0 +48\\.7% +host_sync 3920\\.0, "
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
  a.share_of_steady_state = 0.099;
  a.fix = "move the copy to its own stream";
  r.advice.push_back(a);
  const std::string with_offender = WriteText(r);
  EXPECT_THAT(LineWith(with_offender, "  sync_bound.copy_wait "), ContainsRegex("1000\\.0 +49$"));
  EXPECT_THAT(with_offender,
              HasSubstr("\n    aten::copy_ at train.py(9): load -> cudaMemcpyAsync\n"));
  EXPECT_THAT(with_offender,
              HasSubstr("\n  sync_bound.copy_wait (9.9% of the steady state): move the "
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

TEST(TextWriter, ShowsNvmlReadingsAndWhatTheyMeanUnderTheirDevice) {
  Report r = PhasedReport();
  GpuMetrics& m = r.devices[0].gpu_metrics.emplace();
  m.samples = 300;
  m.busy_samples = 280;
  m.idle_samples = 20;
  m.sm_clock_max_mhz = 1980;
  m.sm_clock_median_mhz = 1410;
  m.power_median_mw = 690'000;
  m.power_limit_mw = 700'000;
  m.temperature_max_c = 71;
  m.pcie_generation = 4;
  m.pcie_generation_max = 5;
  m.pcie_width = 16;
  m.pcie_width_max = 16;
  m.memory_used_max_bytes = uint64_t{61} << 30;
  m.memory_total_bytes = uint64_t{80} << 30;
  m.other_processes = {{4242, uint64_t{31} << 30, 12}};
  m.findings = {{"pcie_link", "PCIe link at Gen4 x16 of Gen5 x16 while busy", "check the slot"}};
  const std::string text = Unwrapped(WriteText(r));
  EXPECT_THAT(text, HasSubstr("\n  GPU metrics (NVML, 300 readings, 280 while busy): SM clock 1.41 "
                              "of 1.98 GHz, power 690 of 700 W, up to 71 C, PCIe Gen4 x16 of Gen5 "
                              "x16, memory 61.0 GiB of 80.0 GiB, 1 other process on it\n"));
  EXPECT_THAT(text,
              HasSubstr("\n  PCIe link at Gen4 x16 of Gen5 x16 while busy: check the slot\n"));
  // Under its device, before the next section.
  EXPECT_LT(text.find("GPU metrics"), text.find("steps on GPU 0"));
  EXPECT_GT(text.find("GPU metrics"), text.find("lost to"));
  EXPECT_THAT(WriteText(PhasedReport()), Not(HasSubstr("GPU metrics (")));
}

TEST(TextWriter, SaysOnceWhenATraceHasNoGpuMetrics) {
  Report r = PhasedReport();
  r.inputs = {"trace.json.gz"};
  r.source = "pytorch-profiler";
  r.devices.push_back(r.devices[0]);
  r.devices[1].device = 1;
  const std::string text = Unwrapped(WriteText(r));
  const std::string line =
      "\n  GPU metrics: none in this trace (torch.profiler traces carry none, but for "
      "profiler_metrics' counters; a live gpuidle capture reads NVML)\n";
  EXPECT_THAT(text, HasSubstr(line));
  EXPECT_EQ(text.find("GPU metrics"), text.rfind("GPU metrics")) << "once, not per device";
  EXPECT_LT(text.find("GPU metrics"), text.find("GPU 1")) << "under the first device";
  r.source = "gpuidle";
  EXPECT_THAT(Unwrapped(WriteText(r)),
              HasSubstr("GPU metrics: none in this trace (it was captured without NVML; a live "
                        "gpuidle capture reads NVML)"));
  // Not where a device has readings, nor for a live run (no inputs).
  r.devices[1].gpu_metrics.emplace().samples = 10;
  EXPECT_THAT(WriteText(r), Not(HasSubstr("none in this trace")));
  r.devices[1].gpu_metrics.reset();
  r.inputs.clear();
  EXPECT_THAT(WriteText(r), Not(HasSubstr("GPU metrics")));
}

TEST(TextWriter, AnOffendersFileNameAndLineSurviveALongKernelName) {
  Report r = SampleReport();
  Offender o;
  o.subcause = Subcause::kLaunchOverhead;
  o.what =
      "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4>("
      "cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4::Params)";
  o.site = "/work/main/examples/python/unchanged/lightning_slow_collate.py:76 in training_step";
  o.idle_ns = 90 * kMs;
  o.count = 198;
  r.offenders = {o};
  const std::string line = LineWith(WriteText(r), "training_step");
  EXPECT_THAT(line, HasSubstr("/lightning_slow_collate.py:76 in training_step -> cutlass::"));
  EXPECT_LE(DisplayWidth(line), 4u + 78u);
}

TEST(TextWriter, ShortensWithoutCuttingAUtf8Sequence) {
  Report r = SampleReport();
  r.offenders[0].site = std::string(40, 's') + std::string(20, 'x') + std::string(40, 'e') +
                        "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9";
  r.offenders[0].what = "x";
  const std::string line = LineWith(WriteText(r), "sss");
  // 78 columns (not bytes): each two-byte e-acute is one column, and stays whole.
  EXPECT_LE(DisplayWidth(line), 4u + 78u);
  EXPECT_TRUE(IsValidUtf8(line));
  EXPECT_THAT(line, HasSubstr("s..."));
  // The end, which tells sites apart, keeps the larger part.
  EXPECT_THAT(line, EndsWith(std::string(40, 'e') + "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9 -> x"));
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
  EXPECT_THAT(Unwrapped(text), HasSubstr(report->advice[0].fix));
}

// Every line of the summary within 100 columns, but the kinds of line that were longer before
// issue 16 and that it did not change: the window's records, a steady state without steps, the
// rows of a step table without the wait column (dominant subcauses of up to 28 characters).
void ExpectWithin100Columns(const std::string& text) {
  bool old_step_rows = false;
  for (const std::string& line : Lines(text)) {
    if (absl::StartsWith(line, "  step ")) {
      old_step_rows = !absl::StrContains(line, "wait ms");
      continue;
    }
    if (line.empty()) old_step_rows = false;
    if (old_step_rows || absl::StartsWith(line, "window: ") ||
        absl::StartsWith(line, "steady state ")) {
      continue;
    }
    EXPECT_LE(line.size(), 100u) << line;
  }
}

// Rank 0 of a straggler job: 337 ms of steady state, 329.3 ms of it communication alone, of
// which 323.6 ms waiting for peers; 7.1 ms compute, 574 us idle.
DeviceReport PunctualRank() {
  DeviceReport d;
  d.rank = 0;
  d.device = 0;
  d.name = "NVIDIA H200";
  d.window_start_ns = d.steady_start_ns = 0;
  d.window_end_ns = d.steady_end_ns = 337 * kMs;
  d.window_ns = 337 * kMs;
  d.idle_ns = 574'000;
  d.idle[Subcause::kLaunchOverhead] = 574'000;
  d.busy_ns = d.window_ns - d.idle_ns;
  d.comm_ns = 330 * kMs;
  d.exposed_comm_ns = 329'300'000;
  d.comm_wait_ns = 323'600'000;
  return d;
}

TEST(TextWriter, HeadlinesComputeCommunicationWaitingAndIdleWhereThereIsCommunication) {
  Report r;
  r.devices = {PunctualRank()};
  const std::string text = WriteText(r);
  // compute = busy - exposed = 336.426 - 329.3 = 7.126 ms (2.1%); 329.3 ms (97.7%); 96.0%; 0.2%.
  EXPECT_THAT(text, HasSubstr("\nrank 0 GPU 0  NVIDIA H200  compute 2.1%  communication 97.7% "
                              "(waiting for peers 96.0%)  idle 0.2%\n"
                              "  lost 96.2% of the steady state (324 ms of 337 ms): waiting for "
                              "peers 324 ms, idle 574 us\n"));
  // compute + communication + idle: the steady state.
  EXPECT_THAT(text, Not(HasSubstr("busy ")));
  EXPECT_THAT(text, HasSubstr("\n  communication 330.0 ms, exposed 329.3 ms, waiting for peers "
                              "323.6 ms\n"));
  ExpectWithin100Columns(text);
}

TEST(TextWriter, HeadlinesAWaitThatOverlappedComputeApartFromTheCommunication) {
  Report r;
  DeviceReport d = PunctualRank();
  d.exposed_comm_ns = 20 * kMs;  // most collectives overlapped compute, and waited there
  r.devices = {d};
  const std::string line = LineWith(WriteText(r), "rank 0 GPU 0");
  EXPECT_EQ(line,
            "rank 0 GPU 0  NVIDIA H200  compute 93.9%  communication 5.9%  waiting for peers "
            "96.0%  idle 0.2%");
}

TEST(TextWriter, HeadlinesOneRanksCommunicationWithoutAWaitingFigure) {
  Report r;
  DeviceReport d = Device1();
  d.comm_wait_ns.reset();
  r.devices = {d};
  const std::string text = WriteText(r);
  // busy 90 ms, 2 ms of it communication alone: compute 88%.
  EXPECT_THAT(text, HasSubstr("\nrank 1 GPU 1  NVIDIA H200  compute 88.0%  communication 2.0%  "
                              "idle 10.0%\n  lost 10.0% of the steady state (10.0 ms of 100 ms): "
                              "idle\n"));
  EXPECT_THAT(text, Not(HasSubstr("waiting for peers 0")));
  ExpectWithin100Columns(text);
}

TEST(TextWriter, WrapsALongDeviceHeadline) {
  Report r;
  DeviceReport d = PunctualRank();
  d.rank = 1023;
  d.device = 7;
  d.name = "NVIDIA H100 80GB HBM3";
  r.devices = {d};
  const std::string text = WriteText(r);
  EXPECT_THAT(text, HasSubstr("\nrank 1023 GPU 7  NVIDIA H100 80GB HBM3\n  compute 2.1%  "
                              "communication 97.7% (waiting for peers 96.0%)  idle 0.2%\n"));
  ExpectWithin100Columns(text);
}

TEST(TextWriter, KeepsTheHeadlineOfDevicesWithoutCommunication) {
  Report r = SampleReport();
  r.devices[1].comm_ns = 0;
  r.devices[1].exposed_comm_ns = 0;
  r.devices[1].comm_wait_ns.reset();
  const std::string text = WriteText(r);
  EXPECT_THAT(text, HasSubstr("\nrank 0 GPU 0  NVIDIA H200  busy 60.0%  idle 40.0% of the steady "
                              "state (40.0 ms of 100 ms)\n"));
  EXPECT_THAT(text, HasSubstr("\nrank 1 GPU 1  NVIDIA H200  busy 90.0%  idle 10.0% of the steady "
                              "state (10.0 ms of 100 ms)\n"));
  EXPECT_THAT(text, Not(HasSubstr("compute ")));
  EXPECT_THAT(text, Not(ContainsRegex("\n  lost [0-9]")));
}

CollectiveStats Kind(std::string group, std::string op, int64_t count, int64_t ns,
                     int64_t exposed_ns) {
  CollectiveStats c;
  c.group = std::move(group);
  c.op = std::move(op);
  c.count = count;
  c.ns = ns;
  c.exposed_ns = exposed_ns;
  return c;
}

TEST(TextWriter, TabulatesTheCollectivesByKind) {
  Report r;
  DeviceReport d = PunctualRank();
  d.collectives = {Kind("0", "allreduce", 40, 326'100'000, 325'600'000),
                   Kind("", "allgather", 4, 3'900'000, 3'700'000), Kind("1", "broadcast", 0, 0, 0)};
  d.collectives[0].wait_ns = 321 * kMs;
  d.collectives[0].bytes = 40LL * 32 * 1024 * 1024;  // 40 x 32 MiB
  d.collectives[1].wait_ns = 2'500'000;
  r.devices = {d};
  const std::string text = WriteText(r);
  const std::string head = LineWith(text, "  collective ");
  EXPECT_THAT(head, ContainsRegex("^    collective +count +ms +exposed ms +waiting ms +bytes$"));
  EXPECT_THAT(LineWith(text, "0/allreduce"),
              ContainsRegex("^    0/allreduce +40 +326\\.1 +325\\.6 +321\\.0 +1\\.25 GiB$"));
  EXPECT_THAT(LineWith(text, "allgather"),
              ContainsRegex("^    allgather +4 +3\\.9 +3\\.7 +2\\.5 +-$"));
  EXPECT_THAT(text, Not(HasSubstr("broadcast")));  // no collective of that kind ran
  // Under the device's total.
  EXPECT_LT(text.find("  communication 330.0 ms"), text.find("0/allreduce"));
  ExpectWithin100Columns(text);

  // One rank, no sizes in the trace: neither column.
  for (CollectiveStats& c : r.devices[0].collectives) {
    c.wait_ns.reset();
    c.bytes.reset();
  }
  const std::string plain = WriteText(r);
  EXPECT_THAT(LineWith(plain, "  collective "),
              ContainsRegex("^    collective +count +ms +exposed ms$"));
  EXPECT_THAT(LineWith(plain, "0/allreduce"),
              ContainsRegex("^    0/allreduce +40 +326\\.1 +325\\.6$"));
}

TEST(TextWriter, WritesBytesInBinaryUnits) {
  Report r;
  DeviceReport d = PunctualRank();
  const std::vector<std::pair<int64_t, std::string>> sizes = {
      {512, "512 B"}, {1536, "1.50 KiB"}, {20LL << 20, "20.0 MiB"}, {300LL << 30, "300 GiB"}};
  for (size_t i = 0; i < sizes.size(); ++i) {
    d.collectives.push_back(Kind("0", absl::StrCat("op", i), 1, kMs, kMs));
    d.collectives.back().bytes = sizes[i].first;
  }
  r.devices = {d};
  const std::string text = WriteText(r);
  for (size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_THAT(LineWith(text, absl::StrCat("0/op", i, " ")), EndsWith(" " + sizes[i].second));
  }
}

TEST(TextWriter, ShowsTheFirstKindsOfCollectives) {
  Report r;
  DeviceReport d = PunctualRank();
  for (int i = 0; i < 11; ++i) d.collectives.push_back(Kind("0", absl::StrCat("op", i), 1, kMs, 0));
  r.devices = {d};
  const std::string text = WriteText(r);
  EXPECT_THAT(text, HasSubstr("    0/op7 "));
  EXPECT_THAT(text, Not(HasSubstr("    0/op8 ")));
  EXPECT_THAT(text, HasSubstr("\n    and 3 more kinds (all in --format json)\n"));
}

TEST(TextWriter, AddsAWaitColumnToTheStepsAndCountsTheWaitAsLost) {
  Report r;
  r.devices = {PunctualRank()};
  StepReport waited = Step(0, 0, 1, 0, kMs / 2);  // 0.5 ms host_sync, 30 ms waiting for peers
  waited.comm_wait_ns = 30 * kMs;
  StepReport idle = Step(0, 0, 2, 50 * kMs, 4 * kMs);  // 4 ms host_sync, 1 ms waiting
  idle.comm_wait_ns = kMs;
  r.steps = {waited, idle};
  const std::string text = WriteText(r);
  EXPECT_THAT(LineWith(text, "  step "),
              ContainsRegex("^  step +ms +busy +data ms +launch ms +sync ms +other ms +wait ms +"
                            "dominant$"));
  EXPECT_THAT(
      LineWith(text, "ProfilerStep#1 "),
      ContainsRegex("^  ProfilerStep#1 +50\\.0 +99\\.0% +0\\.0 +0\\.0 +0\\.5 +0\\.0 +30\\.0 "
                    " sync_bound\\.comm_wait$"));
  EXPECT_THAT(
      LineWith(text, "ProfilerStep#2 "),
      ContainsRegex("^  ProfilerStep#2 +50\\.0 +92\\.0% +0\\.0 +0\\.0 +4\\.0 +0\\.0 +1\\.0  "
                    "sync_bound\\.host_sync$"));
  ExpectWithin100Columns(text);

  // A step without a wait among them: "-"; the column stays.
  r.steps[1].comm_wait_ns.reset();
  EXPECT_THAT(LineWith(WriteText(r), "ProfilerStep#2 "),
              ContainsRegex(" +-  sync_bound\\.host_sync$"));
  // No step with a wait: the old table.
  r.steps[0].comm_wait_ns.reset();
  const std::string old = WriteText(r);
  EXPECT_THAT(LineWith(old, "  step "),
              ContainsRegex("^  step +ms +busy +data ms +launch ms +sync ms +other ms +dominant$"));
  EXPECT_THAT(LineWith(old, "ProfilerStep#1 "), EndsWith("  sync_bound.host_sync"));
}

TEST(TextWriter, ListsTheStepsThatLostMostWhenStepsWaited) {
  Report r;
  r.devices = {PunctualRank()};
  for (int i = 0; i < 25; ++i) {
    StepReport s = Step(0, 0, i, i * 50 * kMs, kMs);  // alike in idle time
    s.comm_wait_ns = i == 3 ? 40 * kMs : i * kMs / 100;
    r.steps.push_back(s);
  }
  const std::string text = WriteText(r);
  EXPECT_THAT(text, HasSubstr("steps on rank 0 GPU 0 (20 of 25 with the most lost time; all in "
                              "--format json)\n"));
  EXPECT_THAT(text, HasSubstr("  ProfilerStep#3 "));  // the one that waited
  for (int i : {0, 1, 2, 4})
    EXPECT_THAT(text, Not(HasSubstr(absl::StrCat("  ProfilerStep#", i, " "))));
  EXPECT_THAT(LineWith(text, "ProfilerStep#3 "), EndsWith("  sync_bound.comm_wait"));
}

RankReport Rank(int rank, std::string host, int64_t matched, int64_t arrived_last, int64_t late_ns,
                int64_t wait_ns) {
  RankReport k;
  k.rank = rank;
  k.host = std::move(host);
  k.collectives = k.matched = matched;
  k.arrived_last = arrived_last;
  k.late_ns = late_ns;
  k.wait_ns = wait_ns;
  return k;
}

Report StragglerJob() {
  Report r = SampleReport();
  r.ranks = {Rank(0, "node-a", 40, 0, 0, 800 * kMs), Rank(1, "node-a", 40, 40, 804 * kMs, 0)};
  r.ranks[0].own_cause = Subcause::kCommWait;
  r.ranks[0].own_cause_share = 0.98;
  r.ranks[1].own_cause = Subcause::kHost;
  r.ranks[1].own_cause_share = 0.89;
  r.straggler_rank = 1;
  r.stragglers = {1};
  r.clock.method = "one clock";
  r.clock.hosts = 1;
  return r;
}

TEST(TextWriter, NamesTheStragglerAndItsOwnCause) {
  const std::string text = WriteText(StragglerJob());
  EXPECT_THAT(text, HasSubstr("\njob: 2 ranks on 1 host\n"
                              "  straggler: rank 1 arrived last at 40 of 40 collectives, 20.1 ms "
                              "late on average;\n    its own lost time is 89% data_starved.host\n"
                              "  clocks: one clock (1 host)\n"));
  EXPECT_THAT(LineWith(text, "  rank  "),
              ContainsRegex("^   rank  host +matched +arrived last +late ms +wait ms  own cause$"));
  EXPECT_THAT(
      LineWith(text, "     0  node-a"),
      ContainsRegex("^      0  node-a +40 +0 +0\\.0 +800\\.0  sync_bound\\.comm_wait 98%$"));
  EXPECT_THAT(LineWith(text, "     1  node-a"),
              ContainsRegex("^      1  node-a +40 +40 +804\\.0 +0\\.0  data_starved\\.host 89%$"));
  // After the devices, before the warnings and the steps.
  EXPECT_LT(text.find("rank 1 GPU 1"), text.find("\njob: "));
  EXPECT_LT(text.find("\njob: "), text.find("\nsteps on"));
  ExpectWithin100Columns(text);
}

TEST(TextWriter, SaysWhenTheRanksArrivedTogether) {
  Report r = StragglerJob();
  r.straggler_rank.reset();
  r.stragglers.clear();
  std::string text = WriteText(r);
  EXPECT_THAT(text, HasSubstr("\njob: 2 ranks on 1 host\n  ranks arrived together (no "
                              "straggler)\n"));
  EXPECT_THAT(text, Not(HasSubstr("straggler:")));
  for (RankReport& k : r.ranks) k.matched = 0;
  text = WriteText(r);
  EXPECT_THAT(text, Not(HasSubstr("arrived together")));
  EXPECT_THAT(text, HasSubstr("\n  no collective matched across the ranks (no straggler named)\n"));
}

TEST(TextWriter, WritesNoJobSectionForOneRank) {
  Report r = StragglerJob();
  r.ranks.resize(1);
  EXPECT_THAT(WriteText(r), Not(HasSubstr("job:")));
  EXPECT_THAT(WriteText(SampleReport()), Not(HasSubstr("job:")));
}

TEST(TextWriter, SaysHowTheClocksWereAligned) {
  Report r = StragglerJob();
  r.ranks[1].host = "node-b";
  r.clock.method = "aligned";
  r.clock.hosts = 4;
  r.clock.residual_ns = 12'000;
  r.clock.matched_share = 0.98;
  const std::string text = WriteText(r);
  EXPECT_THAT(text, HasSubstr("\njob: 2 ranks on 2 hosts\n"));
  EXPECT_THAT(text, HasSubstr("\n  clocks: aligned across 4 hosts from collective ends, residual "
                              "12.0 us, 98% of collectives matched\n"));
  r.clock = ClockAlignment();
  EXPECT_THAT(WriteText(r), Not(HasSubstr("clocks:")));
}

TEST(TextWriter, ShowsTheStragglersThenTheRanksThatWaitedMostOfAThousand) {
  Report r = SampleReport();
  for (int rank = 0; rank < 1024; ++rank) {
    // Rank 700 and 5 were late; rank 300 waited most, then 301, 302 ...
    const bool late = rank == 700 || rank == 5;
    r.ranks.push_back(Rank(rank, absl::StrCat("node-", rank / 8), 100, late ? 50 : 0,
                           late ? (rank == 700 ? 500 : 100) * kMs : 0,
                           rank >= 300 && rank < 400 ? (400 - rank) * kMs : 0));
  }
  r.straggler_rank = 700;
  r.stragglers = {700, 5};
  const std::string text = WriteText(r);
  EXPECT_THAT(text, HasSubstr("\njob: 1024 ranks on 128 hosts\n"));
  EXPECT_THAT(text, HasSubstr("\n  straggler: rank 700 arrived last at 50 of 100 collectives, "
                              "10.0 ms late on average\n  straggler: rank 5 arrived last at 50 "
                              "of 100 collectives, 2.00 ms late on average\n"));
  EXPECT_THAT(text, HasSubstr("\n  16 of 1024 ranks: the stragglers, then those that waited most "
                              "(all in --format json)\n"));
  std::vector<int> shown;
  bool in_table = false;
  for (const std::string& line : Lines(text)) {
    if (absl::StartsWith(line, "   rank  host")) {
      in_table = true;
      continue;
    }
    int rank = 0;
    if (in_table && line.size() > 7 &&
        absl::SimpleAtoi(absl::StripAsciiWhitespace(line.substr(0, 7)), &rank)) {
      shown.push_back(rank);
    } else {
      in_table = false;
    }
  }
  std::vector<int> expected = {700, 5};
  for (int rank = 300; rank < 314; ++rank) expected.push_back(rank);
  EXPECT_EQ(shown, expected);
  ExpectWithin100Columns(text);
}

TEST(TextWriter, ShowsAFewStragglersOfMany) {
  Report r = StragglerJob();
  for (int rank = 2; rank < 8; ++rank) r.ranks.push_back(Rank(rank, "", 40, 5, 5 * kMs, 0));
  r.stragglers = {1, 2, 3, 4, 5};
  const std::string text = WriteText(r);
  EXPECT_THAT(text, HasSubstr("\n  straggler: rank 3 arrived last at 5 of 40 collectives, 1.00 ms "
                              "late on average\n  and 2 more stragglers (all in --format json)\n"));
  EXPECT_THAT(text, Not(HasSubstr("straggler: rank 4")));
  EXPECT_THAT(LineWith(text, "     7  "), ContainsRegex("^      7  - "));  // no host known
}

VisibleDevice Visible(int device, std::optional<int> physical, std::string uuid, bool used) {
  VisibleDevice v;
  v.device = device;
  v.physical_index = physical;
  v.uuid = std::move(uuid);
  v.used = used;
  return v;
}

TEST(TextWriter, NamesTheUnusedGpusByPhysicalIndexAndUuid) {
  Report r = SampleReport();
  r.visible_device_count = 8;
  r.unused_devices = {1, 2, 3, 4, 5, 6, 7};
  r.devices.resize(1);
  for (int i = 0; i < 8; ++i) {
    r.visible_devices.push_back(Visible(
        i, (i + 3) % 8, absl::StrCat("GPU-", i, "e3c5a2b-1c2d-3e4f-5a6b-7c8d9e0f1a2b"), i == 0));
  }
  std::string text = WriteText(r);
  // CUDA_VISIBLE_DEVICES=3,4,...: the used GPU's physical index too; the unused on a line of
  // their own, as many as fit.
  EXPECT_THAT(text, HasSubstr("\nGPUs: 1 of 8 visible used: 0 (physical 3, GPU-0e3c...)\n"
                              "  unused: 1 (physical 4, GPU-1e3c...), 2 (physical 5, "
                              "GPU-2e3c...), and 5 more\n"));
  ExpectWithin100Columns(text);

  // Two unused, not remapped: one line.
  r.visible_devices.resize(3);
  for (VisibleDevice& v : r.visible_devices) v.physical_index = v.device;
  EXPECT_THAT(WriteText(r), HasSubstr("\nGPUs: 1 of 3 visible used; unused: 1 (physical 1, "
                                      "GPU-1e3c...), 2 (physical 2, GPU-2e3c...)\n"));

  // Remapped, no UUIDs: many short ones on the second line.
  r.visible_devices.clear();
  for (int i = 0; i < 16; ++i) r.visible_devices.push_back(Visible(i, 15 - i, "", i == 15));
  text = WriteText(r);
  EXPECT_THAT(text, HasSubstr("\nGPUs: 1 of 16 visible used: 15 (physical 0)\n  unused: 0 "
                              "(physical 15), 1 (physical 14), 2 (physical 13), "));
  EXPECT_THAT(LineWith(text, "  unused: "), ContainsRegex(", and [0-9]+ more$"));
  ExpectWithin100Columns(text);

  // Numbered as nvidia-smi numbers them, no UUIDs: nothing new, the line of before.
  for (VisibleDevice& v : r.visible_devices) v.physical_index = v.device;
  EXPECT_THAT(WriteText(r),
              HasSubstr("\nGPUs: 1 of 8 visible used (never used: 1, 2, 3, 4, 5, 6, 7)\n"));
}

TEST(TextWriter, CountsAGpuListedByTwoRanksOnce) {
  Report r = SampleReport();
  r.visible_devices = {Visible(0, 0, "GPU-aaaa", true), Visible(1, 1, "GPU-bbbb", false),
                       Visible(0, 0, "GPU-aaaa", false), Visible(1, 1, "GPU-bbbb", true),
                       Visible(2, 2, "GPU-cccc", false)};
  for (size_t i = 0; i < r.visible_devices.size(); ++i) r.visible_devices[i].rank = i < 2 ? 0 : 1;
  EXPECT_THAT(WriteText(r), HasSubstr("\nGPUs: 2 of 3 visible used; unused: rank 1 GPU 2 (physical "
                                      "2, GPU-cccc)\n"));
}

TEST(TextWriter, KeepsTheGpusLineWhenTheVisibleDevicesSayNothingNew) {
  Report r = SampleReport();
  for (int i = 0; i < 8; ++i) r.visible_devices.push_back(Visible(i, std::nullopt, "", i < 2));
  EXPECT_THAT(WriteText(r), HasSubstr("\nGPUs: 2 of 8 visible used (never used: 2, 3, 4, 5, 6, "
                                      "7)\n"));
  r.visible_device_count = 0;
  r.unused_devices.clear();
  r.visible_devices.resize(2);
  EXPECT_THAT(WriteText(r), HasSubstr("\nGPUs: 2 of 2 visible used\n"));
  r.visible_devices.clear();
  EXPECT_THAT(WriteText(r), Not(HasSubstr("GPUs:")));
}

TEST(TextWriter, EscapesControlCharactersInTheJobsStrings) {
  Report r = StragglerJob();
  r.ranks[0].host = "node\x1b[31m";
  r.devices[0].collectives = {Kind("g\x07", "all\x1b[2Jreduce", 1, kMs, kMs)};
  r.devices[0].comm_ns = kMs;
  r.visible_devices = {Visible(0, 3, "GPU-\x1b[0m", true)};
  r.clock.method = "odd\x1b";
  const std::string text = WriteText(r);
  EXPECT_FALSE(HasControlBytes(text)) << text;
  EXPECT_THAT(text, HasSubstr("  clocks: odd\\x1b\n"));
}

// Every line of a summary, in display columns (core/terminal.h).
size_t WidestLine(const std::string& text) {
  size_t widest = 0;
  for (const std::string& line : Lines(text)) widest = std::max(widest, DisplayWidth(line));
  return widest;
}

std::string WriteColoured(const Report& r) {
  TextOptions o;
  o.color = true;
  return MakeTextWriter(o)->Write(r);
}

// The recorded traces and reports of tests/data (what users' runs look like), analysed.
std::vector<std::pair<std::string, Report>> RecordedReports() {
  std::vector<std::pair<std::string, Report>> reports;
  const std::filesystem::path root(GPUIDLE_TEST_DATA_DIR);
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    const std::string path = entry.path().string();
    if (!entry.is_regular_file()) continue;
    if (!absl::EndsWith(path, ".json") && !absl::EndsWith(path, ".json.gz")) continue;
    absl::StatusOr<Report> r = AnalyzeTraceFiles({path});
    if (r.ok()) reports.emplace_back(path, *std::move(r));
  }
  return reports;
}

TEST(TextWriter, FitsEveryLineOfEveryRecordedReportIn100Columns) {
  const auto reports = RecordedReports();
  ASSERT_GE(reports.size(), 40u) << "tests/data holds fewer traces and reports than it did";
  for (const auto& [path, report] : reports) {
    const std::string text = WriteText(report);
    EXPECT_LE(WidestLine(text), 100u) << path << "\n" << text;
  }
}

TEST(TextWriter, ColoursOnlyByAddingEscapeCodes) {
  for (const auto& [path, report] : RecordedReports()) {
    const std::string plain = WriteText(report);
    const std::string coloured = WriteColoured(report);
    EXPECT_EQ(plain.find('\x1b'), std::string::npos) << path;
    EXPECT_THAT(coloured, HasSubstr("\x1b[1mgpuidle: why the GPU was idle\x1b[0m")) << path;
    EXPECT_EQ(StripEscapes(coloured), plain) << path;
    EXPECT_LE(WidestLine(coloured), 100u) << path;
  }
}

TEST(TextWriter, ColoursTheCausesByTheTracePalette) {
  const std::string text = WriteColoured(SampleReport());
  EXPECT_THAT(text, HasSubstr("\x1b[33msync_bound\x1b[0m"));
  EXPECT_THAT(text, HasSubstr("\x1b[31mdata_starved\x1b[0m"));
  EXPECT_THAT(text, HasSubstr("\x1b[2munattributed\x1b[0m"));
  EXPECT_THAT(text, HasSubstr("\x1b[33msync_bound.host_sync\x1b[0m"));      // offenders, advice
  EXPECT_THAT(text, HasSubstr("\x1b[1mrank 0 GPU 0  NVIDIA H200\x1b[0m"));  // the headline
  // Waiting for peers has its own colour (magenta), in the headline and the table alike.
  EXPECT_THAT(text, HasSubstr("\x1b[35mwaiting for peers 3.0%\x1b[0m"));
  EXPECT_THAT(text, HasSubstr("\x1b[35mcomm_wait 3.0\x1b[0m"));
}

TEST(TextWriter, SaysNothingIsWorthFixingWithTheFigureInsteadOfAdvice) {
  Report r = PhasedReport();
  r.advice.clear();
  r.verdict = Verdict{false, 952'000, 160 * kMs, 0.05};
  const std::string text = WriteText(r);
  EXPECT_THAT(Unwrapped(text),
              HasSubstr("\nwhat to do\n  nothing worth fixing here: the GPU lost 0.6% of the "
                        "steady state (952 us of 160 ms, idle or waiting for peers), below the "
                        "5.0% that advice starts at\n"));
  r.verdict->worth_fixing = true;
  EXPECT_THAT(WriteText(r), Not(HasSubstr("nothing worth fixing")));
}

// A report whose every string is as long and as wide as a hostile or unlucky trace makes it.
Report HostileReport() {
  Report r = SampleReport();
  const std::string wide = "\xe6\x95\xb0\xe6\x8d\xae";  // 2 CJK characters, 4 columns
  std::string wide_name;
  for (int i = 0; i < 60; ++i) wide_name += wide;
  r.source = std::string(150, 'S');
  r.inputs = {"/data/" + std::string(300, 'd') + "/rank0.trace.json.gz", wide_name + ".json"};
  r.devices[0].name = "NVIDIA " + std::string(120, 'N');
  r.devices[1].name = wide_name;
  r.step_source = std::string(140, 'P');
  r.steps[0].name = wide_name;
  r.warnings = {std::string(400, 'w'), "a warning of many words " + std::string(50, 'x') +
                                           " and then some more words to wrap them over lines"};
  r.offenders[0].site = "/home/user/" + std::string(250, 'f') + "/train.py:1234";
  Offender kernel;
  kernel.subcause = Subcause::kLaunchOverhead;
  kernel.what = "void at::native::" + std::string(300, 'k') + "<float>(float*, int)";
  kernel.idle_ns = kMs;
  kernel.count = 7;
  r.offenders.push_back(kernel);
  r.advice[0].fix = "";
  for (int i = 0; i < 40; ++i) r.advice[0].fix += "fix" + std::to_string(i) + " ";
  r.advice[0].fix += std::string(180, 'z');
  OneOffTime o;
  o.kind = OneOffKind::kCompilation;
  o.phase = Phase::kStartUp;
  o.ns = 2 * kMs;
  o.evidence = std::string(200, 'e');
  r.devices[0].one_off.push_back(o);
  r.devices[0].steady_start_ns = 2 * kMs;
  r.devices[0].window_start_ns = 0;
  RankReport k0, k1;
  k0.rank = 0;
  k0.host = wide_name;
  k1.rank = 1;
  k1.host = std::string(100, 'h');
  r.ranks = {k0, k1};
  r.clock.method = std::string(200, 'c');
  return r;
}

TEST(TextWriter, FitsHostileLongNamesIn100Columns) {
  const Report r = HostileReport();
  const std::string text = WriteText(r);
  EXPECT_LE(WidestLine(text), 100u) << text;
  // Middle elision keeps the ends that say most: the file:line of a site, a path's file name.
  EXPECT_THAT(text, HasSubstr("/train.py:1234 -> cudaStreamSynchronize\n"));
  EXPECT_THAT(text, HasSubstr("/rank0.trace.json.gz"));
  EXPECT_THAT(text, HasSubstr("<float>"));
  // Wrapped, not cut: every word of the advice is there.
  for (int i = 0; i < 40; ++i) {
    EXPECT_THAT(Unwrapped(text), HasSubstr("fix" + std::to_string(i) + " "));
  }
  EXPECT_THAT(Unwrapped(text), HasSubstr("and then some more words to wrap them over lines"));
  // Colour changes nothing else here either.
  EXPECT_EQ(StripEscapes(WriteColoured(r)), text);
  EXPECT_LE(WidestLine(WriteColoured(r)), 100u);
}

TEST(TextWriter, AlignsTableCellsOfWideCharactersByColumns) {
  Report r = SampleReport();
  r.steps[0].name = "\xe6\x95\xb0\xe6\x8d\xae";  // 4 columns in 6 bytes
  StepReport plain = r.steps[0];
  plain.name = "plain";
  plain.start_ns = 50 * kMs;
  plain.end_ns = 100 * kMs;
  r.steps.push_back(plain);
  const std::string text = WriteText(r);
  const std::string wide_row = LineWith(text, "\xe6\x95\xb0");
  const std::string plain_row = LineWith(text, "  plain ");
  ASSERT_FALSE(wide_row.empty());
  ASSERT_FALSE(plain_row.empty());
  EXPECT_EQ(DisplayWidth(wide_row.substr(0, wide_row.find(" 50.0"))),
            DisplayWidth(plain_row.substr(0, plain_row.find(" 50.0"))));
}

TEST(WriterForFormat, GivesAWriterForEachFormat) {
  EXPECT_TRUE(WriterForFormat("text").ok());
  EXPECT_TRUE(WriterForFormat("txt").ok());
  EXPECT_TRUE(WriterForFormat("json").ok());
  const Report r = SampleReport();
  EXPECT_THAT((*WriterForFormat("json"))->Write(r), HasSubstr("\"schema\": \"gpuidle.report/2\""));
  EXPECT_THAT((*WriterForFormat("text"))->Write(r), StartsWith("gpuidle: why the GPUs were idle"));
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
