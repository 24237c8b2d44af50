#include "ingest/event_mapper.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>

#include "core/text_safety.h"
#include "ingest/json_scanners.h"
#include "model/cuda_api.h"
#include "model/trace_names.h"

namespace gpuidle::internal::kineto {

StringId EventMapper::InternText(absl::string_view text) {
  if (IsAscii(text) || IsValidUtf8(text)) return t_.strings.Intern(text);
  return t_.strings.Intern(ValidText(text, &w_));
}

uint32_t EventMapper::StreamId(int64_t raw) {
  // -1, and the same as an unsigned 32-bit value (CUPTI's "invalid").
  if (raw == -1 || raw == int64_t{kNoStream}) return kNoStream;
  if (raw >= 0 && raw < int64_t{kNoStream}) return static_cast<uint32_t>(raw);
  auto [it, added] = folded_streams_.try_emplace(raw, 0);
  if (added) it->second = kNoStream - 1 - static_cast<uint32_t>(folded_streams_.size());
  return it->second;
}

// Adds device work to its device's timeline, unless the device would be one more than
// kMaxDevicesPerTrace (counted). A hash lookup: traces may name many devices.
bool EventMapper::AddOp(int device, const DeviceOp& op, size_t* slot_out) {
  auto slot = device_slots_.find(device);
  if (slot == device_slots_.end()) {
    if (device_slots_.size() >= kMaxDevicesPerTrace) {
      ++w_.ops_beyond_device_limit;
      return false;
    }
    // An index, not a pointer: adding a device may reallocate t_.devices.
    slot = device_slots_.emplace(device, t_.devices.size()).first;
    t_.devices.emplace_back().device = device;
  }
  t_.devices[slot->second].ops.push_back(op);
  if (slot_out != nullptr) *slot_out = slot->second;
  return true;
}

void EventMapper::AddZeroTimestampRecords(uint64_t n) {
  uint64_t& count = t_.info.zero_timestamp_records;
  if (__builtin_add_overflow(count, n, &count)) {
    count = std::numeric_limits<uint64_t>::max();
    w_.zero_timestamp_count_saturated = true;
  }
}

void EventMapper::AddRange(int device, const DeviceOp& op,
                           const std::optional<GpuThroughputSample>& counters) {
  if (!AddOp(device, op)) return;
  ++w_.profiler_ranges;
  if (!counters) return;
  ++w_.profiler_ranges_with_counters;
  GpuThroughputSample& s = range_counters_.emplace_back(*counters);
  s.start_ns = op.start_ns;
  s.end_ns = op.end_ns;
  s.device = device;
}

// cuda_profiler_range events without "args.device" lie on their device's pid, which is only
// known to be a device's once the whole trace is read (device work, deviceProperties).
void EventMapper::ResolveProfilerRanges() {
  absl::flat_hash_set<int> visible_device_ids(t_.info.visible_devices.begin(),
                                              t_.info.visible_devices.end());
  for (const PendingRange& r : pending_ranges_) {
    const int device = static_cast<int>(r.pid);
    const bool known = r.pid <= INT32_MAX &&
                       (device_slots_.contains(device) || visible_device_ids.contains(device));
    if (known) {
      AddRange(device, r.op, r.counters);
    } else {
      ++w_.unplaced_ranges;
    }
  }
  pending_ranges_.clear();
}

namespace {

bool Known(const CollectiveArgs& a) {
  return a.group != StringTable::kEmpty || a.op != StringTable::kEmpty || a.seq >= 0 ||
         a.bytes >= 0;
}

bool Complete(const CollectiveArgs& a) {
  return a.group != StringTable::kEmpty && a.op != StringTable::kEmpty && a.seq >= 0 &&
         a.bytes >= 0;
}

// Fills what `a` does not know from `from`.
void Merge(CollectiveArgs* a, const CollectiveArgs& from) {
  if (a->group == StringTable::kEmpty) a->group = from.group;
  if (a->op == StringTable::kEmpty) a->op = from.op;
  if (a->seq < 0) a->seq = from.seq;
  if (a->bytes < 0) a->bytes = from.bytes;
}

// The empty vector where no entry is known: TimelineInfo's "empty otherwise".
template <typename T>
void EmptyUnlessKnown(std::vector<T>* v, const T& unknown) {
  if (std::all_of(v->begin(), v->end(), [&](const T& x) { return x == unknown; })) v->clear();
}

}  // namespace

CollectiveArgs EventMapper::CollectiveOf(const Event& e) {
  CollectiveArgs a;
  if (!e.group_name.empty()) a.group = InternText(e.group_name);
  if (!e.collective_name.empty()) a.op = InternText(e.collective_name);
  a.seq = e.seq.value_or(-1);
  // The larger buffer: the whole of an all-gather's output and a reduce-scatter's input, as
  // nccl-tests counts a collective's size; both alike for all-reduce and broadcast.
  const std::optional<int64_t> nelems = e.in_nelems && e.out_nelems
                                            ? std::max(*e.in_nelems, *e.out_nelems)
                                            : (e.in_nelems ? e.in_nelems : e.out_nelems);
  const int64_t element = e.dtype.empty() ? -1 : DtypeBytes(e.dtype);
  int64_t bytes = 0;
  if (nelems && element > 0 && !__builtin_mul_overflow(*nelems, element, &bytes)) {
    a.bytes = bytes;
  }
  return a;
}

void EventMapper::ResolveCollectives() {
  // The launching calls of the kernels that the External id leaves without a CPU op.
  absl::flat_hash_map<uint64_t, const HostCall*> launches;
  for (const PendingCollective& p : pending_collectives_) {
    if (!Complete(p.own) && !param_comms_by_external_id_.contains(p.external_id) &&
        p.correlation != kNoCorrelation) {
      launches.emplace(p.correlation, nullptr);
    }
  }
  std::vector<size_t> order;  // param_comms_ by (thread, start)
  if (!launches.empty() && !param_comms_.empty()) {
    for (const HostCall& c : t_.calls) {
      if (auto it = launches.find(c.correlation_id); it != launches.end()) it->second = &c;
    }
    order.resize(param_comms_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const ParamComms& x = param_comms_[a];
      const ParamComms& y = param_comms_[b];
      return x.thread != y.thread ? x.thread < y.thread : x.start_ns < y.start_ns;
    });
  }
  // The innermost record_param_comms around a call: the latest to start before it on its
  // thread that has not ended (a few back at most: they nest shallowly).
  const auto enclosing = [&](const HostCall& call) -> const ParamComms* {
    auto it = std::upper_bound(order.begin(), order.end(), call, [&](const HostCall& c, size_t i) {
      const ParamComms& x = param_comms_[i];
      return c.thread != x.thread ? c.thread < x.thread : c.start_ns < x.start_ns;
    });
    for (int back = 0; back < 8 && it != order.begin(); ++back) {
      const ParamComms& x = param_comms_[*--it];
      if (x.thread != call.thread) break;
      if (x.end_ns >= call.start_ns) return &x;
    }
    return nullptr;
  };
  for (const PendingCollective& p : pending_collectives_) {
    CollectiveArgs a = p.own;
    if (!Complete(a)) {
      const ParamComms* from = nullptr;
      if (auto it = param_comms_by_external_id_.find(p.external_id);
          it != param_comms_by_external_id_.end()) {
        from = &param_comms_[it->second];
      } else if (auto call = launches.find(p.correlation);
                 call != launches.end() && call->second != nullptr) {
        from = enclosing(*call->second);
      }
      if (from != nullptr) Merge(&a, from->args);
    }
    if (!Known(a) || t_.collectives.size() >= kNoCollective) continue;
    t_.devices[p.slot].ops[p.index].collective = static_cast<uint32_t>(t_.collectives.size());
    t_.collectives.push_back(a);
  }
  pending_collectives_.clear();
  param_comms_.clear();
  param_comms_by_external_id_.clear();
}

