// The workloads of the overhead benchmark (run_overhead_benchmark.sh runs them untraced, under
// the bare CUPTI collector and under gpuidle). Each round is timed inside the process, so
// start-up and the report written at exit are not counted, only what tracing adds to the work.
//
//   gpuidle_bench_overhead --mode tiny      20,000 empty kernels back to back, then a sync
//   gpuidle_bench_overhead --mode healthy   200 queued 2 ms kernels, then a sync
//
// Prints one line: result mode=tiny kernels=20000 rounds=15 median_ms=... min_ms=... max_ms=...
//
// With --pair bare|gpuidle the process itself switches that tracer on and off (tracer_switch.h;
// switching is not timed): R untraced rounds before the tracer is first started, R traced, R
// untraced after it stopped, and prints the medians of each phase:
//   result mode=tiny pair=gpuidle kernels=20000 rounds=15 before_ms=... traced_ms=...
//          after_ms=... added_ms=... leftover_ms=... records=... launch_bound_pct=...
// Rounds of one process share its CPU placement and clocks, which differ from process to
// process by up to 30% on the H200 machine: the in-process difference does not see that noise.
//
// --clock-probe prints what a read of CUPTI's clock costs next to CLOCK_REALTIME, and exits.
//
// With --alternate C both tracers take turns in one process: C cycles of untraced rounds, one
// tracer's rounds, untraced rounds, the other tracer's rounds (which tracer goes first swaps
// every cycle). Each tracer is started before its rounds, stopped and detached after them (no
// cycle inherits what CUPTI kept), and its first round after a start is left out (CUPTI's
// first calls after attaching are slow). Each tracer's added time is its rounds' median minus
// the untraced rounds' just before; prints a line per cycle and the medians over cycles:
//   result mode=tiny alternate=6 rounds=5 untraced_ms=... bare_added_ms=...
//          gpuidle_added_ms=... ratio=... records=... launch_bound_pct=... bare_launch_calls=...
// (the launch calls the bare collector timed: GPUIDLE_BARE_TIMES_LAUNCHES=1, else 0)
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tracer_switch.h"

extern "C" void gpuidle_bare_cupti_clock_probe(void);  // bare_cupti_collector.cc
extern "C" long long gpuidle_bare_cupti_launch_calls(void);

#define GPUIDLE_BENCH_CHECK_CUDA(call)                                          \
  do {                                                                          \
    const cudaError_t gpuidle_bench_error = (call);                             \
    if (gpuidle_bench_error != cudaSuccess) {                                   \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, \
                   cudaGetErrorString(gpuidle_bench_error));                    \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

namespace {

struct Options {
  std::string mode = "tiny";
  int kernels = 0;  // 0: the mode's default
  int rounds = 0;
  int warmup = 2;
  int64_t kernel_ns = 2'000'000;  // healthy mode's kernel length
  std::string pair;               // "": one process, one configuration
  int alternate = 0;              // cycles of both tracers in turn (0: not this mode)
  bool clock_probe = false;       // only CUPTI's clock against CLOCK_REALTIME
};

__global__ void EmptyKernel() {}

// Busy for `duration_ns` on the GPU's nanosecond clock: a large kernel with an exact length.
__global__ void SpinKernel(int64_t duration_ns) {
  uint64_t start;
  uint64_t now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < static_cast<uint64_t>(duration_ns));
}

[[noreturn]] void Usage(const char* program, int exit_code) {
  std::fprintf(stderr,
               "usage: %s [--mode tiny|healthy] [--kernels N] [--rounds R] [--warmup W] "
               "[--kernel-us U] [--pair bare|gpuidle] [--alternate CYCLES] [--clock-probe]\n"
               "  tiny:    N (20000) empty kernels back to back, then cudaDeviceSynchronize\n"
               "  healthy: N (200) queued U us (2000) kernels, then cudaDeviceSynchronize\n",
               program);
  std::exit(exit_code);
}

int PositiveInt(const char* program, const char* flag, const char* value) {
  char* end = nullptr;
  const long parsed = std::strtol(value, &end, 10);
  if (end == value || *end != '\0' || parsed <= 0 || parsed > 100'000'000) {
    std::fprintf(stderr, "%s: %s wants a positive integer, got '%s'\n", program, flag, value);
    std::exit(2);
  }
  return static_cast<int>(parsed);
}

Options ParseOptions(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help") Usage(argv[0], 0);
    if (flag == "--clock-probe") {
      options.clock_probe = true;
      continue;
    }
    if (i + 1 >= argc) Usage(argv[0], 2);
    const char* value = argv[++i];
    if (flag == "--mode") {
      options.mode = value;
    } else if (flag == "--kernels") {
      options.kernels = PositiveInt(argv[0], "--kernels", value);
    } else if (flag == "--rounds") {
      options.rounds = PositiveInt(argv[0], "--rounds", value);
    } else if (flag == "--warmup") {
      options.warmup = PositiveInt(argv[0], "--warmup", value);
    } else if (flag == "--pair") {
      options.pair = value;
      if (!gpuidle_bench::KnownTracer(options.pair)) Usage(argv[0], 2);
    } else if (flag == "--alternate") {
      options.alternate = PositiveInt(argv[0], "--alternate", value);
    } else if (flag == "--kernel-us") {
      options.kernel_ns = int64_t{1000} * PositiveInt(argv[0], "--kernel-us", value);
    } else {
      Usage(argv[0], 2);
    }
  }
  if (options.mode != "tiny" && options.mode != "healthy") Usage(argv[0], 2);
  const bool tiny = options.mode == "tiny";
  if (options.kernels == 0) options.kernels = tiny ? 20'000 : 200;
  if (options.rounds == 0) options.rounds = tiny ? 15 : 5;
  return options;
}

