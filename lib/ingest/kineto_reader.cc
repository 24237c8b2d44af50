#include "ingest/kineto_reader.h"

#include <cstring>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/time_units.h"
#include "ingest/json_stream.h"
#include "model/cuda_api.h"
#include "rapidjson/error/en.h"
#include "rapidjson/reader.h"

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
  if (k == "correlation") return Field::kCorrelation;
  if (k == "device") return Field::kDevice;
  if (k == "stream") return Field::kStream;
  if (k == "bytes") return Field::kBytes;
  if (k == "wait_on_stream") return Field::kWaitOnStream;
  return Field::kIgnored;
}

absl::string_view FieldName(Field f) {
  switch (f) {
    case Field::kPh: return "ph";
    case Field::kCat: return "cat";
    case Field::kName: return "name";
    case Field::kPid: return "pid";
    case Field::kTid: return "tid";
    case Field::kTs: return "ts";
    case Field::kDur: return "dur";
    case Field::kArgs: return "args";
    case Field::kCorrelation: return "args.correlation";
    case Field::kDevice: return "args.device";
    case Field::kStream: return "args.stream";
    case Field::kBytes: return "args.bytes";
    case Field::kWaitOnStream: return "args.wait_on_stream";
    case Field::kIgnored: break;
  }
  return "?";
}

enum class EventCategory : uint8_t {
  kIgnored,
  kKernel,
  kMemcpy,
  kMemset,
  kRuntime,  // cuda_runtime and cuda_driver
  kCudaSync,
  kCpuOp,
  kUserAnnotation,
  kPythonFunction,
};

EventCategory CategoryOf(absl::string_view cat) {
  // Current Kineto names first; older releases used capitalised or shorter ones.
  if (cat == "kernel" || cat == "Kernel") return EventCategory::kKernel;
  if (cat == "gpu_memcpy" || cat == "Memcpy") return EventCategory::kMemcpy;
  if (cat == "gpu_memset" || cat == "Memset") return EventCategory::kMemset;
  if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "Runtime" || cat == "Driver") {
    return EventCategory::kRuntime;
  }
  if (cat == "cuda_sync") return EventCategory::kCudaSync;
  if (cat == "cpu_op" || cat == "Operator") return EventCategory::kCpuOp;
  if (cat == "user_annotation") return EventCategory::kUserAnnotation;
  if (cat == "python_function") return EventCategory::kPythonFunction;
  return EventCategory::kIgnored;
}

