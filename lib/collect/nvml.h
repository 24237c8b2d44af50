// The driver's NVML, loaded at run time (dlopen "libnvidia-ml.so.1", never linked, never
// required): readings of a device's state for the GPU-metrics sampler (session/
// gpu_metrics_sampler.h). NVML's few functions and structs are declared in nvml.cc from its
// documented ABI (no nvml.h is needed). Every failure (no library, a missing symbol, an init
// error, no permission) is a Status with a clear message; nothing prints.
#ifndef GPUIDLE_LIB_COLLECT_NVML_H_
#define GPUIDLE_LIB_COLLECT_NVML_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// The library NVML is loaded from when none is named: GPUIDLE_NVML_LIBRARY (for tests), else
// "libnvidia-ml.so.1".
std::string DefaultNvmlLibrary();

// An NVML device handle (nvmlDevice_t), valid while its Nvml lives.
struct NvmlDevice {
  void* handle = nullptr;
};

// A compute process NVML lists on a device.
struct NvmlProcess {
  int64_t pid = 0;
  uint64_t memory_bytes = 0;  // 0 where NVML does not say (NVML_VALUE_NOT_AVAILABLE)
};

// One of NVML's per-process utilisation samples, its time on the timeline's clock.
struct NvmlProcessUtilization {
  int64_t pid = 0;
  int64_t time_ns = 0;
  uint32_t sm_percent = 0;  // its kernels' share of the device's time in NVML's sample period
  uint32_t memory_percent = 0;
};

class Nvml {
 public:
  // Loads the library (library "" = DefaultNvmlLibrary()) and initialises NVML (nvmlInit_v2).
  // Unavailable when it cannot be loaded or lacks its entry points; the init error otherwise.
  static absl::StatusOr<std::unique_ptr<Nvml>> Load(const std::string& library = "");
  ~Nvml();  // nvmlShutdown, then the library is closed
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  // The UUIDs ("GPU-...") of NVML's devices, in NVML's index order (nvidia-smi's); "" for a
  // device whose UUID NVML did not give.
  absl::StatusOr<std::vector<std::string>> DeviceUuids();
  // The device of a UUID ("GPU-..."); NotFound when NVML has none.
  absl::StatusOr<NvmlDevice> FindDevice(const std::string& uuid);

  // One reading of the device at the time of the call (time_ns: TimelineNowNs(); device left 0).
  // A call that fails leaves its field 0; an error only when every call failed (its message
  // names the first failure), or Cancelled when *stop became true between two calls (each
  // call is checked for it first: a stop never waits for more than one NVML call).
  absl::StatusOr<GpuMetricSample> ReadMetrics(NvmlDevice device,
                                              const std::atomic<bool>* stop = nullptr);
  // The compute processes on the device (nvmlDeviceGetComputeRunningProcesses_v3, else _v2).
  absl::StatusOr<std::vector<NvmlProcess>> ComputeProcesses(NvmlDevice device);
  // NVML's per-process utilisation samples taken after *last_seen_us (CLOCK_REALTIME in
  // microseconds; 0: all NVML keeps), which moves to the newest sample returned. None new is an
  // empty list, not an error.
  absl::StatusOr<std::vector<NvmlProcessUtilization>> ProcessUtilization(NvmlDevice device,
                                                                         uint64_t* last_seen_us);

  struct Functions;  // the resolved entry points (nvml.cc)

 private:
  Nvml(void* library, std::unique_ptr<Functions> functions);
  absl::Status Error(const char* call, int result) const;

  void* library_;
  std::unique_ptr<Functions> f_;
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_NVML_H_
