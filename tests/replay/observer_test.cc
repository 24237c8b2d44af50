// Replays the H200 runs of the observer check (tests/data/gpu_runs/2026-12-02_observer2,
// _observer3, _observer4 and 2026-12-04_observer5, tests/benchmarks/python/observer.py): each
// workload ran without gpuidle (its untraced step time, minus the GPU's busy time per step, is the
// idle time the program really has: the truth) and under gpuidle, which recorded a trace and wrote
// a report with its own cost taken out of the timeline. CI checks what the GPU run showed: the
// recorded trace analysed again gives the live report, taking gpuidle's cost out brings the idle
// time toward the truth and never changes the busy time, and the error against the truth is the one
// the GPU run printed.
#include <cmath>
#include <cstdint>
#include <map>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "gpuidle/analyze.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "testing/temp_dir.h"

namespace gpuidle {
namespace {

using ::gpuidle::testing::ReadFileOrDie;

// name: "<run folder>/<label>.<suffix>", under tests/data/gpu_runs.
std::string RunPath(const std::string& name) {
  return std::string(GPUIDLE_TEST_DATA_DIR) + "/gpu_runs/" + name;
}

// The key=value pairs of the log's line that starts with "result ".
std::map<std::string, std::string> ResultLine(const std::string& label) {
  std::map<std::string, std::string> values;
  const std::string log = ReadFileOrDie(RunPath(label + ".log"));
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (!absl::ConsumePrefix(&line, "result ")) continue;
    for (absl::string_view pair : absl::StrSplit(line, ' ', absl::SkipEmpty())) {
      const std::pair<std::string, std::string> kv = absl::StrSplit(pair, absl::MaxSplits('=', 1));
      values[kv.first] = kv.second;
    }
    return values;
  }
  ADD_FAILURE() << label << ".log has no result line";
  return values;
}

// A number of the result line: "34.888" as 34.888, "+16.4%" as 16.4.
double Number(const std::map<std::string, std::string>& result, const std::string& key) {
  const auto it = result.find(key);
  if (it == result.end()) {
    ADD_FAILURE() << "no " << key << "= in the result line";
    return NAN;
  }
  absl::string_view text = it->second;
  absl::ConsumePrefix(&text, "+");
  absl::ConsumeSuffix(&text, "%");
  double value = NAN;
  EXPECT_TRUE(absl::SimpleAtod(text, &value)) << key << "=" << it->second;
  return value;
}

// The truth of the run without gpuidle, in ms per step.
struct Truth {
  double untraced_step_ms = 0;
  double idle_ms = 0;
  double error_of_step_percent = 0;  // what the GPU run printed for its report
};

Truth TruthOf(const std::string& label) {
  const std::map<std::string, std::string> result = ResultLine(label);
  return Truth{Number(result, "untraced_step_ms"), Number(result, "truth_idle_ms"),
               Number(result, "error_of_step")};
}

Report MustAnalyze(const std::string& label, const AnalysisOptions& options = {}) {
  absl::StatusOr<Report> r = AnalyzeTraceFiles({RunPath(label + ".trace.json.gz")}, options);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : Report{};
}

Report AsRecorded(const std::string& label) {
  AnalysisOptions options;
  options.as_recorded = true;
  return MustAnalyze(label, options);
}

// The device that was busy longest: the one the workload ran on.
const DeviceReport* Busiest(const Report& r) {
  const DeviceReport* busiest = nullptr;
  for (const DeviceReport& d : r.devices) {
    if (busiest == nullptr || d.busy_ns > busiest->busy_ns) busiest = &d;
  }
  return busiest;
}

double PerStepMs(int64_t ns, int64_t steps) {
  return static_cast<double>(ns) / static_cast<double>(steps) / 1e6;
}

// The same figures of the live report's JSON.
struct LiveDevice {
  int device = -1;
  int64_t busy_ns = 0;
  int64_t idle_ns = 0;
  int64_t tracer_ns = 0;
  int64_t step_count = 0;
};

LiveDevice BusiestLive(const rapidjson::Document& doc) {
  LiveDevice busiest;
  for (const auto& d : doc["devices"].GetArray()) {
    if (busiest.device >= 0 && d["busy_ns"].GetInt64() <= busiest.busy_ns) continue;
    busiest = LiveDevice{d["device"].GetInt(), d["busy_ns"].GetInt64(), d["idle_ns"].GetInt64(),
                         d["tracer_ns"].GetInt64(), d["step_count"].GetInt64()};
  }
  return busiest;
}

class ObserverRun : public ::testing::TestWithParam<std::string> {};

// The trace is what CI has of the GPU run: analysed again with the default options, it must
// give the figures the live run reported, or the other checks below would test something else.
TEST_P(ObserverRun, ReplayGivesTheLiveReportsIdleAndTracerTimePerStep) {
  const std::string label = GetParam();
  rapidjson::Document live;
  live.Parse(ReadFileOrDie(RunPath(label + ".report.json")).c_str());
  ASSERT_FALSE(live.HasParseError()) << label;
  ASSERT_STREQ(live["tracer_time"].GetString(), "taken_out");
  const LiveDevice want = BusiestLive(live);
  ASSERT_GE(want.device, 0);
  ASSERT_GT(want.step_count, 0);

  const Report r = MustAnalyze(label);
  EXPECT_EQ(r.tracer_time, "taken_out");
  const DeviceReport* d = Busiest(r);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->device, want.device);
  ASSERT_EQ(d->step_count, want.step_count);
  EXPECT_EQ(d->idle_ns, want.idle_ns) << label;
  EXPECT_EQ(d->tracer_ns, want.tracer_ns) << label;
}