uint64_t Fnv1a(absl::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// One event's fields, reused from event to event (no allocation once warm).
struct Event {
  std::string ph, cat, name;
  std::optional<int64_t> ts_ns, dur_ns;
  uint64_t pid = 0, tid = 0;
  bool has_pid = false;
  std::optional<int64_t> correlation, device, stream, bytes, wait_on_stream;

  void Clear() {
    ph.clear();
    cat.clear();
    name.clear();
    ts_ns.reset();
    dur_ns.reset();
    pid = tid = 0;
    has_pid = false;
    correlation.reset();
    device.reset();
    stream.reset();
    bytes.reset();
    wait_on_stream.reset();
  }
};

struct SyncRecord {
  uint64_t correlation;
  std::optional<int64_t> stream, wait_on_stream;
};

enum class Top : uint8_t { kNone, kTraceEvents, kDeviceProperties, kDistributedInfo, kBaseTime };

class KinetoHandler {
 public:
  explicit KinetoHandler(Timeline* timeline) : t_(*timeline) {}

  // --- RapidJSON SAX interface ---
  bool Null() { return Scalar(kNull, {}); }
  bool Bool(bool) { return Scalar(kBool, {}); }
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
    } else if (in_events_ && rel == 1) {
      field_ = EventField(k);
    } else if (in_events_ && rel == 2 && in_args_) {
      field_ = ArgField(k);
    } else if (top_ == Top::kDeviceProperties && depth_ == 3) {
      prop_key_ = k == "id" ? 1 : k == "name" ? 2 : 0;
    } else if (top_ == Top::kDistributedInfo && depth_ == 2) {
      prop_key_ = k == "rank" ? 1 : k == "world_size" ? 2 : 0;
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
          return TypeError(field_, "an object");
        }
      } else if (rel == 2 && in_args_ && field_ != Field::kIgnored) {
        return TypeError(field_, "an object");
      }
    } else if (depth_ == 1 && top_ == Top::kTraceEvents) {
      return Fail("\"traceEvents\" must be an array of events, not an object");
    } else if (top_ == Top::kDeviceProperties && depth_ == 2) {
      prop_id_.reset();
      prop_name_.clear();
    }
    ++depth_;
    return true;
  }
  bool EndObject(rapidjson::SizeType) {
    --depth_;
    if (in_events_) {
      const int rel = depth_ - events_depth_;
      if (rel == 0) return FinishEvent();
      if (rel == 1) in_args_ = false;
    } else if (top_ == Top::kDeviceProperties && depth_ == 2 && prop_id_) {
      t_.info.visible_devices.push_back(static_cast<int>(*prop_id_));
      t_.info.visible_device_names.push_back(prop_name_);
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
    } else if (in_events_) {
      const int rel = depth_ - events_depth_;
      if (rel == 0) return NotAnObject("an array");
      if (rel == 1 && field_ != Field::kIgnored) return TypeError(field_, "an array");
      if (rel == 2 && in_args_ && field_ != Field::kIgnored) return TypeError(field_, "an array");
    }
    ++depth_;
    return true;
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
  const std::vector<SyncRecord>& syncs() const { return syncs_; }

 private:
  enum ScalarKind { kNull, kBool, kNumber, kString };

  static absl::string_view KindName(ScalarKind k) {
    switch (k) {
      case kNull: return "null";
      case kBool: return "a boolean";
      case kNumber: return "a number";
      case kString: return "a string";
    }
    return "?";
  }

  bool Unexpected() { return Fail("internal error: number not delivered as text"); }

  bool Fail(std::string message) {
    error_ = std::move(message);
    return false;
  }

  std::string EventRef() const {
    std::string s = absl::StrCat("event #", event_index_);
    if (!event_.name.empty()) absl::StrAppend(&s, " (\"", event_.name.substr(0, 60), "\")");
    return s;
  }

  bool TypeError(Field f, absl::string_view got) {
    const bool text = f == Field::kPh || f == Field::kCat || f == Field::kName;
    const bool id = f == Field::kPid || f == Field::kTid;
    return Fail(absl::StrCat(EventRef(), ": field \"", FieldName(f), "\" must be ",
                             text ? "a string" : id ? "a number or a string"
                             : f == Field::kArgs ? "an object" : "a number",
                             ", not ", got));
  }

  bool NotAnObject(absl::string_view got) {
    ++event_index_;
    return Fail(absl::StrCat("event #", event_index_, " of \"traceEvents\" must be an object, not ",
                             got));
  }

  bool Scalar(ScalarKind kind, absl::string_view text) {
    if (depth_ == 0) {
      root_seen_ = true;
      return Fail(absl::StrCat("the JSON document is ", KindName(kind),
                               ", not a trace (an object with \"traceEvents\")"));
    }
    if (in_events_) {
      const int rel = depth_ - events_depth_;
      if (rel == 0) return NotAnObject(KindName(kind));
      if (rel == 1) return EventValue(kind, text);
      if (rel == 2 && in_args_) return ArgValue(kind, text);
      return true;
    }
    if (depth_ == 1 && !root_is_array_) {
      if (top_ == Top::kTraceEvents) {
        return Fail(absl::StrCat("\"traceEvents\" must be an array of events, not ",
                                 KindName(kind)));
      }
      if (top_ == Top::kBaseTime && kind == kNumber) base_time_ns_ = ParseInt64(text);
      return true;
    }
    if (top_ == Top::kDeviceProperties && depth_ == 3) {
      if (prop_key_ == 1 && kind == kNumber) prop_id_ = ParseInt64(text);
      if (prop_key_ == 2 && kind == kString) prop_name_ = std::string(text);
    } else if (top_ == Top::kDistributedInfo && depth_ == 2 && kind == kNumber) {
      const std::optional<int64_t> v = ParseInt64(text);
      if (v && prop_key_ == 1) t_.info.rank = static_cast<int>(*v);
      if (v && prop_key_ == 2) t_.info.world_size = static_cast<int>(*v);
    }
    return true;
  }

  bool EventValue(ScalarKind kind, absl::string_view text) {
    switch (field_) {
      case Field::kPh:
      case Field::kCat:
      case Field::kName: {
        if (kind != kString) return TypeError(field_, KindName(kind));
        std::string& dst = field_ == Field::kPh ? event_.ph
                           : field_ == Field::kCat ? event_.cat : event_.name;
        dst.assign(text.data(), text.size());
        return true;
      }
      case Field::kTs:
      case Field::kDur: {
        if (kind != kNumber) return TypeError(field_, KindName(kind));
        const std::optional<int64_t> ns = ParseDecimalToNs(text, kNsPerUs);
        if (!ns) {
          return Fail(absl::StrCat(EventRef(), ": field \"", FieldName(field_), "\" = ", text,
                                   " is out of range"));
        }
        (field_ == Field::kTs ? event_.ts_ns : event_.dur_ns) = *ns;
        return true;
      }
      case Field::kPid:
      case Field::kTid: {
        uint64_t id = 0;
        if (kind == kNumber) {
          const std::optional<int64_t> v = ParseInt64(text);
          id = v ? static_cast<uint64_t>(*v) : Fnv1a(text);
        } else if (kind == kString) {
          id = Fnv1a(text);
        } else {
          return TypeError(field_, KindName(kind));
        }
        if (field_ == Field::kPid) {
          event_.pid = id;
          event_.has_pid = kind == kNumber;
        } else {
          event_.tid = id;
        }
        return true;
      }
      case Field::kArgs:
        return TypeError(field_, KindName(kind));
      default:
        return true;
    }
  }

  bool ArgValue(ScalarKind kind, absl::string_view text) {
    if (field_ == Field::kIgnored || kind == kNull) return true;
    if (kind != kNumber) return TypeError(field_, KindName(kind));
    std::optional<int64_t> v = ParseInt64(text);
    if (!v) {
      return Fail(absl::StrCat(EventRef(), ": field \"", FieldName(field_), "\" = ", text,
                               " is not an integer"));
    }
    switch (field_) {
      case Field::kCorrelation: event_.correlation = v; break;
      case Field::kDevice: event_.device = v; break;
      case Field::kStream: event_.stream = v; break;
      case Field::kBytes: event_.bytes = v; break;
      case Field::kWaitOnStream: event_.wait_on_stream = v; break;
      default: break;
    }
    return true;
  }

  bool FinishEvent() {
    field_ = Field::kIgnored;
    if (event_.ph != "X") return true;  // complete events only; metadata, flows, instants
    const EventCategory category = CategoryOf(event_.cat);
    if (category == EventCategory::kIgnored) return true;
    if (!event_.ts_ns) return Fail(absl::StrCat(EventRef(), ": no \"ts\""));
    if (!event_.dur_ns) return Fail(absl::StrCat(EventRef(), ": no \"dur\""));
    if (*event_.dur_ns < 0) return Fail(absl::StrCat(EventRef(), ": negative \"dur\""));
    const int64_t start = *event_.ts_ns;
    const int64_t end = start + *event_.dur_ns;
    const StringId name = t_.strings.Intern(event_.name);
    const uint64_t correlation =
        event_.correlation ? static_cast<uint64_t>(*event_.correlation) : kNoCorrelation;
    switch (category) {
      case EventCategory::kKernel:
      case EventCategory::kMemcpy:
      case EventCategory::kMemset: {
        if (start == 0) {  // CUPTI left the record without time stamps
          ++t_.info.zero_timestamp_records;
          return true;
        }
        const int64_t device =
            event_.device ? *event_.device : event_.has_pid ? static_cast<int64_t>(event_.pid) : 0;
        DeviceOp op;
        op.start_ns = start;
        op.end_ns = end;
        op.correlation_id = correlation;
        op.name = name;
        op.stream = event_.stream ? static_cast<uint32_t>(*event_.stream) : kNoStream;
        op.bytes = event_.bytes ? static_cast<uint64_t>(*event_.bytes) : 0;
        if (category == EventCategory::kKernel) {
          op.kind = OpKind::kKernel;
          op.communication = IsCommunicationKernel(event_.name);
        } else if (category == EventCategory::kMemcpy) {
          op.kind = OpKind::kMemcpy;
          const CopyDescription copy = DescribeCopy(event_.name);
          op.copy_kind = copy.kind;
          op.pageable = copy.pageable;
        } else {
          op.kind = OpKind::kMemset;
        }
        DeviceTimeline*& slot = device_slots_[static_cast<int>(device)];
        if (slot == nullptr) slot = &t_.DeviceFor(static_cast<int>(device));
        slot->ops.push_back(op);
        return true;
      }
      case EventCategory::kRuntime: {
        HostCall c;
        c.start_ns = start;
        c.end_ns = end;
        c.correlation_id = correlation;
        c.thread = event_.tid;
        c.name = name;
        c.category = CategorizeCudaApi(event_.name);
        t_.calls.push_back(c);
        return true;
      }
      case EventCategory::kCudaSync:
        if (correlation != kNoCorrelation) {
          syncs_.push_back(SyncRecord{correlation, event_.stream, event_.wait_on_stream});
        }
        return true;
      case EventCategory::kCpuOp:
      case EventCategory::kUserAnnotation:
      case EventCategory::kPythonFunction: {
        Range r;
        r.start_ns = start;
        r.end_ns = end;
        r.thread = event_.tid;
        r.name = name;
        r.kind = category == EventCategory::kCpuOp            ? RangeKind::kFrameworkOp
                 : category == EventCategory::kPythonFunction ? RangeKind::kPython
                                                              : UserRangeKind(event_.name);
        t_.ranges.push_back(r);
        return true;
      }
      case EventCategory::kIgnored:
        break;
    }
    return true;
  }

  static RangeKind UserRangeKind(absl::string_view name) {
    if (absl::StartsWith(name, "ProfilerStep#")) return RangeKind::kStep;
    // torch.profiler names every DataLoader fetch "enumerate(DataLoader)#...__next__".
    if (absl::StartsWith(name, "enumerate(DataLoader)")) return RangeKind::kData;
    return RangeKind::kUser;
  }

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
  std::string prop_name_;
  Event event_;
  uint64_t event_index_ = 0;
  std::optional<int64_t> base_time_ns_;
  std::vector<SyncRecord> syncs_;
  absl::flat_hash_map<int, DeviceTimeline*> device_slots_;
  std::string error_;
};

