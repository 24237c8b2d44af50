// The gpuidle trace, format "gpuidle.trace/2" (docs/TRACE_FORMAT.md).
//
// Written by hand rather than through a JSON writer: one event per line keeps the file easy to
// read and diff, and a trace of millions of events needs nothing but appends to a buffer that
// goes to the output whenever it holds a megabyte.
#include "report/trace_writer.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "core/output_file.h"
#include "core/text_safety.h"
#include "core/version.h"
#include "model/correlation_index.h"
#include "model/cuda_api.h"
#include "model/gpu_reading_columns.h"
#include "model/trace_names.h"

namespace gpuidle::internal {
namespace {

// The track of each device that shows the gaps: a tid CUDA never gives a stream (it counts
// streams up from small numbers; kNoStream, 0xffffffff, is the track of ops without one).
constexpr uint64_t kGapTrackTid = 0xfffffffeu;
// The track of each device that shows its collectives waiting for peers, below the gaps'.
constexpr uint64_t kWaitTrackTid = 0xfffffffdu;
// Waiting for peers: busy time, yet no work done. Its own colour (magenta), apart from the
// causes' families, wherever it is drawn: the comm_wait gaps and the waiting collectives alike.
constexpr absl::string_view kWaitingColour = "detailed_memory_dump";  // 180,0,180

// Chrome-trace viewers take a tid as 32 bits (Perfetto puts a larger one on the process's main
// track). Host threads beyond that (pthread_t values) are drawn under stand-in tids from here up
// and keep their real id in args.gpuidle_thread.
constexpr uint64_t kFirstStandInTid = 0xf0000000u;
constexpr uint64_t kMaxTid = 0xffffffffu;

// The buffer goes to the output when it holds this much.
constexpr size_t kFlushBytes = size_t{1} << 20;

// Time stamps are written relative to a base this far before the earliest one: the Kineto
// reader takes a device event at ts 0 for a CUPTI record without time stamps.
constexpr int64_t kBaseMarginNs = 1000;

void AppendString(std::string* out, absl::string_view raw) {
  static constexpr char kHex[] = "0123456789abcdef";
  // JSON must be UTF-8; a name that is not is written with U+FFFD for its bad bytes.
  std::string valid;
  if (!IsValidUtf8(raw)) valid = ToValidUtf8(raw);
  const absl::string_view s = valid.empty() ? raw : absl::string_view(valid);
  out->push_back('"');
  size_t run = 0;  // start of the characters not yet appended
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out->append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        out->append("\\u00");
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 15]);
    }
  }
  out->append(s.data() + run, s.size() - run);
  out->push_back('"');
}

// Thousandths as units with exactly three decimals: exact (nanoseconds as microseconds, which
// Kineto writes so; milliwatts as watts).
void AppendThousandths(std::string* out, uint64_t ns) {
  char buffer[32];
  char* p = buffer + sizeof(buffer);
  uint64_t frac = ns % 1000;
  for (int i = 0; i < 3; ++i) {
    *--p = static_cast<char>('0' + frac % 10);
    frac /= 10;
  }
  *--p = '.';
  uint64_t whole = ns / 1000;
  do {
    *--p = static_cast<char>('0' + whole % 10);
    whole /= 10;
  } while (whole != 0);
  out->append(p, static_cast<size_t>(buffer + sizeof(buffer) - p));
}

void AppendMicros(std::string* out, uint64_t ns) { AppendThousandths(out, ns); }

// The shortest decimal that reads back as the same float; null for one that is not finite
// (JSON has no such numbers), which readers take as "not measured".
void AppendFloat(std::string* out, float v) {
  if (!std::isfinite(v)) {
    out->append("null");
    return;
  }
  char buffer[32];
  const std::to_chars_result r = std::to_chars(buffer, buffer + sizeof(buffer), v);
  out->append(buffer, r.ptr);
}

// One cell of a device readings' column (model/gpu_reading_columns.h).
template <typename Row>
void AppendCell(std::string* out, const ReadingColumn<Row>& c, const Row& row) {
  if constexpr (std::is_same_v<Row, GpuMetricSample>) {
    if (c.name == kClockEventsColumn && !row.has_clock_events) {
      out->append("null");
      return;
    }
  }
  std::visit(
      [&](auto member) {
        if constexpr (std::is_same_v<std::remove_cvref_t<decltype(row.*member)>, float>) {
          AppendFloat(out, row.*member);
        } else {
          absl::StrAppend(out, row.*member);
        }
      },
      c.field);
}

template <typename T>
void AppendOptional(std::string* out, const std::optional<T>& v) {
  if (v) {
    absl::StrAppend(out, *v);
  } else {
    out->append("null");
  }
}

// Reserved colour names of Chrome's trace viewer (catapult's color_scheme; chrome://tracing
// honours "cname", Perfetto colours by name): one family per cause, one shade per subcause.
// Reds for data-starved, blues for launch-bound, yellows for sync-bound, grey for no evidence.
absl::string_view GapColour(Subcause s) {
  switch (s) {
    case Subcause::kDataLoader:
      return "terrible";  // 180,0,0
    case Subcause::kH2DCopy:
      return "rail_animation";  // 244,74,63
    case Subcause::kHost:
      return "cq_build_failed";  // 238,136,136
    case Subcause::kLaunchOverhead:
      return "rail_response";  // 67,135,253
    case Subcause::kKernelGap:
      return "thread_state_runnable";  // 133,160,210
    case Subcause::kRequestsWaiting:
      return "light_memory_dump";  // 0,0,180
    case Subcause::kHostSync:
      return "yellow";  // 255,255,0
    case Subcause::kDeviceWait:
      return "olive";  // 100,100,0
    case Subcause::kCommWait:
      return kWaitingColour;
    case Subcause::kCopyWait:
      return "cq_build_running";  // 255,255,119
    case Subcause::kAllocator:
      return "startup";  // 230,230,0
    case Subcause::kOtherProcess:
      return "bad";  // 180,125,0
    case Subcause::kUnattributed:
      return "grey";  // 221,221,221
  }
  return "grey";
}

// Milliseconds with one decimal, for names a person reads ("12.5 ms").
std::string Millis(int64_t ns) { return absl::StrFormat("%.1f ms", static_cast<double>(ns) / 1e6); }

