#include "collect/kinds_on_demand.h"

#include <algorithm>
#include <new>

#include "absl/strings/str_cat.h"

namespace gpuidle::internal {

std::vector<uint8_t> KindsOnDemand::TriggerIds(const std::vector<NeededId>& ids) const {
  std::vector<uint8_t> triggers;
  for (const NeededId& id : ids) {
    if (std::find(triggers_.begin(), triggers_.end(), id.category) == triggers_.end()) continue;
    if (triggers.size() <= id.cbid) triggers.resize(id.cbid + 1, 0);
    triggers[id.cbid] = 1;
  }
  return triggers;
}

bool KindsOnDemand::Handles(CUpti_ActivityKind kind) const {
  return std::find(kinds_.begin(), kinds_.end(), kind) != kinds_.end();
}

void KindsOnDemand::Arm(const CuptiApi& api, const NeededCallbackIdTable& ids,
                        std::vector<CUpti_ActivityKind> kinds) {
  std::lock_guard<std::mutex> lock(mu_);
  api_ = &api;
  armed_kinds_ = std::move(kinds);
  runtime_triggers_ = TriggerIds(ids.runtime());
  driver_triggers_ = TriggerIds(ids.driver());
  enabled_ = false;
  failure_ = absl::OkStatus();
  armed_.store(!armed_kinds_.empty(), std::memory_order_release);
}

void KindsOnDemand::EnableIfTrigger(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  std::lock_guard<std::mutex> lock(mu_);
  if (enabled_ || api_ == nullptr || !armed_.load(std::memory_order_relaxed)) return;
  const std::vector<uint8_t>& triggers =
      domain == CUPTI_CB_DOMAIN_DRIVER_API ? driver_triggers_ : runtime_triggers_;
  if (cbid >= triggers.size() || triggers[cbid] == 0) return;
  for (CUpti_ActivityKind kind : armed_kinds_) {
    failure_.Update(CuptiStatus(*api_, api_->ActivityEnable(kind),
                                absl::StrCat("enabling activity kind ", static_cast<int>(kind))));
  }
  enabled_ = true;
  armed_.store(false, std::memory_order_release);  // later calls skip the check at once
}

absl::Status KindsOnDemand::Disarm() {
  std::lock_guard<std::mutex> lock(mu_);
  armed_.store(false, std::memory_order_release);
  if (enabled_ && api_ != nullptr) {
    for (CUpti_ActivityKind kind : armed_kinds_) {
      failure_.Update(
          CuptiStatus(*api_, api_->ActivityDisable(kind), "disabling an activity kind"));
    }
  }
  enabled_ = false;
  absl::Status failure = failure_;
  failure_ = absl::OkStatus();
  return failure;
}

void KindsOnDemand::AbandonAfterFork() {
  armed_.store(false, std::memory_order_relaxed);
  new (&mu_) std::mutex();  // a parent's thread may have held it
  enabled_ = false;
  api_ = nullptr;
}

bool KindsOnDemand::enabled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return enabled_;
}

}  // namespace gpuidle::internal