// Attaches the streams of cuda_sync records to the calls they belong to.
void JoinSyncRecords(const std::vector<SyncRecord>& syncs, Timeline* t) {
  if (syncs.empty()) return;
  absl::flat_hash_map<uint64_t, size_t> by_correlation;
  for (size_t i = 0; i < t->calls.size(); ++i) {
    if (t->calls[i].correlation_id != kNoCorrelation) {
      by_correlation.emplace(t->calls[i].correlation_id, i);
    }
  }
  for (const SyncRecord& s : syncs) {
    auto it = by_correlation.find(s.correlation);
    if (it == by_correlation.end()) continue;
    HostCall& c = t->calls[it->second];
    if (s.stream) c.stream = static_cast<uint32_t>(*s.stream);
    if (s.wait_on_stream) c.peer_stream = static_cast<uint32_t>(*s.wait_on_stream);
  }
}

void ShiftTimes(int64_t offset, Timeline* t) {
  for (DeviceTimeline& d : t->devices) {
    for (DeviceOp& op : d.ops) {
      op.start_ns += offset;
      op.end_ns += offset;
    }
  }
  for (HostCall& c : t->calls) {
    c.start_ns += offset;
    c.end_ns += offset;
  }
  for (Range& r : t->ranges) {
    r.start_ns += offset;
    r.end_ns += offset;
  }
}

}  // namespace

