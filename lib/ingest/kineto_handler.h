// The Kineto reader's SAX handler: a state machine over RapidJSON's events that knows where in
// a trace it is (the top-level keys, an event, its args, deviceProperties, distributedInfo,
// the "gpuidle" object), collects each event's fields into one reused Event and hands it to
// the EventMapper when the event ends. Unusable fields are marked, not errors; errors are
// what leaves no trace to read (kineto_reader.h).
#ifndef GPUIDLE_LIB_INGEST_KINETO_HANDLER_H_
#define GPUIDLE_LIB_INGEST_KINETO_HANDLER_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "absl/base/attributes.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/text_safety.h"
#include "core/time_units.h"
#include "ingest/event_mapper.h"
#include "ingest/gpu_readings_parser.h"
#include "ingest/json_scanners.h"
#include "ingest/kineto_reader.h"
#include "ingest/reader_warnings.h"
#include "ingest/trace_event.h"
#include "ingest/trace_keys.h"
#include "ingest/trace_numbers.h"
#include "model/throughput_metrics.h"
#include "model/timeline.h"
#include "rapidjson/reader.h"

namespace gpuidle::internal::kineto {

class KinetoHandler {
 public:
  explicit KinetoHandler(Timeline* timeline) : t_(*timeline), mapper_(timeline, &warnings_) {}

