// The GPU-metrics sampler of a live collection (issue 32): a thread of its own ("gpuidle-nvml")
// that reads, every period, the state of each device the process may use through the driver's
// NVML (collect/nvml.h: clocks and their event reasons, power and its limit, temperature,
// utilisation, PCIe link, memory), and the other processes on them. Started when a collection
// starts, stopped when it stops; its readings become Timeline::gpu_metrics and gpu_processes.
//
// Which devices: the NVML devices CUDA_VISIBLE_DEVICES selects (all when it is not set; an
// integer entry is taken as NVML's index, a "GPU-..." entry as a UUID or its prefix, as CUDA
// reads it; MIG instances are not sampled), or the CUDA devices' UUIDs where a source of them is
// given. The CUDA driver is never called from the sampler's thread (CUPTI would see the calls).
// At the stop the readings are mapped to the timeline's CUDA ordinals by UUID (MoveInto); a
// device the timeline does not have is dropped, never misattributed.
//
// Bounded: at most max_samples readings per collection; beyond it every other reading kept is
// dropped and the period doubled (a warning says so). A stop waits for at most one NVML call.
#ifndef GPUIDLE_LIB_SESSION_GPU_METRICS_SAMPLER_H_
#define GPUIDLE_LIB_SESSION_GPU_METRICS_SAMPLER_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "model/timeline.h"

namespace gpuidle::internal {

class Nvml;

class GpuMetricsSampler {
 public:
  static constexpr size_t kMaxSamples = 36'000;             // an hour at 100 ms
  static constexpr int64_t kDefaultPeriodNs = 100'000'000;  // ProfilerOptions' default
  // At most this many other processes are remembered per collection.
  static constexpr size_t kMaxProcesses = 4096;

  struct Options {
    int64_t period_ns = kDefaultPeriodNs;  // 0 or less: the sampler does nothing
    size_t max_samples = kMaxSamples;      // readings (all devices together)
    std::string library;                   // "": DefaultNvmlLibrary()
    // CUDA_VISIBLE_DEVICES as the process has it (nullopt: not set).
    std::optional<std::string> cuda_visible_devices;
    // The UUIDs of the CUDA devices by ordinal, or an empty list while they are not known;
    // asked on the sampler's thread until it gives some. Unset: CUDA_VISIBLE_DEVICES decides.
    std::function<std::vector<std::string>()> cuda_device_uuids;
    int64_t own_pid = 0;  // the collecting process, never "another process"; 0: getpid()
  };

  // What a collection's sampler gathered. GpuMetricSample::device and GpuProcessSeen::device are
  // indices into uuids until MoveInto maps them to CUDA ordinals.
  struct Result {
    // Why NVML gave nothing: not loaded, no device; Cancelled: stopped before NVML was read;
    // FailedPrecondition: off.
    absl::Status status;
    std::vector<std::string> uuids;  // the devices sampled
    std::vector<int> cuda_ordinals;  // parallel: the ordinal where the source said, else -1
    std::vector<GpuMetricSample> samples;
    std::vector<GpuProcessSeen> processes;
    uint64_t readings = 0;         // device readings tried
    uint64_t failed_readings = 0;  // of them, those where every NVML call failed
    absl::Status first_failure;    // of a reading
    absl::Status process_failure;  // the first failure to list processes or their use
    int halvings = 0;              // times the rate was halved to stay within the bound
    int64_t period_ns = 0;         // the period at the end
    size_t max_samples = 0;
  };

  explicit GpuMetricsSampler(Options options);
  // The period alone; the rest as defaults, CUDA_VISIBLE_DEVICES from the environment.
  explicit GpuMetricsSampler(int64_t period_ns);
  // Stops the thread (what it gathered is lost). After fork() the child has no thread behind
  // it: the session forgets (leaks) its sampler there, never destroys it.
  ~GpuMetricsSampler();
  GpuMetricsSampler(const GpuMetricsSampler&) = delete;
  GpuMetricsSampler& operator=(const GpuMetricsSampler&) = delete;

  // Starts the thread, which loads NVML and reads at once, then every period. Nothing when the
  // period is 0 or it already runs.
  void Start();
  // Stops and joins the thread; what it gathered (status "off" where it never ran).
  Result Stop();

  // Puts result into timeline: readings and processes mapped to CUDA ordinals by UUID (the
  // timeline's visible_device_uuids, else the ordinals the sampler learned), of the timeline's
  // devices only, sorted by time; the processes' busy samples sorted. Lines about a halved rate,
  // failed readings or unknown processes go to timeline->info.warnings. Says nothing about an
  // NVML that could not be loaded (result.status: the session decides).
  static void MoveInto(Result result, Timeline* timeline);

 private:
  struct Device;
  void Run();
  void ResolveDevices(Nvml& nvml, std::vector<Device>* devices);
  void ReadDevice(Nvml& nvml, Device& device);
  void Store(const GpuMetricSample& sample);
  void NoteBusy(int device, int64_t pid, int64_t time_ns);
  GpuProcessSeen* ProcessEntry(int device, int64_t pid, int64_t time_ns);
  int UuidIndex(const std::string& uuid, int cuda_ordinal);

  Options options_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;  // for the wait only
  std::condition_variable wake_;
  bool devices_from_cuda_ = false;
  bool fallback_done_ = false;
  size_t busy_samples_ = 0;
  Result result_;  // the thread's until it is joined
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_SESSION_GPU_METRICS_SAMPLER_H_
