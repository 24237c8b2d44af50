#include "cli/diff_command.h"

#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/cli.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "testing/cli_run.h"
#include "testing/temp_dir.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::ReadFileOrDie;
using ::gpuidle::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

const std::string kTraces = GPUIDLE_TEST_DATA_DIR "/traces/torch";
const std::string kStarved = kTraces + "/dataloader_starved.json.gz";
const std::string kHealthy = kTraces + "/healthy_matmul.json.gz";
const std::string kRank0 = kTraces + "/nccl_straggler.rank0.json.gz";
const std::string kRank1 = kTraces + "/nccl_straggler.rank1.json.gz";
// Two programs recorded on the H200 (issue 4: 29 and 244 kernels per step, "the fix worked").
const std::string kLive = GPUIDLE_TEST_DATA_DIR "/traces/live_python";
const std::string kStarvedReport = kLive + "/dataloader_starved.report.json";
const std::string kTinyMlpReport = kLive + "/tiny_mlp_launch_bound.report.json";
// One program before and after the fix gpuidle advised (tests/data/gpu_runs/2026-12-02_gains).
const std::string kGains = GPUIDLE_TEST_DATA_DIR "/gpu_runs/2026-12-02_gains";
const std::string kLoaderBefore = kGains + "/dataloader_starved.before.report.json";
const std::string kLoaderAfter = kGains + "/dataloader_starved.after.report.json";

using ::gpuidle::testing::Cli;
using ::gpuidle::testing::CliResult;

rapidjson::Document ParseDiff(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse(text.c_str(), text.size());
  EXPECT_FALSE(doc.HasParseError()) << text.substr(0, 300);
  EXPECT_TRUE(doc.IsObject() && doc.HasMember("schema") && doc["schema"] == "gpuidle.diff/1");
  return doc;
}

TEST(DiffCommand, IsInTheUsage) {
  const CliResult r = Cli({"help"});
  EXPECT_THAT(r.out, HasSubstr("  diff BEFORE AFTER"));
  EXPECT_THAT(r.out, HasSubstr("diff BEFORE... -- AFTER..."));
  EXPECT_THAT(r.out, HasSubstr("diff options"));
  EXPECT_THAT(Cli({"diff", "--help"}).out,
              StartsWith("usage: gpuidle diff [options] BEFORE AFTER"));
}

// The reports of a data-starved training loop before and after the advised DataLoader workers:
// the step time fell and the DataLoader wait went with it.
TEST(DiffCommand, SaysTheFixWorkedWhenTheDataLoaderWaitIsGone) {
  const CliResult r = Cli({"diff", kLoaderBefore, kLoaderAfter});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, StartsWith("gpuidle diff: what changed from before to after\n"));
  EXPECT_THAT(r.out, HasSubstr("data_starved.dataloader -"));
  EXPECT_THAT(r.out, HasSubstr("the fix worked"));
  EXPECT_THAT(r.out, Not(HasSubstr("COMPARABLE")));
  // Still advised after, for 9% of far less lost time; what was there before is never new.
  EXPECT_THAT(r.out, HasSubstr("remaining data_starved.dataloader         95% -> 9%"));
  EXPECT_THAT(r.out, Not(HasSubstr("\n  new ")));
  // Issue 6: the names keep what tells the runs apart.
  EXPECT_THAT(r.out, HasSubstr("/dataloader_starved.before.report.json)"));
  EXPECT_THAT(r.out, HasSubstr("/dataloader_starved.after.report.json)"));
  for (absl::string_view line : absl::StrSplit(r.out, '\n')) EXPECT_LE(line.size(), 100u) << line;

  const rapidjson::Document doc =
      ParseDiff(Cli({"diff", "--format", "json", kLoaderBefore, kLoaderAfter}).out);
  EXPECT_STREQ(doc["unit"].GetString(), "per_step");
  EXPECT_TRUE(doc["comparability"]["comparable"].GetBool());
  EXPECT_EQ(doc["comparability"]["reasons"].Size(), 0u);
  EXPECT_STREQ(doc["verdict"]["outcome"].GetString(), "improved");
  EXPECT_STREQ(doc["verdict"]["main_change"].GetString(), "data_starved.dataloader");
  const rapidjson::Value& step = doc["steady"]["mean_step_ns"];
  EXPECT_LT(step["after"].GetInt64(), step["before"].GetInt64());
  const rapidjson::Value& loader = doc["lost_by_subcause"]["data_starved.dataloader"];
  EXPECT_GT(loader["before"].GetInt64(), 30'000'000);  // about 39 ms of each step
  EXPECT_LT(loader["after"].GetInt64(), loader["before"].GetInt64() / 10);
  EXPECT_THAT(doc["before"]["inputs"][0].GetString(), HasSubstr("dataloader_starved.before"));
  EXPECT_THAT(doc["after"]["inputs"][0].GetString(), HasSubstr("dataloader_starved.after"));
}

