// The fix for each subcause, in the words practitioners use.
#ifndef GPUIDLE_LIB_ANALYSIS_ADVICE_H_
#define GPUIDLE_LIB_ANALYSIS_ADVICE_H_

#include <string>

#include "absl/strings/string_view.h"
#include "gpuidle/options.h"
#include "gpuidle/report.h"

namespace gpuidle::internal {

absl::string_view FixFor(Subcause s);

// Lost time: idle, plus collectives spinning while they wait for peers (busy by the definition
// of utilisation, yet no work). Sets report->verdict (whether the steady state lost at least
// options.worth_fixing_min_share of itself) and, where it did, report->advice: every subcause
// with at least options.advice_min_share of the lost time and options.advice_min_steady_share
// of the steady state, most first.
// Each piece of advice carries its predicted gain (Advice::gain_ns, per step where the run has
// steps) and the evidence it rests on; docs/ANALYSIS.md, "Predicted gains", says how each is
// estimated.
void AddAdvice(const AnalysisOptions& options, Report* report);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_ADVICE_H_
