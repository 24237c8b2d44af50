// A fake of the driver's NVML (libnvidia-ml.so.1) for the GPU-metrics tests on machines without
// a GPU: the entry points gpuidle's collect/nvml.cc resolves, with scripted values. Two devices:
// device 0 runs at its power cap (the power-cap clock-event bit) on a PCIe link below its
// maximum, with another process (and the calling process) on it; device 1 is quiet. Only the
// older clock-event name (nvmlDeviceGetCurrentClocksThrottleReasons) is exported, so that the
// fallback is exercised. Tests change the script through the exported fake_nvml_set_* functions
// (dlsym on the same library) or, before nvmlInit_v2, FAKE_NVML_INIT_RESULT.
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#define FAKE_NVML_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr int kSuccess = 0;
constexpr int kErrorUninitialized = 1;
constexpr int kErrorInvalidArgument = 2;
constexpr int kErrorNotFound = 6;
constexpr int kErrorInsufficientSize = 7;

struct FakeDevice {
  const char* uuid;
  unsigned sm_clock, sm_clock_max, mem_clock, mem_clock_max;
  unsigned power_mw, power_limit_mw, temperature_c, utilization;
  unsigned long long reasons;
  unsigned pcie_gen, pcie_gen_max, pcie_width, pcie_width_max, replays;
  unsigned long long memory_total, memory_used;
};

FakeDevice g_devices[2] = {
    {"GPU-11111111-2222-3333-4444-555555555555", 1410, 1980, 2619, 2619, 700000, 700000, 71, 97,
     0x4, 4, 5, 16, 16, 3, 80ULL << 30, 40ULL << 30},
    {"GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", 1980, 1980, 2619, 2619, 90000, 700000, 35, 0, 0x1,
     5, 5, 8, 16, 0, 80ULL << 30, 1ULL << 30},
};

std::atomic<int> g_initialized{0};
std::atomic<int> g_init_result{kSuccess};
std::atomic<int> g_device_result{kSuccess};   // every device query
std::atomic<int> g_process_result{kSuccess};  // the process queries
std::atomic<unsigned> g_other_processes{1};   // on device 0, besides the caller
std::atomic<int> g_shutdowns{0};

struct Sample {
  unsigned pid;
  unsigned long long timeStamp;
  unsigned smUtil, memUtil, encUtil, decUtil;
};
struct ProcessInfo {
  unsigned pid;
  unsigned long long usedGpuMemory;
  unsigned gpuInstanceId;
  unsigned computeInstanceId;
};
struct Utilization {
  unsigned gpu, memory;
};
struct Memory {
  unsigned long long total, free, used;
};

FakeDevice* Dev(void* device) { return static_cast<FakeDevice*>(device); }

int Check(void* device) {
  if (g_initialized.load() == 0) return kErrorUninitialized;
  if (device == nullptr) return kErrorInvalidArgument;
  return g_device_result.load();
}

unsigned long long NowMicros() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<unsigned long long>(ts.tv_sec) * 1000000ULL +
         static_cast<unsigned long long>(ts.tv_nsec) / 1000ULL;
}

}  // namespace

// The script.
FAKE_NVML_EXPORT void fake_nvml_set_init_result(int result) { g_init_result.store(result); }
FAKE_NVML_EXPORT void fake_nvml_set_device_result(int result) { g_device_result.store(result); }
FAKE_NVML_EXPORT void fake_nvml_set_process_result(int result) { g_process_result.store(result); }
FAKE_NVML_EXPORT void fake_nvml_set_other_processes(unsigned count) {
  g_other_processes.store(count);
}
FAKE_NVML_EXPORT int fake_nvml_shutdowns() { return g_shutdowns.load(); }
FAKE_NVML_EXPORT void fake_nvml_reset() {
  g_init_result.store(kSuccess);
  g_device_result.store(kSuccess);
  g_process_result.store(kSuccess);
  g_other_processes.store(1);
  g_shutdowns.store(0);
}

// NVML.
FAKE_NVML_EXPORT int nvmlInit_v2() {
  const char* v = std::getenv("FAKE_NVML_INIT_RESULT");
  const int r = v != nullptr ? std::atoi(v) : g_init_result.load();
  if (r == kSuccess) g_initialized.fetch_add(1);
  return r;
}

FAKE_NVML_EXPORT int nvmlShutdown() {
  if (g_initialized.load() == 0) return kErrorUninitialized;
  g_initialized.fetch_sub(1);
  g_shutdowns.fetch_add(1);
  return kSuccess;
}

FAKE_NVML_EXPORT const char* nvmlErrorString(int result) {
  switch (result) {
    case 0:
      return "Success";
    case 1:
      return "Uninitialized";
    case 2:
      return "Invalid Argument";
    case 3:
      return "Not Supported";
    case 4:
      return "Insufficient Permissions";
    case 6:
      return "Not Found";
    case 7:
      return "Insufficient Size";
    case 9:
      return "Driver Not Loaded";
    default:
      return "Unknown Error";
  }
}

FAKE_NVML_EXPORT int nvmlDeviceGetCount_v2(unsigned* count) {
  if (g_initialized.load() == 0) return kErrorUninitialized;
  *count = 2;
  return kSuccess;
}

FAKE_NVML_EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** device) {
  if (g_initialized.load() == 0) return kErrorUninitialized;
  if (index >= 2) return kErrorInvalidArgument;
  *device = &g_devices[index];
  return kSuccess;
}

