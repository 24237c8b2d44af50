// gpuidle's answer to "why was my GPU idle?", as plain C++ values.
//
//   absl::StatusOr<gpuidle::Report> report = gpuidle::AnalyzeTraceFiles({"trace.json.gz"});
//   for (const gpuidle::DeviceReport& d : report->devices) {
//     std::cout << "GPU " << d.device << " idle " << d.idle_ns / 1e6 << " ms, of which "
//               << d.idle.CauseNs(gpuidle::Cause::kSyncBound) / 1e6 << " ms sync-bound\n";
//   }
//
// Every idle nanosecond of a device has exactly one Subcause; the subcauses of a device sum to
// its idle time, which is its window minus its busy (kernel-executing) time.
#ifndef GPUIDLE_INCLUDE_GPUIDLE_REPORT_H_
#define GPUIDLE_INCLUDE_GPUIDLE_REPORT_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "gpuidle/export.h"
#include "gpuidle/options.h"

namespace gpuidle {

enum class Cause : int { kDataStarved, kLaunchBound, kSyncBound, kUnattributed };
inline constexpr int kNumCauses = 4;

enum class Subcause : int {
  kDataLoader,       // data_starved: the launching thread waited for input (a data range)
  kH2DCopy,          // data_starved: input was being copied in (slowly, e.g. pageable memory)
  kHost,             // data_starved: long host work outside CUDA, unmarked
  kLaunchOverhead,   // launch_bound: the host issued work slower than the GPU finished it
  kKernelGap,        // launch_bound: work was queued; per-kernel dispatch latency
  kRequestsWaiting,  // launch_bound: serving requests had arrived and waited to be taken up
  kHostSync,         // sync_bound: the host blocked until the GPU drained
  kDeviceWait,       // sync_bound: queued work waited on another stream's event
  kCommWait,         // sync_bound: a collective waited for peer ranks
  kCopyWait,      // sync_bound: queued work waited for a copy or memset ahead of it on its stream
  kAllocator,     // sync_bound: the host was in the memory allocator (cudaMalloc/cudaFree; a
                  // free first waits for the device)
  kOtherProcess,  // sync_bound: queued work waited while another process ran kernels on the GPU
  kUnattributed,  // no evidence
};
inline constexpr int kNumSubcauses = 13;

GPUIDLE_EXPORT Cause CauseOf(Subcause s);
GPUIDLE_EXPORT absl::string_view CauseName(Cause c);           // "data_starved"
GPUIDLE_EXPORT absl::string_view SubcauseName(Subcause s);     // "dataloader"
GPUIDLE_EXPORT std::string QualifiedSubcauseName(Subcause s);  // "data_starved.dataloader"
// Parses "data_starved.dataloader" (or "unattributed"); nullopt if unknown.
GPUIDLE_EXPORT std::optional<Subcause> ParseSubcause(absl::string_view qualified_name);

// Idle nanoseconds per subcause.
struct GPUIDLE_EXPORT IdleBreakdown {
  std::array<int64_t, kNumSubcauses> ns{};

