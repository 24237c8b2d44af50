#include "cli/cli.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/version.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ingest/byte_source.h"
#include "rapidjson/document.h"
#include "testing/cli_run.h"
#include "testing/temp_dir.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::Gzip;
using ::gpuidle::testing::ReadFileOrDie;
using ::gpuidle::testing::TempDir;
using ::testing::AnyOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

const std::string kTraces = GPUIDLE_TEST_DATA_DIR "/traces/torch";
const std::string kItemSync = kTraces + "/item_sync.json.gz";

using ::gpuidle::testing::Cli;
using ::gpuidle::testing::CliResult;

bool IsJson(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse(text.c_str(), text.size());
  return !doc.HasParseError() && doc.IsObject() && doc.HasMember("schema") &&
         doc["schema"] == "gpuidle.report/2";
}

TEST(Cli, ExitCodesStayBelowTheRangeShellsReserve) {
  for (int code :
       {kExitOk, kExitInternal, kExitUsage, kExitBadInput, kExitBadOutput, kExitNoLibrary}) {
    EXPECT_LT(code, 124);
  }
  EXPECT_EQ(kExitOk, 0);
}

TEST(Cli, PrintsHelp) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"help"}, {"--help"}, {"-h"}}) {
    const CliResult r = Cli(args);
    EXPECT_EQ(r.code, kExitOk) << args[0];
    EXPECT_THAT(r.out, StartsWith("usage: gpuidle <command> [options]"));
    EXPECT_THAT(r.out, HasSubstr("--launch-gap-max-us N"));
    EXPECT_THAT(r.out, HasSubstr("--trace PATH"));
    EXPECT_THAT(r.out, HasSubstr("-o, --out PATH"));
    EXPECT_EQ(r.err, "");
  }
}

// Each command's --help (and `gpuidle help COMMAND`) prints that command's usage alone.
TEST(Cli, PrintsEachCommandsOwnHelp) {
  struct Case {
    std::vector<std::string> args;
    std::string starts, has, lacks;
  };
  const std::vector<Case> cases = {
      {{"analyze", "--help"},
       "usage: gpuidle analyze [options] TRACE...",
       "--trace PATH",
       "run options"},
      {{"analyze", "-h"},
       "usage: gpuidle analyze [options] TRACE...",
       "--launch-gap-max-us N",
       "diff options"},
      {{"analyze", "--format", "json", "--help", kItemSync},
       "usage: gpuidle analyze",
       "--out",
       "run options"},
      {{"help", "analyze"},
       "usage: gpuidle analyze [options] TRACE...",
       "tensorboard_trace_handler",
       "run options"},
      {{"diff", "--help"},
       "usage: gpuidle diff [options] BEFORE AFTER",
       "diff options",
       "analyze outputs"},
      {{"diff", "a.json", "-h", "b.json"},
       "usage: gpuidle diff",
       "BEFORE... -- AFTER...",
       "run options"},
      {{"help", "diff"}, "usage: gpuidle diff", "--overwrite", "run options"},
      {{"run", "--help"},
       "usage: gpuidle run [options] [--] COMMAND [ARGS...]",
       "--buffer-mb N",
       "analyze outputs"},
      {{"help", "run"}, "usage: gpuidle run", "--sample W/P", "diff options"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrJoin(c.args, " "));
    const CliResult r = Cli(c.args);
    EXPECT_EQ(r.code, kExitOk);
    EXPECT_THAT(r.out, StartsWith(c.starts));
    EXPECT_THAT(r.out, HasSubstr(c.has));
    EXPECT_THAT(r.out, Not(HasSubstr(c.lacks)));
    EXPECT_THAT(r.out, Not(HasSubstr("usage: gpuidle <command>")));
    EXPECT_EQ(r.err, "");
    for (absl::string_view line : absl::StrSplit(r.out, '\n')) EXPECT_LE(line.size(), 96u) << line;
  }
  EXPECT_EQ(Cli({"help", "analyze"}).out, Cli({"analyze", "--help"}).out);
  const CliResult unknown = Cli({"help", "analyse"});
  EXPECT_EQ(unknown.code, kExitUsage);
  EXPECT_THAT(unknown.err, HasSubstr("no help for \"analyse\""));
}

TEST(Cli, PrintsTheVersion) {
  for (const char* command : {"version", "--version"}) {
    const CliResult r = Cli({command});
    EXPECT_EQ(r.code, kExitOk);
    EXPECT_EQ(r.out, absl::StrCat("gpuidle ", kVersion, "\n"));
    EXPECT_EQ(r.err, "");
  }
}

TEST(Cli, ShowsUsageWithoutArguments) {
  const CliResult r = Cli({});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("usage: gpuidle"));
  EXPECT_EQ(r.out, "");
}

TEST(Cli, RejectsAnUnknownCommand) {
  const CliResult r = Cli({"analyse", kItemSync});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("unknown command \"analyse\""));
  EXPECT_EQ(r.out, "");
}

TEST(Cli, RejectsAnUnknownOption) {
  const CliResult r = Cli({"analyze", "--fast", kItemSync});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("unknown option --fast"));
  EXPECT_EQ(r.out, "");
}

TEST(Cli, RejectsAnOptionWithoutItsValue) {
  for (const char* flag :
       {"--out", "--format", "--launch-gap-max-us", "--data-range", "--max-gaps"}) {
    const CliResult r = Cli({"analyze", kItemSync, flag});
    EXPECT_EQ(r.code, kExitUsage) << flag;
    EXPECT_THAT(r.err, HasSubstr(absl::StrCat(flag, " needs a value")));
    EXPECT_EQ(r.out, "");
  }
}

TEST(Cli, RejectsAnUnknownFormat) {
  const CliResult r = Cli({"analyze", "--format", "xml", kItemSync});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("--format \"xml\": must be \"text\", \"json\" or \"html\""));
  EXPECT_EQ(r.out, "");
}

