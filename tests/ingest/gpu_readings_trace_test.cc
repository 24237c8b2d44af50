// A live capture's device readings in a gpuidle trace: NVML readings, other processes and PM
// throughput samples are written as columns of the "gpuidle" object and read back field for
// field (so that `gpuidle analyze` gives the live report's gpu_metrics), drawn as counter
// tracks that readers ignore, and refused with a warning, never read in part, when malformed.
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "analysis/analyze.h"
#include "gmock/gmock.h"
#include "gpuidle/analyze.h"
#include "gtest/gtest.h"
#include "ingest/byte_source.h"
#include "ingest/gpu_readings_parser.h"
#include "ingest/kineto_reader.h"
#include "ingest/read_trace.h"
#include "model/timeline.h"
#include "model/trace_names.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "report/trace_writer.h"
#include "testing/trace_with_gaps.h"

namespace gpuidle::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

constexpr int64_t kMs = 1'000'000;

// Device 0 runs a kernel in the first 5 ms of every 10 ms for a second, read by NVML every
// 5 ms (busy, idle, busy, ...), with another process on it and PM samples of 10 ms; every field
// of every reading differs from its default, and the extremes of their types appear.
Timeline RunWithReadings() {
  Timeline t;
  DeviceTimeline& d = t.DeviceFor(0);
  d.name = "NVIDIA H200";
  for (int64_t i = 0; i < 100; ++i) {
    DeviceOp op;
    op.start_ns = i * 10 * kMs;
    op.end_ns = op.start_ns + 5 * kMs;
    op.name = t.strings.Intern("gemm");
    op.stream = 7;
    d.ops.push_back(op);
  }
  for (int64_t i = 0; i < 200; ++i) {
    GpuMetricSample s;
    s.time_ns = 2'500'000 + i * 5 * kMs;
    const bool busy = i % 2 == 0;
    s.sm_clock_mhz = busy ? 1410 : 1980;
    s.sm_clock_max_mhz = 1980;
    s.memory_clock_mhz = 2619;
    s.memory_clock_max_mhz = 3201;
    s.power_mw = busy ? 698'123 : 100'000;
    s.power_limit_mw = 700'000;
    s.temperature_c = 60 + static_cast<uint32_t>(i % 10);
    s.utilization_percent = busy ? 100 : 0;
    s.clock_events = busy ? kClockEventPowerCap : kClockEventGpuIdle;
    s.has_clock_events = i % 7 != 3;  // some readings without the reasons
    if (!s.has_clock_events) s.clock_events = 0;
    s.pcie_generation = busy ? 4 : 1;
    s.pcie_generation_max = 5;
    s.pcie_width = 16;
    s.pcie_width_max = 16;
    s.pcie_replays = i == 199 ? std::numeric_limits<uint64_t>::max() : 7 + uint64_t(i / 100);
    s.memory_used_bytes = (uint64_t{40} << 30) + static_cast<uint64_t>(i);
    s.memory_total_bytes = uint64_t{141} << 30;
    s.device = i == 5 ? 1 : 0;  // one reading of another device
    t.gpu_metrics.push_back(s);
  }
  GpuProcessSeen other;
  other.device = 0;
  other.pid = 4242;
  other.memory_bytes = uint64_t{31} << 30;
  other.first_seen_ns = 7'500'000;
  other.last_seen_ns = 997'500'000;
  for (int64_t i = 0; i < 40; ++i) other.busy_sample_ns.push_back(7'500'000 + i * 10 * kMs);
  t.gpu_processes.push_back(other);
  GpuProcessSeen quiet;  // seen, never busy
  quiet.device = 1;
  quiet.pid = std::numeric_limits<int64_t>::max();
  quiet.memory_bytes = 1;
  quiet.first_seen_ns = quiet.last_seen_ns = 5 * kMs;
  t.gpu_processes.push_back(quiet);
  for (int64_t i = 0; i < 100; ++i) {
    GpuThroughputSample s;
    s.start_ns = i * 10 * kMs;
    s.end_ns = s.start_ns + 10 * kMs;
    s.sm_active_pct = 50.0f + static_cast<float>(i) / 3.0f;  // no short decimal
    s.tensor_active_pct = i % 2 == 0 ? 12.5f : -1.0f;        // some not measured
    s.dram_pct = 0.1f * static_cast<float>(i);
    s.pcie_read_bytes_per_s = 1.2345678e10f;
    s.pcie_write_bytes_per_s = 3.0e-7f;
    s.nvlink_read_bytes_per_s = std::numeric_limits<float>::max();
    s.nvlink_write_bytes_per_s = std::numeric_limits<float>::denorm_min();
    t.gpu_throughput.push_back(s);
  }
  t.info.source = "gpuidle";
  t.info.gpu_throughput_unavailable = "";
  t.Finalize();
  return t;
}

