// The timeline: what a trace file or a live CUPTI capture says happened, as plain values.
//
// One clock (int64 nanoseconds), device work per device sorted by start, host CUDA calls and
// host ranges sorted by start. Everything the analysis needs and nothing format-specific:
// a live capture and a file give the same Timeline, hence the same report.
#ifndef GPUIDLE_LIB_MODEL_TIMELINE_H_
#define GPUIDLE_LIB_MODEL_TIMELINE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/string_table.h"

namespace gpuidle::internal {

// The time invariants of every finalized Timeline (Timeline::Finalize enforces them on what any
// producer appended, dropping what breaks them with a warning that counts it), so that the
// analysis can compute with plain int64 nanoseconds:
//   - every time stamp t (start_ns, end_ns, time_ns) has kMinTimeNs <= t < kMaxTimeNs: a range
//     narrower than 2^63 ns (36 years before the clock's zero to 255 years after it: both
//     CLOCK_MONOTONIC and Unix time fit), so the difference of any two time stamps, of one
//     timeline or of several, fits in int64;
//   - every event has start_ns <= end_ns and end_ns - start_ns <= kMaxDurationNs (2^52 ns,
//     52 days);
//   - all time stamps of one timeline lie within kMaxTimelineSpanNs (2^53 ns, 104 days) of
//     each other, so its window, any gap and any single duration are at most 2^53 ns.
// Hence sums of up to 1024 such spans fit in int64. A sum over arbitrarily many events (the
// busy time of overlapping work, per-cause totals across ranks) can still exceed it: such
// sums need saturating or wider arithmetic.
inline constexpr int64_t kMinTimeNs = -(int64_t{1} << 60);
inline constexpr int64_t kMaxTimeNs = INT64_MAX - (int64_t{1} << 60);
inline constexpr int64_t kMaxDurationNs = int64_t{1} << 52;
inline constexpr int64_t kMaxTimelineSpanNs = int64_t{1} << 53;
// What a report adds up (its devices' windows and counts, a list's spans) stays below 2^62: the
// report reader requires it, a merge of reports refuses inputs beyond it, so that adding two such
// sums (a diff, the writers' totals) never overflows.
inline constexpr int64_t kMaxReportSum = (int64_t{1} << 62) - 1;

inline constexpr uint32_t kNoStream = 0xffffffffu;
inline constexpr uint64_t kNoCorrelation = 0;
inline constexpr uint32_t kNoCollective = 0xffffffffu;

enum class OpKind : uint8_t { kKernel, kMemcpy, kMemset };

enum class CopyKind : uint8_t { kUnknown, kHtoD, kDtoH, kDtoD, kHtoH, kPeer };

// A unit of work that ran on a GPU.
struct DeviceOp {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t correlation_id = kNoCorrelation;  // joins the host call that issued it
  uint64_t bytes = 0;                        // memcpy / memset
  StringId name = StringTable::kEmpty;
  uint32_t stream = kNoStream;
  OpKind kind = OpKind::kKernel;
  CopyKind copy_kind = CopyKind::kUnknown;
  bool pageable = false;       // memcpy from/to pageable host memory (staged by the driver)
  bool communication = false;  // NCCL (or other collective library) kernel
  uint32_t collective = kNoCollective;  // communication kernels: index into Timeline::collectives
};

// What the trace says about a collective kernel (PyTorch's record_param_comms arguments).
struct CollectiveArgs {
  StringId group = StringTable::kEmpty;  // process group name ("0")
  StringId op = StringTable::kEmpty;     // "allreduce"
  int64_t seq = -1;                      // sequence number within the group; -1: none
  int64_t bytes = -1;                    // message bytes; -1: unknown
};

// What a host CUDA API call does, for the analysis.
enum class CallCategory : uint8_t {
  kLaunch,      // issues GPU work: kernel/graph launches, memsets
  kSync,        // blocks the thread until GPU work finished
  kCopy,        // memcpy API: direction comes from its DeviceOp
  kWaitEvent,   // makes a stream wait for an event recorded on another stream
  kInit,        // creates a context or initialises the driver (cuInit, primary-context retain)
  kModuleLoad,  // loads GPU code (cuModuleLoad*, cuLibraryLoad*): after JIT compilation, too
  kAllocator,   // allocates or frees device or pinned memory (cudaMalloc, cudaFree, the VMM calls)
  kGraphCapture,  // begins or ends a stream capture, instantiates or uploads a CUDA graph
  kOther,
};

// A CUDA runtime or driver API call on a host thread.
struct HostCall {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t correlation_id = kNoCorrelation;
  uint64_t thread = 0;
  StringId name = StringTable::kEmpty;
  uint32_t stream = kNoStream;       // for syncs / wait-event, where known
  uint32_t peer_stream = kNoStream;  // for wait-event: the stream waited on, where known
  CallCategory category = CallCategory::kOther;
};

enum class RangeKind : uint8_t {
  kStep,         // a training/serving step (ProfilerStep#N, gpuidle.step, NVTX step marker)
  kData,         // the thread waits for input (DataLoader __next__, gpuidle.data)
  kFrameworkOp,  // a framework operator (PyTorch cpu_op) that may issue GPU work
  kPython,       // a Python function (PyTorch with_stack): gives file:line
  kUser,         // any other user annotation or NVTX range
  // Serving (docs/ANALYSIS.md, "Serving"): named "gpuidle.request[:id]" / "gpuidle.request_run
  // [:id]" (RequestIdOf in model/trace_names.h gives the id); they may end on another thread.
  kRequest,     // a request in flight: from its arrival to its response (gpuidle.request)
  kRequestRun,  // the part of a request the server worked on: from when it was taken up
};

// A host-side interval on one thread.
struct Range {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t thread = 0;
  StringId name = StringTable::kEmpty;
  RangeKind kind = RangeKind::kUser;
};

// A sampled host stack of one thread: in live Python processes, taken while the thread was away
// from CUDA for a long stretch (what it was doing instead: input pipeline, compilation, ...).
struct HostSample {
  int64_t time_ns = 0;
  uint64_t thread = 0;
  // Frames "file:line function", outermost first, one per line ('\n'-separated).
  StringId stack = StringTable::kEmpty;
};

// One reading of a device's state through NVML during a live collection (docs/ANALYSIS.md,
// "GPU metrics"). A figure NVML did not give is 0 (no real reading is: a clock, a limit, a link).
struct GpuMetricSample {
  int64_t time_ns = 0;  // on the timeline's clock
  int device = 0;       // the CUDA device ordinal of the timeline
  uint32_t sm_clock_mhz = 0;
  uint32_t sm_clock_max_mhz = 0;
  uint32_t memory_clock_mhz = 0;
  uint32_t memory_clock_max_mhz = 0;
  uint32_t power_mw = 0;
  uint32_t power_limit_mw = 0;  // the enforced limit
  uint32_t temperature_c = 0;
  uint32_t utilization_percent = 0;  // NVML's: share of its last period with a kernel running
  // NVML's clock-event reasons, a bit mask (GpuClockEvent below); has_clock_events: they were read.
  uint64_t clock_events = 0;
  bool has_clock_events = false;
  uint32_t pcie_generation = 0;
  uint32_t pcie_generation_max = 0;
  uint32_t pcie_width = 0;
  uint32_t pcie_width_max = 0;
  uint64_t pcie_replays = 0;  // the device's replay counter (since boot)
  uint64_t memory_used_bytes = 0;
  uint64_t memory_total_bytes = 0;
};

// NVML's clock-event reason bits (nvmlClocksEventReason*), the ones a report names.
enum GpuClockEvent : uint64_t {
  kClockEventGpuIdle = 0x1,
  kClockEventApplicationsClocks = 0x2,
  kClockEventPowerCap = 0x4,
  kClockEventHardwareSlowdown = 0x8,
  kClockEventSyncBoost = 0x10,
  kClockEventSoftwareThermal = 0x20,
  kClockEventHardwareThermal = 0x40,
  kClockEventPowerBrake = 0x80,
};

// A compute process on a device the collection used, other than the collecting one, as NVML
// listed it: when it was first and last seen, and the most memory it held.
struct GpuProcessSeen {
  int device = 0;
  int64_t pid = 0;
  uint64_t memory_bytes = 0;
  int64_t first_seen_ns = 0;
  int64_t last_seen_ns = 0;
  // Its kernels' share of the device's time per NVML's per-process samples, where NVML gave
  // them: sample times (timeline clock) at which it ran kernels.
  std::vector<int64_t> busy_sample_ns;
};

// One sample of a device's throughput by CUPTI's PM sampling during a live collection
// (docs/ANALYSIS.md, "GPU throughput"), or the counters of one CUPTI range-profiler range of a
// Kineto trace (TimelineInfo::device_times_made_up): the device's averages over
// [start_ns, end_ns). A figure that was not measured (the device does not count it) is negative.
struct GpuThroughputSample {
  int64_t start_ns = 0;  // on the timeline's clock
  int64_t end_ns = 0;
  int device = 0;                      // the CUDA device ordinal of the timeline
  float sm_active_pct = -1;            // SMs with work resident, % of the elapsed cycles
  float tensor_active_pct = -1;        // tensor pipes busy, % of their peak
  float dram_pct = -1;                 // DRAM throughput, % of its peak
  float pcie_read_bytes_per_s = -1;    // host to device over PCIe
  float pcie_write_bytes_per_s = -1;   // device to host
  float nvlink_read_bytes_per_s = -1;  // received over NVLink
  float nvlink_write_bytes_per_s = -1;
};

struct DeviceTimeline {
  int device = 0;
  std::string name;           // "NVIDIA H200", where known
  std::vector<DeviceOp> ops;  // sorted by start_ns
};

// [start_ns, end_ns]: records of activity in it may be missing (a live capture's CUPTI dropped
// them, another CUPTI client took gpuidle's buffers, the record limit was reached). The
// analysis never counts such time as idle.
struct LostRecordSpan {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t records = 0;  // lost in it as CUPTI counted them; 0 where nobody counts them
};

// What a live capture's tracing added to the host calls it timed (docs/ANALYSIS.md, "The
// program without gpuidle"): the analysis takes it out of the timeline before it looks for gaps.
// A timed launch that lasted longer than launch_floor_ns (what the same call takes untraced)
// spent the excess, up to launch_excess_max_ns (a longer one waited for the GPU's queue), in the
// tracer, and outside_permille / 1000 times as much again outside the call (CUPTI's dispatch of
// the callbacks, its interception of the untimed calls around it, the caches it evicts: a
// process whose launches CUPTI slows more is slowed more between them too); every timed call
// also paid per_call_ns before itself.
struct TracerCostModel {
  int64_t launch_floor_ns = 0;
  int64_t launch_excess_max_ns = 0;
  int64_t outside_permille = 0;
  int64_t per_call_ns = 0;
};

// Where the timeline came from, and how complete it is.
struct TimelineInfo {
  std::string source;       // "pytorch-profiler", "gpuidle"
  std::optional<int> rank;  // distributed rank, where known
  std::optional<int> world_size;
  std::vector<int> visible_devices;  // devices the process could see (used or not)
  std::vector<std::string> visible_device_names;
  // Parallel to visible_devices where known (empty otherwise): "GPU-..." ("" unknown), and
  // nvidia-smi's index (-1 unknown; from CUDA_VISIBLE_DEVICES).
  std::vector<std::string> visible_device_uuids;
  std::vector<int> visible_device_physical;
  std::optional<uint64_t> dropped_records;  // nullopt: the source does not say
  uint64_t zero_timestamp_records = 0;      // discarded, never counted as idle
  // A live capture that reached its record limit stopped collecting there: the timeline ends
  // early rather than silently losing records.
  bool record_limit_reached = false;
  std::vector<LostRecordSpan> lost_record_spans;  // sorted by start, disjoint
  // A live capture whose activity buffers another CUPTI client took (it registered its own
  // buffer callbacks after gpuidle started): how many. Said on stderr at the stop.
  uint64_t buffers_taken_by_another_client = 0;

