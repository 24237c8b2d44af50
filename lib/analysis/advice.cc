#include "analysis/advice.h"

#include <algorithm>

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
             "(nvidia-smi topo -m: NV# is NVLink, PIX/PHB is PCIe)";
    case Subcause::kCopyWait:
      return "kernels waited behind copies or memsets on their own stream: issue copies on a "
             "side stream (with an event for the consumer) so they overlap compute, and drop "
             "needless device-to-device copies (.contiguous(), .clone(), torch.cat of big "
             "tensors)";
    case Subcause::kUnattributed:
      break;
  }
  return "the trace does not show why: the launch calls, or the work the GPU waited on, fell "
         "outside it (launched before profiling began, another process on the GPU); profile a "
         "longer window with CPU and CUDA activities";
}

void AddAdvice(const AnalysisOptions& options, Report* report) {
  report->advice.clear();
  IdleBreakdown lost = report->TotalIdle();
  for (const DeviceReport& d : report->devices)
    lost[Subcause::kCommWait] += d.comm_wait_ns.value_or(0);
  const int64_t total_lost = lost.TotalNs();
  for (int i = 0; i < kNumSubcauses && total_lost > 0; ++i) {
    const auto s = static_cast<Subcause>(i);
    const double share = static_cast<double>(lost[s]) / static_cast<double>(total_lost);
    if (lost[s] > 0 && share >= options.advice_min_share) {
      report->advice.push_back(Advice{s, share, std::string(FixFor(s))});
    }
  }
  std::stable_sort(
      report->advice.begin(), report->advice.end(),
      [](const Advice& a, const Advice& b) { return a.share_of_lost_time > b.share_of_lost_time; });
}

}  // namespace gpuidle::internal