  // --- RapidJSON SAX interface ---
  bool Null() { return Scalar(kNull, {}); }
  bool Bool(bool b) { return Scalar(kBool, b ? "true" : "false"); }
  bool Int(int) { return Unexpected(); }  // numbers arrive as RawNumber
  bool Uint(unsigned) { return Unexpected(); }
  bool Int64(int64_t) { return Unexpected(); }
  bool Uint64(uint64_t) { return Unexpected(); }
  bool Double(double) { return Unexpected(); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) { return Scalar(kNumber, {s, n}); }
  bool String(const char* s, rapidjson::SizeType n, bool) { return Scalar(kString, {s, n}); }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    const absl::string_view k(s, n);
    const int rel = depth_ - events_depth_;
    if (depth_ == 1 && !root_is_array_) {
      top_ = TopKeyOf(k);
      if (top_ != Top::kNone && !FirstTime(&top_keys_seen_, static_cast<int>(top_))) {
        return Twice(k, "the trace's top-level object");
      }
    } else if (in_events_ && rel == 1) {
      field_ = EventField(k);
    } else if (in_events_ && rel == 2 && in_args_) {
      field_ = ArgField(k);
      if (field_ == Field::kIgnored) {
        counter_ = ThroughputFigureOf(k);
        if (counter_) field_ = Field::kCounter;
      }
    } else if (top_ == Top::kDeviceProperties && depth_ == 3) {
      prop_key_ = k == kDeviceIdKey              ? 1
                  : k == kDeviceNameKey          ? 2
                  : k == kDeviceUuidKey          ? 3
                  : k == kDevicePhysicalIndexKey ? 4
                                                 : 0;
    } else if (top_ == Top::kDistributedInfo && depth_ == 2) {
      prop_key_ = k == kRankKey ? 1 : k == kWorldSizeKey ? 2 : 0;
      if (prop_key_ != 0 && !FirstTime(&distributed_keys_seen_, prop_key_)) {
        return Twice(k, "\"distributedInfo\"");
      }
    } else if (top_ == Top::kGpuidle && depth_ == 2) {
      gpuidle_key_ = GpuidleKeyOf(k);
      if (gpuidle_key_ != GpuidleKey::kIgnored &&
          !FirstTime(&gpuidle_keys_seen_, static_cast<int>(gpuidle_key_))) {
        return Twice(k, "\"gpuidle\"");
      }
      if (IsReadingsKey(gpuidle_key_)) {
        readings_.Begin(gpuidle_key_ == GpuidleKey::kGpuMetrics ? GpuReadingsParser::Table::kMetrics
                        : gpuidle_key_ == GpuidleKey::kGpuProcesses
                            ? GpuReadingsParser::Table::kProcesses
                            : GpuReadingsParser::Table::kThroughput,
                        k, &t_);
      }
    } else if (InReadings()) {
      readings_.Key(depth_ - 2, k);
    }
    return true;
  }
  bool StartObject() {
    if (depth_ == 0) {
      root_seen_ = true;
      events_depth_ = 2;
    } else if (in_events_) {
      const int rel = depth_ - events_depth_;
      if (rel == 0) {
        ++event_index_;
        event_.Clear();
      } else if (rel == 1) {
        if (field_ == Field::kArgs) {
          in_args_ = true;
        } else if (field_ != Field::kIgnored) {
          Bad(field_, Problem::kWrongType, "");
        }
      } else if (rel == 2 && in_args_ && field_ != Field::kIgnored) {
        Bad(field_, Problem::kWrongType, "");
      }
    } else if (depth_ == 1 && top_ == Top::kTraceEvents) {
      return Fail("\"traceEvents\" must be an array of events, not an object");
    } else if (depth_ == 1 && top_ == Top::kBaseTime && !root_is_array_) {
      warnings_.bad_base_time = true;
    } else if (depth_ == 1 && top_ == Top::kGpuidle) {
      // A gpuidle trace: its own metadata, checked for a format this reader knows.
      t_.info.source = "gpuidle";
      gpuidle_format_seen_ = false;
      gpuidle_key_ = GpuidleKey::kIgnored;
    } else if (InReadings()) {
      readings_.Start(depth_ - 2, /*object=*/true);
    } else if (top_ == Top::kDeviceProperties && depth_ == 2) {
      prop_id_.reset();
      prop_id_bad_ = false;
      prop_name_.clear();
      prop_uuid_.clear();
      prop_physical_ = -1;
    }
    return Deeper();
  }
  bool EndObject(rapidjson::SizeType) {
    --depth_;
    if (in_events_) {
      const int rel = depth_ - events_depth_;
      if (rel == 0) return FinishEvent();
      if (rel == 1) in_args_ = false;
    } else if (top_ == Top::kDeviceProperties && depth_ == 2) {
      if (prop_id_ && t_.info.visible_devices.size() >= kMaxDevicesPerTrace) {
        ++warnings_.device_properties_beyond_limit;
      } else if (prop_id_) {
        t_.info.visible_devices.push_back(static_cast<int>(*prop_id_));
        t_.info.visible_device_names.push_back(prop_name_);
        // Parallel to the devices; EventMapper::Finish empties them where nothing is known.
        t_.info.visible_device_uuids.push_back(prop_uuid_);
        t_.info.visible_device_physical.push_back(prop_physical_);
      } else if (prop_id_bad_) {
        ++warnings_.bad_device_properties;
      }
    } else if (top_ == Top::kGpuidle && depth_ == 1 && !gpuidle_format_seen_) {
      return NoGpuidleFormat();
    } else if (InReadings()) {
      readings_.End(depth_ - 2);
    }
    return true;
  }
  bool StartArray() {
    if (depth_ == 0) {
      // The JSON Array Format of Chrome traces: the root is the list of events.
      root_seen_ = root_is_array_ = in_events_ = saw_trace_events_ = true;
      events_depth_ = 1;
    } else if (depth_ == 1 && top_ == Top::kTraceEvents && !root_is_array_) {
      in_events_ = saw_trace_events_ = true;
    } else if (depth_ == 1 && top_ == Top::kGpuidle && !root_is_array_) {
      return Fail("\"gpuidle\" must be an object, not an array");
    } else if (depth_ == 1 && top_ == Top::kBaseTime && !root_is_array_) {
      warnings_.bad_base_time = true;
    } else if (InReadings()) {
      readings_.Start(depth_ - 2, /*object=*/false);
    } else if (in_events_) {
      const int rel = depth_ - events_depth_;
      if (rel == 0) {
        NotAnObject();
      } else if (rel == 1 && field_ != Field::kIgnored) {
        Bad(field_, Problem::kWrongType, "");
      } else if (rel == 2 && in_args_ && field_ != Field::kIgnored) {
        Bad(field_, Problem::kWrongType, "");
      }
    }
    return Deeper();
  }
  bool EndArray(rapidjson::SizeType) {
    --depth_;
    if (in_events_ && depth_ == events_depth_ - 1) in_events_ = false;
    if (InReadings()) readings_.End(depth_ - 2);
    return true;
  }

