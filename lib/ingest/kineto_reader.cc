#include "ingest/kineto_reader.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/status_macros.h"
#include "core/text_safety.h"
#include "core/time_units.h"
#include "core/version.h"
#include "ingest/json_stream.h"
#include "model/call_streams.h"
#include "model/cuda_api.h"
#include "model/trace_names.h"
#include "rapidjson/error/en.h"
#include "rapidjson/reader.h"

// The fast scanners below specialise RapidJSON 1.1's internal ParseString, ParseNumber and
// SkipWhitespace (Debian 12's rapidjson-dev); check them again before moving to another release.
#if RAPIDJSON_MAJOR_VERSION != 1 || RAPIDJSON_MINOR_VERSION != 1
#error "kineto_reader.cc's scanners are written against RapidJSON 1.1"
#endif

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gpuidle::internal {
namespace {

constexpr int64_t kNsPerUs = 1000;

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
  // gpuidle traces: the model's values where the Kineto name rules would give another.
  kGpuidleKind,
  kGpuidleCategory,
  kGpuidleCopyKind,
  kGpuidlePageable,
  kGpuidleCommunication,
  kGpuidleThread,
};

Field EventField(absl::string_view k) {
  switch (k.size()) {
    case 2:
      if (k == "ph") return Field::kPh;
      if (k == "ts") return Field::kTs;
      break;
    case 3:
      if (k == "cat") return Field::kCat;
      if (k == "pid") return Field::kPid;
      if (k == "tid") return Field::kTid;
      if (k == "dur") return Field::kDur;
      break;
    case 4:
      if (k == "name") return Field::kName;
      if (k == "args") return Field::kArgs;
      break;
  }
  return Field::kIgnored;
}

Field ArgField(absl::string_view k) {
  // Kineto events carry a dozen args the reader skips: one length test turns most away.
  switch (k.size()) {
    case 5:
      if (k == "bytes") return Field::kBytes;
      if (k == "stack") return Field::kStack;
      break;
    case 6:
      if (k == "device") return Field::kDevice;
      if (k == "stream") return Field::kStream;
      break;
    case 11:
      if (k == "correlation") return Field::kCorrelation;
      break;
    case 12:
      if (k == "gpuidle_kind") return Field::kGpuidleKind;
      break;
    case 14:
      if (k == "wait_on_stream") return Field::kWaitOnStream;
      if (k == "gpuidle_thread") return Field::kGpuidleThread;
      break;
    case 16:
      if (k == "gpuidle_category") return Field::kGpuidleCategory;
      if (k == "gpuidle_pageable") return Field::kGpuidlePageable;
      break;
    case 17:
      if (k == "gpuidle_copy_kind") return Field::kGpuidleCopyKind;
      break;
    case 21:
      if (k == "gpuidle_communication") return Field::kGpuidleCommunication;
      break;
    case 33:
      if (k == "wait_on_cuda_event_record_corr_id") return Field::kWaitOnRecordCorrelation;
      break;
  }
  return Field::kIgnored;
}

absl::string_view FieldName(Field f) {
  switch (f) {
    case Field::kPh:
      return "ph";
    case Field::kCat:
      return "cat";
    case Field::kName:
      return "name";
    case Field::kPid:
      return "pid";
    case Field::kTid:
      return "tid";
    case Field::kTs:
      return "ts";
    case Field::kDur:
      return "dur";
    case Field::kArgs:
      return "args";
    case Field::kCorrelation:
      return "args.correlation";
    case Field::kDevice:
      return "args.device";
    case Field::kStream:
      return "args.stream";
    case Field::kBytes:
      return "args.bytes";
    case Field::kWaitOnStream:
      return "args.wait_on_stream";
    case Field::kWaitOnRecordCorrelation:
      return "args.wait_on_cuda_event_record_corr_id";
    case Field::kStack:
      return "args.stack";
    case Field::kGpuidleKind:
      return "args.gpuidle_kind";
    case Field::kGpuidleCategory:
      return "args.gpuidle_category";
    case Field::kGpuidleCopyKind:
      return "args.gpuidle_copy_kind";
    case Field::kGpuidlePageable:
      return "args.gpuidle_pageable";
    case Field::kGpuidleCommunication:
      return "args.gpuidle_communication";
    case Field::kGpuidleThread:
      return "args.gpuidle_thread";
    case Field::kIgnored:
      break;
  }
  return "?";
}

constexpr int kFieldCount = static_cast<int>(Field::kGpuidleThread) + 1;
static_assert(kFieldCount <= 32, "Event::bad is a 32-bit mask of fields");

inline uint32_t Bit(Field f) { return uint32_t{1} << static_cast<int>(f); }

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

// Kineto's category names of every generation, in any case: "kernel", "gpu_memcpy", "cpu_op",
// ... today; "Kernel", "Memcpy", "Runtime", "Operator", "Python" in PyTorch 1.8. Everything
// else (gpu_user_annotation: device-side copies of user ranges; ac2g flows; Trace;
// cpu_instant_event; overhead; ...) carries nothing the analysis uses.
EventCategory CategoryOf(absl::string_view cat) {
  const auto is = [cat](absl::string_view name) { return absl::EqualsIgnoreCase(cat, name); };
  switch (cat.size()) {
    case 6:
      if (is("kernel")) return EventCategory::kKernel;
      if (is("memcpy")) return EventCategory::kMemcpy;
      if (is("memset")) return EventCategory::kMemset;
      if (is("cpu_op")) return EventCategory::kCpuOp;
      if (is("python")) return EventCategory::kPythonFunction;
      if (is("driver")) return EventCategory::kRuntime;
      break;
    case 7:
      if (is("runtime")) return EventCategory::kRuntime;
      break;
    case 8:
      if (is("operator")) return EventCategory::kCpuOp;
      break;
    case 9:
      if (is("cuda_sync")) return EventCategory::kCudaSync;
      break;
    case 10:
      if (is("gpu_memcpy")) return EventCategory::kMemcpy;
      if (is("gpu_memset")) return EventCategory::kMemset;
      if (is("cuda_event")) return EventCategory::kCudaEvent;
      break;
    case 11:
      if (is("cuda_driver")) return EventCategory::kRuntime;
      break;
    case 12:
      if (is("cuda_runtime")) return EventCategory::kRuntime;
      break;
    case 15:
      if (is("user_annotation")) return EventCategory::kUserAnnotation;
      if (is("python_function")) return EventCategory::kPythonFunction;
      break;
    case 19:
      if (is("cuda_profiler_range")) return EventCategory::kProfilerRange;
      if (is(kHostSampleCategory)) return EventCategory::kHostSample;
      break;
  }
  return EventCategory::kIgnored;
}

// How warnings name a category: its current Kineto spelling.
absl::string_view CategoryLabel(EventCategory c) {
  switch (c) {
    case EventCategory::kKernel:
      return "kernel";
    case EventCategory::kMemcpy:
      return "gpu_memcpy";
    case EventCategory::kMemset:
      return "gpu_memset";
    case EventCategory::kProfilerRange:
      return "cuda_profiler_range";
    case EventCategory::kRuntime:
      return "cuda_runtime";
    case EventCategory::kCudaSync:
      return "cuda_sync";
    case EventCategory::kCudaEvent:
      return "cuda_event";
    case EventCategory::kCpuOp:
      return "cpu_op";
    case EventCategory::kUserAnnotation:
      return "user_annotation";
    case EventCategory::kPythonFunction:
      return "python_function";
    case EventCategory::kHostSample:
      return kHostSampleCategory;
    case EventCategory::kIgnored:
      break;
  }
  return "";
}

// The fields each kind of event is read for: a problem with any other field changes nothing,
// and is not worth a warning.
uint32_t FieldsUsed(EventCategory c) {
  const uint32_t common = Bit(Field::kPh) | Bit(Field::kCat) | Bit(Field::kArgs);
  const uint32_t timed = common | Bit(Field::kName) | Bit(Field::kTs) | Bit(Field::kDur);
  const uint32_t thread = Bit(Field::kTid) | Bit(Field::kGpuidleThread);
  switch (c) {
    case EventCategory::kKernel:
    case EventCategory::kMemcpy:
    case EventCategory::kMemset:
    case EventCategory::kProfilerRange:
      return timed | Bit(Field::kPid) | Bit(Field::kDevice) | Bit(Field::kStream) |
             Bit(Field::kCorrelation) | Bit(Field::kBytes) | Bit(Field::kGpuidleCopyKind) |
             Bit(Field::kGpuidlePageable) | Bit(Field::kGpuidleCommunication);
    case EventCategory::kRuntime:
      return timed | thread | Bit(Field::kCorrelation) | Bit(Field::kStream) |
             Bit(Field::kWaitOnStream) | Bit(Field::kGpuidleCategory);
    case EventCategory::kCudaSync:
      return common | Bit(Field::kCorrelation) | Bit(Field::kStream) | Bit(Field::kWaitOnStream) |
             Bit(Field::kWaitOnRecordCorrelation);
    case EventCategory::kCudaEvent:
      return common | Bit(Field::kCorrelation) | Bit(Field::kStream);
    case EventCategory::kCpuOp:
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

// What was wrong with a field that the reader skipped.
enum class Problem : uint8_t {
  kNone,
  kMissing,
  kWrongType,
  kNotInteger,
  kOutOfRange,
  kNegative,
  kUnknownValue,
};

uint64_t Fnv1a(absl::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Fast paths for the numbers that fill a trace: plain integers (ids, pids, correlations) and
// microseconds with at most three decimals (ts, dur). Their values are exact, so these give
// what ParseInt64 and ParseDecimalToNs give; any other text goes to those.
std::optional<int64_t> ParseEventInt(absl::string_view text) {
  if (text.empty() || text.size() > 18 || (text[0] == '0' && text.size() > 1)) {
    return ParseInt64(text);
  }
  int64_t v = 0;
  for (const char c : text) {
    if (!IsDigit(c)) return ParseInt64(text);
    v = v * 10 + (c - '0');
  }
  return v;
}

std::optional<int64_t> ParseMicrosToNs(absl::string_view text) {
  const size_t dot = text.find('.');
  const size_t whole = dot == absl::string_view::npos ? text.size() : dot;
  const size_t decimals = dot == absl::string_view::npos ? 0 : text.size() - dot - 1;
  if (whole == 0 || whole > 15 || (text[0] == '0' && whole > 1) ||
      (dot != absl::string_view::npos && (decimals == 0 || decimals > 3))) {
    return ParseDecimalToNs(text, kNsPerUs);
  }
  int64_t us = 0;
  for (size_t i = 0; i < whole; ++i) {
    if (!IsDigit(text[i])) return ParseDecimalToNs(text, kNsPerUs);
    us = us * 10 + (text[i] - '0');
  }
  int64_t ns = 0;
  for (size_t i = 0; i < 3; ++i) {
    const char c = i < decimals ? text[dot + 1 + i] : '0';
    if (!IsDigit(c)) return ParseDecimalToNs(text, kNsPerUs);
    ns = ns * 10 + (c - '0');
  }
  return us * kNsPerUs + ns;
}

// An integer given as a JSON number or as a string: ROCm traces write some ("bytes": "9216",
// "stream": "0x0", "device": "0"). Strings may be decimal or 0x-prefixed hexadecimal; a hex
// value beyond int64 keeps its bits (stream handles are addresses). nullopt: not an integer.
std::optional<int64_t> ParseIntegerText(absl::string_view text, bool is_string) {
  if (!is_string) return ParseEventInt(text);
  text = absl::StripAsciiWhitespace(text);
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    uint64_t v = 0;
    text.remove_prefix(2);
    if (text.size() > 16) return std::nullopt;
    for (const char c : text) {
      const int digit = IsDigit(c)             ? c - '0'
                        : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                               : -1;
      if (digit < 0) return std::nullopt;
      v = v * 16 + static_cast<uint64_t>(digit);
    }
    return static_cast<int64_t>(v);
  }
  return ParseInt64(text);
}

// True if every byte of s is ASCII (the common case: no UTF-8 check needed), eight at a time.
bool IsAscii(absl::string_view s) {
  const char* p = s.data();
  const char* end = p + s.size();
  uint64_t high = 0;
  for (; end - p >= 8; p += 8) {
    uint64_t word;
    std::memcpy(&word, p, sizeof(word));
    high |= word;
  }
  for (; p != end; ++p) high |= static_cast<unsigned char>(*p);
  return (high & 0x8080808080808080ull) == 0;
}

// One event's fields, reused from event to event (no allocation once warm).
struct Event {
  std::string ph, cat, name, stack;
  std::optional<int64_t> ts_ns, dur_ns;
  uint64_t pid = 0, tid = 0;
  bool has_pid = false;
  std::optional<int64_t> correlation, device, stream, bytes, wait_on_stream,
      wait_on_record_correlation;
  std::optional<RangeKind> range_kind;
  std::optional<CallCategory> call_category;
  std::optional<CopyKind> copy_kind;
  std::optional<bool> pageable, communication;
  std::optional<uint64_t> thread;  // where "tid" stands in for an id beyond 32 bits
  // Fields whose value could not be used (left unset above), and why.
  uint32_t bad = 0;
  std::array<Problem, kFieldCount> problem{};
  Field example_field = Field::kIgnored;  // the first unusable field
  std::string example;                    // and its value, for the warning

  void Clear() {
    ph.clear();
    cat.clear();
    name.clear();
    stack.clear();
    ts_ns.reset();
    dur_ns.reset();
    pid = tid = 0;
    has_pid = false;
    correlation.reset();
    device.reset();
    stream.reset();
    bytes.reset();
    wait_on_stream.reset();
    wait_on_record_correlation.reset();
    range_kind.reset();
    call_category.reset();
    copy_kind.reset();
    pageable.reset();
    communication.reset();
    thread.reset();
    bad = 0;
    example_field = Field::kIgnored;
    example.clear();
  }
};

// Where RapidJSON's own string parser writes a string that the fast scanner below cannot hand
// over where it lies (it has an escape, or runs past the chunk): at most kMaxKeptStringBytes + 1
// bytes are stored, so that a string of any length costs bounded memory, and the handler still
// sees that it was longer than what it may keep. The rest is parsed (escapes checked) unstored.
class BoundedStringBuffer {
 public:
  using Ch = char;  // RapidJSON's output stream concept

  BoundedStringBuffer() { text_.reserve(256); }

  void Clear() {
    text_.clear();
    puts_ = 0;
  }
  void Put(char c) {
    if (puts_++ < kCapacity) text_.push_back(c);
  }
  // The string, without the '\0' that RapidJSON puts after it.
  absl::string_view text() const {
    const size_t length = puts_ == 0 ? 0 : puts_ - 1;
    return absl::string_view(text_).substr(0, std::min(length, text_.size()));
  }

 private:
  static constexpr size_t kCapacity = kMaxKeptStringBytes + 1;
  std::string text_;
  size_t puts_ = 0;
};

enum class Top : uint8_t {
  kNone,
  kTraceEvents,
  kDeviceProperties,
  kDistributedInfo,
  kBaseTime,
  kGpuidle,
};

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
};

GpuidleKey GpuidleKeyOf(absl::string_view k) {
  if (k == "format") return GpuidleKey::kFormat;
  if (k == "pid") return GpuidleKey::kPid;
  if (k == "host") return GpuidleKey::kHost;
  if (k == "rank") return GpuidleKey::kRank;
  if (k == "world_size") return GpuidleKey::kWorldSize;
  if (k == "dropped_records") return GpuidleKey::kDroppedRecords;
  if (k == "zero_timestamp_records") return GpuidleKey::kZeroTimestampRecords;
  if (k == "record_limit_reached") return GpuidleKey::kRecordLimitReached;
  if (k == "wall_clock_offset_ns") return GpuidleKey::kWallClockOffsetNs;
  return GpuidleKey::kIgnored;
}

class KinetoHandler {
 public:
  explicit KinetoHandler(Timeline* timeline) : t_(*timeline) {}

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
      top_ = Top::kNone;
      if (k == "traceEvents") top_ = Top::kTraceEvents;
      if (k == "deviceProperties") top_ = Top::kDeviceProperties;
      if (k == "distributedInfo") top_ = Top::kDistributedInfo;
      if (k == "baseTimeNanoseconds") top_ = Top::kBaseTime;
      if (k == "gpuidle") top_ = Top::kGpuidle;
    } else if (in_events_ && rel == 1) {
      field_ = EventField(k);
    } else if (in_events_ && rel == 2 && in_args_) {
      field_ = ArgField(k);
    } else if (top_ == Top::kDeviceProperties && depth_ == 3) {
      prop_key_ = k == "id" ? 1 : k == "name" ? 2 : 0;
    } else if (top_ == Top::kDistributedInfo && depth_ == 2) {
      prop_key_ = k == "rank" ? 1 : k == "world_size" ? 2 : 0;
    } else if (top_ == Top::kGpuidle && depth_ == 2) {
      gpuidle_key_ = GpuidleKeyOf(k);
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
      bad_base_time_ = true;
    } else if (depth_ == 1 && top_ == Top::kGpuidle) {
      // A gpuidle trace: its own metadata, checked for a format this reader knows.
      t_.info.source = "gpuidle";
      gpuidle_format_seen_ = false;
      gpuidle_key_ = GpuidleKey::kIgnored;
    } else if (top_ == Top::kDeviceProperties && depth_ == 2) {
      prop_id_.reset();
      prop_id_bad_ = false;
      prop_name_.clear();
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
        ++device_properties_beyond_limit_;
      } else if (prop_id_) {
        t_.info.visible_devices.push_back(static_cast<int>(*prop_id_));
        t_.info.visible_device_names.push_back(prop_name_);
        visible_device_ids_.insert(static_cast<int>(*prop_id_));
      } else if (prop_id_bad_) {
        ++bad_device_properties_;
      }
    } else if (top_ == Top::kGpuidle && depth_ == 1 && !gpuidle_format_seen_) {
      return Fail(absl::StrCat("the \"gpuidle\" object has no \"format\"; this gpuidle (", kVersion,
                               ") reads \"", kGpuidleTraceFormat, "\""));
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
      bad_base_time_ = true;
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
    return true;
  }

  // --- results ---
  const std::string& error() const { return error_; }
  bool saw_trace_events() const { return saw_trace_events_; }
  bool root_seen() const { return root_seen_; }
  uint64_t events() const { return event_index_; }
  std::optional<int64_t> base_time_ns() const { return base_time_ns_; }
  const std::vector<CallStreams>& syncs() const { return syncs_; }
  const std::vector<EventRecordStream>& event_records() const { return event_records_; }
  BoundedStringBuffer& string_buffer() { return string_buffer_; }
  // The scanners found a number longer than kMaxNumberBytes, starting at `offset`.
  void NumberTooLong(size_t offset) { number_too_long_at_ = offset; }
  std::optional<size_t> number_too_long_at() const { return number_too_long_at_; }

  // After the parse: device work whose device only the end of the trace can tell, and the
  // warnings, one line per kind of problem.
  void Finish() {
    ResolveProfilerRanges();
    // Device names from deviceProperties (the last entry for an id wins).
    for (size_t i = 0; i < t_.info.visible_devices.size(); ++i) {
      if (auto slot = device_slots_.find(t_.info.visible_devices[i]); slot != device_slots_.end()) {
        t_.devices[slot->second].name = t_.info.visible_device_names[i];
      }
    }
    std::vector<std::string>& out = t_.info.warnings;
    if (not_objects_ != 0) {
      out.push_back(absl::StrCat("skipped ", not_objects_,
                                 " entries of \"traceEvents\" that are "
                                 "not objects"));
    }
    for (const auto& [key, w] : warnings_) {
      const auto [category, field, problem, skipped] = key;
      const absl::string_view label = CategoryLabel(static_cast<EventCategory>(category));
      const std::string events =
          absl::StrCat(w.count, " ", label, label.empty() ? "" : " ", "events");
      const Field f = static_cast<Field>(field);
      const Problem p = static_cast<Problem>(problem);
      std::string line;
      if (p == Problem::kMissing) {
        line = absl::StrCat("skipped ", events, " without \"", FieldName(f), "\"");
      } else if (skipped) {
        line =
            absl::StrCat("skipped ", events, " whose \"", FieldName(f), "\" ", ProblemText(f, p));
      } else {
        line = absl::StrCat("ignored the \"", FieldName(f), "\" of ", events, ": it ",
                            ProblemText(f, p));
      }
      if (!w.example.empty()) absl::StrAppend(&line, " (first: ", w.example, ")");
      out.push_back(std::move(line));
    }
    if (cut_strings_ != 0) {
      out.push_back(absl::StrCat("cut ", cut_strings_, " names or stacks longer than ",
                                 kMaxKeptStringBytes, " bytes to their first ", kMaxKeptStringBytes,
                                 " bytes (ending in \"...\")"));
    }
    if (invalid_utf8_bytes_ != 0) {
      out.push_back(
          absl::StrCat(invalid_utf8_bytes_, " invalid UTF-8 bytes in names replaced by U+FFFD"));
    }
    if (unplaced_ranges_ != 0) {
      out.push_back(absl::StrCat("skipped ", unplaced_ranges_,
                                 " cuda_profiler_range events on no known device (no "
                                 "\"args.device\", and a \"pid\" that no device work has)"));
    }
    if (ops_beyond_device_limit_ != 0) {
      out.push_back(absl::StrCat("skipped ", ops_beyond_device_limit_,
                                 " device events on devices beyond the first ", kMaxDevicesPerTrace,
                                 " (gpuidle reads at most ", kMaxDevicesPerTrace,
                                 " devices per trace)"));
    }
    if (device_properties_beyond_limit_ != 0) {
      out.push_back(absl::StrCat("ignored ", device_properties_beyond_limit_,
                                 " \"deviceProperties\" entries beyond the first ",
                                 kMaxDevicesPerTrace));
    }
    if (zero_timestamp_count_saturated_) {
      out.push_back(
          "the count of records without time stamps exceeds the largest 64-bit integer: it is "
          "shown as that");
    }
    if (bad_device_properties_ != 0) {
      out.push_back(absl::StrCat("ignored ", bad_device_properties_,
                                 " \"deviceProperties\" entries whose \"id\" is not an integer"));
    }
    if (bad_base_time_) {
      out.push_back(
          "ignored \"baseTimeNanoseconds\": it is not a 64-bit integer; time stamps are "
          "as written, and may not line up with other ranks'");
    }
    if (bad_distributed_info_) {
      out.push_back(
          "ignored a \"distributedInfo\" rank or world_size that is not an integer from 0 to "
          "2147483647");
    }
  }

 private:
  enum ScalarKind { kNull, kBool, kNumber, kString };

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

  static absl::string_view ExpectedType(Field f) {
    switch (f) {
      case Field::kPh:
      case Field::kCat:
      case Field::kName:
      case Field::kStack:
      case Field::kGpuidleKind:
      case Field::kGpuidleCategory:
      case Field::kGpuidleCopyKind:
        return "a string";
      case Field::kPid:
      case Field::kTid:
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

  static absl::string_view AllowedValues(Field f) {
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

  static std::string ProblemText(Field f, Problem p) {
    switch (p) {
      case Problem::kWrongType:
        return absl::StrCat("is not ", ExpectedType(f));
      case Problem::kNotInteger:
        return "is not an integer";
      case Problem::kOutOfRange:
        return "is out of range";
      case Problem::kNegative:
        return "is negative";
      case Problem::kUnknownValue:
        return absl::StrCat("is not one of ", AllowedValues(f));
      case Problem::kMissing:
        return "is missing";
      case Problem::kNone:
        break;
    }
    return "cannot be used";
  }

  // A string the timeline keeps, as read: at most kMaxKeptStringBytes, a longer one cut (and
  // counted) at a UTF-8 boundary. Whatever its length, the text arrives here bounded (the
  // string scanners below keep at most a chunk, or kMaxKeptStringBytes + 1 bytes).
  void Keep(std::string* dst, absl::string_view text) {
    if (text.size() <= kMaxKeptStringBytes) {
      dst->assign(text.data(), text.size());
      return;
    }
    *dst = Shorten(text, kMaxKeptStringBytes);
    ++cut_strings_;
  }

  // A kept string as the timeline stores it: valid UTF-8, every invalid byte replaced by
  // U+FFFD and counted (three bytes each, so it is cut again if it grew past the limit).
  std::string ValidText(absl::string_view text) {
    if (IsAscii(text) || IsValidUtf8(text)) return std::string(text);
    size_t replaced = 0;
    std::string valid = ToValidUtf8(text, &replaced);
    invalid_utf8_bytes_ += replaced;
    return valid.size() > kMaxKeptStringBytes ? Shorten(valid, kMaxKeptStringBytes) : valid;
  }

  StringId InternText(absl::string_view text) {
    if (IsAscii(text) || IsValidUtf8(text)) return t_.strings.Intern(text);
    return t_.strings.Intern(ValidText(text));
  }

  // Marks a field of the current event as unusable. Whether that costs the event or only the
  // field, and whether it is worth a warning, depends on the event's category, which may come
  // later in the event: FinishEvent decides.
  void Bad(Field f, Problem p, absl::string_view example) {
    if (f == Field::kIgnored) return;
    event_.bad |= Bit(f);
    event_.problem[static_cast<int>(f)] = p;
    if (event_.example_field == Field::kIgnored) {
      event_.example_field = f;
      event_.example = example.empty() ? std::string() : QuoteForMessage(example, 40);
    }
  }

  void NotAnObject() {
    ++event_index_;
    ++not_objects_;
    field_ = Field::kIgnored;  // whatever the entry holds is no event's field
  }

  // One warning per (category, field, problem, whether the event was skipped): counters only,
  // the memory stays bounded however many events are affected.
  void Warn(EventCategory c, Field f, Problem p, bool skipped, absl::string_view example = {}) {
    WarningCount& w = warnings_[{static_cast<uint8_t>(c), static_cast<uint8_t>(f),
                                 static_cast<uint8_t>(p), skipped}];
    if (w.count++ == 0) w.example = std::string(example);
  }

  bool Scalar(ScalarKind kind, absl::string_view text) {
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
        return Fail(
            absl::StrCat("\"traceEvents\" must be an array of events, not ", KindName(kind)));
      }
      if (top_ == Top::kBaseTime && kind != kNull) {
        base_time_ns_ = kind == kNumber || kind == kString ? ParseIntegerText(text, kind == kString)
                                                           : std::nullopt;
        bad_base_time_ = !base_time_ns_.has_value();
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
        Keep(&prop_name_, text);
        prop_name_ = ValidText(prop_name_);
      }
    } else if (top_ == Top::kDistributedInfo && depth_ == 2 && prop_key_ != 0 && kind != kNull) {
      const std::optional<int64_t> v = kind == kNumber || kind == kString
                                           ? ParseIntegerText(text, kind == kString)
                                           : std::nullopt;
      if (!v || *v < 0 || *v > INT32_MAX) {
        bad_distributed_info_ = true;
      } else if (prop_key_ == 1) {
        t_.info.rank = static_cast<int>(*v);
      } else {
        t_.info.world_size = static_cast<int>(*v);
      }
    }
    return true;
  }

  bool EventValue(ScalarKind kind, absl::string_view text) {
    switch (field_) {
      case Field::kPh:
      case Field::kCat:
      case Field::kName: {
        if (kind != kString) {
          Bad(field_, Problem::kWrongType, text);
          return true;
        }
        if (field_ == Field::kName) {
          Keep(&event_.name, text);
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
            id = Fnv1a(text);  // "Spans", "stream 7 ", "PyTorch Profiler"
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

  bool ArgValue(ScalarKind kind, absl::string_view text) {
    if (field_ == Field::kIgnored || kind == kNull) return true;
    if (field_ >= Field::kGpuidleKind) return GpuidleArgValue(kind, text);
    if (field_ == Field::kStack) {
      if (kind == kString) {
        Keep(&event_.stack, text);
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
  bool GpuidleArgValue(ScalarKind kind, absl::string_view text) {
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
      (field_ == Field::kGpuidlePageable ? event_.pageable : event_.communication) = text == "true";
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
  bool GpuidleValue(ScalarKind kind, absl::string_view text) {
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
        Keep(&info.host, text);
        info.host = ValidText(info.host);
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
        AddZeroTimestampRecords(*n);
        return true;
      }
      case GpuidleKey::kRecordLimitReached:
        if (kind != kBool) return wrong_type("a boolean");
        info.record_limit_reached = text == "true";
        return true;
      case GpuidleKey::kWallClockOffsetNs:
        return integer(&info.wall_clock_offset_ns, true);
      case GpuidleKey::kIgnored:
        break;
    }
    return true;
  }

  static absl::string_view GpuidleKeyName(GpuidleKey k) {
    switch (k) {
      case GpuidleKey::kFormat:
        return "format";
      case GpuidleKey::kPid:
        return "pid";
      case GpuidleKey::kHost:
        return "host";
      case GpuidleKey::kRank:
        return "rank";
      case GpuidleKey::kWorldSize:
        return "world_size";
      case GpuidleKey::kDroppedRecords:
        return "dropped_records";
      case GpuidleKey::kZeroTimestampRecords:
        return "zero_timestamp_records";
      case GpuidleKey::kRecordLimitReached:
        return "record_limit_reached";
      case GpuidleKey::kWallClockOffsetNs:
        return "wall_clock_offset_ns";
      case GpuidleKey::kIgnored:
        break;
    }
    return "?";
  }

  // Stream ids of the model are 32 bits. Kineto's are small numbers; a value beyond 32 bits
  // (ROCm may write a stream's address) gets a stand-in from the top of the range down, the
  // same one for every event that names it. -1: none, as in CUPTI and Kineto.
  uint32_t StreamId(int64_t raw) {
    // -1, and the same as an unsigned 32-bit value (CUPTI's "invalid").
    if (raw == -1 || raw == int64_t{kNoStream}) return kNoStream;
    if (raw >= 0 && raw < int64_t{kNoStream}) return static_cast<uint32_t>(raw);
    auto [it, added] = folded_streams_.try_emplace(raw, 0);
    if (added) it->second = kNoStream - 1 - static_cast<uint32_t>(folded_streams_.size());
    return it->second;
  }

  // Adds device work to its device's timeline, unless the device would be one more than
  // kMaxDevicesPerTrace (counted). A hash lookup: traces may name many devices.
  void AddOp(int device, const DeviceOp& op) {
    auto slot = device_slots_.find(device);
    if (slot == device_slots_.end()) {
      if (device_slots_.size() >= kMaxDevicesPerTrace) {
        ++ops_beyond_device_limit_;
        return;
      }
      // An index, not a pointer: adding a device may reallocate t_.devices.
      slot = device_slots_.emplace(device, t_.devices.size()).first;
      t_.devices.emplace_back().device = device;
    }
    t_.devices[slot->second].ops.push_back(op);
  }

  // Saturating: a gpuidle trace's own count plus those found among its events.
  void AddZeroTimestampRecords(uint64_t n) {
    uint64_t& count = t_.info.zero_timestamp_records;
    if (__builtin_add_overflow(count, n, &count)) {
      count = std::numeric_limits<uint64_t>::max();
      zero_timestamp_count_saturated_ = true;
    }
  }

  // cuda_profiler_range events without "args.device" lie on their device's pid, which is only
  // known to be a device's once the whole trace is read (device work, deviceProperties).
  void ResolveProfilerRanges() {
    for (const auto& [pid, op] : pending_ranges_) {
      const int device = static_cast<int>(pid);
      const bool known = pid <= INT32_MAX &&
                         (device_slots_.contains(device) || visible_device_ids_.contains(device));
      if (known) {
        AddOp(device, op);
      } else {
        ++unplaced_ranges_;
      }
    }
    pending_ranges_.clear();
  }

  bool FinishEvent() {
    field_ = Field::kIgnored;
    if ((event_.bad & Bit(Field::kCat)) != 0) {
      Warn(EventCategory::kIgnored, Field::kCat, Problem::kWrongType, true);
      return true;
    }
    const EventCategory category = CategoryOf(event_.cat);
    if (category == EventCategory::kIgnored) return true;
    // Complete events only; metadata, flows and instants carry nothing the analysis uses.
    // gpuidle's host samples are instants.
    const bool instant = category == EventCategory::kHostSample;
    if ((event_.bad & Bit(Field::kPh)) != 0) {
      Warn(category, Field::kPh, Problem::kWrongType, true);
      return true;
    }
    if (instant ? (event_.ph != "i" && event_.ph != "I") : event_.ph != "X") return true;

    // Unusable fields: required ones cost the event, the others only themselves.
    const bool timed =
        category != EventCategory::kCudaSync && category != EventCategory::kCudaEvent;
    const uint32_t required = timed ? Bit(Field::kTs) | (instant ? 0 : Bit(Field::kDur)) : 0;
    const uint32_t bad = event_.bad & FieldsUsed(category);
    if (bad != 0) {
      for (int f = 0; f < kFieldCount; ++f) {
        if ((bad & (uint32_t{1} << f)) == 0) continue;
        const Field field = static_cast<Field>(f);
        // A device id out of range names a device that cannot be told apart from others (2^32
        // is not device 0): the work is skipped rather than put on its pid's device.
        const bool skipped = (required & (uint32_t{1} << f)) != 0 ||
                             (field == Field::kDevice && event_.problem[f] == Problem::kOutOfRange);
        Warn(category, field, event_.problem[f], skipped,
             field == event_.example_field ? absl::string_view(event_.example) : "");
        if (skipped) return true;
      }
    }
    if (timed && !event_.ts_ns) {
      Warn(category, Field::kTs, Problem::kMissing, true);
      return true;
    }
    if (timed && !instant && !event_.dur_ns) {
      Warn(category, Field::kDur, Problem::kMissing, true);
      return true;
    }
    const int64_t start = event_.ts_ns.value_or(0);
    int64_t end = start;
    if (timed && !instant) {
      if (*event_.dur_ns < 0) {
        Warn(category, Field::kDur, Problem::kNegative, true);
        return true;
      }
      // Cannot overflow (start < kMaxTimeNs, dur <= 2^52), but may end past kMaxTimeNs.
      if (__builtin_add_overflow(start, *event_.dur_ns, &end) || end >= kMaxTimeNs) {
        Warn(category, Field::kDur, Problem::kOutOfRange, true);
        return true;
      }
    }
    const uint64_t correlation = event_.correlation && *event_.correlation > 0
                                     ? static_cast<uint64_t>(*event_.correlation)
                                     : kNoCorrelation;
    switch (category) {
      case EventCategory::kKernel:
      case EventCategory::kMemcpy:
      case EventCategory::kMemset:
      case EventCategory::kProfilerRange: {
        if (start == 0) {  // CUPTI left the record without time stamps
          AddZeroTimestampRecords(1);
          return true;
        }
        DeviceOp op;
        op.start_ns = start;
        op.end_ns = end;
        op.correlation_id = correlation;
        op.name = InternText(event_.name);
        op.stream = event_.stream ? StreamId(*event_.stream) : kNoStream;
        op.bytes = event_.bytes ? static_cast<uint64_t>(*event_.bytes) : 0;
        if (category == EventCategory::kMemcpy) {
          op.kind = OpKind::kMemcpy;
          const CopyDescription copy = DescribeCopy(event_.name);
          op.copy_kind = copy.kind;
          op.pageable = copy.pageable;
        } else if (category == EventCategory::kMemset) {
          op.kind = OpKind::kMemset;
        } else {
          op.kind = OpKind::kKernel;
          op.communication = IsCommunicationKernel(event_.name);
        }
        if (event_.copy_kind) op.copy_kind = *event_.copy_kind;
        if (event_.pageable) op.pageable = *event_.pageable;
        if (event_.communication) op.communication = *event_.communication;
        // A device is whatever id the work carries (deviceProperties may list fewer: ROCm
        // traces number their devices otherwise). Kineto puts device work on a pid per device.
        // A pid beyond the range of device ids (negative, or 2^32) is no device: such work is
        // skipped, never merged into device 0.
        if (event_.device) {
          AddOp(static_cast<int>(*event_.device), op);
        } else if (category == EventCategory::kProfilerRange) {
          if (event_.has_pid) {
            pending_ranges_.emplace_back(event_.pid, op);
          } else {
            ++unplaced_ranges_;
          }
        } else if (!event_.has_pid) {
          AddOp(0, op);
        } else if (event_.pid <= INT32_MAX) {
          AddOp(static_cast<int>(event_.pid), op);
        } else {
          Warn(category, Field::kPid, Problem::kOutOfRange, true);
        }
        return true;
      }
      case EventCategory::kRuntime: {
        HostCall c;
        c.start_ns = start;
        c.end_ns = end;
        c.correlation_id = correlation;
        c.thread = event_.thread.value_or(event_.tid);
        c.name = InternText(event_.name);
        c.category = event_.call_category ? *event_.call_category : CategorizeCudaApi(event_.name);
        // gpuidle traces put the streams of syncs and waits on the call itself; Kineto's
        // cuda_sync records, joined later, take precedence.
        if (event_.stream) c.stream = StreamId(*event_.stream);
        if (event_.wait_on_stream) c.peer_stream = StreamId(*event_.wait_on_stream);
        t_.calls.push_back(c);
        return true;
      }
      case EventCategory::kCudaSync:
        // The GPU side of a sync or wait call (PyTorch's enable_cuda_sync_events): "Stream
        // Sync", "Event Sync", "Context Sync", "Stream Wait Event".
        if (correlation != kNoCorrelation) {
          CallStreams s;
          s.correlation = correlation;
          if (event_.stream) s.stream = StreamSlot(*event_.stream);
          if (event_.wait_on_stream) s.wait_on_stream = StreamSlot(*event_.wait_on_stream);
          if (event_.wait_on_record_correlation && *event_.wait_on_record_correlation > 0) {
            s.event_record_correlation = static_cast<uint64_t>(*event_.wait_on_record_correlation);
          }
          syncs_.push_back(s);
        }
        return true;
      case EventCategory::kCudaEvent:
        // Where an event was recorded: the cudaEventRecord call's correlation and stream.
        if (correlation != kNoCorrelation && event_.stream) {
          event_records_.push_back(EventRecordStream{correlation, StreamSlot(*event_.stream)});
        }
        return true;
      case EventCategory::kCpuOp:
      case EventCategory::kUserAnnotation:
      case EventCategory::kPythonFunction: {
        Range r;
        r.start_ns = start;
        r.end_ns = end;
        r.thread = event_.thread.value_or(event_.tid);
        r.name = InternText(event_.name);
        const RangeKind category_kind = category == EventCategory::kCpuOp ? RangeKind::kFrameworkOp
                                        : category == EventCategory::kPythonFunction
                                            ? RangeKind::kPython
                                            : RangeKind::kUser;
        r.kind = event_.range_kind ? *event_.range_kind : HostRangeKind(category_kind, event_.name);
        t_.ranges.push_back(r);
        return true;
      }
      case EventCategory::kHostSample: {
        HostSample sample;
        sample.time_ns = start;
        sample.thread = event_.thread.value_or(event_.tid);
        sample.stack = InternText(event_.stack);
        t_.samples.push_back(sample);
        return true;
      }
      case EventCategory::kIgnored:
        break;
    }
    return true;
  }

  // A stream for CallStreams (int64, negative = none), folded as StreamId folds op streams.
  int64_t StreamSlot(int64_t raw) {
    const uint32_t s = StreamId(raw);
    return s == kNoStream ? -1 : static_cast<int64_t>(s);
  }

  struct WarningCount {
    uint64_t count = 0;
    std::string example;
  };

  Timeline& t_;
  int depth_ = 0;
  int events_depth_ = 2;
  bool root_seen_ = false;
  bool root_is_array_ = false;
  bool in_events_ = false;
  bool in_args_ = false;
  bool saw_trace_events_ = false;
  Top top_ = Top::kNone;
  Field field_ = Field::kIgnored;
  int prop_key_ = 0;
  std::optional<int64_t> prop_id_;
  bool prop_id_bad_ = false;
  std::string prop_name_;
  Event event_;
  uint64_t event_index_ = 0;
  std::optional<int64_t> base_time_ns_;
  GpuidleKey gpuidle_key_ = GpuidleKey::kIgnored;
  bool gpuidle_format_seen_ = false;
  std::vector<CallStreams> syncs_;
  std::vector<EventRecordStream> event_records_;
  absl::flat_hash_map<int, size_t> device_slots_;  // device -> index in t_.devices
  absl::flat_hash_map<int64_t, uint32_t> folded_streams_;
  std::vector<std::pair<uint64_t, DeviceOp>> pending_ranges_;  // (pid, op)
  // (category, field, problem, event skipped) -> how many events, the first value.
  std::map<std::tuple<uint8_t, uint8_t, uint8_t, bool>, WarningCount> warnings_;
  uint64_t not_objects_ = 0;
  uint64_t unplaced_ranges_ = 0;
  uint64_t cut_strings_ = 0;
  uint64_t invalid_utf8_bytes_ = 0;
  uint64_t ops_beyond_device_limit_ = 0;
  uint64_t device_properties_beyond_limit_ = 0;
  bool zero_timestamp_count_saturated_ = false;
  absl::flat_hash_set<int> visible_device_ids_;
  uint64_t bad_device_properties_ = 0;
  bool bad_base_time_ = false;
  bool bad_distributed_info_ = false;
  std::string error_;
  BoundedStringBuffer string_buffer_;
  std::optional<size_t> number_too_long_at_;
};

// --- Fast scanning ---
// RapidJSON reads a generic stream one character at a time, with a bounds check, a copy of
// every character of every string and number onto its stack, and a loop per character of
// white space: most of the time of a large trace. The specialisations below, after this
// namespace, let it scan white space, strings and numbers inside the current chunk of the
// ChunkedJsonStream instead, and hand strings and numbers to the handler where they lie.
// Anything unusual (an escape, a control character, an exponent, NaN, a token that runs to the
// end of the chunk, malformed input) goes to RapidJSON's own code, so results and errors (codes
// and offsets) are the same as before, with bounds on what it copies: strings into a buffer of
// kMaxKeptStringBytes + 1 bytes (the rest is checked, not stored), numbers up to
// kMaxNumberBytes (a longer one is an error).

// Iterative: RapidJSON's recursive parser runs out of stack on deeply nested input (40,000
// '[' crashed it); the iterative one keeps its state on the heap, and the handler refuses
// input nested deeper than kMaxJsonDepth.
constexpr unsigned kParseFlags = rapidjson::kParseNumbersAsStringsFlag |
                                 rapidjson::kParseStopWhenDoneFlag |
                                 rapidjson::kParseNanAndInfFlag | rapidjson::kParseIterativeFlag;

// The same handler as another type: RapidJSON's generic string and number parsers, which the
// specialisations for KinetoHandler fall back on, are instantiated for this one.
class KinetoHandlerRef {
 public:
  explicit KinetoHandlerRef(KinetoHandler& h) : h_(h) {}
  bool Null() { return h_.Null(); }
  bool Bool(bool b) { return h_.Bool(b); }
  bool Int(int i) { return h_.Int(i); }
  bool Uint(unsigned u) { return h_.Uint(u); }
  bool Int64(int64_t i) { return h_.Int64(i); }
  bool Uint64(uint64_t u) { return h_.Uint64(u); }
  bool Double(double d) { return h_.Double(d); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool c) { return h_.RawNumber(s, n, c); }
  bool String(const char* s, rapidjson::SizeType n, bool c) { return h_.String(s, n, c); }
  bool Key(const char* s, rapidjson::SizeType n, bool c) { return h_.Key(s, n, c); }
  bool StartObject() { return h_.StartObject(); }
  bool EndObject(rapidjson::SizeType n) { return h_.EndObject(n); }
  bool StartArray() { return h_.StartArray(); }
  bool EndArray(rapidjson::SizeType n) { return h_.EndArray(n); }

 private:
  KinetoHandler& h_;
};

inline bool IsJsonSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// The first '"', '\\' or control character (< 0x20) in [p, end), or end.
inline const char* FindStringSpecial(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i control_max = _mm_set1_epi8(0x1f);
  for (; end - p >= 16; p += 16) {
    const __m128i s = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i control = _mm_cmpeq_epi8(_mm_max_epu8(s, control_max), control_max);
    const __m128i hit =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(s, quote), _mm_cmpeq_epi8(s, backslash)), control);
    const int mask = _mm_movemask_epi8(hit);
    if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
  }
#endif
  for (; p != end; ++p) {
    const unsigned char c = static_cast<unsigned char>(*p);
    if (c == '"' || c == '\\' || c < 0x20) return p;
  }
  return end;
}

// The end of a number of the form -?(0|[1-9][0-9]*)(.[0-9]+)? that starts at p, when the
// character after it is before end too (so the number cannot go on in the next chunk);
// nullptr for anything else. RapidJSON reads such a number without error (an integer part
// of 300 digits or fewer is not "too big") and stops where this stops.
inline const char* ScanPlainNumber(const char* p, const char* end) {
  if (p != end && *p == '-') ++p;
  if (p == end) return nullptr;
  if (*p == '0') {
    ++p;
  } else if (*p >= '1' && *p <= '9') {
    const char* first = p;
    while (p != end && IsDigit(*p)) ++p;
    if (p - first > 300) return nullptr;
  } else {
    return nullptr;
  }
  if (p != end && *p == '.') {
    ++p;
    if (p == end || !IsDigit(*p)) return nullptr;
    while (p != end && IsDigit(*p)) ++p;
  }
  if (p == end || *p == 'e' || *p == 'E') return nullptr;
  return p;
}

inline const char* FindNonSpace(const char* p, const char* end) {
  while (p != end && IsJsonSpace(*p)) ++p;
  return p;
}

// Consumes the white space at the cursor, across chunks.
ABSL_ATTRIBUTE_NOINLINE void SkipWhitespaceRun(ChunkedJsonStream& is) {
  for (;;) {
    const char* end = is.chunk_end();
    const char* p = FindNonSpace(is.cursor(), end);
    if (p == is.cursor()) return;
    is.SkipTo(p);  // at the end of the chunk, reads the next one
    if (p != end) return;
  }
}

}  // namespace
}  // namespace gpuidle::internal

namespace rapidjson {

template <>
inline void SkipWhitespace(gpuidle::internal::ChunkedJsonStream& is) {
  // Most calls find no white space or one space (after ':' and ','): those inline, longer
  // runs (line breaks and indentation) out of line.
  const char* p = is.cursor();
  if (!gpuidle::internal::IsJsonSpace(*p)) return;
  if (p + 1 < is.chunk_end() && !gpuidle::internal::IsJsonSpace(p[1])) {
    is.SkipTo(p + 1);
    return;
  }
  gpuidle::internal::SkipWhitespaceRun(is);
}

template <>
template <>
void GenericReader<UTF8<>, UTF8<>, CrtAllocator>::ParseString<
    gpuidle::internal::kParseFlags, gpuidle::internal::ChunkedJsonStream,
    gpuidle::internal::KinetoHandler>(gpuidle::internal::ChunkedJsonStream& is,
                                      gpuidle::internal::KinetoHandler& handler, bool isKey) {
  // is.cursor() is the opening quote. A string without escapes that ends in this chunk goes to
  // the handler where it lies (before SkipTo, which may overwrite the chunk).
  const char* begin = is.cursor() + 1;
  const char* end = is.chunk_end();
  const char* p = gpuidle::internal::FindStringSpecial(begin, end);
  if (p != end && *p == '"') {
    const SizeType length = static_cast<SizeType>(p - begin);
    const bool ok = isKey ? handler.Key(begin, length, true) : handler.String(begin, length, true);
    is.SkipTo(p + 1);
    if (RAPIDJSON_UNLIKELY(!ok)) RAPIDJSON_PARSE_ERROR(kParseErrorTermination, is.Tell());
    return;
  }
  // Everything else: RapidJSON's own string parser (escapes, errors and their offsets as
  // ever), into a buffer that keeps what the handler may keep, however long the string.
  gpuidle::internal::BoundedStringBuffer& out = handler.string_buffer();
  out.Clear();
  is.Take();  // the opening quote
  ParseStringToStream<gpuidle::internal::kParseFlags, UTF8<>, UTF8<>>(is, out);
  RAPIDJSON_PARSE_ERROR_EARLY_RETURN_VOID;
  const absl::string_view text = out.text();
  const SizeType length = static_cast<SizeType>(text.size());
  const bool ok =
      isKey ? handler.Key(text.data(), length, true) : handler.String(text.data(), length, true);
  if (RAPIDJSON_UNLIKELY(!ok)) RAPIDJSON_PARSE_ERROR(kParseErrorTermination, is.Tell());
}

template <>
template <>
void GenericReader<UTF8<>, UTF8<>, CrtAllocator>::ParseNumber<gpuidle::internal::kParseFlags,
                                                              gpuidle::internal::ChunkedJsonStream,
                                                              gpuidle::internal::KinetoHandler>(
    gpuidle::internal::ChunkedJsonStream& is, gpuidle::internal::KinetoHandler& handler) {
  const char* begin = is.cursor();
  const char* p = gpuidle::internal::ScanPlainNumber(begin, is.chunk_end());
  const size_t offset = is.Tell();
  if (p != nullptr) {
    if (RAPIDJSON_UNLIKELY(static_cast<size_t>(p - begin) > gpuidle::internal::kMaxNumberBytes)) {
      handler.NumberTooLong(offset);
      RAPIDJSON_PARSE_ERROR(kParseErrorTermination, offset);
    }
    const bool ok = handler.RawNumber(begin, static_cast<SizeType>(p - begin), true);
    is.SkipTo(p);  // p is inside the chunk: no read
    if (RAPIDJSON_UNLIKELY(!ok)) RAPIDJSON_PARSE_ERROR(kParseErrorTermination, offset);
    return;
  }
  // RapidJSON's own number parser copies the number whole: the stream ends the input soon
  // after kMaxNumberBytes, which bounds the copy, and a longer number is an error.
  gpuidle::internal::KinetoHandlerRef generic(handler);
  is.BeginToken(gpuidle::internal::kMaxNumberBytes);
  ParseNumber<gpuidle::internal::kParseFlags>(is, generic);
  is.EndToken();
  if (RAPIDJSON_UNLIKELY(is.token_too_long() ||
                         is.Tell() - offset > gpuidle::internal::kMaxNumberBytes)) {
    handler.NumberTooLong(offset);
    if (!HasParseError()) RAPIDJSON_PARSE_ERROR(kParseErrorTermination, is.Tell());
  }
}

}  // namespace rapidjson

namespace gpuidle::internal {
namespace {

// Adds offset to every time stamp; fails if one would leave the range of model/timeline.h.
absl::Status ShiftTimes(int64_t offset, Timeline* t) {
  bool overflow = false;
  auto shift = [&](int64_t& v) {
    overflow |= __builtin_add_overflow(v, offset, &v) || v < kMinTimeNs || v >= kMaxTimeNs;
  };
  for (DeviceTimeline& d : t->devices) {
    for (DeviceOp& op : d.ops) {
      shift(op.start_ns);
      shift(op.end_ns);
    }
  }
  for (HostCall& c : t->calls) {
    shift(c.start_ns);
    shift(c.end_ns);
  }
  for (Range& r : t->ranges) {
    shift(r.start_ns);
    shift(r.end_ns);
  }
  for (HostSample& s : t->samples) shift(s.time_ns);
  if (overflow) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"baseTimeNanoseconds\" = ", offset,
        " moves time stamps out of range (before -2^60 ns or from 2^63 - 2^60 ns on)"));
  }
  return absl::OkStatus();
}

// Reads the rest of a compressed source, for its verdict: a corrupt gzip stream can inflate to
// garbage that the JSON parser rejects before zlib notices, and then the corruption is the
// problem to report, not the JSON.
absl::Status DrainCompressed(ByteSource& source) {
  if (!source.compressed()) return absl::OkStatus();
  std::vector<char> buffer(1 << 16);
  for (;;) {
    absl::StatusOr<size_t> got = source.Read(buffer.data(), buffer.size());
    if (!got.ok()) return got.status();
    if (*got == 0) return absl::OkStatus();
  }
}

// The first bytes of a source read ahead (to recognise text that is not UTF-8 JSON at all),
// then the rest, as one source.
class PrefixedSource : public ByteSource {
 public:
  PrefixedSource(ByteSource& inner, std::string prefix)
      : inner_(inner), prefix_(std::move(prefix)) {}
  absl::StatusOr<size_t> Read(char* buffer, size_t n) override {
    if (pos_ < prefix_.size()) {
      const size_t k = std::min(n, prefix_.size() - pos_);
      std::memcpy(buffer, prefix_.data() + pos_, k);
      pos_ += k;
      return k;
    }
    return inner_.Read(buffer, n);
  }
  uint64_t file_bytes_read() const override { return inner_.file_bytes_read(); }
  bool compressed() const override { return inner_.compressed(); }

 private:
  ByteSource& inner_;
  std::string prefix_;
  size_t pos_ = 0;
};

// The first bytes of the text: enough for every byte order mark.
struct TextStart {
  std::array<unsigned char, 4> bytes{};
  size_t size = 0;
  // The byte at i, or -1 past the end.
  int at(size_t i) const { return i < size ? bytes[i] : -1; }
  std::string str() const { return std::string(reinterpret_cast<const char*>(bytes.data()), size); }
};

absl::StatusOr<TextStart> ReadTextStart(ByteSource& source) {
  TextStart start;
  while (start.size < start.bytes.size()) {
    GPUIDLE_ASSIGN_OR_RETURN(const size_t got,
                             source.Read(reinterpret_cast<char*>(start.bytes.data()) + start.size,
                                         start.bytes.size() - start.size));
    if (got == 0) break;
    start.size += got;
  }
  return start;
}

// What the first bytes say about text that is not UTF-8 JSON: UTF-16 or UTF-32 (with a byte
// order mark, or JSON's ASCII first character next to NUL bytes), or NUL bytes (a device such
// as /dev/zero behind a pipe, a file of zeros). Empty if none of these.
std::string NotUtf8Json(const TextStart& s) {
  const auto unicode = [](absl::string_view what) {
    return absl::StrCat("the text is ", what,
                        "; gpuidle reads JSON in UTF-8: convert it first (iconv -f ", what,
                        " -t UTF-8)");
  };
  const auto ascii = [](int c) { return c > 0 && c < 0x80; };
  if ((s.at(0) == 0 && s.at(1) == 0 && s.at(2) == 0xfe && s.at(3) == 0xff) ||
      (s.at(0) == 0xff && s.at(1) == 0xfe && s.at(2) == 0 && s.at(3) == 0) ||
      (ascii(s.at(0)) && s.at(1) == 0 && s.at(2) == 0 && s.at(3) == 0) ||
      (s.at(0) == 0 && s.at(1) == 0 && s.at(2) == 0 && ascii(s.at(3)))) {
    return unicode("UTF-32");
  }
  if ((s.at(0) == 0xfe && s.at(1) == 0xff) || (s.at(0) == 0xff && s.at(1) == 0xfe) ||
      (ascii(s.at(0)) && s.at(1) == 0) || (s.at(0) == 0 && ascii(s.at(1)))) {
    return unicode("UTF-16");
  }
  if (s.at(0) == 0) return "the text starts with NUL bytes: it is not JSON";
  return "";
}

absl::StatusOr<Timeline> ReadKinetoTraceOrThrow(ByteSource& raw_source, size_t chunk_bytes) {
  GPUIDLE_ASSIGN_OR_RETURN(const TextStart start, ReadTextStart(raw_source));
  if (const std::string problem = NotUtf8Json(start); !problem.empty()) {
    return absl::InvalidArgumentError(problem);
  }
  std::string prefix = start.str();
  // A UTF-8 byte order mark (Windows tools write one) is no part of the JSON.
  if (absl::StartsWith(prefix, "\xef\xbb\xbf")) prefix.erase(0, 3);
  PrefixedSource source(raw_source, std::move(prefix));

  Timeline timeline;
  timeline.info.source = "pytorch-profiler";
  KinetoHandler handler(&timeline);
  ChunkedJsonStream stream(source, chunk_bytes);
  rapidjson::Reader reader;
  const rapidjson::ParseResult ok = reader.Parse<kParseFlags>(stream, handler);
  if (!stream.source_status().ok()) return stream.source_status();
  if (handler.number_too_long_at()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a number longer than ", kMaxNumberBytes, " bytes (at byte ",
                     *handler.number_too_long_at(), "): not a trace"));
  }
  if (!ok) {
    if (ok.Code() == rapidjson::kParseErrorDocumentEmpty && !stream.at_end()) {
      return absl::InvalidArgumentError(absl::StrCat("a NUL byte where JSON should begin (at byte ",
                                                     ok.Offset(), "): it is not JSON"));
    }
    if (stream.at_end() && !handler.root_seen() && handler.error().empty()) {
      return absl::InvalidArgumentError("holds no JSON document (only white space)");
    }
    if (!stream.at_end()) GPUIDLE_RETURN_IF_ERROR(DrainCompressed(source));
    if (!handler.error().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(handler.error(), " (at byte ", ok.Offset(), ")"));
    }
    if (stream.at_end()) {
      return absl::DataLossError(
          absl::StrCat("the JSON ends early at byte ", ok.Offset(), ": the trace is truncated"));
    }
    if (!handler.root_seen()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "not JSON: ", rapidjson::GetParseError_En(ok.Code()), " (at byte ", ok.Offset(), ")"));
    }
    return absl::InvalidArgumentError(absl::StrCat("malformed JSON at byte ", ok.Offset(), ": ",
                                                   rapidjson::GetParseError_En(ok.Code())));
  }
  // kParseStopWhenDoneFlag stops after the root; anything but whitespace after it is an error.
  while (stream.Peek() == ' ' || stream.Peek() == '\n' || stream.Peek() == '\r' ||
         stream.Peek() == '\t') {
    stream.Take();
  }
  if (!stream.source_status().ok()) return stream.source_status();
  if (!stream.at_end()) {  // at_end(), not Peek() == '\0': a NUL byte is data too
    GPUIDLE_RETURN_IF_ERROR(DrainCompressed(source));
    return absl::InvalidArgumentError(absl::StrCat(
        "unexpected data after the end of the JSON document (at byte ", stream.Tell(), ")"));
  }
  if (!handler.saw_trace_events()) {
    return absl::InvalidArgumentError(
        "no \"traceEvents\" array: this JSON is not a Chrome trace from the PyTorch profiler");
  }
  handler.Finish();
  AttachCallStreams(handler.syncs(), &timeline, handler.event_records());
  // Kineto writes time stamps relative to baseTimeNanoseconds; absolute times let traces of
  // several ranks line up.
  if (handler.base_time_ns()) {
    GPUIDLE_RETURN_IF_ERROR(ShiftTimes(*handler.base_time_ns(), &timeline));
  }
  timeline.Finalize();
  return timeline;
}

}  // namespace

absl::StatusOr<Timeline> ReadKinetoTrace(ByteSource& source) {
  return ReadKinetoTrace(source, size_t{1} << 20);
}

absl::StatusOr<Timeline> ReadKinetoTrace(ByteSource& source, size_t chunk_bytes) {
  // Memory grows with what the trace holds: a trace too large for this machine is an error,
  // never an abort (or a dead Python interpreter).
  try {
    return ReadKinetoTraceOrThrow(source, chunk_bytes);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrCat("out of memory while reading the trace (after ", source.file_bytes_read(),
                     " bytes of the file)"));
  }
}

}  // namespace gpuidle::internal
