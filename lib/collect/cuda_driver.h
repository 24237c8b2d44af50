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
bool CudaDriverInitialized();
// The devices the program can see, or -1 when the driver is not loaded or not initialised.
int CudaDriverDeviceCount();
// "NVIDIA H200" for a CUDA device ordinal, or "" when the driver is not loaded or says nothing.
std::string CudaDriverDeviceName(int device);

// The queries the collector makes; tests replace them.
struct CudaDriverQueries {
  bool (*initialized)() = &CudaDriverInitialized;
  int (*device_count)() = &CudaDriverDeviceCount;
  std::string (*device_name)(int device) = &CudaDriverDeviceName;
};

// Where CUPTI sent no DEVICE record (a collection that began after CUDA was initialised):
// lists every device the program can see, so that unused ones are reported, and names every
// device that has no name. Listed, the names travel with a saved trace (deviceProperties).
void CompleteDevicesFromDriver(Timeline* timeline, const CudaDriverQueries& driver);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_CUDA_DRIVER_H_
