// Sync-bound through a copy: every step runs a 1 ms kernel that ends in one number (a loss),
// copies those 4 bytes to the host with cudaMemcpy (what PyTorch's `.item()` does), then does
// 300 us of host work with the value (logging, a data-dependent decision). The blocking copy
// drains the GPU's queue, so the GPU idles during the host work every step.
//
// Expected: sync_bound.host_sync (at the 4-byte device-to-host cudaMemcpy).
// Fix: keep the value on the GPU, read it every N steps, or copy it with cudaMemcpyAsync into
// pinned memory and read it a step later.
#include "scenario.h"

namespace {

constexpr int64_t kKernelNs = 1 * scenario::kMillisecond;
constexpr int64_t kHostNs = 300 * scenario::kMicrosecond;

// A training step that ends in a scalar.
__global__ void StepWithLoss(int64_t duration_ns, int step, float* loss) {
  scenario::SpinFor(duration_ns);
  *loss = 1.0f / static_cast<float>(step + 1);
}

}  // namespace

int main(int argc, char** argv) {
  const scenario::Args args = scenario::ParseArgs(argc, argv, /*default_iterations=*/700);
  GPUIDLE_EXAMPLE_PROFILE();
  scenario::WarmUp();
  float* device_loss = nullptr;
  GPUIDLE_CHECK_CUDA(cudaMalloc(&device_loss, sizeof(float)));

  const scenario::Stopwatch stopwatch;
  double running_loss = 0.0;
  for (int i = 0; i < args.iterations; ++i) {
    scenario::Step step;
    StepWithLoss<<<1, 1>>>(kKernelNs, i, device_loss);
    GPUIDLE_CHECK_LAUNCH();
    float loss = 0.0f;
    GPUIDLE_CHECK_CUDA(cudaMemcpy(&loss, device_loss, sizeof(loss), cudaMemcpyDeviceToHost));
    running_loss = scenario::HostWork(kHostNs, running_loss + loss);
  }
  GPUIDLE_CHECK_CUDA(cudaDeviceSynchronize());
  const double wall_ms = stopwatch.ElapsedMs();

  GPUIDLE_CHECK_CUDA(cudaFree(device_loss));
  std::printf(
      "d2h_after_kernel: %d iterations of a %.1f ms kernel, a 4-byte D2H cudaMemcpy (.item()), "
      "then %.2f ms host work using the value; %.0f ms wall; expected sync_bound.host_sync (GPU "
      "idle ~%.2f ms per iteration)\n",
      args.iterations, scenario::Ms(kKernelNs), scenario::Ms(kHostNs), wall_ms,
      scenario::Ms(kHostNs));
  std::fflush(stdout);
  return running_loss > 0.0 ? 0 : 1;
}
