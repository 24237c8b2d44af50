// Traces as the session writes them: a report's gaps listed by the analysis (GapsToDraw), for
// tests that draw a report's gaps without repeating that step each time.
#ifndef GPUIDLE_TESTS_TESTING_TRACE_WITH_GAPS_H_
#define GPUIDLE_TESTS_TESTING_TRACE_WITH_GAPS_H_

#include <optional>
#include <string>

#include "analysis/analyze.h"
#include "report/trace_writer.h"

namespace gpuidle::internal {

inline std::string FormatTraceWithGaps(const Timeline& t, const Report* report,
                                       const TraceOptions& options = {}) {
  const std::optional<GapList> gaps = GapsToDraw(t, report, options.max_gaps);
  return FormatGpuidleTrace(t, report, gaps ? &*gaps : nullptr, options);
}

inline absl::StatusOr<std::string> WriteTraceWithGaps(const Timeline& t, const Report* report,
                                                      const std::string& path,
                                                      const TraceOptions& options = {}) {
  const std::optional<GapList> gaps = GapsToDraw(t, report, options.max_gaps);
  return WriteGpuidleTrace(t, report, gaps ? &*gaps : nullptr, path, {}, options);
}

}  // namespace gpuidle::internal

#endif  // GPUIDLE_TESTS_TESTING_TRACE_WITH_GAPS_H_