// The rules of the GPUIDLE_* variables and `gpuidle run` (settings/environment.h).
TEST(Cli, RejectsABadLaunchGap) {
  for (const char* value : {"abc", "0", "-5", "10us", "99999999999"}) {
    const CliResult r = Cli({"analyze", "--launch-gap-max-us", value, kItemSync});
    EXPECT_EQ(r.code, kExitUsage) << value;
    EXPECT_THAT(r.err, HasSubstr(absl::StrCat("--launch-gap-max-us \"", value, "\": must be")));
    EXPECT_EQ(r.out, "");
  }
  const CliResult empty = Cli({"analyze", "--launch-gap-max-us", "", kItemSync});
  EXPECT_EQ(empty.code, kExitUsage);
  EXPECT_THAT(empty.err, HasSubstr("--launch-gap-max-us needs a non-empty value"));
  EXPECT_EQ(Cli({"analyze", "--launch-gap-max-us", "1.5", kItemSync}).code, kExitOk);
}

TEST(Cli, RejectsABadGapCountAndAcceptsZero) {
  const CliResult r = Cli({"analyze", "--max-gaps", "-1", kItemSync});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("--max-gaps \"-1\": must be an integer from 0 to 1000000"));
  EXPECT_EQ(Cli({"analyze", "--max-gaps", "0", "--skip-steps", "0", kItemSync}).code, kExitOk);
}

TEST(Cli, QuotesAHugeValueShortAndEscaped) {
  const CliResult r =
      Cli({"analyze", "--max-gaps", std::string(100'000, '7') + "\x1b[2J", kItemSync});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_LT(r.err.size(), 300u);
  EXPECT_THAT(r.err, HasSubstr("(100004 bytes)"));
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos);
}

TEST(Cli, SkipsWarmUpStepsAndSaysWhenNoneWouldBeLeft) {
  const CliResult all = Cli({"analyze", "--format", "json", kItemSync});
  const CliResult warm = Cli({"analyze", "--format", "json", "--skip-steps", "1", kItemSync});
  ASSERT_EQ(warm.code, kExitOk) << warm.err;
  EXPECT_THAT(warm.out, HasSubstr("\"skip_steps\": 1"));
  EXPECT_NE(warm.out, all.out);
  const CliResult none = Cli({"analyze", "--skip-steps", "1000", kItemSync});
  EXPECT_NE(none.code, kExitOk);
  EXPECT_THAT(none.err, HasSubstr("skipping 1000 leaves none"));
}

TEST(Cli, NeedsATrace) {
  const CliResult r = Cli({"analyze", "--format", "json"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("analyze needs at least one trace file"));
}

// --- unreadable traces: exit 3, the path and the problem on stderr, nothing on stdout ---

struct BadInput {
  std::string name;
  std::string contents;
  std::string problem;
};

std::string ValidTrace() {
  return R"({"traceEvents": [
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
     "ts": 1, "dur": 2, "args": {"correlation": 5}},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 4, "dur": 10,
     "args": {"device": 0, "stream": 7, "correlation": 5}}
  ]})";
}

std::vector<BadInput> BadInputs() {
  const std::string gz = Gzip(ValidTrace());
  std::string corrupt = gz;
  for (size_t i = corrupt.size() / 2 - 2; i < corrupt.size() / 2 + 2; ++i) {
    corrupt[i] = static_cast<char>(corrupt[i] ^ 0x5a);
  }
  std::string random(2048, '\0');
  uint32_t x = 11;
  for (char& c : random) {
    x = x * 1103515245u + 12345u;
    c = static_cast<char>(x >> 16);
  }
  random[0] = 'Q';
  const std::string text = ValidTrace();
  return {
      {"empty.json", "", "is empty"},
      {"random.bin", random, "not JSON"},
      {"half.json", text.substr(0, text.size() / 2), "truncated"},
      {"cut.json.gz", gz.substr(0, gz.size() / 2), "truncated gzip"},
      {"corrupt.json.gz", corrupt, "corrupt gzip"},
      {"object.json", R"({"a": 1})", "no \"traceEvents\" array"},
      {"number.json", "42", "the JSON document is a number, not a trace"},
      {"string.json", R"("x")", "the JSON document is a string, not a trace"},
      {"events_object.json", R"({"traceEvents": {}})", "\"traceEvents\" must be an array"},
      // Unusable events are skipped with a warning; a trace left without activity is an
      // error that repeats the warnings.
      {"event_number.json", R"({"traceEvents": [1]})",
       "no host or GPU activity (was the profiler active? CPU and CUDA activities recorded?); "
       "skipped 1 entries of \"traceEvents\" that are not objects"},
      {"ts_string.json",
       R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": "abc", "dur": 1}]})",
       "skipped 1 kernel events whose \"ts\" is not a number"},
      {"dur_bool.json",
       R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "op", "ts": 1, "dur": true}]})",
       "skipped 1 cpu_op events whose \"dur\" is not a number"},
      {"no_category.json", R"({"traceEvents": [{"name": 5}]})", "no host or GPU activity"},
      {"trailing.json", text + " trailing", "unexpected data after the end"},
  };
}

TEST(Cli, ReportsEachUnreadableTraceWithItsPathAndProblem) {
  TempDir dir;
  for (const BadInput& bad : BadInputs()) {
    SCOPED_TRACE(bad.name);
    const std::string path = dir.Write(bad.name, bad.contents);
    const CliResult r = Cli({"analyze", path});
    EXPECT_EQ(r.code, kExitBadInput);
    EXPECT_THAT(r.err, StartsWith(absl::StrCat("gpuidle: ", path)));
    EXPECT_THAT(r.err, HasSubstr(bad.problem));
    EXPECT_EQ(r.out, "");
  }
}

