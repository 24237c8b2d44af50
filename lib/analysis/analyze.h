// The idle analysis: pure functions from timelines to a Report (docs/ANALYSIS.md).
#ifndef GPUIDLE_LIB_ANALYSIS_ANALYZE_H_
#define GPUIDLE_LIB_ANALYSIS_ANALYZE_H_

#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gpuidle/options.h"
#include "gpuidle/report.h"
#include "model/timeline.h"

namespace gpuidle::internal {

absl::Status ValidateOptions(const AnalysisOptions& options);

// Analyses one process.
absl::StatusOr<Report> Analyze(const Timeline& timeline, const AnalysisOptions& options);

// Analyses the processes of one job (one timeline per rank) one by one and merges their reports
// (MergeRanks, rank_merge.h): devices and steps of every rank, waits for peers, the straggler.
// `names` name the inputs in the job's warnings.
absl::StatusOr<Report> AnalyzeRanks(std::span<const Timeline* const> ranks,
                                    const AnalysisOptions& options,
                                    const std::vector<std::string>& names = {});

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_ANALYZE_H_
