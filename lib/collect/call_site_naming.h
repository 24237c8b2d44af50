// Naming the places that make the traced calls, when a language binding set a call-site
// provider (collect/call_sites.h): CUPTI calls back at the entry of every sync, copy and launch
// of one domain. Every sync and copy is named; launches once per period on each thread, the
// sample holding until the thread's next one (a Python provider walks the interpreter's frames
// at each call it names: at every launch, that would cost a launch-bound loop more than the
// timing itself).
#ifndef GPUIDLE_LIB_COLLECT_CALL_SITE_NAMING_H_
#define GPUIDLE_LIB_COLLECT_CALL_SITE_NAMING_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "collect/call_sites.h"
#include "collect/call_timing.h"
#include "collect/callback_ids.h"
#include "collect/cupti_api.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// One per collector (Collector's state).
class CallSiteNaming {
 public:
  static constexpr int64_t kLaunchSitePeriodNs = 1'000'000;
  // 16 bytes a site, 32 a launch sample: 1M of them is at most 32 MB, hours of offenders.
  static constexpr size_t kMaxCallSites = size_t{1} << 20;

  // A new collection keeps at most `limit` sites (and kMaxCallSites).
  void Reset(size_t limit);
  // With a provider: enables the callbacks of subscriber for the syncs, copies and launches of
  // domain among ids. Returns whether calls are to be named; a callback CUPTI refuses is one
  // error in *failures (its calls go unnamed).
  bool Enable(const CuptiApi& api, CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain,
              const NeededCallbackIdTable& ids, std::vector<absl::Status>* failures);
  // Turns naming on or off (the callbacks stay as they are; off, they return at once).
  void SetNaming(bool on) { naming_.store(on, std::memory_order_release); }
  bool naming() const { return naming_.load(std::memory_order_acquire); }

  // At the entry of a call, on its thread: asks the provider where it comes from.
  void OnCallEntry(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                   const CUpti_CallbackData& call, CallTimer& timer);

  // The sites of the stopped collection as Python-frame ranges (CallSiteLog::MoveInto).
  void MoveInto(Timeline* timeline) { sites_.MoveInto(timeline); }

 private:
  enum class Naming : uint8_t { kNone, kEveryCall, kSampled };

  CallSiteLog sites_;
  std::atomic<bool> naming_{false};
  // Written while naming_ is false; naming_ is set (release) afterwards.
  std::atomic<CUpti_CallbackDomain> domain_{CUPTI_CB_DOMAIN_RUNTIME_API};
  std::array<Naming, std::max<size_t>(CUPTI_RUNTIME_TRACE_CBID_SIZE, CUPTI_DRIVER_TRACE_CBID_SIZE)>
      ids_{};
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_CALL_SITE_NAMING_H_