  int64_t& operator[](Subcause s) { return ns[static_cast<int>(s)]; }
  int64_t operator[](Subcause s) const { return ns[static_cast<int>(s)]; }
  int64_t CauseNs(Cause c) const;
  int64_t TotalNs() const;
  // The subcause with the most idle time (kUnattributed when there is none).
  Subcause Dominant() const;
  IdleBreakdown& operator+=(const IdleBreakdown& other);
};

// A run has a start-up, a steady state and a wind-down (docs/ANALYSIS.md, "Phases"). The
// headline (DeviceReport::idle, steps, offenders, advice) describes the steady state; one-off
// time is reported apart, by what it was.
enum class Phase : int {
  kStartUp,   // before the first step (without steps: before the device's first kernel)
  kSteady,    // from there to the end of the last step (last kernel)
  kWindDown,  // after it: saving, teardown
};
inline constexpr int kNumPhases = 3;

// What one-off time was spent on.
enum class OneOffKind : int {
  kCudaInit,      // driver / context initialisation (cuInit, primary context, the first CUDA call)
  kCompilation,   // JIT compilation (NVRTC, Triton/Inductor, XLA): host work that ends in loading
                  // the code it made, or whose sampled stack is in a compiler
  kModuleLoad,    // loading GPU code (cuModuleLoad*, cuLibraryLoad*, a kernel's first launch)
  kFirstCall,     // the first call of an operation, far slower than its later calls (library
                  // initialisation such as cuBLAS/cuDNN handles, autotuning, first allocation)
  kWarmUpStep,    // the program's first step, far longer than the steady steps
  kSetUp,         // the rest of the start-up: building the model, loading weights, ...
  kWindDown,      // the rest of the wind-down
  kGpuBusy,       // kernels ran (in start-up or wind-down: warm-up work, autotuning)
  kRecordsLost,   // the capture lost records here (TimelineInfo::lost_record_spans): never idle
  kGraphCapture,  // capturing a CUDA graph (launches recorded, not run), instantiating it
  kNoDemand,      // serving: no request in flight (docs/ANALYSIS.md, "Serving"): idle, not lost
};
inline constexpr int kNumOneOffKinds = 11;

GPUIDLE_EXPORT absl::string_view PhaseName(Phase p);            // "start_up"
GPUIDLE_EXPORT absl::string_view OneOffKindName(OneOffKind k);  // "compilation"

// Time of one device spent on one kind of one-off work, in one phase. In start-up and
// wind-down the parts tile the phase's span (kGpuBusy is its busy time); in the steady state
// they are idle time taken out of the headline (a re-compilation, a first call).
struct OneOffTime {
  Phase phase = Phase::kStartUp;
  OneOffKind kind = OneOffKind::kSetUp;
  int64_t ns = 0;
  int64_t count = 0;     // separate stretches
  std::string evidence;  // the longest stretch's call, op or frame ("cuModuleLoadData")
};

// One kind of collective on one device: a process group's operation ("allreduce" on group "0").
// Steady state only, like the rest of DeviceReport.
struct CollectiveStats {
  std::string group;       // process group name where the trace says ("0"), else ""
  std::string op;          // "allreduce", "allgather", ... (the trace's name, else the kernel's)
  int64_t count = 0;       // kernels
  int64_t ns = 0;          // kernels executing
  int64_t exposed_ns = 0;  // ... while no other kernel executes
  std::optional<int64_t> bytes;    // message bytes summed, where the trace says
  std::optional<int64_t> wait_ns;  // part of ns spent waiting for peers; set by a merge of ranks
};

// One collective kernel of a device, as the merge of ranks needs it (docs/ANALYSIS.md, "Many
// ranks"). Rows of the whole window, start-up included, sorted by start.
struct CollectiveTiming {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t seq = -1;    // the trace's sequence number within the group; -1: the trace has none
  int64_t bytes = -1;  // message bytes; -1: unknown
  int32_t kind = 0;    // index into DeviceReport::collectives
};

// Copies of one kind in the steady state: what a pinned-memory fix predicts its gain from.
struct CopyTotals {
  int64_t count = 0;
  int64_t bytes = 0;
  int64_t ns = 0;  // the copies executing, summed
};

// The steady state's kernels by how the host issued them: replayed from CUDA graphs (one
// cudaGraphLaunch issues all of a graph's kernels) or launched one at a time. A step that already
// replays graphs needs other advice than "capture it in a CUDA graph" (analysis/advice.cc).
struct GraphReplays {
  int64_t launches = 0;       // graph launches that issued kernels
  int64_t kernels = 0;        // the kernels they issued
  int64_t kernels_alone = 0;  // the other kernels (launched one at a time, or of unknown origin)
};

// A device's whole window in a bounded number of equal bins, for plots (the HTML report's
// timeline; docs/REPORT_SCHEMA.md, "timeline"). Per bin: the time kernels ran, the steady-state
// idle time by cause, and one-off time (start-up and wind-down apart from their kernels, one-off
// work inside the steady state, records lost). Whatever a bin holds beyond those was not traced
// (between the windows of a sampled collection) or lies past the window's end. Collectives that
// wait for peers are busy here (a merge of ranks knows their wait per device, not per bin).
struct TimelineSummary {
  static constexpr int kBins = 600;  // at most, per device (fewer in a merge of many devices)
  struct Bin {
    int64_t busy_ns = 0;
    std::array<int64_t, kNumCauses> idle_ns{};  // by Cause
    int64_t one_off_ns = 0;
  };
  int64_t start_ns = 0;  // the first bin's start, on the device's (its rank's) clock
  int64_t bin_ns = 0;    // every bin's length; 0: no summary (a report of an older gpuidle)
  std::vector<Bin> bins;
  // What a live capture read of the device in each bin (NVML, CUPTI's PM sampling), for the HTML
  // report's metric tracks: means over the bin, idle time included (the bins above say how much
  // of it was busy). The weights are kept so that bins merged later keep true means.
  struct GpuBin {
    int64_t samples = 0;        // NVML readings in the bin
    uint32_t sm_clock_mhz = 0;  // their mean; 0 without readings
    uint32_t power_mw = 0;
    int64_t pm_ns = 0;          // PM samples' time in the bin: the weight of their figures
    double sm_active_pct = -1;  // PM sampling, time-weighted; negative: not measured
    double tensor_active_pct = -1;
    double dram_pct = -1;
  };
  std::vector<GpuBin> gpu;        // one per bin, or empty: no readings in the window
  uint32_t sm_clock_max_mhz = 0;  // the readings' maximum clock and power limit: the tracks' scales
  uint32_t power_limit_mw = 0;
  // Requests in flight (a serving process's marked requests), integrated over each bin: request
  // nanoseconds, so that merged bins add exactly like the columns above; a bin's mean in flight
  // is this over its traced time (busy + idle + one-off). One per bin, or empty: no requests.
  std::vector<int64_t> in_flight_ns;
};

// CUPTI's PM sampling of a device's throughput (docs/ANALYSIS.md, "GPU throughput"): each
// figure is its rate while kernels of this process ran; negative where not measured. (Outside
// GpuMetrics, like StepGpu outside StepReport: clang cannot construct a nested struct with
// member initialisers in a std::optional member of the struct that encloses it.)
struct GpuThroughput {
  int64_t samples = 0;           // in the steady state
  int64_t period_ns = 0;         // the median sample length
  double kernel_time_share = 0;  // of the samples' time, how much a kernel ran
  int64_t busy_samples = 0;      // samples kernels ran at least half of: the figures' basis
  double sm_active_pct = -1;
  double tensor_active_pct = -1;
  double dram_pct = -1;
  double pcie_read_bytes_per_s = -1;
  double pcie_write_bytes_per_s = -1;
  double nvlink_read_bytes_per_s = -1;
  double nvlink_write_bytes_per_s = -1;
  // "pm_sampling": CUPTI's PM samples over time. "range_profiler": the counters of a Kineto
  // trace's CUPTI range-profiler ranges, one sample per kernel or range, each weighing the same
  // (Kineto made their times up); a merge of both names the side with more samples.
  std::string source = "pm_sampling";
};

// What NVML showed of a device during a live collection's steady state (docs/ANALYSIS.md, "GPU
// metrics"): its readings while it ran kernels, the other processes on it, and what they mean.
struct GpuMetrics {
  int64_t samples = 0;       // readings in the steady state
  int64_t busy_samples = 0;  // ... taken while a kernel of this process ran
  int64_t period_ns = 0;     // the median time between readings
  uint32_t sm_clock_max_mhz = 0;
  uint32_t sm_clock_median_mhz = 0;  // over the busy readings
  double slow_clock_share = 0;       // busy readings with the SM clock below 90% of its maximum
  // The reason NVML gave most often for those: "power_cap", "thermal", "hardware_slowdown",
  // "power_brake", "applications_clocks", "sync_boost"; "" where it gave none.
  std::string slow_clock_reason;
  uint32_t power_median_mw = 0;  // over the busy readings
  uint32_t power_limit_mw = 0;
  uint32_t temperature_max_c = 0;
  // The PCIe link at its widest while busy (a link slows down when idle), and its maximum.
  uint32_t pcie_generation = 0;
  uint32_t pcie_generation_max = 0;
  uint32_t pcie_width = 0;
  uint32_t pcie_width_max = 0;
  uint64_t pcie_replays = 0;  // during the collection
  uint64_t memory_used_max_bytes = 0;
  uint64_t memory_total_bytes = 0;
  struct OtherProcess {
    int64_t pid = 0;
    uint64_t memory_bytes = 0;
    int64_t idle_samples_busy = 0;  // this device's idle readings during which it ran kernels
    int64_t busy_samples_busy = 0;  // ... busy readings (the GPU took turns between the two)
  };
  std::vector<OtherProcess> other_processes;  // most memory first
  int64_t idle_samples = 0;                   // readings while this device was idle
  using Throughput = GpuThroughput;
  std::optional<Throughput> throughput;  // absent without PM samples
  // Why there are none though they were asked for (device, driver or permissions); "" otherwise.
  std::string throughput_unavailable;
  // What the readings mean, most important first: kind ("clocks", "memory_bound", "sm_underused",
  // "pcie_link", "pcie_replays", "other_process"), the finding and its fix, for a person.
  struct Finding {
    std::string kind;
    std::string text;
    std::string fix;
  };
  std::vector<Finding> findings;
};

struct DeviceReport {
  std::optional<int> rank;  // distributed rank of the process, where known
  int device = 0;
  std::string name;  // "NVIDIA H200", where known
  int64_t window_start_ns = 0;
  int64_t window_end_ns = 0;
  int64_t window_ns = 0;
  // The steady state: [steady_start_ns, steady_end_ns). Start-up before it, wind-down after.
  int64_t steady_start_ns = 0;
  int64_t steady_end_ns = 0;
  // Steady state only: busy_ns + idle_ns + (steady one-off idle) == steady_end_ns -
  // steady_start_ns.
  int64_t busy_ns = 0;  // at least one kernel executing (NCCL kernels included)
  int64_t idle_ns = 0;  // == idle.TotalNs()
  IdleBreakdown idle;
  std::vector<OneOffTime> one_off;  // by phase, then most time first
  // Serving (Report::serving): the steady state's time with a request in flight, and the busy
  // time within it (the busy share while there is demand); nullopt where no request was marked.
  std::optional<int64_t> demand_ns;
  int64_t demand_busy_ns = 0;
  // Set in a report aggregated over the windows of a sampled collection (Report::coverage):
  // each phase's time summed over the windows (the start-up of a device's first window, the
  // steady states of all, the wind-down of its last), which PhaseNs then returns; the spans
  // above run from the first window to the last, gaps between windows included.
  std::optional<std::array<int64_t, kNumPhases>> phase_ns;
  int64_t PhaseNs(Phase p) const;  // the span of a phase: start-up, steady state, wind-down
  int64_t SteadyOneOffNs() const;  // idle time of one-off work inside the steady state
  int64_t step_count = 0;          // steady-state steps (Report::steps may list fewer of them)
  // gpuidle's own cost taken out of the steady state's idle time (Report::tracer_time), so that
  // busy_ns + idle_ns describe the program without gpuidle; 0 when nothing was taken out.
  int64_t tracer_ns = 0;
  int64_t kernel_count = 0;
  int64_t memcpy_count = 0;
  int64_t memset_count = 0;
  int64_t comm_ns = 0;                  // NCCL kernels executing
  int64_t exposed_comm_ns = 0;          // ... while no other kernel executes
  std::optional<int64_t> comm_wait_ns;  // part of comm_ns spent waiting for peers; needs all ranks
  CopyTotals h2d_pageable;     // host-to-device copies from pageable memory (staged by the driver)
  CopyTotals h2d_pinned;       // ... from pinned memory
  GraphReplays graph_replays;  // steady state
  std::vector<CollectiveStats> collectives;  // per kind, most time first
  // The collectives, for a later merge with the other ranks: at most kMaxCollectiveRows, a
  // contiguous stretch (the steady state's first ones, then start-up's last ones if there is
  // room), so that the ranks of a job keep the same stretch of time; collectives_not_listed
  // counts the rest (the merge then scales the waits of the rows to the steady state's).
  static constexpr size_t kMaxCollectiveRows = 4096;
  std::vector<CollectiveTiming> collective_timings;
  int64_t collectives_not_listed = 0;
  TimelineSummary timeline;               // the whole window (start-up and wind-down too), binned
  std::optional<GpuMetrics> gpu_metrics;  // live captures that read NVML or PM samples; else none

