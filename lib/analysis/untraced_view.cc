#include "analysis/untraced_view.h"

#include <algorithm>
#include <cstddef>
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "model/correlation_index.h"
#include "model/stable_sort.h"

namespace gpuidle::internal {
namespace {

// The calls the collector times itself (collect/callback_ids.h): each paid the tracer.
bool Timed(CallCategory c) {
  return c == CallCategory::kLaunch || c == CallCategory::kSync || c == CallCategory::kCopy ||
         c == CallCategory::kWaitEvent || c == CallCategory::kAllocator;
}

// Calls that can hold the host until GPU work ends (a free waits for the device first).
bool MayWait(CallCategory c) {
  return c == CallCategory::kSync || c == CallCategory::kCopy || c == CallCategory::kAllocator;
}

struct DeviceState {
  const DeviceTimeline* timeline = nullptr;
  size_t next = 0;  // the first op not moved yet
  bool any = false;
  int64_t frontier_end = 0;    // the latest end of the ops moved so far (as recorded)
  int64_t frontier_shift = 0;  // how far that op moved
  // Per stream: the end (as recorded) and shift of its last op.
  absl::flat_hash_map<uint32_t, std::pair<int64_t, int64_t>> streams;
  std::vector<int64_t> shift;  // per op moved, in order
};

struct HostPoint {
  int64_t time_ns;   // as recorded
  int64_t shift_ns;  // the host's shift from then on
};

}  // namespace

int64_t TracerShift::ShiftAt(const DeviceShift& d, int64_t t) const {
  auto it =
      std::upper_bound(d.points.begin(), d.points.end(), t,
                       [](int64_t v, const std::pair<int64_t, int64_t>& p) { return v < p.first; });
  return it == d.points.begin() ? 0 : std::prev(it)->second;
}

int64_t TracerShift::TakenOutNs(int device, int64_t from_ns, int64_t to_ns) const {
  for (const DeviceShift& d : devices_) {
    if (d.device == device) return std::max<int64_t>(0, ShiftAt(d, to_ns) - ShiftAt(d, from_ns));
  }
  return 0;
}

TracerShift RemoveTracerTime(Timeline* t) {
  TracerShift result;
  if (!t->info.tracer_cost) return result;
  const TracerCostModel m = *t->info.tracer_cost;
  std::vector<HostCall>& calls = t->calls;
  const size_t n = calls.size();

  const CorrelationIndex call_of(calls);    // correlation id -> the call that launched it
  std::vector<int64_t> launch_shift(n, 0);  // the host's shift when each call submitted its work
  size_t moved_calls = 0;                   // calls [0, moved_calls) have their shift

  std::vector<DeviceState> devices(t->devices.size());
  for (size_t i = 0; i < devices.size(); ++i) {
    devices[i].timeline = &t->devices[i];
    devices[i].shift.reserve(t->devices[i].ops.size());
  }
  // Moves one op; false while the call that launched it has no shift yet.
  auto move_op = [&](DeviceState& d, const DeviceOp& op) {
    int64_t s = d.any ? d.frontier_shift : 0;  // an op of no known call keeps its place
    if (const int32_t call = call_of.Find(op.correlation_id); call != CorrelationIndex::kNone) {
      if (static_cast<size_t>(call) >= moved_calls) return false;
      s = launch_shift[call];
    }
    if (d.any)
      s = std::min(s, d.frontier_shift + std::max<int64_t>(0, op.start_ns - d.frontier_end));
    auto [stream, fresh] = d.streams.try_emplace(op.stream, op.end_ns, s);
    if (!fresh) {
      s = std::min(
          s, stream->second.second + std::max<int64_t>(0, op.start_ns - stream->second.first));
    }
    s = std::max<int64_t>(s, 0);
    stream->second = {op.end_ns, s};
    if (!d.any || op.end_ns > d.frontier_end) {
      d.frontier_end = op.end_ns;
      d.frontier_shift = s;
      d.any = true;
    }
    d.shift.push_back(s);
    return true;
  };
  auto advance = [&](int64_t until_ns) {
    for (DeviceState& d : devices) {
      const std::vector<DeviceOp>& ops = d.timeline->ops;
      while (d.next < ops.size() && ops[d.next].start_ns <= until_ns && move_op(d, ops[d.next])) {
        ++d.next;
      }
    }
  };

  // The host, call by call.
  int64_t shift = 0;
  absl::flat_hash_map<uint64_t, int64_t> last_end;  // per thread, as recorded
  std::vector<HostPoint> points;
  points.reserve(2 * n);
  std::vector<std::pair<int64_t, int64_t>> moved(n);
  for (size_t i = 0; i < n; ++i) {
    const HostCall& c = calls[i];
    int64_t before = 0, inside = 0, after = 0;
    if (Timed(c.category)) {
      auto [prev, fresh] = last_end.try_emplace(c.thread, c.end_ns);
      // Outside the call: no more than the thread's time since its previous call.
      before = fresh ? m.per_call_ns
                     : std::min(m.per_call_ns, std::max<int64_t>(0, c.start_ns - prev->second));
      prev->second = std::max(prev->second, c.end_ns);
      if (c.category == CallCategory::kLaunch) {
        inside = std::clamp<int64_t>(c.end_ns - c.start_ns - m.launch_floor_ns, 0,
                                     m.launch_excess_max_ns);
        after = inside * m.outside_permille / 1000;
      }
    }
    shift += before;
    points.push_back({c.start_ns, shift});
    const int64_t start = c.start_ns - shift;
    shift += inside;
    const int64_t launch_end = std::max(start, c.end_ns - shift);
    launch_shift[i] = shift;  // its work was submitted before the cost after it
    shift += after;
    result.host_ns_ += before + inside + after;
    moved_calls = i + 1;
    if (MayWait(c.category) && c.end_ns > c.start_ns) {
      advance(c.end_ns);
      // The device whose latest work ended while the host was in this call: the host waited
      // for it, and would have without the tracer.
      const DeviceState* waited = nullptr;
      for (const DeviceState& d : devices) {
        if (d.any && d.frontier_end >= c.start_ns && d.frontier_end <= c.end_ns &&
            (waited == nullptr || d.frontier_end > waited->frontier_end)) {
          waited = &d;
        }
      }
      if (waited != nullptr) shift = std::min(shift, waited->frontier_shift);
    }
    moved[i] = {start, after > 0 ? launch_end : std::max(start, c.end_ns - shift)};
    points.push_back({c.end_ns, shift});
  }
  advance(std::numeric_limits<int64_t>::max());

  // Everything moves.
  for (size_t i = 0; i < n; ++i) std::tie(calls[i].start_ns, calls[i].end_ns) = moved[i];
  // The moves keep almost every sequence in order: StableSortByKey merges the few runs.
  StableSortByKey(calls, [](const HostCall& c) { return c.start_ns; });
  StableSortByKey(points, [](const HostPoint& p) { return p.time_ns; });
  auto host_shift = [&](int64_t time) {
    auto it = std::upper_bound(points.begin(), points.end(), time,
                               [](int64_t v, const HostPoint& p) { return v < p.time_ns; });
    return it == points.begin() ? int64_t{0} : std::prev(it)->shift_ns;
  };
  for (Range& r : t->ranges) {
    const int64_t start = r.start_ns - host_shift(r.start_ns);
    r.end_ns = std::max(start, r.end_ns - host_shift(r.end_ns));
    r.start_ns = start;
  }
  StableSortByKey(t->ranges, [](const Range& r) { return r.start_ns; });
  for (HostSample& s : t->samples) s.time_ns -= host_shift(s.time_ns);
  StableSortByKey(t->samples, [](const HostSample& h) { return h.time_ns; });
  std::vector<LostRecordSpan> lost;
  for (LostRecordSpan span : t->info.lost_record_spans) {
    const int64_t start = span.start_ns - host_shift(span.start_ns);
    span.end_ns = std::max(start, span.end_ns - host_shift(span.end_ns));
    span.start_ns = start;
    if (!lost.empty() && span.start_ns <= lost.back().end_ns) {  // kept disjoint
      lost.back().end_ns = std::max(lost.back().end_ns, span.end_ns);
      lost.back().records += span.records;
    } else {
      lost.push_back(span);
    }
  }
  t->info.lost_record_spans = std::move(lost);

  for (size_t i = 0; i < devices.size(); ++i) {
    DeviceTimeline& d = t->devices[i];
    // NVML's readings of the device move with its work: by the shift of the last op that
    // started before them (so that a reading taken during a kernel stays in it).
    const auto device_shift = [&](int64_t time) {
      auto it = std::upper_bound(d.ops.begin(), d.ops.end(), time,
                                 [](int64_t v, const DeviceOp& op) { return v < op.start_ns; });
      return it == d.ops.begin()
                 ? int64_t{0}
                 : devices[i].shift[static_cast<size_t>(std::prev(it) - d.ops.begin())];
    };
    for (GpuMetricSample& reading : t->gpu_metrics) {
      if (reading.device == d.device) reading.time_ns -= device_shift(reading.time_ns);
    }
    for (GpuProcessSeen& p : t->gpu_processes) {
      if (p.device != d.device) continue;
      for (int64_t& busy : p.busy_sample_ns) busy -= device_shift(busy);
      std::sort(p.busy_sample_ns.begin(), p.busy_sample_ns.end());
    }
    TracerShift::DeviceShift& out = result.devices_.emplace_back();
    out.device = d.device;
    int64_t last = 0;
    for (size_t k = 0; k < d.ops.size(); ++k) {
      const int64_t s = devices[i].shift[k];
      d.ops[k].start_ns -= s;
      d.ops[k].end_ns -= s;
      if (s != last) out.points.emplace_back(d.ops[k].start_ns, s);
      last = s;
    }
    StableSortByKey(d.ops, [](const DeviceOp& op) { return op.start_ns; });
    StableSortByKey(out.points, [](const std::pair<int64_t, int64_t>& p) { return p; });
  }
  StableSortByKey(t->gpu_metrics, [](const GpuMetricSample& reading) { return reading.time_ns; });
  return result;
}

}  // namespace gpuidle::internal
