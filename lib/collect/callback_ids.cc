#include "collect/callback_ids.h"

namespace gpuidle::internal {

std::vector<NeededId> NeededCallbackIds(const CuptiApi& api, CUpti_CallbackDomain domain) {
  const uint32_t end = domain == CUPTI_CB_DOMAIN_DRIVER_API ? CUPTI_DRIVER_TRACE_CBID_SIZE
                                                            : CUPTI_RUNTIME_TRACE_CBID_SIZE;
  std::vector<NeededId> ids;
  for (uint32_t cbid = 1; cbid < end; ++cbid) {
    const char* name = nullptr;
    if (api.GetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
    const CallCategory category = CategorizeCudaApi(CanonicalCudaApiName(name));
    if (category != CallCategory::kOther) ids.push_back(NeededId{cbid, category});
  }
  return ids;
}

void NeededCallbackIdTable::LookUp(const CuptiApi& api) {
  if (looked_up_for_ == &api) return;
  runtime_ = NeededCallbackIds(api, CUPTI_CB_DOMAIN_RUNTIME_API);
  driver_ = NeededCallbackIds(api, CUPTI_CB_DOMAIN_DRIVER_API);
  looked_up_for_ = &api;
}

}  // namespace gpuidle::internal
