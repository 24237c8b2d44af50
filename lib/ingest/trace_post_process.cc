#include "ingest/trace_post_process.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "model/call_streams.h"

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
  std::stable_sort(t->ranges.begin(), t->ranges.end(),
                   [](const Range& a, const Range& b) { return a.start_ns < b.start_ns; });
}

}  // namespace

absl::Status FinishTimeline(EventMapper& mapper, const ReaderWarnings& warnings,
                            std::optional<int64_t> base_time_ns, Timeline* t) {
  mapper.Finish();
  AppendWarnings(warnings, &t->info.warnings);
  AttachCallStreams(mapper.syncs(), t, mapper.event_records());
  // Kineto writes time stamps relative to baseTimeNanoseconds; absolute times let traces of
  // several ranks line up.
  if (base_time_ns) GPUIDLE_RETURN_IF_ERROR(ShiftTimes(*base_time_ns, t));
  t->Finalize();
  StepsFromOptimizerCalls(t);
  return absl::OkStatus();
}

}  // namespace gpuidle::internal::kineto