absl::string_view OpCategory(OpKind k) {
  switch (k) {
    case OpKind::kKernel:
      return kKernelCategory;
    case OpKind::kMemcpy:
      return kMemcpyCategory;
    case OpKind::kMemset:
      return kMemsetCategory;
  }
  return kKernelCategory;
}

absl::string_view RangeCategory(RangeKind k) {
  switch (k) {
    case RangeKind::kFrameworkOp:
      return kCpuOpCategory;
    case RangeKind::kPython:
      return kPythonFunctionCategory;
    case RangeKind::kStep:
    case RangeKind::kData:
    case RangeKind::kUser:
    case RangeKind::kRequest:
    case RangeKind::kRequestRun:
      return kUserAnnotationCategory;
  }
  return kUserAnnotationCategory;
}

// What the Kineto reader concludes from a device op's category and name alone; where the op
// says otherwise, the writer adds the gpuidle_* arg that overrides it.
struct ImpliedOp {
  CopyKind copy_kind = CopyKind::kUnknown;
  bool pageable = false;
  bool communication = false;
};

ImpliedOp ImpliedByName(OpKind kind, absl::string_view name) {
  ImpliedOp implied;
  if (kind == OpKind::kKernel) {
    implied.communication = IsCommunicationKernel(name);
  } else if (kind == OpKind::kMemcpy) {
    const CopyDescription copy = DescribeCopy(name);
    implied.copy_kind = copy.kind;
    implied.pageable = copy.pageable;
  }
  return implied;
}

// What the reader concludes from a range's category and name (trace_names.h: step and data
// names win in every host category).
RangeKind ImpliedRangeKind(RangeKind kind, absl::string_view name) {
  const absl::string_view category = RangeCategory(kind);
  const RangeKind category_kind = category == kCpuOpCategory            ? RangeKind::kFrameworkOp
                                  : category == kPythonFunctionCategory ? RangeKind::kPython
                                                                        : RangeKind::kUser;
  return HostRangeKind(category_kind, name);
}

// Appends an event's args object, only when it gets a key.
class ArgsWriter {
 public:
  explicit ArgsWriter(std::string* out) : out_(out) {}

  // Appends the key; the caller appends its value.
  std::string* Key(absl::string_view key) {
    if (open_) {
      out_->append(",\"");
    } else {
      absl::StrAppend(out_, ",\"", kArgsField, "\":{\"");
    }
    open_ = true;
    out_->append(key.data(), key.size());
    out_->append("\":");
    return out_;
  }
  void End() {
    if (open_) out_->push_back('}');
    open_ = false;
  }

 private:
  std::string* out_;
  bool open_ = false;
};

// What the gap slices of one device leave out, and how many there were.
struct DeviceGapCount {
  int64_t gaps = 0;  // all of them (known only from the analysis)
  int64_t idle_ns = 0;
  int64_t drawn = 0;
  int64_t drawn_ns = 0;
  int64_t shortest_drawn_ns = INT64_MAX;
  int64_t first_drawn_ns = INT64_MAX;
};

// The part of one collective kernel spent waiting for peers, as drawn.
struct WaitSlice {
  int device = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  StringId kernel = StringTable::kEmpty;
  bool per_kind = true;  // its kind's share of waiting; else the device's
};

// What the waiting track of one device holds.
struct DeviceWaitCount {
  int64_t comm_wait_ns = 0;  // the report's
  int64_t drawn = 0;
  int64_t drawn_ns = 0;
};

class TraceFormatter {
 public:
  TraceFormatter(const Timeline& t, const Report* report, const GapList* all,
                 const TraceOptions& options, OutputStream* sink)
      : t_(t), sink_(sink), correlations_(t.calls) {
    if (report == nullptr) return;
    with_report_ = true;
    max_gaps_ = std::max(options.max_gaps, 0);
    if (all != nullptr) {
      // Every gap, as the analysis that made the report found them in this timeline (the report
      // itself lists only its longest few); the list is sorted by device, then start.
      gaps_ = &all->gaps;  // drawn where the caller keeps them: up to 200k records, not copied
      for (const GapList::DeviceGaps& d : all->devices) {
        DeviceGapCount& c = gap_counts_[d.device];
        c.gaps = d.gaps;
        c.idle_ns = d.idle_ns;
      }
    } else {
      from_analysis_ = false;
      for (const GapRecord& g : report->longest_gaps) {
        if (g.rank == t.info.rank && static_cast<int>(own_gaps_.size()) < max_gaps_) {
          own_gaps_.push_back(g);
        }
      }
      std::stable_sort(
          own_gaps_.begin(), own_gaps_.end(), [](const GapRecord& a, const GapRecord& b) {
            return a.device != b.device ? a.device < b.device : a.start_ns < b.start_ns;
          });
    }
    ListWaits(*report);
    for (const GapRecord& g : *gaps_) {
      DeviceGapCount& c = gap_counts_[g.device];
      ++c.drawn;
      c.drawn_ns += g.end_ns - g.start_ns;
      c.shortest_drawn_ns = std::min(c.shortest_drawn_ns, g.end_ns - g.start_ns);
      c.first_drawn_ns = std::min(c.first_drawn_ns, g.start_ns);
    }
    if (!from_analysis_) {
      for (auto& [device, c] : gap_counts_) {
        c.gaps = c.drawn;  // all that is known
        c.idle_ns = c.drawn_ns;
      }
    }
  }

