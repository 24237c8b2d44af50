// The gpuidle trace writer, tested by parsing what it wrote (the round trip through the reader
// is tests/ingest/trace_round_trip_test.cc).
#include "report/trace_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "analysis/analyze.h"
#include "core/output_file.h"
#include "core/version.h"
#include "gmock/gmock.h"
#include "gpuidle/analyze.h"
#include "gpuidle/options.h"
#include "gpuidle/report.h"
#include "gtest/gtest.h"
#include "ingest/read_trace.h"
#include "rapidjson/document.h"
#include "testing/json.h"
#include "testing/random_timeline.h"
#include "testing/temp_dir.h"
#include "testing/timeline_builder.h"
#include "testing/trace_with_gaps.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::ReadFileOrDie;
using ::gpuidle::testing::TempDir;
using ::gpuidle::testing::TimelineBuilder;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

using ::gpuidle::testing::Parse;
using ::gpuidle::testing::Str;

// The trace events of category cat (or metadata events named cat, for "M").
std::vector<const rapidjson::Value*> Events(const rapidjson::Document& doc, absl::string_view ph,
                                            absl::string_view cat) {
  std::vector<const rapidjson::Value*> out;
  for (const rapidjson::Value& e : doc["traceEvents"].GetArray()) {
    if (Str(e["ph"]) != ph) continue;
    const char* key = ph == "M" ? "name" : "cat";
    if (e.HasMember(key) && Str(e[key]) == cat) out.push_back(&e);
  }
  return out;
}

// A two-GPU process: kernels, a pageable copy, a memset, a cross-stream wait, steps, data.
Timeline SampleTimeline() {
  Timeline t = TimelineBuilder()
                   .Device(0)
                   .Stream(7)
                   .Step(4242, 0, 200, "ProfilerStep#1")
                   .Data(4242, 1, 9)
                   .Launch(4242, 10, 12)
                   .Kernel(20, 60, "gemm")
                   .CopyCall(4242, 13, 14)
                   .Copy(70, 90, CopyKind::kHtoD, /*pageable=*/true)
                   .Launch(4242, 15, 16, "cudaMemsetAsync")
                   .Memset(100, 101)
                   .WaitEvent(4242, 17, 18, /*stream=*/13, /*waited_stream=*/7)
                   .Device(1)
                   .Stream(13)
                   .Launch(4243, 20, 21)
                   .Kernel(150, 160, "late")
                   .Range(4243, 30, 40, RangeKind::kStep, "gpuidle step 1")
                   .Op(4243, 31, 39, "aten::mm")
                   .Range(4243, 32, 33, RangeKind::kPython, "train.py(3): f")
                   .Build();
  // Names as CUPTI gives them, so the copy's kind and memory travel in its name.
  t.devices[0].ops[1].name = t.strings.Intern("Memcpy HtoD (Pageable -> Device)");
  t.devices[0].name = t.devices[1].name = "NVIDIA H200";
  t.info.visible_devices = {0, 1};
  t.info.visible_device_names = {"NVIDIA H200", "NVIDIA H200"};
  t.info.pid = 31337;
  t.info.host = "node-17";
  t.info.rank = 1;
  t.info.world_size = 2;
  t.info.dropped_records = 0;
  t.info.zero_timestamp_records = 4;
  t.info.wall_clock_offset_ns = 1764500000000000000;
  return t;
}

TEST(TraceWriter, WritesJsonWithTheDocumentedTopLevelKeys) {
  const rapidjson::Document doc = Parse(FormatGpuidleTrace(SampleTimeline()));
  ASSERT_TRUE(doc.IsObject());
  EXPECT_EQ(doc["schemaVersion"].GetInt(), 1);
  const rapidjson::Value& g = doc["gpuidle"];
  EXPECT_EQ(Str(g["format"]), "gpuidle.trace/2");
  EXPECT_EQ(Str(g["version"]), kVersion);
  EXPECT_EQ(g["pid"].GetInt64(), 31337);
  EXPECT_EQ(Str(g["host"]), "node-17");
  EXPECT_EQ(g["rank"].GetInt(), 1);
  EXPECT_EQ(g["world_size"].GetInt(), 2);
  EXPECT_EQ(g["dropped_records"].GetUint64(), 0u);
  EXPECT_EQ(g["zero_timestamp_records"].GetUint64(), 4u);
  EXPECT_FALSE(g["record_limit_reached"].GetBool());
  EXPECT_EQ(g["wall_clock_offset_ns"].GetInt64(), 1764500000000000000);
  ASSERT_EQ(doc["deviceProperties"].Size(), 2u);
  EXPECT_EQ(doc["deviceProperties"][1]["id"].GetInt(), 1);
  EXPECT_EQ(Str(doc["deviceProperties"][1]["name"]), "NVIDIA H200");
  EXPECT_EQ(doc["distributedInfo"]["rank"].GetInt(), 1);
  EXPECT_EQ(doc["distributedInfo"]["world_size"].GetInt(), 2);
  EXPECT_TRUE(doc["baseTimeNanoseconds"].IsInt64());
  EXPECT_TRUE(doc["traceEvents"].IsArray());
}

TEST(TraceWriter, WritesNullForInfoTheTimelineDoesNotHave) {
  const rapidjson::Document doc = Parse(FormatGpuidleTrace(TimelineBuilder().Kernel(0, 1).Build()));
  const rapidjson::Value& g = doc["gpuidle"];
  for (const char* key : {"pid", "rank", "world_size", "dropped_records", "wall_clock_offset_ns"}) {
    EXPECT_TRUE(g[key].IsNull()) << key;
  }
  EXPECT_FALSE(doc.HasMember("distributedInfo"));
  EXPECT_EQ(doc["deviceProperties"].Size(), 0u);
}