// One round: launch everything, wait for it; returns the wall time in milliseconds.
double RunRound(const Options& options) {
  const auto start = std::chrono::steady_clock::now();
  if (options.mode == "tiny") {
    for (int k = 0; k < options.kernels; ++k) EmptyKernel<<<1, 1>>>();
  } else {
    for (int k = 0; k < options.kernels; ++k) SpinKernel<<<1, 1>>>(options.kernel_ns);
  }
  GPUIDLE_BENCH_CHECK_CUDA(cudaGetLastError());
  GPUIDLE_BENCH_CHECK_CUDA(cudaDeviceSynchronize());
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::vector<double> Rounds(const Options& options) {
  std::vector<double> times;
  for (int i = 0; i < options.rounds; ++i) times.push_back(RunRound(options));
  return times;
}

// Three phases in one process: untraced rounds before the tracer was ever started, traced
// rounds, untraced rounds after it stopped. Added time is traced - before; leftover is after -
// before (what a tracer that was switched off still costs, e.g. hooks CUPTI keeps installed).
int RunPhases(const Options& options) {
  const double b = Median(Rounds(options));
  if (!gpuidle_bench::StartTracer(options.pair)) return 1;
  const double t = Median(Rounds(options));
  if (!gpuidle_bench::StopTracer(options.pair)) return 1;
  const double a = Median(Rounds(options));
  std::printf(
      "result mode=%s pair=%s kernels=%d rounds=%d before_ms=%.3f traced_ms=%.3f "
      "after_ms=%.3f added_ms=%.3f leftover_ms=%.3f records=%lld "
      "launch_bound_pct=%.1f\n",
      options.mode.c_str(), options.pair.c_str(), options.kernels, options.rounds, b, t, a, t - b,
      a - b, gpuidle_bench::TracerRecords(options.pair),
      gpuidle_bench::TracerLaunchBoundPercent(options.pair));
  return 0;
}

// One tracer's turn: started, a round left out, the timed rounds, stopped and detached. The
// median of the timed rounds, or a negative value if the tracer could not be switched.
double TracerTurn(const Options& options, const std::string& tracer) {
  if (!gpuidle_bench::StartTracer(tracer)) return -1;
  RunRound(options);
  const double median = Median(Rounds(options));
  if (!gpuidle_bench::StopTracer(tracer) || !gpuidle_bench::DetachTracer(tracer)) return -1;
  return median;
}

int RunAlternating(const Options& options) {
  std::vector<double> untraced, bare_added, gpuidle_added;
  for (int cycle = 0; cycle < options.alternate; ++cycle) {
    double added[2] = {0, 0};     // bare, gpuidle
    double before[2] = {0, 0};    // the untraced rounds before each: a tracer that stayed
                                  // attached would show as a rise of the next ones
    const int first = cycle % 2;  // bare first in even cycles
    for (int turn = 0; turn < 2; ++turn) {
      const int which = (first + turn) % 2;
      before[which] = Median(Rounds(options));
      const double traced = TracerTurn(options, which == 0 ? "bare" : "gpuidle");
      if (traced < 0) return 1;
      added[which] = traced - before[which];
      untraced.push_back(before[which]);
    }
    bare_added.push_back(added[0]);
    gpuidle_added.push_back(added[1]);
    std::printf("cycle %d: bare_added_ms=%.3f gpuidle_added_ms=%.3f untraced_before_ms=%.3f,%.3f\n",
                cycle, added[0], added[1], before[0], before[1]);
  }
  const double b = Median(bare_added), g = Median(gpuidle_added);
  std::printf(
      "result mode=%s alternate=%d rounds=%d untraced_ms=%.3f bare_added_ms=%.3f "
      "gpuidle_added_ms=%.3f ratio=%.3f records=%lld launch_bound_pct=%.1f "
      "bare_launch_calls=%lld\n",
      options.mode.c_str(), options.alternate, options.rounds, Median(untraced), b, g,
      b > 0 ? g / b : -1.0, gpuidle_bench::TracerRecords("gpuidle"),
      gpuidle_bench::TracerLaunchBoundPercent("gpuidle"), gpuidle_bare_cupti_launch_calls());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = ParseOptions(argc, argv);
  GPUIDLE_BENCH_CHECK_CUDA(cudaFree(nullptr));  // context creation is not part of any round
  if (options.clock_probe) {
    gpuidle_bare_cupti_clock_probe();
    return 0;
  }

  for (int i = 0; i < options.warmup; ++i) RunRound(options);
  if (options.alternate > 0) return RunAlternating(options);
  if (!options.pair.empty()) return RunPhases(options);
  const std::vector<double> times = Rounds(options);
  const auto [min, max] = std::minmax_element(times.begin(), times.end());
  std::printf("result mode=%s kernels=%d rounds=%d median_ms=%.3f min_ms=%.3f max_ms=%.3f\n",
              options.mode.c_str(), options.kernels, options.rounds, Median(times), *min, *max);
  return 0;
}
