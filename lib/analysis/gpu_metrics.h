// What NVML's readings of a live collection say about a device (docs/ANALYSIS.md, "GPU
// metrics"): busy but slow (clocks under their maximum, and why), a narrow or erring PCIe link,
// another process on the same GPU.
#ifndef GPUIDLE_LIB_ANALYSIS_GPU_METRICS_H_
#define GPUIDLE_LIB_ANALYSIS_GPU_METRICS_H_

#include <algorithm>
#include <cstdint>
#include <optional>

#include "gpuidle/report.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// A PM figure's rate while kernels ran. A sample averages its whole span, idle time included,
// and a device does (almost) nothing between kernels: the figure's activity summed over the
// samples, divided by the time kernels ran in them, is its rate while they ran.
struct RateWhileBusy {
  double activity = 0;
  double busy_ns = 0;
  void Add(float value, int64_t span_ns, int64_t kernels_ns) {
    if (value < 0 || kernels_ns <= 0) return;
    activity += static_cast<double>(value) * static_cast<double>(span_ns);
    busy_ns += static_cast<double>(kernels_ns);
  }
  // At most cap; negative where nothing was added.
  double Rate(double cap) const { return busy_ns > 0 ? std::min(cap, activity / busy_ns) : -1; }
};

// The device's readings in its steady state [steady_start_ns, steady_end_ns), told apart by
// whether one of the device's kernels ran at their time; nullopt without readings there.
std::optional<GpuMetrics> SummariseGpuMetrics(const Timeline& t, const DeviceTimeline& device,
                                              int64_t steady_start_ns, int64_t steady_end_ns);

// Sets m->findings from m's figures alone, replacing any there: what the figures mean, most
// important first (throughput, clocks, the PCIe link and its replays, other processes).
// SummariseGpuMetrics ends with it; a merge of windows calls it again on the merged figures.
void DeriveGpuFindings(GpuMetrics* m);

// Adds a later window's figures of the same device to `sum` (a sampled collection: docs/
// ANALYSIS.md, "Sampled collection"), then derives sum's findings again. Counts add, maxima take
// the larger, shares and medians become means weighted by the readings they were taken over
// (a merged median is the busy-readings-weighted mean of the windows' medians); a figure one
// side did not measure (0 for clocks and power, negative for throughput) takes the other's.
// The other_process note rests on the device's idle time: call NoteWaitBehindOtherProcesses
// after it, with the merged device.
void AddGpuMetrics(const GpuMetrics& window, GpuMetrics* sum);

// Adds to the other_process findings how much of the device's steady idle time its queued work
// waited behind other processes (its sync_bound.other_process time), where it did.
void NoteWaitBehindOtherProcesses(const DeviceReport& device, GpuMetrics* m);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_GPU_METRICS_H_
