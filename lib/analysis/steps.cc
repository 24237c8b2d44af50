#include "analysis/steps.h"

#include <algorithm>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace gpuidle::internal {
namespace {

bool IsOptimizerStep(const Timeline& t, const Range& r) {
  return absl::StartsWith(t.strings.Get(r.name), "optimizer.step#");
}

int64_t Overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
  return std::max<int64_t>(0, std::min(a1, b1) - std::max(a0, b0));
}

// Kernel time of every device inside [from, to): overlapping kernels counted each (a share,
// not a busy time).
int64_t KernelNs(const Timeline& t, int64_t from, int64_t to) {
  int64_t ns = 0;
  for (const DeviceTimeline& d : t.devices) {
    for (const DeviceOp& op : d.ops) {
      if (op.kind == OpKind::kKernel) ns += Overlap(op.start_ns, op.end_ns, from, to);
    }
  }
  return ns;
}

}  // namespace

std::vector<int32_t> StepRanges(const Timeline& t, std::string* dropped) {
  bool marked = false;
  for (const Range& r : t.ranges) marked |= r.kind == RangeKind::kStep && !IsOptimizerStep(t, r);
  std::vector<int32_t> steps;
  int64_t covered_until = std::numeric_limits<int64_t>::min();
  for (size_t i = 0; i < t.ranges.size(); ++i) {
    const Range& r = t.ranges[i];
    if (r.kind != RangeKind::kStep || (marked && IsOptimizerStep(t, r))) continue;
    if (r.start_ns < covered_until && r.end_ns <= covered_until) continue;  // nested
    steps.push_back(static_cast<int32_t>(i));
    covered_until = std::max(covered_until, r.end_ns);
  }
  if (!marked && !steps.empty()) {
    const int64_t inside = KernelNs(t, t.ranges[steps.front()].start_ns, covered_until);
    const int64_t after = KernelNs(t, covered_until, std::numeric_limits<int64_t>::max());
    if (after > inside) {
      if (dropped != nullptr) {
        *dropped = absl::StrCat(
            "the ", steps.size(), " optimizer steps hold ", inside / 1000,
            " us of kernel time "
            "and ",
            after / 1000,
            " us ran after the last of them (a step captured in a CUDA "
            "graph calls the optimizer only while it is captured): they do not describe the "
            "loop, so the report has no steps; mark them (gpuidle.step(), torch.profiler's "
            "step())");
      }
      steps.clear();
    }
  }
  return steps;
}

std::string StepSource(const Timeline& t, const std::vector<int32_t>& steps) {
  if (steps.empty()) return "";
  const absl::string_view name = t.strings.Get(t.ranges[steps.front()].name);
  for (absl::string_view known : {"ProfilerStep", "gpuidle.step", "optimizer.step"}) {
    if (absl::StartsWith(name, known)) return std::string(known);
  }
  return "marker";
}

bool FarLongerThanTheOtherSteps(const Timeline& t, const std::vector<int32_t>& steps, size_t k,
                                const AnalysisOptions& options) {
  if (steps.size() < 3) return false;
  std::vector<int64_t> others;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (i != k) others.push_back(t.ranges[steps[i]].end_ns - t.ranges[steps[i]].start_ns);
  }
  auto mid = others.begin() + static_cast<ptrdiff_t>((others.size() - 1) / 2);
  std::nth_element(others.begin(), mid, others.end());
  const int64_t length = t.ranges[steps[k]].end_ns - t.ranges[steps[k]].start_ns;
  return length > 2 * *mid && length - *mid >= options.one_off_min_ns;
}

SteadySteps FindSteadySteps(const Timeline& t, const std::vector<int32_t>& steps,
                            const AnalysisOptions& options) {
  SteadySteps s;
  s.warm_up_step = FarLongerThanTheOtherSteps(t, steps, 0, options);
  s.first = s.warm_up_step ? 1 : 0;
  s.end =
      steps.size() > s.first + 2 && FarLongerThanTheOtherSteps(t, steps, steps.size() - 1, options)
          ? steps.size() - 1
          : steps.size();
  return s;
}

