// What the collector asks the CUDA driver already in the process (libcuda.so.1, looked up
// without loading it: gpuidle never initialises CUDA itself): whether CUDA is initialised yet
// (which decides how API records are switched on, collector_probes.h ApiRecords), and the names of
// devices that CUPTI sent no DEVICE record for (a collection that began after CUDA was
// initialised; the report would otherwise call the GPU by its index only).
#ifndef GPUIDLE_LIB_COLLECT_CUDA_DRIVER_H_
#define GPUIDLE_LIB_COLLECT_CUDA_DRIVER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// True once the program has initialised CUDA (cuInit); false if the driver is not even loaded.
bool CudaDriverInitialized();
// The devices the program can see, or -1 when the driver is not loaded or not initialised.
int CudaDriverDeviceCount();
// Whether the program has an active primary context on a CUDA device ordinal: it uses the
// device (the runtime API and the frameworks use primary contexts). False when the driver is
// not loaded or not initialised; never creates or retains a context.
bool CudaDriverDeviceActive(int device);
// "NVIDIA H200" for a CUDA device ordinal, or "" when the driver is not loaded or says nothing.
std::string CudaDriverDeviceName(int device);

// The UUID of a CUDA device ordinal as nvidia-smi prints it, "GPU-xxxxxxxx-xxxx-xxxx-xxxx-
// xxxxxxxxxxxx", or "" when the driver is not loaded, not initialised, or lacks the call (older
// drivers). cuDeviceGetUuid (the GPU's own UUID) where the driver has it, else
// cuDeviceGetUuid_v2, which under MIG gives the MIG instance's UUID instead.
std::string CudaDriverDeviceUuid(int device);
// The 16 bytes of a CUuuid as nvidia-smi prints them.
std::string GpuUuidText(const uint8_t (&bytes)[16]);

// CUDA_VISIBLE_DEVICES, or nullopt when it is not set.
std::optional<std::string> CudaVisibleDevicesVariable();

// The nvidia-smi index of each of the first `count` CUDA device ordinals (-1 unknown), from
// CUDA_VISIBLE_DEVICES (nullopt: not set, every GPU visible in CUDA's order, so ordinal i is
// index i). A list of plain integers maps ordinal i to its i-th entry; an entry that names a
// device by UUID ("GPU-...", "MIG-...") gives -1, as only NVML could match it to an index; the
// list ends, as CUDA ends it, at the first entry that is neither. These are indices in CUDA's
// enumeration order, which is nvidia-smi's (PCI bus order) under CUDA_DEVICE_ORDER=PCI_BUS_ID and
// on machines of one GPU model; the UUID is the unambiguous name of a device.
std::vector<int> PhysicalDeviceIndices(const std::optional<std::string>& cuda_visible_devices,
                                       int count);

// Whether this machine can have an NVIDIA GPU for CUDA: the driver's device node under dev_dir
// (/dev/nvidiactl, or /dev/dxg under WSL 2, where CUDA reaches the GPU through DirectX). Only
// stats files and loads nothing, so the preloaded library's constructor may ask it in every
// process. OK, or Unavailable "no NVIDIA GPU on this machine (/dev/nvidiactl is missing)". The
// one check of every way in (the injection, the C++ and Python APIs, gpuidle run).
absl::Status CheckForNvidiaGpu(const std::string& dev_dir = "/dev");

// After CUPTI refused to start: the driver's reason, where it has one, else "". "no NVIDIA
// driver (libcuda.so.1 cannot be loaded: ...)" when the process has no driver and none can be
// loaded; "no NVIDIA GPU visible to CUDA (CUDA_VISIBLE_DEVICES=...)" when the program's
// initialised CUDA sees no device. Never initialises CUDA (the program may not want it).
std::string CudaDriverWhyNoDevice();

// The queries the collector makes; tests replace them.
struct CudaDriverQueries {
  bool (*initialized)() = &CudaDriverInitialized;
  int (*device_count)() = &CudaDriverDeviceCount;
  std::string (*device_name)(int device) = &CudaDriverDeviceName;
  std::string (*why_no_device)() = &CudaDriverWhyNoDevice;
  std::string (*device_uuid)(int device) = &CudaDriverDeviceUuid;
  std::optional<std::string> (*cuda_visible_devices)() = &CudaVisibleDevicesVariable;
};

// Where CUPTI sent no DEVICE record (a collection that began after CUDA was initialised):
// lists every device the program can see, so that unused ones are reported, and names every
// device that has no name. Listed, the names travel with a saved trace (deviceProperties).
// Gives every listed device its UUID and nvidia-smi index where known
// (TimelineInfo::visible_device_uuids / visible_device_physical; left empty where none is).
void CompleteDevicesFromDriver(Timeline* timeline, const CudaDriverQueries& driver);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_CUDA_DRIVER_H_