  absl::Status Write() {
    ChooseBaseAndPids();
    out_.reserve(kFlushBytes + 64 * 1024);
    absl::StrAppend(&out_, "{\"schemaVersion\": 1,\n\"", kGpuidleKey, "\": ");
    if (!AppendInfo()) return status_;
    absl::StrAppend(&out_, ",\n\"", kDevicePropertiesKey, "\": [");
    const TimelineInfo& info = t_.info;
    for (size_t i = 0; i < info.visible_devices.size(); ++i) {
      absl::StrAppend(&out_, i == 0 ? "" : ", ", "{\"", kDeviceIdKey,
                      "\": ", info.visible_devices[i], ", \"", kDeviceNameKey, "\": ");
      AppendString(&out_, i < info.visible_device_names.size() ? info.visible_device_names[i]
                                                               : absl::string_view());
      if (i < info.visible_device_uuids.size() && !info.visible_device_uuids[i].empty()) {
        absl::StrAppend(&out_, ", \"", kDeviceUuidKey, "\": ");
        AppendString(&out_, info.visible_device_uuids[i]);
      }
      if (i < info.visible_device_physical.size() && info.visible_device_physical[i] >= 0) {
        absl::StrAppend(&out_, ", \"", kDevicePhysicalIndexKey,
                        "\": ", info.visible_device_physical[i]);
      }
      out_.push_back('}');
    }
    out_.push_back(']');
    if (info.rank || info.world_size) {
      absl::StrAppend(&out_, ",\n\"", kDistributedInfoKey, "\": {");
      if (info.rank) absl::StrAppend(&out_, "\"", kRankKey, "\": ", *info.rank);
      if (info.world_size) {
        absl::StrAppend(&out_, info.rank ? ", " : "", "\"", kWorldSizeKey,
                        "\": ", *info.world_size);
      }
      out_.push_back('}');
    }
    absl::StrAppend(&out_, ",\n\"", kBaseTimeKey, "\": ", base_ns_, ",\n\"", kTraceEventsKey,
                    "\": [");
    AppendMetadata();
    if (!Flush(false)) return status_;
    // Each kind in one pass, flushing as the buffer fills; an output error ends the writing.
    for (const DeviceTimeline& d : t_.devices) {
      for (const DeviceOp& op : d.ops) {
        AppendOp(d.device, op);
        if (!Flush(false)) return status_;
      }
    }
    for (size_t i = 0; i < t_.calls.size(); ++i) {
      AppendCall(t_.calls[i], i);
      if (!Flush(false)) return status_;
    }
    for (const Range& r : t_.ranges) {
      AppendRange(r);
      if (!Flush(false)) return status_;
    }
    for (const HostSample& sample : t_.samples) {
      AppendSample(sample);
      if (!Flush(false)) return status_;
    }
    for (const GpuMetricSample& reading : t_.gpu_metrics) {
      AppendReadingCounters(reading);
      if (!Flush(false)) return status_;
    }
    for (const GpuThroughputSample& sample : t_.gpu_throughput) {
      AppendThroughputCounters(sample);
      if (!Flush(false)) return status_;
    }
    for (const GapRecord& g : *gaps_) {
      AppendGap(g);
      if (!Flush(false)) return status_;
    }
    AppendGapsLeftOut();
    for (const WaitSlice& w : waits_) {
      AppendWait(w);
      if (!Flush(false)) return status_;
    }
    out_.append("\n]}\n");
    Flush(true);
    return status_;
  }

 private:
  // The waits for peers of this timeline's collectives, where the report knows them (a merge of
  // ranks: DeviceReport::comm_wait_ns and each kind's CollectiveStats::wait_ns). The report has
  // them per kind, not per kernel: each steady-state collective kernel is drawn waiting for its
  // kind's share of waiting (wait_ns over ns), from its start (a collective spins until the last
  // rank arrives, then works). A kernel is of the kind of the report's row with its start and
  // end (collective_timings); one the report does not list takes the device's share
  // (comm_wait_ns over comm_ns). Slices of one track never overlap: a kernel that starts inside
  // the previous slice (another stream's) starts after it.
  void ListWaits(const Report& report) {
    for (const DeviceTimeline& dt : t_.devices) {
      const DeviceReport* d = nullptr;
      for (const DeviceReport& candidate : report.devices) {
        if (candidate.device == dt.device && candidate.rank == t_.info.rank) d = &candidate;
      }
      if (d == nullptr || !d->comm_wait_ns || *d->comm_wait_ns <= 0) continue;
      const auto share_of = [](int64_t part, int64_t whole) {
        return whole > 0
                   ? std::clamp(static_cast<double>(part) / static_cast<double>(whole), 0.0, 1.0)
                   : 0.0;
      };
      const double device_share = share_of(*d->comm_wait_ns, d->comm_ns);
      // A kernel's kind: the report's row with its start and end, else its group and operation
      // where the trace names them, else the device's only kind.
      std::map<std::pair<int64_t, int64_t>, double> row_share;  // by the row's start and end
      std::map<std::pair<std::string, std::string>, double> named_share;
      const auto kind_share = [&](const CollectiveStats& k) {
        return k.wait_ns ? share_of(*k.wait_ns, k.ns) : device_share;
      };
      for (const CollectiveStats& k : d->collectives) {
        named_share.emplace(std::pair(k.group, k.op), kind_share(k));
      }
      for (const CollectiveTiming& row : d->collective_timings) {
        if (row.kind < 0 || static_cast<size_t>(row.kind) >= d->collectives.size()) continue;
        row_share.emplace(std::pair(row.start_ns, row.end_ns),
                          kind_share(d->collectives[static_cast<size_t>(row.kind)]));
      }
      const auto share_for = [&](const DeviceOp& op) -> std::optional<double> {
        if (const auto it = row_share.find(std::pair(op.start_ns, op.end_ns));
            it != row_share.end()) {
          return it->second;
        }
        if (op.collective < t_.collectives.size() &&
            t_.collectives[op.collective].op != StringTable::kEmpty) {
          const CollectiveArgs& a = t_.collectives[op.collective];
          const auto it = named_share.find(
              std::pair(std::string(t_.strings.Get(a.group)), std::string(t_.strings.Get(a.op))));
          if (it != named_share.end()) return it->second;
        }
        if (d->collectives.size() == 1) return kind_share(d->collectives[0]);
        return std::nullopt;
      };
      DeviceWaitCount& count = wait_counts_[dt.device];
      count.comm_wait_ns = *d->comm_wait_ns;
      int64_t last_end = INT64_MIN;
      std::vector<const DeviceOp*> collectives;
      for (const DeviceOp& op : dt.ops) {
        if (op.kind == OpKind::kKernel && op.communication && op.start_ns >= d->steady_start_ns &&
            op.start_ns < d->steady_end_ns) {
          collectives.push_back(&op);
        }
      }
      std::stable_sort(
          collectives.begin(), collectives.end(),
          [](const DeviceOp* a, const DeviceOp* b) { return a->start_ns < b->start_ns; });
      for (const DeviceOp* op : collectives) {
        const std::optional<double> of_kind = share_for(*op);
        const double share = of_kind.value_or(device_share);
        const int64_t end = std::min(op->end_ns, d->steady_end_ns);
        const int64_t waited_until =
            op->start_ns + static_cast<int64_t>(static_cast<double>(end - op->start_ns) * share);
        const int64_t start = std::max(op->start_ns, last_end);
        if (waited_until <= start) continue;
        waits_.push_back({dt.device, start, waited_until, op->name, of_kind.has_value()});
        ++count.drawn;
        count.drawn_ns += waited_until - start;
        last_end = waited_until;
      }
    }
  }