TEST(Cli, ReportsAMissingTraceAndADirectory) {
  TempDir dir;
  const std::string missing = dir.Path("missing.json.gz");
  CliResult r = Cli({"analyze", missing});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, StartsWith("gpuidle: " + missing));
  EXPECT_THAT(r.err, HasSubstr("No such file or directory"));
  EXPECT_EQ(r.out, "");

  r = Cli({"analyze", dir.path()});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, StartsWith("gpuidle: " + dir.path()));
  EXPECT_THAT(r.err, HasSubstr("is a directory"));
  EXPECT_EQ(r.out, "");
}

TEST(Cli, ReportsATraceWithoutActivityAsBadInput) {
  TempDir dir;
  const std::string path = dir.Write("empty_trace.json", R"({"traceEvents": []})");
  const CliResult r = Cli({"analyze", path});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, StartsWith("gpuidle: " + path + ": "));
  EXPECT_THAT(r.err, HasSubstr("no host or GPU activity"));
  EXPECT_EQ(r.out, "");
}

TEST(Cli, NamesTheBadTraceAmongSeveral) {
  TempDir dir;
  const std::string good = dir.Write("good.json", ValidTrace());
  const std::string bad = dir.Write("bad.json", "[1]");
  const CliResult r = Cli({"analyze", good, bad});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, StartsWith("gpuidle: " + bad + ": "));
  EXPECT_EQ(r.out, "");
}

// --- good traces ---

TEST(Cli, AnalysesARecordedTrace) {
  const CliResult r = Cli({"analyze", kItemSync});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, StartsWith("gpuidle: why the GPU was idle\n"));
  EXPECT_THAT(r.out, HasSubstr("GPU 0  NVIDIA H200"));
  EXPECT_THAT(r.out, HasSubstr("sync_bound"));
  EXPECT_EQ(r.err, "");
}

TEST(Cli, WritesJsonToStandardOutput) {
  const CliResult r = Cli({"analyze", "--format", "json", kItemSync});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_TRUE(IsJson(r.out)) << r.out.substr(0, 200);
}

TEST(Cli, WritesTheReportFileAndPrintsTheSummary) {
  TempDir dir;
  const std::string report = dir.Path("report.out");
  const CliResult r = Cli({"analyze", "--format", "json", "--out", report, kItemSync});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_TRUE(IsJson(ReadFileOrDie(report)));
  EXPECT_THAT(r.out, StartsWith("gpuidle: why the GPU was idle\n"));
  EXPECT_THAT(r.out, HasSubstr("sync_bound"));
  EXPECT_THAT(r.out, HasSubstr("report written to " + report + "\n"));
  EXPECT_THAT(dir.List(), ElementsAre("report.out"));
}

TEST(Cli, TakesTheReportFormatFromTheExtension) {
  TempDir dir;
  ASSERT_EQ(Cli({"analyze", "--out", dir.Path("r.json"), kItemSync}).code, kExitOk);
  EXPECT_TRUE(IsJson(ReadFileOrDie(dir.Path("r.json"))));
  ASSERT_EQ(Cli({"analyze", "--out", dir.Path("r.txt"), kItemSync}).code, kExitOk);
  EXPECT_THAT(ReadFileOrDie(dir.Path("r.txt")), StartsWith("gpuidle: why the GPU was idle\n"));
  ASSERT_EQ(Cli({"analyze", "--format", "text", "--out", dir.Path("t.json"), kItemSync}).code,
            kExitOk);
  EXPECT_THAT(ReadFileOrDie(dir.Path("t.json")), StartsWith("gpuidle: why the GPU was idle\n"));
}

TEST(Cli, PrintsNothingWhenQuiet) {
  TempDir dir;
  CliResult r = Cli({"analyze", "--quiet", kItemSync});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_EQ(r.out, "");
  r = Cli({"analyze", "-q", "--out", dir.Path("r.json"), kItemSync});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(IsJson(ReadFileOrDie(dir.Path("r.json"))));
}