  // Lost time in the steady state: idle, plus collectives waiting for peers (busy by the
  // definition of utilisation, yet no work done).
  int64_t LostNs() const { return idle_ns + comm_wait_ns.value_or(0); }
};

// A device's readings within a step, where a live capture took them (NVML, PM sampling):
// over the step's busy readings; a figure without readings is 0 (clocks, power) or negative.
struct StepGpu {
  int64_t samples = 0;  // NVML readings in the step
  uint32_t sm_clock_median_mhz = 0;
  uint32_t sm_clock_max_mhz = 0;
  uint32_t power_median_mw = 0;
  uint32_t power_limit_mw = 0;
  double slow_clock_share = 0;  // busy readings below 90% of the maximum clock
  double sm_active_pct = -1;    // PM sampling, while busy
  double tensor_active_pct = -1;
  double dram_pct = -1;
};

// One step (ProfilerStep#N, gpuidle step marker) on one device. A step's host range is cut
// onto the device timeline as described in docs/ANALYSIS.md.
struct StepReport {
  std::optional<int> rank;
  int device = 0;
  std::string name;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t busy_ns = 0;
  IdleBreakdown idle;
  int64_t one_off_ns = 0;  // idle time of one-off work inside the step (a re-compilation)
  std::optional<int64_t> comm_wait_ns;  // collectives waiting for peers in it; set by a merge
  using Gpu = StepGpu;
  std::optional<Gpu> gpu;
};

// A contiguous idle interval of one device with one cause.
struct GapRecord {
  std::optional<int> rank;
  int device = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  Subcause subcause = Subcause::kUnattributed;
  std::string next_op;    // the kernel that ended the gap ("" at the end of the window)
  uint64_t thread = 0;    // the host thread that launched it (0 if unknown)
  std::string evidence;   // API call, marker or collective that explains the gap
  std::string call_site;  // framework op / Python file:line, where captured
};

// A place in the program that caused much idle time: a sync call site, a kernel launched too
// late, a data range.
struct Offender {
  Subcause subcause = Subcause::kUnattributed;
  std::string what;  // the API call, kernel or range ("cudaStreamSynchronize")
  std::string site;  // where: framework op and Python frame ("aten::item at train.py(42): step")
  int64_t idle_ns = 0;
  int64_t count = 0;  // gaps it caused
};

// Host work that recurs in the steady state — checkpointing, evaluation, logging — counted once
// whatever causes its idle time fell under (docs/ANALYSIS.md, "Periodic work"): one program line,
// each of its occurrences, and how its idle time splits. The causes above still hold that time.
struct PeriodicWork {
  std::string activity;  // "checkpointing", "evaluation" or "logging"
  std::string site;      // the program's line that does it ("train.py:57 in main")
  int64_t occurrences = 0;
  int64_t span_ns = 0;  // the occurrences' own lengths, summed (first to last idle piece each)
  int64_t idle_ns = 0;  // the GPU's idle time inside them, all devices
  IdleBreakdown idle;   // the same by subcause
  std::string fix;      // what to do about it
};

// Lost time is idle time plus the time collectives spent waiting for peer ranks (busy by the
// definition of utilisation, yet no work done).
struct Advice {
  Subcause subcause = Subcause::kUnattributed;
  double share_of_lost_time = 0;  // 0..1, over all devices
  std::string fix;                // concrete for the evidence seen
  // The predicted gain (docs/ANALYSIS.md, "Predicted gains"): the steady-state time the fix can
  // recover, from the evidence (the host-sync wait that would overlap, the DataLoader wait
  // beyond the step's GPU time, ...).
  int64_t gain_ns = 0;                       // summed over the devices' steady states
  std::optional<int64_t> gain_per_step_ns;   // on the device that gains most per step, with steps
  std::optional<double> gain_share_of_step;  // that gain over that device's mean step time, 0..1
  std::string evidence;                      // what the prediction rests on, for a person
  double share_of_steady_state = 0;          // 0..1: its lost time over the devices' steady states
  // Serving, for launch_bound.requests_waiting (docs/ANALYSIS.md, "Serving"): batching this many
  // requests, the predicted requests per second and latency (arrival to end).
  std::optional<int64_t> batch;
  std::optional<double> predicted_requests_per_s;
  std::optional<int64_t> predicted_latency_ns;
};

// Whether the steady state lost enough time to be worth fixing: below
// AnalysisOptions::worth_fixing_min_share of it the report gives no advice and says so, with the
// figure (docs/ANALYSIS.md, "Nothing worth fixing").
struct Verdict {
  bool worth_fixing = true;
  int64_t lost_ns = 0;    // idle plus waiting for peers, summed over the devices' steady states
  int64_t steady_ns = 0;  // the devices' steady states, summed
  double threshold_share = 0;
  double LostShare() const {
    return steady_ns > 0 ? static_cast<double>(lost_ns) / static_cast<double>(steady_ns) : 0;
  }
};

// A sampled collection (ProfilerOptions::sample_window_ns) traces windows of the run and
// aggregates them: which part of the run the report covers.
struct Coverage {
  int64_t windows = 0;          // traced windows
  int64_t traced_ns = 0;        // the windows' lengths, summed
  int64_t span_ns = 0;          // from the first window's start to the run's end (the stop), or to
                                // the end of the last window where that is later
  int64_t traced_until_ns = 0;  // from the first window's start to the last window's end
  // The plan the windows followed, where known (0: not known, e.g. a report read from before
  // issue 28): the first window's length, then window_ns of every period_ns.
  int64_t first_window_ns = 0;
  int64_t window_ns = 0;
  int64_t period_ns = 0;
};

// A device the process could see, used or not.
struct VisibleDevice {
  std::optional<int> rank;
  int device = 0;                     // the CUDA device ordinal the process saw
  std::optional<int> physical_index;  // nvidia-smi's index, where CUDA_VISIBLE_DEVICES says
  std::string uuid;                   // "GPU-5e3c...", where known
  std::string name;
  bool used = false;
};

// One process of a job, and (after a merge of ranks) how it fared against the others.
struct RankReport {
  int rank = 0;
  std::string host;  // "" where the input does not say
  std::optional<int64_t> pid;
  std::optional<int> world_size;
  // Live captures: timestamps + this = Unix time in ns (a prior for aligning hosts' clocks).
  std::optional<int64_t> wall_clock_offset_ns;
  // Set by a merge of ranks (docs/ANALYSIS.md, "Many ranks"):
  int64_t clock_offset_ns = 0;  // added to this rank's timestamps to put it on the job's clock
  int64_t collectives = 0;      // its collectives in the steady state
  int64_t matched = 0;          // ... matched with those of every other rank
  int64_t arrived_last = 0;     // ... that it started last
  // How long the others waited for this rank alone, summed: at each collective it started last,
  // its start minus the second latest start.
  int64_t late_ns = 0;
  int64_t wait_ns = 0;  // its own collectives' wait for peers
  // Its own dominant cause: the subcause with most of its lost time, and that share (0..1).
  std::optional<Subcause> own_cause;
  double own_cause_share = 0;
};

// How the ranks' clocks were put on one (docs/ANALYSIS.md, "Clocks").
struct ClockAlignment {
  // "one clock" (ranks of one host, or ends that already agree), "aligned" (offsets estimated
  // from the collective ends), "" when there was nothing to align.
  std::string method;
  int64_t hosts = 0;         // clock domains
  int64_t residual_ns = 0;   // median |end difference| of matched collectives, after it
  double matched_share = 0;  // collectives matched across all ranks / collectives
};

// A serving process's requests (docs/ANALYSIS.md, "Serving"), as the program marked them
// (gpuidle.request, gpuidle::RequestRange, the automatic marks, ranges named gpuidle.request).
struct Serving {
  struct Percentiles {
    int64_t p50_ns = 0;
    int64_t p90_ns = 0;
    int64_t p99_ns = 0;
  };
  int64_t requests = 0;       // in flight during the steady state: the figures below are theirs
  double requests_per_s = 0;  // those over the steady state
  Percentiles latency;        // arrival to end
  // Of the requests whose start of work is known (run_known): arrival to it, and it to the end.
  int64_t run_known = 0;
  Percentiles queue;
  Percentiles run;
  double in_flight_mean = 0;  // requests in flight, time-weighted over the steady state
  int64_t in_flight_max = 0;
  // Requests taken up per step where steps are marked (a batching server's batch): their mean.
  std::optional<double> batch_mean;
};

struct GPUIDLE_EXPORT Report {
  std::string source;  // "pytorch-profiler", "gpuidle"
  std::vector<std::string> inputs;
  int64_t window_start_ns = 0;
  int64_t window_end_ns = 0;
  std::vector<DeviceReport> devices;           // devices that ran work
  int visible_device_count = 0;                // per process, where known (0: unknown)
  std::vector<int> unused_devices;             // visible but never used
  std::vector<VisibleDevice> visible_devices;  // where the input lists them
  std::vector<RankReport> ranks;               // the processes, where known; by rank
  // After a merge of ranks: the rank that made the others wait most, if it made them wait
  // significantly (docs/ANALYSIS.md, "The straggler"); nullopt when the ranks arrive together.
  std::optional<int> straggler_rank;
  std::vector<int> stragglers;  // every rank that did, most late first
  ClockAlignment clock;
  // Steady-state steps, at most kMaxStepRows in all (the first of each device); the figures of
  // the devices cover every step.
  static constexpr size_t kMaxStepRows = 10'000;
  std::vector<StepReport> steps;
  uint64_t steps_not_listed = 0;
  // Where the steps came from: "ProfilerStep" (torch.profiler), "gpuidle.step", "optimizer.step"
  // (gpuidle's hook in unchanged Python programs), "nvtx" ... ; "" when the run has none.
  std::string step_source;
  // What became of gpuidle's own cost in a live capture: "taken_out" (the figures describe the
  // program without gpuidle; DeviceReport::tracer_ns says how much), "as_recorded"
  // (AnalysisOptions::as_recorded), "not_known" (a trace of another profiler, or of a gpuidle
  // that did not record its cost).
  std::string tracer_time = "not_known";
  // "recorded": the device work's times are the GPU's. "made_up": an input's device work is
  // CUPTI range-profiler ranges (torch.profiler's profiler_metrics), which Kineto spreads evenly
  // over the profiled span: the busy and idle time say nothing of the GPU (docs/TRACE_INPUTS.md,
  // "GPU counters").
  std::string device_times = "recorded";
  // Warnings about the input that did not stop the analysis (fields skipped, ranks missing).
  std::vector<std::string> warnings;
  std::vector<GapRecord> longest_gaps;      // longest first
  std::vector<Offender> offenders;          // most idle first
  std::vector<PeriodicWork> periodic_work;  // most idle first
  std::vector<Advice> advice;               // most idle first
  std::optional<Verdict> verdict;           // absent without a steady state (or in old reports)
  std::optional<uint64_t> dropped_records;  // nullopt: the source does not say
  uint64_t zero_timestamp_records = 0;
  // A live capture reached its record limit (GPUIDLE_MAX_RECORDS) and stopped collecting: the
  // report covers the time until then.
  bool record_limit_reached = false;
  // Set for a sampled collection: the report aggregates its windows (the figures of the devices
  // and steps are sums over the windows; the gaps and offenders are the longest of any window).
  std::optional<Coverage> coverage;
  // A process that marked requests: their rate, latency and concurrency; nullopt otherwise.
  std::optional<Serving> serving;
  // The options of the analysis that made this report (of the merging analysis, for ranks
  // merged into one report). The writers print these thresholds, so that a report formatted
  // later can only show the ones it was analysed with.
  AnalysisOptions options;

  IdleBreakdown TotalIdle() const;
};

}  // namespace gpuidle

#endif  // GPUIDLE_INCLUDE_GPUIDLE_REPORT_H_
