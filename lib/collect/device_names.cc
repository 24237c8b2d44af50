#include "collect/device_names.h"

#include <dlfcn.h>

namespace gpuidle::internal {
namespace {

// The driver API's types, declared here so that no CUDA header is needed for two calls.
using CuDeviceGet = int (*)(int* device, int ordinal);
using CuDeviceGetName = int (*)(char* name, int length, int device);

}  // namespace

std::string CudaDriverDeviceName(int device) {
  // RTLD_NOLOAD: only a driver the program already loaded (and initialised).
  static void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
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
  for (DeviceTimeline& d : timeline->devices) {
    if (d.name.empty()) d.name = name_of(d.device);
  }
}

}  // namespace gpuidle::internal
