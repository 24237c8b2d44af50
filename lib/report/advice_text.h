// Advice as the writers print it.
#ifndef GPUIDLE_LIB_REPORT_ADVICE_TEXT_H_
#define GPUIDLE_LIB_REPORT_ADVICE_TEXT_H_

#include <string>

#include "gpuidle/report.h"

namespace gpuidle::internal {

// "up to 41.2 ms/step, 38% of step time" ("" when the advice predicts no gain).
std::string PredictedGain(const Advice& a);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_REPORT_ADVICE_TEXT_H_
