// The columns in which a gpuidle trace carries a live capture's device readings (NVML readings,
// other processes, PM throughput samples: Timeline::gpu_metrics, gpu_processes, gpu_throughput),
// each named as its field. One table per kind of reading, for the trace writer and the reader
// alike, so that a field added to a reading is written and read back by adding one row here
// (docs/TRACE_FORMAT.md, "Device readings").
#ifndef GPUIDLE_LIB_MODEL_GPU_READING_COLUMNS_H_
#define GPUIDLE_LIB_MODEL_GPU_READING_COLUMNS_H_

#include <cstdint>
#include <variant>

#include "absl/strings/string_view.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// The field a column holds, by type: integers are written as JSON integers, floats as the
// shortest decimal that reads back to the same float.
template <typename Row>
using ReadingField =
    std::variant<int64_t Row::*, int Row::*, uint32_t Row::*, uint64_t Row::*, float Row::*>;

template <typename Row>
struct ReadingColumn {
  absl::string_view name;
  ReadingField<Row> field;
  // A time stamp on the timeline's clock: the reader holds it to the time range of
  // model/timeline.h.
  bool time = false;
  // A device ordinal: the reader holds it to 0..INT32_MAX.
  bool device = false;
};

// GpuMetricSample's clock_events column: null where has_clock_events is false.
inline constexpr absl::string_view kClockEventsColumn = "clock_events";

inline constexpr ReadingColumn<GpuMetricSample> kGpuMetricColumns[] = {
    {"time_ns", &GpuMetricSample::time_ns, /*time=*/true},
    {"device", &GpuMetricSample::device, false, /*device=*/true},
    {"sm_clock_mhz", &GpuMetricSample::sm_clock_mhz},
    {"sm_clock_max_mhz", &GpuMetricSample::sm_clock_max_mhz},
    {"memory_clock_mhz", &GpuMetricSample::memory_clock_mhz},
    {"memory_clock_max_mhz", &GpuMetricSample::memory_clock_max_mhz},
    {"power_mw", &GpuMetricSample::power_mw},
    {"power_limit_mw", &GpuMetricSample::power_limit_mw},
    {"temperature_c", &GpuMetricSample::temperature_c},
    {"utilization_percent", &GpuMetricSample::utilization_percent},
    {kClockEventsColumn, &GpuMetricSample::clock_events},
    {"pcie_generation", &GpuMetricSample::pcie_generation},
    {"pcie_generation_max", &GpuMetricSample::pcie_generation_max},
    {"pcie_width", &GpuMetricSample::pcie_width},
    {"pcie_width_max", &GpuMetricSample::pcie_width_max},
    {"pcie_replays", &GpuMetricSample::pcie_replays},
    {"memory_used_bytes", &GpuMetricSample::memory_used_bytes},
    {"memory_total_bytes", &GpuMetricSample::memory_total_bytes},
};

// GpuProcessSeen's busy_sample_ns column: an array of time stamps per process.
inline constexpr absl::string_view kBusySamplesColumn = "busy_sample_ns";

inline constexpr ReadingColumn<GpuProcessSeen> kGpuProcessColumns[] = {
    {"device", &GpuProcessSeen::device, false, /*device=*/true},
    {"pid", &GpuProcessSeen::pid},
    {"memory_bytes", &GpuProcessSeen::memory_bytes},
    {"first_seen_ns", &GpuProcessSeen::first_seen_ns, /*time=*/true},
    {"last_seen_ns", &GpuProcessSeen::last_seen_ns, /*time=*/true},
};

inline constexpr ReadingColumn<GpuThroughputSample> kGpuThroughputColumns[] = {
    {"start_ns", &GpuThroughputSample::start_ns, /*time=*/true},
    {"end_ns", &GpuThroughputSample::end_ns, /*time=*/true},
    {"device", &GpuThroughputSample::device, false, /*device=*/true},
    {"sm_active_pct", &GpuThroughputSample::sm_active_pct},
    {"tensor_active_pct", &GpuThroughputSample::tensor_active_pct},
    {"dram_pct", &GpuThroughputSample::dram_pct},
    {"pcie_read_bytes_per_s", &GpuThroughputSample::pcie_read_bytes_per_s},
    {"pcie_write_bytes_per_s", &GpuThroughputSample::pcie_write_bytes_per_s},
    {"nvlink_read_bytes_per_s", &GpuThroughputSample::nvlink_read_bytes_per_s},
    {"nvlink_write_bytes_per_s", &GpuThroughputSample::nvlink_write_bytes_per_s},
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_MODEL_GPU_READING_COLUMNS_H_
