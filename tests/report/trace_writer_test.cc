// The gpuidle trace writer, tested by parsing what it wrote (the round trip through the reader
// is tests/ingest/trace_round_trip_test.cc).
#include "report/trace_writer.h"

#include <algorithm>
#include <cstdint>
#include <regex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "analysis/analyze.h"
#include "core/version.h"
#include "gmock/gmock.h"
#include "gpuidle/options.h"
#include "gpuidle/report.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "testing/json.h"
#include "testing/temp_dir.h"
#include "testing/timeline_builder.h"

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
  EXPECT_EQ(times, 2 * 14);  // ts and dur of every op, call and range
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

TEST(TraceWriter, DrawsTheReportsGapsOnAnIdleCausesTrackColouredByCause) {
  const Timeline t = SampleTimeline();
  absl::StatusOr<Report> report = Analyze(t, AnalysisOptions());
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_FALSE(report->longest_gaps.empty());
  const rapidjson::Document doc = Parse(FormatGpuidleTrace(t, &*report));
  const std::vector<const rapidjson::Value*> gaps = Events(doc, "X", "gpuidle_gap");
  ASSERT_EQ(gaps.size(), report->longest_gaps.size());
  for (size_t i = 0; i < gaps.size(); ++i) {
    const rapidjson::Value& g = *gaps[i];
    const GapRecord& want = report->longest_gaps[i];
    EXPECT_EQ(Str(g["name"]), QualifiedSubcauseName(want.subcause));
    EXPECT_EQ(g["pid"].GetInt(), want.device);
    EXPECT_EQ(g["tid"].GetUint64(), 0xfffffffeu);
    EXPECT_FALSE(Str(g["cname"]).empty());
    EXPECT_EQ(Str(g["args"]["evidence"]), want.evidence);
    EXPECT_EQ(Str(g["args"]["next_op"]), want.next_op);
    EXPECT_EQ(Str(g["args"]["call_site"]), want.call_site);
  }
  bool track_named = false;
  for (const rapidjson::Value* e : Events(doc, "M", "thread_name")) {
    if (Str((*e)["args"]["name"]) == "gpuidle: idle causes") {
      track_named = true;
      EXPECT_EQ((*e)["tid"].GetUint64(), 0xfffffffeu);
    }
  }
  EXPECT_TRUE(track_named);
}

TEST(TraceWriter, GivesEachCauseItsOwnColour) {
  Timeline t = TimelineBuilder().Kernel(0, 1).Build();
  Report report;
  for (int s = 0; s < kNumSubcauses; ++s) {
    GapRecord g;
    g.start_ns = 10 * s;
    g.end_ns = 10 * s + 5;
    g.subcause = static_cast<Subcause>(s);
    report.longest_gaps.push_back(g);
  }
  const rapidjson::Document doc = Parse(FormatGpuidleTrace(t, &report));
  std::vector<std::string> colours;
  for (const rapidjson::Value* g : Events(doc, "X", "gpuidle_gap")) {
    colours.push_back(Str((*g)["cname"]));
  }
  ASSERT_EQ(colours.size(), static_cast<size_t>(kNumSubcauses));
  std::sort(colours.begin(), colours.end());
  EXPECT_EQ(std::unique(colours.begin(), colours.end()), colours.end());
}

TEST(TraceWriter, WithoutAReportDrawsNoGaps) {
  const rapidjson::Document doc = Parse(FormatGpuidleTrace(SampleTimeline()));
  EXPECT_THAT(Events(doc, "X", "gpuidle_gap"), IsEmpty());
}

TEST(TraceWriter, LeavesOutGapsOfOtherRanks) {
  Timeline t = SampleTimeline();  // rank 1
  Report report;
  GapRecord mine, theirs;
  mine.rank = 1;
  theirs.rank = 0;
  mine.end_ns = theirs.end_ns = 10;
  report.longest_gaps = {mine, theirs};
  const rapidjson::Document doc = Parse(FormatGpuidleTrace(t, &report));
  EXPECT_EQ(Events(doc, "X", "gpuidle_gap").size(), 1u);
}

TEST(TraceWriter, WriteGpuidleTraceWritesTheFileAndLeavesNoTemporary) {
  TempDir dir;
  const Timeline t = SampleTimeline();
  ASSERT_TRUE(WriteGpuidleTrace(t, nullptr, dir.Path("run.trace.json")).ok());
  EXPECT_THAT(dir.List(), ElementsAre("run.trace.json"));
  EXPECT_EQ(ReadFileOrDie(dir.Path("run.trace.json")), FormatGpuidleTrace(t));
}

TEST(TraceWriter, WriteGpuidleTraceFailsForADirectoryThatDoesNotExist) {
  TempDir dir;
  const absl::StatusOr<std::string> s =
      WriteGpuidleTrace(SampleTimeline(), nullptr, dir.Path("missing/run.trace.json"));
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(dir.List(), IsEmpty());
}

}  // namespace
}  // namespace gpuidle::internal
