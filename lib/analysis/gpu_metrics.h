// What NVML's readings of a live collection say about a device (docs/ANALYSIS.md, "GPU
// metrics"): busy but slow (clocks under their maximum, and why), a narrow or erring PCIe link,
// another process on the same GPU.
#ifndef GPUIDLE_LIB_ANALYSIS_GPU_METRICS_H_
#define GPUIDLE_LIB_ANALYSIS_GPU_METRICS_H_

#include <cstdint>
#include <optional>

#include "gpuidle/report.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// The device's readings in its steady state [steady_start_ns, steady_end_ns), told apart by
// whether one of the device's kernels ran at their time; nullopt without readings there.
std::optional<GpuMetrics> SummariseGpuMetrics(const Timeline& t, const DeviceTimeline& device,
                                              int64_t steady_start_ns, int64_t steady_end_ns);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_GPU_METRICS_H_
