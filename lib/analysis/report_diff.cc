#include "analysis/report_diff.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/time_units.h"
#include "model/report_names.h"

namespace gpuidle {

absl::string_view DiffUnitName(DiffUnit u) {
  return u == DiffUnit::kPerStep ? "per_step" : "per_second";
}

absl::string_view AdviceStatusName(AdviceStatus s) {
  switch (s) {
    case AdviceStatus::kResolved:
      return "resolved";
    case AdviceStatus::kRemaining:
      return "remaining";
    case AdviceStatus::kNew:
      return "new";
  }
  return "remaining";
}

absl::string_view DiffOutcomeName(DiffOutcome o) {
  switch (o) {
    case DiffOutcome::kImproved:
      return "improved";
    case DiffOutcome::kRegressed:
      return "regressed";
    case DiffOutcome::kUnchanged:
      return "unchanged";
    case DiffOutcome::kNotComparable:
      return "not_comparable";
  }
  return "unchanged";
}

}  // namespace gpuidle

namespace gpuidle::internal {
namespace {

// A device's lost time by subcause: its idle time, plus its collectives' wait for peers under
// sync_bound.comm_wait (busy by the definition of utilisation, yet no work done).
IdleBreakdown LostOf(const DeviceReport& d) {
  IdleBreakdown lost = d.idle;
  lost[Subcause::kCommWait] += d.comm_wait_ns.value_or(0);
  return lost;
}

// A report that lists its steps but not how many each device has (written by a gpuidle before
// devices[].step_count): each device's listed step rows, where the report left none out. Other
// reports are used as they are.
const Report& WithStepCounts(const Report& r, std::optional<Report>* filled) {
  if (r.step_source.empty() || r.steps.empty() || r.steps_not_listed > 0) return r;
  const bool missing = std::any_of(r.devices.begin(), r.devices.end(),
                                   [](const DeviceReport& d) { return d.step_count == 0; });
  if (!missing) return r;
  Report& copy = filled->emplace(r);
  for (DeviceReport& d : copy.devices) {
    if (d.step_count > 0) continue;
    for (const StepReport& step : r.steps) {
      if (step.rank == d.rank && step.device == d.device) ++d.step_count;
    }
  }
  return copy;
}

// What the diff needs of one run, summed over its devices.
struct RunFigures {
  int64_t steady_ns = 0;
  int64_t busy_ns = 0;
  int64_t idle_ns = 0;
  int64_t comm_ns = 0;
  int64_t exposed_comm_ns = 0;
  std::optional<int64_t> comm_wait_ns;  // set where a device knows it
  IdleBreakdown lost;
  int64_t step_count = 0;           // summed over the devices (device-steps)
  int64_t max_steps = 0;            // of the device with the most
  std::vector<int64_t> step_spans;  // of the listed step rows
};

RunFigures FiguresOf(const Report& r) {
  RunFigures f;
  for (const DeviceReport& d : r.devices) {
    f.steady_ns += d.PhaseNs(Phase::kSteady);
    f.busy_ns += d.busy_ns;
    f.idle_ns += d.idle_ns;
    f.comm_ns += d.comm_ns;
    f.exposed_comm_ns += d.exposed_comm_ns;
    if (d.comm_wait_ns) f.comm_wait_ns = f.comm_wait_ns.value_or(0) + *d.comm_wait_ns;
    f.lost += LostOf(d);
    f.step_count += d.step_count;
    f.max_steps = std::max(f.max_steps, d.step_count);
  }
  for (const StepReport& s : r.steps) f.step_spans.push_back(s.end_ns - s.start_ns);
  return f;
}

int64_t Round(double v) { return static_cast<int64_t>(std::llround(v)); }

// ns put on the unit's scale: per step (of steps device-steps) or per second of steady state.
int64_t PerUnit(int64_t ns, DiffUnit unit, int64_t steps, int64_t steady_ns) {
  if (unit == DiffUnit::kPerStep) {
    return steps > 0 ? Round(static_cast<double>(ns) / static_cast<double>(steps)) : 0;
  }
  return steady_ns > 0 ? Round(static_cast<double>(ns) * 1e9 / static_cast<double>(steady_ns)) : 0;
}

double Share(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0;
}

std::optional<int64_t> Median(std::vector<int64_t> v) {
  if (v.empty()) return std::nullopt;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  if (v.size() % 2 == 1) return v[mid];
  const int64_t upper = v[mid];
  const int64_t lower = *std::max_element(v.begin(), v.begin() + mid);
  return lower + (upper - lower) / 2;
}

std::string Completeness(const Report& r) {
  const bool lost_spans =
      std::any_of(r.devices.begin(), r.devices.end(), [](const DeviceReport& d) {
        return std::any_of(d.one_off.begin(), d.one_off.end(), [](const OneOffTime& o) {
          return o.kind == OneOffKind::kRecordsLost && o.ns > 0;
        });
      });
  if (lost_spans || r.dropped_records.value_or(0) > 0 || r.record_limit_reached) {
    return std::string(report_values::kRecordsLost);
  }
  return std::string(r.dropped_records ? report_values::kComplete : report_values::kUnknown);
}

DiffRun RunOf(const Report& r) {
  DiffRun run;
  run.source = r.source;
  run.inputs = r.inputs;
  run.step_source = r.step_source;
  run.devices = static_cast<int>(r.devices.size());
  run.completeness = Completeness(r);
  run.sampled = r.coverage.has_value();
  run.warnings = static_cast<int64_t>(r.warnings.size());
  return run;
}

DiffDevice KeyOf(const DeviceReport& d) { return DiffDevice{d.rank, d.device, d.name}; }

std::string Label(const DiffDevice& d) {
  return d.rank ? absl::StrCat("rank ", *d.rank, " GPU ", d.device)
                : absl::StrCat("GPU ", d.device);
}

DeviceDiff CompareDevices(const DeviceReport& b, const DeviceReport& a) {
  DeviceDiff d;
  d.before = KeyOf(b);
  d.after = KeyOf(a);
  const int64_t steady_b = b.PhaseNs(Phase::kSteady), steady_a = a.PhaseNs(Phase::kSteady);
  d.unit = b.step_count > 0 && a.step_count > 0 ? DiffUnit::kPerStep : DiffUnit::kPerSecond;
  d.steady_ns = {steady_b, steady_a};
  d.step_count = {b.step_count, a.step_count};
  if (d.unit == DiffUnit::kPerStep) {
    d.mean_step_ns =
        Change{Round(static_cast<double>(steady_b) / static_cast<double>(b.step_count)),
               Round(static_cast<double>(steady_a) / static_cast<double>(a.step_count))};
  }
  d.busy_share = {Share(b.busy_ns, steady_b), Share(a.busy_ns, steady_a)};
  d.lost_share = {Share(b.LostNs(), steady_b), Share(a.LostNs(), steady_a)};
  const IdleBreakdown lost_b = LostOf(b), lost_a = LostOf(a);
  for (int c = 0; c < kNumCauses; ++c) {
    const auto cause = static_cast<Cause>(c);
    d.lost_by_cause[c] = {PerUnit(lost_b.CauseNs(cause), d.unit, b.step_count, steady_b),
                          PerUnit(lost_a.CauseNs(cause), d.unit, a.step_count, steady_a)};
  }
  if (b.comm_wait_ns || a.comm_wait_ns) {
    d.comm_wait_ns = Change{PerUnit(b.comm_wait_ns.value_or(0), d.unit, b.step_count, steady_b),
                            PerUnit(a.comm_wait_ns.value_or(0), d.unit, a.step_count, steady_a)};
  }
  if (lost_b.TotalNs() > 0) d.dominant_before = lost_b.Dominant();
  if (lost_a.TotalNs() > 0) d.dominant_after = lost_a.Dominant();
  return d;
}

// Devices matched by (rank, device), in the order of the run after. A single device on each
// side is compared even where its rank or ordinal differs (another CUDA_VISIBLE_DEVICES), with
// a caveat.
void MatchDevices(const Report& before, const Report& after, ReportDiff* diff) {
  using Key = std::tuple<bool, int, int>;
  const auto key = [](const DeviceReport& d) {
    return Key{d.rank.has_value(), d.rank.value_or(0), d.device};
  };
  std::map<Key, const DeviceReport*> by_key;
  for (const DeviceReport& d : before.devices) by_key.emplace(key(d), &d);
  std::vector<const DeviceReport*> unmatched_after;
  for (const DeviceReport& a : after.devices) {
    auto it = by_key.find(key(a));
    if (it == by_key.end() || it->second == nullptr) {
      unmatched_after.push_back(&a);
      continue;
    }
    diff->devices.push_back(CompareDevices(*it->second, a));
    it->second = nullptr;  // matched once
  }
  std::vector<const DeviceReport*> unmatched_before;
  for (const DeviceReport& b : before.devices) {
    auto it = by_key.find(key(b));
    if (it != by_key.end() && it->second == &b) unmatched_before.push_back(&b);
  }
  if (diff->devices.empty() && unmatched_before.size() == 1 && unmatched_after.size() == 1) {
    diff->devices.push_back(CompareDevices(*unmatched_before[0], *unmatched_after[0]));
    diff->caveats.push_back(
        {"different_devices",
         absl::StrCat("the runs used different devices (", Label(KeyOf(*unmatched_before[0])),
                      " before, ", Label(KeyOf(*unmatched_after[0])),
                      " after): compared as one device")});
    return;
  }
  for (const DeviceReport* b : unmatched_before) diff->only_before.push_back(KeyOf(*b));
  for (const DeviceReport* a : unmatched_after) diff->only_after.push_back(KeyOf(*a));
  if (!diff->only_before.empty() || !diff->only_after.empty()) {
    std::vector<std::string> parts;
    const auto names = [](const std::vector<DiffDevice>& v) {
      std::vector<std::string> labels;
      for (const DiffDevice& d : v) labels.push_back(Label(d));
      if (labels.size() > 4) {
        const size_t more = labels.size() - 4;
        labels.resize(4);
        labels.push_back(absl::StrCat("and ", more, " more"));
      }
      return absl::StrJoin(labels, ", ");
    };
    if (!diff->only_before.empty()) {
      parts.push_back(absl::StrCat("before only: ", names(diff->only_before)));
    }
    if (!diff->only_after.empty()) {
      parts.push_back(absl::StrCat("after only: ", names(diff->only_after)));
    }
    diff->caveats.push_back(
        {"different_devices",
         absl::StrCat("the runs used different devices (", absl::StrJoin(parts, "; "),
                      "): the totals cover each run's own devices")});
  }
}

// lost_before: the run before's lost time by subcause. Advice of the run after alone is new only
// where its subcause lost no time at all before; where it did, the cause was there (below the
// advice's threshold) and remains.
void CompareAdvice(const Report& before, const Report& after, const IdleBreakdown& lost_before,
                   ReportDiff* diff) {
  std::map<Subcause, const Advice*> b, a;
  for (const Advice& x : before.advice) b.emplace(x.subcause, &x);
  for (const Advice& x : after.advice) a.emplace(x.subcause, &x);
  std::vector<AdviceChange> resolved, remaining, added;
  for (const Advice& x : before.advice) {
    if (b.at(x.subcause) != &x) continue;  // a subcause advised twice: its first advice
    AdviceChange c;
    c.subcause = x.subcause;
    c.share_before = x.share_of_lost_time;
    c.predicted_gain_per_step_ns = x.gain_per_step_ns;
    c.fix = x.fix;
    auto it = a.find(x.subcause);
    if (it == a.end()) {
      c.status = AdviceStatus::kResolved;
      resolved.push_back(std::move(c));
    } else {
      c.status = AdviceStatus::kRemaining;
      c.share_after = it->second->share_of_lost_time;
      c.fix = it->second->fix;
      remaining.push_back(std::move(c));
    }
  }
  for (const Advice& x : after.advice) {
    if (a.at(x.subcause) != &x || b.count(x.subcause) > 0) continue;
    AdviceChange c;
    c.subcause = x.subcause;
    c.share_after = x.share_of_lost_time;
    c.fix = x.fix;
    if (lost_before[x.subcause] > 0) {
      c.status = AdviceStatus::kRemaining;
      remaining.push_back(std::move(c));
    } else {
      c.status = AdviceStatus::kNew;
      added.push_back(std::move(c));
    }
  }
  std::stable_sort(remaining.begin(), remaining.end(),
                   [](const AdviceChange& x, const AdviceChange& y) {
                     return x.share_after.value_or(0) > y.share_after.value_or(0);
                   });
  for (auto* list : {&resolved, &remaining, &added}) {
    for (AdviceChange& c : *list) diff->advice.push_back(std::move(c));
  }
}

// The device with the longest start-up; the first of equals; nullptr without devices.
const DeviceReport* LongestStartUp(const Report& r) {
  const DeviceReport* best = nullptr;
  for (const DeviceReport& d : r.devices) {
    if (best == nullptr || d.PhaseNs(Phase::kStartUp) > best->PhaseNs(Phase::kStartUp)) best = &d;
  }
  return best;
}

void CompareStartUp(const Report& before, const Report& after, ReportDiff* diff) {
  const DeviceReport* b = LongestStartUp(before);
  const DeviceReport* a = LongestStartUp(after);
  diff->start_up_ns = {b ? b->PhaseNs(Phase::kStartUp) : 0, a ? a->PhaseNs(Phase::kStartUp) : 0};
  std::array<Change, kNumOneOffKinds> kinds{};
  const auto add = [&](const DeviceReport* d, bool is_after) {
    if (d == nullptr) return;
    for (const OneOffTime& o : d->one_off) {
      if (o.phase != Phase::kStartUp) continue;
      Change& c = kinds[static_cast<int>(o.kind)];
      (is_after ? c.after : c.before) += o.ns;
    }
  };
  add(b, false);
  add(a, true);
  for (int k = 0; k < kNumOneOffKinds; ++k) {
    if (kinds[k].before > 0 || kinds[k].after > 0) {
      diff->start_up_parts.push_back({static_cast<OneOffKind>(k), kinds[k]});
    }
  }
  std::stable_sort(diff->start_up_parts.begin(), diff->start_up_parts.end(),
                   [](const OneOffChange& x, const OneOffChange& y) {
                     return x.ns.after != y.ns.after ? x.ns.after > y.ns.after
                                                     : x.ns.before > y.ns.before;
                   });
}

bool SameOptions(const AnalysisOptions& x, const AnalysisOptions& y) {
  return x.launch_gap_max_ns == y.launch_gap_max_ns &&
         x.dispatch_latency_max_ns == y.dispatch_latency_max_ns &&
         x.one_off_min_ns == y.one_off_min_ns && x.first_call_ratio == y.first_call_ratio &&
         x.data_range_patterns == y.data_range_patterns && x.skip_steps == y.skip_steps;
}

void Caveats(const Report& before, const Report& after, const RunFigures& fb, const RunFigures& fa,
             ReportDiff* diff) {
  std::vector<DiffCaveat>& out = diff->caveats;
  if (before.devices.empty() || after.devices.empty()) {
    out.push_back(
        {"no_devices", absl::StrCat("the run ", before.devices.empty() ? "before" : "after",
                                    " has no GPU work: nothing to compare it with")});
  }
  // Other step sources and GPU models make the runs incomparable (Comparability), not weak.
  if (fb.step_count == 0 || fa.step_count == 0) {
    const char* which = fb.step_count == 0 && fa.step_count == 0 ? "neither run has steps"
                        : fb.step_count == 0                     ? "the run before has no steps"
                                                                 : "the run after has no steps";
    out.push_back({"no_steps", absl::StrCat(which,
                                            ": lost time is compared per second of steady "
                                            "state, and the verdict is on the lost share")});
  }
  if (before.source != after.source) {
    out.push_back({"different_sources",
                   absl::StrCat("the runs were recorded differently (", before.source, " before, ",
                                after.source, " after): the evidence for the causes differs")});
  }
  if (before.coverage || after.coverage) {
    out.push_back({"sampled", absl::StrCat(before.coverage && after.coverage ? "both runs are"
                                           : before.coverage                 ? "the run before is"
                                                                             : "the run after is",
                                           " sampled: the figures sum traced windows, not the "
                                           "whole run")});
  }
  for (const DiffRun* run : {&diff->before, &diff->after}) {
    if (run->completeness == report_values::kRecordsLost) {
      out.push_back({std::string(report_values::kRecordsLost),
                     absl::StrCat("the run ", run == &diff->before ? "before" : "after",
                                  " lost records: its figures miss some GPU work")});
    }
  }
  for (const Report* run : {&before, &after}) {
    if (run->device_times == report_values::kMadeUp) {
      out.push_back({"device_times_made_up",
                     absl::StrCat("the run ", run == &before ? "before" : "after",
                                  " is CUPTI range-profiler ranges whose times Kineto made up "
                                  "(profiler_metrics): its busy and idle time say nothing")});
    }
  }
  // A collective's wait for peers is known only where all ranks were analysed together; where
  // it is not, the wait is busy time, and lost time looks smaller than it is.
  const bool comm_b = fb.comm_ns > 0, comm_a = fa.comm_ns > 0;
  if ((comm_b || comm_a) && fb.comm_wait_ns.has_value() != fa.comm_wait_ns.has_value()) {
    out.push_back(
        {"peer_waits_unknown",
         absl::StrCat("the wait for peers is known ", fb.comm_wait_ns ? "before" : "after",
                      " only (all ranks analysed together); in the run ",
                      fb.comm_wait_ns ? "after" : "before",
                      " collectives that waited count as busy")});
  }
  if (!SameOptions(before.options, after.options)) {
    out.push_back({"different_options",
                   "the runs were analysed with different thresholds: a gap may have another "
                   "cause under the other's"});
  }
  if (diff->unit == DiffUnit::kPerStep) {
    const std::optional<double> work = diff->busy_per_unit.Relative();
    if (work && std::abs(*work) > kDifferentWorkChange) {
      out.push_back({"different_work",
                     absl::StrFormat("the GPU's work per step changed by %+.0f%% (another batch "
                                     "size or model?): the step times compare different work",
                                     100 * *work)});
    }
  }
}

// The names of the kernels a report gives: its launch-bound offenders (a kernel launched too late)
// and the kernels that ended its longest gaps.
std::set<std::string> KernelNamesOf(const Report& r) {
  std::set<std::string> names;
  for (const Offender& o : r.offenders) {
    if (CauseOf(o.subcause) == Cause::kLaunchBound && !o.what.empty()) names.insert(o.what);
  }
  for (const GapRecord& g : r.longest_gaps) {
    if (!g.next_op.empty()) names.insert(g.next_op);
  }
  return names;
}

// The steady state's kernels of a device, where its report counts them (graph_replays).
int64_t SteadyKernels(const DeviceReport& d) {
  return d.graph_replays.kernels + d.graph_replays.kernels_alone;
}

// Kernels per step of each run (kernels over steps, summed over the devices): the steady state's
// kernels where both reports count them for every device that ran kernels, else the window's;
// nullopt for both unless both runs have steps and kernels.
std::pair<std::optional<double>, std::optional<double>> KernelsPerStep(const Report& before,
                                                                       const Report& after) {
  const auto counted = [](const Report& r) {
    return std::all_of(r.devices.begin(), r.devices.end(), [](const DeviceReport& d) {
      return d.kernel_count == 0 || SteadyKernels(d) > 0;
    });
  };
  const bool steady = counted(before) && counted(after);
  const auto per_step = [&](const Report& r) -> std::optional<double> {
    int64_t kernels = 0, steps = 0;
    for (const DeviceReport& d : r.devices) {
      kernels += steady ? SteadyKernels(d) : d.kernel_count;
      steps += d.step_count;
    }
    if (kernels == 0 || steps == 0) return std::nullopt;
    return static_cast<double>(kernels) / static_cast<double>(steps);
  };
  std::optional<double> b = per_step(before), a = per_step(after);
  if (!b || !a) return {std::nullopt, std::nullopt};
  return {b, a};
}

// "31", "2.3": a count per step.
std::string PerStepCount(double v) {
  return v >= 10 ? absl::StrFormat("%.0f", v) : absl::StrFormat("%.1f", v);
}

// Whether the runs are one program on one set-up (docs/ANALYSIS.md, "Comparable runs"): the
// reasons they are not. A kernel count that changed while the kernels stayed the same is a caveat
// (the fix changed how the program issues them).
void Comparability(const Report& before, const Report& after, const RunFigures& fb,
                   const RunFigures& fa, ReportDiff* diff) {
  DiffComparability& c = diff->comparability;
  const std::set<std::string> names_b = KernelNamesOf(before), names_a = KernelNamesOf(after);
  int64_t shared = 0;
  for (const std::string& n : names_b) shared += static_cast<int64_t>(names_a.count(n));
  c.kernel_names_before = static_cast<int64_t>(names_b.size());
  c.kernel_names_after = static_cast<int64_t>(names_a.size());
  c.kernel_names_shared = shared;
  const int64_t shorter = std::min(c.kernel_names_before, c.kernel_names_after);
  const bool names_known = shorter >= kMinKernelNames;
  const double shared_share =
      names_known ? static_cast<double>(shared) / static_cast<double>(shorter) : 0;

  std::tie(c.kernels_per_step_before, c.kernels_per_step_after) = KernelsPerStep(before, after);
  if (c.kernels_per_step_before && c.kernels_per_step_after) {
    const double b = *c.kernels_per_step_before, a = *c.kernels_per_step_after;
    const double factor = std::max(a, b) / std::min(a, b);
    if (factor > kDifferentKernelsPerStep) {
      const std::string counts =
          absl::StrFormat("%s before, %s after (x%.1f", PerStepCount(b), PerStepCount(a), factor);
      if (names_known && shared_share >= kSameKernelNamesShare) {
        diff->caveats.push_back(
            {"different_kernel_count",
             absl::StrFormat("kernels per step: %s), yet %d of the %d kernels named in the "
                             "shorter list are in both: the fix changed how the program issues "
                             "its kernels (a CUDA graph, a capturable optimizer)?",
                             counts, shared, shorter)});
      } else {
        c.reasons.push_back(
            {"kernels_per_step", absl::StrFormat("kernels per step: %s, more than x%.1f)", counts,
                                                 kDifferentKernelsPerStep)});
      }
    }
  }
  // GPU work per step, apart from collectives that ran alone (a straggler's peers wait inside
  // them, and a fix of the straggler shortens that wait).
  if (fb.step_count > 0 && fa.step_count > 0) {
    const double b =
        static_cast<double>(fb.busy_ns - fb.exposed_comm_ns) / static_cast<double>(fb.step_count);
    const double a =
        static_cast<double>(fa.busy_ns - fa.exposed_comm_ns) / static_cast<double>(fa.step_count);
    const double factor = b > 0 && a > 0 ? std::max(a, b) / std::min(a, b) : 1;
    if (factor > kDifferentBusyPerStep && !(names_known && shared_share >= kSameKernelNamesShare)) {
      c.reasons.push_back(
          {"busy_per_step",
           absl::StrFormat("GPU work per step (busy outside collectives that ran alone): %s "
                           "before, %s after (x%.1f, more than x%.1f)",
                           FormatDuration(Round(b)), FormatDuration(Round(a)), factor,
                           kDifferentBusyPerStep)});
    }
  }
  if (names_known && shared_share < kSharedKernelNamesMin) {
    c.reasons.push_back(
        {"kernel_names",
         absl::StrFormat("kernel names: the reports name %d and %d kernels (offenders, longest "
                         "gaps), %d of them in both: less than half of the shorter list",
                         c.kernel_names_before, c.kernel_names_after, shared)});
  }
  if (!before.devices.empty() && !after.devices.empty() &&
      before.devices.size() != after.devices.size()) {
    c.reasons.push_back(
        {"device_count", absl::StrCat("GPUs: ", before.devices.size(), " ran work before, ",
                                      after.devices.size(), " after")});
  }
  for (const DeviceDiff& d : diff->devices) {
    if (!d.before.name.empty() && !d.after.name.empty() && d.before.name != d.after.name) {
      c.reasons.push_back(
          {"gpu_model", absl::StrCat("GPU model: ", Label(d.after), " is a ", d.before.name,
                                     " before and a ", d.after.name, " after")});
      break;
    }
  }
  if (fb.step_count > 0 && fa.step_count > 0 && before.step_source != after.step_source) {
    c.reasons.push_back(
        {"step_source",
         absl::StrCat("steps: from ", before.step_source, " before and ", after.step_source,
                      " after, which may not be the same unit of work")});
  }
  c.comparable = c.reasons.empty();
}

// "22.8 -> 13.3 ms": both in the unit that suits the larger.
std::string Pair(int64_t before, int64_t after) {
  const int64_t m = std::max(std::abs(before), std::abs(after));
  double scale = 1e6;
  const char* unit = "ms";
  if (m >= 1'000'000'000) {
    scale = 1e9;
    unit = "s";
  } else if (m < 1'000'000) {
    scale = 1e3;
    unit = "us";
  }
  return absl::StrFormat("%.1f -> %.1f %s", static_cast<double>(before) / scale,
                         static_cast<double>(after) / scale, unit);
}

// "-20.0 ms/step", "+310 us/s".
std::string SignedPerUnit(int64_t ns, DiffUnit unit) {
  const char* per = unit == DiffUnit::kPerStep ? "/step" : "/s";
  const int64_t m = std::abs(ns);
  const double v = static_cast<double>(ns);
  if (m >= 1'000'000'000) return absl::StrFormat("%+.2f s%s", v / 1e9, per);
  if (m >= 1'000'000) return absl::StrFormat("%+.1f ms%s", v / 1e6, per);
  return absl::StrFormat("%+.1f us%s", v / 1e3, per);
}

void Verdict(ReportDiff* diff) {
  DiffVerdict& v = diff->verdict;
  std::string figure;
  if (diff->mean_step_ns) {
    v.metric = "mean_step";
    const Change& c = *diff->mean_step_ns;
    const double rel = c.Relative().value_or(0);
    v.outcome = rel <= -kMaterialStepChange  ? DiffOutcome::kImproved
                : rel >= kMaterialStepChange ? DiffOutcome::kRegressed
                                             : DiffOutcome::kUnchanged;
    figure = absl::StrFormat("step time %s (%+.0f%%)", Pair(c.before, c.after), 100 * rel);
    if (!c.Relative()) figure = absl::StrCat("step time ", Pair(c.before, c.after));
  } else {
    v.metric = "lost_share";
    const ShareChange& s = diff->lost_share;
    v.outcome = s.Delta() <= -kMaterialShareChange  ? DiffOutcome::kImproved
                : s.Delta() >= kMaterialShareChange ? DiffOutcome::kRegressed
                                                    : DiffOutcome::kUnchanged;
    figure = absl::StrFormat("lost time %.1f%% -> %.1f%% of the steady state", 100 * s.before,
                             100 * s.after);
  }
  if (!diff->comparability.comparable) {
    // Said before any verdict, and no verdict on a fix: the figures compare different programs.
    std::vector<std::string> codes;
    for (const DiffCaveat& r : diff->comparability.reasons) codes.push_back(r.code);
    v.outcome = DiffOutcome::kNotComparable;
    figure = absl::StrCat("not comparable (", absl::StrJoin(codes, ", "), "): ", figure,
                          " between what look like different programs; no verdict on a fix");
  }
  if (v.outcome == DiffOutcome::kImproved || v.outcome == DiffOutcome::kRegressed) {
    const bool down = v.outcome == DiffOutcome::kImproved;
    int64_t best = 0;
    for (int s = 0; s < kNumSubcauses; ++s) {
      const int64_t delta = diff->lost_by_subcause[s].Delta();
      if (down ? delta < best : delta > best) {
        best = delta;
        v.main_change = static_cast<Subcause>(s);
      }
    }
  }
  std::string text = figure;
  if (v.main_change) {
    absl::StrAppend(&text, ": ", QualifiedSubcauseName(*v.main_change), " ",
                    SignedPerUnit(diff->lost_by_subcause[static_cast<int>(*v.main_change)].Delta(),
                                  diff->unit));
  }
  switch (v.outcome) {
    case DiffOutcome::kImproved:
      absl::StrAppend(&text, "; the fix worked");
      break;
    case DiffOutcome::kRegressed:
      absl::StrAppend(&text, "; it got worse");
      break;
    case DiffOutcome::kUnchanged:
      absl::StrAppend(&text, "; no material change");
      break;
    case DiffOutcome::kNotComparable:
      break;
  }
  v.weak = !diff->caveats.empty() || !diff->comparability.comparable;
  if (!diff->caveats.empty()) {
    std::vector<std::string> codes;
    for (const DiffCaveat& c : diff->caveats) {
      if (std::find(codes.begin(), codes.end(), c.code) == codes.end()) codes.push_back(c.code);
    }
    absl::StrAppend(&text, " (weak comparison: ", absl::StrJoin(codes, ", "), ")");
  }
  v.text = std::move(text);
}

}  // namespace

ReportDiff DiffReports(const Report& before_as_read, const Report& after_as_read) {
  std::optional<Report> filled_before, filled_after;
  const Report& before = WithStepCounts(before_as_read, &filled_before);
  const Report& after = WithStepCounts(after_as_read, &filled_after);
  ReportDiff diff;
  diff.before = RunOf(before);
  diff.after = RunOf(after);
  const RunFigures fb = FiguresOf(before), fa = FiguresOf(after);
  diff.unit = fb.step_count > 0 && fa.step_count > 0 ? DiffUnit::kPerStep : DiffUnit::kPerSecond;
  const auto per_unit = [&](int64_t b, int64_t a) {
    return Change{PerUnit(b, diff.unit, fb.step_count, fb.steady_ns),
                  PerUnit(a, diff.unit, fa.step_count, fa.steady_ns)};
  };

  diff.steady_ns = {fb.steady_ns, fa.steady_ns};
  diff.steps = {fb.max_steps, fa.max_steps};
  if (diff.unit == DiffUnit::kPerStep) {
    diff.mean_step_ns = per_unit(fb.steady_ns, fa.steady_ns);
    const std::optional<int64_t> mb = Median(fb.step_spans), ma = Median(fa.step_spans);
    if (mb && ma) diff.median_step_ns = Change{*mb, *ma};
  }
  diff.busy_share = {Share(fb.busy_ns, fb.steady_ns), Share(fa.busy_ns, fa.steady_ns)};
  diff.idle_share = {Share(fb.idle_ns, fb.steady_ns), Share(fa.idle_ns, fa.steady_ns)};
  diff.lost_share = {Share(fb.lost.TotalNs(), fb.steady_ns),
                     Share(fa.lost.TotalNs(), fa.steady_ns)};
  diff.busy_per_unit = per_unit(fb.busy_ns, fa.busy_ns);
  for (int c = 0; c < kNumCauses; ++c) {
    const auto cause = static_cast<Cause>(c);
    diff.lost_by_cause[c] = per_unit(fb.lost.CauseNs(cause), fa.lost.CauseNs(cause));
  }
  for (int s = 0; s < kNumSubcauses; ++s)
    diff.lost_by_subcause[s] = per_unit(fb.lost.ns[s], fa.lost.ns[s]);
  diff.lost_per_unit = per_unit(fb.lost.TotalNs(), fa.lost.TotalNs());
  diff.comm_per_unit = per_unit(fb.comm_ns, fa.comm_ns);
  diff.exposed_comm_per_unit = per_unit(fb.exposed_comm_ns, fa.exposed_comm_ns);
  if (fb.comm_wait_ns || fa.comm_wait_ns) {
    diff.comm_wait_per_unit = per_unit(fb.comm_wait_ns.value_or(0), fa.comm_wait_ns.value_or(0));
  }
  CompareStartUp(before, after, &diff);
  MatchDevices(before, after, &diff);
  CompareAdvice(before, after, fb.lost, &diff);
  Caveats(before, after, fb, fa, &diff);
  Comparability(before, after, fb, fa, &diff);
  Verdict(&diff);
  return diff;
}

}  // namespace gpuidle::internal
