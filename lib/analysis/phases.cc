#include "analysis/phases.h"

#include <algorithm>
#include <array>
#include <queue>
#include <set>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "model/cuda_api.h"

namespace gpuidle::internal {
namespace {

// torch.compile's compile-time ranges in a torch.profiler trace: Dynamo's and Inductor's phases,
// recorded as "<phase> (dynamo_timed)" (torch 2.1 on), and the bare names of the main phases.
// Not its run-time ranges ("Torch-Compiled Region", "TorchDynamo Cache Lookup",
// "CompiledFunction"), which every call of compiled code opens.
bool IsCompilerRange(absl::string_view name) {
  if (absl::EndsWith(name, "(dynamo_timed)")) return true;
  for (absl::string_view phase :
       {"entire_frame_compile", "backend_compile", "inductor_compile", "compile_fx_inner",
        "_compile.compile_inner", "OutputGraph.call_user_compiler",
        "create_aot_dispatcher_function", "fx_codegen_and_compile"}) {
    if (absl::StartsWith(name, phase)) return true;
  }
  return false;
}

bool NameSaysCompilation(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  return absl::StrContains(lower, "compile") || absl::StrContains(lower, "dynamo") ||
         absl::StrContains(lower, "inductor") || absl::StrContains(lower, "nvrtc");
}

// Where spans overlap, the more specific kind names the time.
int Priority(OneOffKind k) {
  switch (k) {
    case OneOffKind::kCudaInit:
      return 0;
    case OneOffKind::kCompilation:
      return 1;
    case OneOffKind::kModuleLoad:
      return 2;
    case OneOffKind::kGraphCapture:
      return 3;
    default:
      return 4;
  }
}

// First-call detection: the durations of every occurrence of one operation, in time order.
// Operations are keyed by (name, kernel) for CUDA calls (kernel: what a launch issued, else
// empty) and by (name, kRangeKey) for framework ops and user ranges.
constexpr StringId kRangeKey = static_cast<StringId>(-1);
using OperationKey = std::pair<StringId, StringId>;
struct Occurrences {
  int64_t first_start = 0;
  int64_t first_end = 0;
  uint64_t thread = 0;
  std::vector<int64_t> later;  // durations
};

// When the GPUs ran work whose launch call is not in the trace (launched before the trace
// began): disjoint intervals, in time order.
std::vector<std::pair<int64_t, int64_t>> UnlaunchedWork(const TimelineIndex& index) {
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (const DeviceTimeline& d : index.timeline().devices) {
    for (size_t i = 0; i < d.ops.size(); ++i) {
      if (index.IssuingCall(d, static_cast<int32_t>(i)) < 0) {
        spans.emplace_back(d.ops[i].start_ns, d.ops[i].end_ns);
      }
    }
  }
  std::sort(spans.begin(), spans.end());
  std::vector<std::pair<int64_t, int64_t>> merged;
  for (const auto& s : spans) {
    if (!merged.empty() && s.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, s.second);
    } else {
      merged.push_back(s);
    }
  }
  return merged;
}

int64_t CoveredNs(const std::vector<std::pair<int64_t, int64_t>>& spans, int64_t start,
                  int64_t end) {
  int64_t covered = 0;
  auto it = std::lower_bound(spans.begin(), spans.end(), start,
                             [](const auto& s, int64_t v) { return s.second <= v; });
  for (; it != spans.end() && it->first < end; ++it) {
    covered += std::min(end, it->second) - std::max(start, it->first);
  }
  return covered;
}

// The spans of first occurrences far slower than their operation's later ones; their kind and
// evidence are worked out only for those. A first call that lasted while the GPU ran work
// launched before the trace began waited for that work (a full launch queue, a blocking op):
// the GPU was busy, nothing was set up.
void AddSlowFirstCalls(const TimelineIndex& index,
                       absl::flat_hash_map<OperationKey, Occurrences>& ops,
                       const AnalysisOptions& options, std::vector<OneOffSpan>* out) {
  const Timeline& t = index.timeline();
  std::vector<std::pair<int64_t, int64_t>> unlaunched;
  bool unlaunched_found = false;
  for (auto& [key, occ] : ops) {
    const int64_t first = occ.first_end - occ.first_start;
    if (first < options.one_off_min_ns || occ.later.empty()) continue;
    auto mid = occ.later.begin() + static_cast<ptrdiff_t>(occ.later.size() / 2);
    std::nth_element(occ.later.begin(), mid, occ.later.end());
    if (static_cast<double>(first) < options.first_call_ratio * static_cast<double>(*mid)) continue;
    if (!unlaunched_found) {
      unlaunched = UnlaunchedWork(index);
      unlaunched_found = true;
    }
    if (2 * CoveredNs(unlaunched, occ.first_start, occ.first_end) >= first) continue;
    const absl::string_view name = t.strings.Get(key.first);
    OneOffKind kind = OneOffKind::kFirstCall;
    std::string evidence = absl::StrCat("first ", name);
    if (key.second == kRangeKey) {
      if (NameSaysCompilation(name)) kind = OneOffKind::kCompilation;
    } else if (key.second != StringTable::kEmpty) {  // lazy loading in a kernel's first launch
      kind = OneOffKind::kModuleLoad;
      evidence = absl::StrCat("first launch of ", t.strings.Get(key.second));
    }
    out->push_back(
        OneOffSpan{occ.first_start, occ.first_end, kind, std::move(evidence), occ.thread});
  }
}

// Between a thread's cudaStreamBeginCapture and its cudaStreamEndCapture the launches are
// recorded into a graph, not run: the GPU idles by design. Instantiating and uploading the graph
// is one-off work too. (A runtime call and the driver call inside it begin and end one capture.)
void AddGraphCapture(const StringTable& strings, const HostCall& c,
                     absl::flat_hash_map<uint64_t, std::pair<int64_t, StringId>>& capturing,
                     std::vector<OneOffSpan>* out) {
  const absl::string_view name = strings.Get(c.name);
  const CaptureCall step = CaptureCallOf(name);
  if (step == CaptureCall::kBegin) {
    capturing.try_emplace(c.thread, c.start_ns, c.name);
    return;
  }
  if (step == CaptureCall::kEnd) {
    auto it = capturing.find(c.thread);
    if (it == capturing.end()) return;  // the driver's end inside the runtime's, or no begin
    out->push_back(OneOffSpan{
        it->second.first, c.end_ns, OneOffKind::kGraphCapture,
        absl::StrCat(strings.Get(it->second.second), " to ", name, ": launches recorded, not run"),
        c.thread});
    capturing.erase(it);
    return;
  }
  out->push_back(
      OneOffSpan{c.start_ns, c.end_ns, OneOffKind::kGraphCapture, std::string(name), c.thread});
}

}  // namespace

