#include "analysis/attribution.h"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "model/cuda_api.h"
#include "model/stable_sort.h"

namespace gpuidle::internal {
namespace {

constexpr int64_t kForever = std::numeric_limits<int64_t>::max();

// Whether the host stretch [since, until) is shorter than limit; an open-ended one (until is
// kForever) never is, and is never subtracted from (times may be negative).
bool StretchShorterThan(int64_t since, int64_t until, int64_t limit) {
  return until != kForever && until - since < limit;
}

// How far from one of NVML's per-process samples another process counts as running kernels.
// The driver samples processes coarsely (hundreds of ms apart for one that runs without pause),
// and the sampler keeps every other sample once its bound is reached.
constexpr int64_t kOtherProcessReachNs = 1'000'000'000;

// When another process ran kernels on `device`, by NVML's samples of it: merged, by start.
std::vector<Interval> OtherProcessSpans(const Timeline& t, int device) {
  std::vector<Interval> spans;
  for (const GpuProcessSeen& p : t.gpu_processes) {
    if (p.device != device) continue;
    for (int64_t at : p.busy_sample_ns) {
      spans.push_back({at - kOtherProcessReachNs, at + kOtherProcessReachNs});
    }
  }
  return MergedIntervals(std::move(spans));
}

// What a host interval says about an idle instant; a lower value wins where they overlap.
enum Evidence : uint8_t {
  kInDataRange,
  kInH2DCopyCall,
  kInSyncCall,       // a sync, or a copy to the host (blocking, like .item())
  kInAllocatorCall,  // cudaMalloc, cudaFree and their kin
  kInOtherCudaCall,
  kInLaunchingOp,      // a framework op that issues GPU work
  kInOtherThreadSync,  // another thread of the process blocked in a sync (JAX/XLA, futures)
  kEvidenceKinds,
};

// Inserts into a set the values that differ from the previous one.
template <typename V>
class InsertOnChange {
 public:
  explicit InsertOnChange(absl::flat_hash_set<V>& set) : set_(set) {}
  void Insert(V v) {
    if (any_ && last_ == v) return;
    set_.insert(v);
    last_ = v;
    any_ = true;
  }

 private:
  absl::flat_hash_set<V>& set_;
  V last_{};
  bool any_ = false;
};

struct HostItem {
  int64_t start_ns;
  int64_t end_ns;
  Evidence evidence;
  int32_t call = -1;
  int32_t range = -1;
};

// Yields, for intervals [u, e) given in increasing order of u, the host items that overlap
// them. Items enter when they start before e and leave once they end before u, so each item
// is touched O(1) times plus once per gap it overlaps.
class HostSweep {
 public:
  explicit HostSweep(const std::vector<HostItem>& items) : items_(items) {}

  void Overlapping(int64_t u, int64_t e, std::vector<int32_t>* out) {
    while (next_ < items_.size() && items_[next_].start_ns < e) {
      active_.push_back(static_cast<int32_t>(next_++));
    }
    std::erase_if(active_, [&](int32_t i) { return items_[i].end_ns <= u; });
    out->clear();
    for (int32_t i : active_) {
      if (items_[i].start_ns < e && items_[i].end_ns > u) out->push_back(i);
    }
  }

 private:
  const std::vector<HostItem>& items_;
  size_t next_ = 0;
  std::vector<int32_t> active_;
};

// Host calls by start, with the prefix maximum of their ends: when the host last left CUDA
// before t, and its first call at or after t.
class CallsByStart {
 public:
  explicit CallsByStart(const Timeline& t) : timeline_(t) {}
  void Add(int32_t call) {
    const int64_t end = timeline_.calls[call].end_ns;
    calls_.push_back(call);
    max_end_.push_back(max_end_.empty() ? end : std::max(max_end_.back(), end));
  }
  int32_t FirstAtOrAfter(int64_t t) const {
    auto it = LowerBound(t);
    return it == calls_.end() ? -1 : *it;
  }
  // The latest end before t of a call that began before t (at most t); `none` if no call did.
  int64_t LastEndBefore(int64_t t, int64_t none) const {
    auto it = LowerBound(t);
    if (it == calls_.begin()) return none;
    return std::min(t, max_end_[it - calls_.begin() - 1]);
  }

