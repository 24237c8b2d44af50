#include "collect/cuda_driver.h"

#include <dlfcn.h>

#include <algorithm>

namespace gpuidle::internal {
namespace {

// The driver API's types, declared here so that no CUDA header is needed for three calls.
using CuDeviceGetCount = int (*)(int* count);
using CuDeviceGet = int (*)(int* device, int ordinal);
using CuDeviceGetName = int (*)(char* name, int length, int device);

// The driver the program loaded, or nullptr (RTLD_NOLOAD: never loads it). Not cached: the
// program may load it later.
void* LoadedDriver() { return dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD); }

}  // namespace

bool CudaDriverInitialized() {
  void* driver = LoadedDriver();
  if (driver == nullptr) return false;
  const auto count = reinterpret_cast<CuDeviceGetCount>(dlsym(driver, "cuDeviceGetCount"));
  int n = 0;
  // CUDA_ERROR_NOT_INITIALIZED (3) before cuInit; cuDeviceGetCount never initialises.
  const bool initialized = count != nullptr && count(&n) == 0;
  dlclose(driver);  // drops only the reference RTLD_NOLOAD added
  return initialized;
}

std::string CudaDriverDeviceName(int device) {
  static void* driver = LoadedDriver();
  if (driver == nullptr) return {};
  static const auto get = reinterpret_cast<CuDeviceGet>(dlsym(driver, "cuDeviceGet"));
  static const auto get_name = reinterpret_cast<CuDeviceGetName>(dlsym(driver, "cuDeviceGetName"));
  if (get == nullptr || get_name == nullptr) return {};
  int handle = 0;
  char name[256] = {};
  if (get(&handle, device) != 0 || get_name(name, sizeof(name) - 1, handle) != 0) return {};
  return name;
}

void NameUnnamedDevices(Timeline* timeline, DeviceNameFunction name_of) {
  TimelineInfo& info = timeline->info;
  for (DeviceTimeline& d : timeline->devices) {
    if (!d.name.empty()) continue;
    d.name = name_of(d.device);
    // A device without a DEVICE record is visible all the same (it ran work); listed, its name
    // travels with a saved trace (deviceProperties) and reads back.
    if (std::find(info.visible_devices.begin(), info.visible_devices.end(), d.device) ==
        info.visible_devices.end()) {
      info.visible_devices.push_back(d.device);
      info.visible_device_names.resize(info.visible_devices.size() - 1);
      info.visible_device_names.push_back(d.name);
    }
  }
}

}  // namespace gpuidle::internal
