// Names that trace writers and readers share: the gpuidle trace format's version string, the
// spellings of the model's enums in trace args, and the rule that turns a host range's name
// into a range kind. One definition, so that what the writer writes is what the reader reads
// (docs/TRACE_FORMAT.md).
#ifndef GPUIDLE_LIB_MODEL_TRACE_NAMES_H_
#define GPUIDLE_LIB_MODEL_TRACE_NAMES_H_

#include <cstdint>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// The "format" of a gpuidle trace's "gpuidle" object. /2 added host stack samples, which the
// analysis uses; /1 traces (no samples) read as before. Readers reject any other value.
inline constexpr char kGpuidleTraceFormat[] = "gpuidle.trace/2";
inline constexpr char kGpuidleTraceFormatV1[] = "gpuidle.trace/1";

// --- The trace vocabulary: every key and category name that the Kineto reader matches and the
// gpuidle trace writer emits. The reader matches categories in any case.

// Top-level keys of a trace file.
inline constexpr absl::string_view kTraceEventsKey = "traceEvents";
inline constexpr absl::string_view kDevicePropertiesKey = "deviceProperties";
inline constexpr absl::string_view kDistributedInfoKey = "distributedInfo";
inline constexpr absl::string_view kBaseTimeKey = "baseTimeNanoseconds";
inline constexpr absl::string_view kGpuidleKey = "gpuidle";  // gpuidle traces' own metadata

// Keys inside deviceProperties entries and distributedInfo.
inline constexpr absl::string_view kDeviceIdKey = "id";
inline constexpr absl::string_view kDeviceNameKey = "name";
inline constexpr absl::string_view kRankKey = "rank";
inline constexpr absl::string_view kWorldSizeKey = "world_size";
// deviceProperties keys of gpuidle traces (Kineto writes neither): the device's UUID as
// nvidia-smi prints it ("GPU-..."), and its nvidia-smi index (TimelineInfo).
inline constexpr absl::string_view kDeviceUuidKey = "uuid";
inline constexpr absl::string_view kDevicePhysicalIndexKey = "gpuidle_physical_index";

// Keys of the "gpuidle" object (besides kRankKey and kWorldSizeKey).
inline constexpr absl::string_view kFormatKey = "format";
inline constexpr absl::string_view kPidInfoKey = "pid";
inline constexpr absl::string_view kHostKey = "host";
inline constexpr absl::string_view kDroppedRecordsKey = "dropped_records";
inline constexpr absl::string_view kZeroTimestampRecordsKey = "zero_timestamp_records";
inline constexpr absl::string_view kRecordLimitReachedKey = "record_limit_reached";
inline constexpr absl::string_view kWallClockOffsetKey = "wall_clock_offset_ns";
// TracerCostModel (model/timeline.h): what the tracing cost each timed call.
inline constexpr absl::string_view kTracerLaunchFloorKey = "tracer_launch_floor_ns";
inline constexpr absl::string_view kTracerLaunchExcessMaxKey = "tracer_launch_excess_max_ns";
inline constexpr absl::string_view kTracerOutsidePermilleKey = "tracer_outside_permille";
inline constexpr absl::string_view kTracerPerCallKey = "tracer_per_call_ns";
// A live capture's device readings, as columns (model/gpu_reading_columns.h): NVML's readings
// (Timeline::gpu_metrics), the other processes seen (gpu_processes), PM sampling's throughput
// (gpu_throughput), and why PM sampling was refused (TimelineInfo::gpu_throughput_unavailable).
inline constexpr absl::string_view kGpuMetricsInfoKey = "gpu_metrics";
inline constexpr absl::string_view kGpuProcessesInfoKey = "gpu_processes";
inline constexpr absl::string_view kGpuThroughputInfoKey = "gpu_throughput";
inline constexpr absl::string_view kGpuThroughputUnavailableInfoKey = "gpu_throughput_unavailable";
// Where a report's throughput figures came from (GpuThroughput's "source"): PM sampling over time,
// or a range profiler's counters per range (TimelineInfo::device_times_made_up).
inline constexpr absl::string_view kThroughputSourcePmSampling = "pm_sampling";
inline constexpr absl::string_view kThroughputSourceRangeProfiler = "range_profiler";
// TimelineInfo::device_times_made_up, in a gpuidle trace written from range-profiler ranges.
inline constexpr absl::string_view kDeviceTimesMadeUpInfoKey = "device_times_made_up";