absl::StatusOr<Timeline> ReadText(absl::string_view text, size_t chunk_bytes = size_t{1} << 16) {
  absl::StatusOr<std::unique_ptr<ByteSource>> source = OpenMemoryByteSource(text);
  if (!source.ok()) return source.status();
  return ReadKinetoTrace(**source, chunk_bytes);
}

// The first field in which the readings of two timelines differ, "" if none.
std::string FirstReadingDifference(const Timeline& a, const Timeline& b) {
  if (a.info.gpu_throughput_unavailable != b.info.gpu_throughput_unavailable) {
    return "gpu_throughput_unavailable";
  }
  if (a.info.device_times_made_up != b.info.device_times_made_up) return "device_times_made_up";
  if (a.gpu_metrics.size() != b.gpu_metrics.size()) {
    return absl::StrCat("reading count ", a.gpu_metrics.size(), " != ", b.gpu_metrics.size());
  }
  for (size_t i = 0; i < a.gpu_metrics.size(); ++i) {
    const GpuMetricSample& x = a.gpu_metrics[i];
    const GpuMetricSample& y = b.gpu_metrics[i];
    const auto fields = [](const GpuMetricSample& s) {
      return std::vector<uint64_t>{static_cast<uint64_t>(s.time_ns),
                                   static_cast<uint64_t>(s.device),
                                   s.sm_clock_mhz,
                                   s.sm_clock_max_mhz,
                                   s.memory_clock_mhz,
                                   s.memory_clock_max_mhz,
                                   s.power_mw,
                                   s.power_limit_mw,
                                   s.temperature_c,
                                   s.utilization_percent,
                                   s.clock_events,
                                   s.has_clock_events,
                                   s.pcie_generation,
                                   s.pcie_generation_max,
                                   s.pcie_width,
                                   s.pcie_width_max,
                                   s.pcie_replays,
                                   s.memory_used_bytes,
                                   s.memory_total_bytes};
    };
    if (fields(x) != fields(y)) {
      return absl::StrCat("reading #", i, ": ", absl::StrJoin(fields(x), ","),
                          " != ", absl::StrJoin(fields(y), ","));
    }
  }
  if (a.gpu_processes.size() != b.gpu_processes.size()) return "process count";
  for (size_t i = 0; i < a.gpu_processes.size(); ++i) {
    const GpuProcessSeen& x = a.gpu_processes[i];
    const GpuProcessSeen& y = b.gpu_processes[i];
    if (x.device != y.device || x.pid != y.pid || x.memory_bytes != y.memory_bytes ||
        x.first_seen_ns != y.first_seen_ns || x.last_seen_ns != y.last_seen_ns ||
        x.busy_sample_ns != y.busy_sample_ns) {
      return absl::StrCat("process #", i);
    }
  }
  if (a.gpu_throughput.size() != b.gpu_throughput.size()) return "throughput sample count";
  for (size_t i = 0; i < a.gpu_throughput.size(); ++i) {
    const GpuThroughputSample& x = a.gpu_throughput[i];
    const GpuThroughputSample& y = b.gpu_throughput[i];
    // Bit for bit: the shortest decimal reads back as the same float.
    const auto figures = [](const GpuThroughputSample& s) {
      return std::vector<float>{
          s.sm_active_pct,           s.tensor_active_pct,      s.dram_pct,
          s.pcie_read_bytes_per_s,   s.pcie_write_bytes_per_s, s.nvlink_read_bytes_per_s,
          s.nvlink_write_bytes_per_s};
    };
    if (x.start_ns != y.start_ns || x.end_ns != y.end_ns || x.device != y.device ||
        figures(x) != figures(y)) {
      return absl::StrCat("throughput sample #", i, ": ", absl::StrJoin(figures(x), ","),
                          " != ", absl::StrJoin(figures(y), ","));
    }
  }
  return "";
}

