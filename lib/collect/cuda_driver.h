// What the collector asks the CUDA driver already in the process (libcuda.so.1, looked up
// without loading it: gpuidle never initialises CUDA itself): whether CUDA is initialised yet
// (which decides how API records are switched on, collector.h ApiRecords), and the names of
// devices that CUPTI sent no DEVICE record for (a collection that began after CUDA was
// initialised; the report would otherwise call the GPU by its index only).
#ifndef GPUIDLE_LIB_COLLECT_CUDA_DRIVER_H_
#define GPUIDLE_LIB_COLLECT_CUDA_DRIVER_H_

#include <string>

#include "model/timeline.h"

namespace gpuidle::internal {

// True once the program has initialised CUDA (cuInit); false if the driver is not even loaded.
using CudaInitializedFunction = bool (*)();
bool CudaDriverInitialized();

// "NVIDIA H200" for a CUDA device ordinal, or "" when the driver is not loaded or says nothing.
using DeviceNameFunction = std::string (*)(int device);
std::string CudaDriverDeviceName(int device);

// Names every device of timeline that has none, and lists it among the visible devices.
void NameUnnamedDevices(Timeline* timeline, DeviceNameFunction name_of = &CudaDriverDeviceName);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_CUDA_DRIVER_H_
