#include "collect/copy_records.h"

#include <new>

#include "absl/strings/str_cat.h"

namespace gpuidle::internal {
namespace {

constexpr CUpti_ActivityKind kCopyKinds[] = {CUPTI_ACTIVITY_KIND_MEMCPY,
                                             CUPTI_ACTIVITY_KIND_MEMCPY2};

std::vector<uint8_t> CopyIds(const std::vector<NeededId>& ids) {
  std::vector<uint8_t> copies;
  for (const NeededId& id : ids) {
    if (id.category != CallCategory::kCopy) continue;
    if (copies.size() <= id.cbid) copies.resize(id.cbid + 1, 0);
    copies[id.cbid] = 1;
  }
  return copies;
}

}  // namespace

void CopyRecordsOnDemand::Arm(const CuptiApi& api, const NeededCallbackIdTable& ids) {
  std::lock_guard<std::mutex> lock(mu_);
  api_ = &api;
  runtime_copies_ = CopyIds(ids.runtime());
  driver_copies_ = CopyIds(ids.driver());
  enabled_ = false;
  failure_ = absl::OkStatus();
  armed_.store(true, std::memory_order_release);
}

void CopyRecordsOnDemand::EnableIfCopy(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  std::lock_guard<std::mutex> lock(mu_);
  if (enabled_ || api_ == nullptr || !armed_.load(std::memory_order_relaxed)) return;
  const std::vector<uint8_t>& copies =
      domain == CUPTI_CB_DOMAIN_DRIVER_API ? driver_copies_ : runtime_copies_;
  if (cbid >= copies.size() || copies[cbid] == 0) return;
  for (CUpti_ActivityKind kind : kCopyKinds) {
    failure_.Update(CuptiStatus(*api_, api_->ActivityEnable(kind),
                                absl::StrCat("enabling activity kind ", static_cast<int>(kind))));
  }
  enabled_ = true;
  armed_.store(false, std::memory_order_release);  // later calls skip the check at once
}

absl::Status CopyRecordsOnDemand::Disarm() {
  std::lock_guard<std::mutex> lock(mu_);
  armed_.store(false, std::memory_order_release);
  if (enabled_ && api_ != nullptr) {
    for (CUpti_ActivityKind kind : kCopyKinds) {
      failure_.Update(
          CuptiStatus(*api_, api_->ActivityDisable(kind), "disabling an activity kind"));
    }
  }
  enabled_ = false;
  absl::Status failure = failure_;
  failure_ = absl::OkStatus();
  return failure;
}

void CopyRecordsOnDemand::AbandonAfterFork() {
  armed_.store(false, std::memory_order_relaxed);
  new (&mu_) std::mutex();  // a parent's thread may have held it
  enabled_ = false;
  api_ = nullptr;
}

bool CopyRecordsOnDemand::enabled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return enabled_;
}

}  // namespace gpuidle::internal
