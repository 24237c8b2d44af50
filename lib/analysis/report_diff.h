// Before and after (docs/ANALYSIS.md, "Before and after"): two reports of the same program,
// compared figure by figure, with a verdict and the reasons the comparison may be weak.
#ifndef GPUIDLE_LIB_ANALYSIS_REPORT_DIFF_H_
#define GPUIDLE_LIB_ANALYSIS_REPORT_DIFF_H_

#include <cstdint>

#include "gpuidle/diff.h"
#include "gpuidle/report.h"

namespace gpuidle::internal {

// Below these the verdict is "unchanged": a mean step time that moved by less than 5%, or
// (without steps) a lost share that moved by less than 2 points of the steady state. Run-to-run
// noise of the recorded H200 traces stays well inside both.
inline constexpr double kMaterialStepChange = 0.05;
inline constexpr double kMaterialShareChange = 0.02;
// GPU work per step that changed by more than this suggests different work (another batch
// size, another model): the step times then compare different things.
inline constexpr double kDifferentWorkChange = 0.25;

// A pure function of the two reports: every figure of ReportDiff, the caveats and the verdict.
// Never fails: mismatches (other devices, no steps, other step sources, lost records) become
// caveats, and the comparison is made with what both runs have.
ReportDiff DiffReports(const Report& before, const Report& after);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_REPORT_DIFF_H_
