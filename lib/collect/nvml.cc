#include "collect/nvml.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "collect/clock.h"
#include "core/text_safety.h"

namespace gpuidle::internal {

// NVML's ABI, declared from its documentation: nvmlReturn_t and the enums are C ints, a device
// is an opaque pointer.
namespace nvml_abi {

using Return = int;
using Device = void*;
constexpr Return kSuccess = 0;                // NVML_SUCCESS
constexpr Return kErrorNotFound = 6;          // NVML_ERROR_NOT_FOUND
constexpr Return kErrorInsufficientSize = 7;  // NVML_ERROR_INSUFFICIENT_SIZE
constexpr int kClockSm = 1;                   // NVML_CLOCK_SM
constexpr int kClockMem = 2;                  // NVML_CLOCK_MEM
constexpr int kTemperatureGpu = 0;            // NVML_TEMPERATURE_GPU
constexpr unsigned kUuidBufferSize = 96;      // NVML_DEVICE_UUID_V2_BUFFER_SIZE
// NVML_VALUE_NOT_AVAILABLE: usedGpuMemory where NVML cannot say (Windows WDDM, some containers).
constexpr unsigned long long kValueNotAvailable = ~0ULL;

struct Utilization {  // nvmlUtilization_t
  unsigned gpu;
  unsigned memory;
};
struct Memory {  // nvmlMemory_t
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
struct ProcessInfo {  // nvmlProcessInfo_t (_v3), nvmlProcessInfo_v2_t (_v2): the same layout
  unsigned pid;
  unsigned long long usedGpuMemory;
  unsigned gpuInstanceId;
  unsigned computeInstanceId;
};
struct ProcessUtilizationSample {  // nvmlProcessUtilizationSample_t
  unsigned pid;
  unsigned long long timeStamp;  // CPU time stamp, microseconds (CLOCK_REALTIME)
  unsigned smUtil;
  unsigned memUtil;
  unsigned encUtil;
  unsigned decUtil;
};

}  // namespace nvml_abi

struct Nvml::Functions {
  using R = nvml_abi::Return;
  using D = nvml_abi::Device;
  R (*init)() = nullptr;
  R (*shutdown)() = nullptr;
  const char* (*error_string)(R) = nullptr;
  R (*device_count)(unsigned*) = nullptr;
  R (*handle_by_index)(unsigned, D*) = nullptr;
  R (*handle_by_uuid)(const char*, D*) = nullptr;
  R (*uuid)(D, char*, unsigned) = nullptr;
  R (*clock)(D, int, unsigned*) = nullptr;
  R (*max_clock)(D, int, unsigned*) = nullptr;
  R (*power)(D, unsigned*) = nullptr;
  R (*power_limit)(D, unsigned*) = nullptr;
  R (*temperature)(D, int, unsigned*) = nullptr;
  R (*utilization)(D, nvml_abi::Utilization*) = nullptr;
  R (*clock_events)(D, unsigned long long*) = nullptr;
  const char* clock_events_name = "nvmlDeviceGetCurrentClocksEventReasons";
  R (*pcie_generation)(D, unsigned*) = nullptr;
  R (*pcie_generation_max)(D, unsigned*) = nullptr;
  R (*pcie_width)(D, unsigned*) = nullptr;
  R (*pcie_width_max)(D, unsigned*) = nullptr;
  R (*pcie_replays)(D, unsigned*) = nullptr;
  R (*memory)(D, nvml_abi::Memory*) = nullptr;
  R (*processes)(D, unsigned*, nvml_abi::ProcessInfo*) = nullptr;
  const char* processes_name = "nvmlDeviceGetComputeRunningProcesses_v3";
  R(*process_utilization)
  (D, nvml_abi::ProcessUtilizationSample*, unsigned*, unsigned long long) = nullptr;
};

namespace {

template <typename F>
void Resolve(void* library, const char* name, F* f) {
  *f = reinterpret_cast<F>(dlsym(library, name));
}

std::string DlError() {
  const char* e = dlerror();
  return ForMessage(e != nullptr ? e : "unknown error", 160);
}

}  // namespace

std::string DefaultNvmlLibrary() {
  const char* path = std::getenv("GPUIDLE_NVML_LIBRARY");
  return path != nullptr && *path != '\0' ? std::string(path) : std::string("libnvidia-ml.so.1");
}

absl::StatusOr<std::unique_ptr<Nvml>> Nvml::Load(const std::string& library) {
  const std::string path = library.empty() ? DefaultNvmlLibrary() : library;
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("NVML cannot be loaded (", ForMessage(path, 160), "): ", DlError()));
  }
  auto f = std::make_unique<Functions>();
  Resolve(handle, "nvmlInit_v2", &f->init);
  Resolve(handle, "nvmlShutdown", &f->shutdown);
  Resolve(handle, "nvmlDeviceGetHandleByUUID", &f->handle_by_uuid);
  for (const char* name : {"nvmlInit_v2", "nvmlShutdown", "nvmlDeviceGetHandleByUUID"}) {
    if (dlsym(handle, name) == nullptr) {
      dlclose(handle);
      return absl::UnavailableError(absl::StrCat("NVML library ", ForMessage(path, 160), " lacks ",
                                                 name, " (too old, or not NVML)"));
    }
  }
  Resolve(handle, "nvmlErrorString", &f->error_string);
  Resolve(handle, "nvmlDeviceGetCount_v2", &f->device_count);
  Resolve(handle, "nvmlDeviceGetHandleByIndex_v2", &f->handle_by_index);
  Resolve(handle, "nvmlDeviceGetUUID", &f->uuid);
  Resolve(handle, "nvmlDeviceGetClockInfo", &f->clock);
  Resolve(handle, "nvmlDeviceGetMaxClockInfo", &f->max_clock);
  Resolve(handle, "nvmlDeviceGetPowerUsage", &f->power);
  Resolve(handle, "nvmlDeviceGetEnforcedPowerLimit", &f->power_limit);
  Resolve(handle, "nvmlDeviceGetTemperature", &f->temperature);
  Resolve(handle, "nvmlDeviceGetUtilizationRates", &f->utilization);
  Resolve(handle, f->clock_events_name, &f->clock_events);
  if (f->clock_events == nullptr) {  // drivers before R535 know the older name only
    f->clock_events_name = "nvmlDeviceGetCurrentClocksThrottleReasons";
    Resolve(handle, f->clock_events_name, &f->clock_events);
  }
  Resolve(handle, "nvmlDeviceGetCurrPcieLinkGeneration", &f->pcie_generation);
  Resolve(handle, "nvmlDeviceGetMaxPcieLinkGeneration", &f->pcie_generation_max);
  Resolve(handle, "nvmlDeviceGetCurrPcieLinkWidth", &f->pcie_width);
  Resolve(handle, "nvmlDeviceGetMaxPcieLinkWidth", &f->pcie_width_max);
  Resolve(handle, "nvmlDeviceGetPcieReplayCounter", &f->pcie_replays);
  Resolve(handle, "nvmlDeviceGetMemoryInfo", &f->memory);
  Resolve(handle, f->processes_name, &f->processes);
  if (f->processes == nullptr) {
    f->processes_name = "nvmlDeviceGetComputeRunningProcesses_v2";
    Resolve(handle, f->processes_name, &f->processes);
  }
  Resolve(handle, "nvmlDeviceGetProcessUtilization", &f->process_utilization);

