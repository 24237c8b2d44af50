// Helpers of the analysis tests: analyse a synthetic timeline, take its one device.
#ifndef GPUIDLE_TESTS_TESTING_ANALYSIS_HELPERS_H_
#define GPUIDLE_TESTS_TESTING_ANALYSIS_HELPERS_H_

#include "analysis/analyze.h"
#include "gtest/gtest.h"

namespace gpuidle::testing {

inline constexpr int64_t kUs = 1000;

// The report of `t`; fails the test (and gives an empty report) if the analysis fails.
inline Report MustAnalyze(const internal::Timeline& t, const AnalysisOptions& options = {}) {
  absl::StatusOr<Report> r = internal::Analyze(t, options);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : Report{};
}

// The report's one device (keep the report alive while using it).
inline const DeviceReport& OnlyDevice(const Report& r) {
  EXPECT_EQ(r.devices.size(), 1u);
  return r.devices.at(0);
}

}  // namespace gpuidle::testing

#endif  // GPUIDLE_TESTS_TESTING_ANALYSIS_HELPERS_H_
