// The CUPTI metrics that give a GpuThroughputSample's figures: the ones the live PM sampler asks
// for (collect/pm_sampling.cc) and the ones the trace reader takes from the counters of
// Kineto's range-profiler events (docs/TRACE_INPUTS.md, "GPU counters"). One table, so a figure
// means the same from either source.
#ifndef GPUIDLE_LIB_MODEL_THROUGHPUT_METRICS_H_
#define GPUIDLE_LIB_MODEL_THROUGHPUT_METRICS_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// The figure a metric gives (GpuThroughputSample's fields).
enum class ThroughputFigure : uint8_t {
  kSmActive,
  kTensorActive,
  kDram,
  kPcieRead,
  kPcieWrite,
  kNvlinkRead,
  kNvlinkWrite,
};

struct ThroughputMetric {
  ThroughputFigure figure;
  absl::string_view name;
};

// Most important first: where the chip cannot take them all in one pass, the last go. For a
// figure with several names the first the chip offers is taken, except the tensor pipes:
// Hopper's warpgroup MMA (gmma) and the older MMA (hmma) are separate pipes, and a kernel uses
// one of them, so every one offered is read and the busiest counts.
inline constexpr ThroughputMetric kThroughputMetrics[] = {
    {ThroughputFigure::kSmActive, "sm__cycles_active.avg.pct_of_peak_sustained_elapsed"},
    {ThroughputFigure::kDram, "dram__throughput.avg.pct_of_peak_sustained_elapsed"},
    {ThroughputFigure::kDram, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"},
    {ThroughputFigure::kTensorActive,
     "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed"},
    {ThroughputFigure::kTensorActive,
     "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed"},
    {ThroughputFigure::kTensorActive,
     "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"},
    {ThroughputFigure::kPcieRead, "pcie__read_bytes.sum.per_second"},
    {ThroughputFigure::kPcieRead, "pcie__rx_bytes.sum.per_second"},
    {ThroughputFigure::kPcieWrite, "pcie__write_bytes.sum.per_second"},
    {ThroughputFigure::kPcieWrite, "pcie__tx_bytes.sum.per_second"},
    {ThroughputFigure::kNvlinkRead, "nvlrx__bytes.sum.per_second"},
    {ThroughputFigure::kNvlinkWrite, "nvltx__bytes.sum.per_second"},
};

// The figure `metric` gives; nullopt for any other name. Cheap for the names a trace's args
// carry ("correlation", "Input Dims"): the reader asks for every arg it does not know.
std::optional<ThroughputFigure> ThroughputFigureOf(absl::string_view metric);

// Sets the figure's field of `s` to `value` (the tensor pipes: the busiest of those given).
void PutThroughput(ThroughputFigure figure, double value, GpuThroughputSample* s);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_MODEL_THROUGHPUT_METRICS_H_