  if (const nvml_abi::Return r = f->init(); r != nvml_abi::kSuccess) {
    const char* text = f->error_string != nullptr ? f->error_string(r) : nullptr;
    dlclose(handle);
    return absl::UnavailableError(absl::StrCat(
        "NVML did not initialise (nvmlInit_v2: ", text != nullptr ? ForMessage(text, 120) : "error",
        ", code ", r, ")"));
  }
  return std::unique_ptr<Nvml>(new Nvml(handle, std::move(f)));
}

Nvml::Nvml(void* library, std::unique_ptr<Functions> functions)
    : library_(library), f_(std::move(functions)) {}

Nvml::~Nvml() {
  f_->shutdown();
  dlclose(library_);
}

absl::Status Nvml::Error(const char* call, int result) const {
  const char* text = f_->error_string != nullptr ? f_->error_string(result) : nullptr;
  std::string message = absl::StrCat(call, ": ", text != nullptr ? ForMessage(text, 120) : "error",
                                     " (NVML code ", result, ")");
  switch (result) {
    case 4:  // NVML_ERROR_NO_PERMISSION
      return absl::PermissionDeniedError(message);
    case 3:  // NVML_ERROR_NOT_SUPPORTED
      return absl::UnimplementedError(message);
    case nvml_abi::kErrorNotFound:
      return absl::NotFoundError(message);
    default:
      return absl::UnavailableError(message);
  }
}