// Compiler samples at most this far apart, with no other work sampled between, are one
// compilation (XLA autotunes its kernels on the GPU for hundreds of ms between them).
constexpr int64_t kCompilationBridgeNs = 1'000'000'000;

std::vector<OneOffSpan> FindOneOffSpans(const TimelineIndex& index, HostStacks& stacks,
                                        const AnalysisOptions& options) {
  const Timeline& t = index.timeline();
  std::vector<OneOffSpan> spans;
  // The kernel each launch call issued: lazy module loading happens in a kernel's first launch.
  std::vector<StringId> launched(t.calls.size(), StringTable::kEmpty);
  for (const DeviceTimeline& d : t.devices) {
    for (size_t i = 0; i < d.ops.size(); ++i) {
      const int32_t call = index.IssuingCall(d, static_cast<int32_t>(i));
      if (call >= 0 && d.ops[i].kind == OpKind::kKernel) launched[call] = d.ops[i].name;
    }
  }
  absl::flat_hash_map<uint64_t, int64_t> last_end_by_thread;
  absl::flat_hash_map<OperationKey, Occurrences> ops;
  // Per thread, the stream capture in progress: where it began, and the call that began it.
  absl::flat_hash_map<uint64_t, std::pair<int64_t, StringId>> capturing;
  auto occur = [&](OperationKey key, int64_t start, int64_t end, uint64_t thread) {
    auto [it, inserted] = ops.try_emplace(key);
    if (inserted) {
      it->second = Occurrences{start, end, thread, {}};
    } else {
      it->second.later.push_back(end - start);
    }
  };
  for (const HostCall& c : t.calls) {
    const absl::string_view name = t.strings.Get(c.name);
    auto [last, first_of_thread] = last_end_by_thread.try_emplace(c.thread, c.end_ns);
    const int64_t previous_end =
        first_of_thread ? std::numeric_limits<int64_t>::min() : last->second;
    last->second = std::max(last->second, c.end_ns);
    switch (c.category) {
      case CallCategory::kInit:
        spans.push_back(
            OneOffSpan{c.start_ns, c.end_ns, OneOffKind::kCudaInit, std::string(name), c.thread});
        continue;
      case CallCategory::kModuleLoad:
        spans.push_back(
            OneOffSpan{c.start_ns, c.end_ns, OneOffKind::kModuleLoad, std::string(name), c.thread});
        // Code is loaded right after it was compiled (NVRTC, Triton, XLA): the host stretch
        // before the load is the compilation.
        if (previous_end != std::numeric_limits<int64_t>::min() &&
            c.start_ns - previous_end >= options.launch_gap_max_ns) {
          spans.push_back(OneOffSpan{previous_end, c.start_ns, OneOffKind::kCompilation,
                                     absl::StrCat("before ", name), c.thread, true,
                                     LoadsCodeCompiledAheadOfTime(name)});
        }
        continue;
      case CallCategory::kGraphCapture:
        AddGraphCapture(t.strings, c, capturing, &spans);
        continue;
      case CallCategory::kSync:
      case CallCategory::kCopy:
      case CallCategory::kWaitEvent:
        continue;  // they last as long as the GPU work they wait for
      case CallCategory::kLaunch:
      case CallCategory::kAllocator:
      case CallCategory::kOther:
        break;
    }
    if (first_of_thread && c.end_ns - c.start_ns >= options.one_off_min_ns) {
      // A thread's first CUDA call creates the context (or, under a profiler, CUPTI's state).
      spans.push_back(OneOffSpan{c.start_ns, c.end_ns, OneOffKind::kCudaInit,
                                 absl::StrCat("first CUDA call of its thread: ", name), c.thread});
      continue;
    }
    const StringId kernel =
        c.category == CallCategory::kLaunch ? launched[&c - t.calls.data()] : StringTable::kEmpty;
    occur({c.name, kernel}, c.start_ns, c.end_ns, c.thread);
  }
  // Framework ops and user ranges: the outermost of each kind on each thread (a user range
  // around the whole loop must not hide the ops inside it).
  absl::flat_hash_map<std::pair<uint64_t, bool>, int64_t> covered_until;
  for (const Range& r : t.ranges) {
    if (r.kind != RangeKind::kFrameworkOp && r.kind != RangeKind::kUser) continue;
    // The compiler's own ranges name its time outright, however often it compiles, and
    // wherever they nest (the first call of a compiled region compiles inside it).
    if (const absl::string_view name = t.strings.Get(r.name); IsCompilerRange(name)) {
      spans.push_back(
          OneOffSpan{r.start_ns, r.end_ns, OneOffKind::kCompilation, std::string(name), r.thread});
      continue;
    }
    auto [cover, inserted] =
        covered_until.try_emplace(std::make_pair(r.thread, r.kind == RangeKind::kUser), r.end_ns);
    if (!inserted) {
      if (r.start_ns < cover->second) continue;  // nested in an outer op
      cover->second = r.end_ns;
    }
    occur({r.name, kRangeKey}, r.start_ns, r.end_ns, r.thread);
  }
  // A capture the trace ended in: until the thread's last call.
  for (const auto& [thread, begun] : capturing) {
    spans.push_back(OneOffSpan{begun.first, last_end_by_thread[thread], OneOffKind::kGraphCapture,
                               absl::StrCat(t.strings.Get(begun.second),
                                            " to the end of the trace: launches recorded, not run"),
                               thread});
  }
  AddSlowFirstCalls(index, ops, options, &spans);
  // A stretch before a module load is compilation unless its sampled stacks say otherwise;
  // before a load of code compiled ahead of time, only where they show a compiler.
  std::erase_if(spans, [&](const OneOffSpan& s) {
    if (!s.inferred) return false;
    bool sampled = false, compiling = false;
    for (const StackSpan& part : stacks.SpansFor({s.thread}, s.start_ns, s.end_ns)) {
      if (part.evidence < 0) continue;
      sampled = true;
      compiling |= stacks.evidence(part.evidence).activity == HostActivity::kCompilation;
    }
    return s.needs_compiler_stacks ? !compiling : sampled && !compiling;
  });
  // A compiler's own GPU work (autotuning) lies between its sampled stretches.
  for (HostStacks::Episode& e : stacks.CompilationEpisodes(kCompilationBridgeNs)) {
    spans.push_back(
        OneOffSpan{e.start_ns, e.end_ns, OneOffKind::kCompilation, std::move(e.frame), e.thread});
  }
  // Where the capture lost records, a gap may be a kernel that was never recorded: never idle,
  // on every device (thread 0).
  for (const LostRecordSpan& lost : t.info.lost_record_spans) {
    spans.push_back(OneOffSpan{lost.start_ns, lost.end_ns, OneOffKind::kRecordsLost,
                               lost.records > 0 ? absl::StrCat(lost.records, " records lost")
                                                : std::string("records not delivered"),
                               0});
  }
  std::sort(spans.begin(), spans.end(), [](const OneOffSpan& a, const OneOffSpan& b) {
    return std::tie(a.start_ns, a.end_ns) < std::tie(b.start_ns, b.end_ns);
  });
  return spans;
}

