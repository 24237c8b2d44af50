// What gpuidle's own part of timing a call costs on the CPU, without CUPTI: the collector's API
// callback (site check, two clock reads, the per-thread append) driven by the fake CUPTI of the
// CPU tests, against the same fake calls with nothing subscribed. On the GPU machine the
// callback dispatch is CUPTI's and the clock is cuptiGetTimestamp; this measures the rest
// (docs/PERFORMANCE.md).
//
//   build/bin/timed_calls_benchmark [--calls N] [--rounds R]
//
// Prints per round and the medians: ns per call with the collector on and off, and the
// difference (one call = API entry + exit callbacks).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "collect/collector.h"
#include "collect/fake_cupti.h"

namespace {

using gpuidle::internal::Collector;
using gpuidle::internal::CollectorOptions;
namespace fake = gpuidle::internal::fake_cupti;

double NsPerCall(int calls) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) {
    fake::CallRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                         static_cast<uint32_t>(i + 1));
  }
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start)
             .count() /
         calls;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 200'000;
  int rounds = 9;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--calls") == 0) calls = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::atoi(argv[i + 1]);
  }
  if (calls <= 0 || rounds <= 0) {
    std::fprintf(stderr, "usage: %s [--calls N>0] [--rounds R>0]\n", argv[0]);
    return 2;
  }
  CollectorOptions options;
  options.buffer_bytes = 1 << 20;
  options.buffer_count = 2;
  options.driver.initialized = [] { return false; };
  options.driver.device_count = [] { return -1; };
  options.driver.device_name = [](int) { return std::string(); };
  std::vector<double> on, off;
  for (int r = 0; r < rounds; ++r) {
    // Off first, then on: the same fake calls, with and without gpuidle's callback.
    off.push_back(NsPerCall(calls));
    if (!Collector::Get().Start(fake::FakeApi(), options).ok()) return 1;
    on.push_back(NsPerCall(calls));
    auto timeline = Collector::Get().Stop();
    if (!timeline.ok() || timeline->calls.size() != static_cast<size_t>(calls)) {
      std::fprintf(stderr, "round %d: expected %d timed calls\n", r, calls);
      return 1;
    }
    std::printf("round %d: off %.1f ns/call, on %.1f ns/call\n", r, off.back(), on.back());
  }
  const double m_on = Median(on), m_off = Median(off);
  std::printf("result calls=%d rounds=%d off_ns=%.1f on_ns=%.1f gpuidle_ns=%.1f\n", calls, rounds,
              m_off, m_on, m_on - m_off);
  return 0;
}
