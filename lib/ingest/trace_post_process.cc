#include "ingest/trace_post_process.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "model/call_streams.h"
#include "model/stable_sort.h"

namespace gpuidle::internal::kineto {

absl::Status ShiftTimes(int64_t offset, Timeline* t) {
  bool overflow = false;
  auto shift = [&](int64_t& v) {
    overflow |= __builtin_add_overflow(v, offset, &v) || v < kMinTimeNs || v >= kMaxTimeNs;
  };
  for (DeviceTimeline& d : t->devices) {
    for (DeviceOp& op : d.ops) {
      shift(op.start_ns);
      shift(op.end_ns);
    }
  }
  for (HostCall& c : t->calls) {
    shift(c.start_ns);
    shift(c.end_ns);
  }
  for (Range& r : t->ranges) {
    shift(r.start_ns);
    shift(r.end_ns);
  }
  for (HostSample& s : t->samples) shift(s.time_ns);
  if (overflow) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"baseTimeNanoseconds\" = ", offset,
        " moves time stamps out of range (before -2^60 ns or from 2^63 - 2^60 ns on)"));
  }
  return absl::OkStatus();
}

namespace {

// PyTorch names each optimizer step's record function "Optimizer.step#SGD.step". In a trace with
// no step of its own (no ProfilerStep: torch.profiler without a schedule, or one that records
// without step()), one iteration runs from one optimizer step's end to the next's, as gpuidle's
// own optimizer-step boundaries do (analysis/steps.h): steps named optimizer.step#N, the
// iteration before the first return left to start-up. One optimizer (the first step's name, on
// its thread), outermost calls only (the annotation and the CPU op of one call are one).
void StepsFromOptimizerCalls(Timeline* t) {
  constexpr absl::string_view kOptimizerStep = "Optimizer.step#";
  const Range* first = nullptr;
  for (const Range& r : t->ranges) {
    if (r.kind == RangeKind::kStep) return;
    if (first == nullptr && absl::StartsWith(t->strings.Get(r.name), kOptimizerStep)) first = &r;
  }
  if (first == nullptr) return;
  const StringId name = first->name;
  const uint64_t thread = first->thread;
  std::vector<int64_t> ends;
  int64_t covered_until = std::numeric_limits<int64_t>::min();
  for (const Range& r : t->ranges) {
    if (r.name != name || r.thread != thread || r.start_ns < covered_until) continue;
    ends.push_back(r.end_ns);
    covered_until = r.end_ns;
  }
  for (size_t k = 1; k < ends.size(); ++k) {
    t->ranges.push_back(Range{ends[k - 1], ends[k], thread,
                              t->strings.Intern(absl::StrCat("optimizer.step#", k)),
                              RangeKind::kStep});
  }
  StableSortByKey(t->ranges, [](const Range& r) { return r.start_ns; });  // two sorted runs
}

// Host ranges that ran past what the trace recorded (a last step that torch.profiler's
// schedule closed long after it stopped recording) would stretch the window with time nobody
// recorded, which the analysis would call idle. Where the trace gives the profiler's own span,
// steps, data waits and annotations are clipped to it, widened to every recorded event (events,
// which the profiler recorded as they ended, are never cut); a warning says so where it took
// out a millisecond or more. A trace
// without that span keeps its ranges: a step may rightly end after the last recorded op (host
// work that made no CUDA call). Not for gpuidle's traces: the collector records its ranges
// inside its own window.
void ClipRangesToTheProfilersSpan(std::pair<int64_t, int64_t> span, Timeline* t) {
  const auto is_event = [](const Range& r) {
    return r.kind == RangeKind::kFrameworkOp || r.kind == RangeKind::kPython;
  };
  // A span that does not hold every recorded event is not the whole recording: widened to them.
  int64_t lo = span.first, hi = span.second;
  auto cover = [&](int64_t start, int64_t end) {
    lo = std::min(lo, start);
    hi = std::max(hi, end);
  };
  for (const DeviceTimeline& d : t->devices) {
    for (const DeviceOp& op : d.ops) cover(op.start_ns, op.end_ns);
  }
  for (const HostCall& c : t->calls) cover(c.start_ns, c.end_ns);
  for (const Range& r : t->ranges) {
    if (is_event(r)) cover(r.start_ns, r.end_ns);
  }
  int64_t changed = 0, dropped = 0, longest = 0;
  std::string longest_name;
  // In place: a trace's ranges can number millions, and most traces have none to cut.
  std::vector<Range>& ranges = t->ranges;
  size_t kept = 0;
  for (size_t i = 0; i < ranges.size(); ++i) {
    Range r = ranges[i];
    if (!is_event(r) && (r.start_ns < lo || r.end_ns > hi)) {
      const int64_t outside =
          std::max<int64_t>(0, lo - r.start_ns) + std::max<int64_t>(0, r.end_ns - hi);
      if (outside > longest) {
        longest = outside;
        longest_name = std::string(t->strings.Get(r.name));
      }
      ++changed;
      if (r.end_ns <= lo || r.start_ns >= hi) {
        ++dropped;
        continue;
      }
      r.start_ns = std::max(r.start_ns, lo);
      r.end_ns = std::min(r.end_ns, hi);
    }
    ranges[kept++] = r;
  }
  if (changed == 0) return;
  ranges.resize(kept);
  StableSortByKey(ranges, [](const Range& r) { return r.start_ns; });  // raised starts moved
  if (longest < 1'000'000) return;
  t->info.warnings.push_back(
      absl::StrCat(changed, " host range", changed == 1 ? "" : "s",
                   " ran outside the profiler's recorded span (the longest, \"", longest_name,
                   "\", by ", longest / 1'000'000, " ms): cut to it",
                   dropped > 0 ? absl::StrCat(", ", dropped, " left out") : "",
                   "; the time outside was not recorded and is not counted"));
}

}  // namespace

