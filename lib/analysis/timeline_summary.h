// The binned timeline of a device (TimelineSummary, in gpuidle/report.h): built from the
// attribution of one window, coarsened for reports of many devices, and summed over the windows
// of a sampled collection, always in a bounded number of bins.
#ifndef GPUIDLE_LIB_ANALYSIS_TIMELINE_SUMMARY_H_
#define GPUIDLE_LIB_ANALYSIS_TIMELINE_SUMMARY_H_

#include <vector>

#include "analysis/attribution.h"
#include "gpuidle/report.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// `window` in at most `bins` equal bins: `busy` (kernel intervals, the whole window) as busy time,
// `steady_idle` (the steady state's attributed pieces) as idle by cause, and the rest of the
// window as one-off time.
TimelineSummary SummarizeTimeline(Interval window, const std::vector<Interval>& busy,
                                  const std::vector<IdlePiece>& steady_idle,
                                  int bins = TimelineSummary::kBins);

// Fills t->gpu from the device's readings in t's bins (NVML readings and PM samples of `device`,
// a live capture's); leaves it empty when none falls in them.
void AddGpuReadings(const Timeline& timeline, int device, TimelineSummary* t);

// Merges every `factor` adjacent bins into one (the sums are kept).
void CoarsenTimeline(int factor, TimelineSummary* t);

// Adds a later window's summary to `sum` (both on one clock): `sum` grows to cover it, its bins
// doubling in length as needed to stay within TimelineSummary::kBins. A bin of `window` that
// straddles bins of `sum` is shared out by overlap, so each column's total is kept exactly and
// its place to within a bin.
void AddTimeline(const TimelineSummary& window, TimelineSummary* sum);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_TIMELINE_SUMMARY_H_
