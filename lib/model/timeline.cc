#include "model/timeline.h"

#include <algorithm>

namespace gpuidle::internal {
namespace {

template <typename T>
void SortByStart(std::vector<T>& v) {
  std::stable_sort(v.begin(), v.end(),
                   [](const T& a, const T& b) { return a.start_ns < b.start_ns; });
}

}  // namespace

void Timeline::Finalize() {
  std::sort(devices.begin(), devices.end(),
            [](const DeviceTimeline& a, const DeviceTimeline& b) { return a.device < b.device; });
  for (DeviceTimeline& d : devices) SortByStart(d.ops);
  SortByStart(calls);
  SortByStart(ranges);
  std::stable_sort(samples.begin(), samples.end(),
                   [](const HostSample& a, const HostSample& b) { return a.time_ns < b.time_ns; });
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

}  // namespace gpuidle::internal