TEST(Cli, AnalysesTheRanksOfOneJobTogether) {
  const CliResult r = Cli({"analyze", kTraces + "/nccl_straggler.rank0.json.gz",
                           kTraces + "/nccl_straggler.rank1.json.gz"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("rank 0 GPU 0"));
  EXPECT_THAT(r.out, HasSubstr("rank 1 GPU 1"));
  EXPECT_THAT(r.out, HasSubstr("waiting for peers"));
}

// A job merged from its ranks' JSON reports (each written by analysing one rank's trace), and
// from a report and a trace together.
TEST(Cli, MergesTheRanksOfOneJobFromTheirReports) {
  TempDir dir;
  const std::string rank0 = dir.Path("report.0.json");
  const std::string rank1 = dir.Path("report.1.json");
  ASSERT_EQ(Cli({"analyze", "-q", "--format", "json", "--out", rank0,
                 kTraces + "/nccl_straggler.rank0.json.gz"})
                .code,
            kExitOk);
  ASSERT_EQ(Cli({"analyze", "-q", "--format", "json", "--out", rank1,
                 kTraces + "/nccl_straggler.rank1.json.gz"})
                .code,
            kExitOk);
  const auto ranks_of_devices = [](const rapidjson::Value& doc) {
    std::vector<int> ranks;
    for (const auto& d : doc["devices"].GetArray()) {
      ranks.push_back(d["rank"].IsInt() ? d["rank"].GetInt() : -1);
    }
    return ranks;
  };
  for (const std::vector<std::string>& inputs : std::vector<std::vector<std::string>>{
           {rank0, rank1}, {rank0, kTraces + "/nccl_straggler.rank1.json.gz"}}) {
    SCOPED_TRACE(inputs[1]);
    const CliResult r = Cli({"analyze", "--format", "json", inputs[0], inputs[1]});
    ASSERT_EQ(r.code, kExitOk) << r.err;
    ASSERT_TRUE(IsJson(r.out)) << r.out.substr(0, 200);
    rapidjson::Document doc;
    doc.Parse(r.out.c_str(), r.out.size());
    EXPECT_THAT(ranks_of_devices(doc), ElementsAre(0, 1));
    ASSERT_EQ(doc["inputs"].Size(), 2u);
    EXPECT_EQ(std::string(doc["inputs"][0].GetString()), inputs[0]);
    EXPECT_TRUE(doc.HasMember("straggler_rank"));
  }
  const CliResult text = Cli({"analyze", rank0, rank1});
  EXPECT_EQ(text.code, kExitOk) << text.err;
  EXPECT_THAT(text.out, HasSubstr("rank 0 GPU 0"));
  EXPECT_THAT(text.out, HasSubstr("rank 1 GPU 1"));

  // One report alone is formatted again as it was.
  const CliResult again = Cli({"analyze", "--format", "json", rank0});
  ASSERT_EQ(again.code, kExitOk) << again.err;
  rapidjson::Document doc;
  doc.Parse(again.out.c_str(), again.out.size());
  EXPECT_THAT(ranks_of_devices(doc), ElementsAre(0));

  // A broken report is unreadable input, named.
  const std::string bad =
      dir.Write("bad.json", "{\"schema\": \"gpuidle.report/2\", \"source\": []}");
  const CliResult broken = Cli({"analyze", rank0, bad});
  EXPECT_EQ(broken.code, kExitBadInput);
  EXPECT_THAT(broken.err, HasSubstr(bad + ": source: not a string"));
}

// A job merges the same from its ranks' reports as from their traces (issue 16): the same report
// but for its inputs.
TEST(Cli, MergingReportsGivesWhatMergingTracesGives) {
  TempDir dir;
  std::vector<std::string> traces, reports;
  for (int rank = 0; rank < 2; ++rank) {
    traces.push_back(absl::StrCat(kTraces, "/nccl_straggler.rank", rank, ".json.gz"));
    reports.push_back(dir.Path(absl::StrCat("report.", rank, ".json")));
    ASSERT_EQ(Cli({"analyze", "-q", "--out", reports.back(), traces.back()}).code, kExitOk);
  }
  const CliResult from_traces = Cli({"analyze", "--format", "json", traces[0], traces[1]});
  const CliResult from_reports = Cli({"analyze", "--format", "json", reports[0], reports[1]});
  ASSERT_EQ(from_traces.code, kExitOk) << from_traces.err;
  ASSERT_EQ(from_reports.code, kExitOk) << from_reports.err;
  rapidjson::Document a, b;
  a.Parse(from_traces.out.c_str(), from_traces.out.size());
  b.Parse(from_reports.out.c_str(), from_reports.out.size());
  ASSERT_TRUE(a.IsObject() && b.IsObject());
  a.RemoveMember("inputs");
  b.RemoveMember("inputs");
  EXPECT_TRUE(a == b) << "from traces:\n"
                      << from_traces.out << "\nfrom reports:\n"
                      << from_reports.out;
}

TEST(Cli, LeavesAnExistingReportUntouchedWhenAnalysisFails) {
  TempDir dir;
  const std::string old_report = "{\"schema\": \"an older report\"}\n";
  const std::string report = dir.Write("report.json", old_report);
  const std::string bad = dir.Path("missing.json.gz");
  const CliResult r = Cli({"analyze", "--out", report, bad});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(ReadFileOrDie(report), old_report);
  EXPECT_THAT(dir.List(), ElementsAre("report.json"));  // no temporary file either
  EXPECT_EQ(r.out, "");
}

TEST(Cli, FailsWhenTheReportCannotBeWritten) {
  TempDir dir;
  const std::string report = dir.Path("no/such/dir/report.json");
  CliResult r = Cli({"analyze", "--out", report, kItemSync});
  EXPECT_EQ(r.code, kExitBadOutput);
  EXPECT_THAT(r.err, StartsWith("gpuidle: cannot write " + report));
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(dir.List().empty());

  r = Cli({"analyze", "--out", dir.path(), kItemSync});  // a directory
  EXPECT_EQ(r.code, kExitBadOutput);
  EXPECT_THAT(r.err, HasSubstr("is a directory"));
}

// The output rules (core/output_file.h, docs/RELIABILITY.md) through --out.
TEST(Cli, OutNeverReplacesAFileUnlessToldAndNeverAnInput) {
  TempDir dir;
  const std::string report = dir.Write("r.json", "mine\n");
  CliResult r = Cli({"analyze", "--out", report, kItemSync});
  EXPECT_EQ(r.code, kExitBadOutput);
  EXPECT_THAT(r.err, HasSubstr("it exists (--overwrite replaces it)"));
  EXPECT_EQ(ReadFileOrDie(report), "mine\n");
  r = Cli({"analyze", "--overwrite", "--out", report, kItemSync});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_TRUE(IsJson(ReadFileOrDie(report)));

  const std::string trace = dir.Write("t.json.gz", ReadFileOrDie(kItemSync));
  r = Cli({"analyze", "--overwrite", "--out", trace, trace});
  EXPECT_EQ(r.code, kExitBadOutput);
  EXPECT_THAT(r.err, HasSubstr("one of the inputs"));
  EXPECT_EQ(ReadFileOrDie(trace), ReadFileOrDie(kItemSync));
  EXPECT_THAT(dir.List(), ElementsAre("r.json", "t.json.gz"));
}

TEST(Cli, OutNeverReplacesADeviceOrALink) {
  TempDir dir;
  const std::string link = dir.Path("link.json");
  ASSERT_EQ(::symlink("/dev/null", link.c_str()), 0);
  for (const std::string& target : {std::string("/dev/null"), link}) {
    const CliResult r = Cli({"analyze", "--overwrite", "--out", target, kItemSync});
    EXPECT_EQ(r.code, kExitBadOutput) << target;
    EXPECT_THAT(r.err, AnyOf(HasSubstr("a device"), HasSubstr("symbolic link"))) << target;
  }
  struct stat st {};
  ASSERT_EQ(::lstat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
}

TEST(Cli, OutWritesAGzNameCompressed) {
  TempDir dir;
  const std::string report = dir.Path("r.json.gz");
  ASSERT_EQ(Cli({"analyze", "-q", "--out", report, kItemSync}).code, kExitOk);
  EXPECT_EQ(ReadFileOrDie(report).substr(0, 2), "\x1f\x8b");
  absl::StatusOr<std::unique_ptr<ByteSource>> source = OpenByteSource(report);
  ASSERT_TRUE(source.ok()) << source.status();
  std::string inflated(1 << 20, '\0');
  size_t size = 0;
  for (absl::StatusOr<size_t> n = 1; n.ok() && *n > 0; size += *n) {
    n = (*source)->Read(inflated.data() + size, inflated.size() - size);
    ASSERT_TRUE(n.ok()) << n.status();
    if (*n == 0) break;
  }
  inflated.resize(size);
  EXPECT_EQ(inflated, Cli({"analyze", "--format", "json", kItemSync}).out);
}

TEST(Cli, FailsWhenStandardOutputCannotBeWritten) {
  std::ostream broken(nullptr);  // every write fails
  std::ostringstream err;
  const int code = RunCli({"analyze", kItemSync}, broken, err);
  EXPECT_EQ(code, kExitBadOutput);
  EXPECT_THAT(err.str(), HasSubstr("cannot write the report to standard output"));
}

// --- option forms: --option=VALUE, -o ---

TEST(Cli, TakesEveryValueAfterAnEqualsSign) {
  TempDir dir;
  const CliResult spaced = Cli({"analyze", "--format", "json", "--max-gaps", "3", kItemSync});
  ASSERT_EQ(spaced.code, kExitOk) << spaced.err;
  const CliResult joined = Cli({"analyze", "--format=json", "--max-gaps=3", kItemSync});
  ASSERT_EQ(joined.code, kExitOk) << joined.err;
  EXPECT_TRUE(IsJson(joined.out));
  EXPECT_EQ(joined.out, spaced.out);
  // Every setting that takes a value: --launch-gap-max-us=, --data-range=, --skip-steps= ...
  const CliResult thresholds =
      Cli({"analyze", "--format=json", "--launch-gap-max-us=250", "--dispatch-latency-max-us=50",
           "--data-range=fetch", "--skip-steps=1", "--color=never", kItemSync});
  ASSERT_EQ(thresholds.code, kExitOk) << thresholds.err;
  EXPECT_THAT(thresholds.out, HasSubstr("\"skip_steps\": 1"));
  EXPECT_THAT(thresholds.out, HasSubstr("\"launch_gap_max_ns\": 250000"));
  // A value that holds "=" itself, and one given apart that looks like an option.
  const std::string odd = dir.Path("a=b.json");
  EXPECT_EQ(Cli({"analyze", "-q", "--out=" + odd, kItemSync}).code, kExitOk);
  EXPECT_TRUE(IsJson(ReadFileOrDie(odd)));
  const std::string dashed = dir.Path("--x=1.json");
  EXPECT_EQ(Cli({"analyze", "-q", "--out", dashed, kItemSync}).code, kExitOk);
  EXPECT_TRUE(IsJson(ReadFileOrDie(dashed)));
}

TEST(Cli, RefusesBadValuesAfterAnEqualsSignAsItDoesApart) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--format=xml"}, "--format \"xml\": must be \"text\", \"json\" or \"html\""},
      {{"--format="}, "--format needs a non-empty value"},
      {{"--out="}, "--out needs a non-empty value"},
      {{"--max-gaps=-1"}, "--max-gaps \"-1\": must be an integer from 0 to 1000000"},
      {{"--quiet=yes"}, "--quiet takes no value"},
      {{"--overwrite=1"}, "--overwrite takes no value"},
      {{"--fast=1"}, "unknown option --fast=1"},
      {{"-o"}, "-o needs a value"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args[0]);
    std::vector<std::string> args = {"analyze", kItemSync};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const CliResult r = Cli(args);
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_THAT(r.err, HasSubstr(c.message));
    EXPECT_EQ(r.out, "");
  }
}

