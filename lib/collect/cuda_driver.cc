#include "collect/cuda_driver.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/text_safety.h"

namespace gpuidle::internal {
namespace {

// The driver API's types, declared here so that no CUDA header is needed for three calls.
using CuDeviceGetCount = int (*)(int* count);
using CuDeviceGet = int (*)(int* device, int ordinal);
using CuDeviceGetName = int (*)(char* name, int length, int device);
using CuDevicePrimaryCtxGetState = int (*)(int device, unsigned int* flags, int* active);
struct CuUuid {
  unsigned char bytes[16];  // CUuuid: char bytes[16]
};
using CuDeviceGetUuid = int (*)(CuUuid* uuid, int device);

// The driver the program loaded, if it did (RTLD_NOLOAD: never loads it). Looked up at each
// use, not cached: the program may load it after gpuidle first looked.
class LoadedDriver {
 public:
  LoadedDriver() : handle_(dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD)) {}
  ~LoadedDriver() {
    if (handle_ != nullptr) dlclose(handle_);  // drops only the reference taken above
  }
  LoadedDriver(const LoadedDriver&) = delete;
  LoadedDriver& operator=(const LoadedDriver&) = delete;

  template <typename F>
  F Find(const char* name) const {
    return handle_ != nullptr ? reinterpret_cast<F>(dlsym(handle_, name)) : nullptr;
  }

 private:
  void* handle_;
};

// CUDA_SUCCESS; every call returns CUDA_ERROR_NOT_INITIALIZED (3) before cuInit, and none of
// these three initialises CUDA.
constexpr int kCudaSuccess = 0;
constexpr int kCudaErrorNoDevice = 100;

bool Exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

absl::Status CheckForNvidiaGpu(const std::string& dev_dir) {
  if (Exists(dev_dir + "/nvidiactl") || Exists(dev_dir + "/dxg")) return absl::OkStatus();
  return absl::UnavailableError(
      absl::StrCat("no NVIDIA GPU on this machine (", dev_dir, "/nvidiactl is missing)"));
}

std::string CudaDriverWhyNoDevice() {
  const LoadedDriver driver;
  if (const auto count = driver.Find<CuDeviceGetCount>("cuDeviceGetCount"); count != nullptr) {
    int n = 0;
    const int result = count(&n);
    // Before cuInit every call says CUDA_ERROR_NOT_INITIALIZED: no verdict then.
    if ((result == kCudaSuccess && n == 0) || result == kCudaErrorNoDevice) {
      const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
      return visible != nullptr
                 ? absl::StrCat("no NVIDIA GPU visible to CUDA (CUDA_VISIBLE_DEVICES=",
                                QuoteForMessage(visible, 40), ")")
                 : "no NVIDIA GPU visible to CUDA";
    }
    return "";
  }
  // Not in the process although CUPTI wanted it: loading it says why (and unloads it again when
  // it loads after all: CUPTI's reason stands then).
  if (void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL); h != nullptr) {
    dlclose(h);
    return "";
  }
  const char* error = dlerror();
  return absl::StrCat("no NVIDIA driver (libcuda.so.1 cannot be loaded: ",
                      ForMessage(error != nullptr ? error : "unknown error", 120), ")");
}

bool CudaDriverInitialized() { return CudaDriverDeviceCount() >= 0; }

int CudaDriverDeviceCount() {
  const LoadedDriver driver;
  const auto count = driver.Find<CuDeviceGetCount>("cuDeviceGetCount");
  int n = 0;
  return count != nullptr && count(&n) == kCudaSuccess ? n : -1;
}

bool CudaDriverDeviceActive(int device) {
  const LoadedDriver driver;
  const auto get = driver.Find<CuDeviceGet>("cuDeviceGet");
  const auto state = driver.Find<CuDevicePrimaryCtxGetState>("cuDevicePrimaryCtxGetState");
  int handle = 0;
  unsigned int flags = 0;
  int active = 0;
  return get != nullptr && state != nullptr && get(&handle, device) == kCudaSuccess &&
         state(handle, &flags, &active) == kCudaSuccess && active != 0;
}

std::string CudaDriverDeviceName(int device) {
  const LoadedDriver driver;
  const auto get = driver.Find<CuDeviceGet>("cuDeviceGet");
  const auto get_name = driver.Find<CuDeviceGetName>("cuDeviceGetName");
  if (get == nullptr || get_name == nullptr) return {};
  int handle = 0;
  char name[256] = {};
  if (get(&handle, device) != kCudaSuccess ||
      get_name(name, sizeof(name) - 1, handle) != kCudaSuccess) {
    return {};
  }
  return name;
}

