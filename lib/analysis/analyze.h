// The idle analysis: pure functions from timelines to a Report (docs/ANALYSIS.md).
#ifndef GPUIDLE_LIB_ANALYSIS_ANALYZE_H_
#define GPUIDLE_LIB_ANALYSIS_ANALYZE_H_

#include <cstdint>
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

// Every steady-state gap of one process: the idle pieces whose causes sum to each device's idle
// time (Report::longest_gaps holds only the longest few), for drawing them all
// (report/trace_writer.cc). Long runs have millions: at most `max_gaps` are listed, the longest
// (ties: the earlier), and `devices` says how many each device had in all.
struct GapList {
  struct DeviceGaps {
    int device = 0;
    int64_t gaps = 0;     // every steady-state gap of the device, listed or not
    int64_t idle_ns = 0;  // their total length (DeviceReport::idle_ns)
  };
  std::vector<GapRecord> gaps;  // sorted by device, then start
  std::vector<DeviceGaps> devices;
};

// The gaps of `timeline` analysed alone with `options` (as Analyze does; gap records carry the
// timeline's rank).
absl::StatusOr<GapList> ListGaps(const Timeline& timeline, const AnalysisOptions& options,
                                 int max_gaps);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_ANALYZE_H_