namespace {

// The spans flattened into disjoint segments, each named by its most specific span.
struct Segment {
  int64_t start_ns;
  int64_t end_ns;
  int32_t span;
};

std::vector<Segment> Flatten(const std::vector<OneOffSpan>& spans) {
  std::vector<int64_t> cuts;
  for (const OneOffSpan& s : spans) {
    cuts.push_back(s.start_ns);
    cuts.push_back(s.end_ns);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<Segment> out;
  // The spans covering the cut, most specific first (the earliest of equals), and by end: each
  // span enters and leaves once, so nested or overlapping spans cost n log n in all.
  std::set<std::pair<int, int32_t>> active;    // (priority, span)
  using Ending = std::pair<int64_t, int32_t>;  // (end, span)
  std::priority_queue<Ending, std::vector<Ending>, std::greater<>> by_end;
  size_t next = 0;
  for (size_t k = 0; k + 1 < cuts.size(); ++k) {
    const int64_t a = cuts[k], b = cuts[k + 1];
    while (next < spans.size() && spans[next].start_ns <= a) {
      const auto i = static_cast<int32_t>(next++);
      active.emplace(Priority(spans[i].kind), i);
      by_end.emplace(spans[i].end_ns, i);
    }
    while (!by_end.empty() && by_end.top().first <= a) {
      const int32_t i = by_end.top().second;
      by_end.pop();
      active.erase({Priority(spans[i].kind), i});
    }
    if (active.empty()) continue;
    const int32_t best = active.begin()->second;
    if (!out.empty() && out.back().end_ns == a && out.back().span == best) {
      out.back().end_ns = b;
    } else {
      out.push_back(Segment{a, b, best});
    }
  }
  return out;
}

// Sums one-off time per phase and kind; the evidence of the longest stretch names it.
class OneOffTable {
 public:
  void Add(Phase phase, OneOffKind kind, int64_t ns, int64_t stretch, int64_t stretch_ns,
           absl::string_view evidence) {
    if (ns <= 0) return;
    Entry& e = entries_[static_cast<int>(phase)][static_cast<int>(kind)];
    e.ns += ns;
    if (stretch != e.last_stretch) ++e.count;
    e.last_stretch = stretch;
    if (stretch_ns > e.longest) {
      e.longest = stretch_ns;
      e.evidence = std::string(evidence);
    }
  }

  std::vector<OneOffTime> Take() {
    std::vector<OneOffTime> out;
    for (int p = 0; p < kNumPhases; ++p) {
      const size_t first = out.size();
      for (int k = 0; k < kNumOneOffKinds; ++k) {
        Entry& e = entries_[p][k];
        if (e.ns == 0) continue;
        out.push_back(OneOffTime{static_cast<Phase>(p), static_cast<OneOffKind>(k), e.ns, e.count,
                                 std::move(e.evidence)});
      }
      std::stable_sort(out.begin() + static_cast<ptrdiff_t>(first), out.end(),
                       [](const OneOffTime& a, const OneOffTime& b) { return a.ns > b.ns; });
    }
    return out;
  }

 private:
  struct Entry {
    int64_t ns = 0;
    int64_t count = 0;
    int64_t last_stretch = -1;
    int64_t longest = -1;
    std::string evidence;
  };
  std::array<std::array<Entry, kNumOneOffKinds>, kNumPhases> entries_;  // Entry initialises itself
};

// Steady-state idle that one-off work can explain: the host was late. Queued work (kernel_gap,
// device/comm/copy waits), data waits, H2D copies and syncs keep their cause.
bool OneOffCanExplain(Subcause s) {
  return s == Subcause::kHost || s == Subcause::kLaunchOverhead || s == Subcause::kUnattributed;
}

}  // namespace

namespace {

// The flattened segments of some spans, walked in time order.
class SegmentWalk {
 public:
  explicit SegmentWalk(std::vector<OneOffSpan> spans)
      : spans_(std::move(spans)), segments_(Flatten(spans_)) {}