TEST(Cli, TakesDashOAsTheOutputOption) {
  TempDir dir;
  const CliResult r = Cli({"analyze", "-o", dir.Path("r.json"), kItemSync});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_TRUE(IsJson(ReadFileOrDie(dir.Path("r.json"))));
  EXPECT_THAT(r.out, HasSubstr("report written to " + dir.Path("r.json")));
  // The same rules as --out: no file replaced unless asked.
  const CliResult again = Cli({"analyze", "-o", dir.Path("r.json"), kItemSync});
  EXPECT_EQ(again.code, kExitBadOutput);
  EXPECT_THAT(again.err, HasSubstr("it exists (--overwrite replaces it)"));
}

// diff's parser is its own; the forms reach it from the dispatch.
TEST(Cli, DiffTakesTheSameForms) {
  TempDir dir;
  const std::string before = kItemSync, after = kTraces + "/healthy_matmul.json.gz";
  const CliResult json = Cli({"diff", "--format=json", before, after});
  ASSERT_EQ(json.code, kExitOk) << json.err;
  EXPECT_THAT(json.out, HasSubstr("\"schema\": \"gpuidle.diff/1\""));
  const CliResult out = Cli({"diff", "-q", "-o", dir.Path("d.json"), before, after});
  ASSERT_EQ(out.code, kExitOk) << out.err;
  EXPECT_THAT(ReadFileOrDie(dir.Path("d.json")), HasSubstr("\"schema\": \"gpuidle.diff/1\""));
  const CliResult bad = Cli({"diff", "--format=xml", before, after});
  EXPECT_EQ(bad.code, kExitUsage);
  EXPECT_THAT(bad.err, HasSubstr("--format \"xml\""));
}

