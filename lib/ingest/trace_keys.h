// The Kineto reader's key tables: which event fields, args, categories and top-level keys it
// keeps, spelled as in model/trace_names.h. The lookups run for every key of a trace, so they
// are inline and turn most keys away on their length alone.
#ifndef GPUIDLE_LIB_INGEST_TRACE_KEYS_H_
#define GPUIDLE_LIB_INGEST_TRACE_KEYS_H_

#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "model/trace_names.h"

namespace gpuidle::internal::kineto {

// The event fields and args the reader keeps; everything else is skipped unparsed.
enum class Field : uint8_t {
  kIgnored,
  kPh,
  kCat,
  kName,
  kPid,
  kTid,
  kTs,
  kDur,
  kArgs,
  kCorrelation,
  kDevice,
  kStream,
  kBytes,
  kWaitOnStream,
  kWaitOnRecordCorrelation,  // wait_on_cuda_event_record_corr_id
  kStack,                    // gpuidle host samples
  // PyTorch's collective args (trace_names.h), on record_param_comms and NCCL kernels.
  kExternalId,
  kCollectiveName,
  kInNelems,
  kOutNelems,
  kDtype,
  kGroupName,
  kSeq,
  // A GPU throughput counter (model/throughput_metrics.h) among a cuda_profiler_range's args.
  kCounter,
  // gpuidle traces: the model's values where the Kineto name rules would give another.
  kGpuidleKind,
  kGpuidleCategory,
  kGpuidleCopyKind,
  kGpuidlePageable,
  kGpuidleCommunication,
  kGpuidleThread,
};

inline constexpr int kFieldCount = static_cast<int>(Field::kGpuidleThread) + 1;
static_assert(kFieldCount <= 32, "Event::bad is a 32-bit mask of fields");

inline uint32_t Bit(Field f) { return uint32_t{1} << static_cast<int>(f); }

// The switches below group keys by length; these keep the groups true to the vocabulary.
static_assert(kPhField.size() == 2 && kTsField.size() == 2);
static_assert(kCatField.size() == 3 && kPidField.size() == 3 && kTidField.size() == 3 &&
              kDurField.size() == 3);
static_assert(kNameField.size() == 4 && kArgsField.size() == 4);
static_assert(kBytesArg.size() == kStackArg.size() && kBytesArg.size() == kDtypeArg.size());
static_assert(kDeviceArg.size() == kStreamArg.size());
static_assert(kWaitOnStreamArg.size() == kGpuidleThreadArg.size() &&
              kWaitOnStreamArg.size() == kOutNelemsArg.size());
static_assert(kCorrelationArg.size() == kExternalIdArg.size());
static_assert(kGpuidleCategoryArg.size() == kGpuidlePageableArg.size());

inline Field EventField(absl::string_view k) {
  switch (k.size()) {
    case 2:
      if (k == kPhField) return Field::kPh;
      if (k == kTsField) return Field::kTs;
      break;
    case 3:
      if (k == kCatField) return Field::kCat;
      if (k == kPidField) return Field::kPid;
      if (k == kTidField) return Field::kTid;
      if (k == kDurField) return Field::kDur;
      break;
    case 4:
      if (k == kNameField) return Field::kName;
      if (k == kArgsField) return Field::kArgs;
      break;
  }
  return Field::kIgnored;
}

inline Field ArgField(absl::string_view k) {
  // Kineto events carry a dozen args the reader skips: one length test turns most away.
  switch (k.size()) {
    case kBytesArg.size():
      if (k == kBytesArg) return Field::kBytes;
      if (k == kStackArg) return Field::kStack;
      if (k == kDtypeArg) return Field::kDtype;
      break;
    case kDeviceArg.size():
      if (k == kDeviceArg) return Field::kDevice;
      if (k == kStreamArg) return Field::kStream;
      break;
    case kCorrelationArg.size():
      if (k == kCorrelationArg) return Field::kCorrelation;
      if (k == kExternalIdArg) return Field::kExternalId;
      break;
    case kGpuidleKindArg.size():
      if (k == kGpuidleKindArg) return Field::kGpuidleKind;
      break;
    case kWaitOnStreamArg.size():
      if (k == kWaitOnStreamArg) return Field::kWaitOnStream;
      if (k == kGpuidleThreadArg) return Field::kGpuidleThread;
      if (k == kOutNelemsArg) return Field::kOutNelems;
      break;
    case kCollectiveNameArg.size():
      if (k == kCollectiveNameArg) return Field::kCollectiveName;
      break;
    case kInNelemsArg.size():
      if (k == kInNelemsArg) return Field::kInNelems;
      break;
    case kGroupNameArg.size():
      if (k == kGroupNameArg) return Field::kGroupName;
      break;
    case kSeqArg.size():
      if (k == kSeqArg) return Field::kSeq;
      break;
    case kGpuidleCategoryArg.size():
      if (k == kGpuidleCategoryArg) return Field::kGpuidleCategory;
      if (k == kGpuidlePageableArg) return Field::kGpuidlePageable;
      break;
    case kGpuidleCopyKindArg.size():
      if (k == kGpuidleCopyKindArg) return Field::kGpuidleCopyKind;
      break;
    case kGpuidleCommunicationArg.size():
      if (k == kGpuidleCommunicationArg) return Field::kGpuidleCommunication;
      break;
    case kWaitOnRecordCorrelationArg.size():
      if (k == kWaitOnRecordCorrelationArg) return Field::kWaitOnRecordCorrelation;
      break;
  }
  return Field::kIgnored;
}

// How warnings name a field: "ts", "args.correlation".
std::string FieldName(Field f);
// What a field's value must be, and what values it may take, for warnings.
absl::string_view ExpectedType(Field f);
absl::string_view AllowedValues(Field f);

enum class EventCategory : uint8_t {
  kIgnored,
  kKernel,
  kMemcpy,
  kMemset,
  kProfilerRange,  // cuda_profiler_range: kernel-like device work
  kRuntime,        // cuda_runtime and cuda_driver (and HIP calls, which ROCm files there too)
  kCudaSync,
  kCudaEvent,
  kCpuOp,
  kUserAnnotation,
  kPythonFunction,
  kHostSample,  // gpuidle traces
};

static_assert(kKernelCategory.size() == 6 && kLegacyMemcpyCategory.size() == 6 &&
              kLegacyMemsetCategory.size() == 6 && kCpuOpCategory.size() == 6 &&
              kLegacyPythonCategory.size() == 6 && kLegacyDriverCategory.size() == 6);
static_assert(kMemcpyCategory.size() == kMemsetCategory.size() &&
              kMemcpyCategory.size() == kCudaEventCategory.size());
static_assert(kUserAnnotationCategory.size() == kPythonFunctionCategory.size());
static_assert(kProfilerRangeCategory.size() == kHostSampleCategory.size());

// Kineto's category names of every generation, in any case: "kernel", "gpu_memcpy", "cpu_op",
// ... today; "Kernel", "Memcpy", "Runtime", "Operator", "Python" in PyTorch 1.8. Everything
// else (gpu_user_annotation: device-side copies of user ranges; ac2g flows; Trace;
// cpu_instant_event; overhead; ...) carries nothing the analysis uses.
inline EventCategory CategoryOf(absl::string_view cat) {
  const auto is = [cat](absl::string_view name) { return absl::EqualsIgnoreCase(cat, name); };
  switch (cat.size()) {
    case 6:
      if (is(kKernelCategory)) return EventCategory::kKernel;
      if (is(kLegacyMemcpyCategory)) return EventCategory::kMemcpy;
      if (is(kLegacyMemsetCategory)) return EventCategory::kMemset;
      if (is(kCpuOpCategory)) return EventCategory::kCpuOp;
      if (is(kLegacyPythonCategory)) return EventCategory::kPythonFunction;
      if (is(kLegacyDriverCategory)) return EventCategory::kRuntime;
      break;
    case kLegacyRuntimeCategory.size():
      if (is(kLegacyRuntimeCategory)) return EventCategory::kRuntime;
      break;
    case kLegacyCpuOpCategory.size():
      if (is(kLegacyCpuOpCategory)) return EventCategory::kCpuOp;
      break;
    case kCudaSyncCategory.size():
      if (is(kCudaSyncCategory)) return EventCategory::kCudaSync;
      break;
    case kMemcpyCategory.size():
      if (is(kMemcpyCategory)) return EventCategory::kMemcpy;
      if (is(kMemsetCategory)) return EventCategory::kMemset;
      if (is(kCudaEventCategory)) return EventCategory::kCudaEvent;
      break;
    case kDriverCategory.size():
      if (is(kDriverCategory)) return EventCategory::kRuntime;
      break;
    case kRuntimeCategory.size():
      if (is(kRuntimeCategory)) return EventCategory::kRuntime;
      break;
    case kUserAnnotationCategory.size():
      if (is(kUserAnnotationCategory)) return EventCategory::kUserAnnotation;
      if (is(kPythonFunctionCategory)) return EventCategory::kPythonFunction;
      break;
    case kProfilerRangeCategory.size():
      if (is(kProfilerRangeCategory)) return EventCategory::kProfilerRange;
      if (is(kHostSampleCategory)) return EventCategory::kHostSample;
      break;
  }
  return EventCategory::kIgnored;
}

// How warnings name a category: its current Kineto spelling ("" for kIgnored).
absl::string_view CategoryLabel(EventCategory c);

// The fields each kind of event is read for: a problem with any other field changes nothing,
// and is not worth a warning.
inline uint32_t FieldsUsed(EventCategory c) {
  const uint32_t common = Bit(Field::kPh) | Bit(Field::kCat) | Bit(Field::kArgs);
  const uint32_t timed = common | Bit(Field::kName) | Bit(Field::kTs) | Bit(Field::kDur);
  const uint32_t thread = Bit(Field::kTid) | Bit(Field::kGpuidleThread);
  const uint32_t collective = Bit(Field::kExternalId) | Bit(Field::kCollectiveName) |
                              Bit(Field::kInNelems) | Bit(Field::kOutNelems) | Bit(Field::kDtype) |
                              Bit(Field::kGroupName) | Bit(Field::kSeq);
  switch (c) {
    case EventCategory::kKernel:
      return timed | Bit(Field::kPid) | Bit(Field::kDevice) | Bit(Field::kStream) |
             Bit(Field::kCorrelation) | Bit(Field::kBytes) | Bit(Field::kGpuidleCopyKind) |
             Bit(Field::kGpuidlePageable) | Bit(Field::kGpuidleCommunication) | collective;
    case EventCategory::kMemcpy:
    case EventCategory::kMemset:
    case EventCategory::kProfilerRange:
      return timed | Bit(Field::kPid) | Bit(Field::kDevice) | Bit(Field::kStream) |
             Bit(Field::kCorrelation) | Bit(Field::kBytes) | Bit(Field::kGpuidleCopyKind) |
             Bit(Field::kGpuidlePageable) | Bit(Field::kGpuidleCommunication) |
             (c == EventCategory::kProfilerRange ? Bit(Field::kCounter) : 0);
    case EventCategory::kRuntime:
      return timed | thread | Bit(Field::kCorrelation) | Bit(Field::kStream) |
             Bit(Field::kWaitOnStream) | Bit(Field::kGpuidleCategory);
    case EventCategory::kCudaSync:
      return common | Bit(Field::kCorrelation) | Bit(Field::kStream) | Bit(Field::kWaitOnStream) |
             Bit(Field::kWaitOnRecordCorrelation);
    case EventCategory::kCudaEvent:
      return common | Bit(Field::kCorrelation) | Bit(Field::kStream);
    case EventCategory::kCpuOp:
      return timed | thread | Bit(Field::kGpuidleKind) | collective;
    case EventCategory::kUserAnnotation:
    case EventCategory::kPythonFunction:
      return timed | thread | Bit(Field::kGpuidleKind);
    case EventCategory::kHostSample:
      return common | Bit(Field::kTs) | thread | Bit(Field::kStack);
    case EventCategory::kIgnored:
      break;
  }
  return 0;
}

// The top-level keys of a trace the reader keeps.
enum class Top : uint8_t {
  kNone,
  kTraceEvents,
  kDeviceProperties,
  kDistributedInfo,
  kBaseTime,
  kGpuidle,
};

inline Top TopKeyOf(absl::string_view k) {
  if (k == kTraceEventsKey) return Top::kTraceEvents;
  if (k == kDevicePropertiesKey) return Top::kDeviceProperties;
  if (k == kDistributedInfoKey) return Top::kDistributedInfo;
  if (k == kBaseTimeKey) return Top::kBaseTime;
  if (k == kGpuidleKey) return Top::kGpuidle;
  return Top::kNone;
}

// The keys of a gpuidle trace's "gpuidle" object that the reader keeps.
enum class GpuidleKey : uint8_t {
  kIgnored,
  kFormat,
  kPid,
  kHost,
  kRank,
  kWorldSize,
  kDroppedRecords,
  kZeroTimestampRecords,
  kRecordLimitReached,
  kWallClockOffsetNs,
  kTracerLaunchFloorNs,
  kTracerLaunchExcessMaxNs,
  kTracerOutsidePermille,
  kTracerPerCallNs,
  // The device readings (ingest/gpu_readings_parser.h), and why PM sampling was refused.
  kGpuMetrics,
  kGpuProcesses,
  kGpuThroughput,
  kGpuThroughputUnavailable,
  kDeviceTimesMadeUp,
};

// The keys whose values are tables of device readings.
inline bool IsReadingsKey(GpuidleKey k) {
  return k == GpuidleKey::kGpuMetrics || k == GpuidleKey::kGpuProcesses ||
         k == GpuidleKey::kGpuThroughput;
}

GpuidleKey GpuidleKeyOf(absl::string_view k);
absl::string_view GpuidleKeyName(GpuidleKey k);

}  // namespace gpuidle::internal::kineto

#endif  // GPUIDLE_LIB_INGEST_TRACE_KEYS_H_
