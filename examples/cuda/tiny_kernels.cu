// Launch-bound: steps of 2,000 empty kernels launched back to back (200,000 by default). An
// empty kernel finishes in about a microsecond, faster than the host can launch the next one,
// so the GPU idles between kernels while the host sits in launch calls.
//
// Expected: launch_bound (launch_overhead, some kernel_gap).
// Fix: fewer, larger kernels (fusion, torch.compile), CUDA Graphs.
#include "scenario.h"

namespace {

constexpr int kKernelsPerStep = 2'000;

}  // namespace

int main(int argc, char** argv) {
  const scenario::Args args = scenario::ParseArgs(argc, argv, /*default_iterations=*/100);
  GPUIDLE_EXAMPLE_PROFILE();
  scenario::WarmUp();

  const scenario::Stopwatch stopwatch;
  for (int i = 0; i < args.iterations; ++i) {
    scenario::Step step;
    for (int k = 0; k < kKernelsPerStep; ++k) {
      scenario::Empty<<<1, 1>>>();
    }
    GPUIDLE_CHECK_LAUNCH();
  }
  GPUIDLE_CHECK_CUDA(cudaDeviceSynchronize());
  const double wall_ms = stopwatch.ElapsedMs();

  const long long kernels = static_cast<long long>(args.iterations) * kKernelsPerStep;
  std::printf(
      "tiny_kernels: %d iterations of %d empty kernels back to back = %lld kernels (no sync "
      "until the end); %.0f ms wall (%.2f us per launch); expected launch_bound\n",
      args.iterations, kKernelsPerStep, kernels, wall_ms, wall_ms * 1e3 / kernels);
  std::fflush(stdout);
  return 0;
}
