// Sync-bound on the device: stream B's kernel waits (cudaStreamWaitEvent) for an event of
// stream A, and stream A is held back on the device by a producer that is not a kernel: a host
// function that sleeps 1.5 ms, standing in for a transfer or another process. The host has
// issued a whole step of rounds ahead, so the work is queued; it just may not start yet.
//
//   stream A: [host fn: sleep 1.5 ms] -> record(ready)
//   stream B:                            wait(ready) -> [kernel 0.5 ms]
//
// Expected: sync_bound.device_wait (B's queued kernel waited on stream A's event).
// Fix: make the producer faster, give the consumer independent work to run meanwhile, or move
// the dependency later in B's stream.
#include <chrono>
#include <thread>

#include "scenario.h"

namespace {

constexpr int64_t kKernelNs = 500 * scenario::kMicrosecond;
constexpr int64_t kProducerNs = 1500 * scenario::kMicrosecond;
constexpr int kRoundsPerStep = 10;

// Runs on a driver thread in stream A's order; must not call CUDA. Sleeping is the point: the
// producer is waiting on something outside this process's GPU work.
void CUDART_CB SlowProducer(void* /*user_data*/) {
  std::this_thread::sleep_for(std::chrono::nanoseconds(kProducerNs));
}

}  // namespace

int main(int argc, char** argv) {
  const scenario::Args args = scenario::ParseArgs(argc, argv, /*default_iterations=*/600);
  GPUIDLE_EXAMPLE_PROFILE();
  scenario::WarmUp();
  cudaStream_t producer;
  cudaStream_t consumer;
  cudaEvent_t ready;
  GPUIDLE_CHECK_CUDA(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
  GPUIDLE_CHECK_CUDA(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
  GPUIDLE_CHECK_CUDA(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));

  const scenario::Stopwatch stopwatch;
  for (int round = 0; round < args.iterations;) {
    scenario::Step step;
    // Issue a step's rounds at once (microseconds), then wait for them at the step's end.
    for (int r = 0; r < kRoundsPerStep && round < args.iterations; ++r, ++round) {
      GPUIDLE_CHECK_CUDA(cudaLaunchHostFunc(producer, SlowProducer, nullptr));
      GPUIDLE_CHECK_CUDA(cudaEventRecord(ready, producer));
      GPUIDLE_CHECK_CUDA(cudaStreamWaitEvent(consumer, ready, 0));
      scenario::Spin<<<1, 1, 0, consumer>>>(kKernelNs);
      GPUIDLE_CHECK_LAUNCH();
    }
    GPUIDLE_CHECK_CUDA(cudaStreamSynchronize(consumer));
  }
  const double wall_ms = stopwatch.ElapsedMs();

  GPUIDLE_CHECK_CUDA(cudaEventDestroy(ready));
  GPUIDLE_CHECK_CUDA(cudaStreamDestroy(consumer));
  GPUIDLE_CHECK_CUDA(cudaStreamDestroy(producer));
  std::printf(
      "cross_stream_wait: %d rounds (%d per step, issued ahead) of stream B waiting on an "
      "event of stream A, which a %.1f ms host function delays, then a %.1f ms kernel on B; "
      "%.0f ms wall; expected sync_bound.device_wait (GPU idle ~%.1f ms per round)\n",
      args.iterations, kRoundsPerStep, scenario::Ms(kProducerNs), scenario::Ms(kKernelNs), wall_ms,
      scenario::Ms(kProducerNs - kKernelNs));
  std::fflush(stdout);
  return 0;
}
