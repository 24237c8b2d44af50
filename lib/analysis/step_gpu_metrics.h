// Each step's share of a live capture's readings of its device (StepReport::Gpu): the NVML
// readings and PM samples inside the step, so that a slow step can be told apart by its clocks
// and throughput (docs/ANALYSIS.md, "GPU metrics").
#ifndef GPUIDLE_LIB_ANALYSIS_STEP_GPU_METRICS_H_
#define GPUIDLE_LIB_ANALYSIS_STEP_GPU_METRICS_H_

#include <span>
#include <vector>

#include "analysis/attribution.h"
#include "gpuidle/report.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// Sets gpu of each of `steps` (all of device `device`, in time order) from the device's readings
// in [start_ns, end_ns): the NVML figures over the readings taken while a kernel ran (in `busy`,
// the device's merged kernel intervals), the PM figures as rates while kernels ran over the
// samples' overlaps with the step (RateWhileBusy). A step without readings keeps nullopt.
void FillStepGpuMetrics(const Timeline& t, int device, const std::vector<Interval>& busy,
                        std::span<StepReport> steps);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_STEP_GPU_METRICS_H_
