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

// Comparable runs (docs/ANALYSIS.md, "Comparable runs"): the runs are taken for different
// programs (or set-ups) when one of these holds.
// Kernels per step differ by more than this factor either way (the runs of one program recorded
// on the H200 differ by at most x1.1) ...
inline constexpr double kDifferentKernelsPerStep = 1.5;
// ... unless the kernels are the same ones by name: where both reports give at least
// kMinKernelNames of them and at least this share of the shorter list is in the other, a change
// of the count is a caveat (a CUDA graph with a capturable optimizer: 252 -> 599 kernels per step,
// the same kernels).
inline constexpr double kSameKernelNamesShare = 0.75;
// GPU work per step (busy time outside collectives that ran alone) differs by more than this
// factor either way, unless the kernels are the same ones by name (then it is the caveat
// different_work: another batch size). Runs of one program: at most x1.12, the CUDA graph above
// x2.5 with the same kernels.
inline constexpr double kDifferentBusyPerStep = 1.5;
// Kernel names: both reports give at least kMinKernelNames distinct ones and fewer than this
// share of the shorter list is in the other (the runs of one program share at least 80% of them;
// different programs at most 50%).
inline constexpr int64_t kMinKernelNames = 3;
inline constexpr double kSharedKernelNamesMin = 0.5;

// A pure function of the two reports: every figure of ReportDiff, whether the runs are
// comparable, the caveats and the verdict. Never fails: runs of different programs or set-ups
// (another kernel mix, device count, GPU model or step source) are compared but get no verdict on
// a fix; lesser mismatches (other devices, no steps, lost records) become caveats, and the
// comparison is made with what both runs have. A report that lists its steps but lacks their
// count (an earlier gpuidle's) counts its listed step rows.
ReportDiff DiffReports(const Report& before, const Report& after);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_REPORT_DIFF_H_
