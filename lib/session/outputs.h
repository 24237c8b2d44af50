// What a finished collection produced, and the small rules of the session's outputs that the
// session and its sampled windows share.
#ifndef GPUIDLE_LIB_SESSION_OUTPUTS_H_
#define GPUIDLE_LIB_SESSION_OUTPUTS_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpuidle/options.h"
#include "gpuidle/profiler.h"
#include "gpuidle/report.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// What a finished collection produced.
struct CollectionResult {
  Timeline timeline;
  std::optional<Report> report;  // nullopt: nothing was recorded
  ProfilerOptions options;
  std::string report_path;  // where the report was written, if it was
  std::string trace_path;   // where the trace was written, if it was
  // Why a configured output was not written (each failure was warned about); OK otherwise.
  absl::Status output_status;
  ProfileCost cost;
};

// Whether the summary file is the default partial report of gpuidle run and LD_PRELOAD
// (settings/option_table.h PartialReport): removed when the whole report is written.
bool IsPartialReport(const ProfilerOptions& options);

// The text summary as printed on standard error: coloured where that is a terminal and the
// settings allow it (GPUIDLE_COLOR, NO_COLOR: core/terminal.h).
absl::StatusOr<std::string> StderrSummary(const Report& report, const ProfilerOptions& options);

// A whole number from 0 to 2^30 in an environment variable (LOCAL_RANK, WORLD_SIZE); nullopt when
// it is unset or anything else.
std::optional<int> IntFromEnvironment(const char* name);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_SESSION_OUTPUTS_H_
