// Data-starved, marked: each step loads its batch on the host for 4 ms, inside a data range,
// then gives the GPU 2 ms of work. Nothing overlaps the loading, so the GPU waits ~2 ms of
// every 4 ms step for its input.
//
// Expected: data_starved.dataloader (the launching thread is inside a data range).
// Fix: load the next batch while the GPU computes (loader threads or processes, prefetching).
#include "scenario.h"

namespace {

constexpr int64_t kKernelNs = 2 * scenario::kMillisecond;
constexpr int64_t kLoadNs = 4 * scenario::kMillisecond;

}  // namespace

int main(int argc, char** argv) {
  const scenario::Args args = scenario::ParseArgs(argc, argv, /*default_iterations=*/200);
  GPUIDLE_EXAMPLE_PROFILE();
  scenario::WarmUp();

  const scenario::Stopwatch stopwatch;
  double batch = 1.0;
  for (int i = 0; i < args.iterations; ++i) {
    scenario::Step step;
    {
      scenario::DataLoad load;
      batch = scenario::HostWork(kLoadNs, batch);
    }
    scenario::Spin<<<1, 1>>>(kKernelNs);
    GPUIDLE_CHECK_LAUNCH();
  }
  GPUIDLE_CHECK_CUDA(cudaDeviceSynchronize());

  std::printf(
      "host_work_marked: %d iterations of %.1f ms host work inside %s, then a %.1f ms "
      "kernel (no sync); %.0f ms wall; expected data_starved.dataloader (GPU idle ~%.1f ms "
      "per iteration)\n",
      args.iterations, scenario::Ms(kLoadNs), scenario::kDataMarker, scenario::Ms(kKernelNs),
      stopwatch.ElapsedMs(), scenario::Ms(kLoadNs - kKernelNs));
  std::fflush(stdout);
  return batch > 0.0 ? 0 : 1;
}