std::vector<Interval> CutSteps(const TimelineIndex& index, const DeviceTimeline& device,
                               const std::vector<int32_t>& steps, Interval window) {
  const Timeline& t = index.timeline();
  std::vector<int64_t> gpu_end(steps.size(), std::numeric_limits<int64_t>::min());
  // The number of steps begun by the previous op's launch: consecutive ops are mostly launched
  // in one step, which two comparisons confirm without a binary search of all steps.
  size_t begun = 0;
  for (size_t i = 0; i < device.ops.size(); ++i) {
    const DeviceOp& op = device.ops[i];
    const int32_t call = index.IssuingCall(device, static_cast<int32_t>(i));
    if (call < 0) continue;
    const int64_t launched = t.calls[call].start_ns;
    const bool same_step = begun > 0 && t.ranges[steps[begun - 1]].start_ns <= launched &&
                           (begun == steps.size() || launched < t.ranges[steps[begun]].start_ns);
    if (!same_step) {
      begun = std::upper_bound(steps.begin(), steps.end(), launched,
                               [&](int64_t v, int32_t s) { return v < t.ranges[s].start_ns; }) -
              steps.begin();
    }
    if (begun == 0) continue;
    const size_t k = begun - 1;
    if (launched < t.ranges[steps[k]].end_ns) gpu_end[k] = std::max(gpu_end[k], op.end_ns);
  }
  std::vector<Interval> spans(steps.size());
  int64_t prev_begin = window.start_ns;
  int64_t prev_gpu_end = std::numeric_limits<int64_t>::min();
  for (size_t k = 0; k < steps.size(); ++k) {
    const int64_t begin = std::max({t.ranges[steps[k]].start_ns, prev_gpu_end, prev_begin});
    spans[k].start_ns = begin;
    if (k > 0) spans[k - 1].end_ns = begin;
    prev_begin = begin;
    prev_gpu_end = std::max(prev_gpu_end, gpu_end[k]);
  }
  if (!steps.empty()) {
    spans.back().end_ns = std::max(t.ranges[steps.back()].end_ns, gpu_end.back());
  }
  for (Interval& s : spans) {
    s.start_ns = std::clamp(s.start_ns, window.start_ns, window.end_ns);
    s.end_ns = std::clamp(s.end_ns, s.start_ns, window.end_ns);
  }
  return spans;
}

void FillSteps(const Timeline& t, const std::vector<int32_t>& steps,
               const std::vector<Interval>& spans, size_t first_step, size_t end_step,
               const std::vector<Interval>& busy, const std::vector<IdlePiece>& pieces,
               const DeviceReport& device, size_t max_rows, std::vector<StepReport>* out) {
  size_t b = 0, p = 0;
  for (size_t k = first_step; k < std::min(end_step, first_step + max_rows); ++k) {
    StepReport step;
    step.rank = device.rank;
    step.device = device.device;
    step.name = std::string(t.strings.Get(t.ranges[steps[k]].name));
    step.start_ns = spans[k].start_ns;
    step.end_ns = spans[k].end_ns;
    while (b < busy.size() && busy[b].end_ns <= step.start_ns) ++b;
    for (size_t i = b; i < busy.size() && busy[i].start_ns < step.end_ns; ++i) {
      step.busy_ns += Overlap(busy[i].start_ns, busy[i].end_ns, step.start_ns, step.end_ns);
    }
    while (p < pieces.size() && pieces[p].end_ns <= step.start_ns) ++p;
    for (size_t i = p; i < pieces.size() && pieces[i].start_ns < step.end_ns; ++i) {
      const IdlePiece& piece = pieces[i];
      step.idle[piece.subcause] +=
          Overlap(piece.start_ns, piece.end_ns, step.start_ns, step.end_ns);
    }
    step.one_off_ns = step.end_ns - step.start_ns - step.busy_ns - step.idle.TotalNs();
    out->push_back(std::move(step));
  }
}

}  // namespace gpuidle::internal
