#include "collect/api_activity_probe.h"

namespace gpuidle::internal {

void ApiActivityProbe::Enable(const CuptiApi& api, ApiRecords mode,
                              const NeededCallbackIdTable& ids, const CollectorProbes& probes) {
  if (!probes.LeavesOut(kPartRuntimeCalls)) {
    EnableDomain(api, mode, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_SIZE,
                 ids.runtime(), api.ActivityEnableRuntimeApi, &runtime_ids_, &runtime_ids_off_);
  }
  if (!probes.LeavesOut(kPartDriverCalls)) {
    EnableDomain(api, mode, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_SIZE, ids.driver(),
                 api.ActivityEnableDriverApi, &driver_ids_, &driver_ids_off_);
  }
}

void ApiActivityProbe::EnableDomain(const CuptiApi& api, ApiRecords mode, CUpti_ActivityKind kind,
                                    uint32_t end, const std::vector<NeededId>& needed,
                                    CUptiResult (*enable_id)(CUpti_CallbackId, uint8_t),
                                    std::vector<CUpti_CallbackId>* enabled,
                                    std::vector<CUpti_CallbackId>* switched_off) {
  if (mode == ApiRecords::kWholeKinds) {
    if (api.ActivityEnable(kind) != CUPTI_SUCCESS) return;
    kinds_.push_back(kind);
    auto next = needed.begin();  // ascending, like the loop
    for (uint32_t cbid = 1; cbid < end; ++cbid) {
      if (next != needed.end() && next->cbid == cbid) {
        ++next;
      } else if (enable_id(cbid, 0) == CUPTI_SUCCESS) {
        switched_off->push_back(cbid);
      }
    }
    return;
  }
  for (const NeededId& id : needed) {
    if (enable_id(id.cbid, 1) == CUPTI_SUCCESS) enabled->push_back(id.cbid);
  }
}

void ApiActivityProbe::Disable(const CuptiApi& api) {
  for (CUpti_CallbackId cbid : runtime_ids_) api.ActivityEnableRuntimeApi(cbid, 0);
  for (CUpti_CallbackId cbid : driver_ids_) api.ActivityEnableDriverApi(cbid, 0);
  for (CUpti_ActivityKind kind : kinds_) api.ActivityDisable(kind);
  for (CUpti_CallbackId cbid : runtime_ids_off_) api.ActivityEnableRuntimeApi(cbid, 1);
  for (CUpti_CallbackId cbid : driver_ids_off_) api.ActivityEnableDriverApi(cbid, 1);
  kinds_.clear();
  runtime_ids_.clear();
  driver_ids_.clear();
  runtime_ids_off_.clear();
  driver_ids_off_.clear();
}

}  // namespace gpuidle::internal
