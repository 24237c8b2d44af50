// Data-starved by a copy: every step copies a 64 MiB batch from pageable (malloc'd) host
// memory to the GPU, then runs a short kernel on it. A pageable copy is staged through a
// driver buffer and blocks the host, so the GPU waits for the whole copy each step.
//
// Expected: data_starved.h2d_copy.
// Fix: pinned memory (cudaMallocHost / pin_memory=True) and cudaMemcpyAsync on a side stream,
// so that the next batch's copy overlaps this batch's kernels.
#include <cstdlib>
#include <cstring>

#include "scenario.h"

namespace {

constexpr size_t kBatchBytes = size_t{64} << 20;
constexpr int64_t kKernelNs = 200 * scenario::kMicrosecond;

}  // namespace

int main(int argc, char** argv) {
  const scenario::Args args = scenario::ParseArgs(argc, argv, /*default_iterations=*/100);
  GPUIDLE_EXAMPLE_PROFILE();
  // Touch every page first, before any GPU work: the scenario is about the copy, not about
  // first-touch page faults (tens of ms of host work that would open the window).
  void* host_batch = std::malloc(kBatchBytes);
  if (host_batch == nullptr) {
    std::fprintf(stderr, "pageable_h2d: cannot allocate %zu bytes\n", kBatchBytes);
    return 1;
  }
  std::memset(host_batch, 1, kBatchBytes);
  void* device_batch = nullptr;
  GPUIDLE_CHECK_CUDA(cudaMalloc(&device_batch, kBatchBytes));
  scenario::WarmUp();

  const scenario::Stopwatch stopwatch;
  for (int i = 0; i < args.iterations; ++i) {
    scenario::Step step;
    GPUIDLE_CHECK_CUDA(cudaMemcpy(device_batch, host_batch, kBatchBytes, cudaMemcpyHostToDevice));
    scenario::Spin<<<1, 1>>>(kKernelNs);
    GPUIDLE_CHECK_LAUNCH();
  }
  GPUIDLE_CHECK_CUDA(cudaDeviceSynchronize());
  const double wall_ms = stopwatch.ElapsedMs();

  GPUIDLE_CHECK_CUDA(cudaFree(device_batch));
  std::free(host_batch);
  std::printf(
      "pageable_h2d: %d iterations of a %zu MiB H2D cudaMemcpy from pageable memory, then a "
      "%.1f ms kernel; %.0f ms wall (%.2f GB/s incl. kernels); expected data_starved.h2d_copy\n",
      args.iterations, kBatchBytes >> 20, scenario::Ms(kKernelNs), wall_ms,
      static_cast<double>(kBatchBytes) * args.iterations / (wall_ms * 1e6));
  std::fflush(stdout);
  return 0;
}