// --- output paths: a missing directory is named as such ---

TEST(Cli, NamesAMissingOutputDirectory) {
  TempDir dir;
  const std::string report = dir.Path("out/report.json");
  CliResult r = Cli({"analyze", "--out", report, kItemSync});
  EXPECT_EQ(r.code, kExitBadOutput);
  EXPECT_THAT(r.err, HasSubstr(absl::StrCat("cannot write ", report, ": the directory ",
                                            dir.Path("out/"), " does not exist")));
  EXPECT_THAT(r.err, Not(HasSubstr("temporary")));
  // A file where a directory should be.
  dir.Write("file", "x");
  r = Cli({"analyze", "--out", dir.Path("file/sub/report.json"), kItemSync});
  EXPECT_EQ(r.code, kExitBadOutput);
  EXPECT_THAT(r.err, HasSubstr(dir.Path("file") + " is not a directory"));
  // The trace's path and diff's too.
  r = Cli({"analyze", "--trace", dir.Path("traces/t.json"), kItemSync});
  EXPECT_EQ(r.code, kExitBadOutput);
  EXPECT_THAT(r.err, HasSubstr("the directory " + dir.Path("traces/") + " does not exist"));
  r = Cli({"diff", "-o", dir.Path("diffs/d.json"), kItemSync, kItemSync});
  EXPECT_EQ(r.code, kExitBadOutput);
  EXPECT_THAT(r.err, HasSubstr("the directory " + dir.Path("diffs/") + " does not exist"));
  EXPECT_THAT(dir.List(), ElementsAre("file"));
}

// --- a .gz name whose bytes are no gzip ---

TEST(Cli, SaysWhenAGzNameHoldsNoGzipData) {
  TempDir dir;
  const std::string text = ValidTrace();
  // Plain JSON cut short: the name promised gzip, and the read says what it found.
  const std::string cut = dir.Write("cut.json.gz", text.substr(0, text.size() / 2));
  CliResult r = Cli({"analyze", cut});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, StartsWith(absl::StrCat("gpuidle: ", cut,
                                             " is not gzip data (it starts like JSON; rename it "
                                             "to cut.json)")));
  EXPECT_THAT(r.err, HasSubstr("truncated"));
  // Neither gzip nor JSON.
  const std::string html = dir.Write("page.json.gz", "<!DOCTYPE html><html>Not Found</html>");
  r = Cli({"analyze", html});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr(html + " is not gzip data (it starts with \"<!DOCTYPE html><\")"));
  // Plain JSON that reads is read, as before, with a warning.
  const std::string plain = dir.Write("plain.json.gz", text);
  r = Cli({"analyze", "--format", "json", plain});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr(plain + " is not gzip data (it starts like JSON; rename it to "
                                       "plain.json): read as plain JSON"));
  // A real gzip file gets no such word.
  const std::string gz = dir.Write("real.json.gz", Gzip(text));
  r = Cli({"analyze", "--format", "json", gz});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("not gzip")));
}

// --- a directory of torch.profiler's tensorboard_trace_handler ---

// A trace whose one kernel starts at `ts` us (distinct traces for distinct files).
std::string TraceAt(int ts) {
  return absl::StrCat(R"({"traceEvents": [
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
     "ts": )",
                      ts, R"(, "dur": 2, "args": {"correlation": 5}},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": )",
                      ts + 3, R"(, "dur": 10,
     "args": {"device": 0, "stream": 7, "correlation": 5}}
  ]})");
}

std::vector<std::string> InputsOf(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  std::vector<std::string> inputs;
  if (!doc.IsObject() || !doc.HasMember("inputs")) return inputs;
  for (const auto& i : doc["inputs"].GetArray()) inputs.push_back(i.GetString());
  return inputs;
}

TEST(Cli, AnalysesATensorboardTraceDirectoryAsOneJob) {
  TempDir dir;
  const std::string runs = dir.Path("runs");
  ASSERT_TRUE(std::filesystem::create_directory(runs));
  // Two workers (ranks), the first profiled twice: its newer trace is the one taken.
  dir.Write("runs/node1_100.1700000000100.pt.trace.json", TraceAt(100));
  dir.Write("runs/node1_100.1700000000200.pt.trace.json.gz", Gzip(TraceAt(200)));
  dir.Write("runs/node2_200.1700000000150.pt.trace.json", TraceAt(150));
  dir.Write("runs/events.out.tfevents", "not a trace");
  const CliResult r = Cli({"analyze", "--format", "json", runs});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(InputsOf(r.out), ElementsAre(runs + "/node1_100.1700000000200.pt.trace.json.gz",
                                           runs + "/node2_200.1700000000150.pt.trace.json"));
  EXPECT_EQ(r.err,
            "gpuidle: " + runs +
                ": took the newest trace of each of 2 workers: "
                "node1_100.1700000000200.pt.trace.json.gz, node2_200.1700000000150.pt.trace.json; "
                "skipped 1 older: node1_100.1700000000100.pt.trace.json; ignored 1 other entry\n");
  // The same as naming the files taken; quiet says nothing.
  const CliResult named =
      Cli({"analyze", "--format", "json", runs + "/node1_100.1700000000200.pt.trace.json.gz",
           runs + "/node2_200.1700000000150.pt.trace.json"});
  EXPECT_EQ(named.out, r.out);
  const CliResult quiet = Cli({"analyze", "-q", runs});
  EXPECT_EQ(quiet.code, kExitOk);
  EXPECT_EQ(quiet.err, "");
}

