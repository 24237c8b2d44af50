// Replays what issue 15's last GPU rounds recorded on an H200 (tests/data/gpu_runs/
// 2026-12-01_overhead, docs/VALIDATION.md "Overhead changes"), so that CI guards what the GPU
// proved:
// - with CUPTI's copy records enabled only at a collection's first copy call
//   (collect/kinds_on_demand.h), the copies of gpuidle.profile() runs are still recorded, and the
//   traces read back to the reports the live runs wrote;
// - a sampled collection's outputs agree with one another: the summary file and the Prometheus
//   metrics file say the same windows and idle time.
#include <map>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gpuidle/analyze.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "testing/json.h"
#include "testing/report_json.h"
#include "testing/temp_dir.h"

namespace gpuidle {
namespace {

using ::gpuidle::testing::Gunzip;
using ::gpuidle::testing::ReadFileOrDie;
using ::gpuidle::testing::ReadsBackAs;

std::string RunPath(const std::string& name) {
  return std::string(GPUIDLE_TEST_DATA_DIR) + "/gpu_runs/2026-12-01_overhead/" + name;
}

// As the examples profile (examples/python/_profile_steps.py: skip_steps=1).
absl::StatusOr<Report> AnalyzeRun(const std::string& example) {
  AnalysisOptions options;
  options.skip_steps = 1;
  return AnalyzeTraceFiles({RunPath(example + ".trace.json.gz")}, options);
}

struct CopyRun {
  std::string example;  // examples/python/<example>.py --steps 12 under gpuidle.profile()
  Subcause dominant;
};

class CopiesRecordedOnDemand : public ::testing::TestWithParam<CopyRun> {};

TEST_P(CopiesRecordedOnDemand, KeepEveryCopyAndTheirCause) {
  absl::StatusOr<Report> r = AnalyzeRun(GetParam().example);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->devices.size(), 1u);
  const DeviceReport& d = r->devices[0];
  // One copy per step and one before the loop: none was lost to the late enabling.
  EXPECT_EQ(d.memcpy_count, 13);
  EXPECT_EQ(d.idle.Dominant(), GetParam().dominant);
  ASSERT_TRUE(r->dropped_records.has_value());
  EXPECT_EQ(*r->dropped_records, 0u);
}

TEST_P(CopiesRecordedOnDemand, ReadBackToTheReportTheLiveRunWrote) {
  absl::StatusOr<Report> r = AnalyzeRun(GetParam().example);
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<std::string> replayed = FormatReport(*r, "json");
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  EXPECT_TRUE(ReadsBackAs(*replayed, ReadFileOrDie(RunPath(GetParam().example + ".report.json"))));
}

INSTANTIATE_TEST_SUITE_P(RecordedOnH200, CopiesRecordedOnDemand,
                         ::testing::Values(CopyRun{"item_sync", Subcause::kHostSync},
                                           CopyRun{"pageable_h2d", Subcause::kH2DCopy}),
                         [](const ::testing::TestParamInfo<CopyRun>& param) {
                           return param.param.example;
                         });

// name{labels} value lines of a Prometheus text file, summed per name.
std::map<std::string, double> SumsByName(const std::string& text) {
  std::map<std::string, double> sums;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    EXPECT_NE(space, std::string::npos) << line;
    if (space == std::string::npos) continue;
    double value = 0;
    EXPECT_TRUE(absl::SimpleAtod(line.substr(space + 1), &value)) << line;
    const std::string name = line.substr(0, line.find_first_of("{ "));
    sums[name] += value;
  }
  return sums;
}

TEST(SampledCollectionOnH200, TheSummaryAndTheMetricsSayTheSame) {
  const rapidjson::Document summary =
      ::gpuidle::testing::Parse(Gunzip(ReadFileOrDie(RunPath("sampled_launch.summary.json.gz"))));
  ASSERT_TRUE(summary.HasMember("coverage"));
  const rapidjson::Value& coverage = summary["coverage"];
  EXPECT_EQ(coverage["windows"].GetInt64(), 6);
  // 1 s of every 4 s over 20 s.
  const double traced = static_cast<double>(coverage["traced_ns"].GetInt64()) /
                        static_cast<double>(coverage["span_ns"].GetInt64());
  EXPECT_NEAR(traced, 0.25, 0.03);
  ASSERT_EQ(summary["devices"].Size(), 1u);
  const rapidjson::Value& device = summary["devices"][0];
  const std::map<std::string, double> metrics =
      SumsByName(ReadFileOrDie(RunPath("sampled_launch.prom")));
  EXPECT_EQ(metrics.at("gpuidle_windows_total"), 6);
  EXPECT_NEAR(metrics.at("gpuidle_idle_seconds_total"),
              static_cast<double>(device["idle_ns"].GetInt64()) / 1e9, 1e-6);
  EXPECT_NEAR(metrics.at("gpuidle_busy_seconds_total"),
              static_cast<double>(device["busy_ns"].GetInt64()) / 1e9, 1e-6);
  EXPECT_EQ(metrics.at("gpuidle_steps_total"), device["step_count"].GetInt64());
  // The tiny MLP is launch-bound, sampled or not (the full trace of the same loop: 99.7%).
  EXPECT_GT(static_cast<double>(device["idle_by_cause"]["launch_bound"].GetInt64()) /
                static_cast<double>(device["idle_ns"].GetInt64()),
            0.95);
}

}  // namespace
}  // namespace gpuidle
