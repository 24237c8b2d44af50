// Which CUPTI callback ids the collector enables: the launch, sync, copy and wait-event calls
// the analysis needs (model/cuda_api.h decides by name), and no other. Tracing every runtime
// and driver call cost ~60% on a tiny-kernel PyTorch loop (DESIGN.md, collector rules).
#ifndef GPUIDLE_LIB_COLLECT_CALLBACK_IDS_H_
#define GPUIDLE_LIB_COLLECT_CALLBACK_IDS_H_

#include <vector>

#include "collect/cupti_api.h"
#include "model/cuda_api.h"

namespace gpuidle::internal {

struct NeededId {
  CUpti_CallbackId cbid;
  CallCategory category;
};

// The needed ids of one API domain (runtime or driver), ascending, each with its category, as
// named by the CUPTI of api.
std::vector<NeededId> NeededCallbackIds(const CuptiApi& api, CUpti_CallbackDomain domain);

// The needed ids of both domains, looked up once per CUPTI (CUPTI names thousands of ids).
class NeededCallbackIdTable {
 public:
  void LookUp(const CuptiApi& api);
  const std::vector<NeededId>& runtime() const { return runtime_; }
  const std::vector<NeededId>& driver() const { return driver_; }
  const std::vector<NeededId>& of(CUpti_CallbackDomain domain) const {
    return domain == CUPTI_CB_DOMAIN_DRIVER_API ? driver_ : runtime_;
  }

 private:
  const CuptiApi* looked_up_for_ = nullptr;
  std::vector<NeededId> runtime_;
  std::vector<NeededId> driver_;
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_CALLBACK_IDS_H_