TEST(Cli, RefusesADirectoryWithoutTraces) {
  TempDir dir;
  dir.Write("notes.json", ValidTrace());  // a trace, but not by tensorboard_trace_handler's name
  const CliResult r = Cli({"analyze", dir.path()});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, StartsWith("gpuidle: " + dir.path() +
                                " is a directory with no torch.profiler trace in it"));
  EXPECT_THAT(r.err, HasSubstr(".pt.trace.json"));
  EXPECT_EQ(r.out, "");
}

// --- --trace: the gpuidle trace of an offline analysis ---

TEST(Cli, WritesTheGpuidleTraceWithTheGapsByCause) {
  TempDir dir;
  const std::string trace = dir.Path("t.json");
  const CliResult r = Cli({"analyze", "--trace", trace, kItemSync});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, StartsWith("gpuidle: why the GPU was idle\n"));
  EXPECT_THAT(r.out, HasSubstr("\ntrace written to " + trace + "\n"));
  const std::string written = ReadFileOrDie(trace);
  EXPECT_THAT(written, HasSubstr("gpuidle.trace/2"));
  EXPECT_THAT(written, HasSubstr("gpuidle: idle causes"));
  EXPECT_THAT(written, HasSubstr("\"cat\":\"gpuidle_gap\""));
  EXPECT_THAT(written, HasSubstr("\"source\": \"analysis\""));  // every gap, not the report's few
  EXPECT_THAT(written, HasSubstr("sync_bound"));
  // Read back, the trace gives the report the original gives.
  const CliResult original = Cli({"analyze", "--format", "json", kItemSync});
  const CliResult again = Cli({"analyze", "--format", "json", trace});
  ASSERT_EQ(again.code, kExitOk) << again.err;
  rapidjson::Document a, b;
  a.Parse(original.out.c_str(), original.out.size());
  b.Parse(again.out.c_str(), again.out.size());
  ASSERT_TRUE(a.IsObject() && b.IsObject());
  ASSERT_EQ(a["devices"].Size(), b["devices"].Size());
  EXPECT_EQ(a["devices"][0]["idle_ns"], b["devices"][0]["idle_ns"]);
  EXPECT_EQ(a["devices"][0]["busy_ns"], b["devices"][0]["busy_ns"]);
}

TEST(Cli, TraceFollowsTheOutputRules) {
  TempDir dir;
  const std::string trace = dir.Write("t.json", "mine\n");
  CliResult r = Cli({"analyze", "--trace", trace, kItemSync});
  EXPECT_EQ(r.code, kExitBadOutput);
  EXPECT_THAT(r.err, HasSubstr("cannot write " + trace + ": it exists (--overwrite replaces it)"));
  EXPECT_EQ(ReadFileOrDie(trace), "mine\n");
  r = Cli({"analyze", "--overwrite", "--trace=" + trace, kItemSync});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(ReadFileOrDie(trace), HasSubstr("gpuidle.trace/2"));
  // Never an input, overwrite or not; never the report's own file.
  const std::string input = dir.Write("in.json.gz", ReadFileOrDie(kItemSync));
  r = Cli({"analyze", "--overwrite", "--trace", input, input});
  EXPECT_EQ(r.code, kExitBadOutput);
  EXPECT_THAT(r.err, HasSubstr("one of the inputs"));
  EXPECT_EQ(ReadFileOrDie(input), ReadFileOrDie(kItemSync));
  r = Cli({"analyze", "--out", dir.Path("x.json"), "--trace", dir.Path("x.json"), kItemSync});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("--out and --trace name one file"));
  // A report holds no timeline.
  const std::string report = dir.Path("r.json");
  ASSERT_EQ(Cli({"analyze", "-q", "--out", report, kItemSync}).code, kExitOk);
  r = Cli({"analyze", "--trace", dir.Path("from_report.json"), report});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr(report + " is a gpuidle report: it keeps no timeline"));
  EXPECT_THAT(dir.List(), ElementsAre("in.json.gz", "r.json", "t.json"));
}

TEST(Cli, WritesOneTracePerRankAndKeepsStandardOutputForTheReport) {
  TempDir dir;
  const std::string rank0 = kTraces + "/nccl_straggler.rank0.json.gz";
  const std::string rank1 = kTraces + "/nccl_straggler.rank1.json.gz";
  const CliResult r =
      Cli({"analyze", "--format", "json", "--trace", dir.Path("job.json.gz"), rank0, rank1});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_TRUE(IsJson(r.out)) << r.out.substr(0, 200);  // the lines naming the traces: on stderr
  EXPECT_EQ(r.err, absl::StrCat("gpuidle: trace written to ", dir.Path("job.0.json.gz"),
                                "\ngpuidle: trace written to ", dir.Path("job.1.json.gz"), "\n"));
  EXPECT_THAT(dir.List(), ElementsAre("job.0.json.gz", "job.1.json.gz"));
  // Each is its rank's timeline: read back together, they are the job.
  const CliResult job = Cli({"analyze", rank0, rank1});
  const CliResult again = Cli({"analyze", dir.Path("job.0.json.gz"), dir.Path("job.1.json.gz")});
  ASSERT_EQ(again.code, kExitOk) << again.err;
  EXPECT_THAT(again.out, HasSubstr("rank 0 GPU 0"));
  EXPECT_THAT(again.out, HasSubstr("rank 1 GPU 1"));
  EXPECT_THAT(again.out, HasSubstr("waiting for peers"));
  // Quiet: the files, no word.
  const CliResult quiet = Cli({"analyze", "-q", "--trace", dir.Path("q.json"), rank0, rank1});
  EXPECT_EQ(quiet.code, kExitOk);
  EXPECT_EQ(quiet.out + quiet.err, "");
  EXPECT_THAT(dir.List(), ElementsAre("job.0.json.gz", "job.1.json.gz", "q.0.json", "q.1.json"));
}

// --- the real binary ---