  // Hands the buffer to the output once it holds kFlushBytes (or at the end); false once the
  // output has failed.
  bool Flush(bool last) {
    if (!status_.ok()) return false;
    if (!last && out_.size() < kFlushBytes) return true;
    status_ = sink_->Write(out_);
    out_.clear();
    return status_.ok();
  }

  void ChooseBaseAndPids() {
    std::optional<int64_t> first;
    const auto see = [&](int64_t ns) {
      if (!first || ns < *first) first = ns;
    };
    for (const DeviceTimeline& d : t_.devices) {
      device_pids_.insert(d.device);
      std::optional<uint32_t> last;
      for (const DeviceOp& op : d.ops) {
        see(op.start_ns);
        // Runs of ops on one stream are the rule: one set lookup per run.
        if (op.stream != last) streams_.insert({d.device, op.stream});
        last = op.stream;
      }
    }
    for (const HostCall& c : t_.calls) {
      see(c.start_ns);
      threads_.insert(c.thread);
    }
    for (const Range& r : t_.ranges) {
      see(r.start_ns);
      threads_.insert(r.thread);
    }
    // Samples never widen the analysis window, but their ts counts from the base too.
    for (const HostSample& sample : t_.samples) {
      see(sample.time_ns);
      threads_.insert(sample.thread);
    }
    for (const GapRecord& g : *gaps_) {
      see(g.start_ns);
      device_pids_.insert(g.device);
    }
    // The counter tracks of device readings: on their device's process, from the base too.
    for (const GpuMetricSample& reading : t_.gpu_metrics) {
      see(reading.time_ns);
      device_pids_.insert(reading.device);
    }
    for (const GpuThroughputSample& sample : t_.gpu_throughput) {
      see(sample.start_ns);
      device_pids_.insert(sample.device);
    }
    if (first) {
      base_ns_ = *first < INT64_MIN + kBaseMarginNs ? INT64_MIN : *first - kBaseMarginNs;
    }
    uint64_t next_stand_in = kFirstStandInTid;
    for (uint64_t thread : threads_) {  // sorted: the same stand-ins for the same threads
      if (thread > kMaxTid) stand_in_tids_[thread] = std::min(next_stand_in++, kMaxTid);
    }
    // Device tracks are processes named by device id, as in Kineto traces; the host gets the
    // process id unless a device already has that number.
    host_pid_ = t_.info.pid.value_or(0);
    if (!t_.info.pid || device_pids_.count(host_pid_) != 0) {
      host_pid_ = device_pids_.empty() ? 0 : *device_pids_.rbegin() + 1;
    }
  }

  uint64_t DisplayTid(uint64_t thread) const {
    return thread > kMaxTid ? stand_in_tids_.at(thread) : thread;
  }

  // Relative to the base, so that ts values stay small; exact in unsigned arithmetic.
  uint64_t Rel(int64_t ns) const {
    return static_cast<uint64_t>(ns) - static_cast<uint64_t>(base_ns_);
  }

  // The "gpuidle" object; false once the output has failed.
  bool AppendInfo() {
    const TimelineInfo& info = t_.info;
    const auto key = [this](absl::string_view k) { absl::StrAppend(&out_, ", \"", k, "\": "); };
    absl::StrAppend(&out_, "{\"", kFormatKey, "\": ");
    AppendString(&out_, kGpuidleTraceFormat);
    key("version");  // informational: readers go by the format
    AppendString(&out_, kVersion);
    key(kPidInfoKey);
    AppendOptional(&out_, info.pid);
    key(kHostKey);
    AppendString(&out_, info.host);
    key(kRankKey);
    AppendOptional(&out_, info.rank);
    key(kWorldSizeKey);
    AppendOptional(&out_, info.world_size);
    key(kDroppedRecordsKey);
    AppendOptional(&out_, info.dropped_records);
    key(kZeroTimestampRecordsKey);
    absl::StrAppend(&out_, info.zero_timestamp_records);
    key(kRecordLimitReachedKey);
    out_.append(info.record_limit_reached ? "true" : "false");
    key(kWallClockOffsetKey);
    AppendOptional(&out_, info.wall_clock_offset_ns);
    if (info.tracer_cost) {
      key(kTracerLaunchFloorKey);
      absl::StrAppend(&out_, info.tracer_cost->launch_floor_ns);
      key(kTracerLaunchExcessMaxKey);
      absl::StrAppend(&out_, info.tracer_cost->launch_excess_max_ns);
      key(kTracerOutsidePermilleKey);
      absl::StrAppend(&out_, info.tracer_cost->outside_permille);
      key(kTracerPerCallKey);
      absl::StrAppend(&out_, info.tracer_cost->per_call_ns);
    }
    if (!info.gpu_throughput_unavailable.empty()) {
      key(kGpuThroughputUnavailableInfoKey);
      AppendString(&out_, info.gpu_throughput_unavailable);
    }
    if (info.device_times_made_up) {
      key(kDeviceTimesMadeUpInfoKey);
      out_.append("true");
    }
    if (!AppendReadings(kGpuMetricsInfoKey, t_.gpu_metrics,
                        std::span<const ReadingColumn<GpuMetricSample>>(kGpuMetricColumns)) ||
        !AppendReadings(kGpuProcessesInfoKey, t_.gpu_processes,
                        std::span<const ReadingColumn<GpuProcessSeen>>(kGpuProcessColumns)) ||
        !AppendReadings(
            kGpuThroughputInfoKey, t_.gpu_throughput,
            std::span<const ReadingColumn<GpuThroughputSample>>(kGpuThroughputColumns))) {
      return false;
    }
    if (with_report_) AppendGapSummary();
    if (!waits_.empty()) AppendWaitSummary();
    out_.push_back('}');
    return true;
  }