absl::StatusOr<std::vector<std::string>> Nvml::DeviceUuids() {
  if (f_->device_count == nullptr || f_->handle_by_index == nullptr || f_->uuid == nullptr) {
    return absl::UnimplementedError(
        "NVML lacks nvmlDeviceGetCount_v2, "
        "nvmlDeviceGetHandleByIndex_v2 or nvmlDeviceGetUUID");
  }
  unsigned count = 0;
  if (const int r = f_->device_count(&count); r != nvml_abi::kSuccess) {
    return Error("nvmlDeviceGetCount_v2", r);
  }
  std::vector<std::string> uuids;
  for (unsigned i = 0; i < count; ++i) {
    nvml_abi::Device device = nullptr;
    char text[nvml_abi::kUuidBufferSize] = {};
    if (f_->handle_by_index(i, &device) == nvml_abi::kSuccess &&
        f_->uuid(device, text, sizeof(text)) == nvml_abi::kSuccess) {
      text[sizeof(text) - 1] = '\0';
      uuids.emplace_back(text);
    } else {
      uuids.emplace_back();
    }
  }
  return uuids;
}

absl::StatusOr<NvmlDevice> Nvml::FindDevice(const std::string& uuid) {
  nvml_abi::Device device = nullptr;
  if (const int r = f_->handle_by_uuid(uuid.c_str(), &device); r != nvml_abi::kSuccess) {
    return Error("nvmlDeviceGetHandleByUUID", r);
  }
  return NvmlDevice{device};
}

absl::StatusOr<GpuMetricSample> Nvml::ReadMetrics(NvmlDevice device,
                                                  const std::atomic<bool>* stop) {
  GpuMetricSample s;
  s.time_ns = TimelineNowNs();
  absl::Status first_failure;
  int calls = 0;
  int failures = 0;
  bool stopped = false;
  // Each call: skipped (a failure) where NVML lacks it; its value only where it succeeded.
  auto call = [&](const char* name, auto&& run) {
    if (stopped || (stop != nullptr && stop->load(std::memory_order_relaxed))) {
      stopped = true;
      return false;
    }
    ++calls;
    const int r = run();
    if (r == nvml_abi::kSuccess) return true;
    ++failures;
    if (first_failure.ok()) {
      first_failure =
          r < 0 ? absl::UnimplementedError(absl::StrCat("NVML lacks ", name)) : Error(name, r);
    }
    return false;
  };
  constexpr int kMissing = -1;
  nvml_abi::Device d = device.handle;
  unsigned v = 0;
  auto u32 = [&](const char* name, auto fn, auto... args) -> uint32_t {
    v = 0;
    const bool ok = call(name, [&] { return fn != nullptr ? fn(d, args..., &v) : kMissing; });
    return ok ? static_cast<uint32_t>(v) : 0;
  };
  s.sm_clock_mhz = u32("nvmlDeviceGetClockInfo", f_->clock, nvml_abi::kClockSm);
  s.sm_clock_max_mhz = u32("nvmlDeviceGetMaxClockInfo", f_->max_clock, nvml_abi::kClockSm);
  s.memory_clock_mhz = u32("nvmlDeviceGetClockInfo", f_->clock, nvml_abi::kClockMem);
  s.memory_clock_max_mhz = u32("nvmlDeviceGetMaxClockInfo", f_->max_clock, nvml_abi::kClockMem);
  s.power_mw = u32("nvmlDeviceGetPowerUsage", f_->power);
  s.power_limit_mw = u32("nvmlDeviceGetEnforcedPowerLimit", f_->power_limit);
  s.temperature_c = u32("nvmlDeviceGetTemperature", f_->temperature, nvml_abi::kTemperatureGpu);
  nvml_abi::Utilization utilization{};
  if (call("nvmlDeviceGetUtilizationRates", [&] {
        return f_->utilization != nullptr ? f_->utilization(d, &utilization) : kMissing;
      })) {
    s.utilization_percent = utilization.gpu;
  }
  unsigned long long reasons = 0;
  if (call(f_->clock_events_name, [&] {
        return f_->clock_events != nullptr ? f_->clock_events(d, &reasons) : kMissing;
      })) {
    s.clock_events = reasons;
    s.has_clock_events = true;
  }
  s.pcie_generation = u32("nvmlDeviceGetCurrPcieLinkGeneration", f_->pcie_generation);
  s.pcie_generation_max = u32("nvmlDeviceGetMaxPcieLinkGeneration", f_->pcie_generation_max);
  s.pcie_width = u32("nvmlDeviceGetCurrPcieLinkWidth", f_->pcie_width);
  s.pcie_width_max = u32("nvmlDeviceGetMaxPcieLinkWidth", f_->pcie_width_max);
  s.pcie_replays = u32("nvmlDeviceGetPcieReplayCounter", f_->pcie_replays);
  nvml_abi::Memory memory{};
  if (call("nvmlDeviceGetMemoryInfo",
           [&] { return f_->memory != nullptr ? f_->memory(d, &memory) : kMissing; })) {
    s.memory_used_bytes = memory.used;
    s.memory_total_bytes = memory.total;
  }
  if (stopped) return absl::CancelledError("GPU metrics: stopped during a reading");
  if (calls > 0 && failures == calls) {
    return absl::Status(first_failure.code(),
                        absl::StrCat("every NVML reading failed, first ", first_failure.message()));
  }
  return s;
}

