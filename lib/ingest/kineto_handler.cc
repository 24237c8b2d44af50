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

bool KinetoHandler::Scalar(ScalarKind kind, absl::string_view text) {
  if (depth_ == 0) {
    root_seen_ = true;
    return Fail(absl::StrCat("the JSON document is ", KindName(kind),
                             ", not a trace (an object with \"traceEvents\")"));
  }
  if (in_events_) {
    const int rel = depth_ - events_depth_;
    if (rel == 0) {
      NotAnObject();
      return true;
    }
    if (rel == 1) return EventValue(kind, text);
    if (rel == 2 && in_args_) return ArgValue(kind, text);
    return true;
  }
  if (depth_ == 1 && !root_is_array_) {
    if (top_ == Top::kTraceEvents) {
      return Fail(absl::StrCat("\"traceEvents\" must be an array of events, not ", KindName(kind)));
    }
    if (top_ == Top::kBaseTime && kind != kNull) {
      base_time_ns_ = kind == kNumber || kind == kString ? ParseIntegerText(text, kind == kString)
                                                         : std::nullopt;
      warnings_.bad_base_time = !base_time_ns_.has_value();
    }
    if (top_ == Top::kGpuidle) {
      return Fail(absl::StrCat("\"gpuidle\" must be an object, not ", KindName(kind)));
    }
    return true;
  }
  if (top_ == Top::kGpuidle && depth_ == 2) return GpuidleValue(kind, text);
  if (top_ == Top::kDeviceProperties && depth_ == 3) {
    if (prop_key_ == 1) {
      const std::optional<int64_t> id = kind == kNumber || kind == kString
                                            ? ParseIntegerText(text, kind == kString)
                                            : std::nullopt;
      if (id && *id >= 0 && *id <= INT32_MAX) {
        prop_id_ = id;
      } else {
        prop_id_bad_ = true;
      }
    }
    if (prop_key_ == 2 && kind == kString) {
      KeepText(&prop_name_, text, &warnings_);
      prop_name_ = ValidText(prop_name_, &warnings_);
    }
  } else if (top_ == Top::kDistributedInfo && depth_ == 2 && prop_key_ != 0 && kind != kNull) {
    const std::optional<int64_t> v =
        kind == kNumber || kind == kString ? ParseIntegerText(text, kind == kString) : std::nullopt;
    if (!v || *v < 0 || *v > INT32_MAX) {
      warnings_.bad_distributed_info = true;
    } else if (prop_key_ == 1) {
      t_.info.rank = static_cast<int>(*v);
    } else {
      t_.info.world_size = static_cast<int>(*v);
    }
  }
  return true;
}

bool KinetoHandler::EventValue(ScalarKind kind, absl::string_view text) {
  switch (field_) {
    case Field::kPh:
    case Field::kCat:
    case Field::kName: {
      if (kind != kString) {
        Bad(field_, Problem::kWrongType, text);
        return true;
      }
      if (field_ == Field::kName) {
        KeepText(&event_.name, text, &warnings_);
      } else {
        // Compared with known values only: a cut one is no known value either.
        (field_ == Field::kPh ? event_.ph : event_.cat)
            .assign(text.data(), std::min(text.size(), kMaxKeptStringBytes));
      }
      return true;
    }
    case Field::kTs:
    case Field::kDur: {
      // Numbers; numeric strings too (Chrome's trace viewer coerces them).
      if (kind != kNumber && kind != kString) {
        Bad(field_, Problem::kWrongType, text);
        return true;
      }
      const std::optional<int64_t> ns =
          ParseMicrosToNs(kind == kString ? absl::StripAsciiWhitespace(text) : text);
      if (!ns) {
        Bad(field_, kind == kString ? Problem::kWrongType : Problem::kOutOfRange, text);
        return true;
      }
      // The time invariants of model/timeline.h: ts in [kMinTimeNs, kMaxTimeNs), dur at most
      // 2^52 ns (a negative dur is reported as such below).
      if (field_ == Field::kTs ? *ns < kMinTimeNs || *ns >= kMaxTimeNs : *ns > kMaxDurationNs) {
        Bad(field_, Problem::kOutOfRange, text);
        return true;
      }
      (field_ == Field::kTs ? event_.ts_ns : event_.dur_ns) = *ns;
      return true;
    }
    case Field::kPid:
    case Field::kTid: {
      uint64_t id = 0;
      bool numeric = false;
      if (kind == kNumber || kind == kString) {
        // Numeric strings are the numbers they spell: a tid written "544" in one event and
        // 544 in another is one thread.
        const std::optional<int64_t> v = ParseIntegerText(text, kind == kString);
        if (v) {
          id = static_cast<uint64_t>(*v);
          numeric = true;
        } else if (const std::optional<uint64_t> u = ParseUint64(text); u) {
          // Thread ids above the int64 range (pthread_t values) are still exact integers.
          id = *u;
          numeric = true;
        } else {
          id = IdOfName(text);  // "Spans", "stream 7 ", "PyTorch Profiler"
        }
      } else {
        Bad(field_, Problem::kWrongType, text);
        return true;
      }
      if (field_ == Field::kPid) {
        event_.pid = id;
        event_.has_pid = numeric;
      } else {
        event_.tid = id;
      }
      return true;
    }
    case Field::kArgs:
      Bad(field_, Problem::kWrongType, text);
      return true;
    default:
      return true;
  }
}

bool KinetoHandler::ArgValue(ScalarKind kind, absl::string_view text) {
  if (field_ == Field::kIgnored || kind == kNull) return true;
  if (field_ >= Field::kGpuidleKind) return GpuidleArgValue(kind, text);
  if (field_ == Field::kStack) {
    if (kind == kString) {
      KeepText(&event_.stack, text, &warnings_);
    } else {
      Bad(field_, Problem::kWrongType, text);
    }
    return true;
  }
  if (kind != kNumber && kind != kString) {
    Bad(field_, Problem::kWrongType, text);
    return true;
  }
  const std::optional<int64_t> v = ParseIntegerText(text, kind == kString);
  if (!v) {
    Bad(field_, Problem::kNotInteger, text);
    return true;
  }
  switch (field_) {
    case Field::kCorrelation:
      event_.correlation = v;
      break;
    case Field::kDevice:
      // Negative: no device said (the work goes on its pid's device); beyond int32: a
      // device that cannot be told apart (the work is skipped, see FinishEvent).
      if (*v < 0) {
        Bad(field_, Problem::kNegative, text);
      } else if (*v > INT32_MAX) {
        Bad(field_, Problem::kOutOfRange, text);
      } else {
        event_.device = v;
      }
      break;
    case Field::kStream:
      event_.stream = v;
      break;
    case Field::kBytes:
      if (*v < 0) {
        Bad(field_, Problem::kNegative, text);
      } else {
        event_.bytes = v;
      }
      break;
    case Field::kWaitOnStream:
      event_.wait_on_stream = v;
      break;
    case Field::kWaitOnRecordCorrelation:
      event_.wait_on_record_correlation = v;
      break;
    default:
      break;
  }
  return true;
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
      if (kind != kBool) return wrong_type("a boolean");
      info.record_limit_reached = text == kJsonTrue;
      return true;
    case GpuidleKey::kWallClockOffsetNs:
      return integer(&info.wall_clock_offset_ns, true);
    case GpuidleKey::kIgnored:
      break;
  }
  return true;
}

}  // namespace gpuidle::internal::kineto
