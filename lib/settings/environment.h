// The GPUIDLE_* environment variables behind ProfilerOptionsFromEnvironment(), one at a time, so
// that `gpuidle run` can check its flags with the very rules the injected library applies. The
// variables and their rules are the option table's (settings/option_table.h).
#ifndef GPUIDLE_LIB_SETTINGS_ENVIRONMENT_H_
#define GPUIDLE_LIB_SETTINGS_ENVIRONMENT_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpuidle/options.h"
#include "settings/option_table.h"

namespace gpuidle::internal {

// Every variable ProfilerOptionsFromEnvironment() reads, in the order it reads them: the
// variables of the option table (settings/option_table.h).
inline constexpr const auto& kProfilerVariables = kSettingVariables;

// Sets the option that variable `name` (one of kProfilerVariables) controls from a non-empty
// value. The error says only why the value is bad; callers name the variable or flag.
absl::Status ApplyProfilerVariable(absl::string_view name, absl::string_view value,
                                   ProfilerOptions* options);

// GPUIDLE_DISABLE (value may be null): whether gpuidle must stay out of this process, and if the
// value is none of the words every switch takes, the one warning to print (gpuidle is then off
// too: a typo must not profile a job that asked not to be). Unset, empty, 0, false and no leave
// it on; 1, true and yes turn it off silently (trimmed, any case, as GPUIDLE_QUIET).
struct DisableSetting {
  bool disabled = false;
  std::string warning;
};
DisableSetting ReadDisableVariable(const char* value);

// The message of a bad value, given the variable, its value and why the rule refused it; the
// default is "GPUIDLE_X=value: why". `gpuidle run` names the flag a value came from instead.
using DescribeBadValue = std::function<std::string(const char* variable, absl::string_view value,
                                                   absl::string_view why)>;

// ProfilerOptionsFromEnvironment() over another source of variables: lookup returns a
// variable's value, or nullptr if it is unset. An empty value counts as unset. The first bad
// value, in the table's order, is an InvalidArgument error with describe's message.
absl::StatusOr<ProfilerOptions> ProfilerOptionsFromVariables(
    const std::function<const char*(const char*)>& lookup,
    const DescribeBadValue& describe = nullptr);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_SETTINGS_ENVIRONMENT_H_