  // Live captures (gpuidle traces): the process, and the clock. Timestamps are the collector's
  // clock (CUPTI's timestamps); adding wall_clock_offset_ns gives Unix time in nanoseconds (on
  // the H200 machine CUPTI's clock reads Unix time: the offset is about 0).
  std::optional<int64_t> pid;
  std::string host;
  std::optional<int64_t> wall_clock_offset_ns;
  // Live captures: what the tracing cost each timed call; nullopt for other sources (their
  // profiler's cost is not known) and for gpuidle traces written before it was recorded.
  std::optional<TracerCostModel> tracer_cost;

  // Why a live capture has no throughput samples though they were asked for (one line: the
  // device, driver or permissions that refused them); "" otherwise.
  std::string gpu_throughput_unavailable;
  // The device work is CUPTI range-profiler ranges, whose times are not the GPU's: Kineto spreads
  // them evenly over the profiled span (docs/TRACE_INPUTS.md, "GPU counters"). Throughput samples
  // are then the ranges' counters, one per range, not PM samples over time (those come only from
  // live captures, whose times are the GPU's).
  bool device_times_made_up = false;

  // What the producer skipped or doubts without rejecting the input, one line each (a field
  // that could not be used, with how many events it affected). The report repeats them.
  std::vector<std::string> warnings;
};

struct Timeline {
  StringTable strings;
  std::vector<DeviceTimeline> devices;      // sorted by device id
  std::vector<HostCall> calls;              // sorted by start_ns
  std::vector<Range> ranges;                // sorted by start_ns
  std::vector<HostSample> samples;          // sorted by time_ns; never widen the window
  std::vector<CollectiveArgs> collectives;  // DeviceOp::collective points here
  // Live captures with NVML: readings of the devices used, sorted by time_ns, and the other
  // processes seen on them (empty otherwise; bounded by the sampler).
  std::vector<GpuMetricSample> gpu_metrics;
  std::vector<GpuProcessSeen> gpu_processes;
  // Live captures with PM sampling (or a Kineto trace's range-profiler counters): the devices'
  // throughput samples, sorted by start_ns.
  std::vector<GpuThroughputSample> gpu_throughput;
  TimelineInfo info;

  // Drops the events that break the time invariants above (with one warning in info.warnings
  // that counts them), then sorts every sequence by start time (stable: ties keep input order).
  // Producers append in any order and call this once. Where the events span more than
  // kMaxTimelineSpanNs, those farther than half of it from the median start are dropped.
  void Finalize();

  // A copy (the string table is not copyable by accident: it can be large).
  Timeline Copy() const;

  // True if anything was recorded: a device op, a host call or a host range.
  bool HasActivity() const;

  // Linear in the number of devices: producers that add many devices keep their own index.
  DeviceTimeline& DeviceFor(int device);
  const DeviceTimeline* FindDevice(int device) const;
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_MODEL_TIMELINE_H_