// The fields of an event that readers keep.
inline constexpr absl::string_view kPhField = "ph";
inline constexpr absl::string_view kCatField = "cat";
inline constexpr absl::string_view kNameField = "name";
inline constexpr absl::string_view kPidField = "pid";
inline constexpr absl::string_view kTidField = "tid";
inline constexpr absl::string_view kTsField = "ts";
inline constexpr absl::string_view kDurField = "dur";
inline constexpr absl::string_view kArgsField = "args";

// Event args that readers keep: Kineto's, then gpuidle's, which override what an event's
// category and name imply.
inline constexpr absl::string_view kCorrelationArg = "correlation";
inline constexpr absl::string_view kDeviceArg = "device";
inline constexpr absl::string_view kStreamArg = "stream";
inline constexpr absl::string_view kBytesArg = "bytes";
inline constexpr absl::string_view kWaitOnStreamArg = "wait_on_stream";
inline constexpr absl::string_view kWaitOnRecordCorrelationArg =
    "wait_on_cuda_event_record_corr_id";
inline constexpr absl::string_view kStackArg = "stack";  // gpuidle host samples
// PyTorch's collective args (ParamCommsUtils, libkineto): on the CPU op record_param_comms, and
// copied by recent releases onto the NCCL kernels it launched, which share its "External id".
// Not "Sequence number": that is autograd's, on every cpu_op.
inline constexpr absl::string_view kExternalIdArg = "External id";
inline constexpr absl::string_view kCollectiveNameArg = "Collective name";  // "allreduce"
inline constexpr absl::string_view kInNelemsArg = "In msg nelems";
inline constexpr absl::string_view kOutNelemsArg = "Out msg nelems";
inline constexpr absl::string_view kDtypeArg = "dtype";                   // "Float": see DtypeBytes
inline constexpr absl::string_view kGroupNameArg = "Process Group Name";  // "0"
inline constexpr absl::string_view kSeqArg = "Seq";  // the collective's number in its group
inline constexpr absl::string_view kGpuidleKindArg = "gpuidle_kind";
inline constexpr absl::string_view kGpuidleCategoryArg = "gpuidle_category";
inline constexpr absl::string_view kGpuidleCopyKindArg = "gpuidle_copy_kind";
inline constexpr absl::string_view kGpuidlePageableArg = "gpuidle_pageable";
inline constexpr absl::string_view kGpuidleCommunicationArg = "gpuidle_communication";
inline constexpr absl::string_view kGpuidleThreadArg = "gpuidle_thread";

// The CPU op whose args describe the collective it launches.
inline constexpr absl::string_view kParamCommsName = "record_param_comms";
// The dtype gpuidle traces write with message sizes in bytes ("In msg nelems" = bytes).
inline constexpr absl::string_view kByteDtype = "Byte";

// Event categories, as Kineto writes them today.
inline constexpr absl::string_view kKernelCategory = "kernel";
inline constexpr absl::string_view kMemcpyCategory = "gpu_memcpy";
inline constexpr absl::string_view kMemsetCategory = "gpu_memset";
inline constexpr absl::string_view kProfilerRangeCategory = "cuda_profiler_range";
inline constexpr absl::string_view kRuntimeCategory = "cuda_runtime";
inline constexpr absl::string_view kDriverCategory = "cuda_driver";
inline constexpr absl::string_view kCudaSyncCategory = "cuda_sync";
inline constexpr absl::string_view kCudaEventCategory = "cuda_event";
inline constexpr absl::string_view kCpuOpCategory = "cpu_op";
inline constexpr absl::string_view kUserAnnotationCategory = "user_annotation";
inline constexpr absl::string_view kPythonFunctionCategory = "python_function";
// PyTorch 1.8's other spellings ("Kernel" is kKernelCategory; readers match in any case).
inline constexpr absl::string_view kLegacyMemcpyCategory = "memcpy";
inline constexpr absl::string_view kLegacyMemsetCategory = "memset";
inline constexpr absl::string_view kLegacyRuntimeCategory = "runtime";
inline constexpr absl::string_view kLegacyDriverCategory = "driver";
inline constexpr absl::string_view kLegacyCpuOpCategory = "operator";
inline constexpr absl::string_view kLegacyPythonCategory = "python";
// gpuidle's own: the instant events that carry host stack samples (Timeline::samples), and the
// slices that draw a report's gaps (readers ignore them).
inline constexpr absl::string_view kHostSampleCategory = "gpuidle_host_sample";
inline constexpr absl::string_view kGapCategory = "gpuidle_gap";
// Flow arrows from a CUDA call to the GPU work it issued, under the category and name that
// Kineto gives them ("ph" "s" on the call, "f" on the op); readers ignore them.
inline constexpr absl::string_view kFlowCategory = "ac2g";
// Counter events ("ph": "C") that draw the device readings as tracks in Perfetto UI; readers
// ignore them (the "gpuidle" object carries the readings themselves).
inline constexpr absl::string_view kCounterCategory = "gpuidle_counter";
inline constexpr absl::string_view kCounterPhase = "C";

