#include "analysis/advice.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/time_units.h"
#include "model/cuda_api.h"

namespace gpuidle::internal {

absl::string_view FixFor(Subcause s) {
  switch (s) {
    case Subcause::kDataLoader:
      return "the input pipeline cannot keep up: raise DataLoader num_workers (try 2, 4, 8 "
             "against free CPU cores), keep pin_memory=True, persistent_workers=True and "
             "prefetch_factor>=2; move decoding/augmentation out of the training process or "
             "onto the GPU";
    case Subcause::kH2DCopy:
      return "compute waits for host-to-device copies: put batches in pinned memory "
             "(pin_memory=True) and copy with .to(device, non_blocking=True); prefetch the next "
             "batch on a side stream so the copy overlaps compute";
    case Subcause::kHost:
      return "the host ran long stretches of work outside CUDA (unmarked data preparation, "
             "logging, checkpointing, Python overhead): find it with a CPU profiler or mark it "
             "with gpuidle.data()/NVTX, and move it to DataLoader workers or a background thread";
    case Subcause::kLaunchOverhead:
      return "kernels finish faster than the host issues them: raise the batch size (mixed "
             "precision frees memory for it), fuse small ops (torch.compile), capture the step "
             "in a CUDA graph (torch.compile mode=\"reduce-overhead\", torch.cuda.graphs), use "
             "fused/foreach optimizers";
    case Subcause::kKernelGap:
      return "work was queued but every tiny kernel still paid its dispatch latency: fuse "
             "kernels or replay them as a CUDA graph";
    case Subcause::kHostSync:
      return "the host waited for the GPU to drain, then ran work that could have overlapped "
             "it: drop per-step .item()/.cpu()/print(tensor)/torch.cuda.synchronize(), keep "
             "metrics on the GPU and read them every N steps, copy results with "
             "non_blocking=True into pinned memory";
    case Subcause::kDeviceWait:
      return "queued work waited on an event of another stream: check cross-stream "
             "dependencies (wait_stream, events) and balance work between streams";
    case Subcause::kCommWait:
      return "collectives waited for peer ranks: find the straggler (its input pipeline, "
             "its load, its clocks), balance work across ranks, check the interconnect "
             "(nvidia-smi topo -m: NV# is NVLink, PIX/PHB is PCIe); where no rank is late, "
             "overlap communication with compute (DDP bucket_cap_mb: smaller buckets start "
             "sooner; gradient_as_bucket_view=True)";
    case Subcause::kCopyWait:
      return "kernels waited behind copies or memsets on their own stream: issue copies on a "
             "side stream (with an event for the consumer) so they overlap compute, and drop "
             "needless device-to-device copies (.contiguous(), .clone(), torch.cat of big "
             "tensors)";
    case Subcause::kAllocator:
      return "the host was allocating or freeing device memory (a free first waits for the GPU "
             "to drain): stop calling torch.cuda.empty_cache() in the loop, reuse buffers and "
             "keep tensor shapes fixed so the caching allocator serves them, and set "
             "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation";
    case Subcause::kRequestsWaiting:
      return "requests waited to be taken up while the GPU idled: serve several at once: dynamic "
             "batching (take what has queued, up to a maximum batch, waiting at most a few ms "
             "for more), continuous batching for generation (vLLM, TGI, TensorRT-LLM add and "
             "drop requests at every decode step), and CUDA graphs for the decode steps";
    case Subcause::kOtherProcess:
      return "the GPU is shared: this job's work waited in its queue while another process's "
             "kernels held the GPU (contexts take turns). It is the other job's time, not this "
             "job's code: run the jobs on separate GPUs (CUDA_VISIBLE_DEVICES, the scheduler's "
             "exclusive-process mode), or run them under MPS to let their kernels overlap";
    case Subcause::kUnattributed:
      break;
  }
  return "the trace does not show why: the launch calls, or the work the GPU waited on, fell "
         "outside it (launched before profiling began, another process on the GPU); profile a "
         "longer window with CPU and CUDA activities";
}

namespace {

// Unattributed time is of two kinds (docs/ANALYSIS.md, rules 1 and 5): the launch call of the
// kernel that ended the gap is not in the trace, or it is, had returned, and the queued work
// still started late. The longest gaps say which dominates (a gap record names the launching
// thread only where the call is known).
std::string UnattributedFix(const Report& report) {
  int64_t queued_ns = 0, no_call_ns = 0;
  for (const GapRecord& g : report.longest_gaps) {
    if (g.subcause != Subcause::kUnattributed || g.next_op.empty()) continue;
    (g.thread != 0 ? queued_ns : no_call_ns) += g.end_ns - g.start_ns;
  }
  if (queued_ns <= no_call_ns) return std::string(FixFor(Subcause::kUnattributed));
  return "the launch calls are in the trace and had returned, yet the queued work started late "
         "with nothing in the trace holding it back: another process or MPS client on the "
         "GPU, work queued before the trace began ahead of it, or waits the trace did not "
         "record (events, streams, host functions); check nvidia-smi for other processes and "
         "record with CPU and CUDA activities and no filter";
}

// Busy this much of the time requests were in flight, a serving GPU needs replicas more than
// batches.
constexpr double kBusyWhileDemandForReplicas = 0.8;

// A run's own pinned host-to-device copies give the link's speed once they move this much.
constexpr int64_t kMinObservedPinnedBytes = 16 << 20;

// Pinned host-to-device bandwidth where the run shows none of its own, in bytes per ns (GB/s):
// PCIe 5.0 x16 (Hopper and Blackwell boards) moves about 50 GB/s in practice, PCIe 4.0 x16
// about 25 GB/s.
double AssumedPinnedBytesPerNs(absl::string_view device_name) {
  for (absl::string_view gen5 : {"H100", "H200", "H800", "H20", "B100", "B200", "B300"}) {
    if (absl::StrContains(device_name, gen5)) return 50.0;
  }
  return 25.0;
}

struct PinnedBandwidth {
  double bytes_per_ns = 0;
  bool observed = false;  // measured on this run's pinned copies, not assumed
};

PinnedBandwidth PinnedBytesPerNs(const DeviceReport& d) {
  if (d.h2d_pinned.bytes >= kMinObservedPinnedBytes && d.h2d_pinned.ns > 0) {
    return {static_cast<double>(d.h2d_pinned.bytes) / static_cast<double>(d.h2d_pinned.ns), true};
  }
  return {AssumedPinnedBytesPerNs(d.name), false};
}

int64_t LostOn(const DeviceReport& d, Subcause s) {
  return s == Subcause::kCommWait ? d.comm_wait_ns.value_or(0) : d.idle[s];
}

// The steady-state time the fix for `s` recovers on `d` (docs/ANALYSIS.md, "Predicted gains").
// Each cause's idle time is by definition what its evidence cost the GPU (the sync's share of
// a gap, the DataLoader wait), so removing the cause recovers it, with two exceptions: a copy
// from pageable memory still takes the time the same bytes need from pinned memory, and time
// without evidence predicts nothing.
int64_t GainOn(const DeviceReport& d, Subcause s) {
  const int64_t lost = LostOn(d, s);
  if (s == Subcause::kUnattributed || lost <= 0) return 0;
  if (s == Subcause::kH2DCopy) {
    if (d.h2d_pageable.bytes > 0) {
      const double pinned_ns =
          static_cast<double>(d.h2d_pageable.bytes) / PinnedBytesPerNs(d).bytes_per_ns;
      const auto saved = static_cast<int64_t>(static_cast<double>(d.h2d_pageable.ns) - pinned_ns);
      return std::clamp<int64_t>(saved, 0, lost);
    }
    // Already pinned: a prefetch on a side stream hides the copy behind as much compute as
    // there is.
    return std::min(lost, d.busy_ns);
  }
  return lost;
}

// The device the fix helps most per step, and its numbers per step.
struct StepView {
  const DeviceReport* device = nullptr;
  double steps = 0;
  double gain_ns = 0;  // per step
  double step_ns = 0;  // mean step time
  double Per(int64_t total) const { return static_cast<double>(total) / steps; }
};

StepView BestPerStep(const Report& report, Subcause s) {
  StepView best;
  for (const DeviceReport& d : report.devices) {
    if (d.step_count <= 0) continue;
    StepView v{&d, static_cast<double>(d.step_count), 0, 0};
    v.gain_ns = v.Per(GainOn(d, s));
    v.step_ns = v.Per(d.PhaseNs(Phase::kSteady));
    if (best.device == nullptr || v.gain_ns > best.gain_ns) best = v;
  }
  return best;
}

// The device that lost most to `s` (for runs without steps).
const DeviceReport* MostLost(const Report& report, Subcause s) {
  const DeviceReport* most = nullptr;
  for (const DeviceReport& d : report.devices) {
    if (most == nullptr || LostOn(d, s) > LostOn(*most, s)) most = &d;
  }
  return most;
}

// The offender of `s` that cost most, if any.
const Offender* TopOffender(const Report& report, Subcause s) {
  const Offender* top = nullptr;
  for (const Offender& o : report.offenders) {
    if (o.subcause == s && (top == nullptr || o.idle_ns > top->idle_ns)) top = &o;
  }
  return top;
}

// "at train.py:42 in step" where the offender names a site.
std::string AtSite(const Offender* o) {
  return o != nullptr && !o->site.empty() ? absl::StrCat(" at ", o->site) : "";
}

// The program's own place in a call site ("step() in train.py (def at line 21)" of "aten::item
// at step() in ..."): what follows the framework op, whose name holds no space; "" where the
// site is the op alone (one word).
absl::string_view PlaceInProgram(absl::string_view site) {
  const size_t at = site.find(" at ");
  if (at != absl::string_view::npos && site.substr(0, at).find(' ') == absl::string_view::npos) {
    return site.substr(at + 4);
  }
  return absl::StrContains(site, ' ') ? site : "";
}

// What a fix rests on, and the fix made concrete by it.
struct Concrete {
  std::string evidence;
  std::string fix;
};

// What a data range's name says of the DataLoader's workers: how many ("DataLoader.__next__
// (num_workers=8)", gpuidle's Python marker), 0 for torch.profiler's
// "_SingleProcessDataLoaderIter", kSomeWorkers for its "_MultiProcessingDataLoaderIter",
// kWorkersNotKnown otherwise.
constexpr int kSomeWorkers = -1;
constexpr int kWorkersNotKnown = -2;
int LoaderWorkers(absl::string_view what) {
  constexpr absl::string_view kKey = "num_workers=";
  const size_t at = what.find(kKey);
  if (at != absl::string_view::npos) {
    absl::string_view digits = what.substr(at + kKey.size());
    digits = digits.substr(0, digits.find_first_not_of("0123456789"));
    int n = 0;
    if (absl::SimpleAtoi(digits, &n) && n >= 0) return n;
  }
  if (absl::StrContains(what, "SingleProcess")) return 0;
  if (absl::StrContains(what, "MultiProcessing")) return kSomeWorkers;
  return kWorkersNotKnown;
}

Concrete DataLoaderAdvice(const Report& report, const StepView& v) {
  const Offender* top = TopOffender(report, Subcause::kDataLoader);
  Concrete c;
  c.fix = std::string(FixFor(Subcause::kDataLoader));
  if (v.device == nullptr) return c;
  const double wait = v.Per(v.device->idle[Subcause::kDataLoader]);
  const double rest = std::max(v.step_ns - wait, 1.0);
  c.evidence =
      absl::StrCat("the GPU waited ", FormatAdviceDuration(wait),
                   " per step for input; the rest of "
                   "the ",
                   FormatAdviceDuration(v.step_ns), " step took ", FormatAdviceDuration(rest));
  // How many workers the loader has: gpuidle's Python marker names them, torch.profiler's
  // DataLoader names tell none from some.
  const int has_workers = top != nullptr ? LoaderWorkers(top->what) : kWorkersNotKnown;
  const bool in_process = has_workers == 0;
  // With workers, a batch has to arrive every `rest`: loading in the training process that
  // takes `wait` needs wait / rest workers at once; workers there already need (wait + rest) /
  // rest times as many.
  const int workers = std::clamp(static_cast<int>(std::ceil(wait / rest)), 1, 64);
  const std::string settings =
      "pin_memory=True, persistent_workers=True, prefetch_factor=2 or more";
  const int known_workers = has_workers;
  if (known_workers > 0) {
    const int more = std::clamp(static_cast<int>(std::ceil(known_workers * (wait + rest) / rest)),
                                known_workers + 1, 4096);
    absl::StrAppend(&c.evidence, "; the DataLoader has ", known_workers, " workers");
    c.fix = absl::StrCat("the input pipeline cannot keep up with its ", known_workers,
                         " workers: make each batch cheaper to produce (decode once and cache, "
                         "lighter augmentation), or raise num_workers towards ",
                         more, " where free CPU cores allow (each worker needs one)");
  } else if (in_process) {
    absl::StrAppend(&c.evidence, "; the DataLoader loads in the training process");
    c.fix = absl::StrCat(
        "the input pipeline cannot keep up: load batches in parallel, "
        "DataLoader(num_workers=",
        workers, ", ", settings, "), within the free CPU cores");
  } else if (has_workers == kSomeWorkers) {
    absl::StrAppend(&c.evidence, "; the DataLoader loads in worker processes");
    c.fix = absl::StrCat(
        "the input pipeline cannot keep up with its workers: make each batch "
        "cheaper to produce, or raise num_workers to ",
        absl::StrFormat("%.1f", (wait + rest) / rest), "x what it is, within the free CPU cores");
  } else {
    c.fix = absl::StrCat(
        "the input pipeline cannot keep up: load batches in parallel: DataLoader(num_workers=",
        workers, ", ", settings, ") if it loads in the training process, else ",
        absl::StrFormat("%.1f", (wait + rest) / rest),
        "x the workers it has, within the free CPU cores");
  }
  absl::StrAppend(&c.fix, "; if that is not enough, move decoding/augmentation onto the GPU");
  return c;
}

Concrete H2DAdvice(const Report& report, const StepView& v) {
  const DeviceReport* d = v.device != nullptr ? v.device : MostLost(report, Subcause::kH2DCopy);
  Concrete c;
  c.fix = std::string(FixFor(Subcause::kH2DCopy));
  if (d == nullptr) return c;
  const double steps = v.device != nullptr ? v.steps : 1;
  const char* per = v.device != nullptr ? " per step" : "";
  const auto gbps = [](const CopyTotals& t) {
    return t.ns > 0 ? static_cast<double>(t.bytes) / static_cast<double>(t.ns) : 0.0;
  };
  if (d->h2d_pageable.bytes > 0) {
    const PinnedBandwidth pinned = PinnedBytesPerNs(*d);
    c.evidence = absl::StrFormat(
        "%.0f MB%s copied in from pageable memory at %.1f GB/s; from pinned memory it would "
        "take %s at %.0f GB/s (%s)",
        static_cast<double>(d->h2d_pageable.bytes) / steps / 1e6, per, gbps(d->h2d_pageable),
        FormatAdviceDuration(static_cast<double>(d->h2d_pageable.bytes) / steps /
                             pinned.bytes_per_ns),
        pinned.bytes_per_ns,
        pinned.observed ? "this run's pinned copies" : absl::StrCat("assumed for ", d->name));
    c.fix =
        "compute waits for copies from pageable memory: allocate the batches in pinned memory "
        "(DataLoader(pin_memory=True), or tensor.pin_memory() once for reused buffers) and copy "
        "with .to(device, non_blocking=True); prefetch the next batch on a side stream to hide "
        "the rest of the copy";
  } else if (d->h2d_pinned.bytes > 0) {
    c.evidence = absl::StrFormat(
        "%.0f MB%s copied in from pinned memory at %.1f GB/s while "
        "compute waited",
        static_cast<double>(d->h2d_pinned.bytes) / steps / 1e6, per, gbps(d->h2d_pinned));
    c.fix =
        "compute waits for copies that are already from pinned memory: prefetch the next batch "
        "on a side stream with .to(device, non_blocking=True) so the copy overlaps this step's "
        "compute";
  }
  return c;
}

// The steady state already replays CUDA graphs when a graph launch issues, on average, at
// least one of every ten of its kernels: then "capture the step in a CUDA graph" tells the
// program what it does, and the advice is about the kernels launched outside the graphs.
bool ReplaysGraphs(const GraphReplays& g) {
  return g.launches > 0 && g.kernels * 10 >= g.kernels + g.kernels_alone;
}

// Launch-bound advice for a steady state that already replays CUDA graphs.
constexpr char kLaunchOverheadWithGraphs[] =
    "kernels finish faster than the host issues them, and the program already replays CUDA "
    "graphs: bring the kernels launched outside them and the work between the replays into the "
    "graphs (compile the loss with the model, torch.compile the optimizer step, or capture the "
    "whole step with torch.cuda.graph), or give each replay more work (a larger batch)";
constexpr char kKernelGapWithGraphs[] =
    "work was queued but each kernel still paid the GPU's dispatch latency, inside the replayed "
    "CUDA graphs too: fuse them into fewer, larger kernels (torch.compile's default mode) or "
    "give each more work (a larger batch)";

Concrete LaunchAdvice(const Report& report, Subcause s, const StepView& v) {
  Concrete c;
  c.fix = std::string(FixFor(s));
  if (v.device == nullptr) {  // no steps: no figures per step, but the graphs still matter
    const DeviceReport* d = MostLost(report, s);
    if (d != nullptr && ReplaysGraphs(d->graph_replays)) {
      c.fix = s == Subcause::kLaunchOverhead ? kLaunchOverheadWithGraphs : kKernelGapWithGraphs;
      c.evidence = absl::StrFormat(
          "%d of the steady state's %d kernels replayed from %d CUDA graph launches",
          d->graph_replays.kernels, d->graph_replays.kernels + d->graph_replays.kernels_alone,
          d->graph_replays.launches);
    }
    return c;
  }
  if (v.device->kernel_count == 0) return c;
  const GraphReplays& graphs = v.device->graph_replays;
  const bool replays = ReplaysGraphs(graphs);
  // The steady state's own kernels where the report counts them (reports before it: the window's).
  const int64_t steady_kernels = graphs.kernels + graphs.kernels_alone;
  const double kernels = v.Per(steady_kernels > 0 ? steady_kernels : v.device->kernel_count);
  const double busy = v.Per(v.device->busy_ns);
  c.evidence = absl::StrFormat(
      "%.0f kernels per step doing %s of GPU work in all (%s each); the step took %s", kernels,
      FormatAdviceDuration(busy), FormatAdviceDuration(busy / kernels),
      FormatAdviceDuration(v.step_ns));
  if (replays) {
    c.evidence = absl::StrFormat(
        "%s; %.0f of them replayed from %.3g CUDA graph launches per step, %.0f launched one at "
        "a time",
        c.evidence, v.Per(graphs.kernels), v.Per(graphs.launches), v.Per(graphs.kernels_alone));
  }
  const Offender* top = TopOffender(report, s);
  const bool optimizer = top != nullptr && (absl::StrContains(top->what, "multi_tensor_apply") ||
                                            absl::StrContains(top->site, "optim") ||
                                            absl::StrContains(top->site, ".step"));
  const char* optimizer_fix = optimizer ? "the optimizer launches many of them: use a fused "
                                          "optimizer (torch.optim.AdamW(..., fused=True))"
                                        : "use fused/foreach optimizers";
  if (s == Subcause::kLaunchOverhead && replays) {
    c.fix = absl::StrCat(kLaunchOverheadWithGraphs, "; ", optimizer_fix);
  } else if (s == Subcause::kLaunchOverhead) {
    c.fix = absl::StrCat(
        "kernels finish faster than the host issues them: capture the step in a CUDA graph "
        "(torch.compile(mode=\"reduce-overhead\"), or torch.cuda.graph with static inputs) so "
        "one launch replays its ",
        static_cast<int64_t>(std::lround(kernels)),
        " kernels; or give each kernel more work (a larger batch, fused ops with torch.compile); ",
        optimizer_fix);
  } else if (replays) {
    c.fix = kKernelGapWithGraphs;
  } else {
    c.fix = absl::StrCat(
        "work was queued but each of the ", static_cast<int64_t>(std::lround(kernels)),
        " kernels per step still paid its dispatch latency: replay them as a CUDA graph "
        "(torch.compile(mode=\"reduce-overhead\"), torch.cuda.graph) or fuse them");
  }
  return c;
}

Concrete HostSyncAdvice(const Report& report, const StepView& v) {
  const Offender* top = TopOffender(report, Subcause::kHostSync);
  Concrete c;
  c.fix = std::string(FixFor(Subcause::kHostSync));
  if (top == nullptr) return c;
  const std::string where = absl::StrCat(top->what, AtSite(top));
  c.evidence = v.device != nullptr
                   ? absl::StrCat("the host blocked in ", where, " ",
                                  absl::StrFormat("%.3g", v.Per(top->count)),
                                  "x per step; the GPU then idled ",
                                  FormatAdviceDuration(v.Per(v.device->idle[Subcause::kHostSync])),
                                  " per step before the next work arrived")
                   : absl::StrCat("the host blocked in ", where, " ", top->count, " times");
  // The framework op that synced, where the trace names it (file names say nothing).
  const std::string text = absl::StrCat(top->what, " ", top->site);
  const char* sync;
  if (absl::StrContains(text, "aten::item") || absl::StrContains(text, "local_scalar_dense")) {
    sync = ".item()";
  } else if (absl::StrContains(text, "aten::to") || absl::StrContains(text, "aten::copy_") ||
             absl::StrContains(text, "Memcpy")) {
    sync = ".cpu()/.tolist()/.numpy()";
  } else if (absl::StrContains(text, "DeviceSynchronize")) {
    sync = "torch.cuda.synchronize()";
  } else {
    sync = "the sync (.item(), .cpu(), print(tensor), torch.cuda.synchronize())";
  }
  const absl::string_view place = PlaceInProgram(top->site);
  c.fix = absl::StrCat(
      "the host waited for the GPU to drain, then ran work that could have overlapped it: "
      "remove ",
      sync, " from the hot loop", place.empty() ? "" : absl::StrCat(", at ", place),
      ": keep the value on the GPU and read it every N steps, or copy it with "
      ".to(\"cpu\", non_blocking=True) into pinned memory and read it a step later");
  return c;
}

// Allocator stalls: where the virtual-memory calls of expandable segments are among the
// evidence, those are on already, and emptying the cache unmaps their pages.
Concrete AllocatorAdvice(const Report& report, const StepView& v) {
  Concrete c;
  bool expandable = false;
  for (const Offender& o : report.offenders) {
    expandable |= o.subcause == Subcause::kAllocator && MapsVirtualMemory(o.what);
  }
  c.fix = expandable
              ? "the host was mapping or unmapping device memory (expandable segments are on: "
                "torch.cuda.empty_cache() unmaps their pages after a sync, and the next step maps "
                "them again): stop calling torch.cuda.empty_cache() in the loop, and reuse buffers "
                "and keep tensor shapes fixed so the caching allocator serves them"
              : std::string(FixFor(Subcause::kAllocator));
  const Offender* top = TopOffender(report, Subcause::kAllocator);
  if (v.device != nullptr) {
    c.evidence = absl::StrCat(FormatAdviceDuration(v.Per(v.device->idle[Subcause::kAllocator])),
                              " per step lost to sync_bound.allocator");
  }
  if (top != nullptr) {
    const bool sync = absl::StrContains(top->what, "Synchronize");
    absl::StrAppend(&c.evidence, c.evidence.empty() ? "" : "; ", "most of it in ", top->what,
                    sync ? " (the allocator's, right before it released memory)" : "", AtSite(top));
  }
  return c;
}

Concrete OtherAdvice(const Report& report, Subcause s, const StepView& v) {
  Concrete c;
  c.fix = std::string(FixFor(s));
  if (s == Subcause::kUnattributed) {
    c.fix = UnattributedFix(report);
    c.evidence = "no evidence: nothing to predict";
    return c;
  }
  const Offender* top = TopOffender(report, s);
  if (v.device != nullptr) {
    c.evidence = absl::StrCat(FormatAdviceDuration(v.Per(LostOn(*v.device, s))),
                              " per step lost to ", QualifiedSubcauseName(s));
  }
  if (top != nullptr) {
    absl::StrAppend(&c.evidence, c.evidence.empty() ? "" : "; ", "most of it in ", top->what,
                    AtSite(top));
  }
  return c;
}

// Requests that waited (docs/ANALYSIS.md, "Serving"): what batching the requests in flight
// would give. A batch of B runs about as long as one request's run while its GPU time fits
// inside it. Its GPU time grows with B only for the work that keeps the tensor pipes busy
// (PM sampling's rate while busy, where measured); small-batch kernels that wait on memory or
// on their launch take about as long for B requests as for one.
Concrete RequestsWaitingAdvice(const Report& report, Advice* a) {
  Concrete c;
  c.fix = std::string(FixFor(Subcause::kRequestsWaiting));
  if (!report.serving.has_value()) return c;
  const Serving& s = *report.serving;
  int64_t demand = 0, demand_busy = 0;
  for (const DeviceReport& d : report.devices) {
    demand += d.demand_ns.value_or(0);
    demand_busy += d.demand_busy_ns;
  }
  const double busy_share =
      demand > 0 ? static_cast<double>(demand_busy) / static_cast<double>(demand) : 0;
  if (busy_share >= kBusyWhileDemandForReplicas) {
    c.fix = absl::StrFormat(
        "the GPU was busy %.0f%% of the time requests were in flight: batching buys only what "
        "larger batches save per request; for more throughput add replicas (another GPU, "
        "another server process behind the load balancer)",
        100 * busy_share);
  }
  if (s.requests <= 0 || s.run_known <= 0 || s.run.p50_ns <= 0 || s.in_flight_max < 2) return c;
  const int64_t batch = std::clamp<int64_t>(std::llround(s.in_flight_mean), 2, s.in_flight_max);
  const double gpu_per_request = static_cast<double>(demand_busy) / static_cast<double>(s.requests);
  double scaling = 0;  // the share of the GPU time that grows with the batch
  for (const DeviceReport& d : report.devices) {
    if (d.gpu_metrics.has_value() && d.gpu_metrics->throughput.has_value() &&
        d.gpu_metrics->throughput->tensor_active_pct >= 0) {
      scaling =
          std::max(scaling, std::min(1.0, d.gpu_metrics->throughput->tensor_active_pct / 100));
    }
  }
  const double batch_gpu_ns = gpu_per_request * (1 + static_cast<double>(batch - 1) * scaling);
  const double batch_ns = std::max(static_cast<double>(s.run.p50_ns), batch_gpu_ns);
  a->batch = batch;
  a->predicted_requests_per_s = static_cast<double>(batch) * 1e9 / batch_ns;
  a->predicted_latency_ns = std::llround(batch_ns);
  c.evidence = absl::StrFormat(
      "requests waited %s (median) to be taken up, %.1f in flight on average; a batch of %d "
      "runs about as long as one request's run (%s) while its GPU time (%s; one request's %s, "
      "%.0f%% of it growing with the batch: tensor pipes busy) fits in it: about %.1f "
      "requests/s instead of %.1f, latency near %s instead of %s (p50)",
      FormatAdviceDuration(static_cast<double>(s.queue.p50_ns)), s.in_flight_mean, batch,
      FormatAdviceDuration(static_cast<double>(s.run.p50_ns)), FormatAdviceDuration(batch_gpu_ns),
      FormatAdviceDuration(gpu_per_request), 100 * scaling, *a->predicted_requests_per_s,
      s.requests_per_s, FormatAdviceDuration(batch_ns),
      FormatAdviceDuration(static_cast<double>(s.latency.p50_ns)));
  return c;
}

// The processes NVML saw on the devices that waited behind them, most memory first.
Concrete OtherProcessAdvice(const Report& report, const StepView& v) {
  Concrete c = OtherAdvice(report, Subcause::kOtherProcess, v);
  std::vector<std::string> seen;
  for (const DeviceReport& d : report.devices) {
    if (d.idle[Subcause::kOtherProcess] <= 0 || !d.gpu_metrics.has_value()) continue;
    for (const GpuMetrics::OtherProcess& o : d.gpu_metrics->other_processes) {
      if (seen.size() < 3) {
        seen.push_back(absl::StrFormat("pid %d (%.1f GiB, GPU %d)", o.pid,
                                       static_cast<double>(o.memory_bytes) / (1 << 30), d.device));
      }
    }
  }
  if (!seen.empty()) {
    absl::StrAppend(&c.evidence, c.evidence.empty() ? "" : "; ", "NVML saw ",
                    absl::StrJoin(seen, ", "), " on the GPU");
  }
  return c;
}

}  // namespace

void AddAdvice(const AnalysisOptions& options, Report* report) {
  report->advice.clear();
  report->verdict.reset();
  IdleBreakdown lost = report->TotalIdle();
  int64_t steady_ns = 0;
  for (const DeviceReport& d : report->devices) {
    lost[Subcause::kCommWait] += d.comm_wait_ns.value_or(0);
    steady_ns += d.PhaseNs(Phase::kSteady);
  }
  const int64_t total_lost = lost.TotalNs();
  if (steady_ns <= 0) return;
  Verdict& verdict = report->verdict.emplace();
  verdict.lost_ns = total_lost;
  verdict.steady_ns = steady_ns;
  verdict.threshold_share = options.worth_fixing_min_share;
  verdict.worth_fixing = total_lost > 0 && verdict.LostShare() >= options.worth_fixing_min_share;
  for (int i = 0; i < kNumSubcauses && verdict.worth_fixing; ++i) {
    const auto s = static_cast<Subcause>(i);
    const double share = static_cast<double>(lost[s]) / static_cast<double>(total_lost);
    const double of_steady = static_cast<double>(lost[s]) / static_cast<double>(steady_ns);
    if (lost[s] <= 0 || share < options.advice_min_share ||
        of_steady < options.advice_min_steady_share) {
      continue;
    }
    Advice& a = report->advice.emplace_back();
    a.subcause = s;
    a.share_of_lost_time = share;
    a.share_of_steady_state = of_steady;
    for (const DeviceReport& d : report->devices) a.gain_ns += GainOn(d, s);
    const StepView v = BestPerStep(*report, s);
    if (v.device != nullptr && a.gain_ns > 0) {
      a.gain_per_step_ns = static_cast<int64_t>(std::lround(v.gain_ns));
      if (v.step_ns > 0) a.gain_share_of_step = std::min(1.0, v.gain_ns / v.step_ns);
    }
    Concrete c;
    switch (s) {
      case Subcause::kDataLoader:
        c = DataLoaderAdvice(*report, v);
        break;
      case Subcause::kH2DCopy:
        c = H2DAdvice(*report, v);
        break;
      case Subcause::kLaunchOverhead:
      case Subcause::kKernelGap:
        c = LaunchAdvice(*report, s, v);
        break;
      case Subcause::kHostSync:
        c = HostSyncAdvice(*report, v);
        break;
      case Subcause::kAllocator:
        c = AllocatorAdvice(*report, v);
        break;
      case Subcause::kOtherProcess:
        c = OtherProcessAdvice(*report, v);
        break;
      case Subcause::kRequestsWaiting:
        c = RequestsWaitingAdvice(*report, &a);
        break;
      default:
        c = OtherAdvice(*report, s, v);
        break;
    }
    a.fix = std::move(c.fix);
    a.evidence = std::move(c.evidence);
    // Most of it one periodic activity (a checkpoint's copies and its pickling): that activity's
    // fix, the same in every subcause it spans.
    for (const PeriodicWork& w : report->periodic_work) {
      if (2 * w.idle[s] < lost[s]) continue;
      a.fix = absl::StrFormat(
          "%.0f%% of it is the periodic %s at %s (periodic work, one row "
          "whatever its causes): %s",
          100.0 * static_cast<double>(w.idle[s]) / static_cast<double>(lost[s]), w.activity, w.site,
          w.fix);
      break;
    }
  }
  std::stable_sort(
      report->advice.begin(), report->advice.end(),
      [](const Advice& a, const Advice& b) { return a.share_of_lost_time > b.share_of_lost_time; });
}

}  // namespace gpuidle::internal
