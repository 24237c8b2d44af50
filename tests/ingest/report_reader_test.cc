#include "ingest/report_reader.h"

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gpuidle/analyze.h"
#include "gpuidle/report.h"
#include "gtest/gtest.h"
#include "ingest/read_trace.h"
#include "report/writer.h"
#include "testing/report_json.h"
#include "testing/temp_dir.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::Gzip;
using ::gpuidle::testing::ReadFileOrDie;
using ::gpuidle::testing::ReadsBackAs;
using ::gpuidle::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr int64_t kMs = 1'000'000;

std::string Json(const Report& r) { return MakeJsonWriter()->Write(r); }

std::string Message(const absl::Status& s) { return std::string(s.message()); }

std::string DataPath(const std::string& relative) {
  return std::string(GPUIDLE_TEST_DATA_DIR) + "/" + relative;
}

// Files in a folder of tests/data whose names end in `suffix`, sorted.
std::vector<std::string> DataFiles(const std::string& folder, absl::string_view suffix) {
  std::vector<std::string> paths;
  for (const auto& e : std::filesystem::directory_iterator(DataPath(folder))) {
    const std::string p = e.path().string();
    if (absl::EndsWith(p, suffix)) paths.push_back(p);
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

// The JSON read back and written again: must be `json` itself, byte for byte.
void ExpectRoundTrip(const std::string& json, const std::string& name) {
  absl::StatusOr<Report> read = ParseReportJson(json, name);
  ASSERT_TRUE(read.ok()) << read.status();
  const std::string again = Json(*read);
  if (again == json) return;
  size_t at = 0;
  while (at < again.size() && at < json.size() && again[at] == json[at]) ++at;
  ADD_FAILURE() << name << ": written again differs at byte " << at << ":\n--- first:\n"
                << json.substr(at > 300 ? at - 300 : 0, 600) << "\n--- again:\n"
                << again.substr(at > 300 ? at - 300 : 0, 600);
}

// A report with every field the writer knows set to something other than its default.
Report FullReport() {
  Report r;
  r.source = "gpuidle";
  r.inputs = {"rank0.trace.json.gz", "rank1.trace.json.gz"};
  r.window_start_ns = 1'000;
  r.window_end_ns = 1'000 + 100 * kMs;
  r.visible_device_count = 8;
  r.unused_devices = {2, 3};
  r.visible_devices = {{0, 0, 4, "GPU-aaaa", "NVIDIA H200", true},
                       {0, 1, std::nullopt, "", "NVIDIA H200", false}};
  RankReport k0;
  k0.rank = 0;
  k0.host = "node-a";
  k0.pid = 4242;
  k0.world_size = 2;
  k0.wall_clock_offset_ns = 1'700'000'000'000'000'000;
  k0.collectives = 40;
  k0.matched = 39;
  k0.wait_ns = 30 * kMs;
  k0.own_cause = Subcause::kLaunchOverhead;
  k0.own_cause_share = 0.625;
  RankReport k1;
  k1.rank = 1;
  k1.clock_offset_ns = -1234;
  k1.collectives = 40;
  k1.matched = 39;
  k1.arrived_last = 38;
  k1.late_ns = 29 * kMs;
  k1.own_cause = Subcause::kHost;
  k1.own_cause_share = 0.1 + 0.2;  // a double without a short decimal form
  r.ranks = {k0, k1};
  r.straggler_rank = 1;
  r.stragglers = {1};
  r.clock = {"aligned", 2, 850, 0.975};
  r.step_source = "ProfilerStep";
  r.warnings = {"rank 2 of 3 missing: waits are underestimated"};
  r.dropped_records = 7;
  r.zero_timestamp_records = 3;
  r.record_limit_reached = true;
  r.coverage = Coverage{3, 30 * kMs, 100 * kMs};
  r.options.launch_gap_max_ns = 2 * kMs;
  r.options.dispatch_latency_max_ns = 50'000;
  r.options.data_range_patterns = {"DataLoader", "my_loader"};
  r.options.skip_steps = 2;

  for (int rank = 0; rank < 2; ++rank) {
    DeviceReport d;
    d.rank = rank;
    d.device = rank;
    d.name = "NVIDIA H200";
    d.window_start_ns = 1'000;
    d.steady_start_ns = 1'000 + 5 * kMs;
    d.steady_end_ns = 1'000 + 90 * kMs;
    d.window_end_ns = 1'000 + 100 * kMs;
    d.window_ns = rank == 0 ? 100 * kMs : 83 * kMs;  // the phases' sum
    d.busy_ns = rank == 0 ? 60 * kMs : 45 * kMs;     // with idle and one-off: the steady state
    d.idle_ns = 24 * kMs;
    d.idle[Subcause::kHost] = 20 * kMs;
    d.idle[Subcause::kKernelGap] = 4 * kMs;
    d.one_off = {{Phase::kStartUp, OneOffKind::kCudaInit, 3 * kMs, 1, "cuInit"},
                 {Phase::kStartUp, OneOffKind::kSetUp, 2 * kMs, 1, ""},
                 {Phase::kSteady, OneOffKind::kCompilation, 1 * kMs, 2, "cuModuleLoadData"},
                 {Phase::kWindDown, OneOffKind::kWindDown, 10 * kMs, 1, ""}};
    if (rank == 1) d.phase_ns = std::array<int64_t, kNumPhases>{4 * kMs, 70 * kMs, 9 * kMs};
    d.step_count = 12;
    d.kernel_count = 3000;
    d.memcpy_count = 5;
    d.memset_count = 1;
    d.graph_replays = GraphReplays{.launches = 24, .kernels = 600, .kernels_alone = 2400};
    d.comm_ns = 35 * kMs;
    d.exposed_comm_ns = 33 * kMs;
    d.comm_wait_ns = rank == 0 ? 30 * kMs : 1 * kMs;
    CollectiveStats all_reduce{"0", "allreduce", 39, 34 * kMs, 32 * kMs, 39 << 20, 29 * kMs};
    CollectiveStats broadcast{"", "broadcast", 1, 1 * kMs, 1 * kMs, std::nullopt, std::nullopt};
    d.collectives = {all_reduce, broadcast};
    d.collective_timings = {{2'000, 3'000, -1, -1, 1},
                            {10 * kMs, 11 * kMs, 0, 1 << 20, 0},
                            {20 * kMs, 21 * kMs + 17, 1, 1 << 20, 0}};
    d.collectives_not_listed = 5;
    if (rank == 0) {  // NVML's readings
      GpuMetrics& m = d.gpu_metrics.emplace();
      m.samples = 300;
      m.busy_samples = 280;
      m.idle_samples = 20;
      m.period_ns = 100 * kMs;
      m.sm_clock_max_mhz = 1980;
      m.sm_clock_median_mhz = 1410;
      m.slow_clock_share = 0.62;
      m.slow_clock_reason = "power_cap";
      m.power_median_mw = 690'000;
      m.power_limit_mw = 700'000;
      m.temperature_max_c = 71;
      m.pcie_generation = 4;
      m.pcie_generation_max = 5;
      m.pcie_width = 16;
      m.pcie_width_max = 16;
      m.pcie_replays = 3;
      m.memory_used_max_bytes = uint64_t{61} << 30;
      m.memory_total_bytes = uint64_t{80} << 30;
      m.other_processes = {{4242, uint64_t{31} << 30, 12}};
      m.findings = {{"clocks", "busy, but at 1.41 of 1.98 GHz", "check the power limit"}};
      // The timeline's readings per bin: NVML in two bins, PM samples in the last two.
      d.timeline.start_ns = 1'000;
      d.timeline.bin_ns = 50 * kMs;
      d.timeline.bins.resize(2);
      d.timeline.bins[0].busy_ns = 30 * kMs;
      d.timeline.bins[1].one_off_ns = 50 * kMs;
      d.timeline.sm_clock_max_mhz = 1980;
      d.timeline.power_limit_mw = 700'000;
      d.timeline.gpu.resize(2);
      d.timeline.gpu[0] = {.samples = 5, .sm_clock_mhz = 1410, .power_mw = 650'000};
      d.timeline.gpu[1] = {.samples = 0, .pm_ns = 50 * kMs, .sm_active_pct = 82.5, .dram_pct = 40};
      // A serving process's requests in flight: 0.8 and 1.5 in the bins' traced time.
      d.timeline.in_flight_ns = {24 * kMs, 75 * kMs};
    }
    r.devices.push_back(d);

    StepReport s;
    s.rank = rank;
    s.device = rank;
    s.name = "ProfilerStep#3";
    s.start_ns = 10 * kMs;
    s.end_ns = 20 * kMs;
    s.busy_ns = 7 * kMs;
    s.idle[Subcause::kHost] = 2 * kMs;
    s.one_off_ns = 1 * kMs;
    if (rank == 0) s.comm_wait_ns = 3 * kMs;
    if (rank == 0) {
      s.gpu = StepReport::Gpu{.samples = 10,
                              .sm_clock_median_mhz = 1410,
                              .sm_clock_max_mhz = 1980,
                              .power_median_mw = 690'000,
                              .power_limit_mw = 700'000,
                              .slow_clock_share = 0.5,
                              .sm_active_pct = 82.5};
    }
    r.steps.push_back(s);
  }
  r.steps_not_listed = 4;
  r.longest_gaps = {{0, 0, 30 * kMs, 32 * kMs, Subcause::kHost, "ampere_sgemm", 77,
                     "no CUDA call for 2000 us", "train.py(42): step"}};
  r.offenders = {{Subcause::kHostSync, "cudaStreamSynchronize", "aten::item", 5 * kMs, 9}};
  r.advice = {{Subcause::kHost, 0.8, "move host work off the launching thread"},
              {Subcause::kKernelGap, std::numeric_limits<double>::quiet_NaN(), "fuse kernels"}};
  return r;
}

TEST(ReportReader, ReadsBackEveryFieldOfAFullReport) {
  const Report r = FullReport();
  const std::string json = Json(r);
  absl::StatusOr<Report> read = ParseReportJson(json, "full.json");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(Json(*read), json);

  // And the values themselves, where the JSON spells them differently from the struct.
  ASSERT_EQ(read->devices.size(), 2u);
  const DeviceReport& d0 = read->devices[0];
  EXPECT_EQ(d0.window_start_ns, 1'000);
  EXPECT_EQ(d0.window_end_ns, 1'000 + 100 * kMs);
  EXPECT_FALSE(d0.phase_ns.has_value());
  ASSERT_TRUE(read->devices[1].phase_ns.has_value());
  EXPECT_EQ((*read->devices[1].phase_ns)[1], 70 * kMs);
  ASSERT_EQ(d0.one_off.size(), 4u);
  EXPECT_EQ(d0.one_off[2].phase, Phase::kSteady);
  EXPECT_EQ(d0.one_off[2].kind, OneOffKind::kCompilation);
  ASSERT_EQ(d0.collective_timings.size(), 3u);
  EXPECT_EQ(d0.collective_timings[2].end_ns, 21 * kMs + 17);
  EXPECT_EQ(d0.collective_timings[0].seq, -1);
  EXPECT_EQ(d0.collective_timings[0].kind, 1);
  EXPECT_EQ(d0.collectives_not_listed, 5);
  ASSERT_EQ(d0.collectives.size(), 2u);
  EXPECT_EQ(d0.collectives[0].bytes, int64_t{39} << 20);
  EXPECT_FALSE(d0.collectives[1].wait_ns.has_value());
  EXPECT_EQ(d0.LostNs(), 54 * kMs);
  EXPECT_EQ(read->steps[0].comm_wait_ns, 3 * kMs);
  EXPECT_FALSE(read->steps[1].comm_wait_ns.has_value());
  ASSERT_EQ(read->ranks.size(), 2u);
  EXPECT_EQ(read->ranks[0].pid, 4242);
  EXPECT_EQ(read->ranks[1].own_cause, Subcause::kHost);
  EXPECT_EQ(read->ranks[1].own_cause_share, 0.1 + 0.2);
  EXPECT_EQ(read->ranks[1].clock_offset_ns, -1234);
  EXPECT_EQ(read->straggler_rank, 1);
  EXPECT_EQ(read->clock.method, "aligned");
  EXPECT_EQ(read->clock.matched_share, 0.975);
  ASSERT_EQ(read->visible_devices.size(), 2u);
  EXPECT_EQ(read->visible_devices[0].physical_index, 4);
  EXPECT_FALSE(read->visible_devices[1].physical_index.has_value());
  EXPECT_TRUE(std::isnan(read->advice[1].share_of_lost_time));
  EXPECT_EQ(read->options.skip_steps, 2);
  EXPECT_THAT(read->options.data_range_patterns, ::testing::ElementsAre("DataLoader", "my_loader"));
  ASSERT_TRUE(read->coverage.has_value());
  EXPECT_EQ(read->coverage->windows, 3);
  EXPECT_EQ(read->dropped_records, 7u);
  EXPECT_TRUE(read->record_limit_reached);
  // The readings per step and per bin, absent where there were none.
  ASSERT_TRUE(read->steps[0].gpu.has_value());
  EXPECT_EQ(read->steps[0].gpu->sm_clock_median_mhz, 1410u);
  EXPECT_EQ(read->steps[0].gpu->power_limit_mw, 700'000u);
  EXPECT_EQ(read->steps[0].gpu->slow_clock_share, 0.5);
  EXPECT_EQ(read->steps[0].gpu->sm_active_pct, 82.5);
  EXPECT_LT(read->steps[0].gpu->dram_pct, 0);  // not measured
  EXPECT_FALSE(read->steps[1].gpu.has_value());
  ASSERT_EQ(d0.timeline.gpu.size(), 2u);
  EXPECT_EQ(d0.timeline.sm_clock_max_mhz, 1980u);
  EXPECT_EQ(d0.timeline.gpu[0].samples, 5);
  EXPECT_EQ(d0.timeline.gpu[0].power_mw, 650'000u);
  EXPECT_LT(d0.timeline.gpu[0].sm_active_pct, 0);
  EXPECT_EQ(d0.timeline.gpu[1].pm_ns, 50 * kMs);
  EXPECT_EQ(d0.timeline.gpu[1].sm_active_pct, 82.5);
  EXPECT_LT(d0.timeline.gpu[1].tensor_active_pct, 0);  // no bin measured it: no column
  EXPECT_THAT(json, Not(HasSubstr("tensor_active_pct")));
  EXPECT_TRUE(read->devices[1].timeline.gpu.empty());
  EXPECT_THAT(d0.timeline.in_flight_ns, ::testing::ElementsAre(24 * kMs, 75 * kMs));
  EXPECT_TRUE(read->devices[1].timeline.in_flight_ns.empty());
  EXPECT_THAT(json, HasSubstr("\"in_flight_ns\": [24000000, 75000000]"));
}

TEST(ReportReader, AnEmptyReportRoundTrips) { ExpectRoundTrip(Json(Report{}), "empty.json"); }

// Reports of real traces: analysed, written, read back, written again.
TEST(ReportReader, ReportsOfTheCommittedTracesRoundTrip) {
  std::vector<std::string> traces = DataFiles("traces/torch", ".json.gz");
  for (const std::string& p : DataFiles("traces/live", ".trace.json.gz")) traces.push_back(p);
  for (const std::string& p : DataFiles("traces/live_python", ".trace.json.gz")) {
    traces.push_back(p);
  }
  ASSERT_GE(traces.size(), 20u);
  for (const std::string& path : traces) {
    SCOPED_TRACE(path);
    absl::StatusOr<Report> r = AnalyzeTraceFiles({path});
    ASSERT_TRUE(r.ok()) << r.status();
    ExpectRoundTrip(Json(*r), path);
  }
  // Two ranks analysed together (comm_wait_ns set, two devices).
  absl::StatusOr<Report> job =
      AnalyzeTraceFiles({DataPath("traces/torch/nccl_straggler.rank0.json.gz"),
                         DataPath("traces/torch/nccl_straggler.rank1.json.gz")});
  ASSERT_TRUE(job.ok()) << job.status();
  ExpectRoundTrip(Json(*job), "nccl_straggler job");
}

// The reports live runs wrote (before this reader existed): read back, every field they have is
// the same, and what is written from them round-trips.
TEST(ReportReader, RecordedLiveReportsReadBack) {
  std::vector<std::string> reports = DataFiles("traces/live", ".report.json");
  for (const std::string& p : DataFiles("traces/live_python", ".report.json")) {
    reports.push_back(p);
  }
  for (const std::string& p : DataFiles("traces/unchanged", ".report.json")) reports.push_back(p);
  ASSERT_GE(reports.size(), 16u);
  for (const std::string& path : reports) {
    SCOPED_TRACE(path);
    const std::string recorded = ReadFileOrDie(path);
    absl::StatusOr<Report> read = ReadReportFile(path);
    ASSERT_TRUE(read.ok()) << read.status();
    const std::string written = Json(*read);
    EXPECT_TRUE(ReadsBackAs(written, recorded));
    ExpectRoundTrip(written, path);
  }
}

TEST(ReportReader, ReadsGzipFilesAndRoutesInputs) {
  TempDir dir;
  const std::string json = Json(FullReport());
  const std::string gz = dir.Write("report.json.gz", Gzip(json));
  absl::StatusOr<Report> read = ReadReportFile(gz);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(Json(*read), json);

  absl::StatusOr<InputFile> as_input = ReadInputFile(gz);
  ASSERT_TRUE(as_input.ok()) << as_input.status();
  ASSERT_TRUE(as_input->report.has_value());
  EXPECT_EQ(Json(*as_input->report), json);

  // A trace is read as a trace, its first bytes given back to the trace reader.
  absl::StatusOr<InputFile> trace =
      ReadInputFile(DataPath("traces/torch/nccl_straggler.rank0.json.gz"));
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_FALSE(trace->report.has_value());
  EXPECT_TRUE(trace->trace.HasActivity());

  // A broken trace gives the trace reader's error, as ReadTraceFile does.
  const std::string trace_bytes =
      ReadFileOrDie(DataPath("traces/torch/nccl_straggler.rank0.json.gz"));
  for (size_t cut : {size_t{30}, size_t{1000}, trace_bytes.size() / 2}) {
    SCOPED_TRACE(cut);
    const std::string p = dir.Write("cut.json.gz", trace_bytes.substr(0, cut));
    const absl::Status as_trace = ReadTraceFile(p).status();
    EXPECT_FALSE(as_trace.ok());
    EXPECT_EQ(ReadInputFile(p).status(), as_trace);
  }

  // A report's errors name the file.
  const std::string bad = dir.Write("bad.json", R"({"schema": "gpuidle.report/2", "source": 3})");
  absl::StatusOr<InputFile> bad_input = ReadInputFile(bad);
  ASSERT_FALSE(bad_input.ok());
  EXPECT_THAT(Message(bad_input.status()), StartsWith(bad + ": source: not a string"));
  EXPECT_EQ(ReadReportFile(dir.Path("missing.json")).status().code(), absl::StatusCode::kNotFound);
}

TEST(ReportReader, TellsReportsFromTraces) {
  EXPECT_TRUE(LooksLikeReportJson("{\n \"schema\": \"gpuidle.report/2\",\n"));
  EXPECT_TRUE(LooksLikeReportJson(R"({"schema":"gpuidle.report/9"})"));
  EXPECT_FALSE(LooksLikeReportJson(R"({"schemaVersion": 1, "traceEvents": []})"));
  EXPECT_FALSE(LooksLikeReportJson(R"({"traceEvents": [], "schema": "gpuidle.report/2"})"));
  EXPECT_FALSE(LooksLikeReportJson(R"({"schema": "gpuidle.trace/1"})"));
  EXPECT_FALSE(LooksLikeReportJson("[{\"schema\": \"gpuidle.report/2\"}]"));
  EXPECT_FALSE(LooksLikeReportJson("{\"schema\": \"gpuidle.rep"));
  EXPECT_FALSE(LooksLikeReportJson(""));
}

// The full report's JSON with `from` replaced by `to` (everywhere), parsed.
absl::Status Mutated(const std::string& from, const std::string& to) {
  std::string json = Json(FullReport());
  EXPECT_NE(json.find(from), std::string::npos) << from;
  json = absl::StrReplaceAll(json, {{from, to}});
  return ParseReportJson(json, "r.json").status();
}

// The full report with `from` replaced by `to`: refused as InvalidArgument with `message`.
struct Refusal {
  std::string from, to, message;
};
template <size_t N>
void ExpectRefused(const Refusal (&cases)[N]) {
  for (const Refusal& c : cases) {
    SCOPED_TRACE(c.to);
    const absl::Status s = Mutated(c.from, c.to);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(Message(s), HasSubstr(c.message));
  }
}

TEST(ReportReader, ErrorsNameTheFileAndTheField) {
  const Refusal cases[] = {
      {"\"busy_ns\": 60000000", "\"busy_ns\": \"60\"", "r.json: devices[0].busy_ns: not a 64-bit"},
      {"\"busy_ns\": 60000000", "\"busy_ns\": 6.5", "r.json: devices[0].busy_ns: not a 64-bit"},
      {"\"busy_ns\": 60000000", "\"busy_ns\": 99999999999999999999", "devices[0].busy_ns"},
      {"\"busy_ns\": 60000000", "\"xbusy_ns\": 1", "r.json: devices[0].busy_ns: missing"},
      {"\"device\": 1,", "\"device\": 4294967296,",
       "r.json: visible_devices[1].device: not a 32-bit"},
      {"\"kind\": [1, 0, 0]", "\"kind\": [1, 0, 2]",
       "r.json: devices[0].collective_timings.kind[2]: 2 is not an index into collectives"},
      {"\"kind\": [1, 0, 0]", "\"kind\": [1, 0]",
       "r.json: devices[0].collective_timings.kind: 2 rows, start_ns has 3"},
      {"\"duration_ns\": [1000,", "\"duration_ns\": [-1,",
       "r.json: devices[0].collective_timings.duration_ns[0]: negative"},
      {"\"start_ns\": [2000,", "\"start_ns\": [9223372036854775000,",
       "r.json: devices[0].collective_timings.start_ns[0]: not a time stamp"},
      {"\"start_ns\": [2000,", "\"start_ns\": [8070450532247928000,",
       "r.json: devices[0].collective_timings.duration_ns[0]: ends past the last time stamp"},
      {"\"duration_ns\": [1000,", "\"duration_ns\": [4503599627370497,",
       "r.json: devices[0].collective_timings.duration_ns[0]: negative or beyond 2^52 ns"},
      {"\"steady_start_ns\": 5001000", "\"steady_start_ns\": -9223372036854775807",
       "r.json: devices[0].steady_start_ns: -9223372036854775807 is not a time stamp"},
      {"\"end_ns\": 100001000\n }", "\"end_ns\": 9223372036854775807\n }",
       "r.json: window.end_ns: 9223372036854775807 is not a time stamp"},
      {"\"data_starved.host\": 20000000", "\"data_starved.host\": -1",
       "r.json: devices[0].idle_by_subcause.data_starved.host: negative"},
      {"\"data_starved.host\": 20000000", "\"data_starved.host\": 9223372036854775807",
       "r.json: devices[0].idle_by_subcause: the sum of the subcauses overflows"},
      {"\"comm_wait_ns\": 30000000", "\"comm_wait_ns\": 9223372036854775807",
       "r.json: devices[0].comm_wait_ns: 9223372036854775807 is more than comm_ns"},
      {"\"ns\": 3000000,\n       \"count\"", "\"ns\": -3,\n       \"count\"",
       "r.json: devices[0].phases.start_up.parts[0].ns: -3 is not a length of time"},
      {"\"collectives_not_listed\": 5", "\"collectives_not_listed\": -5",
       "devices[0].collectives_not_listed: negative"},
      {"\"launches\": 24", "\"launches\": -24",
       "r.json: devices[0].graph_replays.launches: -24 is not a count"},
      {"\"launches\": 24", "\"launches\": 601",
       "r.json: devices[0].graph_replays: more launches than kernels"},
      {"\"subcause\": \"data_starved.host\"", "\"subcause\": \"data_starved.hostile\"",
       "r.json: longest_gaps[0].subcause: unknown \"data_starved.hostile\""},
      {"\"cause\": \"data_starved\"", "\"cause\": \"launch_bound\"",
       "longest_gaps[0].cause: \"launch_bound\" is not the cause of"},
      {"\"kind\": \"cuda_init\"", "\"kind\": \"coffee\"",
       "r.json: devices[0].phases.start_up.parts[0].kind: unknown \"coffee\""},
      {"\"own_cause\": \"launch_bound.launch_overhead\"", "\"own_cause\": 3",
       "r.json: ranks[0].own_cause: not a qualified subcause"},
      {"\"straggler_rank\": 1", "\"straggler_rank\": \"1\"", "r.json: straggler_rank: not a 32"},
      {"\"used\": true", "\"used\": 1", "r.json: visible_devices[0].used: not true or false"},
      {"\"warnings\": [\n  \"rank", "\"warnings\": [\n  3, \"rank",
       "r.json: warnings[0]: not a str"},
      {"\"devices\": [", "\"devices\": 3, \"x\": [", "r.json: devices: not an array"},
      {"\"window\": {", "\"window\": [], \"x\": {", "r.json: window: not an object"},
      {"\"data_starved.host\": 20000000", "\"data_starved.host\": null",
       "r.json: devices[0].idle_by_subcause.data_starved.host: not a 64-bit"},
      {"\"schema\": \"gpuidle.report/2\"", "\"schema\": \"gpuidle.report/1\"",
       "r.json: schema \"gpuidle.report/1\": this gpuidle reads gpuidle.report/2"},
      {"\"schema\": \"gpuidle.report/2\"", "\"schema\": \"perfetto\"",
       "r.json: not a gpuidle report (schema \"perfetto\")"},
      {"\"in_flight_ns\": [24000000, 75000000]", "\"in_flight_ns\": [24000000]",
       "r.json: devices[0].timeline.in_flight_ns: 1 bins, busy_ns has 2"},
      {"\"in_flight_ns\": [24000000, 75000000]", "\"in_flight_ns\": [24000000, -1]",
       "r.json: devices[0].timeline.in_flight_ns[1]: not an integer within [0, "},
      {"\"in_flight_ns\": [24000000, 75000000]",
       "\"in_flight_ns\": [4611686018427387903, 4611686018427387903]",
       "r.json: devices[0].timeline.in_flight_ns: the bins' sum is beyond 2^62"},
      {"\"in_flight_ns\": [24000000, 75000000]", "\"in_flight_ns\": [24000000, 7.5]",
       "r.json: devices[0].timeline.in_flight_ns[1]: not an integer within [0, "},
  };
  ExpectRefused(cases);
  // The phases' spans must agree with the device's steady state.
  const absl::Status s = Mutated("\"steady\": {\n     \"start_ns\": 5001000",
                                 "\"steady\": {\n     \"start_ns\": 5001001");
  EXPECT_THAT(Message(s), HasSubstr("devices[0].phases.steady.start_ns: 5001001 is not "
                                    "steady_start_ns (5001000)"));
}

// Issue 29: the reader took what no trace can produce (negative times and counts, shares of
// 1e308, spans ending before they start, figures that do not add up), and the writers printed
// "traced -0.0% of 9223372037 s in -2 windows". The timeline's rules hold on read, each broken
// one named with its field.
TEST(ReportReader, AppliesTheTimelinesRules) {
  const Refusal cases[] = {
      {"\"busy_ns\": 60000000", "\"busy_ns\": -5",
       "r.json: devices[0].busy_ns: -5 is not a length of time gpuidle writes (0 to 2^52 ns)"},
      {"\"window_ns\": 100000000", "\"window_ns\": 1000000000000000000",
       "devices[0].window_ns: 1000000000000000000 is not a length of time"},
      {"\"windows\": 3", "\"windows\": -2", "r.json: coverage.windows: -2 is not a count"},
      {"\"share_of_lost_time\": 0.8", "\"share_of_lost_time\": 1e308",
       "r.json: advice[0].share_of_lost_time: 1e+308 is not within 0 to 1"},
      {"\"own_cause_share\": 0.625", "\"own_cause_share\": -0.5",
       "r.json: ranks[0].own_cause_share: -0.5 is not within 0 to 1"},
      {"\"steady_end_ns\": 90001000", "\"steady_end_ns\": 4001000",
       "r.json: devices[0].steady_end_ns: 4001000 is before steady_start_ns (5001000): it ends "
       "before it starts"},
      {"\"end_ns\": 20000000", "\"end_ns\": 9000000",
       "r.json: steps[0].end_ns: 9000000 is before start_ns (10000000)"},
      {"\"end_ns\": 32000000", "\"end_ns\": 29000000",
       "r.json: longest_gaps[0].end_ns: 29000000 is before start_ns (30000000)"},
      // Conservation: the phases tile the window, busy + idle + one-off the steady state and
      // each step, the subcauses the idle time.
      {"\"window_ns\": 100000000", "\"window_ns\": 99000000",
       "r.json: devices[0].window_ns: 99000000 is not the phases' sum (100000000)"},
      {"\"idle_ns\": 24000000", "\"idle_ns\": 23000000",
       "r.json: devices[0].idle_by_subcause: adds up to 24000000, not idle_ns (23000000)"},
      {"\"busy_ns\": 7000000", "\"busy_ns\": 8000000",
       "r.json: steps[0].busy_ns: busy_ns + idle + one_off_ns (11000000) is not the step's span "
       "(10000000)"},
      // Parts within their whole.
      {"\"comm_ns\": 35000000", "\"comm_ns\": 70000000",
       "r.json: devices[0].comm_ns: 70000000 is more than busy_ns (60000000)"},
      {"\"matched\": 39", "\"matched\": 41",
       "r.json: ranks[0].matched: 41 is more than collectives (40)"},
      {"\"count\": 9", "\"count\": -9", "r.json: offenders[0].count: -9 is not a count"},
      {"\"clock_offset_ns\": -1234", "\"clock_offset_ns\": -4611686018427387904",
       "r.json: ranks[1].clock_offset_ns: -4611686018427387904 is beyond 2^60 ns either way"},
      {"\"dispatch_latency_max_ns\": 50000", "\"dispatch_latency_max_ns\": -1",
       "r.json: options.dispatch_latency_max_ns: -1 is not a length of time"},
  };
  ExpectRefused(cases);
  // A list's figures add up below 2^62, so that whatever sums them (writers, diff, merge) fits:
  // 1025 gaps of 2^52 ns each do not.
  Report r = FullReport();
  for (int i = 0; i < 1025; ++i) {
    GapRecord g = r.longest_gaps.front();
    g.start_ns = 0;
    g.end_ns = int64_t{1} << 52;
    r.longest_gaps.push_back(g);
  }
  const absl::Status sum = ParseReportJson(Json(r), "sum.json").status();
  EXPECT_THAT(Message(sum), HasSubstr("sum.json: longest_gaps[1024]: the gaps' spans add up to "
                                      "2^62 or more"));
  // The same report with 1023 such gaps is read.
  r.longest_gaps.resize(1024);
  EXPECT_TRUE(ParseReportJson(Json(r), "fits.json").ok());
  // A collective kind (group and op) is listed once per device: the merge looks kinds up by them.
  Report twice = FullReport();
  twice.devices[1].collectives[1].group = "0";
  twice.devices[1].collectives[1].op = "allreduce";
  EXPECT_THAT(Message(ParseReportJson(Json(twice), "k.json").status()),
              HasSubstr("k.json: devices[1].collectives[1]: the kind \"allreduce\" of group \"0\" "
                        "is listed twice"));
}

TEST(ReportReader, RefusesWhatIsNotAReport) {
  EXPECT_THAT(Message(ParseReportJson("", "e.json").status()), StartsWith("e.json: not JSON"));
  EXPECT_THAT(Message(ParseReportJson("{\"schema\": ", "t.json").status()),
              StartsWith("t.json: not JSON"));
  EXPECT_THAT(Message(ParseReportJson("[1, 2]", "a.json").status()),
              StartsWith("a.json: not a gpuidle report"));
  EXPECT_THAT(Message(ParseReportJson("{}", "o.json").status()),
              StartsWith("o.json: schema: missing"));
  // Trailing bytes, invalid UTF-8, NaN: not JSON.
  const std::string json = Json(FullReport());
  EXPECT_THAT(Message(ParseReportJson(json + "{}", "x.json").status()),
              StartsWith("x.json: not JSON"));
  std::string bad_utf8 = json;
  bad_utf8.replace(bad_utf8.find("node-a"), 1, "\xff");
  EXPECT_THAT(Message(ParseReportJson(bad_utf8, "u.json").status()),
              StartsWith("u.json: not JSON"));
}

// Issue 29: gpuidle kept the first of two "schema" keys, Python's json and jsonschema the last:
// a document validated as one report was read as another. A key twice in any object is refused.
TEST(ReportReader, RefusesAKeyTwiceInOneObject) {
  const std::string json = Json(FullReport());
  const std::string twice = "{\"schema\": \"gpuidle.report/1\", " + json.substr(json.find('{') + 1);
  absl::Status s = ParseReportJson(twice, "two.json").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(Message(s), StartsWith("two.json: the key \"schema\" appears twice in one object"));
  // Deeper down too: a device's busy time given twice.
  std::string nested = json;
  const size_t busy = nested.find("\"busy_ns\"");
  ASSERT_NE(busy, std::string::npos);
  nested.insert(busy, "\"busy_ns\": 1, ");
  s = ParseReportJson(nested, "dev.json").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(Message(s), HasSubstr("\"busy_ns\" appears twice"));
  // The same key in two objects is no duplicate: the report reads back.
  EXPECT_TRUE(ParseReportJson(json, "ok.json").ok());
}

TEST(ReportReader, BoundsWhatItReads) {
  // Deep nesting: an error, not a stack overflow or gigabytes.
  const std::string deep = "{\"schema\": \"gpuidle.report/2\", \"x\": " + std::string(1 << 20, '[');
  const absl::Status s = ParseReportJson(deep, "deep.json").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(Message(s), HasSubstr("nested deeper than"));

  // A string longer than the limit.
  const std::string long_string =
      absl::StrCat("{\"schema\": \"", std::string(kMaxReportStringBytes + 1, 'a'), "\"}");
  EXPECT_THAT(Message(ParseReportJson(long_string, "s.json").status()),
              HasSubstr("a string longer than"));

  // More steps than the writer ever writes.
  Report many;
  many.steps.resize(Report::kMaxStepRows + 1);
  const absl::Status rows = ParseReportJson(Json(many), "m.json").status();
  EXPECT_EQ(rows.code(), absl::StatusCode::kResourceExhausted) << rows;
  EXPECT_THAT(Message(rows), HasSubstr("m.json: steps: more than 10000 rows"));

  // A collective table longer than kMaxCollectiveRows.
  Report big;
  big.devices.resize(1);
  big.devices[0].collectives.resize(1);
  big.devices[0].collective_timings.resize(DeviceReport::kMaxCollectiveRows + 1);
  EXPECT_THAT(Message(ParseReportJson(Json(big), "c.json").status()),
              HasSubstr("devices[0].collective_timings.start_ns: more than 4096 rows"));
  big.devices[0].collective_timings.resize(DeviceReport::kMaxCollectiveRows);
  ExpectRoundTrip(Json(big), "c.json");
}

// Every prefix and many one-byte changes of a real report: an error or a report, never a crash;
// whatever is read writes a report that reads back to itself.
TEST(ReportReader, SurvivesCutAndCorruptedReports) {
  absl::StatusOr<Report> r = AnalyzeTraceFiles({DataPath("traces/torch/item_sync.json.gz")});
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string json = Json(*r);
  for (size_t cut = 0; cut < json.size(); cut += 1 + cut / 64) {
    EXPECT_FALSE(ParseReportJson(json.substr(0, cut), "cut.json").ok()) << cut;
  }
  uint64_t state = 12345;
  int read_back = 0;
  for (int i = 0; i < 3000; ++i) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    std::string bent = json;
    const size_t at = (state >> 33) % bent.size();
    bent[at] = "0-9\"{}[],:ax \\"[(state >> 20) % 15];
    absl::StatusOr<Report> got = ParseReportJson(bent, "bent.json");
    if (!got.ok()) {
      EXPECT_THAT(Message(got.status()), StartsWith("bent.json: "));
      continue;
    }
    ++read_back;
    ExpectRoundTrip(Json(*got), "bent.json");
  }
  EXPECT_GT(read_back, 0);  // some changes keep a valid report (a digit for a digit)
}

}  // namespace
}  // namespace gpuidle::internal