// Issue 4: two different programs were "the fix worked". The diff says they differ, before the
// verdict, and gives none.
TEST(DiffCommand, SaysThatTwoDifferentProgramsAreNotComparable) {
  const CliResult r = Cli({"diff", kStarvedReport, kTinyMlpReport});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("worked")));
  const size_t said = r.out.find("\nNOT COMPARABLE: the runs look like different programs");
  ASSERT_NE(said, std::string::npos) << r.out;
  EXPECT_LT(said, r.out.find("\nnot comparable (kernels_per_step, kernel_names): step time"));
  EXPECT_THAT(r.out, HasSubstr("  - kernels per step: "));
  EXPECT_THAT(r.out, HasSubstr("  - kernel names: "));
  // Issue 6: whole base names, not "dataloader_starved.b...".
  EXPECT_THAT(r.out, HasSubstr("/dataloader_starved.report.json)"));
  EXPECT_THAT(r.out, HasSubstr("/tiny_mlp_launch_bound.report.json)"));
  for (absl::string_view line : absl::StrSplit(r.out, '\n')) EXPECT_LE(line.size(), 100u) << line;

  const rapidjson::Document doc =
      ParseDiff(Cli({"diff", "--format", "json", kStarvedReport, kTinyMlpReport}).out);
  const rapidjson::Value& c = doc["comparability"];
  EXPECT_FALSE(c["comparable"].GetBool());
  ASSERT_EQ(c["reasons"].Size(), 2u);
  EXPECT_STREQ(c["reasons"][0]["code"].GetString(), "kernels_per_step");
  EXPECT_STREQ(c["reasons"][1]["code"].GetString(), "kernel_names");
  EXPECT_GT(c["kernels_per_step"]["after"].GetDouble(),
            5 * c["kernels_per_step"]["before"].GetDouble());
  EXPECT_STREQ(doc["verdict"]["outcome"].GetString(), "not_comparable");
  EXPECT_TRUE(doc["verdict"]["main_change"].IsNull());
  for (const auto& a : doc["advice"].GetArray()) EXPECT_STRNE(a["status"].GetString(), "new");
}

// The recorded torch traces are different programs too (issue 4: "try also the traces in
// tests/data/traces/torch/"); each against itself is comparable.
TEST(DiffCommand, SaysThatTheRecordedTorchProgramsAreNotComparable) {
  TempDir dir;
  const std::vector<std::string> programs = {"dataloader_starved", "healthy_matmul",
                                             "item_sync",          "tiny_mlp_launch_bound",
                                             "mixed_resnet",       "pageable_h2d"};
  std::vector<std::string> reports;
  for (const std::string& p : programs) {
    reports.push_back(dir.Path(p + ".json"));
    ASSERT_EQ(Cli({"analyze", "-q", "--out", reports.back(), kTraces + "/" + p + ".json.gz"}).code,
              kExitOk);
  }
  for (size_t i = 0; i < programs.size(); ++i) {
    for (size_t j = 0; j < programs.size(); ++j) {
      const CliResult r = Cli({"diff", "--format", "json", reports[i], reports[j]});
      ASSERT_EQ(r.code, kExitOk) << r.err;
      const rapidjson::Document doc = ParseDiff(r.out);
      EXPECT_EQ(doc["comparability"]["comparable"].GetBool(), i == j)
          << programs[i] << " -> " << programs[j] << ": " << doc["verdict"]["text"].GetString();
      EXPECT_EQ(std::string(doc["verdict"]["outcome"].GetString()) == "not_comparable", i != j);
      EXPECT_EQ(std::string(doc["verdict"]["text"].GetString()).find("worked"), std::string::npos);
    }
  }
}

// A run's reports, written by `gpuidle analyze`, compare as its traces do.
TEST(DiffCommand, ReportsGiveTheDiffTheirTracesGive) {
  TempDir dir;
  const std::string before = dir.Path("before.json"), after = dir.Path("after.json");
  ASSERT_EQ(Cli({"analyze", "-q", "--out", before, kStarved}).code, kExitOk);
  ASSERT_EQ(Cli({"analyze", "-q", "--out", after, kHealthy}).code, kExitOk);
  const CliResult traces = Cli({"diff", "--format", "json", kStarved, kHealthy});
  const CliResult reports = Cli({"diff", "--format", "json", before, after});
  ASSERT_EQ(reports.code, kExitOk) << reports.err;
  rapidjson::Document a = ParseDiff(traces.out), b = ParseDiff(reports.out);
  for (rapidjson::Document* d : {&a, &b}) {
    (*d)["before"].RemoveMember("inputs");
    (*d)["after"].RemoveMember("inputs");
  }
  EXPECT_TRUE(a == b) << "from traces:\n" << traces.out << "\nfrom reports:\n" << reports.out;
}

