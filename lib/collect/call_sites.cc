#include "collect/call_sites.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "model/correlation_index.h"

namespace gpuidle::internal {
namespace {
std::atomic<SiteFunction> provider{nullptr};
// The Python call-site ranges already in a timeline (the markers around PyTorch's syncs and
// backward calls), to find the one open on another thread at a given time. Copies what it
// needs: the timeline's ranges grow while it is used.
class OpenSites {
 public:
  explicit OpenSites(const Timeline& timeline) {
    for (const Range& r : timeline.ranges) {
      if (r.kind == RangeKind::kPython) ranges_.push_back(r);
    }
    std::sort(ranges_.begin(), ranges_.end(),
              [](const Range& a, const Range& b) { return a.start_ns < b.start_ns; });
  }

  // The innermost (latest begun) such range open at t on a thread other than `thread`, or
  // nullopt, also when one is open on `thread` itself (its own marker, around a forward pass
  // or an optimizer step, already names its launches). Looks back over a bounded number of
  // ranges: call sites rarely nest deeply.
  std::optional<Range> At(uint64_t thread, int64_t t) const {
    auto after = std::upper_bound(ranges_.begin(), ranges_.end(), t,
                                  [](int64_t at, const Range& r) { return at < r.start_ns; });
    constexpr int kLookBack = 64;
    std::optional<Range> elsewhere;
    for (int n = 0; after != ranges_.begin() && n < kLookBack; ++n) {
      const Range& r = *--after;
      if (r.end_ns <= t) continue;
      if (r.thread == thread) return std::nullopt;
      if (!elsewhere.has_value()) elsewhere = r;
    }
    return elsewhere;
  }

 private:
  std::vector<Range> ranges_;
};

}  // namespace

void SetSiteFunction(SiteFunction f) { provider.store(f, std::memory_order_release); }

SiteFunction CurrentCallSiteProvider() { return provider.load(std::memory_order_acquire); }

namespace {
std::atomic<uint64_t> next_log_id{1};
}  // namespace

CallSiteLog::CallSiteLog() : id_(next_log_id.fetch_add(1, std::memory_order_relaxed)) {}

CallSiteLog::Shard& CallSiteLog::ThisThreadsShard() {
  struct Cached {
    uint64_t log = 0;
    Shard* shard = nullptr;
  };
  thread_local Cached cached;
  if (cached.log != id_) {
    std::lock_guard<std::mutex> lock(shards_mu_);
    shards_.push_back(std::make_unique<Shard>());
    cached = Cached{id_, shards_.back().get()};
  }
  return *cached.shard;
}

bool CallSiteLog::Admit() {
  if (used_.fetch_add(1, std::memory_order_relaxed) < limit_.load(std::memory_order_relaxed)) {
    return true;
  }
  overflowed_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

void CallSiteLog::Reset(size_t limit) {
  std::lock_guard<std::mutex> lock(shards_mu_);
  for (const std::unique_ptr<Shard>& shard : shards_) {
    std::lock_guard<std::mutex> shard_lock(shard->mu);
    shard->sites.clear();
    shard->samples.clear();
  }
  used_.store(0, std::memory_order_relaxed);
  limit_.store(limit, std::memory_order_relaxed);
  overflowed_.store(0, std::memory_order_relaxed);
}

void CallSiteLog::Add(uint64_t correlation_id, const char* site) {
  if (!Admit()) return;
  Shard& shard = ThisThreadsShard();
  std::lock_guard<std::mutex> lock(shard.mu);
  shard.sites.emplace_back(correlation_id, site);
}

void CallSiteLog::AddSample(uint64_t thread, int64_t at_ns, int64_t span_ns, const char* site) {
  if (!Admit()) return;
  Shard& shard = ThisThreadsShard();
  std::lock_guard<std::mutex> lock(shard.mu);
  shard.samples.push_back(Sample{thread, at_ns, span_ns, site});
}

void CallSiteLog::MoveInto(Timeline* timeline) {
  std::vector<std::pair<uint64_t, const char*>> sites;
  std::vector<Sample> samples;
  {
    std::lock_guard<std::mutex> lock(shards_mu_);
    for (const std::unique_ptr<Shard>& shard : shards_) {
      std::lock_guard<std::mutex> shard_lock(shard->mu);
      sites.insert(sites.end(), shard->sites.begin(), shard->sites.end());
      samples.insert(samples.end(), shard->samples.begin(), shard->samples.end());
      shard->sites = {};
      shard->samples = {};
    }
  }
  // Sites repeat (a training loop calls from the same lines): intern each pointer once.
  absl::flat_hash_map<const char*, StringId> names;
  auto name_of = [&](const char* site) {
    auto [name, inserted] = names.try_emplace(site, StringTable::kEmpty);
    if (inserted) name->second = timeline->strings.Intern(site);
    return name->second;
  };
  // A sample holds until the same thread's next one.
  std::sort(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) {
    return a.thread != b.thread ? a.thread < b.thread : a.at_ns < b.at_ns;
  });
  // Only samples without a site look at the other threads' call sites.
  const bool borrowing = std::any_of(samples.begin(), samples.end(),
                                     [](const Sample& s) { return s.site == nullptr; });
  std::optional<OpenSites> elsewhere;
  if (borrowing) elsewhere.emplace(*timeline);
  for (size_t i = 0; i < samples.size(); ++i) {
    const Sample& s = samples[i];
    int64_t end = s.at_ns + s.span_ns;
    if (i + 1 < samples.size() && samples[i + 1].thread == s.thread) {
      end = std::min(end, samples[i + 1].at_ns);
    }
    StringId name;
    if (s.site != nullptr) {
      name = name_of(s.site);
    } else {
      const std::optional<Range> open = elsewhere->At(s.thread, s.at_ns);
      if (!open.has_value()) continue;
      name = open->name;
      end = std::min(end, open->end_ns);
    }
    timeline->ranges.push_back(Range{s.at_ns, end, s.thread, name, RangeKind::kPython});
  }
  if (sites.empty()) return;
  const CorrelationIndex call_by_correlation(timeline->calls);
  for (const auto& [correlation, site] : sites) {
    const int32_t call = call_by_correlation.Find(correlation);
    if (call == CorrelationIndex::kNone) continue;  // record lost, or outside the window
    const HostCall& c = timeline->calls[call];
    timeline->ranges.push_back(
        Range{c.start_ns, c.end_ns, c.thread, name_of(site), RangeKind::kPython});
  }
}

uint64_t CallSiteLog::overflowed() const { return overflowed_.load(std::memory_order_relaxed); }

}  // namespace gpuidle::internal