  // A table of device readings as equally long columns, one per field (and, for processes,
  // their busy samples as an array each): flushed as it grows, as a live capture may hold tens
  // of thousands of readings. Nothing for none.
  template <typename Row>
  bool AppendReadings(absl::string_view name, const std::vector<Row>& rows,
                      std::span<const ReadingColumn<Row>> columns) {
    if (rows.empty()) return true;
    absl::StrAppend(&out_, ", \"", name, "\": {");
    for (size_t c = 0; c < columns.size(); ++c) {
      absl::StrAppend(&out_, c == 0 ? "\"" : ",\n  \"", columns[c].name, "\": [");
      for (size_t i = 0; i < rows.size(); ++i) {
        if (i != 0) out_.push_back(',');
        AppendCell(&out_, columns[c], rows[i]);
        if (!Flush(false)) return false;
      }
      out_.push_back(']');
    }
    if constexpr (std::is_same_v<Row, GpuProcessSeen>) {
      absl::StrAppend(&out_, ",\n  \"", kBusySamplesColumn, "\": [");
      for (size_t i = 0; i < rows.size(); ++i) {
        absl::StrAppend(&out_, i == 0 ? "[" : ",[", absl::StrJoin(rows[i].busy_sample_ns, ","),
                        "]");
        if (!Flush(false)) return false;
      }
      out_.push_back(']');
    }
    out_.push_back('}');
    return true;
  }

  // The counter tracks Perfetto draws for device readings ("ph": "C" on the device's process:
  // one track per event name and arg, "SM clock MHz"). A series is written only when one of
  // its values changed, as a counter holds its value until the next: a power limit that never
  // changes is one event. A figure the reading lacks is left out of its series.
  enum CounterSeries : int {
    kSmClockSeries,
    kPowerSeries,
    kTemperatureSeries,
    kMemorySeries,
    kUtilizationSeries,
    kSmActiveSeries,
    kTensorActiveSeries,
    kDramSeries,
    kPcieSeries,
    kNvlinkSeries,
  };

  // Appends `key: value` to the series' args being built.
  void CounterArg(absl::string_view key, absl::string_view value) {
    absl::StrAppend(&counter_args_, counter_args_.empty() ? "\"" : ",\"", key, "\":", value);
  }

  void EmitCounter(int device, int64_t time_ns, CounterSeries series, absl::string_view name) {
    if (counter_args_.empty()) return;
    std::string& last = last_counter_args_[{device, series}];
    if (last != counter_args_) {
      BeginEvent(kCounterPhase, kCounterCategory, name, device, 0);
      absl::StrAppend(&out_, ",\"", kTsField, "\":");
      AppendMicros(&out_, Rel(time_ns));
      absl::StrAppend(&out_, ",\"", kArgsField, "\":{", counter_args_, "}}");
      last.swap(counter_args_);
    }
    counter_args_.clear();
  }

  void AppendReadingCounters(const GpuMetricSample& r) {
    // NVML's figures are 0 where it gave none (no real clock, power or memory is), but for
    // utilisation, which is 0 on an idle GPU.
    const auto nonzero = [this](absl::string_view key, uint64_t v) {
      if (v != 0) CounterArg(key, absl::StrCat(v));
    };
    const auto thousandths = [this](absl::string_view key, uint64_t v) {
      if (v == 0) return;
      std::string text;
      AppendThousandths(&text, v);
      CounterArg(key, text);
    };
    const auto gib = [this](absl::string_view key, uint64_t bytes) {
      if (bytes != 0) {
        CounterArg(key, absl::StrFormat("%.3f", static_cast<double>(bytes) / (1 << 30)));
      }
    };
    nonzero("MHz", r.sm_clock_mhz);
    nonzero("max MHz", r.sm_clock_max_mhz);
    EmitCounter(r.device, r.time_ns, kSmClockSeries, "SM clock");
    thousandths("W", r.power_mw);
    thousandths("limit W", r.power_limit_mw);
    EmitCounter(r.device, r.time_ns, kPowerSeries, "power");
    nonzero("C", r.temperature_c);
    EmitCounter(r.device, r.time_ns, kTemperatureSeries, "temperature");
    gib("used GiB", r.memory_used_bytes);
    gib("total GiB", r.memory_total_bytes);
    EmitCounter(r.device, r.time_ns, kMemorySeries, "memory");
    CounterArg("%", absl::StrCat(r.utilization_percent));
    EmitCounter(r.device, r.time_ns, kUtilizationSeries, "NVML utilization");
  }

  // PM sampling's averages, at the start of the interval they cover; negative: not measured.
  void AppendThroughputCounters(const GpuThroughputSample& s) {
    // decimals: 1 for a percentage, 3 for GB/s (a constant format: clang's StrFormat wants one).
    const auto figure = [this](absl::string_view key, float v, double scale, int decimals) {
      if (v >= 0 && std::isfinite(v)) {
        CounterArg(key, absl::StrFormat("%.*f", decimals, static_cast<double>(v) * scale));
      }
    };
    figure("%", s.sm_active_pct, 1, 1);
    EmitCounter(s.device, s.start_ns, kSmActiveSeries, "SM active");
    figure("%", s.tensor_active_pct, 1, 1);
    EmitCounter(s.device, s.start_ns, kTensorActiveSeries, "tensor active");
    figure("%", s.dram_pct, 1, 1);
    EmitCounter(s.device, s.start_ns, kDramSeries, "DRAM throughput");
    figure("read GB/s", s.pcie_read_bytes_per_s, 1e-9, 3);
    figure("write GB/s", s.pcie_write_bytes_per_s, 1e-9, 3);
    EmitCounter(s.device, s.start_ns, kPcieSeries, "PCIe");
    figure("read GB/s", s.nvlink_read_bytes_per_s, 1e-9, 3);
    figure("write GB/s", s.nvlink_write_bytes_per_s, 1e-9, 3);
    EmitCounter(s.device, s.start_ns, kNvlinkSeries, "NVLink");
  }

