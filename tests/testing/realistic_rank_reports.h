// One-process reports of a data-parallel job (testing/rank_reports.h) made as large as a live
// rank's report of a long run is: the collective timing table at DeviceReport::kMaxCollectiveRows
// (the rest counted in collectives_not_listed), a row per step, a start-up with its one-off parts,
// the longest gaps and the offenders at AnalysisOptions' default caps with kernel names and call
// sites of a real program, the host's eight visible GPUs and advice. For the merge benchmark
// (tests/benchmarks/merge_benchmark.cc) and the end-to-end merge of many ranks' report files
// (tests/session/many_ranks_test.cc).
#ifndef GPUIDLE_TESTS_TESTING_REALISTIC_RANK_REPORTS_H_
#define GPUIDLE_TESTS_TESTING_REALISTIC_RANK_REPORTS_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gpuidle/options.h"
#include "gpuidle/report.h"
#include "testing/rank_reports.h"

namespace gpuidle::testing {

// A job as a long data-parallel run is: 600 steps of 8 all-reduces (4800 collectives per rank,
// more than a report lists), 8 ranks per host, hosts whose clocks differ by an hour and a bit,
// live captures' wall-clock priors; one straggler arrives 5 ms late at each step's first
// all-reduce.
inline JobSpec RealisticJob(int world_size, int straggler) {
  JobSpec s;
  s.world_size = world_size;
  s.ranks_per_host = 8;
  s.steps = 600;
  s.collectives_per_step = 8;
  s.step_ns = 100'000'000;
  s.collective_ns = 1'000'000;
  s.late_ns = 5'000'000;  // 5 + 8 x (1 + 5 + 2) ms of collectives fit in a 100 ms step
  s.straggler = straggler;
  s.host_offset_ns = 3'600'000'000'123;
  s.wall_clock_prior = true;
  return s;
}

inline constexpr int64_t kRealisticStartUpNs = 2'000'000'000;

// RankReportOf(s, rank), grown to a live rank's report of the run.
inline Report RealisticRankReport(const JobSpec& s, int rank) {
  Report r = RankReportOf(s, rank);
  const AnalysisOptions defaults;
  const int host = rank / s.ranks_per_host;
  const int64_t clock = HostClock(s, host);
  const bool straggler = s.straggler == rank;
  r.source = "gpuidle";
  r.step_source = "ProfilerStep";
  r.ranks.front().pid = 4000 + rank;
  DeviceReport& d = r.devices.front();
  // The table: its first kMaxCollectiveRows rows (all in the steady state), the rest counted.
  if (d.collective_timings.size() > DeviceReport::kMaxCollectiveRows) {
    d.collectives_not_listed =
        static_cast<int64_t>(d.collective_timings.size() - DeviceReport::kMaxCollectiveRows);
    d.collective_timings.resize(DeviceReport::kMaxCollectiveRows);
  }
  d.collectives.front().bytes = d.collectives.front().count * (int64_t{100} << 20);
  // A start-up of two seconds before the steady state: CUDA, the model, the first step.
  d.window_start_ns -= kRealisticStartUpNs;
  d.window_ns = d.window_end_ns - d.window_start_ns;
  r.window_start_ns = d.window_start_ns;
  const auto one_off = [&](OneOffKind kind, int64_t ns, int64_t count, const char* evidence) {
    d.one_off.push_back({Phase::kStartUp, kind, ns, count, evidence});
  };
  one_off(OneOffKind::kSetUp, 1'100'000'000, 1, "torch.nn.Module.to");
  one_off(OneOffKind::kCudaInit, 420'000'000, 1, "cuInit");
  one_off(OneOffKind::kWarmUpStep, 310'000'000, 1, "ProfilerStep#0");
  one_off(OneOffKind::kModuleLoad, 95'000'000, 37, "cuModuleLoadData");
  one_off(OneOffKind::kGpuBusy, 75'000'000, 212, "");
  d.kernel_count = 180 * s.steps + d.collectives.front().count;
  d.memcpy_count = 2 * s.steps;
  d.memset_count = s.steps;
  // A row per step: compute, then the step's all-reduces.
  const int64_t steady = d.steady_end_ns - d.steady_start_ns;
  const int64_t host_per_step = straggler ? s.late_ns : steady / 50 / s.steps;
  const int64_t launch_per_step = steady / 100 / s.steps;
  for (int k = 0; k < s.steps; ++k) {
    StepReport& step = r.steps.emplace_back();
    step.rank = rank;
    step.device = d.device;
    step.name = absl::StrCat("ProfilerStep#", k + 1);
    step.start_ns = 1'000'000'000 + int64_t{k} * s.step_ns + clock;
    step.end_ns = step.start_ns + s.step_ns;
    step.idle[Subcause::kHost] = host_per_step;
    step.idle[Subcause::kLaunchOverhead] = launch_per_step;
    step.busy_ns = s.step_ns - step.idle.TotalNs();
  }
  // The longest gaps and the offenders, as many as the analysis keeps by default.
  const std::vector<std::string> kernels = {
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
      "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
      "at::detail::Array<char*, 3>)",
      "ampere_sgemm_128x64_tn",
      "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(cutlass_80_"
      "tensorop_s1688gemm_128x128_32x3_nn_align4::Params)",
      "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
      "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, "
      "float, float const*, float const*, float const*, float*, float*, float*)",
  };
  const Subcause kinds[] = {Subcause::kHost, Subcause::kLaunchOverhead, Subcause::kHostSync,
                            Subcause::kDataLoader, Subcause::kKernelGap};
  const char* const evidence[] = {"", "cudaLaunchKernel", "cudaStreamSynchronize", "gpuidle.data",
                                  "cudaLaunchKernel"};
  for (int g = 0; g < defaults.max_gap_records; ++g) {
    GapRecord& gap = r.longest_gaps.emplace_back();
    const int k = (g * 7) % s.steps;
    gap.rank = rank;
    gap.device = d.device;
    gap.start_ns = 1'000'000'000 + int64_t{k} * s.step_ns + clock + 60'000'000;
    gap.end_ns = gap.start_ns + (straggler ? s.late_ns : 900'000) - g * 1'000;
    gap.subcause = kinds[g % 5];
    gap.next_op = kernels[static_cast<size_t>(g) % kernels.size()];
    gap.thread = 100'000 + static_cast<uint64_t>(rank);
    gap.evidence = evidence[g % 5];
    gap.call_site = absl::StrCat("aten::", g % 2 ? "add_" : "mm", " at /workspace/train.py(",
                                 140 + g % 9, "): train_step");
  }
  for (int o = 0; o < defaults.max_offenders; ++o) {
    Offender& off = r.offenders.emplace_back();
    off.subcause = kinds[o % 5];
    off.what = o % 3 == 0 ? evidence[o % 5] : kernels[static_cast<size_t>(o) % kernels.size()];
    if (off.what.empty()) off.what = "host work";
    off.site = absl::StrCat("aten::", o % 2 ? "copy_" : "linear", " at /workspace/model.py(",
                            200 + o, "): forward");
    off.idle_ns = (straggler && o == 0 ? s.steps * s.late_ns : 0) + 50'000'000 - o * 1'000'000;
    off.count = 600 - o * 10;
  }
  // The host's eight GPUs are visible to every rank; each uses one.
  r.visible_device_count = s.ranks_per_host;
  for (int v = 0; v < s.ranks_per_host; ++v) {
    if (v != d.device) r.unused_devices.push_back(v);
    VisibleDevice& vd = r.visible_devices.emplace_back();
    vd.rank = rank;
    vd.device = v;
    vd.physical_index = v;
    vd.uuid = absl::StrCat("GPU-", 10'000'000 + host, "-5e3c-4f1a-9b2d-", 100'000'000'000 + v);
    vd.name = "NVIDIA H200";
    vd.used = v == d.device;
  }
  Advice& a = r.advice.emplace_back();
  a.subcause = Subcause::kHost;
  a.share_of_lost_time = 0.6;
  a.fix = "the host worked between steps without launching GPU work: profile the host side";
  Advice& b = r.advice.emplace_back();
  b.subcause = Subcause::kLaunchOverhead;
  b.share_of_lost_time = 0.3;
  b.fix = "kernels were launched slower than they ran: fuse them or capture a CUDA graph";
  return r;
}

}  // namespace gpuidle::testing

#endif  // GPUIDLE_TESTS_TESTING_REALISTIC_RANK_REPORTS_H_
