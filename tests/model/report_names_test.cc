#include "model/report_names.h"

#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "gmock/gmock.h"
#include "gpuidle/diff.h"
#include "gpuidle/report.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "report/diff_writer.h"
#include "report/writer.h"

namespace gpuidle::internal {
namespace {

using ::testing::IsEmpty;
using ::testing::IsSupersetOf;
using Keys = std::set<std::string>;

Keys AsSet(absl::Span<const absl::string_view> keys) {
  Keys set;
  for (absl::string_view k : keys) set.emplace(k);
  return set;
}

// Keys that are names of the model's enums: causes and qualified subcauses (the report's and the
// diff's breakdowns), and phases (the report's).
Keys CauseNames() {
  Keys names;
  for (int c = 0; c < kNumCauses; ++c) names.emplace(CauseName(static_cast<Cause>(c)));
  for (int s = 0; s < kNumSubcauses; ++s) {
    names.insert(QualifiedSubcauseName(static_cast<Subcause>(s)));
  }
  return names;
}

Keys EnumNamedKeys() {
  Keys names = CauseNames();
  for (int p = 0; p < kNumPhases; ++p) names.emplace(PhaseName(static_cast<Phase>(p)));
  return names;
}

// Every key of the document that is not an enum's name.
void CollectKeys(const rapidjson::Value& v, const Keys& enum_names, Keys* keys) {
  if (v.IsObject()) {
    for (const auto& m : v.GetObject()) {
      const std::string key(m.name.GetString(), m.name.GetStringLength());
      if (enum_names.count(key) == 0) keys->insert(key);
      CollectKeys(m.value, enum_names, keys);
    }
  } else if (v.IsArray()) {
    for (const auto& e : v.GetArray()) CollectKeys(e, enum_names, keys);
  }
}

Keys KeysOf(const std::string& json, const Keys& enum_names) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  EXPECT_FALSE(doc.HasParseError());
  Keys keys;
  CollectKeys(doc, enum_names, &keys);
  return keys;
}

Keys Minus(const Keys& a, const Keys& b) {
  Keys rest;
  for (const std::string& k : a) {
    if (b.count(k) == 0) rest.insert(k);
  }
  return rest;
}

Keys Both(const Keys& a, const Keys& b) { return Minus(a, Minus(a, b)); }

TEST(ReportNames, ListsEveryKeyOnceAndTheDiffsOwnKeysApart) {
  const Keys report = AsSet(report_keys::kAll);
  const Keys diff = AsSet(diff_keys::kAll);
  EXPECT_EQ(report.size(), std::size(report_keys::kAll));
  EXPECT_EQ(diff.size(), std::size(diff_keys::kAll));
  EXPECT_THAT(Both(diff, report), IsEmpty()) << "in both tables";
  EXPECT_THAT(Both(report, EnumNamedKeys()), IsEmpty()) << "an enum's name";
}

// A report with each optional object and list present once, so that every key is written.
Report ReportWithEveryPart() {
  Report r;
  r.coverage = Coverage{};
  r.serving = Serving{};
  r.serving->batch_mean = 1;
  r.visible_devices = {VisibleDevice{}};
  r.ranks = {RankReport{}};
  r.clock.method = "aligned";
  r.options.skip_steps = 1;
  DeviceReport d;
  d.one_off = {OneOffTime{}};
  d.demand_ns = 1;
  d.collectives.resize(1);
  d.collectives[0].bytes = 8;
  d.collectives[0].wait_ns = 1;
  d.timeline.bin_ns = 1;
  d.timeline.bins.resize(1);
  d.timeline.gpu.resize(1);
  d.timeline.gpu[0] = {1, 1, 1, 1, 1, 1, 1};  // every figure measured: every column written
  d.timeline.in_flight_ns = {1};              // a serving process's requests in flight
  d.gpu_metrics.emplace();
  d.gpu_metrics->other_processes.resize(1);
  d.gpu_metrics->findings.resize(1);
  d.gpu_metrics->throughput = GpuMetrics::Throughput{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  d.gpu_metrics->throughput_unavailable = "x";  // not both in a real report; here every key
  r.devices = {d};
  r.steps.resize(1);
  r.steps[0].comm_wait_ns = 1;
  r.steps[0].gpu = StepReport::Gpu{1, 1, 1, 1, 1, 0.5, 1, 1, 1};
  r.longest_gaps = {GapRecord{}};
  r.offenders = {Offender{}};
  r.periodic_work = {PeriodicWork{}};
  r.advice = {Advice{}};
  r.advice[0].batch = 2;
  r.verdict = Verdict{};
  return r;
}

TEST(ReportNames, AreTheKeysTheJsonWriterWrites) {
  const Keys written = KeysOf(MakeJsonWriter()->Write(ReportWithEveryPart()), EnumNamedKeys());
  const Keys table = AsSet(report_keys::kAll);
  EXPECT_THAT(Minus(written, table), IsEmpty()) << "written, not in report_keys::kAll";
  EXPECT_THAT(Minus(table, written), IsEmpty()) << "in report_keys::kAll, not written";
}

TEST(ReportNames, AreTheKeysTheDiffWriterWrites) {
  ReportDiff d;
  d.caveats = {DiffCaveat{}};
  d.start_up_parts = {OneOffChange{}};
  d.devices = {DeviceDiff{}};
  d.only_before = {DiffDevice{}};
  d.advice = {AdviceChange{}};
  const Keys written = KeysOf(WriteDiffJson(d), CauseNames());
  const Keys own = AsSet(diff_keys::kAll);
  EXPECT_THAT(Minus(Minus(written, own), AsSet(report_keys::kAll)), IsEmpty())
      << "written, in neither table";
  EXPECT_THAT(Minus(own, written), IsEmpty()) << "in diff_keys::kAll, not written";
}

// --- The Python package's mirror of the report (bindings/python/gpuidle/_report.py).

std::string ReadPythonMirror() {
  // GPUIDLE_TEST_DATA_DIR is <repository>/tests/data.
  const std::string path =
      std::string(GPUIDLE_TEST_DATA_DIR) + "/../../bindings/python/gpuidle/_report.py";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The arguments of the call whose "(" is at `open`, split at its top-level commas.
std::vector<std::string> CallArguments(const std::string& source, size_t open) {
  std::vector<std::string> args(1);
  int depth = 0;
  char quote = 0;
  for (size_t i = open + 1; i < source.size(); ++i) {
    const char c = source[i];
    if (quote != 0) {
      if (c == '\\') {
        args.back() += source.substr(i++, 2);
        continue;
      }
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      if (depth-- == 0) break;
    } else if (c == ',' && depth == 0) {
      args.emplace_back();
      continue;
    }
    args.back() += c;
  }
  return args;
}

// The annotated fields of each class at the top level of a module (its dataclasses' fields),
// docstrings skipped.
std::map<std::string, Keys> ClassFields(const std::string& source) {
  static const std::regex kClass(R"(^class (\w+)\b.*)");
  static const std::regex kField(R"(^    ([A-Za-z_]\w*)\s*:[^=].*)");
  std::map<std::string, Keys> fields;
  Keys* current = nullptr;
  bool in_docstring = false;
  std::istringstream lines(source);
  for (std::string line; std::getline(lines, line);) {
    size_t quotes = 0;
    for (size_t at = line.find(R"(""")"); at != std::string::npos;
         at = line.find(R"(""")", at + 3)) {
      ++quotes;
    }
    const bool was_in_docstring = in_docstring;
    if (quotes % 2 == 1) in_docstring = !in_docstring;
    if (was_in_docstring || quotes > 0) continue;
    std::smatch m;
    if (std::regex_match(line, m, kClass)) {
      current = &fields[m[1].str()];
    } else if (!line.empty() && line[0] != ' ' && line[0] != '#') {
      current = nullptr;  // the class ended
    } else if (current != nullptr && std::regex_match(line, m, kField)) {
      current->insert(m[1].str());
    }
  }
  return fields;
}

// The report keys that the mirror reads: string subscripts and .get() of its dicts, and the
// fields of the dataclasses that _pick() fills from a dict of the report (those it is given as
// keywords are not read from the dict).
Keys PythonReportKeys(const std::string& source) {
  Keys keys;
  static const std::regex kLookup(R"re((?:\[|\.get\()\s*"([A-Za-z_][\w.]*)")re");
  for (std::sregex_iterator it(source.begin(), source.end(), kLookup), end; it != end; ++it) {
    keys.insert((*it)[1].str());
  }
  const std::map<std::string, Keys> classes = ClassFields(source);
  static const std::regex kIdentifier(R"([A-Za-z_]\w*)");
  static const std::regex kKeyword(R"(\s*(\w+)\s*=[^=][\s\S]*)");
  for (size_t at = source.find("_pick("); at != std::string::npos;
       at = source.find("_pick(", at + 1)) {
    const std::vector<std::string> args = CallArguments(source, at + 5);
    const std::string cls(absl::StripAsciiWhitespace(args[0]));
    if (!std::regex_match(cls, kIdentifier)) continue;  // the definition: _pick(cls: type, ...)
    const auto fields = classes.find(cls);
    if (fields == classes.end()) {
      ADD_FAILURE() << "_pick(" << cls << ", ...): no such class in _report.py";
      continue;
    }
    Keys given;
    std::smatch m;
    for (const std::string& arg : args) {
      if (std::regex_match(arg, m, kKeyword)) given.insert(m[1].str());
    }
    for (const std::string& f : fields->second) {
      if (given.count(f) == 0) keys.insert(f);
    }
  }
  return keys;
}

// The keys the mirror reads that neither the table nor the model's enums name.
Keys KeysMissingFromTheTable(const std::string& python_source) {
  Keys known = AsSet(report_keys::kAll);
  for (const std::string& name : EnumNamedKeys()) known.insert(name);
  return Minus(PythonReportKeys(python_source), known);
}

TEST(ReportNames, ThePythonMirrorReadsOnlyKeysOfTheTable) {
  const std::string source = ReadPythonMirror();
  // Each way the mirror reads a key is seen: a subscript, a .get(), a field that _pick() fills,
  // an enum's name.
  EXPECT_THAT(PythonReportKeys(source), IsSupersetOf({"completeness", "tracer_time", "kernel_count",
                                                      "own_cause_share", "start_up"}));
  const Keys missing = KeysMissingFromTheTable(source);
  EXPECT_THAT(missing, IsEmpty())
      << "_report.py reads keys that model/report_names.h does not have: "
      << absl::StrJoin(missing, ", ");
}

TEST(ReportNames, ThePythonCheckNamesAKeyTheTableLacks) {
  const std::string source = ReadPythonMirror();
  ASSERT_THAT(source, ::testing::HasSubstr(R"(data["steps"])"));
  ASSERT_THAT(source, ::testing::HasSubstr("    kernel_count: int\n"));
  ASSERT_THAT(source, ::testing::HasSubstr(R"(.get("periodic_work")"));
  const std::string broken =
      absl::StrReplaceAll(source, {{R"(data["steps"])", R"(data["step"])"},
                                   {"    kernel_count: int\n", "    kernels_count: int\n"},
                                   {R"(.get("periodic_work")", R"(.get("periodic")"}});
  EXPECT_EQ(KeysMissingFromTheTable(broken), (Keys{"step", "kernels_count", "periodic"}));
}

}  // namespace
}  // namespace gpuidle::internal