  // "gaps": what the idle-cause tracks hold and what they leave out, per device. Informational:
  // readers ignore it.
  void AppendGapSummary() {
    int64_t gaps = 0, drawn = 0, left_out_ns = 0;
    for (const auto& [device, c] : gap_counts_) {
      gaps += c.gaps;
      drawn += c.drawn;
      left_out_ns += c.idle_ns - c.drawn_ns;
    }
    absl::StrAppend(&out_, ", \"gaps\": {\"source\": ");
    AppendString(&out_, from_analysis_ ? "analysis" : "report");
    absl::StrAppend(&out_, ", \"max_gaps\": ", max_gaps_, ", \"gaps\": ", gaps,
                    ", \"drawn\": ", drawn, ", \"left_out\": ", gaps - drawn,
                    ", \"left_out_ns\": ", left_out_ns, ", \"devices\": [");
    bool first = true;
    for (const auto& [device, c] : gap_counts_) {
      absl::StrAppend(&out_, first ? "" : ", ", "{\"device\": ", device, ", \"gaps\": ", c.gaps,
                      ", \"idle_ns\": ", c.idle_ns, ", \"drawn\": ", c.drawn,
                      ", \"left_out\": ", c.gaps - c.drawn,
                      ", \"left_out_ns\": ", c.idle_ns - c.drawn_ns, "}");
      first = false;
    }
    out_.append("]}");
  }

  // "waiting": what the waiting tracks hold, per device: the report's wait for peers and what
  // was drawn of it (the collectives the timeline has in the device's steady state).
  // Informational: readers ignore it.
  void AppendWaitSummary() {
    absl::StrAppend(&out_, ", \"waiting\": {\"estimate\": \"kind_share\", \"devices\": [");
    bool first = true;
    for (const auto& [device, c] : wait_counts_) {
      absl::StrAppend(&out_, first ? "" : ", ", "{\"device\": ", device,
                      ", \"comm_wait_ns\": ", c.comm_wait_ns, ", \"drawn\": ", c.drawn,
                      ", \"drawn_ns\": ", c.drawn_ns, "}");
      first = false;
    }
    out_.append("]}");
  }

  // Starts {"ph": ph, "cat": ..., "name": ..., "pid": ..., "tid": ...; the caller ends it.
  void BeginEvent(absl::string_view ph, absl::string_view cat, absl::string_view name, int64_t pid,
                  uint64_t tid) {
    absl::StrAppend(&out_, first_event_ ? "\n{\"" : ",\n{\"", kPhField, "\":");
    first_event_ = false;
    AppendString(&out_, ph);
    if (!cat.empty()) {
      absl::StrAppend(&out_, ",\"", kCatField, "\":");
      AppendString(&out_, cat);
    }
    absl::StrAppend(&out_, ",\"", kNameField, "\":");
    AppendString(&out_, name);
    absl::StrAppend(&out_, ",\"", kPidField, "\":", pid, ",\"", kTidField, "\":", tid);
  }

  void AppendSpan(int64_t start_ns, int64_t end_ns) {
    absl::StrAppend(&out_, ",\"", kTsField, "\":");
    AppendMicros(&out_, Rel(start_ns));
    absl::StrAppend(&out_, ",\"", kDurField, "\":");
    // A negative duration would make the file unreadable; a valid timeline has none.
    AppendMicros(&out_, end_ns > start_ns
                            ? static_cast<uint64_t>(end_ns) - static_cast<uint64_t>(start_ns)
                            : 0);
  }

  void Metadata(absl::string_view what, int64_t pid, uint64_t tid, absl::string_view name) {
    BeginEvent("M", "", what, pid, tid);
    absl::StrAppend(&out_, ",\"", kArgsField, "\":{\"name\":");
    AppendString(&out_, name);
    out_.append("}}");
  }

  void SortIndex(absl::string_view what, int64_t pid, uint64_t tid, int64_t index) {
    BeginEvent("M", "", what, pid, tid);
    absl::StrAppend(&out_, ",\"", kArgsField, "\":{\"sort_index\":", index, "}}");
  }

  // The device's name from the timeline, else from the visible devices' list.
  absl::string_view DeviceName(int64_t device) const {
    const DeviceTimeline* d = t_.FindDevice(static_cast<int>(device));
    if (d != nullptr && !d->name.empty()) return d->name;
    const TimelineInfo& info = t_.info;
    for (size_t i = 0; i < info.visible_devices.size() && i < info.visible_device_names.size();
         ++i) {
      if (info.visible_devices[i] == device) return info.visible_device_names[i];
    }
    return {};
  }

  void AppendMetadata() {
    // Perfetto and chrome://tracing name tracks after these: "GPU 0 (NVIDIA H200)", "stream 7".
    for (int64_t device : device_pids_) {
      std::string label = absl::StrCat("GPU ", device);
      const absl::string_view name = DeviceName(device);
      if (!name.empty()) absl::StrAppend(&label, " (", name, ")");
      if (t_.info.rank) absl::StrAppend(&label, " rank ", *t_.info.rank);
      Metadata("process_name", device, 0, label);
      SortIndex("process_sort_index", device, 0, device);
    }
    for (const auto& [device, stream] : streams_) {
      Metadata("thread_name", device, stream,
               stream == kNoStream ? "stream unknown" : absl::StrCat("stream ", stream));
      SortIndex("thread_sort_index", device, stream, stream);
    }
    for (const auto& [device, c] : gap_counts_) {
      if (c.drawn == 0) continue;
      // The track's name says when it does not hold every gap.
      Metadata("thread_name", device, kGapTrackTid,
               c.drawn < c.gaps ? absl::StrCat("gpuidle: idle causes (longest ", c.drawn, " of ",
                                               c.gaps, " gaps)")
                                : std::string("gpuidle: idle causes"));
      SortIndex("thread_sort_index", device, kGapTrackTid, -1);  // above the streams
    }
    for (const auto& [device, c] : wait_counts_) {
      if (c.drawn == 0) continue;
      Metadata("thread_name", device, kWaitTrackTid, "gpuidle: waiting for peers (estimated)");
      SortIndex("thread_sort_index", device, kWaitTrackTid, -1);  // above the streams too
    }
    if (threads_.empty()) return;
    std::string host = "host";
    if (!t_.info.host.empty()) absl::StrAppend(&host, " ", t_.info.host);
    if (t_.info.rank) absl::StrAppend(&host, " rank ", *t_.info.rank);
    Metadata("process_name", host_pid_, 0, host);
    SortIndex("process_sort_index", host_pid_, 0, -1);  // above the GPUs
    for (uint64_t thread : threads_) {
      Metadata("thread_name", host_pid_, DisplayTid(thread), absl::StrCat("thread ", thread));
    }
  }

