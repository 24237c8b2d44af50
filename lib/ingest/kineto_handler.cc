#include "ingest/kineto_handler.h"

#include <type_traits>

#include "absl/strings/ascii.h"
#include "core/text_safety.h"
#include "core/time_units.h"
#include "core/version.h"
#include "ingest/trace_numbers.h"
#include "model/trace_names.h"

namespace gpuidle::internal::kineto {
namespace {

constexpr absl::string_view kJsonTrue = "true";

}  // namespace

bool KinetoHandler::NoGpuidleFormat() {
  return Fail(absl::StrCat("the \"gpuidle\" object has no \"format\"; this gpuidle (", kVersion,
                           ") reads \"", kGpuidleTraceFormat, "\""));
}

// The args of gpuidle traces that override what an event's name implies.
bool KinetoHandler::GpuidleArgValue(ScalarKind kind, absl::string_view text) {
  if (field_ == Field::kGpuidleThread) {
    if (kind != kNumber) {
      Bad(field_, Problem::kWrongType, text);
      return true;
    }
    event_.thread = ParseUint64(text);
    if (!event_.thread) Bad(field_, Problem::kOutOfRange, text);
    return true;
  }
  const bool flag = field_ == Field::kGpuidlePageable || field_ == Field::kGpuidleCommunication;
  if (flag) {
    if (kind != kBool) {
      Bad(field_, Problem::kWrongType, text);
      return true;
    }
    (field_ == Field::kGpuidlePageable ? event_.pageable : event_.communication) =
        text == kJsonTrue;
    return true;
  }
  if (kind != kString) {
    Bad(field_, Problem::kWrongType, text);
    return true;
  }
  bool known = false;
  if (field_ == Field::kGpuidleKind) {
    event_.range_kind = ParseRangeKind(text);
    known = event_.range_kind.has_value();
  } else if (field_ == Field::kGpuidleCategory) {
    event_.call_category = ParseCallCategory(text);
    known = event_.call_category.has_value();
  } else {
    event_.copy_kind = ParseCopyKind(text);
    known = event_.copy_kind.has_value();
  }
  if (!known) Bad(field_, Problem::kUnknownValue, text);
  return true;
}

// A tracer cost per call beyond this (a second, or a factor of a million) is not one a collector
// measured.
constexpr int64_t kMaxTracerCostNs = 1'000'000'000;

// A value in the "gpuidle" object of a gpuidle trace. Unlike event fields, these are errors:
// gpuidle wrote them, and a file whose own metadata is wrong is not one to trust.
bool KinetoHandler::GpuidleValue(ScalarKind kind, absl::string_view text) {
  TimelineInfo& info = t_.info;
  const auto wrong_type = [&](absl::string_view expected) {
    return Fail(absl::StrCat("\"gpuidle\": \"", GpuidleKeyName(gpuidle_key_), "\" must be ",
                             expected, ", not ", KindName(kind)));
  };
  const auto integer = [&](auto* out, bool nullable) -> bool {
    using T = typename std::remove_reference_t<decltype(*out)>::value_type;
    // null: unknown here, which leaves what distributedInfo may have said.
    if (kind == kNull && nullable) return true;
    if (kind != kNumber) return wrong_type(nullable ? "an integer or null" : "an integer");
    std::optional<T> v;
    if constexpr (std::is_same_v<T, uint64_t>) {
      v = ParseUint64(text);
    } else {
      const std::optional<int64_t> w = ParseInt64(text);
      if (w && static_cast<T>(*w) == *w) v = static_cast<T>(*w);
    }
    if (!v) {
      return Fail(absl::StrCat("\"gpuidle\": \"", GpuidleKeyName(gpuidle_key_),
                               "\" = ", Shorten(text, 40), " is not an integer in range"));
    }
    *out = v;
    return true;
  };
  switch (gpuidle_key_) {
    case GpuidleKey::kFormat:
      if (kind != kString) return wrong_type("a string");
      if (text != kGpuidleTraceFormat && text != kGpuidleTraceFormatV1) {
        return Fail(absl::StrCat("unsupported gpuidle trace format ", QuoteForMessage(text, 60),
                                 ": this gpuidle (", kVersion, ") reads \"", kGpuidleTraceFormat,
                                 "\"; a newer gpuidle may read it"));
      }
      gpuidle_format_seen_ = true;
      return true;
    case GpuidleKey::kPid:
      return integer(&info.pid, true);
    case GpuidleKey::kHost:
      if (kind == kNull) return true;
      if (kind != kString) return wrong_type("a string");
      KeepText(&info.host, text, &warnings_);
      info.host = ValidText(info.host, &warnings_);
      return true;
    case GpuidleKey::kRank:
      return integer(&info.rank, true);
    case GpuidleKey::kWorldSize:
      return integer(&info.world_size, true);
    case GpuidleKey::kDroppedRecords:
      return integer(&info.dropped_records, true);
    case GpuidleKey::kZeroTimestampRecords: {
      std::optional<uint64_t> n;
      if (!integer(&n, false)) return false;
      // Added: zero-timestamp device events found among the events count as well.
      mapper_.AddZeroTimestampRecords(*n);
      return true;
    }
    case GpuidleKey::kRecordLimitReached:
    case GpuidleKey::kDeviceTimesMadeUp:
      if (kind != kBool) return wrong_type("a boolean");
      (gpuidle_key_ == GpuidleKey::kRecordLimitReached ? info.record_limit_reached
                                                       : info.device_times_made_up) =
          text == kJsonTrue;
      return true;
    case GpuidleKey::kWallClockOffsetNs:
      return integer(&info.wall_clock_offset_ns, true);
    case GpuidleKey::kTracerLaunchFloorNs:
    case GpuidleKey::kTracerLaunchExcessMaxNs:
    case GpuidleKey::kTracerOutsidePermille:
    case GpuidleKey::kTracerPerCallNs: {
      std::optional<int64_t> ns;
      if (!integer(&ns, false)) return false;
      if (*ns < 0 || *ns > kMaxTracerCostNs) {
        return Fail(absl::StrCat("\"gpuidle\": \"", GpuidleKeyName(gpuidle_key_), "\" = ", *ns,
                                 " is outside 0 to ", kMaxTracerCostNs));
      }
      TracerCostModel& m = info.tracer_cost ? *info.tracer_cost : info.tracer_cost.emplace();
      (gpuidle_key_ == GpuidleKey::kTracerLaunchFloorNs       ? m.launch_floor_ns
       : gpuidle_key_ == GpuidleKey::kTracerLaunchExcessMaxNs ? m.launch_excess_max_ns
       : gpuidle_key_ == GpuidleKey::kTracerOutsidePermille   ? m.outside_permille
                                                              : m.per_call_ns) = *ns;
      return true;
    }
    case GpuidleKey::kGpuThroughputUnavailable:
      if (kind == kNull) return true;
      if (kind != kString) return wrong_type("a string");
      KeepText(&info.gpu_throughput_unavailable, text, &warnings_);
      info.gpu_throughput_unavailable = ValidText(info.gpu_throughput_unavailable, &warnings_);
      return true;
    case GpuidleKey::kGpuMetrics:  // GpuReadingsParser's
    case GpuidleKey::kGpuProcesses:
    case GpuidleKey::kGpuThroughput:
    case GpuidleKey::kIgnored:
      break;
  }
  return true;
}

}  // namespace gpuidle::internal::kineto
