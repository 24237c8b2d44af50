// The CUPTI side of the benchmark probes' seam (collect/collector_probes.h, which names no CUPTI
// type): which activity kinds the probes keep, and their own CUPTI work: CUPTI's activity records
// of the needed API calls instead of gpuidle's timed callbacks (ApiRecords::kAuto, kWholeKinds,
// kIdsOnly), so that the overhead benchmark can compare them, and the '+' probes. In a product
// build KeepsKind is always true and the rest does nothing: api_activity_probe.cc, their code, is
// compiled into a probe build only.
#ifndef GPUIDLE_LIB_COLLECT_API_ACTIVITY_PROBE_H_
#define GPUIDLE_LIB_COLLECT_API_ACTIVITY_PROBE_H_

#include "collect/callback_ids.h"
#include "collect/collector_probes.h"
#include "collect/cupti_api.h"

namespace gpuidle::internal {

// Whether the probes keep kind (the kernels always; every kind in a product build).
constexpr bool KeepsKind(const CollectorProbes& probes, CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return true;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      return !probes.LeavesOut(kPartOtherKinds | kPartMemcpyRecords);
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return !probes.LeavesOut(kPartOtherKinds | kPartMemsetRecords);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return !probes.LeavesOut(kPartOtherKinds | kPartSyncRecords);
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
      return !probes.LeavesOut(kPartOtherKinds | kPartEventRecords);
    case CUPTI_ACTIVITY_KIND_DEVICE:
      return !probes.LeavesOut(kPartOtherKinds | kPartDeviceRecords);
    default:
      return !probes.LeavesOut(kPartOtherKinds);
  }
}

#if GPUIDLE_COLLECTOR_PROBES
// At a start, before the kinds are enabled: the '+' probes (kAddLatencyTimestamps,
// kAddLargeDeviceBuffers), CUPTI settings the product does not use.
void EnableAddedProbes(const CollectorProbes& probes);
// At a start whose calls are recorded as mode (kWholeKinds or kIdsOnly) says: enables those
// records, leaving out the domains the probes leave out.
void EnableApiActivityRecords(const CuptiApi& api, ApiRecords mode,
                              const NeededCallbackIdTable& ids, const CollectorProbes& probes);
// At a stop: disables what the two enabled, and switches the ids kWholeKinds turned off back on
// (CUPTI's defaults for the next user of CUPTI).
void DisableProbes(const CuptiApi& api, const CollectorProbes& probes);
#else
inline void EnableAddedProbes(const CollectorProbes&) {}
inline void EnableApiActivityRecords(const CuptiApi&, ApiRecords, const NeededCallbackIdTable&,
                                     const CollectorProbes&) {}
inline void DisableProbes(const CuptiApi&, const CollectorProbes&) {}
#endif

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_API_ACTIVITY_PROBE_H_