struct Process {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs the gpuidle binary through the shell with stdout and stderr captured in dir.
Process RunBinary(const TempDir& dir, const std::string& args, const std::string& stdout_to = "") {
  const std::string out = stdout_to.empty() ? dir.Path("stdout") : stdout_to;
  const std::string command =
      absl::StrCat("'", GPUIDLE_CLI_PATH, "' ", args, " >'", out, "' 2>'", dir.Path("stderr"), "'");
  const int status = std::system(command.c_str());
  Process p;
  EXPECT_TRUE(WIFEXITED(status)) << command;
  p.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (stdout_to.empty()) p.out = ReadFileOrDie(out);
  p.err = ReadFileOrDie(dir.Path("stderr"));
  EXPECT_LT(p.code, 124);
  return p;
}

TEST(CliBinary, AnalysesARecordedTrace) {
  TempDir dir;
  const Process p = RunBinary(dir, "analyze '" + kItemSync + "'");
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_THAT(p.out, HasSubstr("sync_bound"));
  EXPECT_EQ(p.err, "");
}

TEST(CliBinary, ExitsWithTheUsageCodeWithoutArguments) {
  TempDir dir;
  const Process p = RunBinary(dir, "");
  EXPECT_EQ(p.code, 2);
  EXPECT_THAT(p.err, HasSubstr("usage: gpuidle"));
  EXPECT_EQ(p.out, "");
}

TEST(CliBinary, ReportsAnUnreadableTraceOnStandardError) {
  TempDir dir;
  const std::string path = dir.Write("half.json", ValidTrace().substr(0, 40));
  const Process p = RunBinary(dir, "analyze '" + path + "'");
  EXPECT_EQ(p.code, 3);
  EXPECT_THAT(p.err, StartsWith("gpuidle: " + path + ": "));
  EXPECT_THAT(p.err, HasSubstr("truncated"));
  EXPECT_EQ(p.out, "");
}

TEST(CliBinary, WritesAJsonReportFile) {
  TempDir dir;
  const std::string report = dir.Path("report.json");
  const Process p =
      RunBinary(dir, "analyze --format json --out '" + report + "' '" + kItemSync + "'");
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_TRUE(IsJson(ReadFileOrDie(report)));
  EXPECT_THAT(p.out, HasSubstr("report written to " + report));
}

TEST(CliBinary, FailsWhenStandardOutputIsFull) {
  TempDir dir;
  const Process p = RunBinary(dir, "analyze '" + kItemSync + "'", "/dev/full");
  EXPECT_EQ(p.code, 4);
  EXPECT_THAT(p.err, HasSubstr("cannot write the report to standard output"));
}

// Running out of memory is a message and an exit code, never an abort: 400,000 kernels
// analysed under an address-space limit too small for them.
TEST(CliBinary, RunningOutOfMemoryIsAnErrorNotACrash) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "sanitizers reserve more address space than the limit allows";
#endif
  TempDir dir;
  std::string trace = "{\"traceEvents\": [";
  for (int i = 0; i < 400'000; ++i) {
    absl::StrAppend(&trace, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k", i,
                    "\", \"pid\": 0, \"tid\": 7, \"ts\": ", i * 3,
                    ", \"dur\": 1, \"args\": {\"device\": 0, \"stream\": 7}},");
  }
  trace.back() = ']';
  trace += "}";
  const std::string path = dir.Write("big.json.gz", Gzip(trace));
  for (const char* limit_kb : {"80000", "150000"}) {
    const std::string args = absl::StrCat("analyze -q '", path, "'");
    const std::string command = absl::StrCat("ulimit -v ", limit_kb, " && exec '", GPUIDLE_CLI_PATH,
                                             "' ", args, " 2>'", dir.Path("stderr"), "'");
    const int status = std::system(command.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << "killed by a signal under " << limit_kb << " KB";
    EXPECT_EQ(WEXITSTATUS(status), kExitInternal) << limit_kb;
    EXPECT_THAT(ReadFileOrDie(dir.Path("stderr")), HasSubstr("out of memory")) << limit_kb;
  }
}

TEST(CliBinary, TakesTheNewFormsAndWritesTheTrace) {
  TempDir dir;
  const std::string trace = dir.Path("t.json");
  const Process p = RunBinary(dir, "analyze --format=json -o '" + dir.Path("r.json") +
                                       "' --trace='" + trace + "' '" + kItemSync + "'");
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_TRUE(IsJson(ReadFileOrDie(dir.Path("r.json"))));
  EXPECT_THAT(ReadFileOrDie(trace), HasSubstr("gpuidle_gap"));
  EXPECT_THAT(p.out, HasSubstr("trace written to " + trace));
}

TEST(CliBinary, PrintsEachCommandsHelp) {
  TempDir dir;
  for (const char* command : {"analyze", "diff", "run"}) {
    const Process p = RunBinary(dir, absl::StrCat(command, " --help"));
    EXPECT_EQ(p.code, 0) << command;
    EXPECT_THAT(p.out, StartsWith(absl::StrCat("usage: gpuidle ", command, " ")));
    EXPECT_EQ(p.err, "");
  }
}

TEST(CliBinary, ReadsATraceDirectoryAndSaysWhatItTook) {
  TempDir dir;
  const std::string runs = dir.Path("runs");
  ASSERT_TRUE(std::filesystem::create_directory(runs));
  dir.Write("runs/w_1.5.pt.trace.json", TraceAt(10));
  dir.Write("runs/w_1.40.pt.trace.json", TraceAt(40));  // newer: 40 > 5, compared as numbers
  const Process p = RunBinary(dir, "analyze '" + runs + "'");
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.err, "gpuidle: " + runs +
                       ": took its one worker's newest trace, w_1.40.pt.trace.json; skipped 1 "
                       "older: w_1.5.pt.trace.json\n");
}

}  // namespace
}  // namespace gpuidle::internal