std::string GpuUuidText(const uint8_t (&bytes)[16]) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[bytes[i] >> 4]);
    out.push_back(kHex[bytes[i] & 15]);
  }
  return out;
}

std::string CudaDriverDeviceUuid(int device) {
  const LoadedDriver driver;
  const auto get = driver.Find<CuDeviceGet>("cuDeviceGet");
  auto get_uuid = driver.Find<CuDeviceGetUuid>("cuDeviceGetUuid");
  if (get_uuid == nullptr) get_uuid = driver.Find<CuDeviceGetUuid>("cuDeviceGetUuid_v2");
  if (get == nullptr || get_uuid == nullptr) return {};
  int handle = 0;
  CuUuid uuid{};
  if (get(&handle, device) != kCudaSuccess || get_uuid(&uuid, handle) != kCudaSuccess) return {};
  uint8_t bytes[16];
  for (int i = 0; i < 16; ++i) bytes[i] = uuid.bytes[i];
  return GpuUuidText(bytes);
}

std::optional<std::string> CudaVisibleDevicesVariable() {
  const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

std::vector<int> PhysicalDeviceIndices(const std::optional<std::string>& cuda_visible_devices,
                                       int count) {
  std::vector<int> out(static_cast<size_t>(std::max(count, 0)), -1);
  if (!cuda_visible_devices) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int>(i);
    return out;
  }
  size_t i = 0;
  for (absl::string_view entry : absl::StrSplit(*cuda_visible_devices, ',')) {
    if (i == out.size()) break;
    entry = absl::StripAsciiWhitespace(entry);
    int index = -1;
    const bool digits = !entry.empty() && std::all_of(entry.begin(), entry.end(), [](char c) {
      return absl::ascii_isdigit(static_cast<unsigned char>(c));
    });
    if (digits && absl::SimpleAtoi(entry, &index)) {
      out[i++] = index;
    } else if (absl::StartsWith(entry, "GPU-") || absl::StartsWith(entry, "MIG-")) {
      out[i++] = -1;  // a UUID: only NVML could tell its index
    } else {
      break;  // CUDA sees no device from here on
    }
  }
  return out;
}

void CompleteDevicesFromDriver(Timeline* timeline, const CudaDriverQueries& driver) {
  TimelineInfo& info = timeline->info;
  info.visible_device_names.resize(info.visible_devices.size());
  auto list = [&](int device, std::string name) {
    if (std::find(info.visible_devices.begin(), info.visible_devices.end(), device) !=
        info.visible_devices.end()) {
      return;
    }
    info.visible_devices.push_back(device);
    info.visible_device_names.push_back(std::move(name));
  };
  if (info.visible_devices.empty()) {
    const int count = driver.device_count();
    for (int device = 0; device < count; ++device) list(device, driver.device_name(device));
  }
  for (DeviceTimeline& d : timeline->devices) {
    if (!d.name.empty()) continue;
    const auto it = std::find(info.visible_devices.begin(), info.visible_devices.end(), d.device);
    const size_t listed = static_cast<size_t>(it - info.visible_devices.begin());
    if (it != info.visible_devices.end() && !info.visible_device_names[listed].empty()) {
      d.name = info.visible_device_names[listed];
    } else {
      d.name = driver.device_name(d.device);
    }
    list(d.device, d.name);
  }
  // UUIDs and nvidia-smi indices, parallel to the devices, where any is known. A driver without
  // the calls leaves them empty.
  std::vector<std::string> uuids;
  for (int device : info.visible_devices) uuids.push_back(driver.device_uuid(device));
  if (std::any_of(uuids.begin(), uuids.end(), [](const std::string& u) { return !u.empty(); })) {
    info.visible_device_uuids = std::move(uuids);
  }
  constexpr int kMaxOrdinals = 1 << 16;  // CUDA ordinals are small; a larger id is unknown
  int ordinals = 0;
  for (int device : info.visible_devices) {
    if (device >= 0 && device < kMaxOrdinals) ordinals = std::max(ordinals, device + 1);
  }
  const std::vector<int> indices = PhysicalDeviceIndices(driver.cuda_visible_devices(), ordinals);
  std::vector<int> physical;
  for (int device : info.visible_devices) {
    physical.push_back(device >= 0 && device < ordinals ? indices[static_cast<size_t>(device)]
                                                        : -1);
  }
  if (std::any_of(physical.begin(), physical.end(), [](int p) { return p >= 0; })) {
    info.visible_device_physical = std::move(physical);
  }
}

}  // namespace gpuidle::internal
