#include "analysis/timeline_index.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analysis/python_frames.h"
#include "model/correlation_index.h"

namespace gpuidle::internal {
namespace {

bool ContainsIgnoreCase(absl::string_view haystack, absl::string_view needle) {
  return std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                     [](char a, char b) {
                       return absl::ascii_tolower(static_cast<unsigned char>(a)) ==
                              absl::ascii_tolower(static_cast<unsigned char>(b));
                     }) != haystack.end();
}

bool MatchesAny(absl::string_view name, const std::vector<std::string>& patterns) {
  for (const std::string& p : patterns) {
    if (!p.empty() && ContainsIgnoreCase(name, p)) return true;
  }
  return false;
}

// Python frames of the framework itself say little about the user's code.
bool IsUserPythonFrame(absl::string_view name) {
  return !absl::StartsWith(name, "<built-in") && !absl::StrContains(name, "site-packages/") &&
         !absl::StrContains(name, "dist-packages/") && !absl::StartsWith(name, "torch/") &&
         !absl::StrContains(name, "/torch/") && !absl::StartsWith(name, "threading.py") &&
         !absl::StartsWith(name, "contextlib.py");
}

}  // namespace

TimelineIndex::TimelineIndex(const Timeline& timeline, const AnalysisOptions& options)
    : timeline_(timeline),
      framework_ops_(timeline, [](const Range& r) { return r.kind == RangeKind::kFrameworkOp; }),
      python_frames_(timeline, [](const Range& r) { return r.kind == RangeKind::kPython; }) {
  const CorrelationIndex call_by_correlation(timeline.calls);
  // Consecutive launches mostly come from one thread: look its list up once per run of them.
  std::vector<int64_t>* launch_starts = nullptr;
  uint64_t launch_thread = 0;
  for (const HostCall& c : timeline.calls) {
    if (c.category != CallCategory::kLaunch) continue;
    if (launch_starts == nullptr || c.thread != launch_thread) {
      launch_starts = &launch_starts_by_thread_[c.thread];  // rehashes only here
      launch_thread = c.thread;
    }
    launch_starts->push_back(c.start_ns);  // sorted: calls are
  }
  call_copy_kind_.assign(timeline.calls.size(), CopyKind::kUnknown);
  issuing_call_.resize(timeline.devices.size());
  for (size_t d = 0; d < timeline.devices.size(); ++d) {
    const std::vector<DeviceOp>& ops = timeline.devices[d].ops;
    std::vector<int32_t>& calls = issuing_call_[d];
    calls.assign(ops.size(), -1);
    for (size_t i = 0; i < ops.size(); ++i) {
      const int32_t call = call_by_correlation.Find(ops[i].correlation_id);
      if (call == CorrelationIndex::kNone) continue;
      calls[i] = call;
      if (ops[i].kind == OpKind::kMemcpy) call_copy_kind_[call] = ops[i].copy_kind;
    }
  }
  // Name matching once per distinct name, not per range.
  absl::flat_hash_map<StringId, bool> name_is_data;
  range_is_data_.assign(timeline.ranges.size(), false);
  for (size_t i = 0; i < timeline.ranges.size(); ++i) {
    const Range& r = timeline.ranges[i];
    bool data = r.kind == RangeKind::kData;
    if (r.kind == RangeKind::kUser) {
      auto [it, inserted] = name_is_data.try_emplace(r.name, false);
      if (inserted) {
        it->second = MatchesAny(timeline.strings.Get(r.name), options.data_range_patterns);
      }
      data = it->second;
    }
    if (data) {
      range_is_data_[i] = true;
      data_ranges_.push_back(static_cast<int32_t>(i));
    }
  }
}

bool TimelineIndex::LaunchedWithin(uint64_t thread, int64_t start, int64_t end) const {
  auto it = launch_starts_by_thread_.find(thread);
  if (it == launch_starts_by_thread_.end()) return false;
  auto first = std::lower_bound(it->second.begin(), it->second.end(), start);
  return first != it->second.end() && *first < end;
}

int32_t TimelineIndex::UserPythonFrame(uint64_t thread, int64_t t) const {
  return python_frames_.InnermostMatching(thread, t, [this](const Range& r) {
    return IsUserPythonFrame(timeline_.strings.Get(r.name));
  });
}

std::string TimelineIndex::CallSite(uint64_t thread, int64_t t) const {
  std::string site;
  const int32_t op = framework_ops_.Outermost(thread, t);
  if (op >= 0) site = std::string(timeline_.strings.Get(timeline_.ranges[op].name));
  const int32_t frame = UserPythonFrame(thread, t);
  if (frame >= 0) {
    absl::StrAppend(&site, site.empty() ? "" : " at ",
                    DescribePythonFrame(timeline_.strings.Get(timeline_.ranges[frame].name)));
  }
  return site;
}

}  // namespace gpuidle::internal