std::string GpuMetricsJson(const Timeline& t) {
  absl::StatusOr<Report> r = Analyze(t, AnalysisOptions());
  if (!r.ok()) return r.status().ToString();
  r->inputs.clear();
  r->source.clear();
  absl::StatusOr<std::string> json = FormatReport(*r, "json");
  if (!json.ok()) return json.status().ToString();
  rapidjson::Document doc;
  doc.Parse(json->c_str(), json->size());
  if (doc.HasParseError() || doc["devices"].Empty() ||
      !doc["devices"][0].HasMember("gpu_metrics")) {
    return "(none)";
  }
  rapidjson::StringBuffer text;
  rapidjson::Writer<rapidjson::StringBuffer> writer(text);
  doc["devices"][0]["gpu_metrics"].Accept(writer);
  return text.GetString();
}

TEST(GpuReadingsTrace, ReadingsProcessesAndThroughputComeBackFieldByField) {
  Timeline t = RunWithReadings();
  t.info.gpu_throughput_unavailable = "";
  absl::StatusOr<Timeline> back = ReadText(FormatGpuidleTrace(t));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(FirstReadingDifference(t, *back), "");
  EXPECT_THAT(back->info.warnings, IsEmpty());
  EXPECT_THAT(back->gpu_metrics, SizeIs(200));
  EXPECT_THAT(back->gpu_processes, SizeIs(2));
  EXPECT_THAT(back->gpu_throughput, SizeIs(100));
}

TEST(GpuReadingsTrace, ReadingsComeBackInChunksOfAnySize) {
  const Timeline t = RunWithReadings();
  const std::string trace = FormatGpuidleTrace(t);
  for (size_t chunk : {size_t{7}, size_t{64}, size_t{4096}}) {
    absl::StatusOr<Timeline> back = ReadText(trace, chunk);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(FirstReadingDifference(t, *back), "") << "chunk " << chunk;
  }
}

TEST(GpuReadingsTrace, WhyThroughputWasUnavailableComesBack) {
  Timeline t = RunWithReadings();
  t.gpu_throughput.clear();
  t.info.gpu_throughput_unavailable = "device 0: PM sampling needs \"admin\" permissions";
  const std::string trace = FormatGpuidleTrace(t);
  EXPECT_THAT(trace, Not(HasSubstr("\"gpu_throughput\":")));
  absl::StatusOr<Timeline> back = ReadText(trace);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(FirstReadingDifference(t, *back), "");
}

// The gpuidle trace of a Kineto trace's range-profiler ranges keeps their mark, and its analysis
// names the counters' source as the first one did.
TEST(GpuReadingsTrace, RangeProfilerCountersComeBackAsSuch) {
  Timeline t = RunWithReadings();
  t.info.device_times_made_up = true;
  const std::string trace = FormatGpuidleTrace(t);
  EXPECT_THAT(trace, HasSubstr(R"("device_times_made_up": true)"));
  absl::StatusOr<Timeline> back = ReadText(trace);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(FirstReadingDifference(t, *back), "");
  EXPECT_TRUE(back->info.device_times_made_up);
  EXPECT_THAT(back->info.warnings,
              ElementsAre(HasSubstr("this gpuidle trace was written from CUPTI range-profiler "
                                    "ranges")));
  EXPECT_THAT(GpuMetricsJson(*back), HasSubstr(R"("source":"range_profiler")"));
  // A value of the wrong type is refused, as the rest of the "gpuidle" object's are.
  std::string other = trace;
  other.replace(other.find(R"("device_times_made_up": true)"), 28,
                R"("device_times_made_up": "yes")");
  EXPECT_THAT(ReadText(other).status().message(),
              HasSubstr(R"("device_times_made_up" must be a boolean, not a string)"));
}

