// The idle analysis: pure functions from timelines to a Report (docs/ANALYSIS.md).
#ifndef GPUIDLE_LIB_ANALYSIS_ANALYZE_H_
#define GPUIDLE_LIB_ANALYSIS_ANALYZE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gpuidle/options.h"
#include "gpuidle/report.h"
#include "model/gap_list.h"
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

// The gaps of `timeline` analysed alone with `options` (as Analyze does; gap records carry the
// timeline's rank).
absl::StatusOr<GapList> ListGaps(const Timeline& timeline, const AnalysisOptions& options,
                                 int max_gaps);

// The gaps a trace of `timeline` draws beside `report`: ListGaps with the report's options;
// nullopt without a report or where that analysis fails (the trace then draws the report's own
// longest gaps).
std::optional<GapList> GapsToDraw(const Timeline& timeline, const Report* report, int max_gaps);

// Analyze(timeline, options) and the gaps a trace of the timeline draws (ListGaps with
// max_gaps). They come from one pass where the report is of the timeline as recorded; a live
// capture's report takes the tracer's time out (untraced_view.h) while the trace draws the gaps
// as recorded, which takes a second pass.
struct AnalysisWithGaps {
  Report report;
  GapList gaps;
};
absl::StatusOr<AnalysisWithGaps> AnalyzeWithGaps(const Timeline& timeline,
                                                 const AnalysisOptions& options, int max_gaps);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_ANALYZE_H_
