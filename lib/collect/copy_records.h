// CUPTI's memcpy records cost every kernel launch while they are enabled, whether the program
// copies or not (H200: a tiny-MLP loop that made no copy ran 0.7 ms per step faster without
// them; docs/PERFORMANCE.md). So they are enabled at the entry of a collection's first copy call
// instead: that copy's record and every later one are kept, and a program that never copies
// never pays for them.
#ifndef GPUIDLE_LIB_COLLECT_COPY_RECORDS_H_
#define GPUIDLE_LIB_COLLECT_COPY_RECORDS_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "collect/callback_ids.h"
#include "collect/cupti_api.h"

namespace gpuidle::internal {

class CopyRecordsOnDemand {
 public:
  // At a start, before the callbacks of ids are enabled: the copy calls among them will
  // enable the copy kinds.
  void Arm(const CuptiApi& api, const NeededCallbackIdTable& ids);
  // At the entry of a call, on the calling thread: the first copy call enables the kinds (a
  // concurrent copy call waits until they are). Cheap otherwise: one relaxed load.
  void OnCallEntry(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
    if (armed_.load(std::memory_order_acquire)) EnableIfCopy(domain, cbid);
  }
  // At a stop: disarms, and disables the kinds if they were enabled. The failures of CUPTI
  // calls meanwhile, or OK.
  absl::Status Disarm();
  bool enabled() const;
  // In a forked child: forgets the parent's state without calling CUPTI.
  void AbandonAfterFork();

 private:
  void EnableIfCopy(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);

  std::atomic<bool> armed_{false};
  mutable std::mutex mu_;
  const CuptiApi* api_ = nullptr;
  std::vector<uint8_t> runtime_copies_, driver_copies_;  // 1 at the cbid of a copy call
  bool enabled_ = false;
  absl::Status failure_;
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_COPY_RECORDS_H_
