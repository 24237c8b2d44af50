// What the writers share about a device's phases (docs/REPORT_SCHEMA.md, "Phases"): the one-off
// parts of one phase, their names, the device with the longest start-up.
#ifndef GPUIDLE_LIB_REPORT_PHASES_H_
#define GPUIDLE_LIB_REPORT_PHASES_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
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

// A one-off kind as the text outputs name it ("CUDA init"; compilation in the steady state is
// a re-compilation).
inline absl::string_view OneOffLabel(OneOffKind k, Phase p) {
  switch (k) {
    case OneOffKind::kCudaInit:
      return "CUDA init";
    case OneOffKind::kCompilation:
      return p == Phase::kSteady ? "re-compilation" : "compilation";
    case OneOffKind::kModuleLoad:
      return "module load";
    case OneOffKind::kFirstCall:
      return "first calls";
    case OneOffKind::kWarmUpStep:
      return "warm-up step";
    case OneOffKind::kSetUp:
      return "set-up";
    case OneOffKind::kWindDown:
      return "teardown";
    case OneOffKind::kGpuBusy:
      return "GPU busy";
    case OneOffKind::kRecordsLost:
      return "records lost";
    case OneOffKind::kGraphCapture:
      return "graph capture";
    case OneOffKind::kNoDemand:
      return "no demand (no request in flight)";
  }
  return OneOffKindName(k);
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
