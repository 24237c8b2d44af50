// Names of CUDA devices for a timeline whose collection began after CUDA was initialised: CUPTI
// then delivers no DEVICE records, and the report would call the GPU by its index only. The
// driver already in the process answers (libcuda.so.1, looked up without loading it: gpuidle
// never initialises CUDA itself).
#ifndef GPUIDLE_LIB_COLLECT_DEVICE_NAMES_H_
#define GPUIDLE_LIB_COLLECT_DEVICE_NAMES_H_

#include <string>

#include "model/timeline.h"

namespace gpuidle::internal {

// "NVIDIA H200" for a CUDA device ordinal, or "" when the driver is not loaded or says nothing.
using DeviceNameFunction = std::string (*)(int device);
std::string CudaDriverDeviceName(int device);

// Names every device of timeline that has none.
void NameUnnamedDevices(Timeline* timeline, DeviceNameFunction name_of = &CudaDriverDeviceName);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_DEVICE_NAMES_H_