// Event phases: complete events, and instants (either case).
inline constexpr absl::string_view kCompletePhase = "X";
// The category of torch.profiler's own span ("PyTorch Profiler (0)"): what it recorded.
inline constexpr absl::string_view kProfilerSpanCategory = "Trace";
inline constexpr absl::string_view kInstantPhase = "i";
inline constexpr absl::string_view kInstantPhaseUpper = "I";

inline absl::string_view RangeKindName(RangeKind k) {
  switch (k) {
    case RangeKind::kStep:
      return "step";
    case RangeKind::kData:
      return "data";
    case RangeKind::kFrameworkOp:
      return "framework_op";
    case RangeKind::kPython:
      return "python";
    case RangeKind::kUser:
      return "user";
    case RangeKind::kRequest:
      return "request";
    case RangeKind::kRequestRun:
      return "request_run";
  }
  return "user";
}

inline std::optional<RangeKind> ParseRangeKind(absl::string_view s) {
  for (RangeKind k :
       {RangeKind::kStep, RangeKind::kData, RangeKind::kFrameworkOp, RangeKind::kPython,
        RangeKind::kUser, RangeKind::kRequest, RangeKind::kRequestRun}) {
    if (s == RangeKindName(k)) return k;
  }
  return std::nullopt;
}

inline absl::string_view CallCategoryName(CallCategory c) {
  switch (c) {
    case CallCategory::kLaunch:
      return "launch";
    case CallCategory::kSync:
      return "sync";
    case CallCategory::kCopy:
      return "copy";
    case CallCategory::kWaitEvent:
      return "wait_event";
    case CallCategory::kInit:
      return "init";
    case CallCategory::kModuleLoad:
      return "module_load";
    case CallCategory::kAllocator:
      return "allocator";
    case CallCategory::kGraphCapture:
      return "graph_capture";
    case CallCategory::kOther:
      return "other";
  }
  return "other";
}

inline std::optional<CallCategory> ParseCallCategory(absl::string_view s) {
  for (CallCategory c :
       {CallCategory::kLaunch, CallCategory::kSync, CallCategory::kCopy, CallCategory::kWaitEvent,
        CallCategory::kInit, CallCategory::kModuleLoad, CallCategory::kAllocator,
        CallCategory::kGraphCapture, CallCategory::kOther}) {
    if (s == CallCategoryName(c)) return c;
  }
  return std::nullopt;
}

// CUPTI's spellings, as in memcpy names ("Memcpy HtoD (Pageable -> Device)").
inline absl::string_view CopyKindName(CopyKind k) {
  switch (k) {
    case CopyKind::kUnknown:
      return "unknown";
    case CopyKind::kHtoD:
      return "HtoD";
    case CopyKind::kDtoH:
      return "DtoH";
    case CopyKind::kDtoD:
      return "DtoD";
    case CopyKind::kHtoH:
      return "HtoH";
    case CopyKind::kPeer:
      return "PtoP";
  }
  return "unknown";
}

inline std::optional<CopyKind> ParseCopyKind(absl::string_view s) {
  for (CopyKind k : {CopyKind::kUnknown, CopyKind::kHtoD, CopyKind::kDtoH, CopyKind::kDtoD,
                     CopyKind::kHtoH, CopyKind::kPeer}) {
    if (s == CopyKindName(k)) return k;
  }
  return std::nullopt;
}