// Taking gpuidle's cost out is meant to give the idle time of the program without gpuidle:
// the corrected report must be nearer the truth than the timeline as recorded. Where the
// recording already is within 1% of the step of the truth (item_sync: gpuidle cost almost
// nothing), there is nothing to take out, and the corrected report must stay that close; where
// it is within the bar of 5% (a collection that cost little: observer4's GPT-2, +2.9%
// recorded, -3.8% corrected), the corrected report must stay within the bar.
TEST_P(ObserverRun, TakingTheTracerOutMovesIdleTimeTowardTheUntracedTruth) {
  const std::string label = GetParam();
  const Truth truth = TruthOf(label);
  const Report corrected_report = MustAnalyze(label);
  const Report recorded_report = AsRecorded(label);
  EXPECT_EQ(recorded_report.tracer_time, "as_recorded");
  const DeviceReport* corrected = Busiest(corrected_report);
  const DeviceReport* recorded = Busiest(recorded_report);
  ASSERT_NE(corrected, nullptr);
  ASSERT_NE(recorded, nullptr);
  ASSERT_GT(corrected->step_count, 0);
  ASSERT_GT(recorded->step_count, 0);
  const double corrected_ms = PerStepMs(corrected->idle_ns, corrected->step_count);
  const double recorded_ms = PerStepMs(recorded->idle_ns, recorded->step_count);
  const double corrected_error = std::abs(corrected_ms - truth.idle_ms);
  const double recorded_error = std::abs(recorded_ms - truth.idle_ms);
  const double one_percent = 0.01 * truth.untraced_step_ms;
  const double bar = 0.05 * truth.untraced_step_ms;
  const std::string numbers = absl::StrCat(
      label, ": idle per step corrected ", corrected_ms, " ms, as recorded ", recorded_ms,
      " ms, truth ", truth.idle_ms, " ms, untraced step ", truth.untraced_step_ms, " ms");
  if (recorded_error < one_percent) {
    EXPECT_LT(corrected_error, one_percent) << numbers;
  } else if (recorded_error < bar) {
    EXPECT_LT(corrected_error, bar) << numbers;
  } else {
    EXPECT_LT(corrected_error, recorded_error) << numbers;
  }
}

// The GPU run printed its report's error against the truth (error_of_step=); CI must reproduce
// that number from the trace, so that the verdict recorded on the GPU is the one CI checks.
TEST_P(ObserverRun, ErrorAgainstTheTruthIsTheOneTheGpuRunPrinted) {
  const std::string label = GetParam();
  const Truth truth = TruthOf(label);
  const Report r = MustAnalyze(label);
  const DeviceReport* d = Busiest(r);
  ASSERT_NE(d, nullptr);
  ASSERT_GT(d->step_count, 0);
  const double error_percent =
      100 * (PerStepMs(d->idle_ns, d->step_count) - truth.idle_ms) / truth.untraced_step_ms;
  EXPECT_NEAR(error_percent, truth.error_of_step_percent, 0.2)
      << label << ": idle per step " << PerStepMs(d->idle_ns, d->step_count) << " ms, truth "
      << truth.idle_ms << " ms, untraced step " << truth.untraced_step_ms << " ms";
}

// gpuidle's cost is host time: taking it out moves host time and the GPU's gaps, never the
// kernels' own time, so every device's busy time is the same either way.
TEST_P(ObserverRun, TakingTheTracerOutLeavesBusyTimeAlone) {
  const std::string label = GetParam();
  const Report corrected = MustAnalyze(label);
  const Report recorded = AsRecorded(label);
  ASSERT_EQ(corrected.devices.size(), recorded.devices.size());
  ASSERT_FALSE(corrected.devices.empty());
  // Something was taken out: else the two analyses would be one and the check empty.
  const DeviceReport* busiest = Busiest(corrected);
  ASSERT_NE(busiest, nullptr);
  EXPECT_GT(busiest->tracer_ns, 0) << label;
  for (size_t i = 0; i < corrected.devices.size(); ++i) {
    EXPECT_EQ(corrected.devices[i].device, recorded.devices[i].device);
    EXPECT_EQ(corrected.devices[i].busy_ns, recorded.devices[i].busy_ns)
        << label << " device " << corrected.devices[i].device;
  }
}

INSTANTIATE_TEST_SUITE_P(
    OnTheH200, ObserverRun,
    ::testing::Values("2026-12-02_observer2/gpt2.full", "2026-12-02_observer2/resnet50.fix",
                      "2026-12-02_observer2/dataloader.full", "2026-12-02_observer2/item_sync.full",
                      "2026-12-02_observer3/resnet50.full", "2026-12-02_observer3/gpt2.full2",
                      // The collection without sync and event records at start, the cost
                      // model refitted for it (floor 5 us).
                      "2026-12-02_observer4/gpt2.full", "2026-12-02_observer4/resnet50.full",
                      "2026-12-02_observer4/dataloader.full", "2026-12-02_observer4/item_sync.full",
                      // Out of sample, two days later (issue 26's fourth session).
                      "2026-12-04_observer5/resnet50.full"),
    [](const ::testing::TestParamInfo<std::string>& param) {
      std::string name = param.param;
      for (char& c : name) {
        if (c == '.' || c == '/' || c == '-') c = '_';
      }
      return name;
    });

}  // namespace
}  // namespace gpuidle
