// The fix for each subcause, in the words practitioners use.
#ifndef GPUIDLE_LIB_ANALYSIS_ADVICE_H_
#define GPUIDLE_LIB_ANALYSIS_ADVICE_H_

#include "absl/strings/string_view.h"
#include "gpuidle/report.h"

namespace gpuidle::internal {

absl::string_view FixFor(Subcause s);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_ADVICE_H_