TEST(GpuReadingsTrace, AnalysisOfTheTraceGivesTheLiveReportsGpuMetrics) {
  const Timeline t = RunWithReadings();
  absl::StatusOr<Timeline> back = ReadText(FormatTraceWithGaps(t, nullptr));
  ASSERT_TRUE(back.ok()) << back.status();
  const std::string live = GpuMetricsJson(t);
  EXPECT_THAT(live, Not(HasSubstr("(none)")));
  EXPECT_EQ(GpuMetricsJson(*back), live);
}

TEST(GpuReadingsTrace, TraceWithoutReadingsReadsWithoutThem) {
  Timeline t = RunWithReadings();
  t.gpu_metrics.clear();
  t.gpu_processes.clear();
  t.gpu_throughput.clear();
  const std::string trace = FormatGpuidleTrace(t);
  EXPECT_THAT(trace, Not(HasSubstr("gpu_metrics")));
  EXPECT_THAT(trace, Not(HasSubstr("\"ph\":\"C\"")));
  absl::StatusOr<Timeline> back = ReadText(trace);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_THAT(back->gpu_metrics, IsEmpty());
  EXPECT_THAT(back->info.warnings, IsEmpty());
}

TEST(GpuReadingsTrace, OlderTracesWithoutReadingsStillRead) {
  // As gpuidle wrote them before the readings: "gpuidle.trace/2" and /1, no reading keys.
  for (absl::string_view format : {"gpuidle.trace/1", "gpuidle.trace/2"}) {
    absl::StatusOr<Timeline> back = ReadText(
        absl::StrCat(R"({"gpuidle": {"format": ")", format, R"(", "pid": 7}, "traceEvents": [
        {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1.000,"dur":2.000,
         "args":{"device":0}}]})"));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_TRUE(back->HasActivity());
    EXPECT_THAT(back->gpu_metrics, IsEmpty());
    EXPECT_THAT(back->info.warnings, IsEmpty());
  }
}

// Counter events: on the device's process, one per series and change, with numeric args only,
// ignored by the reader.
TEST(GpuReadingsTrace, ReadingsAreDrawnAsCounterTracksOnTheirDevice) {
  const Timeline t = RunWithReadings();
  const std::string trace = FormatGpuidleTrace(t);
  rapidjson::Document doc;
  doc.Parse(trace.c_str(), trace.size());
  ASSERT_FALSE(doc.HasParseError());
  std::set<std::string> tracks;
  std::set<int> process_names;
  int power_limit_events = 0;
  for (const rapidjson::Value& e : doc["traceEvents"].GetArray()) {
    const absl::string_view ph = e["ph"].GetString();
    if (ph == "M" && absl::string_view(e["name"].GetString()) == "process_name") {
      process_names.insert(e["pid"].GetInt());
    }
    if (ph != kCounterPhase) continue;
    EXPECT_EQ(absl::string_view(e["cat"].GetString()), kCounterCategory);
    ASSERT_TRUE(e.HasMember("ts") && e["ts"].IsNumber());
    EXPECT_GE(e["ts"].GetDouble(), 0);
    const int device = e["pid"].GetInt();
    EXPECT_TRUE(device == 0 || device == 1);
    ASSERT_TRUE(e.HasMember("args") && e["args"].MemberCount() > 0);
    for (auto it = e["args"].MemberBegin(); it != e["args"].MemberEnd(); ++it) {
      EXPECT_TRUE(it->value.IsNumber()) << it->name.GetString();
      EXPECT_GE(it->value.GetDouble(), 0);
      // Perfetto names a counter track "<event name> <arg>".
      tracks.insert(absl::StrCat(e["name"].GetString(), " ", it->name.GetString()));
    }
    if (device == 0 && absl::string_view(e["name"].GetString()) == "power") ++power_limit_events;
  }
  EXPECT_EQ(tracks,
            (std::set<std::string>{"SM clock MHz", "SM clock max MHz", "power W", "power limit W",
                                   "temperature C", "memory used GiB", "memory total GiB",
                                   "NVML utilization %", "SM active %", "tensor active %",
                                   "DRAM throughput %", "PCIe read GB/s", "PCIe write GB/s",
                                   "NVLink read GB/s", "NVLink write GB/s"}));
  // Every device with a counter has a named process (device 1 ran no work).
  EXPECT_EQ(process_names.count(0) + process_names.count(1), 2u);
  // Power changes between busy and idle readings; each event says both figures.
  EXPECT_GT(power_limit_events, 100);
  // The exact figures: 698.123 W of 700 W.
  EXPECT_THAT(trace, HasSubstr(R"("args":{"W":698.123,"limit W":700.000})"));
  // Not measured: the tensor pipes' odd samples leave their series alone.
  EXPECT_THAT(trace, HasSubstr(R"("name":"tensor active")"));
}

