// What the writers share about a device's phases (docs/REPORT_SCHEMA.md, "Phases"): the one-off
// parts of one phase, the device with the longest start-up.
#ifndef GPUIDLE_LIB_REPORT_PHASES_H_
#define GPUIDLE_LIB_REPORT_PHASES_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gpuidle/report.h"

namespace gpuidle::internal {

// The one-off parts of phase p, most time first (ties keep the report's order).
inline std::vector<const OneOffTime*> PartsOf(const DeviceReport& d, Phase p) {
  std::vector<const OneOffTime*> parts;
  for (const OneOffTime& o : d.one_off) {
    if (o.phase == p) parts.push_back(&o);
  }
  std::stable_sort(parts.begin(), parts.end(),
                   [](const OneOffTime* a, const OneOffTime* b) { return a->ns > b->ns; });
  return parts;
}

// The device whose phase p (start-up or wind-down) is longest; the first of equals; nullptr
// without devices.
inline const DeviceReport* LongestPhase(const Report& r, Phase p) {
  const DeviceReport* best = nullptr;
  for (const DeviceReport& d : r.devices) {
    if (best == nullptr || d.PhaseNs(p) > best->PhaseNs(p)) best = &d;
  }
  return best;
}

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_REPORT_PHASES_H_