absl::StatusOr<Timeline> ReadKinetoTrace(ByteSource& source) {
  Timeline timeline;
  timeline.info.source = "pytorch-profiler";
  KinetoHandler handler(&timeline);
  ChunkedJsonStream stream(source);
  rapidjson::Reader reader;
  constexpr unsigned kFlags = rapidjson::kParseNumbersAsStringsFlag |
                              rapidjson::kParseStopWhenDoneFlag |
                              rapidjson::kParseNanAndInfFlag;
  const rapidjson::ParseResult ok = reader.Parse<kFlags>(stream, handler);
  if (!stream.source_status().ok()) return stream.source_status();
  if (!ok) {
    if (!handler.error().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(handler.error(), " (at byte ", ok.Offset(), ")"));
    }
    if (stream.at_end()) {
      return absl::DataLossError(absl::StrCat("the JSON ends early at byte ", ok.Offset(),
                                              ": the trace is truncated"));
    }
    if (!handler.root_seen()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "not JSON: ", rapidjson::GetParseError_En(ok.Code()), " (at byte ", ok.Offset(), ")"));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed JSON at byte ", ok.Offset(), ": ", rapidjson::GetParseError_En(ok.Code())));
  }
  // kParseStopWhenDoneFlag stops after the root; anything but whitespace after it is an error.
  while (stream.Peek() == ' ' || stream.Peek() == '\n' || stream.Peek() == '\r' ||
         stream.Peek() == '\t') {
    stream.Take();
  }
  if (!stream.source_status().ok()) return stream.source_status();
  if (stream.Peek() != '\0') {
    return absl::InvalidArgumentError(
        absl::StrCat("unexpected data after the end of the JSON document (at byte ",
                     stream.Tell(), ")"));
  }
  if (!handler.saw_trace_events()) {
    return absl::InvalidArgumentError(
        "no \"traceEvents\" array: this JSON is not a Chrome trace from the PyTorch profiler");
  }
  JoinSyncRecords(handler.syncs(), &timeline);
  // Kineto writes time stamps relative to baseTimeNanoseconds; absolute times let traces of
  // several ranks line up.
  if (handler.base_time_ns()) ShiftTimes(*handler.base_time_ns(), &timeline);
  for (size_t i = 0; i < timeline.info.visible_devices.size(); ++i) {
    for (DeviceTimeline& d : timeline.devices) {
      if (d.device == timeline.info.visible_devices[i]) {
        d.name = timeline.info.visible_device_names[i];
      }
    }
  }
  timeline.Finalize();
  return timeline;
}

}  // namespace gpuidle::internal
