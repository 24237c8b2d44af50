// gpuidle's settings by name: the GPUIDLE_* variables, the flags of `gpuidle run` and
// `gpuidle analyze` and the keywords of the Python package are one table, with one rule per
// setting. Language bindings and launchers set options through it, so that a value is accepted
// or refused the same way everywhere.
//
//   gpuidle::ProfilerOptions options;
//   if (absl::Status s = gpuidle::ApplySetting("--max-gaps", "10", &options); !s.ok()) ...
//   for (const gpuidle::SettingInfo& s : gpuidle::Settings()) std::cout << s.variable << "\n";
#ifndef GPUIDLE_INCLUDE_GPUIDLE_SETTINGS_H_
#define GPUIDLE_INCLUDE_GPUIDLE_SETTINGS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpuidle/export.h"
#include "gpuidle/options.h"

namespace gpuidle {

// Where a setting can be given: bits of SettingInfo::front_ends.
enum SettingFrontEnd : unsigned {
  kSettingEnvironment = 1u << 0,    // the GPUIDLE_* variable (injected library, Profiler())
  kSettingRunFlag = 1u << 1,        // gpuidle run --flag
  kSettingAnalyzeFlag = 1u << 2,    // gpuidle analyze --flag
  kSettingPythonProfile = 1u << 3,  // gpuidle.profile(keyword=...)
  kSettingPythonAnalyze = 1u << 4,  // gpuidle.analyze(keyword=...)
};

// The kind of value, as the Python package checks it before the rule of the setting applies.
enum class SettingType {
  kPath,     // an output path with placeholders
  kString,   // a word
  kSwitch,   // 1, true, yes / 0, false, no
  kInteger,  // a whole number
  kNumber,   // a decimal number
  kStrings,  // comma-separated fragments (a list in Python)
};

struct SettingInfo {
  std::string variable;    // "GPUIDLE_MAX_GAPS"
  std::string flag;        // "--max-gaps"; "" if no command takes it
  std::string flag_value;  // what follows the flag ("N", "PATH"); "" for a flag without value,
  std::string flag_sets;   // which then sets this value ("1" for --quiet)
  std::string keyword;     // the Python keyword ("max_gaps"); "" if none
  SettingType type = SettingType::kString;
  std::string type_name;      // "path", "str", "bool", "int", "number" or "strings"
  std::string default_value;  // as the variable would be written; "" if none
  std::string unset_means;    // what no value means, where there is no default
  std::string range;          // the values it takes, in words
  std::string help;           // what it does, in one line
  unsigned front_ends = 0;    // SettingFrontEnd bits
};

// Every setting, in the order the environment is read.
GPUIDLE_EXPORT std::vector<SettingInfo> Settings();

// Sets the option that a setting controls, named by its variable ("GPUIDLE_MAX_GAPS") or flag
// ("--max-gaps"), from a non-empty value, by the rule every front end applies. InvalidArgument
// says why the value is bad without naming the setting (the caller names it as its user wrote
// it), or that the name is unknown. options is unchanged on error.
GPUIDLE_EXPORT absl::Status ApplySetting(absl::string_view name, absl::string_view value,
                                         ProfilerOptions* options);

// The defaults overridden by the GPUIDLE_* environment variables. An unparsable value is an
// InvalidArgument error naming the variable.
GPUIDLE_EXPORT absl::StatusOr<ProfilerOptions> ProfilerOptionsFromEnvironment();

}  // namespace gpuidle

#endif  // GPUIDLE_INCLUDE_GPUIDLE_SETTINGS_H_
