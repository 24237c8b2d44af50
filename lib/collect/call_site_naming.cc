#include "collect/call_site_naming.h"

#include <algorithm>

namespace gpuidle::internal {

void CallSiteNaming::Reset(size_t limit) { sites_.Reset(std::min(kMaxCallSites, limit)); }

bool CallSiteNaming::Enable(const CuptiApi& api, CUpti_SubscriberHandle subscriber,
                            CUpti_CallbackDomain domain, const NeededCallbackIdTable& ids,
                            std::vector<absl::Status>* failures) {
  ids_.fill(Naming::kNone);
  domain_ = domain;
  if (CurrentCallSiteProvider() == nullptr || subscriber == nullptr) return false;
  for (const NeededId& id : ids.of(domain)) {
    if (id.category == CallCategory::kSync || id.category == CallCategory::kCopy) {
      ids_[id.cbid] = Naming::kEveryCall;
    } else if (id.category == CallCategory::kLaunch) {
      ids_[id.cbid] = Naming::kSampled;
    } else {
      continue;
    }
    absl::Status s = CuptiStatus(api, api.EnableCallback(1, subscriber, domain, id.cbid),
                                 "enabling a call-site callback");
    if (!s.ok()) failures->push_back(std::move(s));
  }
  return true;
}

void CallSiteNaming::OnCallEntry(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const CUpti_CallbackData& call, CallTimer& timer) {
  if (domain != domain_.load(std::memory_order_relaxed) || cbid >= ids_.size()) return;
  const Naming naming = ids_[cbid];
  if (naming == Naming::kNone) return;
  const SiteFunction provider = CurrentCallSiteProvider();
  if (provider == nullptr) return;
  if (naming == Naming::kEveryCall) {
    if (const char* site = provider(); site != nullptr) sites_.Add(call.correlationId, site);
    return;
  }
  CollectingThread& t = timer.ThisThread();
  const int64_t now = timer.Now();
  if (now < t.next_site_sample_ns) return;
  t.next_site_sample_ns = now + kLaunchSitePeriodNs;
  // No site (a thread without Python frames): the sample borrows another thread's call site.
  sites_.AddSample(t.thread, now, kLaunchSitePeriodNs, provider());
}

}  // namespace gpuidle::internal
