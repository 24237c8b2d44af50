// Every setting of gpuidle, defined once: its GPUIDLE_* variable, its `gpuidle run` /
// `gpuidle analyze` flag, its Python keyword, type, default, range, help line and the rule that
// parses it. The environment parser, both command-line parsers, the usage text, the public
// gpuidle::Settings() / ApplySetting() and, through them, the Python keyword checks all read
// this table; tests check the docs tables against it.
//
// A new setting is one row here, a field in ProfilerOptions, and the docs rows the tests ask for.
#ifndef GPUIDLE_LIB_SETTINGS_OPTION_TABLE_H_
#define GPUIDLE_LIB_SETTINGS_OPTION_TABLE_H_

#include <array>
#include <cstddef>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "gpuidle/options.h"
#include "gpuidle/settings.h"

namespace gpuidle::internal {

// Parses a non-empty value into the option it controls. The error says only why the value is
// bad; callers name the variable, flag or keyword.
using ApplyFn = absl::Status (*)(absl::string_view value, ProfilerOptions* options);

struct SettingSpec {
  const char* variable;    // "GPUIDLE_MAX_GAPS"
  const char* flag;        // "--max-gaps"; nullptr if no command takes it
  const char* flag_value;  // "N", "PATH", "FMT", "TEXT"; nullptr: the flag takes no value...
  const char* flag_sets;   // ... and sets this value instead ("1" for --quiet)
  const char* keyword;     // Python keyword; nullptr if Python has none
  SettingType type;
  const char* default_value;  // as the variable would be written; "" for none
  const char* unset_means;    // what no value means where there is no default, else ""
  const char* range;          // the values it takes, in words (usage text and docs)
  const char* help;           // what it does (usage text)
  const char* flag_help;      // for a flag without value: what it does; nullptr otherwise
  unsigned front_ends;        // SettingFrontEnd bits
  ApplyFn apply;
};

// GPUIDLE_SAMPLE=auto (the default of gpuidle run and LD_PRELOAD): a run of up to a minute is
// recorded whole; a longer one then costs about 2.5% of full tracing's overhead.
inline constexpr int64_t kAutoSampleFirstWindowNs = 60'000'000'000;
inline constexpr int64_t kAutoSampleWindowNs = 1'000'000'000;
inline constexpr int64_t kAutoSamplePeriodNs = 40'000'000'000;

// The other default of gpuidle run and LD_PRELOAD, for a job with a report path and no summary
// setting: the report so far, replaced every 5 minutes, under the report's name with ".partial"
// ("report.partial.json"): what a job ended by SIGKILL or the OOM killer leaves
// (docs/INJECTION.md, "How a job ends"). Removed once the whole report is written.
inline constexpr int64_t kPartialReportEveryNs = 300'000'000'000;

namespace option_rules {
void PartialReport(ProfilerOptions* options);
absl::Status Out(absl::string_view value, ProfilerOptions* options);
absl::Status Format(absl::string_view value, ProfilerOptions* options);
absl::Status Trace(absl::string_view value, ProfilerOptions* options);
absl::Status Quiet(absl::string_view value, ProfilerOptions* options);
absl::Status Color(absl::string_view value, ProfilerOptions* options);
absl::Status MaxRecords(absl::string_view value, ProfilerOptions* options);
absl::Status BufferMb(absl::string_view value, ProfilerOptions* options);
absl::Status LaunchGapMaxUs(absl::string_view value, ProfilerOptions* options);
absl::Status DispatchLatencyMaxUs(absl::string_view value, ProfilerOptions* options);
absl::Status DataRange(absl::string_view value, ProfilerOptions* options);
absl::Status MaxGaps(absl::string_view value, ProfilerOptions* options);
absl::Status SkipSteps(absl::string_view value, ProfilerOptions* options);
absl::Status HostSampleMs(absl::string_view value, ProfilerOptions* options);
absl::Status GpuMetricsMs(absl::string_view value, ProfilerOptions* options);
absl::Status GpuThroughputMs(absl::string_view value, ProfilerOptions* options);
absl::Status Python(absl::string_view value, ProfilerOptions* options);
absl::Status AsRecorded(absl::string_view value, ProfilerOptions* options);
absl::Status Sample(absl::string_view value, ProfilerOptions* options);
absl::Status SummaryEveryS(absl::string_view value, ProfilerOptions* options);
absl::Status SummaryFile(absl::string_view value, ProfilerOptions* options);
absl::Status MetricsFile(absl::string_view value, ProfilerOptions* options);
absl::Status MetricsPort(absl::string_view value, ProfilerOptions* options);
}  // namespace option_rules

inline constexpr unsigned kEveryFrontEnd = kSettingEnvironment | kSettingRunFlag |
                                           kSettingAnalyzeFlag | kSettingPythonProfile |
                                           kSettingPythonAnalyze;
// The settings of a collection: the variables, `gpuidle run` and gpuidle.profile().
inline constexpr unsigned kCollection =
    kSettingEnvironment | kSettingRunFlag | kSettingPythonProfile;

// In the order in which the environment is read (the first bad variable is the one named).
inline constexpr SettingSpec kSettingTable[] = {
    // variable, flag, flag_value, flag_sets, keyword, type, default_value, unset_means, range,
    // help, flag_help, front_ends, apply
    {"GPUIDLE_OUT", "--out", "PATH", nullptr, "out", SettingType::kPath, "", "no report file",
     "a path; %p pid, %r rank, %h host, %% percent sign",
     "write the report to PATH when the program exits; an existing file is never replaced (the "
     "pid is added to the name instead)",
     nullptr, kCollection, option_rules::Out},
    {"GPUIDLE_FORMAT", "--format", "FMT", nullptr, "format", SettingType::kString, "",
     "json for a .json --out, html for .html or .htm, else text", "text, json or html",
     "the report's format", nullptr, kCollection | kSettingAnalyzeFlag, option_rules::Format},
    {"GPUIDLE_TRACE", "--trace", "PATH", nullptr, "trace", SettingType::kPath, "", "no trace file",
     "a path, with the placeholders of --out",
     "write the recorded timeline to PATH (a gpuidle trace: Perfetto opens it, gpuidle analyze "
     "reads it)",
     nullptr, kCollection, option_rules::Trace},
    {"GPUIDLE_QUIET", "--quiet", nullptr, "1", "quiet", SettingType::kSwitch, "0", "",
     "1, true, yes / 0, false, no (any case)",
     "1: no summary on standard error when the program exits",
     "no summary on standard error when the program exits", kCollection, option_rules::Quiet},
    {"GPUIDLE_COLOR", "--color", "WHEN", nullptr, nullptr, SettingType::kString, "auto", "",
     "auto, always or never",
     "colours in the text summary on a terminal: auto (when it goes to a terminal, unless "
     "NO_COLOR is set; CLICOLOR_FORCE=1 forces them), always, never; files never get them",
     nullptr, kSettingEnvironment | kSettingRunFlag | kSettingAnalyzeFlag, option_rules::Color},
    {"GPUIDLE_MAX_RECORDS", "--max-records", "N", nullptr, "max_records", SettingType::kInteger,
     "20000000", "", "a positive integer", "stop recording after N records (a memory bound)",
     nullptr, kCollection, option_rules::MaxRecords},
    {"GPUIDLE_BUFFER_MB", "--buffer-mb", "N", nullptr, "buffer_mb", SettingType::kInteger, "64", "",
     "an integer from 1 to 4096", "CUPTI buffer memory in MiB", nullptr, kCollection,
     option_rules::BufferMb},
    {"GPUIDLE_LAUNCH_GAP_MAX_US", "--launch-gap-max-us", "N", nullptr, "launch_gap_max_us",
     SettingType::kNumber, "1000", "",
     "a positive number of us, decimals allowed, at most one hour, 3600000000",
     "host stretches between CUDA calls shorter than N us count as launch overhead, longer ones "
     "as host work",
     nullptr, kEveryFrontEnd, option_rules::LaunchGapMaxUs},
    {"GPUIDLE_DISPATCH_LATENCY_MAX_US", "--dispatch-latency-max-us", "N", nullptr,
     "dispatch_latency_max_us", SettingType::kNumber, "100", "",
     "a non-negative number of us, decimals allowed, at most one hour, 3600000000",
     "queued work that waits longer than N us with no cause in the trace is unattributed, not "
     "kernel_gap",
     nullptr, kEveryFrontEnd, option_rules::DispatchLatencyMaxUs},
    {"GPUIDLE_DATA_RANGE", "--data-range", "TEXT", nullptr, "data_ranges", SettingType::kStrings,
     "", "the built-in fragments only",
     "comma-separated name fragments, added to the built-in ones",
     "host ranges whose name contains TEXT are data waits; the flag may be repeated", nullptr,
     kEveryFrontEnd, option_rules::DataRange},
    {"GPUIDLE_MAX_GAPS", "--max-gaps", "N", nullptr, "max_gaps", SettingType::kInteger, "50", "",
     "an integer from 0 to 1000000", "longest gaps kept in the report", nullptr, kEveryFrontEnd,
     option_rules::MaxGaps},
    {"GPUIDLE_SKIP_STEPS", "--skip-steps", "N", nullptr, "skip_steps", SettingType::kInteger, "0",
     "", "an integer from 0 to 1000000",
     "leave out the first N steps (warm-up: start-up costs that are not the program's, such as a "
     "profiler's); the window begins at step N+1",
     nullptr, kEveryFrontEnd, option_rules::SkipSteps},
    {"GPUIDLE_AS_RECORDED", "--as-recorded", nullptr, "1", "as_recorded", SettingType::kSwitch, "0",
     "", "1, true, yes / 0, false, no (any case)",
     "analyse the timeline as recorded, gpuidle's own cost left in the gaps it lengthened (by "
     "default a live capture's report describes the program without gpuidle)",
     "analyse the timeline as recorded: gpuidle's own cost stays in the gaps "
     "(GPUIDLE_AS_RECORDED=1)",
     kEveryFrontEnd, option_rules::AsRecorded},
    {"GPUIDLE_HOST_SAMPLE_MS", "--host-sample-ms", "N", nullptr, "host_sample_ms",
     SettingType::kNumber, "5", "", "0 (off) or a number of ms from 0.1 to 1000",
     "sample the Python stacks of launching threads away from CUDA every N ms", nullptr,
     kCollection, option_rules::HostSampleMs},
    {"GPUIDLE_GPU_METRICS_MS", "--gpu-metrics-ms", "N", nullptr, "gpu_metrics_ms",
     SettingType::kNumber, "100", "", "0 (off) or a number of ms from 10 to 60000",
     "read each GPU the collection uses through NVML every N ms: clocks, power, temperature, "
     "PCIe link, memory and the other processes on it",
     nullptr, kCollection, option_rules::GpuMetricsMs},
    {"GPUIDLE_GPU_THROUGHPUT_MS", "--gpu-throughput-ms", "N", nullptr, "gpu_throughput_ms",
     SettingType::kNumber, "0", "", "0 (off) or a number of ms from 1 to 1000 (10 suits)",
     "sample each GPU the collection uses with CUPTI's PM sampling, one sample per N ms: SM and "
     "tensor activity, DRAM, PCIe and NVLink throughput",
     nullptr, kCollection, option_rules::GpuThroughputMs},
    {"GPUIDLE_PYTHON", "--no-python", nullptr, "0", nullptr, SettingType::kSwitch, "1", "",
     "1, true, yes / 0, false, no (any case)",
     "whether gpuidle run and LD_PRELOAD load gpuidle's Python layer into Python programs",
     "leave Python programs alone (GPUIDLE_PYTHON=0): no DataLoader marks, call sites, optimizer "
     "steps or host stacks from Python",
     kSettingEnvironment | kSettingRunFlag, option_rules::Python},
    {"GPUIDLE_SAMPLE", "--sample", "W/P", nullptr, "sample", SettingType::kString, "",
     "gpuidle run and LD_PRELOAD: auto; gpuidle.profile() and the C++ API: all",
     "W/P in seconds, decimals allowed: 0.1 <= W <= P <= 86400; auto (the first 60 s whole, "
     "then 1/40); all (every moment)",
     "record W seconds of every P (CUPTI detached in between), for long jobs; the report sums "
     "the windows and says how much it covers",
     nullptr, kCollection, option_rules::Sample},
    {"GPUIDLE_SUMMARY_EVERY_S", "--summary-every-s", "N", nullptr, "summary_every_s",
     SettingType::kNumber, "", "no summaries while collecting",
     "a number of seconds from 1 to 86400",
     "every N seconds, the report so far: to --summary-file, else on standard error", nullptr,
     kCollection, option_rules::SummaryEveryS},
    {"GPUIDLE_SUMMARY_FILE", "--summary-file", "PATH", nullptr, "summary_file", SettingType::kPath,
     "", "summaries on standard error", "a path, with the placeholders of --out",
     "where the periodic summaries go (replaced each time; json for a .json name, else text)",
     nullptr, kCollection, option_rules::SummaryFile},
    {"GPUIDLE_METRICS_FILE", "--metrics-file", "PATH", nullptr, "metrics_file", SettingType::kPath,
     "", "no metrics file", "a path, with the placeholders of --out",
     "Prometheus metrics, replaced as windows close (node_exporter's textfile collector)", nullptr,
     kCollection, option_rules::MetricsFile},
    {"GPUIDLE_METRICS_PORT", "--metrics-port", "N", nullptr, "metrics_port", SettingType::kInteger,
     "", "no metrics server", "an integer from 1 to 65535",
     "serve Prometheus metrics on 127.0.0.1:N (N plus LOCAL_RANK where set)", nullptr, kCollection,
     option_rules::MetricsPort},
};

inline constexpr size_t kSettingCount = std::size(kSettingTable);

// The variables of kSettingTable in its order.
inline constexpr std::array<const char*, kSettingCount> kSettingVariables = [] {
  std::array<const char*, kSettingCount> names{};
  for (size_t i = 0; i < kSettingCount; ++i) names[i] = kSettingTable[i].variable;
  return names;
}();

// The row of a variable ("GPUIDLE_MAX_GAPS"), a flag ("--max-gaps", "--quiet"; "-q" too) or a
// Python keyword ("max_gaps"); nullptr if none.
const SettingSpec* FindSettingByVariable(absl::string_view variable);
const SettingSpec* FindSettingByFlag(absl::string_view flag);
const SettingSpec* FindSettingByKeyword(absl::string_view keyword);

// The words of every on/off setting, trimmed and in any case: true for 1, true, yes; false for
// 0, false, no; nullopt for anything else (kSwitchWords says what is allowed).
std::optional<bool> ParseSwitchWord(absl::string_view value);
inline constexpr char kSwitchWords[] = "must be 1, true, yes, 0, false or no";

// "int", "number", ...: the names the Python package checks values by.
absl::string_view SettingTypeName(SettingType type);

// The usage lines of the settings a command takes (front_end: kSettingRunFlag or
// kSettingAnalyzeFlag), each "  --flag VALUE  help (default ...; range)", wrapped at 96
// columns. `run` does not repeat the analysis thresholds (the settings gpuidle.analyze() takes
// too) in full: one entry names them "as for analyze".
std::string SettingUsageLines(unsigned front_end);

// Usage lines for a flag with its help, in the layout of SettingUsageLines.
std::string UsageLine(absl::string_view flag_and_value, absl::string_view help);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_SETTINGS_OPTION_TABLE_H_
