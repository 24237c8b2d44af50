// Lab probe for the GPU machine (issue 32), not part of the product: which throughput metrics
// gpuidle's PM sampler (collect/pm_sampling.h) chooses on this GPU, whether CUPTI lets this
// process sample, and a few samples of an idle device with the GPU's timestamps against
// CLOCK_REALTIME (the clock of CUPTI's activity records).
//
//   pm_sampling_probe [DEVICE]
#include <dlfcn.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "collect/cupti_api.h"
#include "collect/pm_sampling.h"

int main(int argc, char** argv) {
  using gpuidle::internal::DevicePmSampler;
  const int device = argc > 1 ? std::atoi(argv[1]) : 0;
  // A primary context, as a program's first CUDA call makes (no CUDA header needed).
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW);
  if (cuda == nullptr) return std::printf("no libcuda.so.1\n"), 1;
  using Init = int (*)(unsigned);
  using Retain = int (*)(void**, int);
  const auto init = reinterpret_cast<Init>(dlsym(cuda, "cuInit"));
  const auto retain = reinterpret_cast<Retain>(dlsym(cuda, "cuDevicePrimaryCtxRetain"));
  void* ctx = nullptr;
  if (init(0) != 0 || retain(&ctx, device) != 0) return std::printf("no CUDA context\n"), 1;
  absl::StatusOr<const gpuidle::internal::CuptiApi*> api = gpuidle::internal::LoadCupti();
  if (!api.ok()) return std::printf("CUPTI: %s\n", std::string(api.status().message()).c_str()), 1;
  auto sampler = DevicePmSampler::Create(**api, device, 10'000'000);
  if (!sampler.ok()) {
    std::printf("PM sampling unavailable: %s\n", std::string(sampler.status().message()).c_str());
    return 2;
  }
  std::printf("chip %s, %zu metrics:\n", (*sampler)->chip().c_str(), (*sampler)->metrics().size());
  for (const std::string& m : (*sampler)->metrics()) std::printf("  %s\n", m.c_str());
  if (!(*sampler)->Start().ok()) return std::printf("start failed\n"), 1;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::vector<gpuidle::internal::GpuThroughputSample> out;
  bool overflow = false;
  absl::Status st = (*sampler)->Decode(&out, &overflow);
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  const long long realtime = now.tv_sec * 1'000'000'000LL + now.tv_nsec;
  std::printf("decode: %s, %zu samples, overflow %d\n", st.ok() ? "ok" : "failed", out.size(),
              overflow ? 1 : 0);
  if (!out.empty()) {
    const auto& s = out.back();
    std::printf("last sample [%lld, %lld] ns; CLOCK_REALTIME now %lld: %.3f ms after its end\n",
                static_cast<long long>(s.start_ns), static_cast<long long>(s.end_ns), realtime,
                static_cast<double>(realtime - s.end_ns) / 1e6);
    std::printf("  sm %.1f tensor %.1f dram %.1f pcie %.3g/%.3g nvlink %.3g/%.3g\n",
                s.sm_active_pct, s.tensor_active_pct, s.dram_pct, s.pcie_read_bytes_per_s,
                s.pcie_write_bytes_per_s, s.nvlink_read_bytes_per_s, s.nvlink_write_bytes_per_s);
  }
  return (*sampler)->Stop().ok() ? 0 : 1;
}