  // --- results ---
  const std::string& error() const { return error_; }
  bool saw_trace_events() const { return saw_trace_events_; }
  bool root_seen() const { return root_seen_; }
  uint64_t events() const { return event_index_; }
  std::optional<int64_t> base_time_ns() const { return base_time_ns_; }
  EventMapper& mapper() { return mapper_; }
  const ReaderWarnings& warnings() const { return warnings_; }
  BoundedStringBuffer& string_buffer() { return string_buffer_; }
  // The scanners found a number longer than kMaxNumberBytes, starting at `offset`.
  void NumberTooLong(size_t offset) { number_too_long_at_ = offset; }
  std::optional<size_t> number_too_long_at() const { return number_too_long_at_; }

 private:
  enum ScalarKind { kNull, kBool, kNumber, kString };
  static_assert(static_cast<int>(GpuReadingsParser::Scalar::kString) == kString);

  static absl::string_view KindName(ScalarKind k) {
    switch (k) {
      case kNull:
        return "null";
      case kBool:
        return "a boolean";
      case kNumber:
        return "a number";
      case kString:
        return "a string";
    }
    return "?";
  }

  // Inside the value of a "gpuidle" key that holds device readings (depth_ 2 is that value's).
  bool InReadings() const {
    return top_ == Top::kGpuidle && depth_ >= 2 && !root_is_array_ && !in_events_ &&
           IsReadingsKey(gpuidle_key_);
  }

  bool Unexpected() { return Fail("internal error: number not delivered as text"); }

  // A trace nests a few levels deep; far deeper input is not a trace, and is refused before it
  // costs more than a little memory.
  bool Deeper() {
    if (++depth_ > kMaxJsonDepth) {
      return Fail(absl::StrCat("nested deeper than ", kMaxJsonDepth, " levels: not a trace"));
    }
    return true;
  }

  bool Fail(std::string message) {
    error_ = std::move(message);
    return false;
  }
  // Marks `bit` seen; false if it was. A key read twice is refused: JSON readers differ on which
  // of the two counts (Python's json and jsonschema take the last), so a trace checked by one
  // would be read as another (issue 29).
  static bool FirstTime(uint32_t* seen, int bit) {
    const uint32_t mask = uint32_t{1} << bit;
    if ((*seen & mask) != 0) return false;
    *seen |= mask;
    return true;
  }
  bool Twice(absl::string_view key, absl::string_view where) {
    return Fail(absl::StrCat("\"", key, "\" appears twice in ", where,
                             ": JSON readers disagree on which one counts"));
  }

  bool NoGpuidleFormat();
  // Marks a field of the current event as unusable. Whether that costs the event or only the
  // field, and whether it is worth a warning, depends on the event's category, which may come
  // later in the event: FinishEvent decides.
  void Bad(Field f, Problem p, absl::string_view example) {
    if (f == Field::kIgnored) return;
    // Several counters share kCounter: the first unusable one speaks for them.
    if (f == Field::kCounter && (event_.bad & Bit(f)) != 0) return;
    event_.bad |= Bit(f);
    event_.problem[static_cast<int>(f)] = p;
    if (event_.example_field == Field::kIgnored) {
      event_.example_field = f;
      event_.example = example.empty() ? std::string() : QuoteForMessage(example, 40);
    }
  }

  void NotAnObject() {
    ++event_index_;
    ++warnings_.not_objects;
    field_ = Field::kIgnored;  // whatever the entry holds is no event's field
  }

  bool Scalar(ScalarKind kind, absl::string_view text);
  bool EventValue(ScalarKind kind, absl::string_view text);
  bool ArgValue(ScalarKind kind, absl::string_view text);
  // The args of gpuidle traces that override what an event's name implies.
  bool GpuidleArgValue(ScalarKind kind, absl::string_view text);
  // A value in the "gpuidle" object of a gpuidle trace. Unlike event fields, these are errors:
  // gpuidle wrote them, and a file whose own metadata is wrong is not one to trust.
  bool GpuidleValue(ScalarKind kind, absl::string_view text);

  bool FinishEvent() {
    field_ = Field::kIgnored;
    mapper_.Map(event_);
    return true;
  }