  // Adds the segment boundaries inside (start, end) to cuts; start must not decrease.
  void Cuts(int64_t start, int64_t end, std::vector<int64_t>* cuts) {
    while (first_ < segments_.size() && segments_[first_].end_ns <= start) ++first_;
    for (size_t k = first_; k < segments_.size() && segments_[k].start_ns < end; ++k) {
      if (segments_[k].start_ns > start) cuts->push_back(segments_[k].start_ns);
      if (segments_[k].end_ns < end) cuts->push_back(segments_[k].end_ns);
    }
    at_ = first_;
  }
  // The segment covering t, or nullptr; t must not decrease after Cuts().
  const Segment* Covering(int64_t t) {
    while (at_ < segments_.size() && segments_[at_].end_ns <= t) ++at_;
    return at_ < segments_.size() && segments_[at_].start_ns <= t ? &segments_[at_] : nullptr;
  }
  const OneOffSpan& span(const Segment& s) const { return spans_[s.span]; }
  int64_t span_count() const { return static_cast<int64_t>(spans_.size()); }

 private:
  std::vector<OneOffSpan> spans_;
  std::vector<Segment> segments_;
  size_t first_ = 0, at_ = 0;
};

}  // namespace

PhasedDevice SplitPhases(const DeviceAttribution& attribution, Interval steady, Interval warm_up,
                         const std::vector<OneOffSpan>& spans,
                         const absl::flat_hash_set<uint64_t>& launching_threads,
                         const HostStacks& stacks) {
  PhasedDevice out;
  OneOffTable table;
  // Start-up and wind-down are named by any thread's one-off work; the steady state's idle
  // only by that of the device's own launching threads (another thread's first call or
  // compilation does not idle this GPU).
  SegmentWalk any(spans);
  std::vector<OneOffSpan> own_spans;
  for (const OneOffSpan& s : spans) {
    if (s.thread == 0 || launching_threads.contains(s.thread)) own_spans.push_back(s);
  }
  SegmentWalk own(std::move(own_spans));
  // Stretch ids: spans of `any`, then those of `own`, then gaps.
  const int64_t own_base = any.span_count();
  const int64_t kGapStretchBase = own_base + own.span_count();
  auto phase_of = [&](int64_t t) {
    return t < steady.start_ns ? Phase::kStartUp
                               : (t < steady.end_ns ? Phase::kSteady : Phase::kWindDown);
  };
  // Busy time: start-up and wind-down kernels are part of those phases.
  for (const Interval& b : attribution.busy) {
    const int64_t s0 = std::max(b.start_ns, steady.start_ns);
    const int64_t s1 = std::min(b.end_ns, steady.end_ns);
    out.steady_busy_ns += std::max<int64_t>(0, s1 - s0);
    const int64_t before = std::max<int64_t>(0, std::min(b.end_ns, steady.start_ns) - b.start_ns);
    const int64_t after = std::max<int64_t>(0, b.end_ns - std::max(b.start_ns, steady.end_ns));
    table.Add(Phase::kStartUp, OneOffKind::kGpuBusy, before, -2, before, "");
    table.Add(Phase::kWindDown, OneOffKind::kGpuBusy, after, -3, after, "");
  }
  std::vector<int64_t> cuts;  // reused from piece to piece
  // About one steady piece per piece: growing a vector of a million would copy it ~20 times.
  out.steady.reserve(attribution.pieces.size());
  for (const IdlePiece& piece : attribution.pieces) {
    // Cut the piece at the phase boundaries and at the one-off segments.
    cuts.assign({piece.start_ns, piece.end_ns});
    for (int64_t b : {steady.start_ns, steady.end_ns, warm_up.start_ns}) {
      if (b > piece.start_ns && b < piece.end_ns) cuts.push_back(b);
    }
    any.Cuts(piece.start_ns, piece.end_ns, &cuts);
    own.Cuts(piece.start_ns, piece.end_ns, &cuts);
    if (cuts.size() > 2 || cuts[0] >= cuts[1]) {  // most pieces lie in one phase and segment
      std::sort(cuts.begin(), cuts.end());
      cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    }
    const bool compiling =
        piece.stack >= 0 && stacks.evidence(piece.stack).activity == HostActivity::kCompilation;
    for (size_t c = 0; c + 1 < cuts.size(); ++c) {
      const int64_t a = cuts[c], b = cuts[c + 1];
      const Phase phase = phase_of(a);
      const Segment* any_covering = any.Covering(a);
      const Segment* own_covering = own.Covering(a);
      SegmentWalk& walk = phase == Phase::kSteady ? own : any;
      const Segment* covering = phase == Phase::kSteady ? own_covering : any_covering;
      const bool explain =
          phase != Phase::kSteady || OneOffCanExplain(piece.subcause) ||
          (covering != nullptr && walk.span(*covering).kind == OneOffKind::kRecordsLost);
      if (covering != nullptr && explain) {
        const OneOffSpan& span = walk.span(*covering);
        table.Add(phase, span.kind, b - a, (&walk == &own ? own_base : 0) + covering->span,
                  covering->end_ns - covering->start_ns, span.evidence);
        continue;
      }
      if (compiling && explain) {
        table.Add(phase, OneOffKind::kCompilation, b - a, kGapStretchBase + piece.gap,
                  piece.end_ns - piece.start_ns, stacks.evidence(piece.stack).frame);
        continue;
      }
      if (phase != Phase::kSteady) {
        OneOffKind rest = phase == Phase::kStartUp ? OneOffKind::kSetUp : OneOffKind::kWindDown;
        if (phase == Phase::kStartUp && a >= warm_up.start_ns && a < warm_up.end_ns) {
          rest = OneOffKind::kWarmUpStep;
        }
        // Named by the frame its longest sampled stretch was spent in, where there is one.
        const bool sampled = piece.stack >= 0 && rest == OneOffKind::kSetUp;
        table.Add(phase, rest, b - a, -4 - static_cast<int64_t>(rest),
                  sampled ? piece.end_ns - piece.start_ns : 0,
                  sampled ? absl::string_view(stacks.evidence(piece.stack).frame) : "");
        continue;
      }
      if (!out.steady.empty()) {
        IdlePiece& last = out.steady.back();
        if (last.gap == piece.gap && last.end_ns == a && last.subcause == piece.subcause &&
            last.stack == piece.stack) {
          last.end_ns = b;  // cut only at a boundary that fell inside it: one record again
          continue;
        }
      }
      IdlePiece part = piece;
      part.start_ns = a;
      part.end_ns = b;
      out.steady.push_back(part);
    }
  }
  out.one_off = table.Take();
  return out;
}

}  // namespace gpuidle::internal
