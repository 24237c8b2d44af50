#include "analysis/analyze.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analysis/advice.h"
#include "analysis/attribution.h"
#include "analysis/host_stacks.h"
#include "analysis/phases.h"
#include "analysis/timeline_index.h"
#include "core/status_macros.h"

namespace gpuidle::internal {
namespace {

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

// Union of the kernels of one kind (communication or not) clipped to the window.
std::vector<Interval> KernelUnion(const DeviceTimeline& d, Interval window, bool communication) {
  std::vector<Interval> out;
  for (const DeviceOp& op : d.ops) {
    if (op.kind != OpKind::kKernel || op.communication != communication) continue;
    const int64_t s = std::max(op.start_ns, window.start_ns);
    const int64_t e = std::min(op.end_ns, window.end_ns);
    if (e <= s) continue;
    if (!out.empty() && s <= out.back().end_ns) {
      out.back().end_ns = std::max(out.back().end_ns, e);
    } else {
      out.push_back({s, e});
    }
  }
  return out;
}

int64_t TotalLength(const std::vector<Interval>& v) {
  int64_t total = 0;
  for (const Interval& i : v) total += i.end_ns - i.start_ns;
  return total;
}

// Length of (a minus b); both sorted and disjoint.
int64_t LengthNotCovered(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  int64_t total = 0;
  size_t j = 0;
  for (const Interval& x : a) {
    int64_t cursor = x.start_ns;
    while (j < b.size() && b[j].end_ns <= cursor) ++j;
    for (size_t k = j; k < b.size() && b[k].start_ns < x.end_ns; ++k) {
      if (b[k].start_ns > cursor) total += b[k].start_ns - cursor;
      cursor = std::max(cursor, b[k].end_ns);
    }
    if (x.end_ns > cursor) total += x.end_ns - cursor;
  }
  return total;
}

bool IsOptimizerStep(const Timeline& t, const Range& r) {
  return absl::StartsWith(t.strings.Get(r.name), "optimizer.step#");
}

// Outermost step ranges, by start. gpuidle's optimizer-step boundaries stand in only for a
// program that marks no steps of its own.
std::vector<int32_t> StepRanges(const Timeline& t) {
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
  return steps;
}

// A step's span on one device begins when its host range has begun and the previous step's
// GPU work has finished; it ends where the next step begins (docs/ANALYSIS.md).
std::vector<Interval> CutSteps(const TimelineIndex& index, const DeviceTimeline& device,
                               const std::vector<int32_t>& steps, Interval window) {
  const Timeline& t = index.timeline();
  std::vector<int64_t> gpu_end(steps.size(), std::numeric_limits<int64_t>::min());
  for (size_t i = 0; i < device.ops.size(); ++i) {
    const DeviceOp& op = device.ops[i];
    const int32_t call = index.IssuingCall(device, static_cast<int32_t>(i));
    if (call < 0) continue;
    const int64_t launched = t.calls[call].start_ns;
    auto it = std::upper_bound(steps.begin(), steps.end(), launched,
                               [&](int64_t v, int32_t s) { return v < t.ranges[s].start_ns; });
    if (it == steps.begin()) continue;
    const size_t k = it - steps.begin() - 1;
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

int64_t Overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
  return std::max<int64_t>(0, std::min(a1, b1) - std::max(a0, b0));
}

// Steps [first_step, end_step) of the device; `busy` and `pieces` of its steady state.
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

// Sums idle time per program site; strings are built only for the sites that are reported.
class OffenderTable {
 public:
  OffenderTable(const TimelineIndex& index, const HostStacks& stacks)
      : index_(index), stacks_(stacks) {}

  void Add(const DeviceTimeline& device, const IdlePiece& piece) {
    const Timeline& t = index_.timeline();
    StringId what = StringTable::kEmpty;
    int64_t at = 0;
    uint64_t thread = 0;
    bool with_site = false;
    switch (piece.subcause) {
      case Subcause::kDataLoader:
        if (piece.range >= 0) what = t.ranges[piece.range].name;
        break;
      case Subcause::kHostSync:
      case Subcause::kH2DCopy:
      case Subcause::kDeviceWait:
      case Subcause::kCommWait:
      case Subcause::kCopyWait:
        if (piece.call >= 0) {
          const HostCall& c = t.calls[piece.call];
          std::tie(what, at, thread, with_site) =
              std::make_tuple(c.name, c.start_ns, c.thread, true);
        }
        break;
      case Subcause::kHost:
        // The stretch's sampled stack says what it was; else the work that followed it.
        if (piece.stack >= 0) break;
        if (piece.call >= 0) {
          const HostCall& c = t.calls[piece.call];
          std::tie(at, thread, with_site) = std::make_tuple(c.start_ns, c.thread, true);
        }
        break;
      case Subcause::kLaunchOverhead:
      case Subcause::kKernelGap:
      case Subcause::kUnattributed:
        // The kernel that came late, and the framework op that launched it.
        if (piece.next_op >= 0) {
          const DeviceOp& op = device.ops[piece.next_op];
          what = op.name;
          if (const int32_t launch = index_.IssuingCall(device, piece.next_op); launch >= 0) {
            const HostCall& c = t.calls[launch];
            std::tie(at, thread, with_site) = std::make_tuple(c.start_ns, c.thread, true);
          }
        }
        break;
    }
    Key key{piece.subcause, what, with_site ? SiteId(thread, at) : -1, piece.stack};
    Entry& e = entries_[key];
    e.idle_ns += piece.end_ns - piece.start_ns;
    if (piece.gap != e.last_gap || &device != e.last_device) ++e.count;
    e.last_gap = piece.gap;
    e.last_device = &device;
  }

  std::vector<Offender> Top(int n) const {
    std::vector<Offender> out;
    for (const auto& [key, e] : entries_) {
      Offender o;
      o.subcause = key.subcause;
      o.what = key.subcause == Subcause::kHost
                   ? "host work outside CUDA"
                   : std::string(index_.timeline().strings.Get(key.what));
      if (key.site >= 0) o.site = sites_[key.site];
      if (key.stack >= 0) {
        const StackEvidence& ev = stacks_.evidence(key.stack);
        if (key.what == StringTable::kEmpty) {
          o.what = absl::StrCat(HostActivityName(ev.activity), " (sampled stack)");
        }
        o.site = ev.frame;
      }
      o.idle_ns = e.idle_ns;
      o.count = e.count;
      out.push_back(std::move(o));
    }
    std::sort(out.begin(), out.end(), [](const Offender& a, const Offender& b) {
      return std::tie(b.idle_ns, a.what, a.site, a.subcause) <
             std::tie(a.idle_ns, b.what, b.site, b.subcause);
    });
    if (out.size() > static_cast<size_t>(n)) out.resize(n);
    return out;
  }

 private:
  struct Key {
    Subcause subcause;
    StringId what;
    int32_t site;   // index into sites_, -1 if none
    int32_t stack;  // HostStacks evidence, -1 if none
    bool operator==(const Key&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.subcause, k.what, k.site, k.stack);
    }
  };
  struct Entry {
    int64_t idle_ns = 0;
    int64_t count = 0;
    int32_t last_gap = -1;
    const DeviceTimeline* last_device = nullptr;
  };

  // Sites are interned by the enclosing framework op and Python frame (range ids), so that
  // the strings are built once per distinct site.
  int32_t SiteId(uint64_t thread, int64_t t) {
    const int32_t op = index_.framework_ops().Outermost(thread, t);
    const int32_t frame = index_.python_frames().Innermost(thread, t);
    const Timeline& tl = index_.timeline();
    const std::pair<StringId, StringId> names{op >= 0 ? tl.ranges[op].name : 0,
                                              frame >= 0 ? tl.ranges[frame].name : 0};
    auto [it, inserted] = site_ids_.try_emplace(names, static_cast<int32_t>(sites_.size()));
    if (inserted) sites_.push_back(index_.CallSite(thread, t));
    return it->second;
  }

  const TimelineIndex& index_;
  const HostStacks& stacks_;
  absl::flat_hash_map<Key, Entry> entries_;
  absl::flat_hash_map<std::pair<StringId, StringId>, int32_t> site_ids_;
  std::vector<std::string> sites_;
};

GapRecord ToGapRecord(const TimelineIndex& index, const HostStacks& stacks,
                      const DeviceTimeline& device, const DeviceReport& d, const IdlePiece& piece) {
  const Timeline& t = index.timeline();
  GapRecord g;
  g.rank = d.rank;
  g.device = d.device;
  g.start_ns = piece.start_ns;
  g.end_ns = piece.end_ns;
  g.subcause = piece.subcause;
  if (piece.next_op >= 0) {
    const DeviceOp& op = device.ops[piece.next_op];
    g.next_op = std::string(t.strings.Get(op.name));
    if (const int32_t launch = index.IssuingCall(device, piece.next_op); launch >= 0) {
      g.thread = t.calls[launch].thread;
    }
  }
  if (piece.range >= 0) {
    g.evidence = std::string(t.strings.Get(t.ranges[piece.range].name));
  } else if (piece.call >= 0) {
    const HostCall& c = t.calls[piece.call];
    g.evidence = std::string(t.strings.Get(c.name));
    g.call_site = index.CallSite(c.thread, c.start_ns);
    if (g.thread == 0) g.thread = c.thread;
  }
  if (piece.subcause == Subcause::kHost) {
    g.evidence = absl::StrCat("no CUDA call for ", (piece.end_ns - piece.start_ns) / 1000, " us");
  }
  if (piece.stack >= 0) {
    const StackEvidence& ev = stacks.evidence(piece.stack);
    if (piece.range < 0) {
      g.evidence =
          absl::StrCat(HostActivityName(ev.activity), " (sampled stack): no CUDA call for ",
                       (piece.end_ns - piece.start_ns) / 1000, " us");
    }
    g.call_site = ev.frame;
  }
  return g;
}

// Keeps the n longest pieces seen.
class LongestGaps {
 public:
  explicit LongestGaps(int n) : n_(n) {}
  void Offer(GapRecord g) {
    if (n_ <= 0) return;
    if (static_cast<int>(heap_.size()) < n_) {
      heap_.push_back(std::move(g));
      std::push_heap(heap_.begin(), heap_.end(), Longer);
    } else if (Longer(g, heap_.front())) {
      std::pop_heap(heap_.begin(), heap_.end(), Longer);
      heap_.back() = std::move(g);
      std::push_heap(heap_.begin(), heap_.end(), Longer);
    }
  }
  // Cheap pre-check before building the record's strings.
  bool WouldKeep(int64_t length) const {
    return n_ > 0 && (static_cast<int>(heap_.size()) < n_ ||
                      length > heap_.front().end_ns - heap_.front().start_ns);
  }
  std::vector<GapRecord> Take() {
    std::sort(heap_.begin(), heap_.end(), Longer);
    return std::move(heap_);
  }