absl::StatusOr<std::vector<NvmlProcess>> Nvml::ComputeProcesses(NvmlDevice device) {
  if (f_->processes == nullptr) {
    return absl::UnimplementedError("NVML lacks nvmlDeviceGetComputeRunningProcesses");
  }
  std::vector<nvml_abi::ProcessInfo> infos(16);
  for (int attempt = 0;; ++attempt) {
    unsigned count = static_cast<unsigned>(infos.size());
    const int r = f_->processes(device.handle, &count, infos.data());
    if (r == nvml_abi::kSuccess) {
      infos.resize(std::min<size_t>(count, infos.size()));
      break;
    }
    // More processes than room: NVML says how many; asked again with room to spare (a process
    // may start in between), a few times at most.
    if (r != nvml_abi::kErrorInsufficientSize || attempt == 3) {
      return Error(f_->processes_name, r);
    }
    infos.resize(std::max<size_t>(count, infos.size()) * 2);
  }
  std::vector<NvmlProcess> out;
  out.reserve(infos.size());
  for (const nvml_abi::ProcessInfo& info : infos) {
    out.push_back(
        {static_cast<int64_t>(info.pid), info.usedGpuMemory == nvml_abi::kValueNotAvailable
                                             ? 0
                                             : static_cast<uint64_t>(info.usedGpuMemory)});
  }
  return out;
}

absl::StatusOr<std::vector<NvmlProcessUtilization>> Nvml::ProcessUtilization(
    NvmlDevice device, uint64_t* last_seen_us) {
  if (f_->process_utilization == nullptr) {
    return absl::UnimplementedError("NVML lacks nvmlDeviceGetProcessUtilization");
  }
  // First the count (a null array), then the samples; NOT_FOUND: none since last_seen_us.
  unsigned count = 0;
  int r = f_->process_utilization(device.handle, nullptr, &count, *last_seen_us);
  if (r == nvml_abi::kErrorNotFound) return std::vector<NvmlProcessUtilization>{};
  if (r != nvml_abi::kSuccess && r != nvml_abi::kErrorInsufficientSize) {
    return Error("nvmlDeviceGetProcessUtilization", r);
  }
  std::vector<nvml_abi::ProcessUtilizationSample> samples(std::max(count, 1u) + 4);
  count = static_cast<unsigned>(samples.size());
  r = f_->process_utilization(device.handle, samples.data(), &count, *last_seen_us);
  if (r == nvml_abi::kErrorNotFound) return std::vector<NvmlProcessUtilization>{};
  if (r != nvml_abi::kSuccess) return Error("nvmlDeviceGetProcessUtilization", r);
  samples.resize(std::min<size_t>(count, samples.size()));
  const int64_t offset_ns = WallClockOffsetNs();  // Unix time minus timeline time
  std::vector<NvmlProcessUtilization> out;
  out.reserve(samples.size());
  for (const nvml_abi::ProcessUtilizationSample& sample : samples) {
    if (sample.timeStamp > *last_seen_us) *last_seen_us = sample.timeStamp;
    NvmlProcessUtilization u;
    u.pid = static_cast<int64_t>(sample.pid);
    u.time_ns = static_cast<int64_t>(sample.timeStamp) * 1000 - offset_ns;
    u.sm_percent = sample.smUtil;
    u.memory_percent = sample.memUtil;
    out.push_back(u);
  }
  return out;
}

}  // namespace gpuidle::internal
