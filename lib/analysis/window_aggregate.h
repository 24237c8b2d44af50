// The report of a sampled collection (docs/ANALYSIS.md, "Sampled collection"): each window's
// report is folded in as the window closes, and only sums per device, the longest gaps, the
// heaviest offenders and a bounded list of steps are kept, so that memory stays flat however
// long the job runs.
#ifndef GPUIDLE_LIB_ANALYSIS_WINDOW_AGGREGATE_H_
#define GPUIDLE_LIB_ANALYSIS_WINDOW_AGGREGATE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "gpuidle/options.h"
#include "gpuidle/report.h"

namespace gpuidle::internal {

class WindowAggregate {
 public:
  // Windows are analysed with WindowOptions(options); the aggregate keeps options' limits.
  explicit WindowAggregate(const AnalysisOptions& options);

  // The options to analyse a window with: more offenders than the report keeps (an offender
  // just below the cut in every window may be the heaviest overall), and the warm-up steps
  // left out of the first window only.
  AnalysisOptions WindowOptions() const;

  // One closed window [start_ns, end_ns) on the timeline's clock, in time order, and its report
  // (nullptr: the window recorded no GPU activity; it still counts as traced time).
  void Add(int64_t start_ns, int64_t end_ns, const Report* window);

  // The collection ran until now_ns (the timeline's clock): the time after the last window is
  // untraced time of the run, which the coverage's span counts (issue 28: a report says what it
  // did not see). Only ever extends the span.
  void CoverUntil(int64_t now_ns);
  // The sampling plan, for the coverage to say (Coverage::first_window_ns, ...).
  void SetPlan(int64_t first_window_ns, int64_t window_ns, int64_t period_ns);

  int64_t windows() const { return coverage_.windows; }
  // The aggregate of the windows so far; nullopt while none had activity. After one window, that
  // window's report, with the coverage only when the run went on untraced after it (more than
  // kUntracedTailMin and 1% of the span). Without steps (the metrics' view, as each window
  // closes), the step rows are not copied.
  std::optional<Report> Result(bool with_steps = true) const;

  static constexpr int64_t kUntracedTailMin = 100'000'000;  // 100 ms

 private:
  void AddDevice(const DeviceReport& w);

  AnalysisOptions options_;
  Coverage coverage_;
  int64_t first_start_ns_ = 0;
  std::optional<Report> sum_;  // advice, unused devices and the cut of the lists: in Result()
  // The first window's report as it was: a run that ended within its first window is reported
  // exactly as an unsampled collection would be.
  std::optional<Report> first_;
  std::vector<StepReport> steps_;  // the aggregate's step rows (at most Report::kMaxStepRows)
  std::vector<int> unused_;        // visible devices unused in some window
  int64_t serving_span_ns_ = 0;    // the steady spans of the windows with serving figures
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_WINDOW_AGGREGATE_H_
