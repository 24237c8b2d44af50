#include "ingest/event_mapper.h"

#include <limits>

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
void EventMapper::AddOp(int device, const DeviceOp& op) {
  auto slot = device_slots_.find(device);
  if (slot == device_slots_.end()) {
    if (device_slots_.size() >= kMaxDevicesPerTrace) {
      ++w_.ops_beyond_device_limit;
      return;
    }
    // An index, not a pointer: adding a device may reallocate t_.devices.
    slot = device_slots_.emplace(device, t_.devices.size()).first;
    t_.devices.emplace_back().device = device;
  }
  t_.devices[slot->second].ops.push_back(op);
}

void EventMapper::AddZeroTimestampRecords(uint64_t n) {
  uint64_t& count = t_.info.zero_timestamp_records;
  if (__builtin_add_overflow(count, n, &count)) {
    count = std::numeric_limits<uint64_t>::max();
    w_.zero_timestamp_count_saturated = true;
  }
}

// cuda_profiler_range events without "args.device" lie on their device's pid, which is only
// known to be a device's once the whole trace is read (device work, deviceProperties).
void EventMapper::ResolveProfilerRanges() {
  absl::flat_hash_set<int> visible_device_ids(t_.info.visible_devices.begin(),
                                              t_.info.visible_devices.end());
  for (const auto& [pid, op] : pending_ranges_) {
    const int device = static_cast<int>(pid);
    const bool known =
        pid <= INT32_MAX && (device_slots_.contains(device) || visible_device_ids.contains(device));
    if (known) {
      AddOp(device, op);
    } else {
      ++w_.unplaced_ranges;
    }
  }
  pending_ranges_.clear();
}

void EventMapper::Finish() {
  ResolveProfilerRanges();
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
  if (category == EventCategory::kIgnored) return;
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
      if (e.device) {
        AddOp(static_cast<int>(*e.device), op);
      } else if (category == EventCategory::kProfilerRange) {
        if (e.has_pid) {
          pending_ranges_.emplace_back(e.pid, op);
        } else {
          ++w_.unplaced_ranges;
        }
      } else if (!e.has_pid) {
        AddOp(0, op);
      } else if (e.pid <= INT32_MAX) {
        AddOp(static_cast<int>(e.pid), op);
      } else {
        w_.Warn(category, Field::kPid, Problem::kOutOfRange, true);
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