 private:
  std::vector<int32_t>::const_iterator LowerBound(int64_t t) const {
    return std::lower_bound(calls_.begin(), calls_.end(), t,
                            [&](int32_t c, int64_t v) { return timeline_.calls[c].start_ns < v; });
  }
  const Timeline& timeline_;
  std::vector<int32_t> calls_;
  std::vector<int64_t> max_end_;
};

class DeviceAttributor {
 public:
  DeviceAttributor(const TimelineIndex& index, HostStacks& stacks, const DeviceTimeline& device,
                   Interval window, int64_t last_step_end_ns, const AnalysisOptions& options)
      : last_step_end_ns_(last_step_end_ns),
        index_(index),
        stacks_(stacks),
        timeline_(index.timeline()),
        device_(device),
        window_(window),
        options_(options) {}

  DeviceAttribution Run();

 private:
  void IndexHost();
  void Emit(int64_t start, int64_t end, Subcause s, int32_t next_op, int32_t call, int32_t range,
            int32_t stack = -1);
  void AttributeGap(int64_t t0, int64_t t1, int32_t next_op);
  void AttributeHostLate(int64_t t0, int64_t e, int32_t next_op);
  void WalkHost(int64_t u, int64_t e, int32_t next_op);
  void AttributeQueued(int64_t q, int64_t t1, int32_t next_op, int32_t launch_call);
  void QueuedWithoutCause(int64_t s, int64_t e, int32_t next_op, int32_t call);
  void AwayFromCuda(int64_t s0, int64_t s1, int32_t next_op, int32_t next_call);
  void InLaunchingOp(int64_t s0, int64_t s1, int32_t next_op, int32_t root);
  const std::vector<int64_t>& OpBoundaries(uint64_t thread);
  int32_t SyncInProgressAt(int64_t t);
  bool launching_threads_busy_ = false;  // at the time SyncInProgressAt last looked
  int32_t ValueReadByAnotherThread(int64_t t0, int64_t e) const;
  int32_t WaitEventBefore(const DeviceOp& op, const HostCall& launch) const;

  const int64_t last_step_end_ns_;
  const TimelineIndex& index_;
  HostStacks& stacks_;
  const Timeline& timeline_;
  const DeviceTimeline& device_;
  const Interval window_;
  const AnalysisOptions& options_;

