// The merge of a job's ranks (docs/ANALYSIS.md, "Many ranks"): one report per process in, the
// job's report out. It needs nothing but the per-rank reports (their devices, steps and
// collective timing tables), so a job of any size merges from its small reports as well as from
// its traces, and both give the same figures.
//
//   collectives matched across ranks (group and sequence where the trace has them, else kind and
//   time) -> clocks aligned (one per host; across hosts from the collective ends) -> each rank's
//   wait for peers per device, step and kind -> who arrived last, and by how much -> the
//   straggler and its own cause -> the merged lists, advice.
#ifndef GPUIDLE_LIB_ANALYSIS_RANK_MERGE_H_
#define GPUIDLE_LIB_ANALYSIS_RANK_MERGE_H_

#include <vector>

#include "absl/status/statusor.h"
#include "gpuidle/options.h"
#include "gpuidle/report.h"

namespace gpuidle::internal {

// `ranks` are one-process reports (Analyze of one timeline, or a live rank's report read back),
// in input order; a report without a rank number gets its input position. `names` name the
// inputs in warnings. Warns (Report::warnings, one line each) on duplicate ranks, missing ranks
// and inputs that do not overlap in time. One report is returned as it is. A merged report (of
// several ranks) is no input (InvalidArgument). The job's report lists no collective timings.
// Drops the step rows of a one-process report that a merge of `inputs` reports could not list
// (Report::kMaxStepRows shared out among the devices), counting them in steps_not_listed: a
// reader of many reports keeps only those in memory.
void KeepStepRowsForMerge(size_t inputs, Report* report);

absl::StatusOr<Report> MergeRanks(std::vector<Report> ranks, const std::vector<std::string>& names,
                                  const AnalysisOptions& options);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_RANK_MERGE_H_