  void AppendOp(int device, const DeviceOp& op) {
    const absl::string_view name = t_.strings.Get(op.name);
    BeginEvent(kCompletePhase, OpCategory(op.kind), name, device, op.stream);
    AppendSpan(op.start_ns, op.end_ns);
    ArgsWriter args(&out_);
    absl::StrAppend(args.Key(kDeviceArg), device);
    if (op.stream != kNoStream) absl::StrAppend(args.Key(kStreamArg), op.stream);
    if (op.correlation_id != kNoCorrelation) {
      absl::StrAppend(args.Key(kCorrelationArg), op.correlation_id);
    }
    if (op.kind != OpKind::kKernel || op.bytes != 0) absl::StrAppend(args.Key(kBytesArg), op.bytes);
    const ImpliedOp implied = ImpliedByName(op.kind, name);
    if (op.copy_kind != implied.copy_kind) {
      AppendString(args.Key(kGpuidleCopyKindArg), CopyKindName(op.copy_kind));
    }
    if (op.pageable != implied.pageable) {
      args.Key(kGpuidlePageableArg)->append(op.pageable ? "true" : "false");
    }
    if (op.communication != implied.communication) {
      args.Key(kGpuidleCommunicationArg)->append(op.communication ? "true" : "false");
    }
    if (op.collective < t_.collectives.size()) AppendCollective(args, op.collective);
    args.End();
    out_.push_back('}');
    AppendFlowEnd(device, op);
  }

  // The arrow from the call that issued an op: its end, on the op's track, bound to the op
  // ("bp": "e": the enclosing slice). One arrow per call, to its first op in the file (a graph
  // launch issues many); none for an op that starts before its call (clocks apart), which
  // viewers cannot draw. The call writes the start (AppendCall), as ops come first.
  void AppendFlowEnd(int device, const DeviceOp& op) {
    if (op.correlation_id == kNoCorrelation) return;
    const int32_t call = correlations_.Find(op.correlation_id);
    if (call == CorrelationIndex::kNone || t_.calls[call].start_ns >= op.start_ns) return;
    if (flow_started_.empty()) flow_started_.resize(t_.calls.size());
    if (flow_started_[call]) return;
    flow_started_[call] = true;
    BeginEvent("f", kFlowCategory, kFlowCategory, device, op.stream);
    absl::StrAppend(&out_, ",\"id\":", op.correlation_id, ",\"", kTsField, "\":");
    AppendMicros(&out_, Rel(op.start_ns));
    out_.append(",\"bp\":\"e\"}");
  }

  // A collective kernel's args under PyTorch's names, as recent releases put them on NCCL
  // kernels; the size in bytes as elements of dtype "Byte".
  void AppendCollective(ArgsWriter& args, uint32_t index) {
    const CollectiveArgs& c = t_.collectives[index];
    if (c.op != StringTable::kEmpty) {
      AppendString(args.Key(kCollectiveNameArg), t_.strings.Get(c.op));
    }
    if (c.group != StringTable::kEmpty) {
      AppendString(args.Key(kGroupNameArg), t_.strings.Get(c.group));
    }
    if (c.seq >= 0) absl::StrAppend(args.Key(kSeqArg), c.seq);
    if (c.bytes >= 0) {
      absl::StrAppend(args.Key(kInNelemsArg), c.bytes);
      absl::StrAppend(args.Key(kOutNelemsArg), c.bytes);
      AppendString(args.Key(kDtypeArg), kByteDtype);
    }
  }

  void AppendCall(const HostCall& c, size_t index) {
    const absl::string_view name = t_.strings.Get(c.name);
    // Driver API names start "cu", runtime ones "cuda"; the reader takes both alike.
    const bool driver = absl::StartsWith(name, "cu") && !absl::StartsWith(name, "cuda");
    BeginEvent(kCompletePhase, driver ? kDriverCategory : kRuntimeCategory, name, host_pid_,
               DisplayTid(c.thread));
    AppendSpan(c.start_ns, c.end_ns);
    ArgsWriter args(&out_);
    if (c.correlation_id != kNoCorrelation) {
      absl::StrAppend(args.Key(kCorrelationArg), c.correlation_id);
    }
    if (c.stream != kNoStream) absl::StrAppend(args.Key(kStreamArg), c.stream);
    if (c.peer_stream != kNoStream) absl::StrAppend(args.Key(kWaitOnStreamArg), c.peer_stream);
    if (c.category != CategorizeCudaApi(name)) {
      AppendString(args.Key(kGpuidleCategoryArg), CallCategoryName(c.category));
    }
    if (c.thread > kMaxTid) absl::StrAppend(args.Key(kGpuidleThreadArg), c.thread);
    args.End();
    out_.push_back('}');
    if (index < flow_started_.size() && flow_started_[index]) {
      // Right after the call, at its start: a viewer binds it to the innermost slice open then.
      BeginEvent("s", kFlowCategory, kFlowCategory, host_pid_, DisplayTid(c.thread));
      absl::StrAppend(&out_, ",\"id\":", c.correlation_id, ",\"", kTsField, "\":");
      AppendMicros(&out_, Rel(c.start_ns));
      out_.push_back('}');
    }
  }

  void AppendRange(const Range& r) {
    const absl::string_view name = t_.strings.Get(r.name);
    BeginEvent(kCompletePhase, RangeCategory(r.kind), name, host_pid_, DisplayTid(r.thread));
    AppendSpan(r.start_ns, r.end_ns);
    ArgsWriter args(&out_);
    if (ImpliedRangeKind(r.kind, name) != r.kind) {
      AppendString(args.Key(kGpuidleKindArg), RangeKindName(r.kind));
    }
    if (r.thread > kMaxTid) absl::StrAppend(args.Key(kGpuidleThreadArg), r.thread);
    args.End();
    out_.push_back('}');
  }

