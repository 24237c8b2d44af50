#include "report/diff_writer.h"

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"

namespace gpuidle::internal {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kMs = 1'000'000;

// A diff as DiffReports makes them: a data-starved run fixed, two devices, one of them on one
// side only, a resolved and a new piece of advice, a caveat.
ReportDiff ExampleDiff() {
  ReportDiff d;
  d.before = {"pytorch-profiler", {"before.json.gz"}, "ProfilerStep", 2, "unknown", false, 0};
  d.after = {"gpuidle", {"after.json"}, "ProfilerStep", 1, "complete", false, 1};
  d.unit = DiffUnit::kPerStep;
  d.steady_ns = {264 * kMs, 156 * kMs};
  d.steps = {12, 12};
  d.mean_step_ns = Change{22 * kMs, 13 * kMs};
  d.median_step_ns = Change{22 * kMs, 13 * kMs};
  d.busy_share = {0.05, 0.08};
  d.idle_share = {0.95, 0.92};
  d.lost_share = {0.95, 0.92};
  d.busy_per_unit = {1 * kMs, 1 * kMs};
  d.lost_by_subcause[static_cast<int>(Subcause::kDataLoader)] = {20 * kMs, 0};
  d.lost_by_subcause[static_cast<int>(Subcause::kLaunchOverhead)] = {1 * kMs, 12 * kMs};
  d.lost_by_cause[static_cast<int>(Cause::kDataStarved)] = {20 * kMs, 0};
  d.lost_by_cause[static_cast<int>(Cause::kLaunchBound)] = {1 * kMs, 12 * kMs};
  d.lost_per_unit = {21 * kMs, 12 * kMs};
  d.start_up_ns = {2000 * kMs, 300 * kMs};
  d.start_up_parts = {{OneOffKind::kCudaInit, {2000 * kMs, 300 * kMs}}};
  DeviceDiff x;
  x.before = {0, 0, "NVIDIA H200"};
  x.after = {0, 0, "NVIDIA H200"};
  x.unit = DiffUnit::kPerStep;
  x.steady_ns = d.steady_ns;
  x.step_count = d.steps;
  x.mean_step_ns = d.mean_step_ns;
  x.lost_share = d.lost_share;
  x.dominant_before = Subcause::kDataLoader;
  x.dominant_after = Subcause::kLaunchOverhead;
  d.devices.push_back(x);
  d.only_before.push_back({1, 0, "NVIDIA H200"});
  AdviceChange resolved;
  resolved.subcause = Subcause::kDataLoader;
  resolved.status = AdviceStatus::kResolved;
  resolved.share_before = 0.95;
  resolved.predicted_gain_per_step_ns = 19 * kMs;
  resolved.fix = "raise num_workers";
  AdviceChange added;
  added.subcause = Subcause::kLaunchOverhead;
  added.status = AdviceStatus::kNew;
  added.share_after = 1.0;
  added.fix = std::string(30, 'w') + " " + std::string(200, 'x') +
              " capture the step in a CUDA "
              "graph, fuse small ops, raise the batch size so that each kernel does more work";
  d.advice = {resolved, added};
  d.caveats.push_back({"different_sources", "the runs were recorded differently"});
  d.verdict = {DiffOutcome::kImproved, "mean_step", Subcause::kDataLoader, true,
               "step time 22.0 -> 13.0 ms (-41%): data_starved.dataloader -20.0 ms/step; the fix "
               "worked (weak comparison: different_sources)"};
  return d;
}

rapidjson::Document Parse(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  EXPECT_FALSE(doc.HasParseError()) << json;
  return doc;
}

void ExpectChange(const rapidjson::Value& v, int64_t before, int64_t after) {
  ASSERT_TRUE(v.IsObject());
  EXPECT_EQ(v["before"].GetInt64(), before);
  EXPECT_EQ(v["after"].GetInt64(), after);
  EXPECT_EQ(v["change"].GetInt64(), after - before);
  if (before == 0) {
    EXPECT_TRUE(v["relative"].IsNull());
  } else {
    EXPECT_DOUBLE_EQ(v["relative"].GetDouble(),
                     static_cast<double>(after - before) / static_cast<double>(before));
  }
}

TEST(DiffJsonWriter, WritesTheVersionedSchemaAndBothRuns) {
  const rapidjson::Document doc = Parse(WriteDiffJson(ExampleDiff()));
  EXPECT_STREQ(doc["schema"].GetString(), "gpuidle.diff/1");
  EXPECT_THAT(doc["generator"].GetString(), ::testing::StartsWith("gpuidle "));
  EXPECT_STREQ(doc["before"]["source"].GetString(), "pytorch-profiler");
  EXPECT_STREQ(doc["before"]["inputs"][0].GetString(), "before.json.gz");
  EXPECT_EQ(doc["before"]["devices"].GetInt(), 2);
  EXPECT_STREQ(doc["after"]["completeness"].GetString(), "complete");
  EXPECT_EQ(doc["after"]["warnings"].GetInt(), 1);
  EXPECT_FALSE(doc["after"]["sampled"].GetBool());
  EXPECT_STREQ(doc["unit"].GetString(), "per_step");
}

TEST(DiffJsonWriter, WritesEveryFigureBeforeAfterAndItsChange) {
  const rapidjson::Document doc = Parse(WriteDiffJson(ExampleDiff()));
  const rapidjson::Value& steady = doc["steady"];
  ExpectChange(steady["ns"], 264 * kMs, 156 * kMs);
  ExpectChange(steady["steps"], 12, 12);
  ExpectChange(steady["mean_step_ns"], 22 * kMs, 13 * kMs);
  ExpectChange(steady["lost_per_unit_ns"], 21 * kMs, 12 * kMs);
  EXPECT_DOUBLE_EQ(steady["busy_share"]["before"].GetDouble(), 0.05);
  EXPECT_DOUBLE_EQ(steady["busy_share"]["change"].GetDouble(), 0.08 - 0.05);
  ExpectChange(doc["lost_by_cause"]["data_starved"], 20 * kMs, 0);
  ExpectChange(doc["lost_by_cause"]["unattributed"], 0, 0);
  // Every subcause, with its qualified name, whether it changed or not.
  EXPECT_EQ(doc["lost_by_subcause"].MemberCount(), static_cast<unsigned>(kNumSubcauses));
  ExpectChange(doc["lost_by_subcause"]["launch_bound.launch_overhead"], 1 * kMs, 12 * kMs);
  ExpectChange(doc["lost_by_subcause"]["sync_bound.comm_wait"], 0, 0);
  EXPECT_TRUE(doc["communication"]["wait_per_unit_ns"].IsNull());
  ExpectChange(doc["start_up"]["ns"], 2000 * kMs, 300 * kMs);
  EXPECT_STREQ(doc["start_up"]["parts"][0]["kind"].GetString(), "cuda_init");
}

TEST(DiffJsonWriter, WritesNullForFiguresARunLacks) {
  ReportDiff d = ExampleDiff();
  d.mean_step_ns.reset();
  d.median_step_ns.reset();
  d.unit = DiffUnit::kPerSecond;
  const rapidjson::Document doc = Parse(WriteDiffJson(d));
  EXPECT_TRUE(doc["steady"]["mean_step_ns"].IsNull());
  EXPECT_TRUE(doc["steady"]["median_step_ns"].IsNull());
  EXPECT_STREQ(doc["unit"].GetString(), "per_second");
}

TEST(DiffJsonWriter, WritesDevicesAdviceCaveatsAndTheVerdict) {
  const rapidjson::Document doc = Parse(WriteDiffJson(ExampleDiff()));
  ASSERT_EQ(doc["devices"].Size(), 1u);
  const rapidjson::Value& dev = doc["devices"][0];
  EXPECT_EQ(dev["before"]["rank"].GetInt(), 0);
  EXPECT_STREQ(dev["after"]["name"].GetString(), "NVIDIA H200");
  ExpectChange(dev["mean_step_ns"], 22 * kMs, 13 * kMs);
  EXPECT_STREQ(dev["dominant_before"].GetString(), "data_starved.dataloader");
  EXPECT_STREQ(dev["dominant_after"].GetString(), "launch_bound.launch_overhead");
  EXPECT_EQ(dev["lost_by_cause"].MemberCount(), static_cast<unsigned>(kNumCauses));
  EXPECT_TRUE(dev["comm_wait_per_unit_ns"].IsNull());
  ASSERT_EQ(doc["only_before"].Size(), 1u);
  EXPECT_EQ(doc["only_before"][0]["rank"].GetInt(), 1);
  EXPECT_EQ(doc["only_after"].Size(), 0u);

  ASSERT_EQ(doc["advice"].Size(), 2u);
  const rapidjson::Value& resolved = doc["advice"][0];
  EXPECT_STREQ(resolved["status"].GetString(), "resolved");
  EXPECT_STREQ(resolved["cause"].GetString(), "data_starved");
  EXPECT_STREQ(resolved["subcause"].GetString(), "data_starved.dataloader");
  EXPECT_DOUBLE_EQ(resolved["share_before"].GetDouble(), 0.95);
  EXPECT_TRUE(resolved["share_after"].IsNull());
  EXPECT_EQ(resolved["predicted_gain_per_step_ns"].GetInt64(), 19 * kMs);
  EXPECT_STREQ(doc["advice"][1]["status"].GetString(), "new");
  EXPECT_TRUE(doc["advice"][1]["predicted_gain_per_step_ns"].IsNull());

  ASSERT_EQ(doc["caveats"].Size(), 1u);
  EXPECT_STREQ(doc["caveats"][0]["code"].GetString(), "different_sources");
  const rapidjson::Value& v = doc["verdict"];
  EXPECT_STREQ(v["outcome"].GetString(), "improved");
  EXPECT_STREQ(v["metric"].GetString(), "mean_step");
  EXPECT_STREQ(v["main_change"].GetString(), "data_starved.dataloader");
  EXPECT_TRUE(v["weak"].GetBool());
  EXPECT_STREQ(v["text"].GetString(), ExampleDiff().verdict.text.c_str());
}

TEST(DiffJsonWriter, KeepsTheDocumentValidWithNamesThatAreNotUtf8) {
  ReportDiff d = ExampleDiff();
  d.before.inputs = {"bad\xff.json"};
  d.devices[0].after.name = "GPU\xc3";
  const rapidjson::Document doc = Parse(WriteDiffJson(d));
  EXPECT_STREQ(doc["before"]["inputs"][0].GetString(), "bad\xef\xbf\xbd.json");
}

TEST(DiffTextWriter, LeadsWithTheVerdictAndKeepsToOneHundredColumns) {
  const std::string text = WriteDiffText(ExampleDiff());
  const std::vector<std::string> lines = absl::StrSplit(text, '\n');
  ASSERT_GT(lines.size(), 5u);
  EXPECT_EQ(lines[0], "gpuidle diff: what changed from before to after");
  EXPECT_THAT(lines[1], ::testing::StartsWith("before: pytorch-profiler (before.json.gz)"));
  EXPECT_THAT(lines[2], ::testing::StartsWith("after:  gpuidle (after.json)"));
  EXPECT_THAT(text, HasSubstr("\nstep time 22.0 -> 13.0 ms (-41%): data_starved.dataloader"));
  for (const std::string& line : lines) EXPECT_LE(line.size(), 100u) << line;
}

TEST(DiffTextWriter, ShowsTheFiguresCausesDevicesAdviceAndCaveats) {
  const std::string text = WriteDiffText(ExampleDiff());
  EXPECT_THAT(text, HasSubstr("mean step"));
  EXPECT_THAT(text, HasSubstr("22.0 ms     13.0 ms    -9.00 ms    -40.9%"));
  EXPECT_THAT(text, HasSubstr("lost time per step"));
  EXPECT_THAT(text, HasSubstr("    dataloader"));
  EXPECT_THAT(text, HasSubstr("20.0 ms        0 ns    -20.0 ms   -100.0%"));
  EXPECT_THAT(text, HasSubstr("start-up (apart, longest GPU)"));
  EXPECT_THAT(text, HasSubstr("  CUDA init"));
  EXPECT_THAT(text, HasSubstr("rank 0 GPU 0: step 22.0 ms -> 13.0 ms (-40.9%)"));
  EXPECT_THAT(text, HasSubstr("before only: rank 1 GPU 0"));
  EXPECT_THAT(text, HasSubstr("resolved  data_starved.dataloader"));
  EXPECT_THAT(text, HasSubstr("-20.0 ms/step (predicted -19.0 ms/step)"));
  EXPECT_THAT(text, HasSubstr("new       launch_bound.launch_overhead"));
  EXPECT_THAT(text, HasSubstr("the comparison is weak:\n  - the runs were recorded differently"));
  // The fix of a resolved cause is no longer something to do.
  EXPECT_THAT(text, Not(HasSubstr("raise num_workers")));
  EXPECT_THAT(text, HasSubstr("capture the step in a CUDA"));
}

TEST(DiffTextWriter, LeavesOutSectionsWithNothingInThem) {
  ReportDiff d = ExampleDiff();
  d.start_up_ns = {};
  d.start_up_parts.clear();
  d.only_before.clear();
  d.caveats.clear();
  d.verdict.weak = false;
  d.verdict.text = "step time 22.0 -> 13.0 ms (-41%): data_starved.dataloader -20.0 ms/step";
  const std::string text = WriteDiffText(d);
  EXPECT_THAT(text, Not(HasSubstr("start-up")));
  EXPECT_THAT(text, Not(HasSubstr("devices\n")));  // one device: the totals are its figures
  EXPECT_THAT(text, Not(HasSubstr("communication")));
  EXPECT_THAT(text, Not(HasSubstr("weak")));
}

TEST(DiffTextWriter, ShowsNoFixWhenTheRunAfterLosesLittle) {
  ReportDiff d = ExampleDiff();
  d.lost_share.after = 0.01;
  const std::string text = WriteDiffText(d);
  EXPECT_THAT(text, HasSubstr("new       launch_bound.launch_overhead"));
  EXPECT_THAT(text, Not(HasSubstr("capture the step in a CUDA")));
  EXPECT_THAT(text, HasSubstr("(the run after loses 1.0% of its steady state: no fix shown)"));
}

// ExampleDiff of two different programs, as DiffReports makes it (issue 4).
ReportDiff NotComparableDiff() {
  ReportDiff d = ExampleDiff();
  d.comparability.comparable = false;
  d.comparability.reasons = {
      {"kernels_per_step", "kernels per step: 29 before, 244 after (x8.4, more than x1.5)"},
      {"kernel_names",
       "kernel names: the reports name 16 and 15 kernels (offenders, longest gaps), 4 of them in "
       "both: less than half of the shorter list"}};
  d.comparability.kernels_per_step_before = 29.0;
  d.comparability.kernels_per_step_after = 244.0;
  d.comparability.kernel_names_before = 16;
  d.comparability.kernel_names_after = 15;
  d.comparability.kernel_names_shared = 4;
  d.verdict = {DiffOutcome::kNotComparable, "mean_step", std::nullopt, true,
               "not comparable (kernels_per_step, kernel_names): step time 22.0 -> 13.0 ms (-41%) "
               "between what look like different programs; no verdict on a fix (weak comparison: "
               "different_sources)"};
  return d;
}

TEST(DiffTextWriter, SaysTheRunsAreNotComparableBeforeTheVerdict) {
  const std::string text = WriteDiffText(NotComparableDiff());
  const size_t said = text.find(
      "\nNOT COMPARABLE: the runs look like different programs (or set-ups), so the figures below "
      "say nothing\n  about a fix:\n"
      "  - kernels per step: 29 before, 244 after (x8.4, more than x1.5)\n"
      "  - kernel names: the reports name 16 and 15 kernels (offenders, longest gaps), 4 of them "
      "in both:\n    less than half of the shorter list\n");
  ASSERT_NE(said, std::string::npos) << text;
  const size_t verdict = text.find("\nnot comparable (kernels_per_step, kernel_names): step time");
  ASSERT_NE(verdict, std::string::npos) << text;
  EXPECT_LT(said, verdict);
  EXPECT_LT(text.find("after:  gpuidle"), said);  // the runs first, then what they are
  EXPECT_THAT(text, Not(HasSubstr("worked")));
  EXPECT_THAT(text, HasSubstr("(of runs that are not comparable: resolved or new is no fix)"));
  for (absl::string_view line : absl::StrSplit(text, '\n')) EXPECT_LE(line.size(), 100u) << line;
  // A comparable diff has none of it.
  EXPECT_THAT(WriteDiffText(ExampleDiff()), Not(HasSubstr("COMPARABLE")));
  EXPECT_THAT(WriteDiffText(ExampleDiff()), Not(HasSubstr("not comparable")));
}

TEST(DiffJsonWriter, CarriesTheComparabilityAndItsReasons) {
  const rapidjson::Document doc = Parse(WriteDiffJson(NotComparableDiff()));
  const rapidjson::Value& c = doc["comparability"];
  EXPECT_FALSE(c["comparable"].GetBool());
  ASSERT_EQ(c["reasons"].Size(), 2u);
  EXPECT_STREQ(c["reasons"][0]["code"].GetString(), "kernels_per_step");
  EXPECT_THAT(c["reasons"][0]["message"].GetString(), HasSubstr("29 before, 244 after"));
  EXPECT_STREQ(c["reasons"][1]["code"].GetString(), "kernel_names");
  EXPECT_DOUBLE_EQ(c["kernels_per_step"]["before"].GetDouble(), 29.0);
  EXPECT_DOUBLE_EQ(c["kernels_per_step"]["after"].GetDouble(), 244.0);
  EXPECT_EQ(c["kernel_names"]["before"].GetInt(), 16);
  EXPECT_EQ(c["kernel_names"]["after"].GetInt(), 15);
  EXPECT_EQ(c["kernel_names"]["shared"].GetInt(), 4);
  EXPECT_STREQ(doc["verdict"]["outcome"].GetString(), "not_comparable");
  EXPECT_TRUE(doc["verdict"]["main_change"].IsNull());
  EXPECT_THAT(doc["verdict"]["text"].GetString(), HasSubstr("no verdict on a fix"));
  // Before the verdict in the document too.
  const std::string json = WriteDiffJson(NotComparableDiff());
  EXPECT_LT(json.find("\"comparability\""), json.find("\"verdict\""));

  const rapidjson::Document same = Parse(WriteDiffJson(ExampleDiff()));
  EXPECT_TRUE(same["comparability"]["comparable"].GetBool());
  EXPECT_EQ(same["comparability"]["reasons"].Size(), 0u);
  EXPECT_TRUE(same["comparability"]["kernels_per_step"].IsNull());
}

// Issue 6: "dataloader_starved.b..." said nothing of which run it was.
TEST(DiffTextWriter, KeepsTheEndsOfTheFileNamesThatTellTheRunsApart) {
  ReportDiff d = ExampleDiff();
  const std::string dir = "/home/someone/experiments/2026-12-02/gains/runs/";
  d.before.inputs = {dir + "dataloader_starved.before.report.json"};
  d.after.inputs = {dir + "dataloader_starved.after.report.json"};
  const std::string text = WriteDiffText(d);
  EXPECT_THAT(text, HasSubstr("/dataloader_starved.before.report.json)"));
  EXPECT_THAT(text, HasSubstr("/dataloader_starved.after.report.json)"));
  EXPECT_THAT(text, HasSubstr("before: pytorch-profiler (/home/some...ains/runs/"
                              "dataloader_starved.before.report.json)"));
  // The ranks of a job: each keeps its end.
  d.before.inputs = {dir + "nccl_straggler.rank0.trace.json.gz",
                     dir + "nccl_straggler.rank1.trace.json.gz"};
  const std::string ranks = WriteDiffText(d);
  EXPECT_THAT(ranks, HasSubstr("/nccl_straggler.rank0.trace.json.gz,"));
  EXPECT_THAT(ranks, HasSubstr("/nccl_straggler.rank1.trace.json.gz)"));
  for (absl::string_view line : absl::StrSplit(ranks, '\n')) EXPECT_LE(line.size(), 100u) << line;
}

TEST(DiffWriters, AreChosenByFormatName) {
  EXPECT_EQ(*WriteDiff(ExampleDiff(), "json"), WriteDiffJson(ExampleDiff()));
  EXPECT_EQ(*WriteDiff(ExampleDiff(), "text"), WriteDiffText(ExampleDiff()));
  const absl::StatusOr<std::string> html = WriteDiff(ExampleDiff(), "html");
  EXPECT_EQ(html.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(html.status().message(), HasSubstr("formats: text, json"));
}

}  // namespace
}  // namespace gpuidle::internal
