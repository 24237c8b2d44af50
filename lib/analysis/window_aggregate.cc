#include "analysis/window_aggregate.h"

#include <algorithm>
#include <array>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "analysis/advice.h"
#include "analysis/communication.h"
#include "analysis/gpu_metrics.h"
#include "analysis/periodic_work.h"
#include "analysis/serving.h"
#include "analysis/timeline_summary.h"
#include "model/report_names.h"

namespace gpuidle::internal {
namespace {

// Warnings repeat from window to window; a few distinct ones are worth keeping.
constexpr size_t kMaxWarnings = 100;
// Offenders kept per window, and between windows, per offender the report keeps.
constexpr int kOffendersPerKept = 4;

bool SameDevice(const DeviceReport& a, const DeviceReport& b) {
  return a.rank == b.rank && a.device == b.device;
}

std::array<int64_t, kNumPhases> PhasesOf(const DeviceReport& d) {
  return {d.PhaseNs(Phase::kStartUp), d.PhaseNs(Phase::kSteady), d.PhaseNs(Phase::kWindDown)};
}

// Adds one window's one-off time of phase p to the aggregate's.
void AddOneOff(const DeviceReport& w, Phase p, DeviceReport* d) {
  for (const OneOffTime& t : w.one_off) {
    if (t.phase != p) continue;
    auto same = std::find_if(d->one_off.begin(), d->one_off.end(),
                             [&](const OneOffTime& o) { return o.phase == p && o.kind == t.kind; });
    if (same == d->one_off.end()) {
      d->one_off.push_back(t);
      continue;
    }
    if (t.ns > same->ns) same->evidence = t.evidence;  // of the window where it weighed most
    same->ns += t.ns;
    same->count += t.count;
  }
}

void SortOneOff(DeviceReport* d) {
  std::stable_sort(d->one_off.begin(), d->one_off.end(),
                   [](const OneOffTime& a, const OneOffTime& b) {
                     return a.phase != b.phase ? a.phase < b.phase : a.ns > b.ns;
                   });
}

void MergeOffenders(const std::vector<Offender>& window, size_t keep,
                    std::vector<Offender>* offenders) {
  for (const Offender& o : window) {
    auto same = std::find_if(offenders->begin(), offenders->end(), [&](const Offender& x) {
      return x.subcause == o.subcause && x.what == o.what && x.site == o.site;
    });
    if (same == offenders->end()) {
      offenders->push_back(o);
    } else {
      same->idle_ns += o.idle_ns;
      same->count += o.count;
    }
  }
  std::stable_sort(offenders->begin(), offenders->end(),
                   [](const Offender& a, const Offender& b) { return a.idle_ns > b.idle_ns; });
  if (offenders->size() > keep) offenders->resize(keep);
}

void MergeGaps(const std::vector<GapRecord>& window, size_t keep, std::vector<GapRecord>* gaps) {
  gaps->insert(gaps->end(), window.begin(), window.end());
  std::stable_sort(gaps->begin(), gaps->end(), [](const GapRecord& a, const GapRecord& b) {
    return a.end_ns - a.start_ns > b.end_ns - b.start_ns;
  });
  if (gaps->size() > keep) gaps->resize(keep);
}

}  // namespace

WindowAggregate::WindowAggregate(const AnalysisOptions& options) : options_(options) {}

AnalysisOptions WindowAggregate::WindowOptions() const {
  AnalysisOptions o = options_;
  o.max_offenders = std::max(o.max_offenders, 1) * kOffendersPerKept;
  if (sum_.has_value()) o.skip_steps = 0;
  return o;
}

void WindowAggregate::AddDevice(const DeviceReport& w) {
  auto same = std::find_if(sum_->devices.begin(), sum_->devices.end(),
                           [&](const DeviceReport& d) { return SameDevice(d, w); });
  if (same == sum_->devices.end()) {
    sum_->devices.push_back(w);
    sum_->devices.back().phase_ns = PhasesOf(w);
    return;
  }
  DeviceReport& d = *same;
  // The steady states add up; the later windows' edges (their start-up is the step that was
  // running when the window opened, and the attach) are left out; the wind-down is the last
  // window's.
  std::array<int64_t, kNumPhases>& phases = *d.phase_ns;
  phases[static_cast<int>(Phase::kSteady)] += w.PhaseNs(Phase::kSteady);
  phases[static_cast<int>(Phase::kWindDown)] = w.PhaseNs(Phase::kWindDown);
  d.window_end_ns = w.window_end_ns;
  d.steady_end_ns = w.steady_end_ns;
  d.window_ns = phases[0] + phases[1] + phases[2];
  d.busy_ns += w.busy_ns;
  d.idle_ns += w.idle_ns;
  d.idle += w.idle;
  std::erase_if(d.one_off, [](const OneOffTime& t) { return t.phase == Phase::kWindDown; });
  AddOneOff(w, Phase::kSteady, &d);
  AddOneOff(w, Phase::kWindDown, &d);
  SortOneOff(&d);
  d.step_count += w.step_count;
  d.tracer_ns += w.tracer_ns;
  d.kernel_count += w.kernel_count;
  d.memcpy_count += w.memcpy_count;
  d.memset_count += w.memset_count;
  d.comm_ns += w.comm_ns;
  d.exposed_comm_ns += w.exposed_comm_ns;
  if (w.comm_wait_ns.has_value()) d.comm_wait_ns = d.comm_wait_ns.value_or(0) + *w.comm_wait_ns;
  for (auto [sum, add] :
       {std::pair{&d.h2d_pageable, &w.h2d_pageable}, std::pair{&d.h2d_pinned, &w.h2d_pinned}}) {
    sum->count += add->count;
    sum->bytes += add->bytes;
    sum->ns += add->ns;
  }
  d.graph_replays.launches += w.graph_replays.launches;
  d.graph_replays.kernels += w.graph_replays.kernels;
  d.graph_replays.kernels_alone += w.graph_replays.kernels_alone;
  if (w.demand_ns.has_value()) d.demand_ns = d.demand_ns.value_or(0) + *w.demand_ns;
  d.demand_busy_ns += w.demand_busy_ns;
  AddCollectivesOf(w, &d);
  AddTimeline(w.timeline, &d.timeline);  // time between the windows stays untraced
  if (d.name.empty()) d.name = w.name;
  // The readings of every window, not the first's alone; what they mean is derived again over
  // all of them, the waits behind other processes against the summed idle time.
  if (w.gpu_metrics.has_value() && d.gpu_metrics.has_value()) {
    AddGpuMetrics(*w.gpu_metrics, &*d.gpu_metrics);
  } else if (w.gpu_metrics.has_value()) {
    d.gpu_metrics = w.gpu_metrics;
  }
  if (d.gpu_metrics.has_value()) {
    DeriveGpuFindings(&*d.gpu_metrics);
    NoteWaitBehindOtherProcesses(d, &*d.gpu_metrics);
  }
}

void WindowAggregate::Add(int64_t start_ns, int64_t end_ns, const Report* window) {
  if (coverage_.windows == 0) first_start_ns_ = start_ns;
  ++coverage_.windows;
  coverage_.traced_ns += std::max<int64_t>(0, end_ns - start_ns);
  coverage_.span_ns = std::max(coverage_.span_ns, end_ns - first_start_ns_);
  coverage_.traced_until_ns = std::max(coverage_.traced_until_ns, end_ns - first_start_ns_);
  if (coverage_.windows == 1 && window != nullptr) first_ = *window;
  if (coverage_.windows == 2) first_.reset();
  if (window == nullptr) return;
  const Report& w = *window;
  if (!sum_.has_value()) {
    sum_ = w;
    sum_->devices.clear();
    sum_->steps.clear();
    sum_->steps_not_listed = 0;
    sum_->warnings.clear();
    sum_->longest_gaps.clear();
    sum_->offenders.clear();
    sum_->periodic_work.clear();
    sum_->unused_devices.clear();
    sum_->dropped_records.reset();
    sum_->zero_timestamp_records = 0;
    sum_->record_limit_reached = false;
    sum_->serving.reset();
  }
  Report& s = *sum_;
  for (const DeviceReport& d : w.devices) AddDevice(d);
  s.window_end_ns = w.window_end_ns;
  for (const StepReport& step : w.steps) {
    if (steps_.size() < Report::kMaxStepRows) {
      steps_.push_back(step);
    } else {
      ++s.steps_not_listed;
    }
  }
  s.steps_not_listed += w.steps_not_listed;
  if (s.step_source.empty()) s.step_source = w.step_source;
  if (s.tracer_time == report_values::kNotKnown) s.tracer_time = w.tracer_time;
  if (w.device_times == report_values::kMadeUp) s.device_times = w.device_times;
  s.visible_device_count = std::max(s.visible_device_count, w.visible_device_count);
  for (int u : w.unused_devices) {
    if (std::find(unused_.begin(), unused_.end(), u) == unused_.end()) unused_.push_back(u);
  }
  for (const std::string& warning : w.warnings) {
    if (s.warnings.size() < kMaxWarnings &&
        std::find(s.warnings.begin(), s.warnings.end(), warning) == s.warnings.end()) {
      s.warnings.push_back(warning);
    }
  }
  MergeGaps(w.longest_gaps, static_cast<size_t>(std::max(options_.max_gap_records, 0)),
            &s.longest_gaps);
  MergeOffenders(w.offenders, static_cast<size_t>(WindowOptions().max_offenders), &s.offenders);
  MergePeriodicWork(w.periodic_work, &s.periodic_work);
  if (w.dropped_records.has_value()) {
    s.dropped_records = s.dropped_records.value_or(0) + *w.dropped_records;
  }
  s.zero_timestamp_records += w.zero_timestamp_records;
  s.record_limit_reached = s.record_limit_reached || w.record_limit_reached;
  if (w.serving.has_value()) {
    int64_t span = 0;
    for (const DeviceReport& d : w.devices) span = std::max(span, d.PhaseNs(Phase::kSteady));
    if (!s.serving.has_value()) s.serving.emplace();
    AddServing(*w.serving, span, /*concurrent=*/false, &*s.serving, &serving_span_ns_);
  }
}

void WindowAggregate::SetPlan(int64_t first_window_ns, int64_t window_ns, int64_t period_ns) {
  coverage_.first_window_ns = std::max<int64_t>(first_window_ns, 0);
  coverage_.window_ns = std::max<int64_t>(window_ns, 0);
  coverage_.period_ns = std::max<int64_t>(period_ns, 0);
}

void WindowAggregate::CoverUntil(int64_t now_ns) {
  if (coverage_.windows == 0) return;
  coverage_.span_ns = std::max(coverage_.span_ns, now_ns - first_start_ns_);
}

std::optional<Report> WindowAggregate::Result(bool with_steps) const {
  if (!sum_.has_value()) return std::nullopt;
  Report r = first_.has_value() ? *first_ : *sum_;
  if (!first_.has_value() && with_steps) r.steps = steps_;
  if (!with_steps) r.steps.clear();
  r.options = options_;
  const int64_t untraced_ns = coverage_.span_ns - coverage_.traced_ns;
  if (!first_.has_value() || untraced_ns > std::max(kUntracedTailMin, coverage_.span_ns / 100)) {
    r.coverage = coverage_;
  }
  if (r.offenders.size() > static_cast<size_t>(std::max(options_.max_offenders, 0))) {
    r.offenders.resize(static_cast<size_t>(std::max(options_.max_offenders, 0)));
  }
  if (first_.has_value()) {
    // Advice rests on the offenders (analysis/advice.cc): computed again from those kept, as
    // the unsampled analysis does.
    AddAdvice(options_, &r);
    return r;
  }
  // Unused overall: visible, and idle in every window.
  for (int u : unused_) {
    const bool used = std::any_of(r.devices.begin(), r.devices.end(),
                                  [&](const DeviceReport& d) { return d.device == u; });
    if (!used) r.unused_devices.push_back(u);
  }
  std::sort(r.unused_devices.begin(), r.unused_devices.end());
  AddAdvice(options_, &r);
  return r;
}

}  // namespace gpuidle::internal