TEST(TraceWriter, TimeStampsAreMicrosecondsWithThreeDecimalsAfterABaseJustBeforeTheFirst) {
  Timeline t = SampleTimeline();
  const std::string text = FormatGpuidleTrace(t);
  const rapidjson::Document doc = Parse(text);
  // The builder's first event (the step) starts at 0 ns; the base is 1 us before it.
  EXPECT_EQ(doc["baseTimeNanoseconds"].GetInt64(), -1000);
  const std::regex ts(R"re("(ts|dur)":([0-9]+\.[0-9]{3})?)re");
  int times = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), ts), end; it != end; ++it) {
    EXPECT_TRUE((*it)[2].matched) << "not three decimals: " << it->str();
    ++times;
  }
  // ts and dur of every op, call and range; ts of every flow arrow's two ends.
  const size_t flows = Events(doc, "s", "ac2g").size() + Events(doc, "f", "ac2g").size();
  EXPECT_GT(flows, 0u);
  EXPECT_EQ(times, 2 * 14 + static_cast<int>(flows));
  const rapidjson::Value& kernel = *Events(doc, "X", "kernel")[0];
  EXPECT_EQ(Str(kernel["name"]), "gemm");
  EXPECT_THAT(text, HasSubstr(R"("name":"gemm","pid":0,"tid":7,"ts":21.000,"dur":40.000)"));
}

