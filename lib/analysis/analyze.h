// The idle analysis: pure functions from timelines to a Report (docs/ANALYSIS.md).
#ifndef GPUIDLE_LIB_ANALYSIS_ANALYZE_H_
#define GPUIDLE_LIB_ANALYSIS_ANALYZE_H_

#include <span>

#include "absl/status/statusor.h"
#include "gpuidle/options.h"
#include "gpuidle/report.h"
#include "model/timeline.h"

namespace gpuidle::internal {

absl::Status ValidateOptions(const AnalysisOptions& options);

// Analyses one process.
absl::StatusOr<Report> Analyze(const Timeline& timeline, const AnalysisOptions& options);

// Analyses the processes of one job (one timeline per rank, on one clock) and merges them:
// devices and steps of every rank, communication wait across ranks.
absl::StatusOr<Report> AnalyzeRanks(std::span<const Timeline* const> ranks,
                                    const AnalysisOptions& options);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_ANALYZE_H_
