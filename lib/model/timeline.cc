#include "model/timeline.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "model/stable_sort.h"

namespace gpuidle::internal {
namespace {

template <typename T>
void SortByStart(std::vector<T>& v) {
  StableSortByKey(v, [](const T& x) { return x.start_ns; });
}

bool WithinTimeLimits(int64_t start, int64_t end) {
  return start >= kMinTimeNs && end < kMaxTimeNs && start <= end && end - start <= kMaxDurationNs;
}

template <typename T>
int64_t StartOf(const T& x) {
  if constexpr (requires { x.time_ns; }) {
    return x.time_ns;
  } else {
    return x.start_ns;
  }
}

template <typename T>
int64_t EndOf(const T& x) {
  if constexpr (requires { x.time_ns; }) {
    return x.time_ns;
  } else {
    return x.end_ns;
  }
}

// Calls f(start, end) for every event: device ops, calls, ranges, samples (start == end).
template <typename F>
void ForEachEvent(const Timeline& t, const F& f) {
  for (const DeviceTimeline& d : t.devices) {
    for (const DeviceOp& op : d.ops) f(op.start_ns, op.end_ns);
  }
  for (const HostCall& c : t.calls) f(c.start_ns, c.end_ns);
  for (const Range& r : t.ranges) f(r.start_ns, r.end_ns);
  for (const HostSample& x : t.samples) f(x.time_ns, x.time_ns);
}

// Erases the events for which keep(start, end) is false; returns how many.
template <typename Keep>
uint64_t EraseEventsUnless(Timeline& t, const Keep& keep) {
  uint64_t n = 0;
  const auto erase = [&](auto& v) {
    const size_t before = v.size();
    std::erase_if(v, [&](const auto& x) { return !keep(StartOf(x), EndOf(x)); });
    n += before - v.size();
  };
  for (DeviceTimeline& d : t.devices) erase(d.ops);
  erase(t.calls);
  erase(t.ranges);
  erase(t.samples);
  return n;
}

// The time invariants of timeline.h. One pass over the events when they hold, as they do for
// every sound trace; the median only where the events spread too far.
void EnforceTimeInvariants(Timeline& t) {
  // The span of the events kept, found in the same pass.
  int64_t lo = std::numeric_limits<int64_t>::max();
  int64_t hi = std::numeric_limits<int64_t>::min();
  const uint64_t out_of_range = EraseEventsUnless(t, [&](int64_t start, int64_t end) {
    if (!WithinTimeLimits(start, end)) return false;
    lo = std::min(lo, start);
    hi = std::max(hi, end);
    return true;
  });
  if (out_of_range != 0) {
    t.info.warnings.push_back(absl::StrCat(
        "skipped ", out_of_range,
        " events whose times are out of range (a time stamp before -2^60 ns or from 2^63 - 2^60 "
        "ns on, an end before the start, or a duration over 2^52 ns)"));
  }
  // Both in [kMinTimeNs, kMaxTimeNs): the difference fits.
  if (lo > hi || hi - lo <= kMaxTimelineSpanNs) {
    return;
  }
  std::vector<int64_t> starts;
  ForEachEvent(t, [&](int64_t start, int64_t) { starts.push_back(start); });
  const auto middle = starts.begin() + static_cast<std::ptrdiff_t>(starts.size() / 2);
  std::nth_element(starts.begin(), middle, starts.end());
  const int64_t median = *middle;
  const int64_t half = kMaxTimelineSpanNs / 2;
  const uint64_t far = EraseEventsUnless(t, [&](int64_t start, int64_t end) {
    return start >= median - half && end <= median + half;
  });
  t.info.warnings.push_back(absl::StrCat(
      "skipped ", far,
      " events more than 2^52 ns (52 days) from the median start of the trace's events: one "
      "trace spans at most 2^53 ns"));
}

}  // namespace

void Timeline::Finalize() {
  EnforceTimeInvariants(*this);
  std::sort(devices.begin(), devices.end(),
            [](const DeviceTimeline& a, const DeviceTimeline& b) { return a.device < b.device; });
  for (DeviceTimeline& d : devices) SortByStart(d.ops);
  SortByStart(calls);
  SortByStart(ranges);
  StableSortByKey(samples, [](const HostSample& x) { return x.time_ns; });
}

bool Timeline::HasActivity() const {
  if (!calls.empty() || !ranges.empty()) return true;
  for (const DeviceTimeline& d : devices) {
    if (!d.ops.empty()) return true;
  }
  return false;
}

DeviceTimeline& Timeline::DeviceFor(int device) {
  for (DeviceTimeline& d : devices) {
    if (d.device == device) return d;
  }
  DeviceTimeline& d = devices.emplace_back();
  d.device = device;
  return d;
}

const DeviceTimeline* Timeline::FindDevice(int device) const {
  for (const DeviceTimeline& d : devices) {
    if (d.device == device) return &d;
  }
  return nullptr;
}

Timeline Timeline::Copy() const {
  Timeline copy;
  copy.strings = strings.Copy();
  copy.devices = devices;
  copy.calls = calls;
  copy.ranges = ranges;
  copy.samples = samples;
  copy.collectives = collectives;
  copy.gpu_metrics = gpu_metrics;
  copy.gpu_processes = gpu_processes;
  copy.gpu_throughput = gpu_throughput;
  copy.info = info;
  return copy;
}

}  // namespace gpuidle::internal