TEST(TraceWriter, DeviceWorkIsOnItsDeviceAndStreamAsInKinetoTraces) {
  const rapidjson::Document doc = Parse(FormatGpuidleTrace(SampleTimeline()));
  const std::vector<const rapidjson::Value*> kernels = Events(doc, "X", "kernel");
  ASSERT_EQ(kernels.size(), 2u);
  const rapidjson::Value& late = *kernels[1];
  EXPECT_EQ(Str(late["name"]), "late");
  EXPECT_EQ(late["pid"].GetInt(), 1);
  EXPECT_EQ(late["tid"].GetInt(), 13);
  EXPECT_EQ(late["args"]["device"].GetInt(), 1);
  EXPECT_EQ(late["args"]["stream"].GetInt(), 13);
  EXPECT_GT(late["args"]["correlation"].GetUint64(), 0u);

  const std::vector<const rapidjson::Value*> copies = Events(doc, "X", "gpu_memcpy");
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(Str((*copies[0])["name"]), "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ((*copies[0])["args"]["bytes"].GetUint64(), 1u << 20);
  // The name says HtoD and pageable: nothing to override.
  EXPECT_FALSE((*copies[0])["args"].HasMember("gpuidle_copy_kind"));
  EXPECT_FALSE((*copies[0])["args"].HasMember("gpuidle_pageable"));

  const std::vector<const rapidjson::Value*> memsets = Events(doc, "X", "gpu_memset");
  ASSERT_EQ(memsets.size(), 1u);
  EXPECT_EQ((*memsets[0])["args"]["bytes"].GetUint64(), 4096u);
}

TEST(TraceWriter, OverridesWhatANameImpliesOnlyWhereTheModelSaysOtherwise) {
  Timeline t = TimelineBuilder()
                   .Copy(0, 1, CopyKind::kDtoH, /*pageable=*/true)  // named just "Memcpy"
                   .Kernel(2, 3, "allreduce_custom")
                   .Build();
  t.devices[0].ops[1].communication = true;
  const rapidjson::Document doc = Parse(FormatGpuidleTrace(t));
  const rapidjson::Value& copy = (*Events(doc, "X", "gpu_memcpy")[0])["args"];
  EXPECT_EQ(Str(copy["gpuidle_copy_kind"]), "DtoH");
  EXPECT_TRUE(copy["gpuidle_pageable"].GetBool());
  EXPECT_TRUE((*Events(doc, "X", "kernel")[0])["args"]["gpuidle_communication"].GetBool());
}

TEST(TraceWriter, HostCallsCarryCorrelationStreamsAndCategory) {
  Timeline t = SampleTimeline();
  t.calls[0].category = CallCategory::kOther;  // "cudaLaunchKernel" says launch
  const rapidjson::Document doc = Parse(FormatGpuidleTrace(t));
  const std::vector<const rapidjson::Value*> calls = Events(doc, "X", "cuda_runtime");
  ASSERT_EQ(calls.size(), 5u);
  EXPECT_EQ((*calls[0])["pid"].GetInt64(), 31337);
  EXPECT_EQ((*calls[0])["tid"].GetUint64(), 4242u);
  EXPECT_EQ(Str((*calls[0])["args"]["gpuidle_category"]), "other");
  for (const rapidjson::Value* c : calls) {
    EXPECT_GT((*c)["args"]["correlation"].GetUint64(), 0u);
    if (Str((*c)["name"]) == "cudaStreamWaitEvent") {
      EXPECT_EQ((*c)["args"]["stream"].GetInt(), 13);
      EXPECT_EQ((*c)["args"]["wait_on_stream"].GetInt(), 7);
      EXPECT_FALSE((*c)["args"].HasMember("gpuidle_category"));
    }
  }
}

TEST(TraceWriter, RangesUseKinetoCategoriesAndNameTheirKindWhereTheNameDoesNot) {
  const rapidjson::Document doc = Parse(FormatGpuidleTrace(SampleTimeline()));
  std::vector<std::string> annotations;
  for (const rapidjson::Value* e : Events(doc, "X", "user_annotation")) {
    const rapidjson::Value& args = (*e)["args"];
    annotations.push_back(Str((*e)["name"]) + "=" +
                          (args.IsObject() && args.HasMember("gpuidle_kind")
                               ? Str(args["gpuidle_kind"])
                               : "by name"));
  }
  EXPECT_THAT(annotations, UnorderedElementsAre("ProfilerStep#1=by name",
                                                "enumerate(DataLoader)#__next__=by name",
                                                "gpuidle step 1=step"));
  ASSERT_EQ(Events(doc, "X", "cpu_op").size(), 1u);
  ASSERT_EQ(Events(doc, "X", "python_function").size(), 1u);
  EXPECT_EQ(Str((*Events(doc, "X", "python_function")[0])["name"]), "train.py(3): f");
}

TEST(TraceWriter, NamesTracksForPerfetto) {
  const rapidjson::Document doc = Parse(FormatGpuidleTrace(SampleTimeline()));
  std::vector<std::string> processes, threads;
  for (const rapidjson::Value* e : Events(doc, "M", "process_name")) {
    processes.push_back(Str((*e)["args"]["name"]));
  }
  for (const rapidjson::Value* e : Events(doc, "M", "thread_name")) {
    threads.push_back(Str((*e)["args"]["name"]));
  }
  EXPECT_THAT(processes, ElementsAre("GPU 0 (NVIDIA H200) rank 1", "GPU 1 (NVIDIA H200) rank 1",
                                     "host node-17 rank 1"));
  EXPECT_THAT(threads, ElementsAre("stream 7", "stream 13", "thread 4242", "thread 4243"));
}

TEST(TraceWriter, HostProcessNeverSharesAnIdWithADevice) {
  Timeline t = TimelineBuilder().Launch(1, 0, 1).Kernel(1, 2).Build();
  t.info.pid = 0;  // as device 0's track
  const rapidjson::Document doc = Parse(FormatGpuidleTrace(t));
  EXPECT_EQ((*Events(doc, "X", "kernel")[0])["pid"].GetInt(), 0);
  EXPECT_NE((*Events(doc, "X", "cuda_runtime")[0])["pid"].GetInt(), 0);
  // The process id itself is kept in the metadata.
  EXPECT_EQ(doc["gpuidle"]["pid"].GetInt(), 0);
}

TEST(TraceWriter, DrawsThreadIdsBeyond32BitsUnderStandInTidsAndKeepsTheRealOne) {
  constexpr uint64_t kPthread = 139872651118400ull;  // what pthread_self() gives
  const Timeline t = TimelineBuilder()
                         .Launch(kPthread, 0, 1)
                         .Kernel(1, 2)
                         .Op(kPthread, 0, 2, "aten::mm")
                         .Launch(77, 3, 4)
                         .Build();
  const rapidjson::Document doc = Parse(FormatGpuidleTrace(t));
  const std::vector<const rapidjson::Value*> calls = Events(doc, "X", "cuda_runtime");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ((*calls[0])["tid"].GetUint64(), 0xf0000000u);
  EXPECT_EQ((*calls[0])["args"]["gpuidle_thread"].GetUint64(), kPthread);
  EXPECT_EQ((*calls[1])["tid"].GetUint64(), 77u);
  EXPECT_FALSE((*calls[1])["args"].HasMember("gpuidle_thread"));
  const rapidjson::Value& op = *Events(doc, "X", "cpu_op")[0];
  EXPECT_EQ(op["tid"].GetUint64(), 0xf0000000u);
  EXPECT_EQ(op["args"]["gpuidle_thread"].GetUint64(), kPthread);
  bool named = false;
  for (const rapidjson::Value* e : Events(doc, "M", "thread_name")) {
    if ((*e)["tid"].GetUint64() == 0xf0000000u) {
      named = true;
      EXPECT_EQ(Str((*e)["args"]["name"]), "thread 139872651118400");
    }
  }
  EXPECT_TRUE(named);
}

// One device, many gaps of every length: a thread that launches 120 kernels, some after a data
// wait, some after a sync, some after long host work; gaps from 2 us to 1.2 ms.
Timeline ManyGapsTimeline() {
  TimelineBuilder b;
  b.Device(0).Stream(7).Visible(0);
  double t = 0;
  for (int i = 0; i < 120; ++i) {
    const double gap = 2 + 10.0 * (i % 120);  // all lengths distinct
    if (i % 3 == 0) b.Data(4242, t, t + gap - 1);
    if (i % 3 == 1) b.Sync(4242, t, t + 1);
    b.Launch(4242, t + gap - 1, t + gap - 0.5).Kernel(t + gap, t + gap + 20, "k");
    t += gap + 20;
  }
  Timeline timeline = b.Build();
  timeline.info.rank = 0;
  return timeline;
}

// The slices of the idle-cause tracks.
// The idle-cause slices: gpuidle_gap slices on the idle-cause tracks (the waiting tracks' are
// WaitSlices).
std::vector<const rapidjson::Value*> GapSlices(const rapidjson::Document& doc) {
  std::vector<const rapidjson::Value*> out;
  for (const rapidjson::Value* e : Events(doc, "X", "gpuidle_gap")) {
    if ((*e)["tid"].GetUint64() == 4294967294u) out.push_back(e);
  }
  return out;
}

// The slices of the waiting-for-peers tracks.
std::vector<const rapidjson::Value*> WaitSlices(const rapidjson::Document& doc) {
  std::vector<const rapidjson::Value*> out;
  for (const rapidjson::Value* e : Events(doc, "X", "gpuidle_gap")) {
    if ((*e)["tid"].GetUint64() == 4294967293u) out.push_back(e);
  }
  return out;
}

// A slice's (or instant's) time in ns from its "ts"/"dur" text (three decimals, exact).
int64_t Nanos(const rapidjson::Value& v) { return std::llround(v.GetDouble() * 1000); }

TEST(TraceWriter, DrawsEveryGapOfTheAnalysisNotOnlyTheReportsLongest) {
  const Timeline t = ManyGapsTimeline();
  absl::StatusOr<Report> report = Analyze(t, AnalysisOptions());
  ASSERT_TRUE(report.ok()) << report.status();
  absl::StatusOr<GapList> all = ListGaps(t, report->options, 1'000'000);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_GT(all->gaps.size(), report->longest_gaps.size());  // the report keeps 50
  const rapidjson::Document doc = Parse(FormatTraceWithGaps(t, &*report));
  const std::vector<const rapidjson::Value*> slices = GapSlices(doc);
  ASSERT_EQ(slices.size(), all->gaps.size());
  for (size_t i = 0; i < slices.size(); ++i) {
    const rapidjson::Value& g = *slices[i];
    const GapRecord& want = all->gaps[i];  // by device, then start: the order written
    EXPECT_EQ(Str(g["name"]), QualifiedSubcauseName(want.subcause));
    EXPECT_EQ(g["pid"].GetInt(), want.device);
    EXPECT_EQ(g["tid"].GetUint64(), 0xfffffffeu);
    EXPECT_EQ(doc["baseTimeNanoseconds"].GetInt64() + Nanos(g["ts"]), want.start_ns);
    EXPECT_EQ(Nanos(g["dur"]), want.end_ns - want.start_ns);
    const rapidjson::Value& args = g["args"];
    EXPECT_EQ(Str(args["cause"]), CauseName(CauseOf(want.subcause)));
    EXPECT_EQ(Str(args["evidence"]), want.evidence);
    EXPECT_EQ(Str(args["next_op"]), want.next_op);
    EXPECT_EQ(Str(args["call_site"]), want.call_site);
    if (want.thread != 0) {
      EXPECT_EQ(args["thread"].GetUint64(), want.thread);
    }
  }
  // The report's own longest gaps are among them, evidence and all.
  for (const GapRecord& longest : report->longest_gaps) {
    const int64_t ts = longest.start_ns - doc["baseTimeNanoseconds"].GetInt64();
    EXPECT_TRUE(std::any_of(slices.begin(), slices.end(), [&](const rapidjson::Value* g) {
      return Nanos((*g)["ts"]) == ts && Str((*g)["args"]["evidence"]) == longest.evidence;
    })) << longest.start_ns;
  }
}

TEST(TraceWriter, GapSlicesTileEachDevicesIdleTimeByCauseWithoutOverlap) {
  Timeline t = SampleTimeline();
  absl::StatusOr<Report> report = Analyze(t, AnalysisOptions());
  ASSERT_TRUE(report.ok()) << report.status();
  const rapidjson::Document doc = Parse(FormatTraceWithGaps(t, &*report));
  std::map<int, std::vector<std::pair<int64_t, int64_t>>> spans;
  std::map<int, IdleBreakdown> idle;
  for (const rapidjson::Value* g : GapSlices(doc)) {
    const int device = (*g)["pid"].GetInt();
    const int64_t ts = Nanos((*g)["ts"]), dur = Nanos((*g)["dur"]);
    spans[device].emplace_back(ts, ts + dur);
    const std::optional<Subcause> s = ParseSubcause(Str((*g)["name"]));
    ASSERT_TRUE(s.has_value()) << Str((*g)["name"]);
    idle[device][*s] += dur;
  }
  ASSERT_EQ(report->devices.size(), 2u);
  for (const DeviceReport& d : report->devices) {
    SCOPED_TRACE(d.device);
    ASSERT_GT(d.idle_ns, 0);
    std::vector<std::pair<int64_t, int64_t>>& s = spans[d.device];
    std::sort(s.begin(), s.end());
    for (size_t i = 1; i < s.size(); ++i) EXPECT_LE(s[i - 1].second, s[i].first);
    for (int c = 0; c < kNumSubcauses; ++c) {
      EXPECT_EQ(idle[d.device][static_cast<Subcause>(c)], d.idle[static_cast<Subcause>(c)])
          << QualifiedSubcauseName(static_cast<Subcause>(c));
    }
  }
}

// catapult's reserved colours (tracing/base/color_scheme.html) as RGB, for the family test.
struct Rgb {
  int r, g, b;
};
const std::map<std::string, Rgb>& ReservedColours() {
  static const auto* colours = new std::map<std::string, Rgb>{
      {"terrible", {180, 0, 0}},
      {"rail_animation", {244, 74, 63}},
      {"cq_build_failed", {238, 136, 136}},
      {"bad", {180, 125, 0}},
      {"rail_response", {67, 135, 253}},
      {"thread_state_runnable", {133, 160, 210}},
      {"light_memory_dump", {0, 0, 180}},
      {"yellow", {255, 255, 0}},
      {"olive", {100, 100, 0}},
      {"startup", {230, 230, 0}},
      {"cq_build_running", {255, 255, 119}},
      {"cq_build_attempt_runnig", {222, 222, 75}},
      {"rail_idle", {238, 142, 0}},
      {"grey", {221, 221, 221}},
      {"generic_work", {125, 125, 125}},
      {"detailed_memory_dump", {180, 0, 180}},
  };
  return *colours;
}

// A report whose analysis cannot be repeated on the timeline (it asked to skip more steps than
// the timeline has): the writer draws the report's own gaps.
Report ReportWithEverySubcause(const Timeline& t) {
  Report report;
  report.options.skip_steps = 1000;
  for (int s = 0; s < kNumSubcauses; ++s) {
    GapRecord g;
    g.rank = t.info.rank;
    g.start_ns = 10 * s;
    g.end_ns = 10 * s + 5;
    g.subcause = static_cast<Subcause>(s);
    g.evidence = absl::StrCat("evidence ", s);
    report.longest_gaps.push_back(g);
  }
  return report;
}

TEST(TraceWriter, ColoursEachSubcauseApartWithinItsCausesFamily) {
  const Timeline t = TimelineBuilder().Kernel(0, 1).Build();
  const Report report = ReportWithEverySubcause(t);
  const rapidjson::Document doc = Parse(FormatTraceWithGaps(t, &report));
  std::set<std::string> colours;
  for (const rapidjson::Value* g : GapSlices(doc)) {
    const std::string colour = Str((*g)["cname"]);
    colours.insert(colour);
    const auto rgb = ReservedColours().find(colour);
    ASSERT_NE(rgb, ReservedColours().end()) << colour << " is no reserved colour name";
    const auto [r, gr, b] = std::tuple(rgb->second.r, rgb->second.g, rgb->second.b);
    if (*ParseSubcause(Str((*g)["name"])) == Subcause::kCommWait) {
      // Waiting for peers: its own colour, magenta (red and blue alike, little green), wherever
      // it is drawn (the HTML page and the terminal too).
      EXPECT_EQ(colour, "detailed_memory_dump");
      EXPECT_TRUE(r == b && r > gr + 100) << colour;
      continue;
    }
    switch (CauseOf(*ParseSubcause(Str((*g)["name"])))) {
      case Cause::kDataStarved:  // red
        EXPECT_TRUE(r > gr + 60 && r > b + 60) << colour;
        break;
      case Cause::kLaunchBound:  // blue
        EXPECT_TRUE(b > r + 40 && b > gr + 40) << colour;
        break;
      case Cause::kSyncBound:  // yellow to amber: red and green well above blue
        EXPECT_TRUE(std::abs(r - gr) < 60 && r > b + 60 && gr > b + 60) << colour;
        break;
      case Cause::kUnattributed:  // grey
        EXPECT_TRUE(r == gr && gr == b) << colour;
        break;
    }
  }
  EXPECT_EQ(colours.size(), static_cast<size_t>(kNumSubcauses));
}

// Rank 0 of a two-rank job: a kernel, then two collectives; the job's report (a merge of ranks)
// knows the device's wait for peers and its kinds', and lists the first collective only (the
// trace names neither's kind, and the device has two).
Timeline TwoCollectivesTimeline() {
  Timeline t =
      TimelineBuilder().Rank(0).Kernel(0, 50).NcclKernel(100, 200).NcclKernel(300, 400).Build();
  t.info.world_size = 2;
  return t;
}

Report JobReportOf(const Timeline& t) {
  constexpr int64_t kUs = 1000;
  Report report;
  DeviceReport& d = report.devices.emplace_back();
  d.rank = 0;
  d.device = 0;
  d.steady_start_ns = 0;
  d.steady_end_ns = d.window_end_ns = d.window_ns = 1000 * kUs;
  d.busy_ns = d.comm_ns = 200 * kUs;
  d.comm_wait_ns = 150 * kUs;  // the device's share: 3/4 of its collectives
  CollectiveStats& kind = d.collectives.emplace_back();
  kind.op = "allreduce";
  kind.count = 2;
  kind.ns = 200 * kUs;
  kind.wait_ns = 100 * kUs;                               // the kind's share: 1/2
  CollectiveStats& other = d.collectives.emplace_back();  // a second kind, of no kernel here
  other.op = "broadcast";
  other.count = 1;
  other.ns = 50 * kUs;
  other.wait_ns = 0;
  const DeviceOp& first = t.devices[0].ops[1];
  d.collective_timings.push_back({first.start_ns, first.end_ns, -1, -1, 0});
  d.collectives_not_listed = 1;
  return report;
}

TEST(TraceWriter, DrawsEachCollectivesWaitForPeersInTheWaitingColour) {
  const Timeline t = TwoCollectivesTimeline();
  const Report report = JobReportOf(t);
  const rapidjson::Document doc = Parse(FormatGpuidleTrace(t, &report, nullptr));
  const std::vector<const rapidjson::Value*> waits = WaitSlices(doc);
  ASSERT_EQ(waits.size(), 2u);
  for (const rapidjson::Value* w : waits) {
    EXPECT_EQ(Str((*w)["name"]), "sync_bound.comm_wait");
    EXPECT_EQ(Str((*w)["cname"]), "detailed_memory_dump");  // magenta: waiting, not yellow
    EXPECT_EQ(Str((*w)["args"]["cause"]), "sync_bound");
    EXPECT_EQ((*w)["pid"].GetInt(), 0);
  }
  const int64_t base = doc["baseTimeNanoseconds"].GetInt64();
  // The listed collective waits for its kind's share (1/2), from its start; the other one, not
  // listed, for the device's (3/4).
  EXPECT_EQ(base + Nanos((*waits[0])["ts"]), 100'000);
  EXPECT_EQ(Nanos((*waits[0])["dur"]), 50'000);
  EXPECT_EQ(Str((*waits[0])["args"]["estimate"]), "its kind's share of waiting");
  EXPECT_EQ(base + Nanos((*waits[1])["ts"]), 300'000);
  EXPECT_EQ(Nanos((*waits[1])["dur"]), 75'000);
  EXPECT_EQ(Str((*waits[1])["args"]["estimate"]), "the device's share of waiting");
  EXPECT_THAT(Str((*waits[0])["args"]["collective"]), HasSubstr("nccl"));
  // The track is named and sorted above the streams; the gpuidle object counts what it holds.
  bool named = false;
  for (const rapidjson::Value* m : Events(doc, "M", "thread_name")) {
    if ((*m)["tid"].GetUint64() == 4294967293u) {
      named = true;
      EXPECT_EQ(Str((*m)["args"]["name"]), "gpuidle: waiting for peers (estimated)");
    }
  }
  EXPECT_TRUE(named);
  const rapidjson::Value& summary = doc["gpuidle"]["waiting"]["devices"][0];
  EXPECT_EQ(summary["comm_wait_ns"].GetInt64(), 150'000);
  EXPECT_EQ(summary["drawn"].GetInt64(), 2);
  EXPECT_EQ(summary["drawn_ns"].GetInt64(), 125'000);
  // Idle gaps are not on that track: the idle-cause track holds no waiting.
  EXPECT_THAT(GapSlices(doc), IsEmpty());
}

TEST(TraceWriter, DrawsNoWaitingWhereTheReportDoesNotKnowIt) {
  const Timeline t = TwoCollectivesTimeline();
  Report unknown = JobReportOf(t);
  unknown.devices[0].comm_wait_ns.reset();  // one rank's own report: waits need all ranks
  Report other_rank = JobReportOf(t);
  other_rank.devices[0].rank = 1;  // another rank's device
  for (const Report* r : {&unknown, &other_rank}) {
    const std::string text = FormatGpuidleTrace(t, r, nullptr);
    const rapidjson::Document doc = Parse(text);
    EXPECT_THAT(WaitSlices(doc), IsEmpty());
    EXPECT_FALSE(doc["gpuidle"].HasMember("waiting"));
    EXPECT_THAT(text, ::testing::Not(HasSubstr("waiting for peers")));
  }
}

TEST(TraceWriter, DrawsTheReportsOwnGapsWhenTheAnalysisCannotBeRepeated) {
  Timeline t = SampleTimeline();  // rank 1
  Report report = ReportWithEverySubcause(t);
  report.longest_gaps[0].rank = 0;  // another rank's: left out
  const rapidjson::Document doc = Parse(FormatTraceWithGaps(t, &report));
  const std::vector<const rapidjson::Value*> slices = GapSlices(doc);
  ASSERT_EQ(slices.size(), static_cast<size_t>(kNumSubcauses - 1));
  EXPECT_EQ(Str((*slices[0])["args"]["evidence"]), "evidence 1");
  const rapidjson::Value& gaps = doc["gpuidle"]["gaps"];
  EXPECT_EQ(Str(gaps["source"]), "report");
  EXPECT_EQ(gaps["drawn"].GetInt(), kNumSubcauses - 1);
  EXPECT_EQ(gaps["left_out"].GetInt(), 0);
}

TEST(TraceWriter, NamesTheIdleCauseTrackAndSortsItAboveTheStreams) {
  const Timeline t = SampleTimeline();
  absl::StatusOr<Report> report = Analyze(t, AnalysisOptions());
  ASSERT_TRUE(report.ok()) << report.status();
  const rapidjson::Document doc = Parse(FormatTraceWithGaps(t, &*report));
  std::set<int> named, sorted;
  for (const rapidjson::Value* e : Events(doc, "M", "thread_name")) {
    if ((*e)["tid"].GetUint64() != 0xfffffffeu) continue;
    EXPECT_EQ(Str((*e)["args"]["name"]), "gpuidle: idle causes");
    named.insert((*e)["pid"].GetInt());
  }
  for (const rapidjson::Value* e : Events(doc, "M", "thread_sort_index")) {
    if ((*e)["tid"].GetUint64() != 0xfffffffeu) continue;
    EXPECT_LT((*e)["args"]["sort_index"].GetInt(), 0);  // streams sort by their id, >= 0
    sorted.insert((*e)["pid"].GetInt());
  }
  EXPECT_EQ(named, (std::set<int>{0, 1}));
  EXPECT_EQ(sorted, named);
}

TEST(TraceWriter, EveryStreamAndHostThreadIsANamedTrackOfItsProcess) {
  const Timeline t = SampleTimeline();
  const rapidjson::Document doc = Parse(FormatGpuidleTrace(t));
  std::map<std::pair<int64_t, uint64_t>, std::string> names;
  for (const rapidjson::Value* e : Events(doc, "M", "thread_name")) {
    names[{(*e)["pid"].GetInt64(), (*e)["tid"].GetUint64()}] = Str((*e)["args"]["name"]);
  }
  std::set<std::string> tracks_used;
  for (const rapidjson::Value& e : doc["traceEvents"].GetArray()) {
    if (Str(e["ph"]) != "X") continue;
    const auto it = names.find({e["pid"].GetInt64(), e["tid"].GetUint64()});
    ASSERT_NE(it, names.end()) << Str(e["name"]) << " is on a track without a name";
    tracks_used.insert(absl::StrCat(e["pid"].GetInt64(), "/", it->second));
  }
  EXPECT_EQ(tracks_used, (std::set<std::string>{"0/stream 7", "1/stream 13", "31337/thread 4242",
                                                "31337/thread 4243"}));
}

// Every X event of a track, as [start, end) in ns relative to the base.
std::map<std::pair<int64_t, uint64_t>, std::vector<std::pair<int64_t, int64_t>>> Slices(
    const rapidjson::Document& doc) {
  std::map<std::pair<int64_t, uint64_t>, std::vector<std::pair<int64_t, int64_t>>> slices;
  for (const rapidjson::Value& e : doc["traceEvents"].GetArray()) {
    if (Str(e["ph"]) != "X") continue;
    const int64_t ts = Nanos(e["ts"]);
    slices[{e["pid"].GetInt64(), e["tid"].GetUint64()}].emplace_back(ts, ts + Nanos(e["dur"]));
  }
  return slices;
}

TEST(TraceWriter, FlowArrowsPairUpFromEachLaunchToTheGpuWorkItIssued) {
  const Timeline t = SampleTimeline();
  const rapidjson::Document doc = Parse(FormatGpuidleTrace(t));
  const auto slices = Slices(doc);
  // Inside a slice of its own track: what a viewer binds the arrow's end to.
  const auto inside_a_slice = [&](const rapidjson::Value& e) {
    const auto track = slices.find({e["pid"].GetInt64(), e["tid"].GetUint64()});
    if (track == slices.end()) return false;
    const int64_t ts = Nanos(e["ts"]);
    return std::any_of(track->second.begin(), track->second.end(),
                       [ts](const auto& s) { return s.first <= ts && ts <= s.second; });
  };
  std::map<uint64_t, const rapidjson::Value*> starts, ends;
  for (const rapidjson::Value* s : Events(doc, "s", "ac2g")) {
    EXPECT_TRUE(starts.emplace((*s)["id"].GetUint64(), s).second) << "id used twice";
    EXPECT_TRUE(inside_a_slice(*s));
  }
  for (const rapidjson::Value* f : Events(doc, "f", "ac2g")) {
    EXPECT_TRUE(ends.emplace((*f)["id"].GetUint64(), f).second) << "id used twice";
    EXPECT_EQ(Str((*f)["bp"]), "e");
    EXPECT_TRUE(inside_a_slice(*f));
  }
  // One arrow per call that issued an op: from the call's track and start to the op's.
  size_t issued = 0;
  for (const DeviceTimeline& d : t.devices) {
    for (const DeviceOp& op : d.ops) {
      if (op.correlation_id == kNoCorrelation) continue;
      const auto call = std::find_if(t.calls.begin(), t.calls.end(), [&](const HostCall& c) {
        return c.correlation_id == op.correlation_id;
      });
      if (call == t.calls.end()) continue;
      ++issued;
      SCOPED_TRACE(op.correlation_id);
      ASSERT_TRUE(starts.contains(op.correlation_id));
      ASSERT_TRUE(ends.contains(op.correlation_id));
      const rapidjson::Value& s = *starts[op.correlation_id];
      const rapidjson::Value& f = *ends[op.correlation_id];
      EXPECT_EQ(s["tid"].GetUint64(), call->thread);
      EXPECT_EQ(s["pid"].GetInt64(), 31337);
      EXPECT_EQ(doc["baseTimeNanoseconds"].GetInt64() + Nanos(s["ts"]), call->start_ns);
      EXPECT_EQ(f["pid"].GetInt(), d.device);
      EXPECT_EQ(f["tid"].GetUint64(), op.stream);
      EXPECT_EQ(doc["baseTimeNanoseconds"].GetInt64() + Nanos(f["ts"]), op.start_ns);
    }
  }
  EXPECT_EQ(issued, 4u);  // the kernels, the copy and the memset
  EXPECT_EQ(starts.size(), issued);
  EXPECT_EQ(ends.size(), issued);
}

TEST(TraceWriter, AGraphLaunchGetsOneArrowToItsFirstOpAndNoneGoesBackInTime) {
  Timeline t = TimelineBuilder()
                   .Launch(1, 0, 1, "cudaGraphLaunch")
                   .Kernel(2, 3, "node_a")
                   .Kernel(3, 4, "node_b")
                   .Launch(1, 10, 11)
                   .Kernel(5, 6, "before_its_call")  // clocks apart
                   .Build();
  t.devices[0].ops[1].correlation_id = t.devices[0].ops[0].correlation_id;
  const rapidjson::Document doc = Parse(FormatGpuidleTrace(t));
  const std::vector<const rapidjson::Value*> ends = Events(doc, "f", "ac2g");
  ASSERT_EQ(Events(doc, "s", "ac2g").size(), 1u);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ((*ends[0])["id"].GetUint64(), t.devices[0].ops[0].correlation_id);
  EXPECT_EQ(Nanos((*ends[0])["ts"]), Nanos((*Events(doc, "X", "kernel")[0])["ts"]));
}

TEST(TraceWriter, KeepsTheLongestGapsUpToTheCapAndSaysWhatWasLeftOut) {
  const Timeline t = ManyGapsTimeline();
  absl::StatusOr<Report> report = Analyze(t, AnalysisOptions());
  ASSERT_TRUE(report.ok()) << report.status();
  absl::StatusOr<GapList> all = ListGaps(t, report->options, 1'000'000);
  ASSERT_TRUE(all.ok()) << all.status();
  constexpr int kCap = 7;
  ASSERT_GT(all->gaps.size(), static_cast<size_t>(kCap));
  const rapidjson::Document doc = Parse(FormatTraceWithGaps(t, &*report, {.max_gaps = kCap}));
  const std::vector<const rapidjson::Value*> slices = GapSlices(doc);
  ASSERT_EQ(slices.size(), static_cast<size_t>(kCap));

  // The kCap longest of all gaps, and what is left out of them.
  std::vector<int64_t> lengths;
  for (const GapRecord& g : all->gaps) lengths.push_back(g.end_ns - g.start_ns);
  std::sort(lengths.rbegin(), lengths.rend());
  std::vector<int64_t> drawn;
  for (const rapidjson::Value* g : slices) drawn.push_back(Nanos((*g)["dur"]));
  std::sort(drawn.rbegin(), drawn.rend());
  EXPECT_EQ(drawn, std::vector<int64_t>(lengths.begin(), lengths.begin() + kCap));
  int64_t left_out_ns = 0;
  for (size_t i = kCap; i < lengths.size(); ++i) left_out_ns += lengths[i];
  const int64_t left_out = static_cast<int64_t>(lengths.size()) - kCap;

  const rapidjson::Value& gaps = doc["gpuidle"]["gaps"];
  EXPECT_EQ(Str(gaps["source"]), "analysis");
  EXPECT_EQ(gaps["max_gaps"].GetInt(), kCap);
  EXPECT_EQ(gaps["gaps"].GetInt64(), static_cast<int64_t>(lengths.size()));
  EXPECT_EQ(gaps["drawn"].GetInt64(), kCap);
  EXPECT_EQ(gaps["left_out"].GetInt64(), left_out);
  EXPECT_EQ(gaps["left_out_ns"].GetInt64(), left_out_ns);
  ASSERT_EQ(gaps["devices"].Size(), 1u);
  const rapidjson::Value& device = gaps["devices"][0];
  EXPECT_EQ(device["device"].GetInt(), 0);
  EXPECT_EQ(device["idle_ns"].GetInt64(), report->devices[0].idle_ns);
  EXPECT_EQ(device["left_out"].GetInt64(), left_out);
  EXPECT_EQ(device["left_out_ns"].GetInt64(), left_out_ns);

  // On the track: its name and one instant that counts what is missing.
  const std::vector<const rapidjson::Value*> notes = Events(doc, "i", "gpuidle_gap");
  ASSERT_EQ(notes.size(), 1u);
  const rapidjson::Value& note = *notes[0];
  EXPECT_THAT(Str(note["name"]), ::testing::StartsWith(absl::StrCat(left_out, " gaps (")));
  EXPECT_THAT(Str(note["name"]), ::testing::EndsWith(" ms) left out"));
  EXPECT_EQ(note["tid"].GetUint64(), 0xfffffffeu);
  EXPECT_EQ(Str(note["s"]), "t");
  EXPECT_EQ(note["args"]["left_out"].GetInt64(), left_out);
  EXPECT_EQ(note["args"]["left_out_ns"].GetInt64(), left_out_ns);
  EXPECT_EQ(note["args"]["longest_left_out_at_most_ns"].GetInt64(), drawn.back());
  bool track_says_so = false;
  for (const rapidjson::Value* e : Events(doc, "M", "thread_name")) {
    track_says_so |=
        Str((*e)["args"]["name"]) ==
        absl::StrCat("gpuidle: idle causes (longest ", kCap, " of ", lengths.size(), " gaps)");
  }
  EXPECT_TRUE(track_says_so);
}

TEST(TraceWriter, UnderTheCapNothingIsLeftOutAndNoNoteIsDrawn) {
  const Timeline t = ManyGapsTimeline();
  absl::StatusOr<Report> report = Analyze(t, AnalysisOptions());
  ASSERT_TRUE(report.ok()) << report.status();
  const rapidjson::Document doc = Parse(FormatTraceWithGaps(t, &*report));
  const rapidjson::Value& gaps = doc["gpuidle"]["gaps"];
  EXPECT_EQ(gaps["max_gaps"].GetInt(), TraceOptions::kDefaultMaxGaps);
  EXPECT_EQ(gaps["left_out"].GetInt64(), 0);
  EXPECT_EQ(gaps["left_out_ns"].GetInt64(), 0);
  EXPECT_EQ(gaps["drawn"].GetInt64(), static_cast<int64_t>(GapSlices(doc).size()));
  EXPECT_THAT(Events(doc, "i", "gpuidle_gap"), IsEmpty());
}

TEST(TraceWriter, WithoutAReportDrawsNoGaps) {
  const rapidjson::Document doc = Parse(FormatGpuidleTrace(SampleTimeline()));
  EXPECT_THAT(Events(doc, "X", "gpuidle_gap"), IsEmpty());
  EXPECT_FALSE(doc["gpuidle"].HasMember("gaps"));
}

// The report as JSON, without what names the input.
std::string ReportJson(const Timeline& t) {
  absl::StatusOr<Report> r = Analyze(t, AnalysisOptions());
  if (!r.ok()) return r.status().ToString();
  r->inputs.clear();
  r->source.clear();
  absl::StatusOr<std::string> json = FormatReport(*r, "json");
  return json.ok() ? *json : json.status().ToString();
}

TEST(TraceWriter, AnalysingTheWrittenTraceGivesTheTimelinesReport) {
  TempDir dir;
  std::mt19937_64 rng(18);
  std::vector<Timeline> timelines;
  timelines.push_back(SampleTimeline());
  timelines.push_back(ManyGapsTimeline());
  for (int i = 0; i < 40; ++i) {
    timelines.push_back(::gpuidle::testing::RandomTimeline(rng, {.every_kind = true}));
  }
  int compared = 0;
  for (size_t i = 0; i < timelines.size(); ++i) {
    SCOPED_TRACE(i);
    const Timeline& t = timelines[i];
    absl::StatusOr<Report> report = Analyze(t, AnalysisOptions());
    if (!report.ok()) continue;
    const std::string path = dir.Path(absl::StrCat("t", i, ".json"));
    ASSERT_TRUE(WriteTraceWithGaps(t, &*report, path).ok());
    absl::StatusOr<Timeline> back = ReadTraceFile(path);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(ReportJson(*back), ReportJson(t));
    ++compared;
  }
  EXPECT_GT(compared, 30);
}

// Records the pieces it is given; fails from the `fail_at`-th on.
class RecordingStream : public OutputStream {
 public:
  explicit RecordingStream(int fail_at = -1) : fail_at_(fail_at) {}
  absl::Status Write(absl::string_view piece) override {
    if (static_cast<int>(pieces.size()) == fail_at_) return absl::DataLossError("disk full");
    pieces.push_back(piece.size());
    text.append(piece.data(), piece.size());
    return absl::OkStatus();
  }
  std::vector<size_t> pieces;
  std::string text;

 private:
  int fail_at_;
};

// About 3 MB of trace.
Timeline BigTimeline() {
  TimelineBuilder b;
  for (int i = 0; i < 8000; ++i)
    b.Launch(1, 10.0 * i, 10.0 * i + 1).Kernel(10.0 * i + 2, 10.0 * i + 5);
  return b.Build();
}

TEST(TraceWriter, StreamsTheTraceInPiecesOfAboutAMegabyte) {
  const Timeline t = BigTimeline();
  RecordingStream out;
  ASSERT_TRUE(StreamGpuidleTrace(t, nullptr, nullptr, out).ok());
  EXPECT_EQ(out.text, FormatGpuidleTrace(t));
  ASSERT_GE(out.pieces.size(), 3u);
  for (size_t i = 0; i + 1 < out.pieces.size(); ++i) {
    EXPECT_GE(out.pieces[i], size_t{1} << 20);
    EXPECT_LT(out.pieces[i], (size_t{1} << 20) + 4096);  // a megabyte and one event
  }
}

TEST(TraceWriter, AnOutputErrorEndsTheWritingAndIsReturned) {
  RecordingStream out(/*fail_at=*/1);
  const absl::Status s = StreamGpuidleTrace(BigTimeline(), nullptr, nullptr, out);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(out.pieces.size(), 1u);
}

TEST(TraceWriter, WritesAGzipTraceThatReadsBack) {
  TempDir dir;
  const Timeline t = SampleTimeline();
  absl::StatusOr<Report> report = Analyze(t, AnalysisOptions());
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_TRUE(WriteTraceWithGaps(t, &*report, dir.Path("run.trace.json.gz")).ok());
  const std::string gz = ReadFileOrDie(dir.Path("run.trace.json.gz"));
  ASSERT_GE(gz.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(gz[1]), 0x8b);
  absl::StatusOr<Timeline> back = ReadTraceFile(dir.Path("run.trace.json.gz"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(ReportJson(*back), ReportJson(t));
}

TEST(TraceWriter, WriteGpuidleTraceWritesTheFileAndLeavesNoTemporary) {
  TempDir dir;
  const Timeline t = SampleTimeline();
  absl::StatusOr<Report> report = Analyze(t, AnalysisOptions());
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_TRUE(WriteTraceWithGaps(t, &*report, dir.Path("run.trace.json")).ok());
  EXPECT_THAT(dir.List(), ElementsAre("run.trace.json"));
  EXPECT_EQ(ReadFileOrDie(dir.Path("run.trace.json")), FormatTraceWithGaps(t, &*report));
}

TEST(TraceWriter, WriteGpuidleTraceFailsForADirectoryThatDoesNotExist) {
  TempDir dir;
  const absl::StatusOr<std::string> s =
      WriteGpuidleTrace(SampleTimeline(), nullptr, nullptr, dir.Path("missing/run.trace.json"));
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(dir.List(), IsEmpty());
}

}  // namespace
}  // namespace gpuidle::internal
