// Steps: which host ranges are the program's steps, how each is cut onto a device's timeline,
// which are the steady ones, and each step's figures (docs/ANALYSIS.md, "Steps").
#ifndef GPUIDLE_LIB_ANALYSIS_STEPS_H_
#define GPUIDLE_LIB_ANALYSIS_STEPS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/attribution.h"
#include "analysis/timeline_index.h"
#include "gpuidle/options.h"
#include "gpuidle/report.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// Outermost step ranges (indices into Timeline::ranges), by start. gpuidle's optimizer-step
// boundaries stand in only for a program that marks no steps of its own, and only where more
// of the GPU's kernel time lies inside them than after the last: a step captured once in a CUDA
// graph calls the optimizer only while it is captured, and its replays run after the last
// optimizer step. Then there are no steps, and `dropped` (if given) says why.
std::vector<int32_t> StepRanges(const Timeline& t, std::string* dropped = nullptr);

// Where the steps came from, by their names' prefix ("ProfilerStep#3" -> "ProfilerStep");
// "marker" for another name, "" without steps.
std::string StepSource(const Timeline& t, const std::vector<int32_t>& steps);

// Whether step k lasts more than twice the median of the others, and one_off_min longer. The
// program's first step is then start-up (lazy initialisation, allocator growth, autotuning that
// no other rule named); its last, wind-down (a save or teardown inside the last step range,
// which torch.profiler closes only when it stops).
bool FarLongerThanTheOtherSteps(const Timeline& t, const std::vector<int32_t>& steps, size_t k,
                                const AnalysisOptions& options);

// The steady steps [first, end) of `steps`: all but a far longer first (a warm-up step) and a
// far longer last one.
struct SteadySteps {
  size_t first = 0;
  size_t end = 0;
  bool warm_up_step = false;  // the first step is a warm-up step
  size_t count() const { return end - first; }
};
SteadySteps FindSteadySteps(const Timeline& t, const std::vector<int32_t>& steps,
                            const AnalysisOptions& options);

// A step's span on one device begins when its host range has begun and the previous step's
// GPU work has finished; it ends where the next step begins (docs/ANALYSIS.md). Clamped to the
// window; one span per step.
std::vector<Interval> CutSteps(const TimelineIndex& index, const DeviceTimeline& device,
                               const std::vector<int32_t>& steps, Interval window);

// Appends the reports of steps [first_step, end_step) of the device, at most max_rows of them:
// their busy time from `busy` and idle time from `pieces` (the device's steady state).
void FillSteps(const Timeline& t, const std::vector<int32_t>& steps,
               const std::vector<Interval>& spans, size_t first_step, size_t end_step,
               const std::vector<Interval>& busy, const std::vector<IdlePiece>& pieces,
               const DeviceReport& device, size_t max_rows, std::vector<StepReport>* out);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_STEPS_H_
