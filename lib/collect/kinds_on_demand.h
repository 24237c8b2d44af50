// Some of CUPTI's activity kinds cost every kernel launch while they are enabled, whether the
// program makes the calls they record or not (H200: memcpy records 0.7 ms per step of a tiny-MLP
// loop that made no copy; synchronization and CUDA-event records 0.18x of a tiny-MLP profile
// and 0.37x of a ResNet-50 one whose steps neither sync nor wait: docs/PERFORMANCE.md). So they
// are enabled at the entry of a collection's first call of the kind they record instead: that
// call's record and every later one are kept, and a program that never makes such a call
// never pays for them.
#ifndef GPUIDLE_LIB_COLLECT_KINDS_ON_DEMAND_H_
#define GPUIDLE_LIB_COLLECT_KINDS_ON_DEMAND_H_

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "collect/callback_ids.h"
#include "collect/cupti_api.h"

namespace gpuidle::internal {

class KindsOnDemand {
 public:
  // The calls of the `triggers` categories enable the `kinds`.
  KindsOnDemand(std::initializer_list<CallCategory> triggers,
                std::initializer_list<CUpti_ActivityKind> kinds)
      : triggers_(triggers), kinds_(kinds) {}

  // At a start, before the callbacks of ids are enabled: the trigger calls among them will
  // enable the kinds, those of `kinds` that `wanted` keeps (a probe may leave some out).
  template <typename Wanted>
  void Arm(const CuptiApi& api, const NeededCallbackIdTable& ids, Wanted wanted) {
    std::vector<CUpti_ActivityKind> kinds;
    for (CUpti_ActivityKind k : kinds_) {
      if (wanted(k)) kinds.push_back(k);
    }
    Arm(api, ids, std::move(kinds));
  }
  // At the entry of a call, on the calling thread: the first trigger call enables the kinds (a
  // concurrent one waits until they are). Cheap otherwise: one relaxed load.
  void OnCallEntry(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
    if (armed_.load(std::memory_order_acquire)) EnableIfTrigger(domain, cbid);
  }
  // At a stop: disarms, and disables the kinds if they were enabled. The failures of CUPTI
  // calls meanwhile, or OK.
  absl::Status Disarm();
  bool Handles(CUpti_ActivityKind kind) const;
  bool enabled() const;
  // In a forked child: forgets the parent's state without calling CUPTI.
  void AbandonAfterFork();

 private:
  void Arm(const CuptiApi& api, const NeededCallbackIdTable& ids,
           std::vector<CUpti_ActivityKind> kinds);
  void EnableIfTrigger(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
  std::vector<uint8_t> TriggerIds(const std::vector<NeededId>& ids) const;

  const std::vector<CallCategory> triggers_;
  const std::vector<CUpti_ActivityKind> kinds_;
  std::atomic<bool> armed_{false};
  mutable std::mutex mu_;
  const CuptiApi* api_ = nullptr;
  std::vector<CUpti_ActivityKind> armed_kinds_;
  std::vector<uint8_t> runtime_triggers_, driver_triggers_;  // 1 at the cbid of a trigger call
  bool enabled_ = false;
  absl::Status failure_;
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_KINDS_ON_DEMAND_H_
