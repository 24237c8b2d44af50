// Healthy: large kernels back to back. The host queues a whole step of 2 ms kernels in
// microseconds and only waits at the very end, so the GPU always has the next kernel queued
// and never waits for the host.
//
// Expected: idle under 3% of the window (the few microseconds of dispatch between kernels).
#include "scenario.h"

namespace {

constexpr int64_t kKernelNs = 2 * scenario::kMillisecond;
constexpr int kKernelsPerStep = 50;

}  // namespace

int main(int argc, char** argv) {
  const scenario::Args args = scenario::ParseArgs(argc, argv, /*default_iterations=*/10);
  GPUIDLE_EXAMPLE_PROFILE();
  scenario::WarmUp();

  const scenario::Stopwatch stopwatch;
  for (int i = 0; i < args.iterations; ++i) {
    scenario::Step step;
    for (int k = 0; k < kKernelsPerStep; ++k) {
      scenario::Spin<<<1, 1>>>(kKernelNs);
    }
    GPUIDLE_CHECK_LAUNCH();
  }
  GPUIDLE_CHECK_CUDA(cudaDeviceSynchronize());
  const double wall_ms = stopwatch.ElapsedMs();

  const double planned_ms = scenario::Ms(kKernelNs) * kKernelsPerStep * args.iterations;
  std::printf(
      "healthy: %d iterations of %d queued %.1f ms kernels (one sync at the end); %.0f ms wall "
      "for %.0f ms of kernels; expected idle < 3%% of the window\n",
      args.iterations, kKernelsPerStep, scenario::Ms(kKernelNs), wall_ms, planned_ms);
  std::fflush(stdout);
  return 0;
}
