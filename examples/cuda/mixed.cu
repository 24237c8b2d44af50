// Mixed: every step alternates two pathologies, as real workloads do. First 10 ms of unmarked
// host work with nothing queued on the GPU (data_starved.host), then a storm of 1,500 empty
// kernels that the host launches slower than the GPU runs them (launch_bound).
//
// Expected, roughly half each (40-60%): data_starved.host (10 ms idle per step) and
// launch_bound (the idle between the storm's kernels: 4-7 us each under gpuidle on an H200,
// 6-10 ms per step). The storm's share grows with the cost of a launch, which tracing raises.
#include "scenario.h"

namespace {

constexpr int64_t kHostNs = 10 * scenario::kMillisecond;
constexpr int kKernelsPerStorm = 1'500;

}  // namespace

int main(int argc, char** argv) {
  const scenario::Args args = scenario::ParseArgs(argc, argv, /*default_iterations=*/60);
  GPUIDLE_EXAMPLE_PROFILE();
  scenario::WarmUp();

  const scenario::Stopwatch stopwatch;
  double state = 1.0;
  double storm_ms = 0.0;
  for (int i = 0; i < args.iterations; ++i) {
    scenario::Step step;
    state = scenario::HostWork(kHostNs, state);
    const scenario::Stopwatch storm;
    for (int k = 0; k < kKernelsPerStorm; ++k) {
      scenario::Empty<<<1, 1>>>();
    }
    GPUIDLE_CHECK_LAUNCH();
    storm_ms += storm.ElapsedMs();
  }
  GPUIDLE_CHECK_CUDA(cudaDeviceSynchronize());
  const double wall_ms = stopwatch.ElapsedMs();

  std::printf(
      "mixed: %d iterations of %.1f ms unmarked host work, then a storm of %d empty kernels "
      "(%.2f ms to launch on average); %.0f ms wall; expected data_starved.host and "
      "launch_bound, roughly half each (40-60%%)\n",
      args.iterations, scenario::Ms(kHostNs), kKernelsPerStorm, storm_ms / args.iterations,
      wall_ms);
  std::fflush(stdout);
  return state > 0.0 ? 0 : 1;
}
