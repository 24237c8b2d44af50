// What each CUDA runtime/driver API call means for idle analysis: the one place that maps
// API names to categories, used by every producer (trace readers and the live collector).
#ifndef GPUIDLE_LIB_MODEL_CUDA_API_H_
#define GPUIDLE_LIB_MODEL_CUDA_API_H_

#include "absl/strings/string_view.h"
#include "model/timeline.h"

namespace gpuidle::internal {

CallCategory CategorizeCudaApi(absl::string_view name);

// Of the kAllocator calls, those that first wait for the device to finish its work: the
// synchronous frees (cudaFree, cuMemFree, cudaFreeHost, hipFree; not the stream-ordered
// cudaFreeAsync).
bool FreeWaitsForDevice(absl::string_view name);

// Of the kAllocator calls, the virtual-memory ones (cuMemCreate, cuMemMap, cuMemSetAccess,
// cuMemUnmap, cuMemRelease): PyTorch's expandable segments grow and shrink through them.
bool MapsVirtualMemory(absl::string_view name);

// Of the kModuleLoad calls, those that load code compiled ahead of time: cuLibraryLoad* (and
// HIP's alike), through which the CUDA runtime loads a program's own kernels at their first
// launch. The others (cuModuleLoad*, cuLinkComplete) load what a compiler just made: NVRTC,
// Triton, XLA, the PTX JIT.
bool LoadsCodeCompiledAheadOfTime(absl::string_view name);

// Of the kGraphCapture calls: the begin and end of a stream capture, and the rest
// (instantiating, uploading a graph).
enum class CaptureCall { kBegin, kEnd, kGraphSetUp };
CaptureCall CaptureCallOf(absl::string_view name);

// Of the kLaunch calls, those that replay a CUDA graph (cudaGraphLaunch, cuGraphLaunch,
// hipGraphLaunch): every kernel of the graph carries the launch's correlation id.
bool LaunchesGraph(absl::string_view name);

// The API name users know: CUPTI's callback names carry the version of the entry point
// ("cudaLaunchKernel_v7000", "cuMemcpyHtoD_v2"), which is dropped.
absl::string_view CanonicalCudaApiName(absl::string_view cupti_name);

// True for kernels of collective-communication libraries (NCCL, RCCL).
bool IsCommunicationKernel(absl::string_view kernel_name);

// Parses CUPTI/Kineto memcpy names such as "Memcpy HtoD (Pageable -> Device)".
struct CopyDescription {
  CopyKind kind = CopyKind::kUnknown;
  bool pageable = false;
};
CopyDescription DescribeCopy(absl::string_view memcpy_name);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_MODEL_CUDA_API_H_
