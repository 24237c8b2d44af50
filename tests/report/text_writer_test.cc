#include <cstdint>
#include <string>
#include <vector>

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

std::string WriteText(const Report& r) { return MakeTextWriter()->Write(r, AnalysisOptions()); }

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
  EXPECT_THAT(text, HasSubstr("window: 100.0 ms   records: the source does not report lost "
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
  EXPECT_THAT(text, HasSubstr("\nrank 0 GPU 0  NVIDIA H200  busy 60.0%  idle 40.0% "
                              "(40.0 ms of 100.0 ms)\n"));
  EXPECT_THAT(text, HasSubstr("\nrank 1 GPU 1  NVIDIA H200  busy 90.0%  idle 10.0% "
                              "(10.0 ms of 100.0 ms)\n"));
}

TEST(TextWriter, LabelsADeviceWithoutRankOrName) {
  Report r;
  DeviceReport d = Device0();
  d.rank.reset();
  d.name.clear();
  d.device = 3;
  r.devices.push_back(d);
  EXPECT_THAT(WriteText(r), HasSubstr("\nGPU 3  busy 60.0%  idle 40.0% (40.0 ms of 100.0 ms)\n"));
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
  EXPECT_THAT(text, HasSubstr("GPU 0  busy 52.5%  idle 47.5% (0.2 ms of 0.4 ms)\n"));
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
  EXPECT_THAT((*WriterForFormat("json"))->Write(r, AnalysisOptions()),
              HasSubstr("\"schema\": \"gpuidle.report/1\""));
  EXPECT_THAT((*WriterForFormat("text"))->Write(r, AnalysisOptions()),
              StartsWith("gpuidle: why the GPU was idle"));
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
  EXPECT_EQ(FormatForPath("report.json.gz"), "text");
  EXPECT_EQ(FormatForPath("out.json/report"), "text");
  EXPECT_EQ(FormatForPath(""), "text");
}

}  // namespace
}  // namespace gpuidle::internal