FAKE_NVML_EXPORT int nvmlDeviceGetHandleByUUID(const char* uuid, void** device) {
  if (g_initialized.load() == 0) return kErrorUninitialized;
  for (FakeDevice& d : g_devices) {
    if (std::strcmp(d.uuid, uuid) == 0) {
      *device = &d;
      return kSuccess;
    }
  }
  return kErrorNotFound;
}

FAKE_NVML_EXPORT int nvmlDeviceGetUUID(void* device, char* uuid, unsigned length) {
  if (g_initialized.load() == 0) return kErrorUninitialized;
  if (std::strlen(Dev(device)->uuid) + 1 > length) return kErrorInsufficientSize;
  std::strcpy(uuid, Dev(device)->uuid);
  return kSuccess;
}

FAKE_NVML_EXPORT int nvmlDeviceGetClockInfo(void* device, int type, unsigned* clock) {
  if (int r = Check(device); r != kSuccess) return r;
  *clock = type == 1 ? Dev(device)->sm_clock : Dev(device)->mem_clock;
  return kSuccess;
}

FAKE_NVML_EXPORT int nvmlDeviceGetMaxClockInfo(void* device, int type, unsigned* clock) {
  if (int r = Check(device); r != kSuccess) return r;
  *clock = type == 1 ? Dev(device)->sm_clock_max : Dev(device)->mem_clock_max;
  return kSuccess;
}

#define FAKE_NVML_U32(name, field)                           \
  FAKE_NVML_EXPORT int name(void* device, unsigned* value) { \
    if (int r = Check(device); r != kSuccess) return r;      \
    *value = Dev(device)->field;                             \
    return kSuccess;                                         \
  }
FAKE_NVML_U32(nvmlDeviceGetPowerUsage, power_mw)
FAKE_NVML_U32(nvmlDeviceGetEnforcedPowerLimit, power_limit_mw)
FAKE_NVML_U32(nvmlDeviceGetCurrPcieLinkGeneration, pcie_gen)
FAKE_NVML_U32(nvmlDeviceGetMaxPcieLinkGeneration, pcie_gen_max)
FAKE_NVML_U32(nvmlDeviceGetCurrPcieLinkWidth, pcie_width)
FAKE_NVML_U32(nvmlDeviceGetMaxPcieLinkWidth, pcie_width_max)
FAKE_NVML_U32(nvmlDeviceGetPcieReplayCounter, replays)
#undef FAKE_NVML_U32

FAKE_NVML_EXPORT int nvmlDeviceGetTemperature(void* device, int sensor, unsigned* value) {
  if (int r = Check(device); r != kSuccess) return r;
  if (sensor != 0) return kErrorInvalidArgument;
  *value = Dev(device)->temperature_c;
  return kSuccess;
}

FAKE_NVML_EXPORT int nvmlDeviceGetUtilizationRates(void* device, Utilization* utilization) {
  if (int r = Check(device); r != kSuccess) return r;
  utilization->gpu = Dev(device)->utilization;
  utilization->memory = Dev(device)->utilization / 2;
  return kSuccess;
}

// The older name only (drivers before R535).
FAKE_NVML_EXPORT int nvmlDeviceGetCurrentClocksThrottleReasons(void* device,
                                                               unsigned long long* reasons) {
  if (int r = Check(device); r != kSuccess) return r;
  *reasons = Dev(device)->reasons;
  return kSuccess;
}

FAKE_NVML_EXPORT int nvmlDeviceGetMemoryInfo(void* device, Memory* memory) {
  if (int r = Check(device); r != kSuccess) return r;
  memory->total = Dev(device)->memory_total;
  memory->used = Dev(device)->memory_used;
  memory->free = memory->total - memory->used;
  return kSuccess;
}

// Device 0: the calling process (10 GiB) and the others (pids 4242, 4243, ...; 2 GiB each).
FAKE_NVML_EXPORT int nvmlDeviceGetComputeRunningProcesses_v3(void* device, unsigned* count,
                                                             ProcessInfo* infos) {
  if (int r = Check(device); r != kSuccess) return r;
  if (int r = g_process_result.load(); r != kSuccess) return r;
  const unsigned n = Dev(device) == &g_devices[0] ? 1 + g_other_processes.load() : 0;
  if (*count < n || (n > 0 && infos == nullptr)) {
    *count = n;
    return kErrorInsufficientSize;
  }
  for (unsigned i = 0; i < n; ++i) {
    infos[i] = {};
    infos[i].pid = i == 0 ? static_cast<unsigned>(getpid()) : 4241 + i;
    infos[i].usedGpuMemory = i == 0 ? 10ULL << 30 : 2ULL << 30;
  }
  *count = n;
  return kSuccess;
}

// Device 0: a sample now for the calling process (30 %) and pid 4242 (50 %), when newer than
// last_seen; NOT_FOUND otherwise.
FAKE_NVML_EXPORT int nvmlDeviceGetProcessUtilization(void* device, Sample* samples, unsigned* count,
                                                     unsigned long long last_seen) {
  if (int r = Check(device); r != kSuccess) return r;
  if (int r = g_process_result.load(); r != kSuccess) return r;
  const unsigned long long now = NowMicros();
  if (Dev(device) != &g_devices[0] || now <= last_seen) return kErrorNotFound;
  if (samples == nullptr || *count < 2) {
    *count = 2;
    return kErrorInsufficientSize;
  }
  samples[0] = {static_cast<unsigned>(getpid()), now, 30, 10, 0, 0};
  samples[1] = {4242, now, 50, 20, 0, 0};
  *count = 2;
  return kSuccess;
}