TEST(GpuReadingsTrace, CounterEventsAreIgnoredByTheReader) {
  // Counters alone, as another tool might write them on a device's process.
  absl::StatusOr<Timeline> back = ReadText(
      R"({"traceEvents": [
      {"ph":"C","cat":"gpuidle_counter","name":"SM clock","pid":0,"tid":0,"ts":1.000,
       "args":{"MHz":1980}},
      {"ph":"C","name":"power","pid":0,"ts":2.000,"args":{"W":300}},
      {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":5.000,"dur":2.000}]})");
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->devices.size(), 1u);
  EXPECT_EQ(back->devices[0].ops.size(), 1u);
  EXPECT_THAT(back->gpu_metrics, IsEmpty());
  EXPECT_THAT(back->info.warnings, IsEmpty());
}

// A malformed table is dropped whole with one warning that names it and what is wrong; the
// trace's timeline and its other tables read as ever.
TEST(GpuReadingsTrace, MalformedReadingsAreDroppedWithAWarningThatSaysWhy) {
  const auto warnings = [](absl::string_view tables) {
    absl::StatusOr<Timeline> t = ReadText(absl::StrCat(
        R"({"gpuidle": {"format": "gpuidle.trace/2", )", tables,
        R"(}, "traceEvents": [{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1.000,
        "dur":2.000}]})"));
    EXPECT_TRUE(t.ok()) << t.status();
    if (!t.ok()) return std::string();
    EXPECT_TRUE(t->HasActivity());
    EXPECT_THAT(t->gpu_metrics, IsEmpty()) << tables;
    EXPECT_THAT(t->gpu_throughput, IsEmpty()) << tables;
    EXPECT_THAT(t->gpu_processes, IsEmpty()) << tables;
    return absl::StrJoin(t->info.warnings, "\n");
  };
  EXPECT_THAT(warnings(R"("gpu_metrics": [1, 2])"),
              HasSubstr("\"gpu_metrics\" were not read: must be an object of columns"));
  EXPECT_THAT(warnings(R"("gpu_metrics": 5)"), HasSubstr("must be an object of columns"));
  EXPECT_THAT(warnings(R"("gpu_metrics": {"time_ns": 5})"),
              HasSubstr("column \"time_ns\" must be an array"));
  EXPECT_THAT(warnings(R"("gpu_metrics": {"time_ns": [1, 2], "device": [0]})"),
              HasSubstr("its columns differ in length (1 to 2)"));
  EXPECT_THAT(warnings(R"("gpu_metrics": {"time_ns": [1, "2"]})"),
              HasSubstr("column \"time_ns\", row 1: a string is not an integer"));
  EXPECT_THAT(warnings(R"("gpu_metrics": {"device": [-1]})"),
              HasSubstr("column \"device\", row 0: -1 is not an integer from 0"));
  EXPECT_THAT(warnings(R"("gpu_metrics": {"sm_clock_mhz": [4294967296]})"),
              HasSubstr("4294967296 is not an integer from 0 to 4294967295"));
  EXPECT_THAT(warnings(R"("gpu_metrics": {"time_ns": [9223372036854775807]})"),
              HasSubstr("is not an integer from"));
  EXPECT_THAT(warnings(R"("gpu_metrics": {"time_ns": [1], "time_ns": [2]})"),
              HasSubstr("column \"time_ns\" appears twice"));
  EXPECT_THAT(warnings(R"("gpu_metrics": {"time_ns": [[1]]})"), HasSubstr("nested too deep"));
  EXPECT_THAT(warnings(R"("gpu_throughput": {"sm_active_pct": ["x"]})"),
              HasSubstr("a string is not a finite number"));
  EXPECT_THAT(warnings(R"("gpu_throughput": {"start_ns": [5], "end_ns": [4]})"),
              HasSubstr("a sample ends before it starts"));
  EXPECT_THAT(warnings(R"("gpu_processes": {"busy_sample_ns": [1]})"),
              HasSubstr("a number is not an array of time stamps"));
  EXPECT_THAT(warnings(R"("gpu_processes": {"first_seen_ns": [5], "last_seen_ns": [4]})"),
              HasSubstr("last seen before it was first seen"));
  // A key twice is an error, as for every key of the "gpuidle" object.
  absl::StatusOr<Timeline> twice = ReadText(
      R"({"gpuidle": {"format": "gpuidle.trace/2", "gpu_metrics": {}, "gpu_metrics": {}},
          "traceEvents": []})");
  ASSERT_FALSE(twice.ok());
  EXPECT_THAT(twice.status().message(), HasSubstr("\"gpu_metrics\" appears twice"));
  // Unknown columns (a newer writer's) are skipped, whatever they hold.
  EXPECT_EQ(warnings(R"("gpu_metrics": {"future": [{"a": [1]}, "x"]})"), "");
}

