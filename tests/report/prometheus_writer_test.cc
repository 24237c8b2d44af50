#include "report/prometheus_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "core/text_safety.h"
#include "gmock/gmock.h"
#include "gpuidle/report.h"
#include "gtest/gtest.h"

namespace gpuidle::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr int64_t kMs = 1'000'000;

// A reader of the text exposition format 0.0.4, strict where gpuidle's output has to be: every
// line is a HELP, a TYPE or a sample; a family's HELP and TYPE come once, before its samples,
// which are contiguous; names, label names and escapes follow the grammar; no series twice.
struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  std::vector<std::string> label_order;
  std::string raw_value;
  double value = 0;
};

struct Parsed {
  std::vector<std::string> errors;
  std::vector<std::string> families;  // in order of their TYPE lines
  std::map<std::string, std::string> types;
  std::map<std::string, std::string> helps;
  std::vector<Sample> samples;

  // The samples of a family.
  std::vector<Sample> Of(const std::string& name) const {
    std::vector<Sample> out;
    for (const Sample& s : samples) {
      if (s.name == name) out.push_back(s);
    }
    return out;
  }
  // The one sample of name whose labels include these; nullopt if none (an error if several).
  std::optional<Sample> Find(const std::string& name,
                             const std::map<std::string, std::string>& labels) const {
    std::optional<Sample> found;
    for (const Sample& s : Of(name)) {
      if (std::all_of(labels.begin(), labels.end(), [&](const auto& l) {
            auto it = s.labels.find(l.first);
            return it != s.labels.end() && it->second == l.second;
          })) {
        EXPECT_FALSE(found.has_value()) << "several samples of " << name << " match";
        found = s;
      }
    }
    return found;
  }
};

