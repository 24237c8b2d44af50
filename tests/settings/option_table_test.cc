// The option table (settings/option_table.h) against what is built from it and what describes
// it: the defaults of ProfilerOptions, the usage text, the public gpuidle::Settings() and the
// docs tables (docs/INJECTION.md, docs/PYTHON.md).
#include "settings/option_table.h"

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli/cli.h"
#include "gmock/gmock.h"
#include "gpuidle/settings.h"
#include "gtest/gtest.h"

namespace gpuidle::internal {
namespace {

using ::testing::HasSubstr;

// Every field of ProfilerOptions that a setting controls, as text, to compare two of them.
std::string Fields(const ProfilerOptions& o) {
  return absl::StrCat(
      o.report_path, "|", o.report_format, "|", o.trace_path, "|", o.print_summary, "|", o.color,
      "|", o.max_records, "|", o.buffer_pool_mb, "|", o.analysis.launch_gap_max_ns, "|",
      o.analysis.dispatch_latency_max_ns, "|", absl::StrJoin(o.analysis.data_range_patterns, ","),
      "|", o.analysis.max_gap_records, "|", o.analysis.skip_steps, "|", o.analysis.as_recorded, "|",
      o.host_sample_period_ns, "|", o.gpu_metrics_period_ns, "|", o.gpu_throughput_interval_ns, "|",
      o.python_integration, "|", o.sample_window_ns, "/", o.sample_period_ns, "|",
      o.summary_every_ns, "|", o.summary_path, "|", o.metrics_path, "|", o.metrics_port);
}

// A good value other than the default, for each setting.
const std::map<std::string, std::string>& OtherValues() {
  static const auto* values =
      new std::map<std::string, std::string>{{"GPUIDLE_OUT", "r.%p.json"},
                                             {"GPUIDLE_FORMAT", "json"},
                                             {"GPUIDLE_TRACE", "t.json"},
                                             {"GPUIDLE_QUIET", "1"},
                                             {"GPUIDLE_COLOR", "never"},
                                             {"GPUIDLE_MAX_RECORDS", "5"},
                                             {"GPUIDLE_BUFFER_MB", "8"},
                                             {"GPUIDLE_LAUNCH_GAP_MAX_US", "2.5"},
                                             {"GPUIDLE_DISPATCH_LATENCY_MAX_US", "0"},
                                             {"GPUIDLE_DATA_RANGE", "my_loader"},
                                             {"GPUIDLE_MAX_GAPS", "3"},
                                             {"GPUIDLE_SKIP_STEPS", "2"},
                                             {"GPUIDLE_HOST_SAMPLE_MS", "0"},
                                             {"GPUIDLE_GPU_METRICS_MS", "0"},
                                             {"GPUIDLE_GPU_THROUGHPUT_MS", "10"},
                                             {"GPUIDLE_PYTHON", "0"},
                                             {"GPUIDLE_AS_RECORDED", "1"},
                                             {"GPUIDLE_SAMPLE", "10/100"},
                                             {"GPUIDLE_SUMMARY_EVERY_S", "60"},
                                             {"GPUIDLE_SUMMARY_FILE", "s.%p.json"},
                                             {"GPUIDLE_METRICS_FILE", "m.%r.prom"},
                                             {"GPUIDLE_METRICS_PORT", "9400"}};
  return *values;
}

TEST(OptionTable, AJobWithAReportPathKeepsItsPartialReportByDefault) {
  ProfilerOptions o;
  o.report_path = "report.%r.json";
  option_rules::PartialReport(&o);
  EXPECT_EQ(o.summary_every_ns, kPartialReportEveryNs);
  EXPECT_EQ(o.summary_path, "report.%r.partial.json");
  // Not without a report path, and never over a summary setting of the user's.
  ProfilerOptions none;
  option_rules::PartialReport(&none);
  EXPECT_EQ(none.summary_every_ns, 0);
  EXPECT_EQ(none.summary_path, "");
  ProfilerOptions every;
  every.report_path = "r.json";
  every.summary_every_ns = 60'000'000'000;
  option_rules::PartialReport(&every);
  EXPECT_EQ(every.summary_every_ns, 60'000'000'000);
  EXPECT_EQ(every.summary_path, "");
  ProfilerOptions file;
  file.report_path = "r.json";
  file.summary_path = "s.txt";
  option_rules::PartialReport(&file);
  EXPECT_EQ(file.summary_every_ns, 0);
  EXPECT_EQ(file.summary_path, "s.txt");
}

TEST(OptionTable, TheDefaultsAreThoseOfProfilerOptions) {
  const std::string defaults = Fields(ProfilerOptions{});
  for (const SettingSpec& s : kSettingTable) {
    if (s.default_value[0] == '\0') {
      EXPECT_STRNE(s.unset_means, "")
          << s.variable << " says neither its default nor what none means";
      continue;
    }
    ProfilerOptions options;
    ASSERT_TRUE(s.apply(s.default_value, &options).ok()) << s.variable << "=" << s.default_value;
    EXPECT_EQ(Fields(options), defaults) << s.variable << "'s default is not ProfilerOptions'";
  }
}

TEST(OptionTable, EverySettingSetsAnOptionOfItsOwn) {
  std::set<std::string> changed;
  for (const SettingSpec& s : kSettingTable) {
    const auto it = OtherValues().find(s.variable);
    ASSERT_NE(it, OtherValues().end()) << s.variable << ": add a good value to this test";
    ProfilerOptions options;
    ASSERT_TRUE(s.apply(it->second, &options).ok()) << s.variable << "=" << it->second;
    const std::string fields = Fields(options);
    EXPECT_NE(fields, Fields(ProfilerOptions{})) << s.variable << " changed nothing";
    EXPECT_TRUE(changed.insert(fields).second) << s.variable << " sets what another one sets";
  }
  EXPECT_EQ(OtherValues().size(), kSettingCount);
}

TEST(OptionTable, NamesAreUniqueAndFollowTheirFrontEnds) {
  std::set<std::string> variables, flags, keywords;
  for (const SettingSpec& s : kSettingTable) {
    EXPECT_TRUE(absl::StartsWith(s.variable, "GPUIDLE_")) << s.variable;
    EXPECT_TRUE(variables.insert(s.variable).second) << s.variable;
    EXPECT_NE(s.front_ends & kSettingEnvironment, 0u) << s.variable;
    const bool on_a_command = (s.front_ends & (kSettingRunFlag | kSettingAnalyzeFlag)) != 0;
    EXPECT_EQ(s.flag != nullptr, on_a_command) << s.variable;
    if (s.flag != nullptr) {
      EXPECT_TRUE(flags.insert(s.flag).second) << s.flag;
      EXPECT_EQ(FindSettingByFlag(s.flag), &s);
      // A flag takes a value or sets one, never both; a value-less flag has its own help.
      EXPECT_NE(s.flag_value == nullptr, s.flag_sets == nullptr) << s.flag;
      EXPECT_EQ(s.flag_value == nullptr, s.flag_help != nullptr) << s.flag;
      if (s.flag_sets != nullptr) {
        ProfilerOptions options;
        EXPECT_TRUE(s.apply(s.flag_sets, &options).ok()) << s.flag;
      }
    }
    const bool in_python = (s.front_ends & (kSettingPythonProfile | kSettingPythonAnalyze)) != 0;
    EXPECT_EQ(s.keyword != nullptr, in_python) << s.variable;
    if (s.keyword != nullptr) {
      EXPECT_TRUE(keywords.insert(s.keyword).second) << s.keyword;
      EXPECT_EQ(FindSettingByKeyword(s.keyword), &s);
    }
    EXPECT_EQ(FindSettingByVariable(s.variable), &s);
    EXPECT_STRNE(s.range, "") << s.variable;
    EXPECT_STRNE(s.help, "") << s.variable;
  }
  EXPECT_EQ(FindSettingByFlag("-q"), FindSettingByFlag("--quiet"));
  EXPECT_EQ(FindSettingByVariable("GPUIDLE_DISABLE"), nullptr);  // a switch, not a setting
}

TEST(OptionTable, ThePublicListAndApplySettingAreTheTable) {
  const std::vector<SettingInfo> settings = Settings();
  ASSERT_EQ(settings.size(), kSettingCount);
  for (size_t i = 0; i < kSettingCount; ++i) {
    EXPECT_EQ(settings[i].variable, kSettingTable[i].variable);
    EXPECT_EQ(settings[i].front_ends, kSettingTable[i].front_ends);
    EXPECT_EQ(settings[i].default_value, kSettingTable[i].default_value);
    EXPECT_EQ(settings[i].type_name, SettingTypeName(kSettingTable[i].type));
  }
  ProfilerOptions by_flag, by_variable;
  ASSERT_TRUE(ApplySetting("--max-gaps", "7", &by_flag).ok());
  ASSERT_TRUE(ApplySetting("GPUIDLE_MAX_GAPS", "7", &by_variable).ok());
  EXPECT_EQ(by_flag.analysis.max_gap_records, 7);
  EXPECT_EQ(Fields(by_flag), Fields(by_variable));
  ProfilerOptions untouched;
  const absl::Status bad = ApplySetting("--max-gaps", "-1", &untouched);
  EXPECT_EQ(bad.message(), "must be an integer from 0 to 1000000");
  EXPECT_EQ(Fields(untouched), Fields(ProfilerOptions{}));
  EXPECT_THAT(std::string(ApplySetting("--fast", "1", &untouched).message()),
              HasSubstr("unknown setting --fast"));
}

// The part of the usage text between a heading and the next blank line.
std::string UsageSection(absl::string_view heading) {
  const std::string usage(CliUsage());
  const size_t start = usage.find(std::string(heading));
  if (start == std::string::npos) return "";
  const size_t end = usage.find("\n\n", start);
  return usage.substr(start, end - start);
}

TEST(OptionTable, TheUsageTextShowsEachSettingWithItsDefaultAndRange) {
  const std::string analyze = UsageSection("analyze options:");
  const std::string run = UsageSection("run options");
  ASSERT_FALSE(analyze.empty());
  ASSERT_FALSE(run.empty());
  // Help lines are wrapped: compare with the line breaks and indents folded into one space.
  const auto fold = [](std::string text) {
    return std::regex_replace(text, std::regex("\n +"), " ");
  };
  for (const SettingSpec& s : kSettingTable) {
    const std::string flag_and_value = s.flag_value != nullptr
                                           ? absl::StrCat(s.flag, " ", s.flag_value)
                                       : s.flag == nullptr ? ""
                                                           : s.flag;
    const std::string shown = s.default_value[0] != '\0'
                                  ? absl::StrCat("(default ", s.default_value, "; ", s.range, ")")
                                  : absl::StrCat("(default: ", s.unset_means, "; ", s.range, ")");
    if ((s.front_ends & kSettingAnalyzeFlag) != 0) {
      EXPECT_THAT(fold(analyze), HasSubstr(absl::StrCat(flag_and_value, " ")));
      if (s.flag_value != nullptr) EXPECT_THAT(fold(analyze), HasSubstr(shown)) << s.flag;
    } else if (s.flag != nullptr && s.flag != std::string("--out") &&
               s.flag != std::string("--quiet")) {  // analyze has its own of those
      EXPECT_THAT(analyze, ::testing::Not(HasSubstr(absl::StrCat(s.flag, " ")))) << s.flag;
    }
    if ((s.front_ends & kSettingRunFlag) != 0) {
      EXPECT_THAT(fold(run), HasSubstr(flag_and_value));
      const bool as_for_analyze = (s.front_ends & kSettingPythonAnalyze) != 0;
      if (s.flag_value != nullptr && !as_for_analyze) {
        EXPECT_THAT(fold(run), HasSubstr(shown)) << s.flag;
      }
    }
  }
  for (absl::string_view line : absl::StrSplit(CliUsage(), '\n')) {
    EXPECT_LE(line.size(), 96u) << line;
  }
}

std::string ReadDoc(const std::string& name) {
  std::ifstream in(std::string(GPUIDLE_TEST_DATA_DIR) + "/../../docs/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The rows of the markdown table that follows heading: cells trimmed, backticks kept.
std::vector<std::vector<std::string>> TableAfter(const std::string& doc,
                                                 absl::string_view heading) {
  std::vector<std::vector<std::string>> rows;
  const size_t start = doc.find(std::string(heading));
  if (start == std::string::npos) return rows;
  bool in_table = false;
  std::istringstream lines(doc.substr(start));
  // A heading that is the table's header row is a row itself, dropped below as the header.
  for (std::string line; std::getline(lines, line);) {
    if (!absl::StartsWith(line, "|")) {
      if (in_table) break;
      continue;
    }
    in_table = true;
    if (absl::StartsWith(line, "|---")) continue;
    // "\|" is a pipe inside a cell.
    const std::string escaped = absl::StrReplaceAll(line, {{"\\|", "\x01"}});
    std::vector<std::string> cells;
    for (absl::string_view cell : absl::StrSplit(absl::StripPrefix(escaped, "|"), '|')) {
      cells.push_back(absl::StrReplaceAll(absl::StripAsciiWhitespace(cell), {{"\x01", "|"}}));
    }
    if (!cells.empty() && cells.back().empty()) cells.pop_back();
    rows.push_back(cells);
  }
  if (!rows.empty()) rows.erase(rows.begin());  // the header
  return rows;
}

// Docs text as the table writes it: no backticks, us for µs.
std::string Plain(absl::string_view text) {
  return absl::StrReplaceAll(text, {{"`", ""}, {"µs", "us"}, {"\\%", "%"}});
}

// The variables of gpuidle that are no setting of a collection.
const std::set<std::string> kProcessVariables = {"GPUIDLE_LIBRARY", "GPUIDLE_DISABLE",
                                                 "GPUIDLE_CUPTI_PATH", "GPUIDLE_RUN_PARENT",
                                                 "GPUIDLE_WARNED"};

TEST(OptionTable, TheEnvironmentTableOfTheDocsIsTheTable) {
  const auto rows = TableAfter(ReadDoc("INJECTION.md"), "## Environment variables");
  ASSERT_FALSE(rows.empty()) << "docs/INJECTION.md has no table of variables";
  std::set<std::string> documented;
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 3u) << row[0];
    const std::string variable = Plain(row[0]);
    documented.insert(variable);
    const SettingSpec* s = FindSettingByVariable(variable);
    if (s == nullptr) {
      EXPECT_TRUE(kProcessVariables.count(variable))
          << variable << " is in the docs, not the table";
      continue;
    }
    if (s->default_value[0] != '\0') {
      EXPECT_TRUE(absl::StartsWith(row[1], absl::StrCat("`", s->default_value, "`")))
          << variable << ": the docs say the default is " << row[1] << ", the table "
          << s->default_value;
    } else {
      EXPECT_FALSE(absl::StartsWith(row[1], "`")) << variable << " has no default";
    }
    EXPECT_TRUE(absl::StartsWith(Plain(row[2]), s->range))
        << variable << ": the docs say the values are \"" << Plain(row[2]) << "\", the table \""
        << s->range << "\"";
  }
  for (const SettingSpec& s : kSettingTable) {
    EXPECT_TRUE(documented.count(s.variable)) << s.variable << " is missing from the docs";
  }
}

TEST(OptionTable, TheRunFlagsTableOfTheDocsIsTheTable) {
  const auto rows = TableAfter(ReadDoc("INJECTION.md"), "| option | variable | meaning |");
  ASSERT_FALSE(rows.empty()) << "docs/INJECTION.md has no table of run flags";
  std::set<std::string> documented;
  for (const auto& row : rows) {
    ASSERT_GE(row.size(), 2u);
    // "`--out PATH`", "`--quiet`, `-q`": the first flag names the row.
    const std::string cell = Plain(row[0]);
    const std::string flag = cell.substr(0, cell.find_first_of(" ,"));
    const SettingSpec* s = FindSettingByFlag(flag);
    ASSERT_NE(s, nullptr) << flag << " is in the docs, not the table";
    EXPECT_NE(s->front_ends & kSettingRunFlag, 0u) << flag;
    EXPECT_TRUE(absl::StartsWith(Plain(row[1]), s->variable)) << flag << ": " << row[1];
    documented.insert(flag);
  }
  for (const SettingSpec& s : kSettingTable) {
    if ((s.front_ends & kSettingRunFlag) == 0) continue;
    EXPECT_TRUE(documented.count(s.flag)) << s.flag << " is missing from docs/INJECTION.md";
  }
}

// The keyword-only parameters of a Python signature in docs/PYTHON.md.
std::set<std::string> DocumentedKeywords(const std::string& doc, const std::string& call) {
  const size_t start = doc.find("| `" + call + "(");
  if (start == std::string::npos) return {};
  const size_t open = doc.find('(', start), close = doc.find(')', open);
  std::set<std::string> keywords;
  for (absl::string_view p : absl::StrSplit(doc.substr(open + 1, close - open - 1), ',')) {
    p = absl::StripAsciiWhitespace(p);
    p = p.substr(0, p.find('='));
    if (p != "*" && p != "paths") keywords.insert(std::string(p));
  }
  return keywords;
}

TEST(OptionTable, ThePythonSignaturesOfTheDocsTakeTheTablesKeywords) {
  const std::string doc = ReadDoc("PYTHON.md");
  std::set<std::string> profile, analyze;
  for (const SettingSpec& s : kSettingTable) {
    if ((s.front_ends & kSettingPythonProfile) != 0) profile.insert(s.keyword);
    if ((s.front_ends & kSettingPythonAnalyze) != 0) analyze.insert(s.keyword);
  }
  EXPECT_EQ(DocumentedKeywords(doc, "gpuidle.profile"), profile);
  EXPECT_EQ(DocumentedKeywords(doc, "gpuidle.analyze"), analyze);
}

}  // namespace
}  // namespace gpuidle::internal
