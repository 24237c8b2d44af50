// What the writers share about a device's phases (docs/REPORT_SCHEMA.md, "Phases"): the steady
// state's bounds, the one-off parts of one phase, the device with the longest start-up.
#ifndef GPUIDLE_LIB_REPORT_PHASES_H_
#define GPUIDLE_LIB_REPORT_PHASES_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gpuidle/report.h"

namespace gpuidle::internal {

struct SteadyBounds {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t ns() const { return end_ns - start_ns; }
};

// The device's steady state. A DeviceReport made without phases (steady_start_ns and
// steady_end_ns both 0, no one-off time: a report built by hand, or by an analysis that does not
// split phases) is all steady state: its window.
inline SteadyBounds SteadyOf(const DeviceReport& d) {
  if (d.steady_start_ns == 0 && d.steady_end_ns == 0 && d.one_off.empty()) {
    return {d.window_start_ns, d.window_start_ns + d.window_ns};
  }
  return {d.steady_start_ns, d.steady_end_ns};
}

// Start-up and wind-down spans (>= 0); for kSteady, the steady state's span.
inline int64_t PhaseSpanNs(const DeviceReport& d, Phase p) {
  const SteadyBounds s = SteadyOf(d);
  switch (p) {
    case Phase::kStartUp:
      return std::max<int64_t>(0, s.start_ns - d.window_start_ns);
    case Phase::kWindDown:
      return std::max<int64_t>(0, d.window_end_ns - s.end_ns);
    case Phase::kSteady:
      break;
  }
  return std::max<int64_t>(0, s.ns());
}

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

// Steady-state one-off idle time (taken out of idle_ns).
inline int64_t SteadyOneOffNs(const DeviceReport& d) {
  int64_t ns = 0;
  for (const OneOffTime* o : PartsOf(d, Phase::kSteady)) ns += o->ns;
  return ns;
}

// The device whose phase p (start-up or wind-down) is longest; the first of equals; nullptr
// without devices.
inline const DeviceReport* LongestPhase(const Report& r, Phase p) {
  const DeviceReport* best = nullptr;
  for (const DeviceReport& d : r.devices) {
    if (best == nullptr || PhaseSpanNs(d, p) > PhaseSpanNs(*best, p)) best = &d;
  }
  return best;
}

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_REPORT_PHASES_H_