absl::Status FinishTimeline(EventMapper& mapper, const ReaderWarnings& warnings,
                            std::optional<int64_t> base_time_ns, Timeline* t) {
  mapper.Finish();
  AppendWarnings(warnings, &t->info.warnings);
  if (warnings.profiler_ranges != 0) {
    t->info.device_times_made_up = true;
  } else if (t->info.device_times_made_up) {  // a gpuidle trace written from such ranges
    t->info.warnings.push_back(
        "this gpuidle trace was written from CUPTI range-profiler ranges (torch.profiler's "
        "profiler_metrics), which Kineto spaces evenly over the profiled span: the busy and idle "
        "time between them are not the GPU's");
  }
  AttachCallStreams(mapper.syncs(), t, mapper.event_records());
  // Kineto writes time stamps relative to baseTimeNanoseconds; absolute times let traces of
  // several ranks line up.
  if (base_time_ns) GPUIDLE_RETURN_IF_ERROR(ShiftTimes(*base_time_ns, t));
  // The range counters' times are their ranges', which the shift above kept in range.
  std::vector<GpuThroughputSample> counters = mapper.TakeRangeCounters();
  if (!counters.empty()) {
    for (GpuThroughputSample& s : counters) {
      s.start_ns += base_time_ns.value_or(0);
      s.end_ns += base_time_ns.value_or(0);
    }
    t->gpu_throughput.insert(t->gpu_throughput.end(), counters.begin(), counters.end());
    StableSortByKey(t->gpu_throughput, [](const GpuThroughputSample& s) { return s.start_ns; });
  }
  t->Finalize();
  if (t->info.source != "gpuidle") {
    std::optional<std::pair<int64_t, int64_t>> span = mapper.profiler_span();
    if (span && base_time_ns &&
        (__builtin_add_overflow(span->first, *base_time_ns, &span->first) ||
         __builtin_add_overflow(span->second, *base_time_ns, &span->second))) {
      span.reset();
    }
    if (span) ClipRangesToTheProfilersSpan(*span, t);
  }
  StepsFromOptimizerCalls(t);
  return absl::OkStatus();
}

}  // namespace gpuidle::internal::kineto
