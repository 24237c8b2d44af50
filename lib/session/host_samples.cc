#include "session/host_samples.h"

#include <algorithm>
#include <climits>
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"

namespace gpuidle::internal {

void HostSampleBuffer::Add(int64_t time_ns, uint64_t thread, const std::string& stack) {
  if (contents_.samples.size() >= max_samples_) {
    ++contents_.dropped;
    return;
  }
  auto it = stack_ids_.find(stack);
  if (it == stack_ids_.end()) {
    if (stack_bytes_ + stack.size() > max_stack_bytes_) {
      ++contents_.dropped;
      return;
    }
    stack_bytes_ += stack.size();
    it = stack_ids_.emplace(stack, static_cast<uint32_t>(contents_.stacks.size())).first;
    contents_.stacks.push_back(stack);
  }
  contents_.samples.push_back(Sample{time_ns, thread, it->second});
}

HostSampleBuffer::Contents HostSampleBuffer::Take() {
  Contents taken = std::move(contents_);
  contents_ = Contents{};
  stack_ids_.clear();
  stack_bytes_ = 0;
  return taken;
}

void HostSampleBuffer::MoveInto(Contents pending, int64_t launch_gap_max_ns, Timeline* timeline) {
  if (pending.dropped > 0) {
    timeline->info.warnings.push_back(
        absl::StrCat(pending.dropped, " host stack samples dropped: over the limit of ",
                     kMaxSamples, " samples per collection"));
  }
  if (pending.samples.empty()) return;
  // Each thread's CUDA calls as [start, end), sorted by start (the timeline's calls are).
  absl::flat_hash_map<uint64_t, std::vector<std::pair<int64_t, int64_t>>> calls;
  for (const HostCall& c : timeline->calls) calls[c.thread].emplace_back(c.start_ns, c.end_ns);
  for (auto& [thread, spans] : calls) {
    std::sort(spans.begin(), spans.end());
    // The latest end so far, so that a call inside a longer one never opens a false stretch.
    for (size_t i = 1; i < spans.size(); ++i) {
      spans[i].second = std::max(spans[i].second, spans[i - 1].second);
    }
  }
  std::vector<StringId> ids(pending.stacks.size(), StringTable::kEmpty);
  std::vector<bool> interned(pending.stacks.size(), false);
  for (const Sample& s : pending.samples) {
    const auto it = calls.find(s.thread);
    if (it != calls.end()) {
      const std::vector<std::pair<int64_t, int64_t>>& spans = it->second;
      // The first call that starts after the sample, and the calls before it.
      const auto next = std::upper_bound(
          spans.begin(), spans.end(), s.time_ns,
          [](int64_t t, const std::pair<int64_t, int64_t>& span) { return t < span.first; });
      const bool has_prev = next != spans.begin();
      const int64_t prev_end = has_prev ? std::prev(next)->second : INT64_MIN;
      if (has_prev && prev_end > s.time_ns) continue;  // inside a CUDA call
      if (has_prev && next != spans.end() && next->first - prev_end < launch_gap_max_ns) {
        continue;  // a short stretch between calls: launch overhead, not host work
      }
    }
    if (!interned[s.stack]) {
      ids[s.stack] = timeline->strings.Intern(pending.stacks[s.stack]);
      interned[s.stack] = true;
    }
    timeline->samples.push_back(HostSample{s.time_ns, s.thread, ids[s.stack]});
  }
  std::stable_sort(timeline->samples.begin(), timeline->samples.end(),
                   [](const HostSample& a, const HostSample& b) { return a.time_ns < b.time_ns; });
}

}  // namespace gpuidle::internal
