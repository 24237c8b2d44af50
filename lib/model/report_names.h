// Names of the JSON report (schema gpuidle.report/2, docs/REPORT_SCHEMA.md) and of the diff of
// two reports (gpuidle.diff/1): the schema string and every key, grouped by the object that holds
// it. One definition, so that what the writers write is what the report reader reads back; the
// Python package's mirror (bindings/python/gpuidle/_report.py) is checked against this table
// (tests/model/report_names_test.cc).
#ifndef GPUIDLE_LIB_MODEL_REPORT_NAMES_H_
#define GPUIDLE_LIB_MODEL_REPORT_NAMES_H_

#include "absl/strings/string_view.h"

namespace gpuidle::internal {

// The schema a report names in its first key, and the prefix that tells a report of any version
// from a trace. The diff's schema is public: ReportDiff::kSchema (gpuidle/diff.h).
inline constexpr absl::string_view kReportSchema = "gpuidle.report/2";
inline constexpr absl::string_view kReportSchemaPrefix = "gpuidle.report/";

// Some keys are names of the model's enums, so they are not listed here: the causes (each
// "idle_by_cause" and timeline "idle_ns"), the qualified subcauses ("idle_by_subcause") and the
// phases ("phases", and the top-level "start_up" and "wind_down").
namespace report_keys {

// --- Keys that several objects share, spelt once here.
inline constexpr absl::string_view kRank = "rank";
inline constexpr absl::string_view kDevice = "device";
inline constexpr absl::string_view kName = "name";
inline constexpr absl::string_view kStartNs = "start_ns";
inline constexpr absl::string_view kEndNs = "end_ns";
inline constexpr absl::string_view kNs = "ns";
inline constexpr absl::string_view kCount = "count";
inline constexpr absl::string_view kBytes = "bytes";
inline constexpr absl::string_view kKind = "kind";
inline constexpr absl::string_view kBusyNs = "busy_ns";
inline constexpr absl::string_view kIdleNs = "idle_ns";
inline constexpr absl::string_view kOneOffNs = "one_off_ns";
inline constexpr absl::string_view kCommWaitNs = "comm_wait_ns";
inline constexpr absl::string_view kWaitNs = "wait_ns";
inline constexpr absl::string_view kSpanNs = "span_ns";
inline constexpr absl::string_view kWindowNs = "window_ns";
inline constexpr absl::string_view kIdleByCause = "idle_by_cause";
inline constexpr absl::string_view kIdleBySubcause = "idle_by_subcause";
inline constexpr absl::string_view kCause = "cause";
inline constexpr absl::string_view kSubcause = "subcause";
inline constexpr absl::string_view kEvidence = "evidence";
inline constexpr absl::string_view kSite = "site";
inline constexpr absl::string_view kFix = "fix";
inline constexpr absl::string_view kParts = "parts";
inline constexpr absl::string_view kCollectives = "collectives";

// --- The top level, in the order the writer writes it.
inline constexpr absl::string_view kSchema = "schema";  // always the first key
inline constexpr absl::string_view kGenerator = "generator";
inline constexpr absl::string_view kSource = "source";
inline constexpr absl::string_view kInputs = "inputs";
inline constexpr absl::string_view kWindow = "window";  // kStartNs, kEndNs
inline constexpr absl::string_view kCompleteness = "completeness";
inline constexpr absl::string_view kCoverage = "coverage";
inline constexpr absl::string_view kServing = "serving";
inline constexpr absl::string_view kVisibleDeviceCount = "visible_device_count";
inline constexpr absl::string_view kUnusedDevices = "unused_devices";
inline constexpr absl::string_view kVisibleDevices = "visible_devices";
inline constexpr absl::string_view kStepSource = "step_source";
inline constexpr absl::string_view kTracerTime = "tracer_time";
inline constexpr absl::string_view kDeviceTimes = "device_times";
inline constexpr absl::string_view kWarnings = "warnings";
inline constexpr absl::string_view kRanks = "ranks";
inline constexpr absl::string_view kStragglerRank = "straggler_rank";
inline constexpr absl::string_view kStragglers = "stragglers";
inline constexpr absl::string_view kClock = "clock";
inline constexpr absl::string_view kDevices = "devices";
inline constexpr absl::string_view kStepsNotListed = "steps_not_listed";
inline constexpr absl::string_view kSteps = "steps";
inline constexpr absl::string_view kLongestGaps = "longest_gaps";
inline constexpr absl::string_view kOffenders = "offenders";
inline constexpr absl::string_view kPeriodicWork = "periodic_work";
inline constexpr absl::string_view kVerdict = "verdict";
inline constexpr absl::string_view kAdvice = "advice";
inline constexpr absl::string_view kOptions = "options";

// completeness.
inline constexpr absl::string_view kStatus = "status";
inline constexpr absl::string_view kDroppedRecords = "dropped_records";
inline constexpr absl::string_view kZeroTimestampRecords = "zero_timestamp_records";
inline constexpr absl::string_view kRecordLimitReached = "record_limit_reached";

// coverage (besides kSpanNs and kWindowNs).
inline constexpr absl::string_view kWindows = "windows";
inline constexpr absl::string_view kTracedNs = "traced_ns";
inline constexpr absl::string_view kTracedUntilNs = "traced_until_ns";
inline constexpr absl::string_view kFirstWindowNs = "first_window_ns";
inline constexpr absl::string_view kPeriodNs = "period_ns";

// serving, and its percentiles.
inline constexpr absl::string_view kRequests = "requests";
inline constexpr absl::string_view kRequestsPerS = "requests_per_s";
inline constexpr absl::string_view kLatency = "latency";
inline constexpr absl::string_view kRunKnown = "run_known";
inline constexpr absl::string_view kQueue = "queue";
inline constexpr absl::string_view kRun = "run";
inline constexpr absl::string_view kInFlightMean = "in_flight_mean";
inline constexpr absl::string_view kInFlightMax = "in_flight_max";
inline constexpr absl::string_view kBatchMean = "batch_mean";  // only where known
inline constexpr absl::string_view kP50Ns = "p50_ns";
inline constexpr absl::string_view kP90Ns = "p90_ns";
inline constexpr absl::string_view kP99Ns = "p99_ns";

// visible_devices[] (besides kRank, kDevice, kName).
inline constexpr absl::string_view kPhysicalIndex = "physical_index";
inline constexpr absl::string_view kUuid = "uuid";
inline constexpr absl::string_view kUsed = "used";

// ranks[] (besides kRank, kCollectives, kWaitNs).
inline constexpr absl::string_view kHost = "host";
inline constexpr absl::string_view kPid = "pid";
inline constexpr absl::string_view kWorldSize = "world_size";
inline constexpr absl::string_view kWallClockOffsetNs = "wall_clock_offset_ns";
inline constexpr absl::string_view kClockOffsetNs = "clock_offset_ns";
inline constexpr absl::string_view kMatched = "matched";
inline constexpr absl::string_view kArrivedLast = "arrived_last";
inline constexpr absl::string_view kLateNs = "late_ns";
inline constexpr absl::string_view kOwnCause = "own_cause";
inline constexpr absl::string_view kOwnCauseShare = "own_cause_share";

// clock.
inline constexpr absl::string_view kMethod = "method";
inline constexpr absl::string_view kHosts = "hosts";
inline constexpr absl::string_view kResidualNs = "residual_ns";
inline constexpr absl::string_view kMatchedShare = "matched_share";

// devices[] (besides the shared keys).
inline constexpr absl::string_view kSteadyStartNs = "steady_start_ns";
inline constexpr absl::string_view kSteadyEndNs = "steady_end_ns";
inline constexpr absl::string_view kPhases = "phases";
inline constexpr absl::string_view kStepCount = "step_count";
inline constexpr absl::string_view kTracerNs = "tracer_ns";
inline constexpr absl::string_view kKernelCount = "kernel_count";
inline constexpr absl::string_view kMemcpyCount = "memcpy_count";
inline constexpr absl::string_view kMemsetCount = "memset_count";
inline constexpr absl::string_view kCommNs = "comm_ns";
inline constexpr absl::string_view kExposedCommNs = "exposed_comm_ns";
inline constexpr absl::string_view kLostNs = "lost_ns";
inline constexpr absl::string_view kDemandNs = "demand_ns";  // a serving process only
inline constexpr absl::string_view kDemandBusyNs = "demand_busy_ns";
inline constexpr absl::string_view kH2dCopies = "h2d_copies";
inline constexpr absl::string_view kGraphReplays = "graph_replays";
inline constexpr absl::string_view kCollectivesNotListed = "collectives_not_listed";
inline constexpr absl::string_view kCollectiveTimings = "collective_timings";
inline constexpr absl::string_view kTimeline = "timeline";

// devices[].gpu_metrics (besides kPeriodNs): NVML's readings (docs/REPORT_SCHEMA.md); its
// other_processes[] (kPid, kMemoryBytes, kIdleSamplesBusy, kBusySamplesBusy) and findings[] (kKind,
// kWhat, kFix).
inline constexpr absl::string_view kGpuMetrics = "gpu_metrics";
inline constexpr absl::string_view kSamples = "samples";
inline constexpr absl::string_view kBusySamples = "busy_samples";
inline constexpr absl::string_view kIdleSamples = "idle_samples";
inline constexpr absl::string_view kSmClockMaxMhz = "sm_clock_max_mhz";
inline constexpr absl::string_view kSmClockMedianMhz = "sm_clock_median_mhz";
inline constexpr absl::string_view kSlowClockShare = "slow_clock_share";
inline constexpr absl::string_view kSlowClockReason = "slow_clock_reason";
inline constexpr absl::string_view kPowerMedianMw = "power_median_mw";
inline constexpr absl::string_view kPowerLimitMw = "power_limit_mw";
inline constexpr absl::string_view kTemperatureMaxC = "temperature_max_c";
inline constexpr absl::string_view kPcieGeneration = "pcie_generation";
inline constexpr absl::string_view kPcieGenerationMax = "pcie_generation_max";
inline constexpr absl::string_view kPcieWidth = "pcie_width";
inline constexpr absl::string_view kPcieWidthMax = "pcie_width_max";
inline constexpr absl::string_view kPcieReplays = "pcie_replays";
inline constexpr absl::string_view kMemoryUsedMaxBytes = "memory_used_max_bytes";
inline constexpr absl::string_view kMemoryTotalBytes = "memory_total_bytes";
inline constexpr absl::string_view kOtherProcesses = "other_processes";
inline constexpr absl::string_view kMemoryBytes = "memory_bytes";
inline constexpr absl::string_view kIdleSamplesBusy = "idle_samples_busy";
inline constexpr absl::string_view kBusySamplesBusy = "busy_samples_busy";
inline constexpr absl::string_view kFindings = "findings";
// gpu_metrics.throughput (kSamples, kPeriodNs, kBusySamples besides): CUPTI's PM samples;
// gpu_metrics.throughput_unavailable: why there are none.
inline constexpr absl::string_view kThroughput = "throughput";
inline constexpr absl::string_view kThroughputUnavailable = "throughput_unavailable";
inline constexpr absl::string_view kKernelTimeShare = "kernel_time_share";
inline constexpr absl::string_view kSmActivePct = "sm_active_pct";
inline constexpr absl::string_view kTensorActivePct = "tensor_active_pct";
inline constexpr absl::string_view kDramPct = "dram_pct";
inline constexpr absl::string_view kPcieReadBytesPerS = "pcie_read_bytes_per_s";
inline constexpr absl::string_view kPcieWriteBytesPerS = "pcie_write_bytes_per_s";
inline constexpr absl::string_view kNvlinkReadBytesPerS = "nvlink_read_bytes_per_s";
inline constexpr absl::string_view kNvlinkWriteBytesPerS = "nvlink_write_bytes_per_s";

// devices[].phases: one object per phase of kStartNs, kEndNs, kNs and kParts (the steady state's
// also kOneOffNs); parts[]: kKind, kNs, kCount, kEvidence.

// devices[].h2d_copies: one object of kCount, kBytes, kNs each.
inline constexpr absl::string_view kPageable = "pageable";
inline constexpr absl::string_view kPinned = "pinned";

// devices[].graph_replays.
inline constexpr absl::string_view kLaunches = "launches";
inline constexpr absl::string_view kKernels = "kernels";
inline constexpr absl::string_view kKernelsAlone = "kernels_alone";

// devices[].collectives[] (besides kCount, kNs, kBytes, kWaitNs).
inline constexpr absl::string_view kGroup = "group";
inline constexpr absl::string_view kOp = "op";
inline constexpr absl::string_view kExposedNs = "exposed_ns";

// devices[].collective_timings: its columns (kStartNs, kBytes, kKind and these).
inline constexpr absl::string_view kDurationNs = "duration_ns";
inline constexpr absl::string_view kSeq = "seq";

// devices[].timeline: kStartNs, kBusyNs, kIdleNs (an object of the causes' columns), kOneOffNs.
inline constexpr absl::string_view kBinNs = "bin_ns";
// ... and a serving process's requests in flight, integrated over each bin (request ns).
inline constexpr absl::string_view kInFlightNs = "in_flight_ns";
// devices[].timeline.gpu (kSmClockMaxMhz, kPowerLimitMw, the columns kSamples and these) and
// steps[].gpu (kSamples, kSmClockMedianMhz, kSmClockMaxMhz, kPowerMedianMw, kPowerLimitMw,
// kSlowClockShare and the PM figures kSmActivePct, kTensorActivePct, kDramPct): a live
// capture's readings per bin and per step.
inline constexpr absl::string_view kGpu = "gpu";
inline constexpr absl::string_view kSmClockMhz = "sm_clock_mhz";
inline constexpr absl::string_view kPowerMw = "power_mw";
inline constexpr absl::string_view kPmNs = "pm_ns";

// longest_gaps[] (besides kRank, kDevice, kStartNs, kEndNs, kCause, kSubcause, kEvidence).
inline constexpr absl::string_view kNextOp = "next_op";
inline constexpr absl::string_view kThread = "thread";
inline constexpr absl::string_view kCallSite = "call_site";

// offenders[] (besides kCause, kSubcause, kSite, kIdleNs, kCount).
inline constexpr absl::string_view kWhat = "what";

// periodic_work[] (besides kSite, kSpanNs, kIdleNs, the idle breakdown, kFix).
inline constexpr absl::string_view kActivity = "activity";
inline constexpr absl::string_view kOccurrences = "occurrences";

// verdict (besides kLostNs).
inline constexpr absl::string_view kWorthFixing = "worth_fixing";
inline constexpr absl::string_view kSteadyNs = "steady_ns";
inline constexpr absl::string_view kLostShare = "lost_share";
inline constexpr absl::string_view kThresholdShare = "threshold_share";

// advice[] (besides kCause, kSubcause, kFix, kEvidence).
inline constexpr absl::string_view kShareOfLostTime = "share_of_lost_time";
inline constexpr absl::string_view kShareOfSteadyState = "share_of_steady_state";
inline constexpr absl::string_view kGainNs = "gain_ns";
inline constexpr absl::string_view kGainPerStepNs = "gain_per_step_ns";
inline constexpr absl::string_view kGainShareOfStep = "gain_share_of_step";
inline constexpr absl::string_view kBatch = "batch";  // serving advice only
inline constexpr absl::string_view kPredictedRequestsPerS = "predicted_requests_per_s";
inline constexpr absl::string_view kPredictedLatencyNs = "predicted_latency_ns";

// options.
inline constexpr absl::string_view kLaunchGapMaxNs = "launch_gap_max_ns";
inline constexpr absl::string_view kDispatchLatencyMaxNs = "dispatch_latency_max_ns";
inline constexpr absl::string_view kDataRangePatterns = "data_range_patterns";
inline constexpr absl::string_view kSkipSteps = "skip_steps";  // only when set

// Every key above, each once: for checks of other copies of the schema against this one.
inline constexpr absl::string_view kAll[] = {
    // shared
    kRank, kDevice, kName, kStartNs, kEndNs, kNs, kCount, kBytes, kKind, kBusyNs, kIdleNs,
    kOneOffNs, kCommWaitNs, kWaitNs, kSpanNs, kWindowNs, kIdleByCause, kIdleBySubcause, kCause,
    kSubcause, kEvidence, kSite, kFix, kParts, kCollectives,
    // the top level
    kSchema, kGenerator, kSource, kInputs, kWindow, kCompleteness, kCoverage, kServing,
    kVisibleDeviceCount, kUnusedDevices, kVisibleDevices, kStepSource, kTracerTime, kDeviceTimes,
    kWarnings, kRanks, kStragglerRank, kStragglers, kClock, kDevices, kStepsNotListed, kSteps,
    kLongestGaps, kOffenders, kPeriodicWork, kVerdict, kAdvice, kOptions,
    // completeness, coverage, serving, visible_devices[], ranks[], clock
    kStatus, kDroppedRecords, kZeroTimestampRecords, kRecordLimitReached, kWindows, kTracedNs,
    kTracedUntilNs, kFirstWindowNs, kPeriodNs, kRequests, kRequestsPerS, kLatency, kRunKnown,
    kQueue, kRun, kInFlightMean, kInFlightMax, kBatchMean, kP50Ns, kP90Ns, kP99Ns, kPhysicalIndex,
    kUuid, kUsed, kHost, kPid, kWorldSize, kWallClockOffsetNs, kClockOffsetNs, kMatched,
    kArrivedLast, kLateNs, kOwnCause, kOwnCauseShare, kMethod, kHosts, kResidualNs, kMatchedShare,
    // devices[] and its objects
    kSteadyStartNs, kSteadyEndNs, kPhases, kStepCount, kTracerNs, kKernelCount, kMemcpyCount,
    kMemsetCount, kCommNs, kExposedCommNs, kLostNs, kDemandNs, kDemandBusyNs, kH2dCopies,
    kGraphReplays, kCollectivesNotListed, kCollectiveTimings, kTimeline, kPageable, kPinned,
    kLaunches, kKernels, kKernelsAlone, kGroup, kOp, kExposedNs, kDurationNs, kSeq, kBinNs,
    kInFlightNs, kGpu, kSmClockMhz, kPowerMw, kPmNs, kGpuMetrics, kSamples, kBusySamples,
    kIdleSamples, kSmClockMaxMhz, kSmClockMedianMhz, kSlowClockShare, kSlowClockReason,
    kPowerMedianMw, kPowerLimitMw, kTemperatureMaxC, kPcieGeneration, kPcieGenerationMax,
    kPcieWidth, kPcieWidthMax, kPcieReplays, kMemoryUsedMaxBytes, kMemoryTotalBytes,
    kOtherProcesses, kMemoryBytes, kIdleSamplesBusy, kBusySamplesBusy, kFindings, kThroughput,
    kThroughputUnavailable, kKernelTimeShare, kSmActivePct, kTensorActivePct, kDramPct,
    kPcieReadBytesPerS, kPcieWriteBytesPerS, kNvlinkReadBytesPerS, kNvlinkWriteBytesPerS,
    // longest_gaps[], offenders[], periodic_work[], advice[], options
    kNextOp, kThread, kCallSite, kWhat, kActivity, kOccurrences, kWorthFixing, kSteadyNs,
    kLostShare, kThresholdShare, kShareOfLostTime, kShareOfSteadyState, kGainNs, kGainPerStepNs,
    kGainShareOfStep, kBatch, kPredictedRequestsPerS, kPredictedLatencyNs, kLaunchGapMaxNs,
    kDispatchLatencyMaxNs, kDataRangePatterns, kSkipSteps};

}  // namespace report_keys

// Values of the report that its writer and reader spell: completeness.status and tracer_time.
namespace report_values {

inline constexpr absl::string_view kComplete = "complete";
inline constexpr absl::string_view kRecordsLost = "records_lost";
inline constexpr absl::string_view kUnknown = "unknown";  // the source does not say

inline constexpr absl::string_view kTakenOut = "taken_out";
inline constexpr absl::string_view kAsRecorded = "as_recorded";
inline constexpr absl::string_view kNotKnown = "not_known";

inline constexpr absl::string_view kRecorded = "recorded";
inline constexpr absl::string_view kMadeUp = "made_up";

}  // namespace report_values

// The diff of two reports writes some of the report's objects again with the report's keys (a
// run's source, inputs, step_source, completeness and warnings; a device's rank, device and name;
// cause and subcause; the start-up's parts); these are the keys only the diff has.
namespace diff_keys {

// A change of one figure: {before, after, change, relative}. "before" and "after" also name the
// two runs and each device's two sides.
inline constexpr absl::string_view kBefore = "before";
inline constexpr absl::string_view kAfter = "after";
inline constexpr absl::string_view kChange = "change";
inline constexpr absl::string_view kRelative = "relative";

// The top level (besides the report's kSchema, kGenerator, kDevices, kAdvice and kVerdict: the
// diff's verdict has other fields than the report's).
inline constexpr absl::string_view kUnit = "unit";
inline constexpr absl::string_view kCaveats = "caveats";
inline constexpr absl::string_view kSteady = "steady";
inline constexpr absl::string_view kLostByCause = "lost_by_cause";
inline constexpr absl::string_view kLostBySubcause = "lost_by_subcause";
inline constexpr absl::string_view kCommunication = "communication";
inline constexpr absl::string_view kStartUp = "start_up";
inline constexpr absl::string_view kOnlyBefore = "only_before";
inline constexpr absl::string_view kOnlyAfter = "only_after";

// before and after, the runs (besides the report's keys): "devices" is a count here, and
// "warnings" too.
inline constexpr absl::string_view kSampled = "sampled";

// verdict.
inline constexpr absl::string_view kOutcome = "outcome";
inline constexpr absl::string_view kMetric = "metric";
inline constexpr absl::string_view kMainChange = "main_change";
inline constexpr absl::string_view kWeak = "weak";
inline constexpr absl::string_view kText = "text";

// caveats[] (and comparability.reasons[]).
inline constexpr absl::string_view kCode = "code";
inline constexpr absl::string_view kMessage = "message";

// comparability (kernels_per_step has kBefore and kAfter; kernel_names those and kShared).
inline constexpr absl::string_view kComparability = "comparability";
inline constexpr absl::string_view kComparable = "comparable";
inline constexpr absl::string_view kReasons = "reasons";
inline constexpr absl::string_view kKernelsPerStep = "kernels_per_step";
inline constexpr absl::string_view kKernelNames = "kernel_names";
inline constexpr absl::string_view kShared = "shared";

// steady (besides the report's kNs, kSteps and kLostShare), and devices[] (with the report's
// kSteadyNs and kStepCount).
inline constexpr absl::string_view kMeanStepNs = "mean_step_ns";
inline constexpr absl::string_view kMedianStepNs = "median_step_ns";
inline constexpr absl::string_view kBusyShare = "busy_share";
inline constexpr absl::string_view kIdleShare = "idle_share";
inline constexpr absl::string_view kBusyPerUnitNs = "busy_per_unit_ns";
inline constexpr absl::string_view kLostPerUnitNs = "lost_per_unit_ns";

// communication.
inline constexpr absl::string_view kCommPerUnitNs = "comm_per_unit_ns";
inline constexpr absl::string_view kExposedPerUnitNs = "exposed_per_unit_ns";
inline constexpr absl::string_view kWaitPerUnitNs = "wait_per_unit_ns";

// devices[].
inline constexpr absl::string_view kCommWaitPerUnitNs = "comm_wait_per_unit_ns";
inline constexpr absl::string_view kDominantBefore = "dominant_before";
inline constexpr absl::string_view kDominantAfter = "dominant_after";

// advice[] (besides the report's kCause, kSubcause, kStatus, kFix).
inline constexpr absl::string_view kShareBefore = "share_before";
inline constexpr absl::string_view kShareAfter = "share_after";
inline constexpr absl::string_view kPredictedGainPerStepNs = "predicted_gain_per_step_ns";

// Every key above, each once.
inline constexpr absl::string_view kAll[] = {
    // a change, the top level
    kBefore, kAfter, kChange, kRelative, kUnit, kCaveats, kSteady, kLostByCause, kLostBySubcause,
    kCommunication, kStartUp, kOnlyBefore, kOnlyAfter,
    // the runs, verdict, caveats[]
    kSampled, kOutcome, kMetric, kMainChange, kWeak, kText, kCode, kMessage,
    // comparability
    kComparability, kComparable, kReasons, kKernelsPerStep, kKernelNames, kShared,
    // steady, communication, devices[], advice[]
    kMeanStepNs, kMedianStepNs, kBusyShare, kIdleShare, kBusyPerUnitNs, kLostPerUnitNs,
    kCommPerUnitNs, kExposedPerUnitNs, kWaitPerUnitNs, kCommWaitPerUnitNs, kDominantBefore,
    kDominantAfter, kShareBefore, kShareAfter, kPredictedGainPerStepNs};

}  // namespace diff_keys

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_MODEL_REPORT_NAMES_H_
