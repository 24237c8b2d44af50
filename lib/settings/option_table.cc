#include "settings/option_table.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/output_path.h"
#include "core/terminal.h"
#include "core/text_safety.h"
#include "core/time_units.h"
#include "model/report_formats.h"

namespace gpuidle::internal {
namespace {

// Thresholds beyond an hour are typos, and keep the nanoseconds far from overflow.
constexpr int64_t kMaxThresholdNs = 3'600'000'000'000;
constexpr int64_t kMaxGapRecords = 1'000'000;
constexpr int64_t kMaxSkipSteps = 1'000'000;
constexpr int64_t kMaxBufferMb = 4096;

absl::Status Bad(absl::string_view why) { return absl::InvalidArgumentError(why); }

// An output path with placeholders: checked now, so that a typo shows at start-up, not when the
// file is due.
absl::Status OutputPattern(absl::string_view value, std::string* path) {
  absl::StatusOr<std::string> expanded = ExpandOutputPath(value, ProcessIdentity{});
  if (!expanded.ok()) return expanded.status();
  *path = std::string(value);
  return absl::OkStatus();
}

std::optional<int64_t> Integer(absl::string_view value) {
  return ParseInt64(absl::StripAsciiWhitespace(value));
}

absl::Status Microseconds(absl::string_view value, bool zero_allowed, int64_t* ns) {
  value = absl::StripAsciiWhitespace(value);
  const std::optional<int64_t> parsed = ParseDecimalToNs(value, 1000);
  // "-0" and "-1e-320" are negative as written, whatever they round to (issue 29).
  if (!parsed || *parsed < 0 || absl::StartsWith(value, "-") || (*parsed == 0 && !zero_allowed)) {
    return Bad(zero_allowed ? "must be a non-negative number of microseconds"
                            : "must be a positive number of microseconds");
  }
  // A value that is not zero as written but rounds to 0 ns ("1e-400") is not taken for 0.
  const absl::string_view digits = value.substr(0, value.find_first_of("eE"));
  if (*parsed == 0 && digits.find_first_of("123456789") != absl::string_view::npos) {
    return Bad("must be 0 or at least 0.001 microseconds (1 ns)");
  }
  if (*parsed > kMaxThresholdNs) return Bad("must be at most 3600000000 (one hour)");
  *ns = *parsed;
  return absl::OkStatus();
}

absl::Status Count(absl::string_view value, int64_t max, int* count) {
  const std::optional<int64_t> n = Integer(value);
  if (!n || *n < 0 || *n > max) return Bad(absl::StrCat("must be an integer from 0 to ", max));
  *count = static_cast<int>(*n);
  return absl::OkStatus();
}

}  // namespace

std::optional<bool> ParseSwitchWord(absl::string_view value) {
  const std::string word = absl::AsciiStrToLower(absl::StripAsciiWhitespace(value));
  if (word == "1" || word == "true" || word == "yes") return true;
  if (word == "0" || word == "false" || word == "no") return false;
  return std::nullopt;
}

namespace option_rules {

absl::Status Out(absl::string_view value, ProfilerOptions* options) {
  return OutputPattern(value, &options->report_path);
}

absl::Status Trace(absl::string_view value, ProfilerOptions* options) {
  return OutputPattern(value, &options->trace_path);
}

absl::Status Format(absl::string_view value, ProfilerOptions* options) {
  const absl::string_view format = absl::StripAsciiWhitespace(value);
  // The writers' list (model/report_formats.h): a format they write is one the options accept.
  if (!IsReportFormat(format)) return Bad("must be \"text\", \"json\" or \"html\"");
  options->report_format = std::string(format);
  return absl::OkStatus();
}

absl::Status Quiet(absl::string_view value, ProfilerOptions* options) {
  const std::optional<bool> on = ParseSwitchWord(value);
  if (!on) return Bad(kSwitchWords);
  options->print_summary = !*on;
  return absl::OkStatus();
}

absl::Status Color(absl::string_view value, ProfilerOptions* options) {
  const std::optional<ColorWhen> when = ParseColorWhen(value);
  if (!when) return Bad("must be auto, always or never");
  options->color = *when == ColorWhen::kAuto     ? "auto"
                   : *when == ColorWhen::kAlways ? "always"
                                                 : "never";
  return absl::OkStatus();
}

absl::Status Python(absl::string_view value, ProfilerOptions* options) {
  const std::optional<bool> on = ParseSwitchWord(value);
  if (!on) return Bad(kSwitchWords);
  options->python_integration = *on;
  return absl::OkStatus();
}

absl::Status AsRecorded(absl::string_view value, ProfilerOptions* options) {
  const std::optional<bool> on = ParseSwitchWord(value);
  if (!on) return Bad(kSwitchWords);
  options->analysis.as_recorded = *on;
  return absl::OkStatus();
}

// A sampling period in milliseconds: 0 (off), or from min_ns to max_ns.
absl::Status OffOrPeriodMs(absl::string_view value, int64_t min_ns, int64_t max_ns, int64_t* ns) {
  const std::optional<int64_t> v = ParseDecimalToNs(absl::StripAsciiWhitespace(value), 1'000'000);
  const auto ms = [](int64_t n) { return absl::StrFormat("%g", static_cast<double>(n) / 1e6); };
  if (!v || *v < 0 || *v > max_ns) {
    return Bad(absl::StrCat("must be a number of milliseconds from 0 (off) to ", ms(max_ns)));
  }
  if (*v > 0 && *v < min_ns)
    return Bad(absl::StrCat("must be 0 (off) or at least ", ms(min_ns), " ms"));
  *ns = *v;
  return absl::OkStatus();
}

absl::Status HostSampleMs(absl::string_view value, ProfilerOptions* options) {
  return OffOrPeriodMs(value, 100'000, 1'000'000'000, &options->host_sample_period_ns);
}

absl::Status GpuMetricsMs(absl::string_view value, ProfilerOptions* options) {
  return OffOrPeriodMs(value, 10'000'000, 60'000'000'000, &options->gpu_metrics_period_ns);
}

absl::Status GpuThroughputMs(absl::string_view value, ProfilerOptions* options) {
  return OffOrPeriodMs(value, 1'000'000, 1'000'000'000, &options->gpu_throughput_interval_ns);
}

absl::Status MaxRecords(absl::string_view value, ProfilerOptions* options) {
  const std::optional<int64_t> n = Integer(value);
  if (!n || *n <= 0) return Bad("must be a positive integer");
  options->max_records = *n;
  return absl::OkStatus();
}

absl::Status BufferMb(absl::string_view value, ProfilerOptions* options) {
  const std::optional<int64_t> n = Integer(value);
  if (!n || *n < 1 || *n > kMaxBufferMb) return Bad("must be an integer from 1 to 4096");
  options->buffer_pool_mb = static_cast<int>(*n);
  return absl::OkStatus();
}

absl::Status LaunchGapMaxUs(absl::string_view value, ProfilerOptions* options) {
  return Microseconds(value, /*zero_allowed=*/false, &options->analysis.launch_gap_max_ns);
}

absl::Status DispatchLatencyMaxUs(absl::string_view value, ProfilerOptions* options) {
  return Microseconds(value, /*zero_allowed=*/true, &options->analysis.dispatch_latency_max_ns);
}

absl::Status DataRange(absl::string_view value, ProfilerOptions* options) {
  // Added to the defaults: a user who marks a custom loader keeps the DataLoader detection.
  for (absl::string_view pattern : absl::StrSplit(value, ',')) {
    pattern = absl::StripAsciiWhitespace(pattern);
    if (!pattern.empty()) options->analysis.data_range_patterns.emplace_back(pattern);
  }
  return absl::OkStatus();
}

absl::Status MaxGaps(absl::string_view value, ProfilerOptions* options) {
  return Count(value, kMaxGapRecords, &options->analysis.max_gap_records);
}

absl::Status SkipSteps(absl::string_view value, ProfilerOptions* options) {
  return Count(value, kMaxSkipSteps, &options->analysis.skip_steps);
}

absl::Status Sample(absl::string_view value, ProfilerOptions* options) {
  constexpr int64_t kSecond = 1'000'000'000;
  const std::string word = absl::AsciiStrToLower(absl::StripAsciiWhitespace(value));
  if (word == "all") {
    options->sample_window_ns = options->sample_period_ns = options->sample_first_window_ns = 0;
    return absl::OkStatus();
  }
  if (word == "auto") {
    options->sample_first_window_ns = kAutoSampleFirstWindowNs;
    options->sample_window_ns = kAutoSampleWindowNs;
    options->sample_period_ns = kAutoSamplePeriodNs;
    return absl::OkStatus();
  }
  const std::vector<absl::string_view> parts = absl::StrSplit(value, '/');
  std::optional<int64_t> window, period;
  if (parts.size() == 2) {
    window = ParseDecimalToNs(absl::StripAsciiWhitespace(parts[0]), kSecond);
    period = ParseDecimalToNs(absl::StripAsciiWhitespace(parts[1]), kSecond);
  }
  if (!window || !period || *window < kSecond / 10 || *window > *period ||
      *period > 86'400 * kSecond) {
    return Bad(
        "must be W/P in seconds with 0.1 <= W <= P <= 86400 (\"10/100\": 10 s of every "
        "100 s)");
  }
  options->sample_window_ns = *window;
  options->sample_period_ns = *period;
  options->sample_first_window_ns = 0;
  return absl::OkStatus();
}

void PartialReport(ProfilerOptions* options) {
  if (options->report_path.empty() || options->summary_every_ns != 0 ||
      !options->summary_path.empty()) {
    return;
  }
  options->summary_every_ns = kPartialReportEveryNs;
  options->summary_path = TaggedOutputPath(options->report_path, "partial");
}

absl::Status SummaryEveryS(absl::string_view value, ProfilerOptions* options) {
  const std::optional<int64_t> ns =
      ParseDecimalToNs(absl::StripAsciiWhitespace(value), 1'000'000'000);
  if (!ns || *ns < 1'000'000'000 || *ns > int64_t{86'400} * 1'000'000'000) {
    return Bad("must be a number of seconds from 1 to 86400");
  }
  options->summary_every_ns = *ns;
  return absl::OkStatus();
}

absl::Status SummaryFile(absl::string_view value, ProfilerOptions* options) {
  return OutputPattern(value, &options->summary_path);
}

absl::Status MetricsFile(absl::string_view value, ProfilerOptions* options) {
  return OutputPattern(value, &options->metrics_path);
}

absl::Status MetricsPort(absl::string_view value, ProfilerOptions* options) {
  const std::optional<int64_t> n = Integer(value);
  if (!n || *n < 1 || *n > 65535) return Bad("must be an integer from 1 to 65535");
  options->metrics_port = static_cast<int>(*n);
  return absl::OkStatus();
}

}  // namespace option_rules

const SettingSpec* FindSettingByVariable(absl::string_view variable) {
  for (const SettingSpec& s : kSettingTable) {
    if (variable == s.variable) return &s;
  }
  return nullptr;
}

const SettingSpec* FindSettingByFlag(absl::string_view flag) {
  if (flag == "-q") flag = "--quiet";
  for (const SettingSpec& s : kSettingTable) {
    if (s.flag != nullptr && flag == s.flag) return &s;
  }
  return nullptr;
}

const SettingSpec* FindSettingByKeyword(absl::string_view keyword) {
  for (const SettingSpec& s : kSettingTable) {
    if (s.keyword != nullptr && keyword == s.keyword) return &s;
  }
  return nullptr;
}

absl::string_view SettingTypeName(SettingType type) {
  switch (type) {
    case SettingType::kPath:
      return "path";
    case SettingType::kString:
      return "str";
    case SettingType::kSwitch:
      return "bool";
    case SettingType::kInteger:
      return "int";
    case SettingType::kNumber:
      return "number";
    case SettingType::kStrings:
      return "strings";
  }
  return "str";
}

namespace {

// The usage layout: options indented by two, their help from column 25, 96 columns in all.
constexpr size_t kHelpColumn = 25;
constexpr size_t kWidth = 96;

// text's words in lines of at most width (a longer word stands alone).
std::vector<std::string> Wrap(absl::string_view text, size_t width) {
  std::vector<std::string> lines(1);
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (!lines.back().empty() && lines.back().size() + 1 + word.size() > width)
      lines.emplace_back();
    if (!lines.back().empty()) lines.back() += ' ';
    absl::StrAppend(&lines.back(), word);
  }
  return lines;
}

std::string FlagAndValue(const SettingSpec& s) {
  return s.flag_value != nullptr ? absl::StrCat(s.flag, " ", s.flag_value) : s.flag;
}

// The help of a setting with its default and range: "longest gaps kept in the report (default
// 50; an integer from 0 to 1000000)".
std::string FullHelp(const SettingSpec& s) {
  if (s.flag_value == nullptr) return s.flag_help;
  std::string defaults = s.default_value[0] != '\0' ? absl::StrCat("default ", s.default_value)
                                                    : absl::StrCat("default: ", s.unset_means);
  return absl::StrCat(s.help, " (", defaults, "; ", s.range, ")");
}

// The settings `gpuidle run` names only as "as for analyze": the analysis thresholds.
bool IsAnalysisThreshold(const SettingSpec& s) {
  return (s.front_ends & kSettingPythonAnalyze) != 0;
}

}  // namespace

std::string UsageLine(absl::string_view flag_and_value, absl::string_view help) {
  std::string out = absl::StrCat("  ", flag_and_value);
  if (out.size() + 2 > kHelpColumn) {
    out += '\n';
    out.append(kHelpColumn, ' ');
  } else {
    out.append(kHelpColumn - out.size(), ' ');
  }
  out += absl::StrJoin(Wrap(help, kWidth - kHelpColumn),
                       absl::StrCat("\n", std::string(kHelpColumn, ' ')));
  out += '\n';
  return out;
}

std::string SettingUsageLines(unsigned front_end) {
  std::string out;
  bool thresholds_named = false;
  for (const SettingSpec& s : kSettingTable) {
    if ((s.front_ends & front_end) == 0 || s.flag == nullptr) continue;
    if (front_end == kSettingRunFlag && IsAnalysisThreshold(s)) {
      if (thresholds_named) continue;
      thresholds_named = true;
      std::vector<std::string> flags;
      for (const SettingSpec& t : kSettingTable) {
        if ((t.front_ends & kSettingRunFlag) != 0 && IsAnalysisThreshold(t)) {
          flags.push_back(FlagAndValue(t));
        }
      }
      std::vector<std::string> lines = Wrap(absl::StrJoin(flags, ", "), kWidth - 2);
      for (size_t i = 0; i + 1 < lines.size(); ++i) absl::StrAppend(&out, "  ", lines[i], "\n");
      out += UsageLine(lines.back(), "as for analyze");
      continue;
    }
    out += UsageLine(FlagAndValue(s), FullHelp(s));
  }
  return out;
}

}  // namespace gpuidle::internal