  Timeline& t_;
  // Declared before the mapper, which counts into it.
  ReaderWarnings warnings_;
  EventMapper mapper_;
  int depth_ = 0;
  int events_depth_ = 2;
  bool root_seen_ = false;
  bool root_is_array_ = false;
  bool in_events_ = false;
  bool in_args_ = false;
  bool saw_trace_events_ = false;
  Top top_ = Top::kNone;
  // The keys read so far, by Top, GpuidleKey and distributedInfo's prop_key_ (FirstTime).
  uint32_t top_keys_seen_ = 0;
  uint32_t gpuidle_keys_seen_ = 0;
  uint32_t distributed_keys_seen_ = 0;
  static_assert(static_cast<int>(GpuidleKey::kDeviceTimesMadeUp) < 32 &&
                static_cast<int>(Top::kGpuidle) < 32);
  Field field_ = Field::kIgnored;
  std::optional<ThroughputFigure> counter_;  // the figure of a kCounter field
  int prop_key_ = 0;
  std::optional<int64_t> prop_id_;
  bool prop_id_bad_ = false;
  std::string prop_name_;
  std::string prop_uuid_;   // "" unknown
  int prop_physical_ = -1;  // -1 unknown
  Event event_;
  uint64_t event_index_ = 0;
  std::optional<int64_t> base_time_ns_;
  GpuidleKey gpuidle_key_ = GpuidleKey::kIgnored;
  bool gpuidle_format_seen_ = false;
  std::string error_;
  BoundedStringBuffer string_buffer_;
  std::optional<size_t> number_too_long_at_;
  GpuReadingsParser readings_;
};

// Inline: called for every value of a trace. EventValue and ArgValue go into Scalar, their
// one caller, as they did when the reader was one file.
inline bool KinetoHandler::Scalar(ScalarKind kind, absl::string_view text) {
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
  if (InReadings()) {
    readings_.Value(depth_ - 2, static_cast<GpuReadingsParser::Scalar>(kind), text);
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
    if ((prop_key_ == 2 || prop_key_ == 3) && kind == kString) {
      std::string& kept = prop_key_ == 2 ? prop_name_ : prop_uuid_;
      KeepText(&kept, text, &warnings_);
      kept = ValidText(kept, &warnings_);
    }
    if (prop_key_ == 4 && kind == kNumber) {
      // Anything but an index is no index: unknown, as in traces without the key.
      const std::optional<int64_t> index = ParseIntegerText(text, false);
      if (index && *index >= 0 && *index <= INT32_MAX) prop_physical_ = static_cast<int>(*index);
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

ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool KinetoHandler::EventValue(ScalarKind kind,
                                                                   absl::string_view text) {
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

ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool KinetoHandler::ArgValue(ScalarKind kind,
                                                                 absl::string_view text) {
  if (field_ == Field::kIgnored || kind == kNull) return true;
  if (field_ >= Field::kGpuidleKind) return GpuidleArgValue(kind, text);
  if (field_ == Field::kCollectiveName || field_ == Field::kDtype || field_ == Field::kGroupName) {
    // Text; a process group may be named by a number.
    if (kind == kString || (kind == kNumber && field_ == Field::kGroupName)) {
      KeepText(field_ == Field::kCollectiveName ? &event_.collective_name
               : field_ == Field::kDtype        ? &event_.dtype
                                                : &event_.group_name,
               text, &warnings_);
    } else {
      Bad(field_, Problem::kWrongType, text);
    }
    return true;
  }
  if (field_ == Field::kCounter) {
    // A number (Kineto writes them bare), or a string that spells one; a rate is never negative.
    double value = 0;
    if ((kind != kNumber && kind != kString) ||
        !absl::SimpleAtod(absl::StripAsciiWhitespace(text), &value)) {
      Bad(field_, Problem::kWrongType, text);
    } else if (!std::isfinite(value) || value > std::numeric_limits<float>::max()) {
      Bad(field_, Problem::kOutOfRange, text);  // a sample keeps floats
    } else if (value < 0) {
      Bad(field_, Problem::kNegative, text);
    } else {
      PutThroughput(*counter_, value, &event_.counters);
      event_.has_counters = true;
    }
    return true;
  }
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
    case Field::kExternalId:
      event_.external_id = v;
      break;
    case Field::kInNelems:
    case Field::kOutNelems:
    case Field::kSeq:
      if (*v < 0) {
        Bad(field_, Problem::kNegative, text);
      } else {
        (field_ == Field::kInNelems    ? event_.in_nelems
         : field_ == Field::kOutNelems ? event_.out_nelems
                                       : event_.seq) = v;
      }
      break;
    default:
      break;
  }
  return true;
}

}  // namespace gpuidle::internal::kineto

#endif  // GPUIDLE_LIB_INGEST_KINETO_HANDLER_H_
