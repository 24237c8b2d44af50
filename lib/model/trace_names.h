// Names that trace writers and readers share: the gpuidle trace format's version string, the
// spellings of the model's enums in trace args, and the rule that turns a host range's name
// into a range kind. One definition, so that what the writer writes is what the reader reads
// (docs/TRACE_FORMAT.md).
#ifndef GPUIDLE_LIB_MODEL_TRACE_NAMES_H_
#define GPUIDLE_LIB_MODEL_TRACE_NAMES_H_

#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// The "format" of a gpuidle trace's "gpuidle" object. /2 added host stack samples, which the
// analysis uses; /1 traces (no samples) read as before. Readers reject any other value.
inline constexpr char kGpuidleTraceFormat[] = "gpuidle.trace/2";
inline constexpr char kGpuidleTraceFormatV1[] = "gpuidle.trace/1";

// The category of the instant events that carry host stack samples (Timeline::samples).
inline constexpr char kHostSampleCategory[] = "gpuidle_host_sample";

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
  }
  return "user";
}

inline std::optional<RangeKind> ParseRangeKind(absl::string_view s) {
  for (RangeKind k : {RangeKind::kStep, RangeKind::kData, RangeKind::kFrameworkOp,
                      RangeKind::kPython, RangeKind::kUser}) {
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
    case CallCategory::kOther:
      return "other";
  }
  return "other";
}

inline std::optional<CallCategory> ParseCallCategory(absl::string_view s) {
  for (CallCategory c :
       {CallCategory::kLaunch, CallCategory::kSync, CallCategory::kCopy, CallCategory::kWaitEvent,
        CallCategory::kInit, CallCategory::kModuleLoad, CallCategory::kOther}) {
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

// The one rule that turns a host range's name into a step or a data wait, for every host
// category: torch.profiler puts ProfilerStep#N under user_annotation today, under "Operator"
// (cpu_op) in PyTorch 1.8, and DataLoader fetches wherever the release put them. nullopt: the
// name says nothing, and the range keeps its category's kind.
inline std::optional<RangeKind> RangeKindFromName(absl::string_view name) {
  if (absl::StartsWith(name, "ProfilerStep#")) return RangeKind::kStep;
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
