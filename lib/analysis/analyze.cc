#include "analysis/analyze.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "analysis/advice.h"
#include "analysis/attribution.h"
#include "analysis/communication.h"
#include "analysis/gap_records.h"
#include "analysis/gpu_metrics.h"
#include "analysis/host_stacks.h"
#include "analysis/offenders.h"
#include "analysis/periodic_work.h"
#include "analysis/phases.h"
#include "analysis/rank_merge.h"
#include "analysis/serving.h"
#include "analysis/step_gpu_metrics.h"
#include "analysis/steps.h"
#include "analysis/timeline_index.h"
#include "analysis/timeline_summary.h"
#include "analysis/untraced_view.h"
#include "core/status_macros.h"
#include "model/cuda_api.h"
#include "model/report_names.h"

// AnalyzeRanks runs these stages per rank (process):
//   window and steps (steps.h)  ->  per device: attribution (attribution.h), phases
//   (phases.h), idle totals, offenders (offenders.h), gap records (gap_records.h),
//   communication (communication.h), step rows  ->  unused devices, advice;
// then merges the ranks' reports (rank_merge.h), as a merge of live ranks' reports does.
namespace gpuidle::internal {
namespace {

// Periodic work below this share of the steady state's time is not listed (a stray log line).
constexpr double kPeriodicWorkMinShare = 0.01;

// Every device lists at least its first steps, however many devices share Report::kMaxStepRows.
constexpr size_t kMinStepRowsPerDevice = 20;

std::optional<Interval> WindowOf(const Timeline& t) {
  int64_t lo = std::numeric_limits<int64_t>::max();
  int64_t hi = std::numeric_limits<int64_t>::min();
  auto cover = [&](int64_t s, int64_t e) {
    lo = std::min(lo, s);
    hi = std::max(hi, e);
  };
  for (const DeviceTimeline& d : t.devices) {
    for (const DeviceOp& op : d.ops) cover(op.start_ns, op.end_ns);
  }
  for (const HostCall& c : t.calls) cover(c.start_ns, c.end_ns);
  for (const Range& r : t.ranges) cover(r.start_ns, r.end_ns);
  if (lo >= hi) return std::nullopt;
  return Interval{lo, hi};
}

// Without steps the steady state runs from the first to the last kernel, after the start-up's
// one-off work: it begins after the longest prefix (from the first kernel) that is at least half
// one-off time, so that compilation, autotuning and module loading between a few set-up kernels
// and the program's loop are start-up too, while a re-compilation later in the run is not.
Interval SteadyWithoutSteps(const DeviceAttribution& a, const std::vector<OneOffSpan>& spans,
                            const HostStacks& stacks, Interval window) {
  if (a.busy.empty()) return window;
  Interval steady{a.busy.front().start_ns, a.busy.back().end_ns};
  std::vector<Interval> one_off;
  for (const OneOffSpan& span : spans) one_off.push_back({span.start_ns, span.end_ns});
  for (const IdlePiece& piece : a.pieces) {
    if (piece.stack >= 0 && stacks.evidence(piece.stack).activity == HostActivity::kCompilation) {
      one_off.push_back({piece.start_ns, piece.end_ns});
    }
  }
  std::sort(one_off.begin(), one_off.end(),
            [](const Interval& x, const Interval& y) { return x.start_ns < y.start_ns; });
  int64_t covered = 0, covered_until = steady.start_ns, prefix_end = steady.start_ns;
  for (const Interval& o : one_off) {
    const int64_t s = std::max(o.start_ns, covered_until);
    if (o.end_ns <= s) continue;
    covered += o.end_ns - s;
    covered_until = o.end_ns;
    if (2 * covered >= o.end_ns - steady.start_ns) prefix_end = o.end_ns;
  }
  auto next = std::lower_bound(a.busy.begin(), a.busy.end(), prefix_end,
                               [](const Interval& b, int64_t v) { return b.start_ns < v; });
  if (next != a.busy.end()) steady.start_ns = next->start_ns;
  return steady;
}

// The report lists at most kMaxStepRows steps, shared out among the devices: a small trace
// of many devices and steps must not make a report of gigabytes.
size_t StepRowsPerDevice(std::span<const Timeline* const> ranks) {
  size_t device_count = 0;
  for (const Timeline* t : ranks) device_count += t->devices.size();
  return std::max<size_t>(kMinStepRowsPerDevice,
                          Report::kMaxStepRows / std::max<size_t>(device_count, 1));
}

// A rank's steps after its warm-up steps (options.skip_steps), which also move the start of its
// window to the first step kept. FailedPrecondition if none is left.
absl::StatusOr<std::vector<int32_t>> StepsAfterWarmUp(const Timeline& t, const std::string& input,
                                                      const AnalysisOptions& options,
                                                      Interval* window, std::string* why_no_steps) {
  std::string dropped;
  std::vector<int32_t> steps = StepRanges(t, &dropped);
  if (!dropped.empty()) *why_no_steps = std::move(dropped);
  if (options.skip_steps > 0) {
    const auto skip = static_cast<size_t>(options.skip_steps);
    if (steps.size() <= skip) {
      return absl::FailedPreconditionError(
          absl::StrCat(input, " has ", steps.size(), " step(s): skipping ", skip, " leaves none"));
    }
    window->start_ns = std::max(window->start_ns, t.ranges[steps[skip]].start_ns);
    steps.erase(steps.begin(), steps.begin() + static_cast<ptrdiff_t>(skip));
  }
  return steps;
}

// What a process adds to its report: the window, the source, the completeness of its records,
// its warnings.
void AddRankInfo(const Timeline& t, Interval window, Report* report) {
  report->window_start_ns = window.start_ns;
  report->window_end_ns = window.end_ns;
  report->source = t.info.source;
  report->dropped_records = t.info.dropped_records;
  report->zero_timestamp_records = t.info.zero_timestamp_records;
  report->record_limit_reached = t.info.record_limit_reached;
  report->warnings = t.info.warnings;
}

// A trace with only one side of the program (docs/ANALYSIS.md, "Records lost"): launch calls
// but no GPU records (CUDA activities off, or the GPU's records lost), so the report cannot say
// when the GPU was idle; or GPU work but no CUDA call at all (a trace filtered to a few kinds
// of event, or recorded without CPU activities), so it cannot say why. The warning says which,
// and what to record.
// "1 launch call", "3 launch calls".
std::string Counted(int64_t n, absl::string_view thing) {
  return absl::StrCat(n, " ", thing, n == 1 ? "" : "s");
}

void NoteOneSidedTrace(const Timeline& t, Report* report) {
  int64_t ops = 0;
  for (const DeviceTimeline& d : t.devices) ops += static_cast<int64_t>(d.ops.size());
  if (ops > 0) {
    if (!t.calls.empty()) return;
    report->warnings.push_back(absl::StrCat(
        "the trace has ", Counted(ops, "GPU operation"),
        " but no CUDA runtime or driver call: when the host launched or waited is unknown, so "
        "its idle time is unattributed; record the host's side too (torch.profiler: "
        "ProfilerActivity.CPU among its activities, and no filter on the exported events)"));
    return;
  }
  const int64_t launches = std::count_if(t.calls.begin(), t.calls.end(), [](const HostCall& c) {
    return c.category == CallCategory::kLaunch;
  });
  if (launches == 0 && t.calls.empty()) {
    // The framework's ops without a CUDA call under any: the CUDA side was not recorded at all.
    const int64_t framework_ops =
        std::count_if(t.ranges.begin(), t.ranges.end(),
                      [](const Range& r) { return r.kind == RangeKind::kFrameworkOp; });
    if (framework_ops == 0) return;
    report->warnings.push_back(absl::StrCat(
        "the trace has ", Counted(framework_ops, "framework op"),
        " but no CUDA call and no record of GPU work: CUDA activities were not recorded, so "
        "this report cannot say whether or why the GPU was idle; record them (torch.profiler: "
        "ProfilerActivity.CUDA among its activities)"));
    return;
  }
  if (launches == 0) return;
  report->warnings.push_back(absl::StrCat(
      "the trace has ", Counted(launches, "launch call"),
      " but no record of GPU work: the GPU's activity was not recorded or was lost, so this "
      "report cannot say when the GPU was idle; record it too (torch.profiler: "
      "ProfilerActivity.CUDA among its activities; Nsight Systems: --trace=cuda; gpuidle's own "
      "capture records it)"));
}

// A trace that recorded both sides but lacks calls from inside its window (docs/ANALYSIS.md,
// "Records lost"): GPU work whose correlation id lies between those of recorded calls, yet
// whose launch call is missing. Its events were filtered (or the profiler skipped the calls
// that launched them), and the syncs and copies filtered with them cannot show. (Work launched
// before the trace began has ids below every recorded call's: no warning.)
constexpr int64_t kMinMissingCalls = 20;  // ... and a tenth of the GPU work in the range

void NoteFilteredTrace(const Timeline& t, const TimelineIndex& index, Report* report) {
  uint64_t first = std::numeric_limits<uint64_t>::max(), last = 0;
  for (const HostCall& c : t.calls) {
    if (c.correlation_id == kNoCorrelation) continue;
    first = std::min(first, c.correlation_id);
    last = std::max(last, c.correlation_id);
  }
  int64_t inside = 0, missing = 0;
  for (const DeviceTimeline& d : t.devices) {
    for (size_t i = 0; i < d.ops.size(); ++i) {
      const uint64_t id = d.ops[i].correlation_id;
      if (id == kNoCorrelation || id <= first || id >= last) continue;
      ++inside;
      missing += index.IssuingCall(d, static_cast<int32_t>(i)) < 0;
    }
  }
  if (missing < kMinMissingCalls || missing * 10 < inside) return;
  report->warnings.push_back(absl::StrCat(
      Counted(missing, "GPU operation"), " of ", inside,
      " between recorded calls have no launch call in the trace: its events were filtered, or "
      "the profiler did not record the calls that launched them (driver-API launches: Triton, "
      "NCCL); their gaps are unattributed, and any sync or copy left out with them cannot show "
      "as sync-bound; record every CUDA runtime and driver call (torch.profiler: "
      "ProfilerActivity.CPU and CUDA, no filter on the exported events)"));
}

// What the devices of one rank share.
struct RankAnalysis {
  const Timeline& t;
  const TimelineIndex& index;
  HostStacks& stacks;  // attribution interns the evidence of the stacks it finds
  const std::vector<OneOffSpan>& one_off_spans;
  const std::vector<int32_t>& steps;
  SteadySteps steady_steps;
  Interval window;
  std::optional<int> rank;
  const AnalysisOptions& options;
  size_t step_rows_per_device;
  const Demand& demand;  // serving requests (empty in other processes)
};

// One pass over the steady state's ops: its host-to-device copies by host memory kind (what a
// pinned-memory fix predicts its gain from) and its kernels by how the host issued them (a step
// that replays CUDA graphs gets other launch advice; analysis/advice.cc).
void AddSteadyOpTotals(const TimelineIndex& index, const DeviceTimeline& device, Interval steady,
                       DeviceReport* d) {
  const Timeline& t = index.timeline();
  std::vector<int8_t> graph_launch_name(t.strings.size(), -1);  // by call name: -1 not yet asked
  absl::flat_hash_set<int32_t> graph_launches;
  for (size_t i = 0; i < device.ops.size(); ++i) {
    const DeviceOp& op = device.ops[i];
    if (op.start_ns >= steady.end_ns) break;
    if (op.start_ns < steady.start_ns) continue;
    if (op.kind == OpKind::kKernel) {
      const int32_t call = index.IssuingCall(device, static_cast<int32_t>(i));
      bool from_graph = false;
      if (call >= 0) {
        const StringId name = t.calls[call].name;
        int8_t& known = graph_launch_name[name];
        if (known < 0) known = LaunchesGraph(t.strings.Get(name)) ? 1 : 0;
        from_graph = known == 1;
      }
      if (from_graph) {
        ++d->graph_replays.kernels;
        graph_launches.insert(call);
      } else {
        ++d->graph_replays.kernels_alone;
      }
      continue;
    }
    if (op.kind != OpKind::kMemcpy || op.copy_kind != CopyKind::kHtoD) continue;
    CopyTotals& c = op.pageable ? d->h2d_pageable : d->h2d_pinned;
    ++c.count;
    c.bytes += static_cast<int64_t>(op.bytes);
    c.ns += std::max<int64_t>(0, op.end_ns - op.start_ns);
  }
  d->graph_replays.launches = static_cast<int64_t>(graph_launches.size());
}

// One device of a rank: its attribution and phases, idle totals, offenders and gap records of
// its steady state, communication, and its steps (appended to report->steps).
DeviceReport AnalyzeDevice(const RankAnalysis& r, const DeviceTimeline& device,
                           OffenderTable* offenders, PeriodicWorkTable* periodic,
                           LongestGaps* longest, LongestGaps* drawn, Report* report) {
  const Timeline& t = r.t;
  const size_t first_step = r.steady_steps.first;
  const size_t end_step = r.steady_steps.end;
  DeviceReport d;
  d.rank = r.rank;
  d.device = device.device;
  d.name = device.name;
  d.window_start_ns = r.window.start_ns;
  d.window_end_ns = r.window.end_ns;
  d.window_ns = r.window.end_ns - r.window.start_ns;
  const int64_t last_step_end = end_step > first_step ? t.ranges[r.steps[end_step - 1]].end_ns
                                                      : std::numeric_limits<int64_t>::min();
  const DeviceAttribution a =
      AttributeDevice(r.index, r.stacks, device, r.window, last_step_end, r.options);
  d.kernel_count = a.op_counts[static_cast<size_t>(OpKind::kKernel)];
  d.memcpy_count = a.op_counts[static_cast<size_t>(OpKind::kMemcpy)];
  d.memset_count = a.op_counts[static_cast<size_t>(OpKind::kMemset)];
  // Phases: the steady state runs from the first steady step (the first kernel) to the
  // end of the last step (the last kernel); the rest, and one-off work, is reported apart.
  const std::vector<Interval> step_spans = CutSteps(r.index, device, r.steps, r.window);
  Interval steady{0, 0};
  Interval warm_up{0, 0};
  if (end_step > first_step) {
    steady = Interval{step_spans[first_step].start_ns, step_spans[end_step - 1].end_ns};
    if (r.steady_steps.warm_up_step) warm_up = step_spans.front();
  } else {
    steady = SteadyWithoutSteps(a, r.one_off_spans, r.stacks, r.window);
  }
  PhasedDevice phased =
      SplitPhases(a, steady, warm_up, r.one_off_spans, a.launching_threads, r.stacks);
  if (!r.demand.empty()) ApplyDemand(r.demand, a.busy, steady, &phased, &d);
  d.steady_start_ns = steady.start_ns;
  d.steady_end_ns = steady.end_ns;
  d.busy_ns = phased.steady_busy_ns;
  d.one_off = phased.one_off;
  for (const IdlePiece& piece : phased.steady) {
    d.idle[piece.subcause] += piece.end_ns - piece.start_ns;
    offenders->Add(device, piece);
    const int64_t length = piece.end_ns - piece.start_ns;
    const bool listed = longest->WouldKeep(length);
    const bool draw = drawn != nullptr && drawn->WouldKeep(length);
    if (listed || draw) {
      GapRecord g = ToGapRecord(r.index, r.stacks, device, d, piece);
      if (listed && draw) drawn->Offer(g);
      (listed ? longest : drawn)->Offer(std::move(g));
    }
  }
  longest->CountDevice(device.device, static_cast<int64_t>(phased.steady.size()));
  periodic->AddDevice(device, phased.steady,
                      end_step > first_step ? std::vector<Interval>(step_spans.begin() + first_step,
                                                                    step_spans.begin() + end_step)
                                            : std::vector<Interval>());
  d.idle_ns = d.idle.TotalNs();
  d.timeline = SummarizeTimeline(r.window, a.busy, phased.steady);
  AddGpuReadings(t, device.device, &d.timeline);
  if (!r.demand.empty()) AddInFlight(r.demand, r.window, &d.timeline);
  const std::vector<Interval> comm = a.communication_kernels > 0
                                         ? KernelUnion(device, steady, true)
                                         : std::vector<Interval>();  // no pass over the ops
  d.comm_ns = TotalLength(comm);
  // Without communication nothing is exposed: the union of all other kernels (as many
  // intervals as kernels, when launch-bound) is built only when there is some.
  if (a.communication_kernels > 0) {
    const std::vector<Interval> compute = KernelUnion(device, steady, false);
    d.exposed_comm_ns = LengthNotCovered(comm, compute);
    AddCollectives(t, device, r.window, compute, &d);
  }
  AddSteadyOpTotals(r.index, device, steady, &d);
  d.step_count = static_cast<int64_t>(r.steady_steps.count());
  const size_t steps_before = report->steps.size();
  FillSteps(t, r.steps, step_spans, first_step, end_step, a.busy, phased.steady, d,
            r.step_rows_per_device, &report->steps);
  FillStepGpuMetrics(t, device.device, a.busy,
                     std::span<StepReport>(report->steps).subspan(steps_before));
  report->steps_not_listed +=
      r.steady_steps.count() - std::min(r.steady_steps.count(), r.step_rows_per_device);
  return d;
}

// A serving process's requests over the steady state of its devices (from the earliest start to
// the latest end), with its steady steps' host spans (a batching server's batches).
void AddServing(const RankAnalysis& r, Report* report) {
  Interval steady{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  for (const DeviceReport& d : report->devices) {
    steady.start_ns = std::min(steady.start_ns, d.steady_start_ns);
    steady.end_ns = std::max(steady.end_ns, d.steady_end_ns);
  }
  if (steady.end_ns <= steady.start_ns) return;
  std::vector<Interval> steps;
  for (size_t i = r.steady_steps.first; i < r.steady_steps.end; ++i) {
    const Range& step = r.t.ranges[r.steps[i]];
    steps.push_back({step.start_ns, step.end_ns});
  }
  report->serving = SummariseServing(r.demand, steady, steps);
}

// The devices the process could see: unused when it ran no work there. A device that ran work
// was visible, listed or not (ROCm traces put kernels on device ids that their deviceProperties
// do not list).
void ListDevices(const TimelineInfo& info, std::optional<int> rank, const std::set<int>& used,
                 Report* report) {
  std::set<int> visible(info.visible_devices.begin(), info.visible_devices.end());
  if (!visible.empty()) visible.insert(used.begin(), used.end());
  report->visible_device_count = static_cast<int>(visible.size());
  for (int v : visible) {
    if (!used.contains(v)) report->unused_devices.push_back(v);
  }
  for (size_t i = 0; i < info.visible_devices.size(); ++i) {
    VisibleDevice& v = report->visible_devices.emplace_back();
    v.rank = rank;
    v.device = info.visible_devices[i];
    if (i < info.visible_device_names.size()) v.name = info.visible_device_names[i];
    if (i < info.visible_device_uuids.size()) v.uuid = info.visible_device_uuids[i];
    if (i < info.visible_device_physical.size() && info.visible_device_physical[i] >= 0) {
      v.physical_index = info.visible_device_physical[i];
    }
    v.used = used.contains(v.device);
  }
}

}  // namespace

absl::Status ValidateOptions(const AnalysisOptions& options) {
  if (options.launch_gap_max_ns <= 0) {
    return absl::InvalidArgumentError("launch_gap_max must be positive");
  }
  if (options.dispatch_latency_max_ns < 0) {
    return absl::InvalidArgumentError("dispatch_latency_max must not be negative");
  }
  if (options.skip_steps < 0) return absl::InvalidArgumentError("skip_steps must not be negative");
  if (options.max_gap_records < 0 || options.max_offenders < 0) {
    return absl::InvalidArgumentError("record limits must not be negative");
  }
  if (options.one_off_min_ns <= 0 || !(options.first_call_ratio >= 1)) {
    return absl::InvalidArgumentError(
        "one_off_min must be positive and first_call_ratio at least 1");
  }
  for (const auto& [name, share] : {std::pair{"advice_min_share", options.advice_min_share},
                                    {"advice_min_steady_share", options.advice_min_steady_share},
                                    {"worth_fixing_min_share", options.worth_fixing_min_share}}) {
    if (!(share >= 0 && share <= 1)) {
      return absl::InvalidArgumentError(absl::StrCat(name, " must be within [0, 1]"));
    }
  }
  return absl::OkStatus();
}

namespace {

// One process as its timeline says: its devices, steps, gaps, offenders and advice. `input`
// names it in errors. `gap_counts`, if given, gets each device's number of steady-state gaps;
// `drawn`, if given, is offered every steady-state gap (the trace's gap list).
absl::StatusOr<Report> AnalyzeTimeline(const Timeline& t, const std::string& input,
                                       std::optional<int> rank, size_t step_rows_per_device,
                                       const AnalysisOptions& options,
                                       std::vector<std::pair<int, int64_t>>* gap_counts = nullptr,
                                       LongestGaps* drawn = nullptr) {
  std::optional<Interval> window = WindowOf(t);
  if (!window) {
    return absl::FailedPreconditionError(absl::StrCat(input, " holds no host or GPU activity"));
  }
  std::string why_no_steps;
  GPUIDLE_ASSIGN_OR_RETURN(const std::vector<int32_t> steps,
                           StepsAfterWarmUp(t, input, options, &*window, &why_no_steps));
  Report report;
  report.options = options;
  AddRankInfo(t, *window, &report);
  if (!why_no_steps.empty()) report.warnings.push_back(std::move(why_no_steps));
  NoteOneSidedTrace(t, &report);
  if (rank) {
    RankReport& r = report.ranks.emplace_back();
    r.rank = *rank;
    r.host = t.info.host;
    r.pid = t.info.pid;
    r.world_size = t.info.world_size;
    r.wall_clock_offset_ns = t.info.wall_clock_offset_ns;
  }
  report.step_source = StepSource(t, steps);
  if (t.info.device_times_made_up) report.device_times = std::string(report_values::kMadeUp);
  const TimelineIndex index(t, options);
  NoteFilteredTrace(t, index, &report);
  HostStacks stacks(t, index.python_frames());
  const std::vector<OneOffSpan> one_off_spans = FindOneOffSpans(index, stacks, options);
  const Demand demand(t);
  const RankAnalysis rank_analysis{
      t,       index, stacks,  one_off_spans,        steps, FindSteadySteps(t, steps, options),
      *window, rank,  options, step_rows_per_device, demand};
  OffenderTable table(index, stacks);
  PeriodicWorkTable periodic(index, stacks);
  LongestGaps longest(options.max_gap_records);
  std::set<int> used;
  int64_t steady_ns = 0;
  for (const DeviceTimeline& device : t.devices) {
    report.devices.push_back(
        AnalyzeDevice(rank_analysis, device, &table, &periodic, &longest, drawn, &report));
    DeviceReport& d = report.devices.back();
    d.gpu_metrics = SummariseGpuMetrics(t, device, d.steady_start_ns, d.steady_end_ns);
    if (d.gpu_metrics.has_value()) NoteWaitBehindOtherProcesses(d, &*d.gpu_metrics);
    steady_ns += report.devices.back().steady_end_ns - report.devices.back().steady_start_ns;
    used.insert(device.device);
  }
  ListDevices(t.info, rank, used, &report);
  if (!demand.empty()) AddServing(rank_analysis, &report);
  report.offenders = table.Top(options.max_offenders);
  report.periodic_work = periodic.Take(steady_ns, kPeriodicWorkMinShare);
  if (gap_counts != nullptr) *gap_counts = longest.counted();
  report.longest_gaps = longest.Take();
  AddAdvice(options, &report);
  return report;
}

// One process, as it runs without gpuidle where the timeline says what gpuidle cost
// (untraced_view.h): the analysis reads a copy with the tracer's time taken out. `drawn` (the
// gaps as recorded) is offered gaps only where the timeline is analysed as recorded.
absl::StatusOr<Report> AnalyzeProcess(const Timeline& t, const std::string& input,
                                      std::optional<int> rank, size_t step_rows_per_device,
                                      const AnalysisOptions& options,
                                      std::vector<std::pair<int, int64_t>>* gap_counts = nullptr,
                                      LongestGaps* drawn = nullptr) {
  if (!t.info.tracer_cost || options.as_recorded) {
    GPUIDLE_ASSIGN_OR_RETURN(Report report, AnalyzeTimeline(t, input, rank, step_rows_per_device,
                                                            options, gap_counts, drawn));
    if (t.info.tracer_cost) report.tracer_time = std::string(report_values::kAsRecorded);
    return report;
  }
  Timeline untraced = t.Copy();
  const TracerShift shift = RemoveTracerTime(&untraced);
  GPUIDLE_ASSIGN_OR_RETURN(
      Report report,
      AnalyzeTimeline(untraced, input, rank, step_rows_per_device, options, gap_counts));
  report.tracer_time = std::string(report_values::kTakenOut);
  for (DeviceReport& d : report.devices) {
    d.tracer_ns = shift.TakenOutNs(d.device, d.steady_start_ns, d.steady_end_ns);
  }
  return report;
}

// A one-process report that lists only the first steps of each device says so.
void NoteStepsNotListed(size_t step_rows_per_device, Report* report) {
  if (report->steps_not_listed == 0) return;
  report->warnings.push_back(absl::StrCat(
      "the report lists ", report->steps.size(), " of ",
      report->steps.size() + report->steps_not_listed, " steps (the first ", step_rows_per_device,
      " of each device); the figures of each device cover every step"));
}

// The gaps offered to a trace's list, in drawing order, with each device's count and idle time.
GapList MakeGapList(std::vector<GapRecord> gaps, const std::vector<std::pair<int, int64_t>>& counts,
                    const Report& report) {
  GapList list;
  list.gaps = std::move(gaps);
  std::sort(list.gaps.begin(), list.gaps.end(), [](const GapRecord& a, const GapRecord& b) {
    return a.device != b.device ? a.device < b.device : a.start_ns < b.start_ns;
  });
  for (size_t i = 0; i < counts.size() && i < report.devices.size(); ++i) {
    list.devices.push_back({counts[i].first, counts[i].second, report.devices[i].idle_ns});
  }
  return list;
}

}  // namespace

absl::StatusOr<Report> AnalyzeRanks(std::span<const Timeline* const> ranks,
                                    const AnalysisOptions& options,
                                    const std::vector<std::string>& names) {
  GPUIDLE_RETURN_IF_ERROR(ValidateOptions(options));
  if (ranks.empty()) return absl::InvalidArgumentError("nothing to analyse");
  const size_t step_rows_per_device = StepRowsPerDevice(ranks);
  const bool several_ranks = ranks.size() > 1;
  std::vector<Report> reports;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const Timeline& t = *ranks[r];
    std::optional<int> rank = t.info.rank;
    if (!rank && several_ranks) rank = static_cast<int>(r);
    GPUIDLE_ASSIGN_OR_RETURN(
        Report report,
        AnalyzeProcess(t, several_ranks ? absl::StrCat("input ", r + 1) : "the trace", rank,
                       step_rows_per_device, options));
    reports.push_back(std::move(report));
  }
  if (several_ranks) return MergeRanks(std::move(reports), names, options);
  NoteStepsNotListed(step_rows_per_device, &reports.front());
  return std::move(reports.front());
}

absl::StatusOr<Report> Analyze(const Timeline& timeline, const AnalysisOptions& options) {
  const Timeline* one[] = {&timeline};
  return AnalyzeRanks(one, options);
}

absl::StatusOr<GapList> ListGaps(const Timeline& timeline, const AnalysisOptions& options,
                                 int max_gaps) {
  AnalysisOptions o = options;
  o.max_gap_records = std::max(max_gaps, 0);
  o.as_recorded = true;  // the gaps are drawn over the ops as recorded
  GPUIDLE_RETURN_IF_ERROR(ValidateOptions(o));
  const Timeline* one[] = {&timeline};
  std::vector<std::pair<int, int64_t>> counts;
  GPUIDLE_ASSIGN_OR_RETURN(Report report, AnalyzeProcess(timeline, "the trace", timeline.info.rank,
                                                         StepRowsPerDevice(one), o, &counts));
  return MakeGapList(std::move(report.longest_gaps), counts, report);
}

std::optional<GapList> GapsToDraw(const Timeline& timeline, const Report* report, int max_gaps) {
  if (report == nullptr) return std::nullopt;
  absl::StatusOr<GapList> gaps = ListGaps(timeline, report->options, max_gaps);
  if (!gaps.ok()) return std::nullopt;
  return *std::move(gaps);
}

absl::StatusOr<AnalysisWithGaps> AnalyzeWithGaps(const Timeline& timeline,
                                                 const AnalysisOptions& options, int max_gaps) {
  AnalysisWithGaps out;
  if (timeline.info.tracer_cost && !options.as_recorded) {
    GPUIDLE_ASSIGN_OR_RETURN(out.report, Analyze(timeline, options));
    GPUIDLE_ASSIGN_OR_RETURN(out.gaps, ListGaps(timeline, options, max_gaps));
    return out;
  }
  GPUIDLE_RETURN_IF_ERROR(ValidateOptions(options));
  const Timeline* one[] = {&timeline};
  const size_t step_rows_per_device = StepRowsPerDevice(one);
  std::vector<std::pair<int, int64_t>> counts;
  LongestGaps drawn(std::max(max_gaps, 0));
  GPUIDLE_ASSIGN_OR_RETURN(
      out.report, AnalyzeProcess(timeline, "the trace", timeline.info.rank, step_rows_per_device,
                                 options, &counts, &drawn));
  NoteStepsNotListed(step_rows_per_device, &out.report);
  out.gaps = MakeGapList(drawn.Take(), counts, out.report);
  return out;
}

}  // namespace gpuidle::internal
