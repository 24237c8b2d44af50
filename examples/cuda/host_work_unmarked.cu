// Data-starved, unmarked: as host_work_marked (4 ms of host work, then a 2 ms kernel, every
// step) but without a marker, like an input pipeline gpuidle knows nothing about. The host is
// away from CUDA for far longer than launch_gap_max (1 ms), so the wait is host work.
//
// Expected: data_starved.host.
// Fix: overlap the host work with GPU work (a loader thread, prefetching); mark input loading
// with gpuidle::DataRange or an NVTX range "data_load" so that gpuidle names it.
#include "scenario.h"

namespace {

constexpr int64_t kKernelNs = 2 * scenario::kMillisecond;
constexpr int64_t kHostNs = 4 * scenario::kMillisecond;

}  // namespace

int main(int argc, char** argv) {
  const scenario::Args args = scenario::ParseArgs(argc, argv, /*default_iterations=*/200);
  GPUIDLE_EXAMPLE_PROFILE();
  scenario::WarmUp();

  const scenario::Stopwatch stopwatch;
  double batch = 1.0;
  for (int i = 0; i < args.iterations; ++i) {
    scenario::Step step;
    batch = scenario::HostWork(kHostNs, batch);
    scenario::Spin<<<1, 1>>>(kKernelNs);
    GPUIDLE_CHECK_LAUNCH();
  }
  GPUIDLE_CHECK_CUDA(cudaDeviceSynchronize());

  std::printf(
      "host_work_unmarked: %d iterations of %.1f ms unmarked host work, then a %.1f ms kernel "
      "(no sync); %.0f ms wall; expected data_starved.host (GPU idle ~%.1f ms per iteration)\n",
      args.iterations, scenario::Ms(kHostNs), scenario::Ms(kKernelNs), stopwatch.ElapsedMs(),
      scenario::Ms(kHostNs - kKernelNs));
  std::fflush(stdout);
  return batch > 0.0 ? 0 : 1;
}