bool IsMetricName(absl::string_view s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
                    (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

bool IsLabelName(absl::string_view s) {
  return IsMetricName(s) && s.find(':') == absl::string_view::npos && !absl::StartsWith(s, "__");
}

// A float as Go's ParseFloat reads it, finite only (gpuidle never writes NaN or Inf).
std::optional<double> ParseFiniteValue(const std::string& s) {
  if (s.empty() || s.find_first_not_of("0123456789.eE+-") != std::string::npos) {
    return std::nullopt;
  }
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

Parsed Parse(const std::string& text) {
  Parsed p;
  auto error = [&](const std::string& line, absl::string_view why) {
    p.errors.push_back(absl::StrCat(why, ": ", line));
  };
  if (!text.empty() && text.back() != '\n') p.errors.push_back("no final newline");
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  std::string family;  // of the last TYPE line
  std::set<std::string> finished;
  std::set<std::string> series;
  for (const std::string& line : lines) {
    if (absl::StartsWith(line, "# HELP ") || absl::StartsWith(line, "# TYPE ")) {
      const bool help = absl::StartsWith(line, "# HELP ");
      const std::string rest = line.substr(7);
      const size_t space = rest.find(' ');
      const std::string name = rest.substr(0, space);
      const std::string arg = space == std::string::npos ? "" : rest.substr(space + 1);
      if (!IsMetricName(name)) error(line, "bad metric name");
      if (help) {
        if (p.helps.count(name)) error(line, "HELP twice");
        if (p.types.count(name)) error(line, "HELP after TYPE");  // gpuidle writes HELP first
        for (size_t i = 0; i < arg.size(); ++i) {
          if (arg[i] == '\\' &&
              (i + 1 == arg.size() || (arg[i + 1] != '\\' && arg[i + 1] != 'n'))) {
            error(line, "bad escape in HELP");
          }
          if (arg[i] == '\\') ++i;
        }
        p.helps[name] = arg;
      } else {
        if (p.types.count(name)) error(line, "TYPE twice");
        if (arg != "counter" && arg != "gauge" && arg != "untyped" && arg != "summary" &&
            arg != "histogram") {
          error(line, "bad type");
        }
        if (!family.empty()) finished.insert(family);
        family = name;
        p.types[name] = arg;
        p.families.push_back(name);
      }
      continue;
    }
    if (absl::StartsWith(line, "#")) {
      error(line, "unexpected comment");
      continue;
    }
    Sample s;
    size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    s.name = line.substr(0, i);
    if (!IsMetricName(s.name)) error(line, "bad metric name");
    if (s.name != family) error(line, "sample outside its family (no TYPE before it)");
    if (finished.count(s.name)) error(line, "family not contiguous");
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        size_t eq = line.find('=', i);
        if (eq == std::string::npos) {
          error(line, "label without =");
          break;
        }
        const std::string label = line.substr(i, eq - i);
        if (!IsLabelName(label)) error(line, "bad label name");
        i = eq + 1;
        if (i >= line.size() || line[i] != '"') {
          error(line, "label value not quoted");
          break;
        }
        ++i;
        std::string value;
        bool closed = false;
        while (i < line.size()) {
          const char c = line[i];
          if (c == '"') {
            closed = true;
            ++i;
            break;
          }
          if (c == '\\') {
            if (i + 1 >= line.size()) break;
            const char e = line[i + 1];
            if (e == '\\') {
              value += '\\';
            } else if (e == '"') {
              value += '"';
            } else if (e == 'n') {
              value += '\n';
            } else {
              error(line, "bad escape in label value");
            }
            i += 2;
            continue;
          }
          value += c;
          ++i;
        }
        if (!closed) {
          error(line, "unterminated label value");
          break;
        }
        if (!IsValidUtf8(value)) error(line, "label value not UTF-8");
        if (s.labels.count(label)) error(line, "label twice");
        s.labels[label] = value;
        s.label_order.push_back(label);
        if (i < line.size() && line[i] == ',') ++i;
      }
      if (i >= line.size() || line[i] != '}') {
        error(line, "no closing brace");
        continue;
      }
      ++i;
    }
    if (i >= line.size() || line[i] != ' ') {
      error(line, "no space before the value");
      continue;
    }
    s.raw_value = line.substr(i + 1);
    if (s.raw_value.find(' ') != std::string::npos) error(line, "a timestamp or trailing text");
    const std::optional<double> v = ParseFiniteValue(s.raw_value);
    if (!v) {
      error(line, "bad value");
    } else {
      s.value = *v;
    }
    if (p.types[family] == "counter") {
      if (!absl::EndsWith(s.name, "_total")) error(line, "counter not named _total");
      if (s.value < 0) error(line, "negative counter");
    }
    std::string key = s.name;
    for (const auto& [k, v2] : s.labels) absl::StrAppend(&key, "|", k, "=", v2);
    if (!series.insert(key).second) error(line, "series twice");
    p.samples.push_back(std::move(s));
  }
  for (const std::string& f : p.families) {
    if (!p.helps.count(f)) p.errors.push_back(absl::StrCat("no HELP for ", f));
  }
  return p;
}

DeviceReport Device(int device, std::optional<int> rank = std::nullopt) {
  DeviceReport d;
  d.device = device;
  d.rank = rank;
  d.busy_ns = 700 * kMs;
  d.idle[Subcause::kDataLoader] = 200 * kMs;
  d.idle[Subcause::kHostSync] = 50 * kMs + 1;
  d.idle_ns = d.idle.TotalNs();
  OneOffTime recompilation;
  recompilation.phase = Phase::kSteady;
  recompilation.kind = OneOffKind::kCompilation;
  recompilation.ns = 30 * kMs;
  d.one_off.push_back(recompilation);
  OneOffTime init;
  init.phase = Phase::kStartUp;
  init.kind = OneOffKind::kCudaInit;
  init.ns = 999 * kMs;
  d.one_off.push_back(init);
  d.step_count = 12;
  d.kernel_count = 3400;
  d.memcpy_count = 7;
  d.memset_count = 2;
  d.comm_ns = 100 * kMs;
  d.exposed_comm_ns = 40 * kMs;
  return d;
}

Parsed FormatAndParse(const Report& r, const MetricsLabels& labels = {}) {
  const std::string text = FormatPrometheusMetrics(r, labels);
  Parsed p = Parse(text);
  EXPECT_THAT(p.errors, IsEmpty()) << text;
  return p;
}

double Seconds(int64_t ns) { return static_cast<double>(ns) / 1e9; }

MetricsLabels Labels(const std::string& host, const std::string& rank, const std::string& pid) {
  MetricsLabels labels;
  labels.host = host;
  labels.rank = rank;
  labels.pid = pid;
  return labels;
}

std::string Gpu(int device) { return absl::StrCat(device); }

TEST(PrometheusWriterTest, EveryLineFollowsTheGrammarAndFamiliesHaveTheirTypes) {
  Report r;
  r.devices = {Device(0), Device(1)};
  const Parsed p = FormatAndParse(r);
  EXPECT_EQ(p.types.at("gpuidle_idle_seconds_total"), "counter");
  EXPECT_EQ(p.types.at("gpuidle_busy_seconds_total"), "counter");
  EXPECT_EQ(p.types.at("gpuidle_traced_seconds_total"), "counter");
  EXPECT_EQ(p.types.at("gpuidle_comm_seconds_total"), "counter");
  EXPECT_EQ(p.types.at("gpuidle_steps_total"), "counter");
  EXPECT_EQ(p.types.at("gpuidle_kernels_total"), "counter");
  EXPECT_EQ(p.types.at("gpuidle_record_limit_reached"), "gauge");
  for (const auto& [name, help] : p.helps) EXPECT_FALSE(help.empty()) << name;
}

TEST(PrometheusWriterTest, IdleHasEverySubcauseOfEveryDeviceZerosIncluded) {
  Report r;
  r.devices = {Device(0), Device(1)};
  const Parsed p = FormatAndParse(r);
  EXPECT_EQ(p.Of("gpuidle_idle_seconds_total").size(), 2u * kNumSubcauses);
  for (int gpu : {0, 1}) {
    double sum = 0;
    for (int s = 0; s < kNumSubcauses; ++s) {
      const Subcause subcause = static_cast<Subcause>(s);
      const std::optional<Sample> sample = p.Find(
          "gpuidle_idle_seconds_total", {{"gpu", Gpu(gpu)},
                                         {"cause", std::string(CauseName(CauseOf(subcause)))},
                                         {"subcause", std::string(SubcauseName(subcause))}});
      ASSERT_TRUE(sample.has_value()) << SubcauseName(subcause);
      EXPECT_DOUBLE_EQ(sample->value, Seconds(r.devices[gpu].idle[subcause]));
      sum += sample->value;
    }
    EXPECT_DOUBLE_EQ(sum, Seconds(r.devices[gpu].idle_ns));
  }
  const std::optional<Sample> zero =
      p.Find("gpuidle_idle_seconds_total", {{"gpu", "1"}, {"subcause", "launch_overhead"}});
  ASSERT_TRUE(zero.has_value());
  EXPECT_EQ(zero->raw_value, "0");
}

TEST(PrometheusWriterTest, SecondsAreExactNotRoundedThroughADouble) {
  Report r;
  r.devices = {Device(0)};
  r.devices[0].busy_ns = 1'234'567'890'123;  // 20 minutes and some nanoseconds
  r.devices[0].comm_ns = 1'000;              // a microsecond
  r.devices[0].exposed_comm_ns = 5'000'000'000;
  const Parsed p = FormatAndParse(r);
  EXPECT_EQ(p.Find("gpuidle_busy_seconds_total", {{"gpu", "0"}})->raw_value, "1234.567890123");
  EXPECT_EQ(p.Find("gpuidle_comm_seconds_total", {{"gpu", "0"}})->raw_value, "0.000001");
  EXPECT_EQ(p.Find("gpuidle_exposed_comm_seconds_total", {{"gpu", "0"}})->raw_value, "5");
  EXPECT_EQ(p.Find("gpuidle_idle_seconds_total", {{"subcause", "host_sync"}})->raw_value,
            "0.050000001");
}

TEST(PrometheusWriterTest, TracedIsBusyPlusIdlePlusSteadyOneOff) {
  Report r;
  r.devices = {Device(0)};
  const Parsed p = FormatAndParse(r);
  const double traced = p.Find("gpuidle_traced_seconds_total", {{"gpu", "0"}})->value;
  const double busy = p.Find("gpuidle_busy_seconds_total", {{"gpu", "0"}})->value;
  const double one_off = p.Find("gpuidle_steady_one_off_seconds_total", {{"gpu", "0"}})->value;
  EXPECT_DOUBLE_EQ(one_off, 0.030);  // the start-up's CUDA initialisation is not steady
  EXPECT_DOUBLE_EQ(traced, busy + Seconds(r.devices[0].idle_ns) + one_off);
}

TEST(PrometheusWriterTest, CountsOfEachDevice) {
  Report r;
  r.devices = {Device(0)};
  const Parsed p = FormatAndParse(r);
  EXPECT_EQ(p.Find("gpuidle_steps_total", {{"gpu", "0"}})->raw_value, "12");
  EXPECT_EQ(p.Find("gpuidle_kernels_total", {{"gpu", "0"}})->raw_value, "3400");
  EXPECT_EQ(p.Find("gpuidle_memcpys_total", {{"gpu", "0"}})->raw_value, "7");
  EXPECT_EQ(p.Find("gpuidle_memsets_total", {{"gpu", "0"}})->raw_value, "2");
}

TEST(PrometheusWriterTest, ProcessLabelsOnEverySeriesEscapedAndReadBack) {
  Report r;
  r.devices = {Device(0)};
  r.dropped_records = 3;
  const std::string host = "node\"7\"\\rack\nb";
  const Parsed p = FormatAndParse(r, Labels(host, "", "4242"));
  ASSERT_THAT(p.samples, Not(IsEmpty()));
  for (const Sample& s : p.samples) {
    EXPECT_EQ(s.labels.at("host"), host) << s.name;
    EXPECT_EQ(s.labels.at("pid"), "4242") << s.name;
    EXPECT_EQ(s.labels.count("rank"), 0u) << s.name;  // none known: no empty label either
  }
  EXPECT_EQ(EscapePrometheusLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

TEST(PrometheusWriterTest, LabelValuesThatAreNotUtf8AreReplaced) {
  Report r;
  const Parsed p = FormatAndParse(r, Labels("bad\xff\xfehost", "", ""));
  ASSERT_EQ(p.samples.size(), 1u);  // gpuidle_record_limit_reached
  EXPECT_EQ(p.samples[0].labels.at("host"), ToValidUtf8("bad\xff\xfehost"));
}

TEST(PrometheusWriterTest, DeviceRankWinsOverTheProcessRank) {
  Report r;
  r.devices = {Device(0, 3), Device(1)};
  r.dropped_records = 0;
  const Parsed p = FormatAndParse(r, Labels("", "7", ""));
  EXPECT_TRUE(p.Find("gpuidle_busy_seconds_total", {{"gpu", "0"}, {"rank", "3"}}).has_value());
  EXPECT_TRUE(p.Find("gpuidle_busy_seconds_total", {{"gpu", "1"}, {"rank", "7"}}).has_value());
  EXPECT_EQ(p.Find("gpuidle_lost_records_total", {})->labels.at("rank"), "7");
  EXPECT_EQ(p.Find("gpuidle_record_limit_reached", {})->labels.at("rank"), "7");
}

TEST(PrometheusWriterTest, LabelOrderIsFixed) {
  Report r;
  r.devices = {Device(0, 1)};
  const Parsed p = FormatAndParse(r, Labels("h", "1", "9"));
  const std::optional<Sample> s =
      p.Find("gpuidle_idle_seconds_total", {{"subcause", "dataloader"}});
  ASSERT_TRUE(s.has_value());
  EXPECT_THAT(s->label_order, ElementsAre("host", "pid", "rank", "gpu", "cause", "subcause"));
}

TEST(PrometheusWriterTest, OrderIsDeterministicByRankThenDevice) {
  Report a;
  a.devices = {Device(1, 10), Device(0, 2), Device(1, 2), Device(0)};
  Report b = a;
  std::reverse(b.devices.begin(), b.devices.end());
  EXPECT_EQ(FormatPrometheusMetrics(a, {}), FormatPrometheusMetrics(b, {}));
  const Parsed p = FormatAndParse(a);
  std::vector<std::string> order;
  for (const Sample& s : p.Of("gpuidle_busy_seconds_total")) {
    order.push_back(
        absl::StrCat(s.labels.count("rank") ? s.labels.at("rank") : "-", "/", s.labels.at("gpu")));
  }
  EXPECT_THAT(order, ElementsAre("2/0", "2/1", "10/1", "-/0"));
}

TEST(PrometheusWriterTest, DevicesThatShareASeriesAreSummed) {
  Report r;
  r.devices = {Device(0), Device(0)};  // two processes' GPU 0, merged without ranks
  const Parsed p = FormatAndParse(r);  // no series twice
  EXPECT_DOUBLE_EQ(p.Find("gpuidle_busy_seconds_total", {{"gpu", "0"}})->value, 1.4);
  EXPECT_EQ(p.Find("gpuidle_kernels_total", {{"gpu", "0"}})->raw_value, "6800");
}

TEST(PrometheusWriterTest, CommWaitOnlyWhereKnown) {
  Report r;
  r.devices = {Device(0, 0), Device(0, 1)};
  EXPECT_THAT(FormatAndParse(r).Of("gpuidle_comm_wait_seconds_total"), IsEmpty());
  EXPECT_EQ(FormatAndParse(r).types.count("gpuidle_comm_wait_seconds_total"), 0u);
  r.devices[1].comm_wait_ns = 25 * kMs;
  const Parsed p = FormatAndParse(r);
  ASSERT_EQ(p.Of("gpuidle_comm_wait_seconds_total").size(), 1u);
  EXPECT_EQ(p.Find("gpuidle_comm_wait_seconds_total", {{"rank", "1"}})->raw_value, "0.025");
}

TEST(PrometheusWriterTest, CoverageOfASampledCollection) {
  Report r;
  r.devices = {Device(0)};
  EXPECT_EQ(FormatAndParse(r).types.count("gpuidle_coverage_ratio"), 0u);
  EXPECT_EQ(FormatAndParse(r).types.count("gpuidle_windows_total"), 0u);
  r.coverage = Coverage{.windows = 6, .traced_ns = 3'000 * kMs, .span_ns = 60'000 * kMs};
  const Parsed p = FormatAndParse(r);
  EXPECT_EQ(p.types.at("gpuidle_coverage_ratio"), "gauge");
  EXPECT_DOUBLE_EQ(p.Find("gpuidle_coverage_ratio", {})->value, 0.05);
  EXPECT_EQ(p.Find("gpuidle_windows_total", {})->raw_value, "6");
}

TEST(PrometheusWriterTest, CoverageWithoutASpanHasNoRatioAndNeverNaN) {
  Report r;
  r.coverage = Coverage{.windows = 0, .traced_ns = 0, .span_ns = 0};
  Parsed p = FormatAndParse(r);  // the parser refuses NaN and Inf
  EXPECT_EQ(p.types.count("gpuidle_coverage_ratio"), 0u);
  EXPECT_EQ(p.Find("gpuidle_windows_total", {})->raw_value, "0");
  r.coverage = Coverage{.windows = 2, .traced_ns = 5, .span_ns = 4};  // inconsistent input
  p = FormatAndParse(r);
  EXPECT_DOUBLE_EQ(p.Find("gpuidle_coverage_ratio", {})->value, 1.0);
}

TEST(PrometheusWriterTest, LostRecordsOnlyWhenTheSourceSays) {
  Report r;
  r.devices = {Device(0)};
  EXPECT_EQ(FormatAndParse(r).types.count("gpuidle_lost_records_total"), 0u);
  r.dropped_records = 0;
  EXPECT_EQ(FormatAndParse(r).Find("gpuidle_lost_records_total", {})->raw_value, "0");
  r.dropped_records = 18'446'744'073'709'551'615u;
  EXPECT_EQ(FormatAndParse(r).Find("gpuidle_lost_records_total", {})->raw_value,
            "18446744073709551615");
}

TEST(PrometheusWriterTest, RecordLimitReachedIsAGaugeOfZeroOrOne) {
  Report r;
  EXPECT_EQ(FormatAndParse(r).Find("gpuidle_record_limit_reached", {})->raw_value, "0");
  r.record_limit_reached = true;
  EXPECT_EQ(FormatAndParse(r).Find("gpuidle_record_limit_reached", {})->raw_value, "1");
}

TEST(PrometheusWriterTest, NegativeFiguresNeverMakeANegativeCounter) {
  Report r;
  r.devices = {Device(0)};
  r.devices[0].busy_ns = -5;
  r.devices[0].kernel_count = -1;
  r.devices[0].idle[Subcause::kUnattributed] = -kMs;
  const Parsed p = FormatAndParse(r);  // the parser refuses negative counters
  EXPECT_EQ(p.Find("gpuidle_busy_seconds_total", {})->raw_value, "0");
  EXPECT_EQ(p.Find("gpuidle_kernels_total", {})->raw_value, "0");
}

TEST(PrometheusWriterTest, AReportWithoutDevicesIsStillValid) {
  const Parsed p = FormatAndParse(Report{});
  EXPECT_THAT(p.families,
              ElementsAre("gpuidle_traced_seconds_total", "gpuidle_busy_seconds_total",
                          "gpuidle_idle_seconds_total", "gpuidle_steady_one_off_seconds_total",
                          "gpuidle_comm_seconds_total", "gpuidle_exposed_comm_seconds_total",
                          "gpuidle_steps_total", "gpuidle_kernels_total", "gpuidle_memcpys_total",
                          "gpuidle_memsets_total", "gpuidle_record_limit_reached"));
  EXPECT_EQ(p.samples.size(), 1u);
}

// The reader itself: it must catch what it is there to catch.
TEST(PrometheusWriterTest, TheReaderRefusesMalformedText) {
  EXPECT_THAT(Parse("x_total 1\n").errors, Not(IsEmpty()));                          // no TYPE
  EXPECT_THAT(Parse("# HELP x h\n# TYPE x counter\nx 1\n").errors, Not(IsEmpty()));  // _total
  EXPECT_THAT(Parse("# HELP x h\n# TYPE x gauge\nx{a=\"b\\q\"} 1\n").errors, Not(IsEmpty()));
  EXPECT_THAT(Parse("# HELP x h\n# TYPE x gauge\nx{a=\"b\"} NaN\n").errors, Not(IsEmpty()));
  EXPECT_THAT(Parse("# HELP x h\n# TYPE x gauge\nx 1\nx 2\n").errors, Not(IsEmpty()));
  EXPECT_THAT(Parse("# HELP x h\n# TYPE x gauge\nx 1").errors, Not(IsEmpty()));
  EXPECT_THAT(Parse("# HELP x h\n# TYPE x gauge\nx{a=\"1\"} 1\n# HELP y h\n# TYPE y gauge\n"
                    "y 1\nx{a=\"2\"} 1\n")
                  .errors,
              Not(IsEmpty()));
  EXPECT_THAT(Parse("# HELP x h\n# TYPE x gauge\nx{a=\"1\"} 1\n").errors, IsEmpty());
}

TEST(PrometheusWriterTest, GpuReadingsAreGaugesInBaseUnitsOfTheDevicesThatHaveThem) {
  Report r;
  r.devices = {Device(0), Device(1)};
  GpuMetrics& m = r.devices[0].gpu_metrics.emplace();
  m.samples = 100;
  m.busy_samples = 90;
  m.idle_samples = 10;
  m.sm_clock_median_mhz = 1410;
  m.sm_clock_max_mhz = 1980;
  m.slow_clock_share = 0.25;
  m.power_median_mw = 690'500;
  m.power_limit_mw = 700'000;
  m.temperature_max_c = 71;
  m.pcie_generation = 4;
  m.pcie_width = 16;
  m.other_processes = {{4242, 1 << 30, 3}, {4343, 1 << 20, 0}};
  GpuMetrics::Throughput& pm = m.throughput.emplace();
  pm.sm_active_pct = 82.5;
  pm.dram_pct = 40;  // tensor_active_pct not measured
  const Parsed p = FormatAndParse(r);
  const std::map<std::string, std::string> gpu0 = {{"gpu", "0"}};
  const std::vector<std::pair<std::string, double>> expected = {
      {"gpuidle_gpu_sm_clock_median_hertz", 1.41e9},
      {"gpuidle_gpu_sm_clock_max_hertz", 1.98e9},
      {"gpuidle_gpu_slow_clock_ratio", 0.25},
      {"gpuidle_gpu_power_median_watts", 690.5},
      {"gpuidle_gpu_power_limit_watts", 700},
      {"gpuidle_gpu_temperature_max_celsius", 71},
      {"gpuidle_gpu_pcie_generation", 4},
      {"gpuidle_gpu_pcie_width", 16},
      {"gpuidle_gpu_other_processes", 2},
      {"gpuidle_gpu_sm_active_ratio", 0.825},
      {"gpuidle_gpu_dram_ratio", 0.4}};
  for (const auto& [name, value] : expected) {
    EXPECT_EQ(p.types.at(name), "gauge") << name;
    const std::optional<Sample> s = p.Find(name, gpu0);
    ASSERT_TRUE(s.has_value()) << name;
    EXPECT_DOUBLE_EQ(s->value, value) << name;
    // Device 1 has no readings: no sample, rather than a 0 that reads as a stopped GPU.
    EXPECT_EQ(p.Of(name).size(), 1u) << name;
  }
  EXPECT_EQ(p.types.count("gpuidle_gpu_tensor_active_ratio"), 0u);  // not measured
}

TEST(PrometheusWriterTest, NoGpuFamiliesWithoutReadings) {
  Report r;
  r.devices = {Device(0)};
  const Parsed p = FormatAndParse(r);
  for (const std::string& f : p.families) EXPECT_FALSE(absl::StartsWith(f, "gpuidle_gpu_")) << f;
}

// A serving report (docs/METRICS.md, "Serving"): the requests' rate, latency by quantile and
// part, requests in flight and batch as the process's gauges; each device's busy share while
// there was demand and its time with none.
Report ServingReport() {
  Report r;
  r.devices = {Device(0), Device(1)};
  r.devices[0].demand_ns = 800 * kMs;
  r.devices[0].demand_busy_ns = 600 * kMs;
  OneOffTime no_demand;
  no_demand.phase = Phase::kSteady;
  no_demand.kind = OneOffKind::kNoDemand;
  no_demand.ns = 150 * kMs + 1;
  r.devices[0].one_off.push_back(no_demand);
  r.devices[1].demand_ns = 0;  // requests marked, none in flight in its steady state
  Serving& s = r.serving.emplace();
  s.requests = 40;
  s.requests_per_s = 13.5;
  s.latency = {100 * kMs, 250 * kMs, 900 * kMs + 1};
  s.run_known = 30;
  s.queue = {1 * kMs, 20 * kMs, 400 * kMs};
  s.run = {90 * kMs, 200 * kMs, 500 * kMs};
  s.in_flight_mean = 2.25;
  s.in_flight_max = 6;
  s.batch_mean = 3.5;
  return r;
}

TEST(PrometheusWriterTest, ServingFiguresOfAServingReport) {
  const Parsed p = FormatAndParse(ServingReport(), Labels("h", "3", "77"));
  const std::vector<std::tuple<std::string, std::string, double>> process = {
      {"gpuidle_serving_requests_total", "counter", 40},
      {"gpuidle_serving_requests_per_second", "gauge", 13.5},
      {"gpuidle_serving_requests_in_flight", "gauge", 2.25},
      {"gpuidle_serving_requests_in_flight_max", "gauge", 6},
      {"gpuidle_serving_batch_size_mean", "gauge", 3.5}};
  for (const auto& [name, type, value] : process) {
    EXPECT_EQ(p.types.at(name), type) << name;
    ASSERT_EQ(p.Of(name).size(), 1u) << name;
    const Sample s = p.Of(name)[0];
    EXPECT_DOUBLE_EQ(s.value, value) << name;
    EXPECT_EQ(s.labels,
              (std::map<std::string, std::string>{{"host", "h"}, {"pid", "77"}, {"rank", "3"}}))
        << name;
  }
  // Latency: three quantiles of three parts, in seconds, written exactly.
  EXPECT_EQ(p.types.at("gpuidle_serving_latency_seconds"), "gauge");
  EXPECT_EQ(p.Of("gpuidle_serving_latency_seconds").size(), 9u);
  const std::vector<std::tuple<std::string, std::string, std::string>> latency = {
      {"total", "0.5", "0.1"},   {"total", "0.9", "0.25"}, {"total", "0.99", "0.900000001"},
      {"queue", "0.5", "0.001"}, {"queue", "0.9", "0.02"}, {"queue", "0.99", "0.4"},
      {"run", "0.5", "0.09"},    {"run", "0.9", "0.2"},    {"run", "0.99", "0.5"}};
  for (const auto& [part, quantile, value] : latency) {
    const std::optional<Sample> s =
        p.Find("gpuidle_serving_latency_seconds", {{"part", part}, {"quantile", quantile}});
    ASSERT_TRUE(s.has_value()) << part << " " << quantile;
    EXPECT_EQ(s->raw_value, value) << part << " " << quantile;
    EXPECT_EQ(s->labels.at("rank"), "3");
  }
  // Per device.
  EXPECT_EQ(p.types.at("gpuidle_gpu_busy_ratio_while_demand"), "gauge");
  EXPECT_DOUBLE_EQ(p.Find("gpuidle_gpu_busy_ratio_while_demand", {{"gpu", "0"}})->value, 0.75);
  EXPECT_DOUBLE_EQ(p.Find("gpuidle_gpu_busy_ratio_while_demand", {{"gpu", "1"}})->value, 0);
  EXPECT_EQ(p.types.at("gpuidle_no_demand_seconds_total"), "counter");
  EXPECT_EQ(p.Find("gpuidle_no_demand_seconds_total", {{"gpu", "0"}})->raw_value, "0.150000001");
  EXPECT_EQ(p.Find("gpuidle_no_demand_seconds_total", {{"gpu", "1"}})->raw_value, "0");
  // The no-demand time is part of the steady state's one-off time, as the help says.
  EXPECT_DOUBLE_EQ(p.Find("gpuidle_steady_one_off_seconds_total", {{"gpu", "0"}})->value,
                   Seconds(180 * kMs + 1));
}

TEST(PrometheusWriterTest, ServingWithoutKnownRunsOrStepsHasOnlyTotalLatency) {
  Report r = ServingReport();
  r.serving->run_known = 0;
  r.serving->batch_mean.reset();
  r.devices[1].demand_ns.reset();  // a device of a process without requests (merged)
  const Parsed p = FormatAndParse(r);
  EXPECT_EQ(p.Of("gpuidle_serving_latency_seconds").size(), 3u);
  for (const Sample& s : p.Of("gpuidle_serving_latency_seconds")) {
    EXPECT_EQ(s.labels.at("part"), "total");
  }
  EXPECT_EQ(p.types.count("gpuidle_serving_batch_size_mean"), 0u);
  EXPECT_EQ(p.Of("gpuidle_gpu_busy_ratio_while_demand").size(), 1u);
  EXPECT_EQ(p.Of("gpuidle_no_demand_seconds_total").size(), 1u);
}

TEST(PrometheusWriterTest, NoServingFamiliesWithoutRequests) {
  Report r;
  r.devices = {Device(0)};
  const Parsed p = FormatAndParse(r);
  for (const std::string& f : p.families) {
    EXPECT_FALSE(absl::StartsWith(f, "gpuidle_serving_")) << f;
    EXPECT_FALSE(absl::StrContains(f, "demand")) << f;
  }
  EXPECT_FALSE(p.families.empty());
}

}  // namespace
}  // namespace gpuidle::internal