// Several files a side are the ranks of one job; the devices pair up by rank.
TEST(DiffCommand, ComparesTheRanksOfAJobAcrossTheSeparator) {
  const CliResult r = Cli({"diff", "--format", "json", kRank0, kRank1, "--", kRank0, kRank1});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const rapidjson::Document doc = ParseDiff(r.out);
  EXPECT_EQ(doc["before"]["devices"].GetInt(), 2);
  ASSERT_EQ(doc["devices"].Size(), 2u);
  std::vector<int> ranks;
  for (const auto& d : doc["devices"].GetArray()) ranks.push_back(d["after"]["rank"].GetInt());
  EXPECT_THAT(ranks, ElementsAre(0, 1));
  EXPECT_FALSE(doc["communication"]["wait_per_unit_ns"].IsNull());
  EXPECT_STREQ(doc["verdict"]["outcome"].GetString(), "unchanged");

  // One rank against the job: a comparison, with the unmatched rank named.
  const CliResult one = Cli({"diff", kRank0, "--", kRank0, kRank1});
  ASSERT_EQ(one.code, kExitOk) << one.err;
  EXPECT_THAT(one.out, HasSubstr("the comparison is weak"));
  EXPECT_THAT(one.out, HasSubstr("after only: rank 1 GPU 1"));
}

TEST(DiffCommand, NeedsTheRunBeforeAndTheRunAfter) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"diff"},
                                             {"diff", kStarved},
                                             {"diff", kStarved, kHealthy, kStarved},
                                             {"diff", kStarved, "--"},
                                             {"diff", "--", kStarved}}) {
    const CliResult r = Cli(args);
    EXPECT_EQ(r.code, kExitUsage) << args.size();
    EXPECT_THAT(r.err, HasSubstr("diff needs the run before and the run after"));
    EXPECT_EQ(r.out, "");
  }
  const CliResult twice = Cli({"diff", kStarved, "--", kHealthy, "--", kStarved});
  EXPECT_EQ(twice.code, kExitUsage);
  EXPECT_THAT(twice.err, HasSubstr("one \"--\""));
}

TEST(DiffCommand, RejectsBadOptions) {
  CliResult r = Cli({"diff", "--format", "html", kStarved, kHealthy});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("--format \"html\": must be \"text\" or \"json\""));
  r = Cli({"diff", "--fast", kStarved, kHealthy});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("unknown option --fast"));
  r = Cli({"diff", kStarved, kHealthy, "--out"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("--out needs a value"));
  r = Cli({"diff", "--launch-gap-max-us", "0", kStarved, kHealthy});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("--launch-gap-max-us \"0\": must be"));
}

TEST(DiffCommand, AppliesTheAnalysisThresholdsToBothRuns) {
  const auto host = [](const std::vector<std::string>& flags) {
    std::vector<std::string> args = {"diff", "--format", "json"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {kStarved, kStarved});
    const CliResult r = Cli(args);
    EXPECT_EQ(r.code, kExitOk) << r.err;
    const rapidjson::Document doc = ParseDiff(r.out);
    const rapidjson::Value& v = doc["lost_by_subcause"]["data_starved.host"];
    EXPECT_EQ(v["before"].GetInt64(), v["after"].GetInt64());
    return v["after"].GetInt64();
  };
  // With a 1 us launch gap the eager dispatch between launches is host time, on both sides.
  EXPECT_GT(host({"--launch-gap-max-us", "1"}), host({}) + 1'000'000);
}

TEST(DiffCommand, NamesTheSideOfAnUnreadableInput) {
  TempDir dir;
  const std::string missing = dir.Path("missing.json.gz");
  CliResult r = Cli({"diff", missing, kHealthy});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("gpuidle: before: "));
  EXPECT_THAT(r.err, HasSubstr(missing));
  const std::string junk = dir.Write("junk.json", "not json");
  r = Cli({"diff", kStarved, junk});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("gpuidle: after: "));
  EXPECT_EQ(r.out, "");
}

TEST(DiffCommand, WritesTheDiffFileByTheOutputRules) {
  TempDir dir;
  const std::string path = dir.Path("diff.json");
  CliResult r = Cli({"diff", "--out", path, kStarved, kHealthy});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  ParseDiff(ReadFileOrDie(path));  // JSON from the extension
  EXPECT_THAT(r.out, StartsWith("gpuidle diff: what changed"));
  EXPECT_THAT(r.out, HasSubstr("diff written to " + path + "\n"));

  // An existing file is replaced only when asked.
  r = Cli({"diff", "--out", path, kLoaderAfter, kLoaderBefore});
  EXPECT_EQ(r.code, kExitBadOutput);
  EXPECT_THAT(r.err, HasSubstr("(--overwrite replaces it)"));
  r = Cli({"diff", "-q", "--overwrite", "--format", "text", "--out", path, kLoaderAfter,
           kLoaderBefore});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(ReadFileOrDie(path), StartsWith("gpuidle diff: what changed"));
  EXPECT_THAT(ReadFileOrDie(path), HasSubstr("it got worse"));

  // Never over an input, of either run.
  TempDir inputs;
  const std::string before = inputs.Path("before.json");
  ASSERT_EQ(Cli({"analyze", "-q", "--out", before, kStarved}).code, kExitOk);
  const std::string kept = ReadFileOrDie(before);
  r = Cli({"diff", "--overwrite", "--out", before, kHealthy, before});
  EXPECT_EQ(r.code, kExitBadOutput);
  EXPECT_EQ(ReadFileOrDie(before), kept);
}

TEST(DiffCommand, PrintsNothingWhenQuiet) {
  const CliResult r = Cli({"diff", "--quiet", kStarved, kHealthy});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace gpuidle::internal
