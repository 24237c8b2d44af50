// Sync-bound: every step runs a 1 ms kernel, waits for it with cudaStreamSynchronize, then
// does 250 us of host work. The sync drains the GPU's queue, so the host work that follows
// cannot overlap GPU work: the GPU idles for it every step.
//
// Expected: sync_bound.host_sync (at the cudaStreamSynchronize).
// Fix: drop the sync, or sync every N steps / on an event recorded earlier, so that the host
// stays ahead of the GPU.
#include "scenario.h"

namespace {

constexpr int64_t kKernelNs = 1 * scenario::kMillisecond;
constexpr int64_t kHostNs = 250 * scenario::kMicrosecond;

}  // namespace

int main(int argc, char** argv) {
  const scenario::Args args = scenario::ParseArgs(argc, argv, /*default_iterations=*/800);
  GPUIDLE_EXAMPLE_PROFILE();
  scenario::WarmUp();
  cudaStream_t stream;
  GPUIDLE_CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  const scenario::Stopwatch stopwatch;
  double state = 1.0;
  for (int i = 0; i < args.iterations; ++i) {
    scenario::Step step;
    scenario::Spin<<<1, 1, 0, stream>>>(kKernelNs);
    GPUIDLE_CHECK_LAUNCH();
    GPUIDLE_CHECK_CUDA(cudaStreamSynchronize(stream));
    state = scenario::HostWork(kHostNs, state);
  }
  GPUIDLE_CHECK_CUDA(cudaStreamSynchronize(stream));
  const double wall_ms = stopwatch.ElapsedMs();

  GPUIDLE_CHECK_CUDA(cudaStreamDestroy(stream));
  std::printf(
      "sync_after_kernel: %d iterations of a %.1f ms kernel, cudaStreamSynchronize, then "
      "%.2f ms host work; %.0f ms wall; expected sync_bound.host_sync (GPU idle ~%.2f ms per "
      "iteration)\n",
      args.iterations, scenario::Ms(kKernelNs), scenario::Ms(kHostNs), wall_ms,
      scenario::Ms(kHostNs));
  std::fflush(stdout);
  return state > 0.0 ? 0 : 1;
}