// The bytes of one element of a PyTorch dtype as traces spell it (c10::toString(ScalarType):
// "Float", "BFloat16", "Long", ...), or -1 for one this table does not know (sub-byte types
// such as "UInt4", names of releases to come). The one dtype table of gpuidle.
inline int64_t DtypeBytes(absl::string_view dtype) {
  struct Size {
    absl::string_view name;
    int64_t bytes;
  };
  static constexpr Size kSizes[] = {
      {"Float", 4},
      {"BFloat16", 2},
      {"Half", 2},
      {"Double", 8},
      {"Long", 8},
      {"Int", 4},
      {"Short", 2},
      {"Char", 1},
      {"Byte", 1},
      {"Bool", 1},
      {"ComplexHalf", 4},
      {"ComplexFloat", 8},
      {"ComplexDouble", 16},
      {"UInt16", 2},
      {"UInt32", 4},
      {"UInt64", 8},
      {"QInt8", 1},
      {"QUInt8", 1},
      {"QInt32", 4},
      {"QUInt4x2", 1},
      {"QUInt2x4", 1},
      {"Bits1x8", 1},
      {"Bits2x4", 1},
      {"Bits4x2", 1},
      {"Bits8", 1},
      {"Bits16", 2},
      {"Float8_e5m2", 1},
      {"Float8_e4m3fn", 1},
      {"Float8_e5m2fnuz", 1},
      {"Float8_e4m3fnuz", 1},
      {"Float8_e8m0fnu", 1},
      {"Float4_e2m1fn_x2", 1},
  };
  for (const Size& s : kSizes) {
    if (s.name == dtype) return s.bytes;
  }
  return -1;
}

// Serving requests' ranges are named "gpuidle.request" or "gpuidle.request:<id>", and the part
// of one that ran "gpuidle.request_run[:<id>]".
inline constexpr absl::string_view kRequestName = "gpuidle.request";
inline constexpr absl::string_view kRequestRunName = "gpuidle.request_run";

// The id in a range's name that is `prefix` or `prefix:<id>` ("" for the bare prefix); nullopt
// for other names.
inline std::optional<absl::string_view> RequestIdOf(absl::string_view name,
                                                    absl::string_view prefix) {
  if (!absl::StartsWith(name, prefix)) return std::nullopt;
  name.remove_prefix(prefix.size());
  if (name.empty()) return name;
  if (name.front() != ':') return std::nullopt;
  name.remove_prefix(1);
  return name;
}

// The one rule that turns a host range's name into a step or a data wait, for every host
// category: torch.profiler puts ProfilerStep#N under user_annotation today, under "Operator"
// (cpu_op) in PyTorch 1.8, and DataLoader fetches wherever the release put them. nullopt: the
// name says nothing, and the range keeps its category's kind.
inline std::optional<RangeKind> RangeKindFromName(absl::string_view name) {
  if (absl::StartsWith(name, "ProfilerStep#")) return RangeKind::kStep;
  // Serving requests, by the names gpuidle's own marks use (any tool may use them: an NVTX
  // start/end range, a torch.profiler record_function).
  if (RequestIdOf(name, kRequestRunName).has_value()) return RangeKind::kRequestRun;
  if (RequestIdOf(name, kRequestName).has_value()) return RangeKind::kRequest;
  // torch.profiler names every DataLoader fetch "enumerate(DataLoader)#...__next__"
  // (_SingleProcessDataLoaderIter, _MultiProcessingDataLoaderIter).
  if (absl::StartsWith(name, "enumerate(DataLoader)")) return RangeKind::kData;
  return std::nullopt;
}

// The kind of a host range of a category whose own kind is `category_kind` (kUser for
// user_annotation, kFrameworkOp for cpu_op, kPython for python_function), from its name.
inline RangeKind HostRangeKind(RangeKind category_kind, absl::string_view name) {
  return RangeKindFromName(name).value_or(category_kind);
}

// The kind of a PyTorch "user_annotation" range, from its name.
inline RangeKind AnnotationRangeKind(absl::string_view name) {
  return HostRangeKind(RangeKind::kUser, name);
}

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_MODEL_TRACE_NAMES_H_
