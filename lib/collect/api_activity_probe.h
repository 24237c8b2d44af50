// Probe builds only (collector_probes.h): CUPTI's activity records of the needed API calls
// instead of gpuidle's timed callbacks (ApiRecords::kAuto, kWholeKinds, kIdsOnly), so that the
// overhead benchmark can compare them.
#ifndef GPUIDLE_LIB_COLLECT_API_ACTIVITY_PROBE_H_
#define GPUIDLE_LIB_COLLECT_API_ACTIVITY_PROBE_H_

#include <vector>

#include "collect/callback_ids.h"
#include "collect/collector_probes.h"
#include "collect/cupti_api.h"

namespace gpuidle::internal {

// The '+' probes (kAddLatencyTimestamps, kAddLargeDeviceBuffers): CUPTI settings the product
// does not use, switched on before the kinds are enabled and off at stop. Looked up by name, so
// that the product's CUPTI table stays as it is.
void EnableAddedProbes(const CollectorProbes& probes);
void DisableAddedProbes(const CollectorProbes& probes);

class ApiActivityProbe {
 public:
  // Enables the records as mode (kWholeKinds or kIdsOnly) says, leaving out the domains the
  // probes leave out.
  void Enable(const CuptiApi& api, ApiRecords mode, const NeededCallbackIdTable& ids,
              const CollectorProbes& probes);
  // Disables what Enable enabled and switches the ids kWholeKinds turned off back on (CUPTI's
  // defaults for the next user of CUPTI).
  void Disable(const CuptiApi& api);

 private:
  void EnableDomain(const CuptiApi& api, ApiRecords mode, CUpti_ActivityKind kind, uint32_t end,
                    const std::vector<NeededId>& needed,
                    CUptiResult (*enable_id)(CUpti_CallbackId, uint8_t),
                    std::vector<CUpti_CallbackId>* enabled,
                    std::vector<CUpti_CallbackId>* switched_off);

  std::vector<CUpti_ActivityKind> kinds_;
  std::vector<CUpti_CallbackId> runtime_ids_, driver_ids_;
  std::vector<CUpti_CallbackId> runtime_ids_off_, driver_ids_off_;
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_API_ACTIVITY_PROBE_H_
