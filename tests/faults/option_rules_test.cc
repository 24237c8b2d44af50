// The fault matrix's settings row (docs/RELIABILITY.md): every GPUIDLE_* variable and every
// valued flag of `gpuidle run` and `gpuidle analyze`, with empty, huge, negative, non-numeric and
// unknown values, gets the same verdict in every front end, and a refusal is one clear message
// that leaves the program alone. The cases are tests/faults/option_rules.txt, which
// tests/python/test_fault_matrix.py reads for gpuidle.profile() and gpuidle.analyze().
//
// GPUIDLE_FAULT_MATRIX_KNOWN_GAPS=xfail expects the cases listed under "today" to fail (and fails
// if one of them passes: the table is then out of date); =report prints every front end's
// outcome for every case and fails nothing.
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli/cli.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "settings/environment.h"
#include "settings/option_table.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::ProcessLaunch;
using ::gpuidle::testing::ProcessResult;
using ::gpuidle::testing::TempDir;

const std::string kCli = GPUIDLE_CLI_PATH;
const std::string kTable = std::string(GPUIDLE_TEST_DATA_DIR) + "/../faults/option_rules.txt";
const std::string kTrace =
    std::string(GPUIDLE_TEST_DATA_DIR) + "/traces/torch/healthy_matmul.json.gz";
// A refusal's message, all lines together (a command line's adds the usage hint).
constexpr size_t kMaxMessageBytes = 512;

struct Case {
  int line = 0;
  std::string option;     // LAUNCH_GAP_MAX_US
  std::string raw_value;  // as written in the table
  std::string value;      // decoded
  bool has_value = true;  // false: the case is for Python only
  bool agreed_ok = false;
  std::map<std::string, bool> overrides;  // front end -> ok
  std::set<std::string> today;            // front ends that do not follow the rule yet

  std::string Variable() const { return "GPUIDLE_" + option; }
  std::string Flag() const {
    const SettingSpec* setting = FindSettingByVariable(Variable());
    return setting != nullptr && setting->flag != nullptr ? setting->flag : "";
  }
  bool AgreedOk(const std::string& front) const {
    const auto it = overrides.find(front);
    return it != overrides.end() ? it->second : agreed_ok;
  }
  std::string Where() const {
    return absl::StrCat("option_rules.txt:", line, " ", option, " ", raw_value.substr(0, 40));
  }
};

std::string Decode(absl::string_view raw) {
  if (raw == "<empty>") return "";
  std::string out;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (absl::StartsWith(raw.substr(i), "<long>")) {
      out.append(100'000, 'x');
      i += 5;
    } else if (raw[i] == '\\' && i + 1 < raw.size()) {
      const char c = raw[++i];
      out.push_back(c == 'e' ? '\x1b' : c == 'n' ? '\n' : c == 's' ? ' ' : c);
    } else {
      out.push_back(raw[i]);
    }
  }
  return out;
}

