#include "collect/call_sites.h"

#include <atomic>

#include "absl/container/flat_hash_map.h"

namespace gpuidle::internal {
namespace {
std::atomic<SiteFunction> provider{nullptr};
}  // namespace

void SetSiteFunction(SiteFunction f) { provider.store(f, std::memory_order_release); }

SiteFunction CurrentCallSiteProvider() { return provider.load(std::memory_order_acquire); }

void CallSiteLog::Reset(size_t limit) {
  std::lock_guard<std::mutex> lock(mu_);
  sites_.clear();
  limit_ = limit;
  overflowed_ = 0;
}

void CallSiteLog::Add(uint64_t correlation_id, const char* site) {
  std::lock_guard<std::mutex> lock(mu_);
  if (sites_.size() >= limit_) {
    ++overflowed_;
    return;
  }
  sites_.emplace_back(correlation_id, site);
}

void CallSiteLog::MoveInto(Timeline* timeline) {
  std::vector<std::pair<uint64_t, const char*>> sites;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sites.swap(sites_);
  }
  if (sites.empty()) return;
  absl::flat_hash_map<uint64_t, size_t> call_by_correlation;
  call_by_correlation.reserve(timeline->calls.size());
  for (size_t i = 0; i < timeline->calls.size(); ++i) {
    call_by_correlation.emplace(timeline->calls[i].correlation_id, i);
  }
  // Sites repeat (a training loop calls from the same lines): intern each pointer once.
  absl::flat_hash_map<const char*, StringId> names;
  for (const auto& [correlation, site] : sites) {
    const auto call = call_by_correlation.find(correlation);
    if (call == call_by_correlation.end()) continue;  // record lost, or outside the window
    const HostCall& c = timeline->calls[call->second];
    auto [name, inserted] = names.try_emplace(site, StringTable::kEmpty);
    if (inserted) name->second = timeline->strings.Intern(site);
    timeline->ranges.push_back(Range{c.start_ns, c.end_ns, c.thread, name->second,
                                     RangeKind::kPython});
  }
}

uint64_t CallSiteLog::overflowed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return overflowed_;
}

}  // namespace gpuidle::internal
