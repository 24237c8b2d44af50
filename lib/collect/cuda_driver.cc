#include "collect/cuda_driver.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "core/text_safety.h"

namespace gpuidle::internal {
namespace {

// The driver API's types, declared here so that no CUDA header is needed for three calls.
using CuDeviceGetCount = int (*)(int* count);
using CuDeviceGet = int (*)(int* device, int ordinal);
using CuDeviceGetName = int (*)(char* name, int length, int device);

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
}

}  // namespace gpuidle::internal