  absl::flat_hash_set<uint64_t> launching_threads_;
  absl::flat_hash_set<uint64_t> kernel_threads_;  // the launching threads that launched kernels
  absl::flat_hash_set<uint32_t> streams_;         // the streams of this device's work
  CallsByStart kernel_thread_calls_{timeline_};   // their calls
  // Device-to-host copies issued by threads that launch no kernels (device ops, by start): a
  // runtime's transfer thread reading a value for the launching thread (JAX/XLA).
  std::vector<int32_t> reads_by_other_threads_;
  CallsByStart host_calls_{timeline_};  // calls of the launching threads
  // Their calls that wait for the device on the allocator's behalf: synchronous frees, and the
  // syncs right before the allocator released memory.
  absl::flat_hash_set<int32_t> allocator_waits_;
  std::vector<HostItem> host_items_;  // everything the host-late walk looks at
  absl::flat_hash_map<uint64_t, std::vector<int64_t>> op_boundaries_;  // OpBoundaries
  bool op_boundaries_built_ = false;
  std::vector<int32_t> h2d_copies_;        // device ops: H2D memcpy, by start
  std::vector<int64_t> h2d_copy_max_end_;  // prefix maximum of their end times
  // Per H2D copy (index into h2d_copies_): the nearest earlier one that ends later (-1: none);
  // the copies in between end no later than it, so a walk back past it skips them at once.
  std::vector<int32_t> h2d_earlier_ending_later_;
  // Per stream: its other copies and memsets, by start (work queued behind them waits).
  absl::flat_hash_map<uint32_t, std::vector<int32_t>> stream_copies_;
  absl::flat_hash_map<uint32_t, std::vector<int32_t>> wait_calls_by_stream_;
  // While sweeping ops: per stream, the launch start of its latest op and that op (-1 before
  // the first op of the stream has been swept).
  struct StreamState {
    int64_t last_launch_ns = 0;
    int32_t last_op = -1;
  };
  absl::flat_hash_map<uint32_t, StreamState> stream_state_;
  std::vector<int64_t> prev_launch_on_stream_;  // per op: launch start of the previous op on
                                                // its stream (INT64_MIN if none)
  // When another process ran kernels on this device (NVML), merged: queued work that waited
  // then with no cause in this process waited behind it.
  std::vector<Interval> other_process_spans_;
  HostSweep* sweep_ = nullptr;
  // Scratch buffers of WalkHost, reused from gap to gap.
  std::vector<int32_t> scratch_;
  std::vector<int64_t> cuts_;
  std::array<std::vector<int32_t>, kEvidenceKinds> active_by_evidence_;
  DeviceAttribution result_;
  int32_t gap_ = 0;
};

void DeviceAttributor::IndexHost() {
  // Consecutive ops mostly share their thread and stream: one set insert per run of them.
  InsertOnChange<uint64_t> launching(launching_threads_), kernel(kernel_threads_);
  InsertOnChange<uint32_t> streams(streams_);
  std::vector<int32_t> ending_later;  // H2D copies, each ending later than the next
  // One pass over the ops for what needs no other pass first: a million ops are read from
  // memory, not cache, each time.
  for (size_t i = 0; i < device_.ops.size(); ++i) {
    const DeviceOp& op = device_.ops[i];
    if (op.kind == OpKind::kMemcpy && op.copy_kind == CopyKind::kHtoD) {
      while (!ending_later.empty() &&
             device_.ops[h2d_copies_[ending_later.back()]].end_ns <= op.end_ns) {
        ending_later.pop_back();
      }
      h2d_earlier_ending_later_.push_back(ending_later.empty() ? -1 : ending_later.back());
      ending_later.push_back(static_cast<int32_t>(h2d_copies_.size()));
      h2d_copies_.push_back(static_cast<int32_t>(i));
      h2d_copy_max_end_.push_back(
          std::max(h2d_copy_max_end_.empty() ? op.end_ns : h2d_copy_max_end_.back(), op.end_ns));
    } else if (op.kind != OpKind::kKernel && op.stream != kNoStream) {
      stream_copies_[op.stream].push_back(static_cast<int32_t>(i));
    }
    const int32_t call = index_.IssuingCall(device_, static_cast<int32_t>(i));
    if (call < 0) continue;
    launching.Insert(timeline_.calls[call].thread);
    if (op.kind == OpKind::kKernel) kernel.Insert(timeline_.calls[call].thread);
    if (op.stream != kNoStream) streams.Insert(op.stream);
    if (op.kind == OpKind::kMemcpy && op.copy_kind == CopyKind::kDtoH) {
      reads_by_other_threads_.push_back(static_cast<int32_t>(i));  // filtered below
    }
  }
  // Which threads launched kernels is known only now.
  std::erase_if(reads_by_other_threads_, [&](int32_t o) {
    return kernel_threads_.contains(timeline_.calls[index_.IssuingCall(device_, o)].thread);
  });
  // Per launching thread, its latest sync (an index into host_items_): the allocator's own when
  // the thread's next call, right after it, releases memory (expandable segments synchronize,
  // then unmap).
  absl::flat_hash_map<uint64_t, size_t> last_sync;
  // The thread of the previous call, and what it is here (calls of one thread come in runs).
  std::optional<uint64_t> previous_thread;
  bool launching_thread = false, kernel_thread = false;
  for (size_t i = 0; i < timeline_.calls.size(); ++i) {
    const HostCall& c = timeline_.calls[i];
    const auto ci = static_cast<int32_t>(i);
    if (previous_thread != c.thread) {
      previous_thread = c.thread;
      launching_thread = launching_threads_.contains(c.thread);
      kernel_thread = kernel_threads_.contains(c.thread);
    }
    if (!launching_thread) {
      // A thread that launches nothing here but waits for the device: while it is blocked,
      // the launching threads may be waiting for the value it reads.
      const bool blocking =
          c.category == CallCategory::kSync ||
          (c.category == CallCategory::kCopy && index_.CopyKindOfCall(ci) == CopyKind::kDtoH);
      // A stream sync of another device's stream is no evidence here.
      const bool this_device = c.stream == kNoStream || streams_.contains(c.stream);
      if (blocking && this_device && !launching_threads_.empty()) {
        host_items_.push_back(HostItem{c.start_ns, c.end_ns, kInOtherThreadSync, ci, -1});
      }
      continue;
    }
    host_calls_.Add(ci);
    if (kernel_thread) kernel_thread_calls_.Add(ci);
    Evidence ev = kInOtherCudaCall;
    if (c.category == CallCategory::kSync) {
      ev = kInSyncCall;
    } else if (c.category == CallCategory::kCopy) {
      const CopyKind k = index_.CopyKindOfCall(ci);
      if (k == CopyKind::kHtoD) ev = kInH2DCopyCall;
      if (k == CopyKind::kDtoH) ev = kInSyncCall;
    } else if (c.category == CallCategory::kWaitEvent && c.stream != kNoStream) {
      wait_calls_by_stream_[c.stream].push_back(ci);
    } else if (c.category == CallCategory::kAllocator) {
      ev = kInAllocatorCall;
      if (FreeWaitsForDevice(timeline_.strings.Get(c.name))) allocator_waits_.insert(ci);
    }
    if (auto sync = last_sync.find(c.thread); sync != last_sync.end()) {
      HostItem& s = host_items_[sync->second];
      if (ev == kInAllocatorCall && c.start_ns - s.end_ns < options_.launch_gap_max_ns) {
        s.evidence = kInAllocatorCall;
        allocator_waits_.insert(s.call);
      }
      last_sync.erase(sync);
    }
    if (ev == kInSyncCall && c.category == CallCategory::kSync) {
      last_sync[c.thread] = host_items_.size();
    }
    host_items_.push_back(HostItem{c.start_ns, c.end_ns, ev, ci, -1});
  }
  for (int32_t r : index_.data_ranges()) {
    const Range& range = timeline_.ranges[r];
    host_items_.push_back(HostItem{range.start_ns, range.end_ns, kInDataRange, -1, r});
  }
  for (uint64_t thread : launching_threads_) {
    for (int32_t r : index_.framework_ops().Roots(thread)) {
      const Range& range = timeline_.ranges[r];
      if (index_.LaunchedWithin(thread, range.start_ns, range.end_ns)) {
        host_items_.push_back(HostItem{range.start_ns, range.end_ns, kInLaunchingOp, -1, r});
      }
    }
  }
  // Runs sorted already: the calls, the data ranges, each thread's launching ops.
  StableSortByKey(host_items_, [](const HostItem& item) { return item.start_ns; });
}

void DeviceAttributor::Emit(int64_t start, int64_t end, Subcause s, int32_t next_op, int32_t call,
                            int32_t range, int32_t stack) {
  if (end <= start) return;
  std::vector<IdlePiece>& pieces = result_.pieces;
  if (!pieces.empty()) {
    IdlePiece& last = pieces.back();
    if (last.gap == gap_ && last.end_ns == start && last.subcause == s && last.stack == stack) {
      last.end_ns = end;  // one record per cause and gap; the first evidence stays
      return;
    }
  }
  pieces.push_back(IdlePiece{start, end, s, gap_, next_op, call, range, stack});
}

// The blocking call (sync, copy to the host, or a free that waits for the device) a launching
// thread was in at time t, the longest if several; else another thread's, but only while the
// launching threads themselves were idle (in no CUDA call, data range or launching op). -1 if
// none. Also notes whether they were busy (launching_threads_busy_). Times t must not decrease
// from call to call (the sweep).
int32_t DeviceAttributor::SyncInProgressAt(int64_t t) {
  sweep_->Overlapping(t, t + 1, &scratch_);
  int32_t own = -1, other = -1;
  int64_t own_len = -1, other_len = -1;
  launching_threads_busy_ = false;
  for (int32_t i : scratch_) {
    const HostItem& item = host_items_[i];
    const int64_t len = item.end_ns - item.start_ns;
    const bool blocking = item.evidence == kInSyncCall || (item.evidence == kInAllocatorCall &&
                                                           allocator_waits_.contains(item.call));
    if (blocking && item.call >= 0) {
      if (len > own_len) std::tie(own, own_len) = std::make_pair(item.call, len);
    } else if (item.evidence == kInOtherThreadSync) {
      if (len > other_len) std::tie(other, other_len) = std::make_pair(item.call, len);
    } else {
      launching_threads_busy_ = true;
    }
  }
  if (own >= 0) return own;
  return launching_threads_busy_ ? -1 : other;
}

// A device-to-host copy that a thread launching no kernels issued as the GPU ran dry at t0 and
// that finished inside [t0, e): the value the launching thread was waiting for, read by a
// runtime's own thread (JAX/XLA's transfer threads, a future's worker). The copy's index, or -1.
int32_t DeviceAttributor::ValueReadByAnotherThread(int64_t t0, int64_t e) const {
  auto it = std::lower_bound(reads_by_other_threads_.begin(), reads_by_other_threads_.end(),
                             t0 - options_.dispatch_latency_max_ns,
                             [&](int32_t o, int64_t v) { return device_.ops[o].start_ns < v; });
  for (; it != reads_by_other_threads_.end(); ++it) {
    const DeviceOp& op = device_.ops[*it];
    if (op.start_ns >= std::min(e, t0 + options_.launch_gap_max_ns)) break;
    if (op.end_ns >= t0 && op.end_ns <= e) return *it;
  }
  return -1;
}

void DeviceAttributor::AttributeGap(int64_t t0, int64_t t1, int32_t next_op) {
  ++gap_;
  if (launching_threads_.empty()) {
    Emit(t0, t1, Subcause::kUnattributed, next_op, -1, -1);
    return;
  }
  if (next_op < 0) {  // the end of the window: nothing was queued
    AttributeHostLate(t0, t1, next_op);
    return;
  }
  const int32_t launch = index_.IssuingCall(device_, next_op);
  if (launch < 0) {
    Emit(t0, t1, Subcause::kUnattributed, next_op, -1, -1);
    return;
  }
  // Until its launch call returned, the host was late; after that the work was queued.
  const int64_t q = std::clamp(timeline_.calls[launch].end_ns, t0, t1);
  AttributeHostLate(t0, q, next_op);
  AttributeQueued(q, t1, next_op, launch);
}

void DeviceAttributor::AttributeHostLate(int64_t t0, int64_t e, int32_t next_op) {
  if (e <= t0) return;
  // Why did the queue run dry? If a launching thread was blocked in a sync when it did, the
  // host work after the sync could have overlapped that much GPU work.
  const int32_t sync = SyncInProgressAt(t0);
  // Work followed the gap, or would have: a step loop cut off by the end of the trace.
  const bool work_follows = next_op >= 0 || t0 < last_step_end_ns_;
  int64_t u = t0;
  if (sync >= 0) {
    const HostCall& s = timeline_.calls[sync];
    // Without the sync, the host work after it would have run that much earlier, overlapping
    // GPU work, and the next op would have come that much sooner. When nothing follows, only
    // the time blocked inside the gap counts.
    u = work_follows ? std::min(e, t0 + (s.end_ns - s.start_ns)) : std::min(e, s.end_ns);
    const bool allocator = allocator_waits_.contains(sync);
    Emit(t0, u, allocator ? Subcause::kAllocator : Subcause::kHostSync, next_op, sync, -1);
  } else if (const int32_t read = launching_threads_busy_ ? -1 : ValueReadByAnotherThread(t0, e);
             read >= 0 && work_follows) {
    // The launching threads waited, outside CUDA, for a value another thread copied to the
    // host: blocked from their last CUDA call until the copy finished.
    const int64_t blocked =
        device_.ops[read].end_ns - kernel_thread_calls_.LastEndBefore(t0, window_.start_ns);
    u = std::min(e, t0 + std::max<int64_t>(0, blocked));
    Emit(t0, u, Subcause::kHostSync, next_op, index_.IssuingCall(device_, read), -1);
  }
  WalkHost(u, e, next_op);
}

// The rest goes by what the launching threads were doing, instant by instant.
void DeviceAttributor::WalkHost(int64_t u, int64_t e, int32_t next_op) {
  if (e <= u) return;
  sweep_->Overlapping(u, e, &scratch_);
  // Elementary segments between the boundaries of the overlapping items.
  std::vector<int64_t>& cuts = cuts_;
  cuts.assign({u, e});
  for (int32_t i : scratch_) {
    const HostItem& it = host_items_[i];
    if (it.start_ns > u) cuts.push_back(it.start_ns);
    if (it.end_ns < e) cuts.push_back(it.end_ns);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  // Items sorted by start: a pointer adds them as segments begin; small active lists per
  // evidence kind drop them as they end.
  std::sort(scratch_.begin(), scratch_.end(), [&](int32_t a, int32_t b) {
    return host_items_[a].start_ns < host_items_[b].start_ns;
  });
  std::array<std::vector<int32_t>, kEvidenceKinds>& active = active_by_evidence_;
  for (auto& list : active) list.clear();
  size_t next_item = 0;
  for (size_t k = 0; k + 1 < cuts.size(); ++k) {
    const int64_t s0 = cuts[k], s1 = cuts[k + 1];
    while (next_item < scratch_.size() && host_items_[scratch_[next_item]].start_ns <= s0) {
      const int32_t i = scratch_[next_item++];
      active[host_items_[i].evidence].push_back(i);
    }
    for (auto& list : active) {
      std::erase_if(list, [&](int32_t i) { return host_items_[i].end_ns <= s0; });
    }
    int kind = 0;
    while (kind < kEvidenceKinds && active[kind].empty()) ++kind;
    if (kind == kInDataRange && !stacks_.empty()) {
      // What the input pipeline was doing, where its stack was sampled.
      const HostItem& it = host_items_[active[kind].back()];
      const int32_t stack = stacks_.EvidenceFor(launching_threads_, s0, s1);
      Emit(s0, s1, Subcause::kDataLoader, next_op, it.call, it.range, stack);
      continue;
    }
    if (kind == kInLaunchingOp) {
      const HostItem& it = host_items_[active[kind].back()];
      InLaunchingOp(s0, s1, next_op, it.range);
      continue;
    }
    if (kind < kEvidenceKinds) {
      const HostItem& it = host_items_[active[kind].back()];
      static constexpr std::array<Subcause, kEvidenceKinds> kSubcause = {
          Subcause::kDataLoader, Subcause::kH2DCopy,        Subcause::kHostSync,
          Subcause::kAllocator,  Subcause::kLaunchOverhead, Subcause::kLaunchOverhead,
          Subcause::kHostSync};
      Emit(s0, s1, kSubcause[kind], next_op, it.call, it.range);
      continue;
    }
    // Outside any CUDA call, marker or launching op: how long was the host away from CUDA?
    const int32_t next_call = host_calls_.FirstAtOrAfter(s1);
    const int64_t away_until = next_call >= 0 ? timeline_.calls[next_call].start_ns : kForever;
    const int64_t away_since = host_calls_.LastEndBefore(s0, window_.start_ns);
    const bool short_stretch =
        StretchShorterThan(away_since, away_until, options_.launch_gap_max_ns);
    if (short_stretch) {
      Emit(s0, s1, Subcause::kLaunchOverhead, next_op, next_call, -1);
      continue;
    }
    AwayFromCuda(s0, s1, next_op, next_call);
  }
}

// A long stretch away from CUDA: its Python stacks, where sampled, say what it was, part by
// part.
void DeviceAttributor::AwayFromCuda(int64_t s0, int64_t s1, int32_t next_op, int32_t next_call) {
  for (const StackSpan& part : stacks_.SpansFor(launching_threads_, s0, s1)) {
    const bool input = part.evidence >= 0 &&
                       stacks_.evidence(part.evidence).activity == HostActivity::kInputPipeline;
    Emit(part.start_ns, part.end_ns, input ? Subcause::kDataLoader : Subcause::kHost, next_op,
         next_call, -1, part.evidence);
  }
}

// Inside a framework op that launches GPU work the host is issuing it, however long the op,
// but not in a long stretch with neither a CUDA call nor a nested op's start or end (a
// compiled region's guards or Python, a module's CPU work): that is host work as outside ops.
void DeviceAttributor::InLaunchingOp(int64_t s0, int64_t s1, int32_t next_op, int32_t root) {
  const int32_t next_call = host_calls_.FirstAtOrAfter(s1);
  const int64_t call_after = next_call >= 0 ? timeline_.calls[next_call].start_ns : kForever;
  const int64_t call_before = host_calls_.LastEndBefore(s0, window_.start_ns);
  if (StretchShorterThan(call_before, call_after, options_.launch_gap_max_ns)) {
    Emit(s0, s1, Subcause::kLaunchOverhead, next_op, -1, root);
    return;
  }
  const std::vector<int64_t>& marks = OpBoundaries(timeline_.ranges[root].thread);
  auto it = std::upper_bound(marks.begin(), marks.end(), s0);
  int64_t from = s0;
  int64_t mark_before = it == marks.begin() ? call_before : *(it - 1);
  while (from < s1) {
    const int64_t to = it != marks.end() ? std::min(*it, s1) : s1;
    const int64_t mark_after = it != marks.end() ? *it : kForever;
    const int64_t since = std::max(call_before, mark_before);
    const int64_t until = std::min(call_after, mark_after);
    if (StretchShorterThan(since, until, options_.launch_gap_max_ns)) {
      Emit(from, to, Subcause::kLaunchOverhead, next_op, -1, root);
    } else {
      AwayFromCuda(from, to, next_op, next_call);
    }
    from = to;
    if (it != marks.end()) mark_before = *it++;
  }
}

// The starts and ends of the framework ops of a launching thread, in order (built at first
// use: most programs never need them).
const std::vector<int64_t>& DeviceAttributor::OpBoundaries(uint64_t thread) {
  if (!op_boundaries_built_) {
    // Every thread's at once: one pass over the ranges, not one per thread.
    op_boundaries_built_ = true;
    for (const Range& r : timeline_.ranges) {
      if (r.kind != RangeKind::kFrameworkOp) continue;
      std::vector<int64_t>& b = op_boundaries_[r.thread];
      b.push_back(r.start_ns);
      b.push_back(r.end_ns);
    }
    for (auto& [t, b] : op_boundaries_) std::sort(b.begin(), b.end());
  }
  static const std::vector<int64_t> kNone;
  const auto it = op_boundaries_.find(thread);
  return it == op_boundaries_.end() ? kNone : it->second;
}

// Queued work waiting on a stream-wait-event issued on its stream after the previous op there.
int32_t DeviceAttributor::WaitEventBefore(const DeviceOp& op, const HostCall& launch) const {
  auto it = wait_calls_by_stream_.find(op.stream);
  if (it == wait_calls_by_stream_.end()) return -1;
  const std::vector<int32_t>& waits = it->second;
  auto w = std::upper_bound(waits.begin(), waits.end(), launch.start_ns,
                            [&](int64_t v, int32_t c) { return v < timeline_.calls[c].start_ns; });
  if (w == waits.begin()) return -1;
  return *(w - 1);
}

void DeviceAttributor::AttributeQueued(int64_t q, int64_t t1, int32_t next_op, int32_t launch) {
  if (t1 <= q) return;
  const DeviceOp& op = device_.ops[next_op];
  // Input still being copied in while the work waits for it.
  int64_t cursor = q;
  auto first = std::lower_bound(h2d_copies_.begin(), h2d_copies_.end(), t1,
                                [&](int32_t c, int64_t v) { return device_.ops[c].start_ns < v; });
  std::vector<int32_t> covering;
  // Back from the last copy that started before t1, while an earlier one still ends after q;
  // past a copy that ends by q, straight to the nearest earlier one that ends later (one long
  // copy then many short ones costs a step, not a walk over the short ones).
  for (auto i = first - h2d_copies_.begin() - 1; i >= 0 && h2d_copy_max_end_[i] > q;) {
    if (device_.ops[h2d_copies_[i]].end_ns > q) {
      covering.push_back(h2d_copies_[i]);
      --i;
    } else {
      i = h2d_earlier_ending_later_[i];
    }
  }
  std::reverse(covering.begin(), covering.end());
  // Copies and memsets ahead of the op on its own stream: stream order makes it wait for them.
  // Ops of one stream run one after another, so their ends grow with their starts: walk back
  // from the last copy that started before the op, while copies still end after q.
  std::vector<int32_t> same_stream;
  if (auto it = stream_copies_.find(op.stream); it != stream_copies_.end()) {
    const std::vector<int32_t>& copies = it->second;
    const int64_t latest_start = std::min(op.start_ns, t1 - 1);
    auto last = std::upper_bound(copies.begin(), copies.end(), latest_start,
                                 [&](int64_t v, int32_t c) { return v < device_.ops[c].start_ns; });
    for (auto c = last; c != copies.begin();) {
      --c;
      if (device_.ops[*c].end_ns <= q) break;
      same_stream.push_back(*c);
    }
    std::reverse(same_stream.begin(), same_stream.end());
  }
  Subcause rest = Subcause::kKernelGap;
  int32_t rest_call = launch;
  const int32_t wait = WaitEventBefore(op, timeline_.calls[launch]);
  if (wait >= 0) {
    const HostCall& w = timeline_.calls[wait];
    const bool after_previous_op = w.start_ns >= prev_launch_on_stream_[next_op];
    if (after_previous_op) {
      rest = Subcause::kDeviceWait;
      rest_call = wait;
      auto peer = stream_state_.find(w.peer_stream);
      if (w.peer_stream != kNoStream && peer != stream_state_.end() && peer->second.last_op >= 0 &&
          device_.ops[peer->second.last_op].communication) {
        rest = Subcause::kCommWait;
      }
    }
  }
  // Dispatch latency is microseconds; a longer wait without evidence is not launch-bound.
  int64_t dispatch_budget = options_.dispatch_latency_max_ns;
  auto emit_rest = [&](int64_t s, int64_t e) {
    if (rest != Subcause::kKernelGap) {
      Emit(s, e, rest, next_op, rest_call, -1);
      return;
    }
    const int64_t split = std::min(e, s + std::max<int64_t>(dispatch_budget, 0));
    Emit(s, split, Subcause::kKernelGap, next_op, rest_call, -1);
    QueuedWithoutCause(split, e, next_op, rest_call);
    dispatch_budget -= split - s;
  };
  // H2D copies (any stream) are input arriving; other copies on the stream hold it back.
  std::vector<std::pair<int32_t, Subcause>> blockers;
  for (int32_t c : covering) blockers.emplace_back(c, Subcause::kH2DCopy);
  for (int32_t c : same_stream) blockers.emplace_back(c, Subcause::kCopyWait);
  std::stable_sort(blockers.begin(), blockers.end(), [&](const auto& a, const auto& b) {
    return device_.ops[a.first].start_ns < device_.ops[b.first].start_ns;
  });
  for (const auto& [c, subcause] : blockers) {
    const DeviceOp& copy = device_.ops[c];
    const int64_t s = std::max(cursor, copy.start_ns);
    const int64_t e = std::min(t1, copy.end_ns);
    if (e <= cursor) continue;
    emit_rest(cursor, s);
    Emit(s, e, subcause, next_op, index_.IssuingCall(device_, c), -1);
    cursor = e;
  }
  emit_rest(cursor, t1);
}

// Queued work that waited past its dispatch latency with nothing in this process holding it
// back: behind another process's kernels where NVML saw one run then (contexts take turns on
// the GPU), unattributed elsewhere.
void DeviceAttributor::QueuedWithoutCause(int64_t s, int64_t e, int32_t next_op, int32_t call) {
  auto span = std::upper_bound(other_process_spans_.begin(), other_process_spans_.end(), s,
                               [](int64_t v, const Interval& i) { return v < i.end_ns; });
  for (; span != other_process_spans_.end() && span->start_ns < e && s < e; ++span) {
    const int64_t from = std::max(s, span->start_ns), to = std::min(e, span->end_ns);
    Emit(s, from, Subcause::kUnattributed, next_op, call, -1);
    Emit(from, to, Subcause::kOtherProcess, next_op, call, -1);
    s = to;
  }
  Emit(s, e, Subcause::kUnattributed, next_op, call, -1);
}

DeviceAttribution DeviceAttributor::Run() {
  IndexHost();
  other_process_spans_ = OtherProcessSpans(timeline_, device_.device);
  HostSweep sweep(host_items_);
  sweep_ = &sweep;
  int64_t busy_end = window_.start_ns;  // end of the busy time seen so far
  prev_launch_on_stream_.assign(device_.ops.size(), std::numeric_limits<int64_t>::min());
  // Launch-bound work idles the GPU before about every op; pages reserved and not filled cost
  // nothing.
  result_.pieces.reserve(device_.ops.size() + 1);
  // The state of the current op's stream: looked up once per run of ops on one stream. Only
  // this lookup inserts, so the pointer stays valid until the next one.
  StreamState* stream = nullptr;
  uint32_t stream_id = kNoStream;
  for (size_t i = 0; i < device_.ops.size(); ++i) {
    const DeviceOp& op = device_.ops[i];
    const auto oi = static_cast<int32_t>(i);
    ++result_.op_counts[static_cast<size_t>(op.kind)];
    if (op.kind == OpKind::kKernel && op.communication) ++result_.communication_kernels;
    if (stream == nullptr || op.stream != stream_id) {
      stream = &stream_state_.try_emplace(op.stream).first->second;
      stream_id = op.stream;
    }
    if (stream->last_op >= 0) prev_launch_on_stream_[oi] = stream->last_launch_ns;
    const int32_t call = index_.IssuingCall(device_, oi);
    stream->last_launch_ns = call >= 0 ? timeline_.calls[call].start_ns : op.start_ns;
    if (op.kind == OpKind::kKernel) {
      const int64_t start = std::max(op.start_ns, window_.start_ns);
      const int64_t end = std::min(op.end_ns, window_.end_ns);
      if (end > start) {
        if (start > busy_end) {
          AttributeGap(busy_end, start, oi);
          result_.busy.push_back({start, end});
          busy_end = end;
        } else if (end > busy_end) {
          if (result_.busy.empty()) {
            result_.busy.push_back({start, end});
          } else {
            result_.busy.back().end_ns = end;
          }
          busy_end = end;
        }
      }
    }
    stream->last_op = oi;
  }
  if (busy_end < window_.end_ns) AttributeGap(busy_end, window_.end_ns, -1);
  for (const Interval& b : result_.busy) result_.busy_ns += b.end_ns - b.start_ns;
  result_.launching_threads = std::move(launching_threads_);
  return std::move(result_);
}

}  // namespace

std::vector<Interval> MergedIntervals(std::vector<Interval> v) {
  std::sort(v.begin(), v.end(),
            [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; });
  std::vector<Interval> out;
  for (const Interval& i : v) {
    if (i.end_ns <= i.start_ns) continue;
    if (!out.empty() && i.start_ns <= out.back().end_ns) {
      out.back().end_ns = std::max(out.back().end_ns, i.end_ns);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

DeviceAttribution AttributeDevice(const TimelineIndex& index, HostStacks& stacks,
                                  const DeviceTimeline& device, Interval window,
                                  int64_t last_step_end_ns, const AnalysisOptions& options) {
  return DeviceAttributor(index, stacks, device, window, last_step_end_ns, options).Run();
}

}  // namespace gpuidle::internal