void EventMapper::Finish() {
  ResolveProfilerRanges();
  ResolveCollectives();
  EmptyUnlessKnown(&t_.info.visible_device_uuids, std::string());
  EmptyUnlessKnown(&t_.info.visible_device_physical, -1);
  // Device names from deviceProperties (the last entry for an id wins).
  for (size_t i = 0; i < t_.info.visible_devices.size(); ++i) {
    if (auto slot = device_slots_.find(t_.info.visible_devices[i]); slot != device_slots_.end()) {
      t_.devices[slot->second].name = t_.info.visible_device_names[i];
    }
  }
}

void EventMapper::Map(const Event& e) {
  if ((e.bad & Bit(Field::kCat)) != 0) {
    w_.Warn(EventCategory::kIgnored, Field::kCat, Problem::kWrongType, true);
    return;
  }
  const EventCategory category = CategoryOf(e.cat);
  if (category == EventCategory::kIgnored) {
    int64_t end = 0;
    if (e.cat == kProfilerSpanCategory && e.ph == kCompletePhase && e.ts_ns && e.dur_ns &&
        *e.dur_ns > 0 && (e.bad & (Bit(Field::kTs) | Bit(Field::kDur))) == 0 &&
        !__builtin_add_overflow(*e.ts_ns, *e.dur_ns, &end)) {
      const int64_t start = *e.ts_ns;
      profiler_span_ = profiler_span_ ? std::pair{std::min(profiler_span_->first, start),
                                                  std::max(profiler_span_->second, end)}
                                      : std::pair{start, end};
    }
    return;
  }
  // Complete events only; metadata, flows and instants carry nothing the analysis uses.
  // gpuidle's host samples are instants.
  const bool instant = category == EventCategory::kHostSample;
  if ((e.bad & Bit(Field::kPh)) != 0) {
    w_.Warn(category, Field::kPh, Problem::kWrongType, true);
    return;
  }
  if (instant ? (e.ph != kInstantPhase && e.ph != kInstantPhaseUpper) : e.ph != kCompletePhase)
    return;

  // Unusable fields: required ones cost the event, the others only themselves.
  const bool timed = category != EventCategory::kCudaSync && category != EventCategory::kCudaEvent;
  const uint32_t required = timed ? Bit(Field::kTs) | (instant ? 0 : Bit(Field::kDur)) : 0;
  const uint32_t bad = e.bad & FieldsUsed(category);
  if (bad != 0) {
    for (int f = 0; f < kFieldCount; ++f) {
      if ((bad & (uint32_t{1} << f)) == 0) continue;
      const Field field = static_cast<Field>(f);
      // A device id out of range names a device that cannot be told apart from others (2^32
      // is not device 0): the work is skipped rather than put on its pid's device.
      const bool skipped = (required & (uint32_t{1} << f)) != 0 ||
                           (field == Field::kDevice && e.problem[f] == Problem::kOutOfRange);
      w_.Warn(category, field, e.problem[f], skipped,
              field == e.example_field ? absl::string_view(e.example) : "");
      if (skipped) return;
    }
  }
  if (timed && !e.ts_ns) {
    w_.Warn(category, Field::kTs, Problem::kMissing, true);
    return;
  }
  if (timed && !instant && !e.dur_ns) {
    w_.Warn(category, Field::kDur, Problem::kMissing, true);
    return;
  }
  const int64_t start = e.ts_ns.value_or(0);
  int64_t end = start;
  if (timed && !instant) {
    if (*e.dur_ns < 0) {
      w_.Warn(category, Field::kDur, Problem::kNegative, true);
      return;
    }
    // Cannot overflow (start < kMaxTimeNs, dur <= 2^52), but may end past kMaxTimeNs.
    if (__builtin_add_overflow(start, *e.dur_ns, &end) || end >= kMaxTimeNs) {
      w_.Warn(category, Field::kDur, Problem::kOutOfRange, true);
      return;
    }
  }
  const uint64_t correlation =
      e.correlation && *e.correlation > 0 ? static_cast<uint64_t>(*e.correlation) : kNoCorrelation;
  switch (category) {
    case EventCategory::kKernel:
    case EventCategory::kMemcpy:
    case EventCategory::kMemset:
    case EventCategory::kProfilerRange: {
      if (start == 0) {  // CUPTI left the record without time stamps
        AddZeroTimestampRecords(1);
        return;
      }
      DeviceOp op;
      op.start_ns = start;
      op.end_ns = end;
      op.correlation_id = correlation;
      op.name = InternText(e.name);
      op.stream = e.stream ? StreamId(*e.stream) : kNoStream;
      op.bytes = e.bytes ? static_cast<uint64_t>(*e.bytes) : 0;
      if (category == EventCategory::kMemcpy) {
        op.kind = OpKind::kMemcpy;
        const CopyDescription copy = DescribeCopy(e.name);
        op.copy_kind = copy.kind;
        op.pageable = copy.pageable;
      } else if (category == EventCategory::kMemset) {
        op.kind = OpKind::kMemset;
      } else {
        op.kind = OpKind::kKernel;
        op.communication = IsCommunicationKernel(e.name);
      }
      if (e.copy_kind) op.copy_kind = *e.copy_kind;
      if (e.pageable) op.pageable = *e.pageable;
      if (e.communication) op.communication = *e.communication;
      // A device is whatever id the work carries (deviceProperties may list fewer: ROCm
      // traces number their devices otherwise). Kineto puts device work on a pid per device.
      // A pid beyond the range of device ids (negative, or 2^32) is no device: such work is
      // skipped, never merged into device 0.
      size_t slot = 0;
      bool added = false;
      if (category == EventCategory::kProfilerRange) {
        std::optional<GpuThroughputSample> counters;
        if (e.has_counters) counters = e.counters;
        if (e.device) {
          AddRange(static_cast<int>(*e.device), op, counters);
        } else if (e.has_pid) {
          pending_ranges_.push_back(PendingRange{e.pid, op, counters});
        } else {
          ++w_.unplaced_ranges;
        }
      } else if (e.device) {
        added = AddOp(static_cast<int>(*e.device), op, &slot);
      } else if (!e.has_pid) {
        added = AddOp(0, op, &slot);
      } else if (e.pid <= INT32_MAX) {
        added = AddOp(static_cast<int>(e.pid), op, &slot);
      } else {
        w_.Warn(category, Field::kPid, Problem::kOutOfRange, true);
      }
      if (added && category == EventCategory::kKernel && op.communication) {
        pending_collectives_.push_back(PendingCollective{slot, t_.devices[slot].ops.size() - 1,
                                                         e.external_id.value_or(0), correlation,
                                                         CollectiveOf(e)});
      }
      return;
    }
    case EventCategory::kRuntime: {
      HostCall c;
      c.start_ns = start;
      c.end_ns = end;
      c.correlation_id = correlation;
      c.thread = e.thread.value_or(e.tid);
      c.name = InternText(e.name);
      c.category = e.call_category ? *e.call_category : CategorizeCudaApi(e.name);
      // gpuidle traces put the streams of syncs and waits on the call itself; Kineto's
      // cuda_sync records, joined later, take precedence.
      if (e.stream) c.stream = StreamId(*e.stream);
      if (e.wait_on_stream) c.peer_stream = StreamId(*e.wait_on_stream);
      t_.calls.push_back(c);
      return;
    }
    case EventCategory::kCudaSync:
      // The GPU side of a sync or wait call (PyTorch's enable_cuda_sync_events): "Stream
      // Sync", "Event Sync", "Context Sync", "Stream Wait Event".
      if (correlation != kNoCorrelation) {
        CallStreams s;
        s.correlation = correlation;
        if (e.stream) s.stream = StreamSlot(*e.stream);
        if (e.wait_on_stream) s.wait_on_stream = StreamSlot(*e.wait_on_stream);
        if (e.wait_on_record_correlation && *e.wait_on_record_correlation > 0) {
          s.event_record_correlation = static_cast<uint64_t>(*e.wait_on_record_correlation);
        }
        syncs_.push_back(s);
      }
      return;
    case EventCategory::kCudaEvent:
      // Where an event was recorded: the cudaEventRecord call's correlation and stream.
      if (correlation != kNoCorrelation && e.stream) {
        event_records_.push_back(EventRecordStream{correlation, StreamSlot(*e.stream)});
      }
      return;
    case EventCategory::kCpuOp:
    case EventCategory::kUserAnnotation:
    case EventCategory::kPythonFunction: {
      Range r;
      r.start_ns = start;
      r.end_ns = end;
      r.thread = e.thread.value_or(e.tid);
      r.name = InternText(e.name);
      const RangeKind category_kind = category == EventCategory::kCpuOp ? RangeKind::kFrameworkOp
                                      : category == EventCategory::kPythonFunction
                                          ? RangeKind::kPython
                                          : RangeKind::kUser;
      r.kind = e.range_kind ? *e.range_kind : HostRangeKind(category_kind, e.name);
      t_.ranges.push_back(r);
      if (category == EventCategory::kCpuOp && e.name == kParamCommsName) {
        const CollectiveArgs args = CollectiveOf(e);
        if (Known(args)) {
          if (e.external_id.value_or(0) > 0) {
            param_comms_by_external_id_[*e.external_id] = param_comms_.size();
          }
          param_comms_.push_back(ParamComms{r.thread, start, end, args});
        }
      }
      return;
    }
    case EventCategory::kHostSample: {
      HostSample sample;
      sample.time_ns = start;
      sample.thread = e.thread.value_or(e.tid);
      sample.stack = InternText(e.stack);
      t_.samples.push_back(sample);
      return;
    }
    case EventCategory::kIgnored:
      break;
  }
  return;
}

int64_t EventMapper::StreamSlot(int64_t raw) {
  const uint32_t s = StreamId(raw);
  return s == kNoStream ? -1 : static_cast<int64_t>(s);
}

}  // namespace gpuidle::internal::kineto