std::vector<Case> LoadCases() {
  std::ifstream in(kTable);
  EXPECT_TRUE(in.good()) << "cannot read " << kTable;
  std::vector<Case> cases;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (absl::StripAsciiWhitespace(line).empty() || line[0] == '#') continue;
    std::vector<std::string> cols = absl::StrSplit(line, '|');
    if (cols.size() != 7) {
      ADD_FAILURE() << "option_rules.txt:" << number << ": expected 7 columns, not " << cols.size();
      continue;
    }
    for (std::string& c : cols) c = std::string(absl::StripAsciiWhitespace(c));
    Case c;
    c.line = number;
    c.option = cols[0];
    c.raw_value = cols[1];
    c.has_value = cols[1] != "-";
    c.value = Decode(cols[1]);
    EXPECT_TRUE(cols[3] == "ok" || cols[3] == "refused") << "option_rules.txt:" << number;
    c.agreed_ok = cols[3] == "ok";
    if (cols[4] != "-") {
      for (absl::string_view o : absl::StrSplit(cols[4], ',')) {
        std::pair<std::string, std::string> kv = absl::StrSplit(o, '=');
        c.overrides[kv.first] = kv.second == "ok";
      }
    }
    if (cols[5] != "-") {
      for (absl::string_view f : absl::StrSplit(cols[5], ',')) c.today.insert(std::string(f));
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

const std::vector<Case>& Cases() {
  static const std::vector<Case>* cases = new std::vector<Case>(LoadCases());
  return *cases;
}

// Which front ends take the option (the C++ ones; Python's are in test_fault_matrix.py): those
// of the option table (settings/option_table.h).
bool Applies(const Case& c, const std::string& front) {
  if (!c.has_value) return false;
  const SettingSpec* setting = FindSettingByVariable(c.Variable());
  if (setting == nullptr) return false;
  if (front == "env" || front == "run-env") return true;
  // --quiet, --no-python and --as-recorded take no value.
  if (front == "run") return (setting->front_ends & kSettingRunFlag) && setting->flag_value;
  if (front == "analyze") return (setting->front_ends & kSettingAnalyzeFlag) && setting->flag_value;
  return false;
}

// What one front end did with one value.
struct Outcome {
  bool accepted = false;
  std::string message;  // the refusal's text, as the user sees it
  std::string problem;  // neither a clean acceptance nor a clean refusal
};

bool Exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

Outcome TryEnvironment(const Case& c) {
  const std::string variable = c.Variable();
  const absl::StatusOr<ProfilerOptions> options =
      ProfilerOptionsFromVariables([&](const char* name) -> const char* {
        return name == variable ? c.value.c_str() : nullptr;
      });
  Outcome o;
  o.accepted = options.ok();
  if (!options.ok()) o.message = std::string(options.status().message());
  return o;
}

// `gpuidle run` with the value as a flag or as an inherited variable; the command touches a
// file, so that whether it ran shows.
Outcome TryRun(const Case& c, bool as_flag) {
  TempDir dir;
  const std::string marker = dir.Path("ran");
  ProcessLaunch launch;
  launch.argv = {kCli, "run"};
  if (as_flag) {
    launch.argv.push_back(c.Flag());
    launch.argv.push_back(c.value);
  } else {
    launch.env[c.Variable()] = c.value;
  }
  for (const char* a : {"--", "/bin/sh", "-c"}) launch.argv.push_back(a);
  launch.argv.push_back("touch '" + marker + "'");
  const ProcessResult p = FinishProcess(dir, StartProcess(dir, launch));
  Outcome o;
  const bool ran = Exists(marker);
  if (p.code == 0 && ran) {
    o.accepted = true;
    if (absl::StrContains(p.err, "gpuidle help")) o.problem = "ran, but printed a usage error";
  } else if (p.code == kExitUsage && !ran && p.out.empty()) {
    o.message = p.err;
  } else {
    o.problem = absl::StrCat("exit ", p.code, ", command ", ran ? "ran" : "did not run",
                             ", stderr: ", p.err.substr(0, 200));
  }
  return o;
}

// `gpuidle analyze` on a small recorded trace; an analysis that fails for the trace's sake
// (fewer steps than --skip-steps) still accepted the value.
Outcome TryAnalyze(const Case& c) {
  std::ostringstream out, err;
  const int code = RunCli({"analyze", "--quiet", c.Flag(), c.value, kTrace}, out, err);
  Outcome o;
  if (code == kExitUsage) {
    o.message = err.str();
  } else if (code == kExitOk ||
             (code == kExitBadInput && absl::StrContains(err.str(), "leaves none"))) {
    o.accepted = true;
  } else {
    o.problem = absl::StrCat("exit ", code, ": ", err.str().substr(0, 200));
  }
  return o;
}

Outcome Try(const Case& c, const std::string& front) {
  if (front == "env") return TryEnvironment(c);
  if (front == "run") return TryRun(c, /*as_flag=*/true);
  if (front == "run-env") return TryRun(c, /*as_flag=*/false);
  return TryAnalyze(c);
}

bool HasControlCharacter(absl::string_view text) {
  for (unsigned char ch : text) {
    if ((ch < 0x20 && ch != '\n') || ch == 0x7f) return true;
  }
  return false;
}

// "" if the outcome follows the agreed rule, else what is wrong.
std::string Violation(const Case& c, const std::string& front, const Outcome& o) {
  if (!o.problem.empty()) return o.problem;
  const bool want_ok = c.AgreedOk(front);
  if (o.accepted != want_ok) {
    return o.accepted ? "accepted, the agreed rule refuses it"
                      : absl::StrCat("refused (", o.message.substr(0, 160),
                                     "), the agreed rule accepts it");
  }
  if (o.accepted) return "";
  // One clear message: it names the setting, is short, and is safe for a terminal.
  const bool command_line = front != "env";
  const std::string name = front == "run" || front == "analyze" ? c.Flag() : c.Variable();
  std::vector<std::string> problems;
  if (!absl::StrContains(o.message, name)) problems.push_back("does not name " + name);
  if (o.message.size() > kMaxMessageBytes) {
    problems.push_back(absl::StrCat("is ", o.message.size(), " bytes long"));
  }
  if (HasControlCharacter(o.message)) problems.push_back("holds control characters");
  if (command_line) {
    if (!absl::StartsWith(o.message, "gpuidle: ")) problems.push_back("does not start gpuidle:");
    if (std::count(o.message.begin(), o.message.end(), '\n') > 2) {
      problems.push_back("is more than one line (and the usage hint)");
    }
  } else if (absl::StrContains(o.message, "\n")) {
    problems.push_back("is more than one line");
  }
  if (problems.empty()) return "";
  return absl::StrCat("the message ", absl::StrJoin(problems, ", "), ": ",
                      absl::CHexEscape(o.message.substr(0, 120)));
}

std::string KnownGapsMode() {
  const char* mode = std::getenv("GPUIDLE_FAULT_MATRIX_KNOWN_GAPS");
  return mode != nullptr ? mode : "";
}

void CheckFrontEnd(const std::string& front) {
  const std::string mode = KnownGapsMode();
  int checked = 0;
  std::vector<std::string> still_failing;
  for (const Case& c : Cases()) {
    if (!Applies(c, front)) continue;
    ++checked;
    const std::string violation = Violation(c, front, Try(c, front));
    const bool known_gap = c.today.count(front) > 0;
    if (mode == "report") {
      std::cout << (violation.empty() ? "follows  " : "VIOLATES ") << front << "  " << c.Where()
                << (violation.empty() ? "" : ": " + violation) << "\n";
      continue;
    }
    if (mode == "xfail" && known_gap) {
      if (violation.empty()) {
        ADD_FAILURE() << c.Where() << ": listed as not following the rule in " << front
                      << " (\"today\"), but it does now: update option_rules.txt";
      } else {
        still_failing.push_back(absl::StrCat(c.Where(), ": ", violation));
      }
      continue;
    }
    EXPECT_EQ(violation, "") << c.Where() << " (" << front << ")";
  }
  EXPECT_GT(checked, 10) << "no cases for " << front;
  if (!still_failing.empty()) {
    std::cout << still_failing.size() << " known gap(s) in " << front << " (expected to fail):\n  "
              << absl::StrJoin(still_failing, "\n  ") << "\n";
  }
}

TEST(FaultSettings, TheVariablesAsTheLibraryReadsThem) { CheckFrontEnd("env"); }
TEST(FaultSettings, GpuidleRunFlags) { CheckFrontEnd("run"); }
TEST(FaultSettings, VariablesInheritedByGpuidleRun) { CheckFrontEnd("run-env"); }
TEST(FaultSettings, GpuidleAnalyzeFlags) { CheckFrontEnd("analyze"); }

// The table must grow with the settings: each variable the library reads is tried empty and
// with a value it refuses, each number also negative and huge, and each valued flag of the help
// text has its option in the table.
TEST(FaultSettings, TheTableCoversEverySettingWithEveryKindOfBadValue) {
  std::map<std::string, std::set<std::string>> kinds;  // option -> kinds of value tried
  for (const Case& c : Cases()) {
    std::set<std::string>& k = kinds[c.option];
    if (!c.has_value) continue;
    if (c.value.empty()) k.insert("empty");
    if (!c.agreed_ok) k.insert("refused");
    if (absl::StartsWith(c.value, "-")) k.insert("negative");
    if (c.value.size() >= 20 && absl::StrContains(c.value, "999")) k.insert("huge");
  }
  const std::set<std::string> numbers = {"LAUNCH_GAP_MAX_US", "DISPATCH_LATENCY_MAX_US",
                                         "MAX_GAPS",          "SKIP_STEPS",
                                         "MAX_RECORDS",       "BUFFER_MB",
                                         "HOST_SAMPLE_MS",    "GPU_METRICS_MS",
                                         "GPU_THROUGHPUT_MS", "SUMMARY_EVERY_S",
                                         "METRICS_PORT"};
  for (const char* variable : kProfilerVariables) {
    const std::string option = std::string(variable).substr(std::string("GPUIDLE_").size());
    ASSERT_TRUE(kinds.count(option)) << variable << " has no case in option_rules.txt";
    EXPECT_TRUE(kinds[option].count("empty")) << variable << " is never tried empty";
    EXPECT_TRUE(kinds[option].count("refused")) << variable << " is never refused";
    if (numbers.count(option)) {
      EXPECT_TRUE(kinds[option].count("negative")) << variable << " is never tried negative";
      EXPECT_TRUE(kinds[option].count("huge")) << variable << " is never tried huge";
    }
  }
  // Every "--flag N", "--flag PATH", ... of the help text.
  const std::string help(CliUsage());
  const std::regex valued_flag("(--[a-z-]+)[ ,]+(N|PATH|FMT|TEXT)\\b");
  int flags = 0;
  for (std::sregex_iterator it(help.begin(), help.end(), valued_flag), end; it != end; ++it) {
    ++flags;
    const std::string option = absl::StrReplaceAll(
        absl::AsciiStrToUpper(absl::StripPrefix((*it)[1].str(), "--")), {{"-", "_"}});
    EXPECT_TRUE(kinds.count(option)) << (*it)[1] << " (gpuidle help) has no case";
  }
  EXPECT_GE(flags, 10);
}

}  // namespace
}  // namespace gpuidle::internal