TEST(GpuReadingsTrace, OneTableDroppedLeavesTheOthers) {
  const Timeline t = RunWithReadings();
  std::string trace = FormatGpuidleTrace(t);
  // Spoil the PM samples' first SM figure.
  const size_t at = trace.find("\"sm_active_pct\": [");
  ASSERT_NE(at, std::string::npos);
  trace.insert(at + std::string("\"sm_active_pct\": [").size(), "true,");
  absl::StatusOr<Timeline> back = ReadText(trace);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_THAT(back->gpu_throughput, IsEmpty());
  EXPECT_THAT(back->gpu_metrics, SizeIs(200));
  EXPECT_THAT(back->gpu_processes, SizeIs(2));
  EXPECT_THAT(absl::StrJoin(back->info.warnings, "\n"),
              HasSubstr("\"gpu_throughput\" were not read"));
}

// No recorded gpuidle trace with readings exists yet (tests/data/gpu_runs/2026-12-06_metrics
// keeps reports only); recorded gpuidle traces from before the readings read as ever.
TEST(GpuReadingsTrace, RecordedGpuidleTracesWithoutReadingsReadWithoutWarnings) {
  for (const char* name :
       {"2026-12-01_overhead/item_sync.trace.json.gz", "2026-12-01_ranks/one_rank.trace.json.gz"}) {
    SCOPED_TRACE(name);
    absl::StatusOr<Timeline> t =
        ReadTraceFile(absl::StrCat(GPUIDLE_TEST_DATA_DIR, "/gpu_runs/", name));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->info.source, "gpuidle");
    EXPECT_TRUE(t->HasActivity());
    EXPECT_THAT(t->gpu_metrics, IsEmpty());
    EXPECT_THAT(absl::StrJoin(t->info.warnings, "\n"), Not(HasSubstr("device readings")));
  }
}

TEST(GpuReadingsTrace, TablesBeyondTheRowLimitAreDroppedWithoutHoldingThem) {
  // One column of kMaxReadingRows + 1 zeros: refused at the limit.
  std::string column;
  column.reserve(2 * (kineto::kMaxReadingRows + 1));
  for (size_t i = 0; i <= kineto::kMaxReadingRows; ++i) column.append(i == 0 ? "0" : ",0");
  absl::StatusOr<Timeline> back =
      ReadText(absl::StrCat(R"({"gpuidle": {"format": "gpuidle.trace/2", "gpu_metrics": )",
                            R"({"power_mw": [)", column, R"(]}}, "traceEvents": []})"),
               size_t{1} << 20);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_THAT(back->gpu_metrics, IsEmpty());
  EXPECT_THAT(absl::StrJoin(back->info.warnings, "\n"),
              HasSubstr(absl::StrCat("more than ", kineto::kMaxReadingRows, " rows")));
}

}  // namespace
}  // namespace gpuidle::internal
