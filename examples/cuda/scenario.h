// Shared by the ground-truth scenarios in this folder: each program makes the GPU idle for one
// known reason, so gpuidle's answer can be checked against it (README.md lists them).
//
//   int main(int argc, char** argv) {
//     const scenario::Args args = scenario::ParseArgs(argc, argv, /*default_iterations=*/100);
//     GPUIDLE_EXAMPLE_PROFILE();   // the whole body runs inside gpuidle::ScopedProfile (_api)
//     scenario::WarmUp();
//     for (int i = 0; i < args.iterations; ++i) {
//       scenario::Step step;       // gpuidle::StepMarker in the _api build, nothing otherwise
//       scenario::Spin<<<1, 1>>>(scenario::kMillisecond);
//     }
//   }
//
// Durations are made deterministic on purpose: "GPU work" is a kernel that busy-waits on the
// GPU's nanosecond clock, "host work" busy-waits on the host clock (a sleeping thread would
// look the same to gpuidle, but spinning keeps the timings tight).
//
// Every scenario is built twice: `gpuidle_example_<name>` knows nothing of gpuidle (profile it
// with `gpuidle run -- ...` or LD_PRELOAD), `gpuidle_example_<name>_api` is compiled with
// GPUIDLE_EXAMPLE_WITH_API and uses the C++ API (include/gpuidle/profiler.h) instead.
//
// The header defines kernels: include it from the one source file of a program.
#ifndef GPUIDLE_EXAMPLES_CUDA_SCENARIO_H_
#define GPUIDLE_EXAMPLES_CUDA_SCENARIO_H_

#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#ifdef GPUIDLE_EXAMPLE_WITH_API
#include "gpuidle/profiler.h"
#else
#include <nvtx3/nvToolsExt.h>
#endif

// Exits with a message naming the failed call: a scenario that cannot run must not look like
// one that ran and stayed idle.
#define GPUIDLE_CHECK_CUDA(call)                                                \
  do {                                                                          \
    const cudaError_t gpuidle_check_error = (call);                             \
    if (gpuidle_check_error != cudaSuccess) {                                   \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, \
                   cudaGetErrorString(gpuidle_check_error));                    \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

// Kernel launches report errors afterwards, through cudaGetLastError.
#define GPUIDLE_CHECK_LAUNCH() GPUIDLE_CHECK_CUDA(cudaGetLastError())

// In the _api build the rest of the enclosing scope is profiled by gpuidle's C++ API; the plain
// build leaves profiling to `gpuidle run` / LD_PRELOAD.
#ifdef GPUIDLE_EXAMPLE_WITH_API
#define GPUIDLE_EXAMPLE_PROFILE() gpuidle::ScopedProfile gpuidle_example_profile
#else
#define GPUIDLE_EXAMPLE_PROFILE() static_cast<void>(0)
#endif

namespace scenario {

inline constexpr int64_t kMicrosecond = 1'000;
inline constexpr int64_t kMillisecond = 1'000'000;

// How the data range of host_work_marked is marked, for the line each program prints.
#ifdef GPUIDLE_EXAMPLE_WITH_API
inline constexpr const char* kDataMarker = "gpuidle::DataRange";
#else
inline constexpr const char* kDataMarker = "NVTX range 'data_load'";
#endif

// Nanoseconds as milliseconds, for printing.
inline double Ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

struct Args {
  int iterations = 0;
};

// Accepts `--iterations N` and `--iterations=N`; anything else prints the usage and exits.
inline Args ParseArgs(int argc, char** argv, int default_iterations) {
  Args args;
  args.iterations = default_iterations;
  for (int i = 1; i < argc; ++i) {
    const char* value = nullptr;
    if (std::strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      value = argv[++i];
    } else if (std::strncmp(argv[i], "--iterations=", 13) == 0) {
      value = argv[i] + 13;
    } else {
      std::fprintf(stderr, "usage: %s [--iterations N]   (default %d)\n", argv[0],
                   default_iterations);
      std::exit(std::strcmp(argv[i], "--help") == 0 ? 0 : 2);
    }
    char* end = nullptr;
    const long parsed = std::strtol(value, &end, 10);
    if (end == value || *end != '\0' || parsed <= 0 || parsed > 100'000'000) {
      std::fprintf(stderr, "%s: --iterations wants a positive integer, got '%s'\n", argv[0], value);
      std::exit(2);
    }
    args.iterations = static_cast<int>(parsed);
  }
  return args;
}

// The GPU's global nanosecond timer: the same clock on every SM, unlike clock64().
__device__ __forceinline__ uint64_t GlobalTimerNs() {
  uint64_t ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

// Busy-waits on the GPU for `duration_ns`, for kernels that stand in for real work.
__device__ __forceinline__ void SpinFor(int64_t duration_ns) {
  const uint64_t start = GlobalTimerNs();
  while (GlobalTimerNs() - start < static_cast<uint64_t>(duration_ns)) {
  }
}

// Keeps the GPU busy for `duration_ns`. One thread is enough: busy means "a kernel executes",
// not "the SMs are full". Launch as Spin<<<1, 1, 0, stream>>>(ns).
__global__ void Spin(int64_t duration_ns) { SpinFor(duration_ns); }

// The smallest possible kernel: its cost is all launch and dispatch.
__global__ void Empty() {}

// Host work that uses the CPU (decoding, augmenting, logging) for `duration_ns`. Returns a
// value so that callers can pretend to use the result.
inline double HostWork(int64_t duration_ns, double seed = 1.0) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(duration_ns);
  double x = seed;
  while (std::chrono::steady_clock::now() < deadline) {
    x = x * 0.999 + 1.0;
  }
  return x;
}

// Creates the context and loads the kernels before the scenario starts, so that the first
// iteration is not a one-off stall (CUDA loads modules lazily, at the first launch).
inline void WarmUp() {
  GPUIDLE_CHECK_CUDA(cudaFree(nullptr));
  Spin<<<1, 1>>>(0);
  GPUIDLE_CHECK_LAUNCH();
  Empty<<<1, 1>>>();
  GPUIDLE_CHECK_LAUNCH();
  GPUIDLE_CHECK_CUDA(cudaDeviceSynchronize());
}

// Wall-clock milliseconds since construction, for the line each scenario prints.
class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double ElapsedMs() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

// One training step: gpuidle::StepMarker in the _api build, nothing in the plain build (the
// scenarios' causes do not depend on steps).
class Step {
 public:
  Step() {}  // user-provided: an unused trivial local would draw nvcc's warning #177
  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;

 private:
#ifdef GPUIDLE_EXAMPLE_WITH_API
  gpuidle::StepMarker marker_;
#endif
};

// The thread waits for input: gpuidle::DataRange in the _api build, an NVTX range named
// "data_load" (one of gpuidle's default data-range patterns) in the plain build.
class DataLoad {
 public:
#ifdef GPUIDLE_EXAMPLE_WITH_API
  DataLoad() = default;
#else
  DataLoad() { nvtxRangePushA("data_load"); }
  ~DataLoad() { nvtxRangePop(); }
#endif
  DataLoad(const DataLoad&) = delete;
  DataLoad& operator=(const DataLoad&) = delete;

 private:
#ifdef GPUIDLE_EXAMPLE_WITH_API
  gpuidle::DataRange range_;
#endif
};

}  // namespace scenario

#endif  // GPUIDLE_EXAMPLES_CUDA_SCENARIO_H_