  // A host stack sample: an instant event on its thread's track ("s": "t": thread-scoped).
  void AppendSample(const HostSample& sample) {
    BeginEvent(kInstantPhase, kHostSampleCategory, "host sample", host_pid_,
               DisplayTid(sample.thread));
    absl::StrAppend(&out_, ",\"s\":\"t\",\"", kTsField, "\":");
    AppendMicros(&out_, Rel(sample.time_ns));
    ArgsWriter args(&out_);
    AppendString(args.Key(kStackArg), t_.strings.Get(sample.stack));
    if (sample.thread > kMaxTid) absl::StrAppend(args.Key(kGpuidleThreadArg), sample.thread);
    args.End();
    out_.push_back('}');
  }

  void AppendGap(const GapRecord& g) {
    BeginEvent(kCompletePhase, kGapCategory, SubcauseLabel(g.subcause), g.device, kGapTrackTid);
    AppendSpan(g.start_ns, g.end_ns);
    out_.append(",\"cname\":");
    AppendString(&out_, GapColour(g.subcause));
    ArgsWriter args(&out_);
    AppendString(args.Key("cause"), CauseName(CauseOf(g.subcause)));
    AppendString(args.Key("evidence"), g.evidence);
    AppendString(args.Key("next_op"), g.next_op);
    AppendString(args.Key("call_site"), g.call_site);
    if (g.thread != 0) absl::StrAppend(args.Key("thread"), g.thread);
    args.End();
    out_.push_back('}');
  }

  // A collective's wait for peers: a slice on its device's waiting track, named and coloured as
  // the subcause whose lost time it is (sync_bound.comm_wait).
  void AppendWait(const WaitSlice& w) {
    BeginEvent(kCompletePhase, kGapCategory, SubcauseLabel(Subcause::kCommWait), w.device,
               kWaitTrackTid);
    AppendSpan(w.start_ns, w.end_ns);
    out_.append(",\"cname\":");
    AppendString(&out_, kWaitingColour);
    ArgsWriter args(&out_);
    AppendString(args.Key("cause"), CauseName(Cause::kSyncBound));
    AppendString(args.Key("collective"), t_.strings.Get(w.kernel));
    AppendString(args.Key("estimate"),
                 w.per_kind ? "its kind's share of waiting" : "the device's share of waiting");
    args.End();
    out_.push_back('}');
  }

  // One instant per device whose track leaves gaps out, at its first gap drawn: how many, how
  // long in all, and that each was at most as long as the shortest drawn.
  void AppendGapsLeftOut() {
    for (const auto& [device, c] : gap_counts_) {
      const int64_t left_out = c.gaps - c.drawn;
      if (left_out <= 0 || c.drawn == 0) continue;
      const int64_t left_out_ns = c.idle_ns - c.drawn_ns;
      BeginEvent(kInstantPhase, kGapCategory,
                 absl::StrCat(left_out, " gaps (", Millis(left_out_ns), ") left out"), device,
                 kGapTrackTid);
      absl::StrAppend(&out_, ",\"s\":\"t\",\"", kTsField, "\":");
      AppendMicros(&out_, Rel(c.first_drawn_ns));
      ArgsWriter args(&out_);
      absl::StrAppend(args.Key("left_out"), left_out);
      absl::StrAppend(args.Key("left_out_ns"), left_out_ns);
      absl::StrAppend(args.Key("drawn"), c.drawn);
      absl::StrAppend(args.Key("longest_left_out_at_most_ns"), c.shortest_drawn_ns);
      args.End();
      out_.push_back('}');
    }
  }

  // "data_starved.dataloader", made once per subcause rather than once per gap.
  absl::string_view SubcauseLabel(Subcause s) {
    std::string& label = subcause_labels_[static_cast<size_t>(s)];
    if (label.empty()) label = QualifiedSubcauseName(s);
    return label;
  }

  const Timeline& t_;
  OutputStream* sink_;
  absl::Status status_;
  bool with_report_ = false;
  bool from_analysis_ = true;  // else the report's own longest gaps
  int max_gaps_ = 0;
  std::vector<GapRecord> own_gaps_;                  // the report's own, where there is no gap list
  const std::vector<GapRecord>* gaps_ = &own_gaps_;  // drawn: by device, then start
  std::map<int, DeviceGapCount> gap_counts_;         // by device
  std::vector<WaitSlice> waits_;                     // by device, then start
  std::map<int, DeviceWaitCount> wait_counts_;       // by device
  std::array<std::string, kNumSubcauses> subcause_labels_;
  CorrelationIndex correlations_;
  std::vector<bool> flow_started_;  // by call: an arrow starts there
  std::set<int64_t> device_pids_;
  std::set<std::pair<int, uint32_t>> streams_;
  std::set<uint64_t> threads_;
  std::map<uint64_t, uint64_t> stand_in_tids_;  // host threads beyond 32 bits
  std::string counter_args_;                    // of the counter event being built
  std::map<std::pair<int, int>, std::string> last_counter_args_;  // by device and series
  int64_t base_ns_ = 0;
  int64_t host_pid_ = 0;
  bool first_event_ = true;
  std::string out_;
};

// Appends to a string: FormatGpuidleTrace.
class StringStream : public OutputStream {
 public:
  explicit StringStream(std::string* out) : out_(out) {}
  absl::Status Write(absl::string_view piece) override {
    out_->append(piece.data(), piece.size());
    return absl::OkStatus();
  }

 private:
  std::string* out_;
};

}  // namespace

absl::Status StreamGpuidleTrace(const Timeline& timeline, const Report* report, const GapList* gaps,
                                OutputStream& out, const TraceOptions& options) {
  return TraceFormatter(timeline, report, gaps, options, &out).Write();
}

std::string FormatGpuidleTrace(const Timeline& timeline, const Report* report, const GapList* gaps,
                               const TraceOptions& options) {
  std::string text;
  StringStream out(&text);
  // A string cannot fail.
  StreamGpuidleTrace(timeline, report, gaps, out, options).IgnoreError();
  return text;
}

absl::StatusOr<std::string> WriteGpuidleTrace(const Timeline& timeline, const Report* report,
                                              const GapList* gaps, const std::string& path,
                                              const OutputFileOptions& output,
                                              const TraceOptions& options) {
  return WriteOutputFileStreamed(
      path,
      [&](OutputStream& out) { return StreamGpuidleTrace(timeline, report, gaps, out, options); },
      output);
}

}  // namespace gpuidle::internal
