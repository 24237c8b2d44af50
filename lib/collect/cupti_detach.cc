#include "collect/cupti_detach.h"

#include <atomic>
#include <thread>

namespace gpuidle::internal {
namespace {

constexpr CUpti_CallbackId kDetachTrigger = CUPTI_DRIVER_TRACE_CBID_cuDeviceGetCount;

// What the callback needs, on whichever thread makes the triggering call.
struct Detach {
  enum State : int { kNotArmed, kArmed, kDetaching, kDetached };
  std::atomic<int> state{kNotArmed};
  std::atomic<bool> finalized{false};  // cuptiFinalize succeeded (set before kDetached)
  std::atomic<const CuptiApi*> api{nullptr};
  CUpti_SubscriberHandle subscriber = nullptr;
};

Detach& TheDetach() {
  static Detach* detach = new Detach();  // never destroyed: CUPTI may call back at exit
  return *detach;
}

void CUPTIAPI DetachCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                             const void* data) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API || cbid != kDetachTrigger) return;
  if (static_cast<const CUpti_CallbackData*>(data)->callbackSite != CUPTI_API_EXIT) return;
  Detach& d = TheDetach();
  int armed = Detach::kArmed;  // one thread detaches, even if others call cuDeviceGetCount
  if (!d.state.compare_exchange_strong(armed, Detach::kDetaching)) return;
  const CuptiApi* api = d.api.load();
  // Failing to unsubscribe changes nothing here: cuptiFinalize drops every subscriber.
  api->Unsubscribe(d.subscriber);
  d.finalized.store(api->Finalize() == CUPTI_SUCCESS);
  d.state.store(Detach::kDetached);
}

}  // namespace

bool DetachCupti(const CuptiApi& api, int (*cuda_call)()) {
  if (api.Finalize == nullptr || cuda_call == nullptr) return false;
  Detach& d = TheDetach();
  if (api.Subscribe(&d.subscriber, &DetachCallback, nullptr) != CUPTI_SUCCESS) return false;
  if (api.EnableCallback(1, d.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, kDetachTrigger) !=
      CUPTI_SUCCESS) {
    api.Unsubscribe(d.subscriber);
    return false;
  }
  d.api.store(&api);
  d.state.store(Detach::kArmed);
  cuda_call();
  int armed = Detach::kArmed;
  if (d.state.compare_exchange_strong(armed, Detach::kNotArmed)) {
    api.Unsubscribe(d.subscriber);  // CUPTI did not call back (no driver, say)
    return false;
  }
  // The callback ran: on this thread, or on one that called cuDeviceGetCount meanwhile.
  while (d.state.load() != Detach::kDetached) std::this_thread::yield();
  d.state.store(Detach::kNotArmed);
  return d.finalized.load();
}

}  // namespace gpuidle::internal
