#include "report/advice_text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/time_units.h"

namespace gpuidle::internal {

std::string PredictedGain(const Advice& a) {
  if (a.gain_ns <= 0) return "";
  if (a.gain_per_step_ns) {
    std::string s = absl::StrCat(
        "up to ", FormatAdviceDuration(static_cast<double>(*a.gain_per_step_ns)), "/step");
    if (a.gain_share_of_step) {
      absl::StrAppend(&s, absl::StrFormat(", %.0f%% of step time", 100 * *a.gain_share_of_step));
    }
    return s;
  }
  return absl::StrCat("up to ", FormatAdviceDuration(static_cast<double>(a.gain_ns)),
                      " of the steady state");
}

}  // namespace gpuidle::internal
