#include "ingest/trace_keys.h"

#include "absl/strings/str_cat.h"

namespace gpuidle::internal::kineto {
namespace {

absl::string_view ArgName(Field f) {
  switch (f) {
    case Field::kCorrelation:
      return kCorrelationArg;
    case Field::kDevice:
      return kDeviceArg;
    case Field::kStream:
      return kStreamArg;
    case Field::kBytes:
      return kBytesArg;
    case Field::kWaitOnStream:
      return kWaitOnStreamArg;
    case Field::kWaitOnRecordCorrelation:
      return kWaitOnRecordCorrelationArg;
    case Field::kStack:
      return kStackArg;
    case Field::kExternalId:
      return kExternalIdArg;
    case Field::kCollectiveName:
      return kCollectiveNameArg;
    case Field::kInNelems:
      return kInNelemsArg;
    case Field::kOutNelems:
      return kOutNelemsArg;
    case Field::kDtype:
      return kDtypeArg;
    case Field::kGroupName:
      return kGroupNameArg;
    case Field::kSeq:
      return kSeqArg;
    case Field::kCounter:
      return "<GPU counter>";
    case Field::kGpuidleKind:
      return kGpuidleKindArg;
    case Field::kGpuidleCategory:
      return kGpuidleCategoryArg;
    case Field::kGpuidleCopyKind:
      return kGpuidleCopyKindArg;
    case Field::kGpuidlePageable:
      return kGpuidlePageableArg;
    case Field::kGpuidleCommunication:
      return kGpuidleCommunicationArg;
    case Field::kGpuidleThread:
      return kGpuidleThreadArg;
    default:
      return {};
  }
}

}  // namespace

std::string FieldName(Field f) {
  switch (f) {
    case Field::kPh:
      return std::string(kPhField);
    case Field::kCat:
      return std::string(kCatField);
    case Field::kName:
      return std::string(kNameField);
    case Field::kPid:
      return std::string(kPidField);
    case Field::kTid:
      return std::string(kTidField);
    case Field::kTs:
      return std::string(kTsField);
    case Field::kDur:
      return std::string(kDurField);
    case Field::kArgs:
      return std::string(kArgsField);
    case Field::kIgnored:
      return "?";
    default:
      return absl::StrCat(kArgsField, ".", ArgName(f));
  }
}

absl::string_view ExpectedType(Field f) {
  switch (f) {
    case Field::kPh:
    case Field::kCat:
    case Field::kName:
    case Field::kStack:
    case Field::kCollectiveName:
    case Field::kDtype:
    case Field::kGpuidleKind:
    case Field::kGpuidleCategory:
    case Field::kGpuidleCopyKind:
      return "a string";
    case Field::kPid:
    case Field::kTid:
    case Field::kGroupName:
      return "a number or a string";
    case Field::kArgs:
      return "an object";
    case Field::kGpuidlePageable:
    case Field::kGpuidleCommunication:
      return "a boolean";
    default:
      return "a number";
  }
}

absl::string_view AllowedValues(Field f) {
  switch (f) {
    case Field::kGpuidleKind:
      return "step, data, user, framework_op or python";
    case Field::kGpuidleCategory:
      return "launch, sync, copy, wait_event, init, module_load or other";
    case Field::kGpuidleCopyKind:
      return "unknown, HtoD, DtoH, DtoD, HtoH or PtoP";
    default:
      return "the known values";
  }
}

absl::string_view CategoryLabel(EventCategory c) {
  switch (c) {
    case EventCategory::kKernel:
      return kKernelCategory;
    case EventCategory::kMemcpy:
      return kMemcpyCategory;
    case EventCategory::kMemset:
      return kMemsetCategory;
    case EventCategory::kProfilerRange:
      return kProfilerRangeCategory;
    case EventCategory::kRuntime:
      return kRuntimeCategory;
    case EventCategory::kCudaSync:
      return kCudaSyncCategory;
    case EventCategory::kCudaEvent:
      return kCudaEventCategory;
    case EventCategory::kCpuOp:
      return kCpuOpCategory;
    case EventCategory::kUserAnnotation:
      return kUserAnnotationCategory;
    case EventCategory::kPythonFunction:
      return kPythonFunctionCategory;
    case EventCategory::kHostSample:
      return kHostSampleCategory;
    case EventCategory::kIgnored:
      break;
  }
  return "";
}

GpuidleKey GpuidleKeyOf(absl::string_view k) {
  if (k == kFormatKey) return GpuidleKey::kFormat;
  if (k == kPidInfoKey) return GpuidleKey::kPid;
  if (k == kHostKey) return GpuidleKey::kHost;
  if (k == kRankKey) return GpuidleKey::kRank;
  if (k == kWorldSizeKey) return GpuidleKey::kWorldSize;
  if (k == kDroppedRecordsKey) return GpuidleKey::kDroppedRecords;
  if (k == kZeroTimestampRecordsKey) return GpuidleKey::kZeroTimestampRecords;
  if (k == kRecordLimitReachedKey) return GpuidleKey::kRecordLimitReached;
  if (k == kWallClockOffsetKey) return GpuidleKey::kWallClockOffsetNs;
  if (k == kTracerLaunchFloorKey) return GpuidleKey::kTracerLaunchFloorNs;
  if (k == kTracerLaunchExcessMaxKey) return GpuidleKey::kTracerLaunchExcessMaxNs;
  if (k == kTracerOutsidePermilleKey) return GpuidleKey::kTracerOutsidePermille;
  if (k == kTracerPerCallKey) return GpuidleKey::kTracerPerCallNs;
  if (k == kGpuMetricsInfoKey) return GpuidleKey::kGpuMetrics;
  if (k == kGpuProcessesInfoKey) return GpuidleKey::kGpuProcesses;
  if (k == kGpuThroughputInfoKey) return GpuidleKey::kGpuThroughput;
  if (k == kGpuThroughputUnavailableInfoKey) return GpuidleKey::kGpuThroughputUnavailable;
  if (k == kDeviceTimesMadeUpInfoKey) return GpuidleKey::kDeviceTimesMadeUp;
  return GpuidleKey::kIgnored;
}

absl::string_view GpuidleKeyName(GpuidleKey k) {
  switch (k) {
    case GpuidleKey::kFormat:
      return kFormatKey;
    case GpuidleKey::kPid:
      return kPidInfoKey;
    case GpuidleKey::kHost:
      return kHostKey;
    case GpuidleKey::kRank:
      return kRankKey;
    case GpuidleKey::kWorldSize:
      return kWorldSizeKey;
    case GpuidleKey::kDroppedRecords:
      return kDroppedRecordsKey;
    case GpuidleKey::kZeroTimestampRecords:
      return kZeroTimestampRecordsKey;
    case GpuidleKey::kRecordLimitReached:
      return kRecordLimitReachedKey;
    case GpuidleKey::kWallClockOffsetNs:
      return kWallClockOffsetKey;
    case GpuidleKey::kTracerLaunchFloorNs:
      return kTracerLaunchFloorKey;
    case GpuidleKey::kTracerLaunchExcessMaxNs:
      return kTracerLaunchExcessMaxKey;
    case GpuidleKey::kTracerOutsidePermille:
      return kTracerOutsidePermilleKey;
    case GpuidleKey::kTracerPerCallNs:
      return kTracerPerCallKey;
    case GpuidleKey::kGpuMetrics:
      return kGpuMetricsInfoKey;
    case GpuidleKey::kGpuProcesses:
      return kGpuProcessesInfoKey;
    case GpuidleKey::kGpuThroughput:
      return kGpuThroughputInfoKey;
    case GpuidleKey::kGpuThroughputUnavailable:
      return kGpuThroughputUnavailableInfoKey;
    case GpuidleKey::kDeviceTimesMadeUp:
      return kDeviceTimesMadeUpInfoKey;
    case GpuidleKey::kIgnored:
      break;
  }
  return "?";
}

}  // namespace gpuidle::internal::kineto