 private:
  static bool Longer(const GapRecord& a, const GapRecord& b) {
    const int64_t la = a.end_ns - a.start_ns, lb = b.end_ns - b.start_ns;
    return la != lb ? la > lb : a.start_ns < b.start_ns;
  }
  int n_;
  std::vector<GapRecord> heap_;  // min-heap by length under Longer
};

// rank r's wait in collective k = latest start of k across ranks - r's start, at most the
// kernel's duration. Collectives are matched by their order on each rank and device.
void AddCommWait(std::span<const Timeline* const> ranks, Report* report) {
  if (ranks.size() < 2) return;
  struct Comm {
    int64_t start, end;
  };
  // Device position d of each rank: the i-th used device of each rank is matched.
  size_t used = std::numeric_limits<size_t>::max();
  for (const Timeline* t : ranks) used = std::min(used, t->devices.size());
  for (size_t d = 0; d < used; ++d) {
    std::vector<std::vector<Comm>> per_rank;
    size_t count = std::numeric_limits<size_t>::max();
    for (const Timeline* t : ranks) {
      std::vector<Comm>& comms = per_rank.emplace_back();
      for (const DeviceOp& op : t->devices[d].ops) {
        if (op.kind == OpKind::kKernel && op.communication)
          comms.push_back({op.start_ns, op.end_ns});
      }
      count = std::min(count, comms.size());
    }
    // Each rank's device report, for its steady state: waits in start-up (the first
    // collectives, while ranks initialise at different speeds) are not the headline's.
    std::vector<DeviceReport*> reports(ranks.size(), nullptr);
    for (size_t r = 0; r < ranks.size(); ++r) {
      const int device = ranks[r]->devices[d].device;
      const int rank = ranks[r]->info.rank.value_or(static_cast<int>(r));
      for (DeviceReport& dr : report->devices) {
        if (dr.device == device && dr.rank.value_or(-1) == rank) reports[r] = &dr;
      }
    }
    std::vector<int64_t> wait(ranks.size(), 0);
    for (size_t k = 0; k < count; ++k) {
      int64_t latest = std::numeric_limits<int64_t>::min();
      for (const auto& comms : per_rank) latest = std::max(latest, comms[k].start);
      for (size_t r = 0; r < ranks.size(); ++r) {
        const Comm& c = per_rank[r][k];
        if (reports[r] == nullptr || c.start < reports[r]->steady_start_ns ||
            c.start >= reports[r]->steady_end_ns) {
          continue;
        }
        wait[r] += std::clamp<int64_t>(latest - c.start, 0, c.end - c.start);
      }
    }
    for (size_t r = 0; r < ranks.size(); ++r) {
      if (reports[r] != nullptr) reports[r]->comm_wait_ns = wait[r];
    }
  }
}

// Whether step k lasts more than twice the median of the others, and one_off_min longer. The
// program's first step is then start-up (lazy initialisation, allocator growth, autotuning that
// no other rule named); its last, wind-down (a save or teardown inside the last step range,
// which torch.profiler closes only when it stops).
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

// Where the steps came from, by their names' prefix ("ProfilerStep#3" -> "ProfilerStep").
std::string StepSource(const Timeline& t, const std::vector<int32_t>& steps) {
  if (steps.empty()) return "";
  const absl::string_view name = t.strings.Get(t.ranges[steps.front()].name);
  for (absl::string_view known : {"ProfilerStep", "gpuidle.step", "optimizer.step"}) {
    if (absl::StartsWith(name, known)) return std::string(known);
  }
  return "marker";
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
  if (!(options.advice_min_share >= 0 && options.advice_min_share <= 1)) {
    return absl::InvalidArgumentError("advice_min_share must be within [0, 1]");
  }
  return absl::OkStatus();
}

absl::StatusOr<Report> AnalyzeRanks(std::span<const Timeline* const> ranks,
                                    const AnalysisOptions& options) {
  GPUIDLE_RETURN_IF_ERROR(ValidateOptions(options));
  if (ranks.empty()) return absl::InvalidArgumentError("nothing to analyse");
  Report report;
  report.options = options;
  LongestGaps longest(options.max_gap_records);
  std::vector<Offender> offenders;
  std::set<int> visible, used;
  bool have_window = false;
  // The report lists at most kMaxStepRows steps, shared out among the devices: a small trace
  // of many devices and steps must not make a report of gigabytes.
  size_t device_count = 0;
  for (const Timeline* t : ranks) device_count += t->devices.size();
  const size_t step_rows_per_device = std::max<size_t>(
      kMinStepRowsPerDevice, Report::kMaxStepRows / std::max<size_t>(device_count, 1));
  for (size_t r = 0; r < ranks.size(); ++r) {
    const Timeline& t = *ranks[r];
    std::optional<Interval> window = WindowOf(t);
    const std::string input = ranks.size() > 1 ? absl::StrCat("input ", r + 1) : "the trace";
    if (!window) {
      return absl::FailedPreconditionError(absl::StrCat(input, " holds no host or GPU activity"));
    }
    std::vector<int32_t> steps = StepRanges(t);
    if (options.skip_steps > 0) {
      const auto skip = static_cast<size_t>(options.skip_steps);
      if (steps.size() <= skip) {
        return absl::FailedPreconditionError(absl::StrCat(
            input, " has ", steps.size(), " step(s): skipping ", skip, " leaves none"));
      }
      window->start_ns = std::max(window->start_ns, t.ranges[steps[skip]].start_ns);
      steps.erase(steps.begin(), steps.begin() + static_cast<ptrdiff_t>(skip));
    }
    report.window_start_ns =
        have_window ? std::min(report.window_start_ns, window->start_ns) : window->start_ns;
    report.window_end_ns =
        have_window ? std::max(report.window_end_ns, window->end_ns) : window->end_ns;
    have_window = true;
    if (report.source.empty()) report.source = t.info.source;
    std::optional<int> rank = t.info.rank;
    if (!rank && ranks.size() > 1) rank = static_cast<int>(r);
    if (t.info.dropped_records) {
      report.dropped_records = report.dropped_records.value_or(0) + *t.info.dropped_records;
    }
    report.zero_timestamp_records += t.info.zero_timestamp_records;
    report.record_limit_reached |= t.info.record_limit_reached;
    visible.insert(t.info.visible_devices.begin(), t.info.visible_devices.end());
    for (const std::string& w : t.info.warnings) {
      report.warnings.push_back(ranks.size() > 1 ? absl::StrCat(input, ": ", w) : w);
    }
    if (report.step_source.empty()) report.step_source = StepSource(t, steps);
    // The steady steps: [first_step, end_step).
    const bool warm_up_step = FarLongerThanTheOtherSteps(t, steps, 0, options);
    const size_t first_step = warm_up_step ? 1 : 0;
    const size_t end_step = steps.size() > first_step + 2 &&
                                    FarLongerThanTheOtherSteps(t, steps, steps.size() - 1, options)
                                ? steps.size() - 1
                                : steps.size();

    const TimelineIndex index(t, options);
    HostStacks stacks(t, index.python_frames());
    const std::vector<OneOffSpan> one_off_spans = FindOneOffSpans(index, stacks, options);
    OffenderTable table(index, stacks);
    for (const DeviceTimeline& device : t.devices) {
      DeviceReport d;
      d.rank = rank;
      d.device = device.device;
      d.name = device.name;
      d.window_start_ns = window->start_ns;
      d.window_end_ns = window->end_ns;
      d.window_ns = window->end_ns - window->start_ns;
      for (const DeviceOp& op : device.ops) {
        switch (op.kind) {
          case OpKind::kKernel:
            ++d.kernel_count;
            break;
          case OpKind::kMemcpy:
            ++d.memcpy_count;
            break;
          case OpKind::kMemset:
            ++d.memset_count;
            break;
        }
      }
      const int64_t last_step_end = end_step > first_step ? t.ranges[steps[end_step - 1]].end_ns
                                                          : std::numeric_limits<int64_t>::min();
      const DeviceAttribution a =
          AttributeDevice(index, stacks, device, *window, last_step_end, options);
      // Phases: the steady state runs from the first steady step (the first kernel) to the
      // end of the last step (the last kernel); the rest, and one-off work, is reported apart.
      const std::vector<Interval> step_spans = CutSteps(index, device, steps, *window);
      Interval steady{0, 0};
      Interval warm_up{0, 0};
      if (end_step > first_step) {
        steady = Interval{step_spans[first_step].start_ns, step_spans[end_step - 1].end_ns};
        if (warm_up_step) warm_up = step_spans.front();
      } else {
        steady = SteadyWithoutSteps(a, one_off_spans, stacks, *window);
      }
      absl::flat_hash_set<uint64_t> launching_threads;
      for (size_t i = 0; i < device.ops.size(); ++i) {
        const int32_t call = index.IssuingCall(device, static_cast<int32_t>(i));
        if (call >= 0) launching_threads.insert(t.calls[call].thread);
      }
      const PhasedDevice phased =
          SplitPhases(a, steady, warm_up, one_off_spans, launching_threads, stacks);
      d.steady_start_ns = steady.start_ns;
      d.steady_end_ns = steady.end_ns;
      d.busy_ns = phased.steady_busy_ns;
      d.one_off = phased.one_off;
      for (const IdlePiece& piece : phased.steady) {
        d.idle[piece.subcause] += piece.end_ns - piece.start_ns;
        table.Add(device, piece);
        if (longest.WouldKeep(piece.end_ns - piece.start_ns)) {
          longest.Offer(ToGapRecord(index, stacks, device, d, piece));
        }
      }
      d.idle_ns = d.idle.TotalNs();
      const std::vector<Interval> comm = KernelUnion(device, steady, true);
      d.comm_ns = TotalLength(comm);
      d.exposed_comm_ns = LengthNotCovered(comm, KernelUnion(device, steady, false));
      d.step_count = static_cast<int64_t>(end_step - first_step);
      FillSteps(t, steps, step_spans, first_step, end_step, a.busy, phased.steady, d,
                step_rows_per_device, &report.steps);
      report.steps_not_listed +=
          end_step - first_step - std::min(end_step - first_step, step_rows_per_device);
      report.devices.push_back(std::move(d));
    }
    for (const DeviceTimeline& device : t.devices) used.insert(device.device);
    std::vector<Offender> top = table.Top(options.max_offenders);
    offenders.insert(offenders.end(), top.begin(), top.end());
  }
  // Ranks of one job see one host's devices (or each its own host's, numbered alike): a
  // device is unused when no rank ran work on it.
  // A device that ran work was visible, listed or not (ROCm traces put kernels on device ids
  // that their deviceProperties do not list).
  if (!visible.empty()) visible.insert(used.begin(), used.end());
  report.visible_device_count = static_cast<int>(visible.size());
  for (int v : visible) {
    if (!used.contains(v)) report.unused_devices.push_back(v);
  }
  AddCommWait(ranks, &report);
  std::stable_sort(offenders.begin(), offenders.end(),
                   [](const Offender& a, const Offender& b) { return a.idle_ns > b.idle_ns; });
  if (offenders.size() > static_cast<size_t>(options.max_offenders)) {
    offenders.resize(options.max_offenders);
  }
  report.offenders = std::move(offenders);
  report.longest_gaps = longest.Take();
  if (report.steps_not_listed > 0) {
    report.warnings.push_back(absl::StrCat(
        "the report lists ", report.steps.size(), " of ",
        report.steps.size() + report.steps_not_listed, " steps (the first ", step_rows_per_device,
        " of each device); the figures of each device cover every step"));
  }

  // Lost time: idle, plus collectives spinning while they wait for peers (busy by the
  // definition of utilisation, yet no work).
  IdleBreakdown lost = report.TotalIdle();
  for (const DeviceReport& d : report.devices)
    lost[Subcause::kCommWait] += d.comm_wait_ns.value_or(0);
  const int64_t total_lost = lost.TotalNs();
  for (int i = 0; i < kNumSubcauses && total_lost > 0; ++i) {
    const auto s = static_cast<Subcause>(i);
    const double share = static_cast<double>(lost[s]) / static_cast<double>(total_lost);
    if (lost[s] > 0 && share >= options.advice_min_share) {
      report.advice.push_back(Advice{s, share, std::string(FixFor(s))});
    }
  }
  std::stable_sort(
      report.advice.begin(), report.advice.end(),
      [](const Advice& a, const Advice& b) { return a.share_of_lost_time > b.share_of_lost_time; });
  return report;
}

absl::StatusOr<Report> Analyze(const Timeline& timeline, const AnalysisOptions& options) {
  const Timeline* one[] = {&timeline};
  return AnalyzeRanks(one, options);
}

}  // namespace gpuidle::internal
