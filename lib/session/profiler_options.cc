#include "session/profiler_options.h"

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/output_path.h"
#include "core/text_safety.h"
#include "core/time_units.h"

namespace gpuidle::internal {
namespace {

// Thresholds beyond an hour are typos, and keep the nanoseconds far from overflow.
constexpr int64_t kMaxThresholdNs = 3'600'000'000'000;
constexpr int64_t kMaxGapRecords = 1'000'000;
constexpr int64_t kMaxBufferMb = 4096;

absl::Status Bad(absl::string_view why) { return absl::InvalidArgumentError(why); }

// Checks the placeholders now, so that a typo shows at start-up, not when the report is due.
absl::Status CheckOutputPattern(absl::string_view value) {
  absl::StatusOr<std::string> expanded = ExpandOutputPath(value, ProcessIdentity{});
  return expanded.ok() ? absl::OkStatus() : expanded.status();
}

std::optional<int64_t> Integer(absl::string_view value) {
  return ParseInt64(absl::StripAsciiWhitespace(value));
}

absl::Status Microseconds(absl::string_view value, bool zero_allowed, int64_t* ns) {
  const std::optional<int64_t> parsed = ParseDecimalToNs(absl::StripAsciiWhitespace(value), 1000);
  if (!parsed || *parsed < 0 || (*parsed == 0 && !zero_allowed)) {
    return Bad(zero_allowed ? "must be a non-negative number of microseconds"
                            : "must be a positive number of microseconds");
  }
  if (*parsed > kMaxThresholdNs) return Bad("must be at most 3600000000 (one hour)");
  *ns = *parsed;
  return absl::OkStatus();
}

constexpr char kSwitchWords[] = "must be 1, true, yes, 0, false or no";

// The words of every on/off variable, trimmed and in any case; nullopt for anything else.
std::optional<bool> Switch(absl::string_view value) {
  const std::string word = absl::AsciiStrToLower(absl::StripAsciiWhitespace(value));
  if (word == "1" || word == "true" || word == "yes") return true;
  if (word == "0" || word == "false" || word == "no") return false;
  return std::nullopt;
}

}  // namespace

DisableSetting ReadDisableVariable(const char* value) {
  DisableSetting setting;
  if (value == nullptr || absl::StripAsciiWhitespace(value).empty()) return setting;
  const std::optional<bool> on = Switch(value);
  setting.disabled = on.value_or(true);
  if (!on) {
    setting.warning = absl::StrCat("GPUIDLE_DISABLE=", ForMessage(value), ": ", kSwitchWords,
                                   "; gpuidle is off, the program runs as usual");
  }
  return setting;
}

absl::Status ApplyProfilerVariable(absl::string_view name, absl::string_view value,
                                   ProfilerOptions* options) {
  if (name == "GPUIDLE_OUT" || name == "GPUIDLE_TRACE") {
    if (absl::Status s = CheckOutputPattern(value); !s.ok()) return s;
    (name == "GPUIDLE_OUT" ? options->report_path : options->trace_path) = std::string(value);
    return absl::OkStatus();
  }
  if (name == "GPUIDLE_FORMAT") {
    const absl::string_view format = absl::StripAsciiWhitespace(value);
    if (format != "text" && format != "json") return Bad("must be \"text\" or \"json\"");
    options->report_format = std::string(format);
    return absl::OkStatus();
  }
  if (name == "GPUIDLE_QUIET" || name == "GPUIDLE_PYTHON") {
    const std::optional<bool> on = Switch(value);
    if (!on) return Bad(kSwitchWords);
    if (name == "GPUIDLE_QUIET") {
      options->print_summary = !*on;
    } else {
      options->python_integration = *on;
    }
    return absl::OkStatus();
  }
  if (name == "GPUIDLE_HOST_SAMPLE_MS") {
    const std::optional<int64_t> ns =
        ParseDecimalToNs(absl::StripAsciiWhitespace(value), 1'000'000);
    if (!ns || *ns < 0 || *ns > 1'000'000'000) {
      return Bad("must be a number of milliseconds from 0 (off) to 1000");
    }
    if (*ns > 0 && *ns < 100'000) return Bad("must be 0 (off) or at least 0.1 ms");
    options->host_sample_period_ns = *ns;
    return absl::OkStatus();
  }
  if (name == "GPUIDLE_MAX_RECORDS") {
    const std::optional<int64_t> n = Integer(value);
    if (!n || *n <= 0) return Bad("must be a positive integer");
    options->max_records = *n;
    return absl::OkStatus();
  }
  if (name == "GPUIDLE_BUFFER_MB") {
    const std::optional<int64_t> n = Integer(value);
    if (!n || *n < 1 || *n > kMaxBufferMb) return Bad("must be an integer from 1 to 4096");
    options->buffer_pool_mb = static_cast<int>(*n);
    return absl::OkStatus();
  }
  if (name == "GPUIDLE_LAUNCH_GAP_MAX_US") {
    return Microseconds(value, /*zero_allowed=*/false, &options->analysis.launch_gap_max_ns);
  }
  if (name == "GPUIDLE_DISPATCH_LATENCY_MAX_US") {
    return Microseconds(value, /*zero_allowed=*/true, &options->analysis.dispatch_latency_max_ns);
  }
  if (name == "GPUIDLE_DATA_RANGE") {
    // Added to the defaults: a user who marks a custom loader keeps the DataLoader detection.
    for (absl::string_view pattern : absl::StrSplit(value, ',')) {
      pattern = absl::StripAsciiWhitespace(pattern);
      if (!pattern.empty()) options->analysis.data_range_patterns.emplace_back(pattern);
    }
    return absl::OkStatus();
  }
  if (name == "GPUIDLE_MAX_GAPS") {
    const std::optional<int64_t> n = Integer(value);
    if (!n || *n < 0 || *n > kMaxGapRecords) return Bad("must be an integer from 0 to 1000000");
    options->analysis.max_gap_records = static_cast<int>(*n);
    return absl::OkStatus();
  }
  if (name == "GPUIDLE_SKIP_STEPS") {
    const std::optional<int64_t> n = Integer(value);
    if (!n || *n < 0 || *n > 1'000'000) return Bad("must be an integer from 0 to 1000000");
    options->analysis.skip_steps = static_cast<int>(*n);
    return absl::OkStatus();
  }
  return Bad(absl::StrCat("unknown variable ", ForMessage(name)));
}

absl::StatusOr<ProfilerOptions> ProfilerOptionsFromVariables(
    const std::function<const char*(const char*)>& lookup) {
  ProfilerOptions options;
  for (const char* name : kProfilerVariables) {
    const char* value = lookup(name);
    if (value == nullptr || value[0] == '\0') continue;
    if (absl::Status s = ApplyProfilerVariable(name, value, &options); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, "=", ForMessage(value), ": ", s.message()));
    }
  }
  return options;
}

}  // namespace gpuidle::internal

namespace gpuidle {

absl::StatusOr<ProfilerOptions> ProfilerOptionsFromEnvironment() {
  return internal::ProfilerOptionsFromVariables(
      [](const char* name) -> const char* { return std::getenv(name); });
}

}  // namespace gpuidle
