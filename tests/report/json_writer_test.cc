#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analysis/analyze.h"
#include "gmock/gmock.h"
#include "gpuidle/options.h"
#include "gpuidle/report.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "report/writer.h"
#include "testing/json.h"
#include "testing/timeline_builder.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::TimelineBuilder;
using ::testing::ElementsAre;
using ::testing::StartsWith;

constexpr int64_t kMs = 1'000'000;

std::string WriteJson(Report r, const AnalysisOptions& options = {}) {
  r.options = options;
  return MakeJsonWriter()->Write(r);
}

using ::gpuidle::testing::Parse;
using ::gpuidle::testing::Str;

// A report of two devices of two ranks, with every kind of entry.
Report SampleReport() {
  Report r;
  r.source = "pytorch-profiler";
  r.inputs = {"rank0.json.gz", "rank1.json.gz"};
  r.window_start_ns = 1000;
  r.window_end_ns = 1000 + 100 * kMs;
  r.visible_device_count = 8;
  r.unused_devices = {2, 3, 4, 5, 6, 7};
  r.zero_timestamp_records = 2;

  DeviceReport d0;
  d0.rank = 0;
  d0.device = 0;
  d0.name = "NVIDIA H200";
  d0.window_start_ns = d0.steady_start_ns = 1000;
  d0.window_end_ns = d0.steady_end_ns = 1000 + 100 * kMs;
  d0.window_ns = 100 * kMs;
  d0.busy_ns = 60 * kMs;
  d0.idle_ns = 40 * kMs;
  d0.idle[Subcause::kDataLoader] = 10 * kMs;
  d0.idle[Subcause::kHostSync] = 25 * kMs;
  d0.idle[Subcause::kUnattributed] = 5 * kMs;
  d0.kernel_count = 300;
  d0.memcpy_count = 12;
  d0.memset_count = 4;
  r.devices.push_back(d0);

  DeviceReport d1;
  d1.rank = 1;
  d1.device = 1;
  d1.name = "NVIDIA H200";
  d1.window_start_ns = d1.steady_start_ns = 1000;
  d1.window_end_ns = d1.steady_end_ns = 1000 + 100 * kMs;
  d1.window_ns = 100 * kMs;
  d1.busy_ns = 90 * kMs;
  d1.idle_ns = 10 * kMs;
  d1.idle[Subcause::kLaunchOverhead] = 6 * kMs;
  d1.idle[Subcause::kKernelGap] = 4 * kMs;
  d1.comm_ns = 8 * kMs;
  d1.exposed_comm_ns = 2 * kMs;
  d1.comm_wait_ns = 3 * kMs;
  r.devices.push_back(d1);

  StepReport s;
  s.rank = 0;
  s.device = 0;
  s.name = "ProfilerStep#1";
  s.start_ns = 1000;
  s.end_ns = 1000 + 50 * kMs;
  s.busy_ns = 30 * kMs;
  s.idle[Subcause::kDataLoader] = 10 * kMs;
  s.idle[Subcause::kHostSync] = 10 * kMs;
  r.steps.push_back(s);

  GapRecord g;
  g.rank = 0;
  g.device = 0;
  g.start_ns = 5000;
  g.end_ns = 5000 + 9 * kMs;
  g.subcause = Subcause::kHostSync;
  g.next_op = "void gemm<float>(\"quoted\", \\path\\)";
  g.thread = 544;
  g.evidence = "cudaStreamSynchronize";
  g.call_site = "aten::item at train.py(21): step";
  r.longest_gaps.push_back(g);

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

int64_t SumMembers(const rapidjson::Value& object) {
  int64_t sum = 0;
  for (const auto& m : object.GetObject()) sum += m.value.GetInt64();
  return sum;
}

TEST(JsonWriter, WritesTheSchemaAndTheInputs) {
  const rapidjson::Document doc = Parse(WriteJson(SampleReport()));
  ASSERT_TRUE(doc.IsObject());
  EXPECT_EQ(Str(doc["schema"]), "gpuidle.report/2");
  EXPECT_THAT(Str(doc["generator"]), StartsWith("gpuidle "));
  EXPECT_EQ(Str(doc["source"]), "pytorch-profiler");
  ASSERT_TRUE(doc["inputs"].IsArray());
  ASSERT_EQ(doc["inputs"].Size(), 2u);
  EXPECT_EQ(Str(doc["inputs"][1]), "rank1.json.gz");
  EXPECT_EQ(doc["window"]["start_ns"].GetInt64(), 1000);
  EXPECT_EQ(doc["window"]["end_ns"].GetInt64(), 1000 + 100 * kMs);
  EXPECT_EQ(doc["visible_device_count"].GetInt(), 8);
  std::vector<int> unused;
  for (const auto& v : doc["unused_devices"].GetArray()) unused.push_back(v.GetInt());
  EXPECT_THAT(unused, ElementsAre(2, 3, 4, 5, 6, 7));
}

TEST(JsonWriter, SaysHowCompleteTheRecordsAre) {
  Report r = SampleReport();
  {
    const rapidjson::Document doc = Parse(WriteJson(r));
    EXPECT_EQ(Str(doc["completeness"]["status"]), "unknown");
    EXPECT_TRUE(doc["completeness"]["dropped_records"].IsNull());
    EXPECT_EQ(doc["completeness"]["zero_timestamp_records"].GetUint64(), 2u);
  }
  r.dropped_records = 0;
  EXPECT_EQ(Str(Parse(WriteJson(r))["completeness"]["status"]), "complete");
  r.dropped_records = 17;
  const rapidjson::Document doc = Parse(WriteJson(r));
  EXPECT_EQ(Str(doc["completeness"]["status"]), "records_lost");
  EXPECT_EQ(doc["completeness"]["dropped_records"].GetUint64(), 17u);
}

TEST(JsonWriter, WritesEachDevice) {
  const rapidjson::Document doc = Parse(WriteJson(SampleReport()));
  const rapidjson::Value& devices = doc["devices"];
  ASSERT_TRUE(devices.IsArray());
  ASSERT_EQ(devices.Size(), 2u);
  const rapidjson::Value& d = devices[0];
  EXPECT_EQ(d["rank"].GetInt(), 0);
  EXPECT_EQ(d["device"].GetInt(), 0);
  EXPECT_EQ(Str(d["name"]), "NVIDIA H200");
  EXPECT_EQ(d["window_ns"].GetInt64(), 100 * kMs);
  EXPECT_EQ(d["busy_ns"].GetInt64(), 60 * kMs);
  EXPECT_EQ(d["idle_ns"].GetInt64(), 40 * kMs);
  EXPECT_EQ(d["kernel_count"].GetInt64(), 300);
  EXPECT_EQ(d["memcpy_count"].GetInt64(), 12);
  EXPECT_EQ(d["memset_count"].GetInt64(), 4);
  EXPECT_EQ(d["comm_ns"].GetInt64(), 0);
  EXPECT_EQ(d["exposed_comm_ns"].GetInt64(), 0);
  EXPECT_TRUE(d["comm_wait_ns"].IsNull());  // unknown with one rank's view

  const rapidjson::Value& d1 = devices[1];
  EXPECT_EQ(d1["rank"].GetInt(), 1);
  EXPECT_EQ(d1["comm_ns"].GetInt64(), 8 * kMs);
  EXPECT_EQ(d1["exposed_comm_ns"].GetInt64(), 2 * kMs);
  EXPECT_EQ(d1["comm_wait_ns"].GetInt64(), 3 * kMs);
}

TEST(JsonWriter, WritesNullForAnUnknownRank) {
  Report r = SampleReport();
  r.devices[0].rank.reset();
  r.steps[0].rank.reset();
  const rapidjson::Document doc = Parse(WriteJson(r));
  EXPECT_TRUE(doc["devices"][0]["rank"].IsNull());
  EXPECT_TRUE(doc["steps"][0]["rank"].IsNull());
}

TEST(JsonWriter, BreaksIdleTimeDownByCauseAndSubcause) {
  const rapidjson::Document doc = Parse(WriteJson(SampleReport()));
  const rapidjson::Value& d = doc["devices"][0];
  const rapidjson::Value& by_cause = d["idle_by_cause"];
  ASSERT_EQ(by_cause.MemberCount(), 4u);
  EXPECT_EQ(by_cause["data_starved"].GetInt64(), 10 * kMs);
  EXPECT_EQ(by_cause["launch_bound"].GetInt64(), 0);
  EXPECT_EQ(by_cause["sync_bound"].GetInt64(), 25 * kMs);
  EXPECT_EQ(by_cause["unattributed"].GetInt64(), 5 * kMs);
  const rapidjson::Value& by_subcause = d["idle_by_subcause"];
  ASSERT_EQ(by_subcause.MemberCount(), 13u);
  for (const char* name : {"data_starved.dataloader", "data_starved.h2d_copy", "data_starved.host",
                           "launch_bound.launch_overhead", "launch_bound.kernel_gap",
                           "launch_bound.requests_waiting", "sync_bound.host_sync",
                           "sync_bound.device_wait", "sync_bound.comm_wait", "sync_bound.copy_wait",
                           "sync_bound.allocator", "sync_bound.other_process", "unattributed"}) {
    EXPECT_TRUE(by_subcause.HasMember(name)) << name;
  }
  EXPECT_EQ(by_subcause["data_starved.dataloader"].GetInt64(), 10 * kMs);
  EXPECT_EQ(by_subcause["sync_bound.host_sync"].GetInt64(), 25 * kMs);
  EXPECT_EQ(by_subcause["unattributed"].GetInt64(), 5 * kMs);
  for (const auto& device : doc["devices"].GetArray()) {
    EXPECT_EQ(SumMembers(device["idle_by_subcause"]), device["idle_ns"].GetInt64());
    EXPECT_EQ(SumMembers(device["idle_by_cause"]), device["idle_ns"].GetInt64());
  }
}

TEST(JsonWriter, WritesStepsGapsOffendersAndAdvice) {
  const rapidjson::Document doc = Parse(WriteJson(SampleReport()));
  ASSERT_EQ(doc["steps"].Size(), 1u);
  const rapidjson::Value& s = doc["steps"][0];
  EXPECT_EQ(Str(s["name"]), "ProfilerStep#1");
  EXPECT_EQ(s["device"].GetInt(), 0);
  EXPECT_EQ(s["start_ns"].GetInt64(), 1000);
  EXPECT_EQ(s["end_ns"].GetInt64(), 1000 + 50 * kMs);
  EXPECT_EQ(s["busy_ns"].GetInt64(), 30 * kMs);
  EXPECT_EQ(s["idle_ns"].GetInt64(), 20 * kMs);
  EXPECT_EQ(SumMembers(s["idle_by_subcause"]), 20 * kMs);
  EXPECT_EQ(s["idle_by_cause"]["data_starved"].GetInt64(), 10 * kMs);

  ASSERT_EQ(doc["longest_gaps"].Size(), 1u);
  const rapidjson::Value& g = doc["longest_gaps"][0];
  EXPECT_EQ(Str(g["cause"]), "sync_bound");
  EXPECT_EQ(Str(g["subcause"]), "sync_bound.host_sync");
  EXPECT_EQ(g["start_ns"].GetInt64(), 5000);
  EXPECT_EQ(g["end_ns"].GetInt64(), 5000 + 9 * kMs);
  EXPECT_EQ(Str(g["next_op"]), "void gemm<float>(\"quoted\", \\path\\)");  // escaped and back
  EXPECT_EQ(g["thread"].GetUint64(), 544u);
  EXPECT_EQ(Str(g["evidence"]), "cudaStreamSynchronize");
  EXPECT_EQ(Str(g["call_site"]), "aten::item at train.py(21): step");

  ASSERT_EQ(doc["offenders"].Size(), 1u);
  const rapidjson::Value& o = doc["offenders"][0];
  EXPECT_EQ(Str(o["subcause"]), "sync_bound.host_sync");
  EXPECT_EQ(Str(o["cause"]), "sync_bound");
  EXPECT_EQ(Str(o["what"]), "cudaStreamSynchronize");
  EXPECT_EQ(Str(o["site"]), "aten::item at train.py(21): step");
  EXPECT_EQ(o["idle_ns"].GetInt64(), 25 * kMs);
  EXPECT_EQ(o["count"].GetInt64(), 12);

  ASSERT_EQ(doc["advice"].Size(), 1u);
  const rapidjson::Value& a = doc["advice"][0];
  EXPECT_EQ(Str(a["subcause"]), "sync_bound.host_sync");
  EXPECT_EQ(Str(a["fix"]), "drop per-step .item()");
  EXPECT_EQ(Str(a["cause"]), "sync_bound");
  EXPECT_DOUBLE_EQ(a["share_of_lost_time"].GetDouble(), 0.5);
}

TEST(JsonWriter, WritesTheOptionsItWasGiven) {
  AnalysisOptions options;
  options.launch_gap_max_ns = 250'000;
  options.dispatch_latency_max_ns = 42'000;
  options.data_range_patterns = {"DataLoader", "my_loader"};
  const rapidjson::Document doc = Parse(WriteJson(SampleReport(), options));
  EXPECT_EQ(doc["options"]["launch_gap_max_ns"].GetInt64(), 250'000);
  EXPECT_EQ(doc["options"]["dispatch_latency_max_ns"].GetInt64(), 42'000);
  ASSERT_EQ(doc["options"]["data_range_patterns"].Size(), 2u);
  EXPECT_EQ(Str(doc["options"]["data_range_patterns"][1]), "my_loader");
}

TEST(JsonWriter, EscapesControlCharactersAndKeepsUtf8) {
  Report r = SampleReport();
  r.devices[0].name = std::string("GPU \"zero\"\t\x01 \xc3\xa9t\xc3\xa9 \xe2\x9c\x93", 22);
  const rapidjson::Document doc = Parse(WriteJson(r));
  EXPECT_EQ(Str(doc["devices"][0]["name"]), r.devices[0].name);
}

TEST(JsonWriter, WritesNonFiniteNumbersAsNull) {
  Report r = SampleReport();
  r.advice[0].share_of_lost_time = std::numeric_limits<double>::quiet_NaN();
  Advice inf = r.advice[0];
  inf.share_of_lost_time = std::numeric_limits<double>::infinity();
  r.advice.push_back(inf);
  const rapidjson::Document doc = Parse(WriteJson(r));
  ASSERT_TRUE(doc.IsObject());
  ASSERT_EQ(doc["advice"].Size(), 2u);
  for (const auto& a : doc["advice"].GetArray()) EXPECT_TRUE(a["share_of_lost_time"].IsNull());
}

TEST(JsonWriter, WritesAnEmptyReport) {
  const rapidjson::Document doc = Parse(WriteJson(Report()));
  ASSERT_TRUE(doc.IsObject());
  EXPECT_EQ(Str(doc["schema"]), "gpuidle.report/2");
  EXPECT_EQ(doc["devices"].Size(), 0u);
  EXPECT_EQ(doc["steps"].Size(), 0u);
  EXPECT_EQ(doc["advice"].Size(), 0u);
}

TEST(JsonWriter, EndsWithOneNewline) {
  const std::string json = WriteJson(SampleReport());
  ASSERT_FALSE(json.empty());
  EXPECT_EQ(json.back(), '\n');
  EXPECT_NE(json[json.size() - 2], '\n');
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

// One device of rank 0: window [1000, 1000 + 100 ms); start-up 20 ms (compilation 15, CUDA init
// 4, set-up 1), steady state 70 ms (busy 40, idle 28, a 2 ms re-compilation), wind-down 10 ms.
DeviceReport PhasedDevice() {
  DeviceReport d;
  d.rank = 0;
  d.device = 0;
  d.name = "NVIDIA H200";
  d.window_start_ns = 1000;
  d.window_end_ns = 1000 + 100 * kMs;
  d.window_ns = 100 * kMs;
  d.steady_start_ns = 1000 + 20 * kMs;
  d.steady_end_ns = 1000 + 90 * kMs;
  d.busy_ns = 40 * kMs;
  d.idle_ns = 28 * kMs;
  d.idle[Subcause::kHostSync] = 20 * kMs;
  d.idle[Subcause::kCopyWait] = 8 * kMs;
  // The report's order (by phase, most first) except the set-up, which the writer sorts in.
  d.one_off = {Part(Phase::kStartUp, OneOffKind::kSetUp, 1 * kMs),
               Part(Phase::kStartUp, OneOffKind::kCompilation, 15 * kMs, 3, "cuModuleLoadData"),
               Part(Phase::kStartUp, OneOffKind::kCudaInit, 4 * kMs, 1, "cuInit"),
               Part(Phase::kSteady, OneOffKind::kCompilation, 2 * kMs, 2, "triton_poi_fused_0"),
               Part(Phase::kWindDown, OneOffKind::kWindDown, 8 * kMs),
               Part(Phase::kWindDown, OneOffKind::kGpuBusy, 2 * kMs)};
  return d;
}

Report PhasedReport() {
  Report r;
  r.source = "pytorch-profiler";
  r.window_start_ns = 1000;
  r.window_end_ns = 1000 + 100 * kMs;
  r.step_source = "ProfilerStep";
  r.warnings = {"3 events without \"ts\" skipped", "rank 1: no distributedInfo\x1b[31m"};
  r.devices.push_back(PhasedDevice());
  DeviceReport d1 = PhasedDevice();  // a shorter start-up: 5 ms of CUDA init only
  d1.rank = 1;
  d1.steady_start_ns = 1000 + 5 * kMs;
  d1.one_off = {Part(Phase::kStartUp, OneOffKind::kCudaInit, 5 * kMs, 1, "cuInit")};
  d1.window_end_ns = d1.steady_end_ns;  // no wind-down
  d1.window_ns = d1.window_end_ns - d1.window_start_ns;
  d1.busy_ns = 50 * kMs;
  d1.idle = IdleBreakdown();
  d1.idle[Subcause::kKernelGap] = 35 * kMs;
  d1.idle_ns = 35 * kMs;
  r.devices.push_back(d1);
  return r;
}

int64_t SumParts(const rapidjson::Value& phase) {
  int64_t sum = 0;
  for (const auto& p : phase["parts"].GetArray()) sum += p["ns"].GetInt64();
  return sum;
}

TEST(JsonWriter, WritesEachDevicesPhasesWithTheirParts) {
  const rapidjson::Document doc = Parse(WriteJson(PhasedReport()));
  const rapidjson::Value& d = doc["devices"][0];
  EXPECT_EQ(d["steady_start_ns"].GetInt64(), 1000 + 20 * kMs);
  EXPECT_EQ(d["steady_end_ns"].GetInt64(), 1000 + 90 * kMs);
  ASSERT_TRUE(d["phases"].IsObject());
  const rapidjson::Value& phases = d["phases"];
  std::vector<std::string> names;
  for (const auto& m : phases.GetObject()) names.push_back(Str(m.name));
  EXPECT_THAT(names, ElementsAre("start_up", "steady", "wind_down"));

  const rapidjson::Value& start = phases["start_up"];
  EXPECT_EQ(start["start_ns"].GetInt64(), 1000);
  EXPECT_EQ(start["end_ns"].GetInt64(), 1000 + 20 * kMs);
  EXPECT_EQ(start["ns"].GetInt64(), 20 * kMs);
  EXPECT_EQ(SumParts(start), start["ns"].GetInt64());  // the parts tile the start-up
  ASSERT_EQ(start["parts"].Size(), 3u);
  const rapidjson::Value& compilation = start["parts"][0];  // most time first
  EXPECT_EQ(Str(compilation["kind"]), "compilation");
  EXPECT_EQ(compilation["ns"].GetInt64(), 15 * kMs);
  EXPECT_EQ(compilation["count"].GetInt64(), 3);
  EXPECT_EQ(Str(compilation["evidence"]), "cuModuleLoadData");
  EXPECT_EQ(Str(start["parts"][1]["kind"]), "cuda_init");
  EXPECT_EQ(Str(start["parts"][2]["kind"]), "set_up");
  EXPECT_EQ(Str(start["parts"][2]["evidence"]), "");

  const rapidjson::Value& steady = phases["steady"];
  EXPECT_EQ(steady["start_ns"].GetInt64(), d["steady_start_ns"].GetInt64());
  EXPECT_EQ(steady["end_ns"].GetInt64(), d["steady_end_ns"].GetInt64());
  EXPECT_EQ(steady["ns"].GetInt64(), 70 * kMs);
  EXPECT_EQ(steady["one_off_ns"].GetInt64(), 2 * kMs);
  ASSERT_EQ(steady["parts"].Size(), 1u);
  EXPECT_EQ(Str(steady["parts"][0]["kind"]), "compilation");
  EXPECT_EQ(steady["parts"][0]["count"].GetInt64(), 2);
  // The headline is the steady state's: busy + idle + one-off idle = its span.
  EXPECT_EQ(d["busy_ns"].GetInt64() + d["idle_ns"].GetInt64() + steady["one_off_ns"].GetInt64(),
            steady["ns"].GetInt64());

  const rapidjson::Value& wind = phases["wind_down"];
  EXPECT_EQ(wind["start_ns"].GetInt64(), 1000 + 90 * kMs);
  EXPECT_EQ(wind["end_ns"].GetInt64(), 1000 + 100 * kMs);
  EXPECT_EQ(wind["ns"].GetInt64(), 10 * kMs);
  EXPECT_EQ(SumParts(wind), wind["ns"].GetInt64());
  ASSERT_EQ(wind["parts"].Size(), 2u);
  EXPECT_EQ(Str(wind["parts"][0]["kind"]), "wind_down");
  EXPECT_EQ(Str(wind["parts"][1]["kind"]), "gpu_busy");
  EXPECT_EQ(start["ns"].GetInt64() + steady["ns"].GetInt64() + wind["ns"].GetInt64(),
            d["window_ns"].GetInt64());

  const rapidjson::Value& d1 = doc["devices"][1];  // no wind-down: an empty phase
  EXPECT_EQ(d1["phases"]["wind_down"]["ns"].GetInt64(), 0);
  EXPECT_EQ(d1["phases"]["wind_down"]["parts"].Size(), 0u);
  EXPECT_EQ(d1["phases"]["steady"]["one_off_ns"].GetInt64(), 0);
}

TEST(JsonWriter, WritesEveryOneOffKindByName) {
  Report r = PhasedReport();
  r.devices.resize(1);
  r.devices[0].one_off.clear();
  for (int k = 0; k < kNumOneOffKinds; ++k) {
    r.devices[0].one_off.push_back(Part(Phase::kStartUp, static_cast<OneOffKind>(k), kMs));
  }
  const rapidjson::Document doc = Parse(WriteJson(r));
  std::vector<std::string> kinds;
  for (const auto& p : doc["devices"][0]["phases"]["start_up"]["parts"].GetArray()) {
    kinds.push_back(Str(p["kind"]));
  }
  EXPECT_THAT(kinds, ElementsAre("cuda_init", "compilation", "module_load", "first_call",
                                 "warm_up_step", "set_up", "wind_down", "gpu_busy", "records_lost",
                                 "graph_capture", "no_demand"));
}

TEST(JsonWriter, WritesTheStepSourceWarningsAndTheLongestStartUp) {
  const Report r = PhasedReport();
  const rapidjson::Document doc = Parse(WriteJson(r));
  EXPECT_EQ(Str(doc["step_source"]), "ProfilerStep");
  ASSERT_TRUE(doc["warnings"].IsArray());
  ASSERT_EQ(doc["warnings"].Size(), 2u);
  EXPECT_EQ(Str(doc["warnings"][0]), r.warnings[0]);  // quotes and escapes read back exactly
  EXPECT_EQ(Str(doc["warnings"][1]), r.warnings[1]);
  // Rank 0's start-up (20 ms) is longer than rank 1's (5 ms).
  const rapidjson::Value& start = doc["start_up"];
  ASSERT_TRUE(start.IsObject());
  EXPECT_EQ(start["rank"].GetInt(), 0);
  EXPECT_EQ(start["device"].GetInt(), 0);
  EXPECT_EQ(start["ns"].GetInt64(), 20 * kMs);
  ASSERT_EQ(start["parts"].Size(), 3u);
  EXPECT_EQ(Str(start["parts"][0]["kind"]), "compilation");
  EXPECT_EQ(doc["wind_down"]["ns"].GetInt64(), 10 * kMs);
  EXPECT_EQ(doc["wind_down"]["rank"].GetInt(), 0);

  const rapidjson::Document empty = Parse(WriteJson(Report()));
  EXPECT_EQ(Str(empty["step_source"]), "");
  EXPECT_EQ(empty["warnings"].Size(), 0u);
  EXPECT_TRUE(empty["start_up"].IsNull());
  EXPECT_TRUE(empty["wind_down"].IsNull());
}

TEST(JsonWriter, WritesCopyWaitAsASyncBoundSubcause) {
  const rapidjson::Document doc = Parse(WriteJson(PhasedReport()));
  const rapidjson::Value& d = doc["devices"][0];
  EXPECT_EQ(d["idle_by_subcause"]["sync_bound.copy_wait"].GetInt64(), 8 * kMs);
  EXPECT_EQ(d["idle_by_cause"]["sync_bound"].GetInt64(), 28 * kMs);
  Report r = PhasedReport();
  GapRecord g;
  g.subcause = Subcause::kCopyWait;
  g.evidence = "cudaMemcpyAsync";
  r.longest_gaps.push_back(g);
  const rapidjson::Document with_gap = Parse(WriteJson(r));
  EXPECT_EQ(Str(with_gap["longest_gaps"][0]["subcause"]), "sync_bound.copy_wait");
  EXPECT_EQ(Str(with_gap["longest_gaps"][0]["cause"]), "sync_bound");
}

// The writer on a report the analysis made: the invariants users rely on hold in the JSON.
TEST(JsonWriter, WritesAnAnalysedTimelineWhoseIdleTimeAddsUp) {
  const Timeline t = TimelineBuilder()
                         .Visible(0)
                         .Visible(1)
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
  const rapidjson::Document doc = Parse(WriteJson(*report));
  ASSERT_EQ(doc["devices"].Size(), 1u);
  const rapidjson::Value& d = doc["devices"][0];
  // Window [0, 400) us; kernels busy 80 + 60 + 70 us.
  EXPECT_EQ(d["window_ns"].GetInt64(), 400'000);
  EXPECT_EQ(d["busy_ns"].GetInt64(), 210'000);
  EXPECT_EQ(d["idle_ns"].GetInt64(), 190'000);
  EXPECT_EQ(SumMembers(d["idle_by_subcause"]), d["idle_ns"].GetInt64());
  EXPECT_EQ(SumMembers(d["idle_by_cause"]), d["idle_ns"].GetInt64());
  EXPECT_EQ(d["kernel_count"].GetInt64(), 3);
  EXPECT_TRUE(d["comm_wait_ns"].IsNull());
  EXPECT_EQ(doc["visible_device_count"].GetInt(), 2);
  ASSERT_EQ(doc["unused_devices"].Size(), 1u);
  EXPECT_EQ(doc["unused_devices"][0].GetInt(), 1);
  ASSERT_EQ(doc["steps"].Size(), 1u);
  const rapidjson::Value& step = doc["steps"][0];
  EXPECT_EQ(Str(step["name"]), "ProfilerStep#0");
  EXPECT_EQ(SumMembers(step["idle_by_subcause"]), step["idle_ns"].GetInt64());
  EXPECT_EQ(step["busy_ns"].GetInt64() + step["idle_ns"].GetInt64(),
            step["end_ns"].GetInt64() - step["start_ns"].GetInt64());
  EXPECT_GT(doc["advice"].Size(), 0u);
  for (const auto& a : doc["advice"].GetArray()) EXPECT_GT(a["fix"].GetStringLength(), 0u);
}

// Issue 16's fields: collectives, the timing table, lost time, ranks, the straggler, the clock.
TEST(JsonWriter, WritesCollectivesRanksAndTheStraggler) {
  Report r = SampleReport();
  DeviceReport& d = r.devices[1];
  d.collectives = {{"0", "allreduce", 2, 5 * kMs, 1 * kMs, 4096, 3 * kMs},
                   {"", "broadcast", 1, 1 * kMs, 0, std::nullopt, std::nullopt}};
  d.collective_timings = {{10, 25, 0, 4096, 0}, {40, 41, -1, -1, 1}};
  d.collectives_not_listed = 3;
  r.steps.push_back(r.steps[0]);  // the second without a wait
  r.steps[0].comm_wait_ns = 2 * kMs;
  r.visible_devices = {{0, 0, 3, "GPU-1234", "NVIDIA H200", true}};
  RankReport k;
  k.rank = 1;
  k.arrived_last = 40;
  k.own_cause = Subcause::kDataLoader;
  k.own_cause_share = 0.75;
  r.ranks = {k};
  r.straggler_rank = 1;
  r.stragglers = {1};
  r.clock = {"one clock", 1, 0, 1.0};
  const std::string json = WriteJson(r);
  const rapidjson::Document doc = Parse(json);

  const rapidjson::Value& j1 = doc["devices"][1];
  EXPECT_EQ(j1["lost_ns"].GetInt64(), 13 * kMs);  // idle 10 ms + 3 ms waiting for peers
  EXPECT_EQ(doc["devices"][0]["lost_ns"].GetInt64(), 40 * kMs);
  ASSERT_EQ(j1["collectives"].Size(), 2u);
  EXPECT_EQ(Str(j1["collectives"][0]["op"]), "allreduce");
  EXPECT_EQ(j1["collectives"][0]["bytes"].GetInt64(), 4096);
  EXPECT_EQ(j1["collectives"][0]["wait_ns"].GetInt64(), 3 * kMs);
  EXPECT_FALSE(j1["collectives"][1].HasMember("bytes"));
  EXPECT_FALSE(j1["collectives"][1].HasMember("wait_ns"));
  EXPECT_EQ(j1["collectives_not_listed"].GetInt64(), 3);
  const rapidjson::Value& t = j1["collective_timings"];
  ASSERT_EQ(t["start_ns"].Size(), 2u);
  EXPECT_EQ(t["start_ns"][1].GetInt64(), 40);
  EXPECT_EQ(t["duration_ns"][0].GetInt64(), 15);
  EXPECT_EQ(t["seq"][1].GetInt64(), -1);
  EXPECT_EQ(t["bytes"][0].GetInt64(), 4096);
  EXPECT_EQ(t["kind"][1].GetInt64(), 1);
  // Each column on one line.
  EXPECT_NE(json.find("\"start_ns\": [10, 40]"), std::string::npos) << json;
  EXPECT_EQ(doc["devices"][0]["collective_timings"]["kind"].Size(), 0u);

  EXPECT_EQ(doc["steps"][0]["comm_wait_ns"].GetInt64(), 2 * kMs);
  EXPECT_FALSE(doc["steps"][1].HasMember("comm_wait_ns"));
  ASSERT_EQ(doc["visible_devices"].Size(), 1u);
  EXPECT_EQ(doc["visible_devices"][0]["physical_index"].GetInt(), 3);
  EXPECT_EQ(Str(doc["visible_devices"][0]["uuid"]), "GPU-1234");
  ASSERT_EQ(doc["ranks"].Size(), 1u);
  EXPECT_EQ(doc["ranks"][0]["arrived_last"].GetInt64(), 40);
  EXPECT_EQ(Str(doc["ranks"][0]["own_cause"]), "data_starved.dataloader");
  EXPECT_TRUE(doc["ranks"][0]["pid"].IsNull());
  EXPECT_EQ(doc["straggler_rank"].GetInt(), 1);
  ASSERT_EQ(doc["stragglers"].Size(), 1u);
  EXPECT_EQ(Str(doc["clock"]["method"]), "one clock");
  EXPECT_EQ(Str(doc["schema"]), "gpuidle.report/2");
}

TEST(JsonWriter, StragglerRankIsAlwaysThereAndNullWithoutOne) {
  const rapidjson::Document doc = Parse(WriteJson(SampleReport()));
  ASSERT_TRUE(doc.HasMember("straggler_rank"));
  EXPECT_TRUE(doc["straggler_rank"].IsNull());
  EXPECT_EQ(doc["stragglers"].Size(), 0u);
  // Written only where there is something to say.
  EXPECT_FALSE(doc.HasMember("visible_devices"));
  EXPECT_FALSE(doc.HasMember("ranks"));
  EXPECT_FALSE(doc.HasMember("clock"));
}

}  // namespace
}  // namespace gpuidle::internal
