// The GPUIDLE_* environment variables behind ProfilerOptionsFromEnvironment(), one at a time, so
// that `gpuidle run` can check its flags with the very rules the injected library applies.
#ifndef GPUIDLE_LIB_SESSION_PROFILER_OPTIONS_H_
#define GPUIDLE_LIB_SESSION_PROFILER_OPTIONS_H_

#include <functional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpuidle/profiler.h"

namespace gpuidle::internal {

// Every variable ProfilerOptionsFromEnvironment() reads.
inline constexpr const char* kProfilerVariables[] = {"GPUIDLE_OUT",
                                                     "GPUIDLE_FORMAT",
                                                     "GPUIDLE_TRACE",
                                                     "GPUIDLE_QUIET",
                                                     "GPUIDLE_MAX_RECORDS",
                                                     "GPUIDLE_BUFFER_MB",
                                                     "GPUIDLE_LAUNCH_GAP_MAX_US",
                                                     "GPUIDLE_DISPATCH_LATENCY_MAX_US",
                                                     "GPUIDLE_DATA_RANGE",
                                                     "GPUIDLE_MAX_GAPS",
                                                     "GPUIDLE_SKIP_STEPS",
                                                     "GPUIDLE_HOST_SAMPLE_MS",
                                                     "GPUIDLE_PYTHON"};

// Sets the option that variable `name` (one of kProfilerVariables) controls from a non-empty
// value. The error says only why the value is bad; callers name the variable or flag.
absl::Status ApplyProfilerVariable(absl::string_view name, absl::string_view value,
                                   ProfilerOptions* options);

// ProfilerOptionsFromEnvironment() over another source of variables: lookup returns a
// variable's value, or nullptr if it is unset. An empty value counts as unset.
absl::StatusOr<ProfilerOptions> ProfilerOptionsFromVariables(
    const std::function<const char*(const char*)>& lookup);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_SESSION_PROFILER_OPTIONS_H_
