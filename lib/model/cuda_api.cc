#include "model/cuda_api.h"

#include "absl/strings/match.h"

namespace gpuidle::internal {
namespace {

// Runtime ("cuda..."), driver ("cu...") and HIP ("hip...", ROCm) names share stems; strip the
// prefix once.
absl::string_view Stem(absl::string_view name) {
  if (absl::StartsWith(name, "cuda")) return name.substr(4);
  if (absl::StartsWith(name, "hip")) return name.substr(3);
  if (absl::StartsWith(name, "cu")) return name.substr(2);
  return name;
}

}  // namespace

CallCategory CategorizeCudaApi(absl::string_view name) {
  const absl::string_view stem = Stem(name);
  // Launches: kernels (all variants, incl. cudaLaunchKernelExC / cuLaunchKernelEx,
  // cooperative), graphs, memsets and host functions queue GPU work.
  if (absl::StartsWith(stem, "LaunchKernel") || absl::StartsWith(stem, "ModuleLaunchKernel") ||
      absl::StartsWith(stem, "ExtModuleLaunchKernel") ||
      absl::StartsWith(stem, "ExtLaunchKernel") ||
      absl::StartsWith(stem, "HccModuleLaunchKernel") ||
      absl::StartsWith(stem, "LaunchCooperativeKernel") || LaunchesGraph(name) ||
      absl::StartsWith(stem, "LaunchHostFunc") || absl::StartsWith(stem, "LaunchGrid") ||
      absl::StartsWith(stem, "Memset") ||
      // HIP only: multi-device launches, the launch by function pointer of older HIP releases.
      absl::StartsWith(stem, "ExtLaunchMultiKernel") || absl::StartsWith(stem, "LaunchByPtr") ||
      absl::StartsWith(stem, "ModuleLaunchCooperativeKernel") || stem == "Launch") {
    return CallCategory::kLaunch;
  }
  if (absl::StartsWith(stem, "StreamWaitEvent")) return CallCategory::kWaitEvent;
  if (stem == "StreamSynchronize" || stem == "DeviceSynchronize" || stem == "CtxSynchronize" ||
      stem == "EventSynchronize" || stem == "ThreadSynchronize" ||
      absl::StartsWith(stem, "StreamSynchronize_") || absl::StartsWith(stem, "EventSynchronize_")) {
    return CallCategory::kSync;
  }
  // hipDrvMemcpy* are HIP's spellings of the driver API's cuMemcpy*.
  if (absl::StartsWith(stem, "Memcpy") || absl::StartsWith(stem, "DrvMemcpy")) {
    return CallCategory::kCopy;
  }
  // Loading GPU code: modules and libraries (the step after NVRTC, Triton or XLA compiled it).
  if (absl::StartsWith(stem, "ModuleLoad") || absl::StartsWith(stem, "LibraryLoad") ||
      stem == "LinkComplete") {
    return CallCategory::kModuleLoad;
  }
  // Memory management. Not cudaMemGetInfo or the pool queries: only what allocates or frees.
  for (absl::string_view allocator :
       {"Malloc",       "Free",           "MemAlloc",          "MemFree",
        "HostAlloc",    "MemHostAlloc",   "HostMalloc",        "HostFree",
        "ExtMalloc",    "MemCreate",      "MemRelease",        "MemMap",
        "MemUnmap",     "MemSetAccess",   "MemAddressReserve", "MemAddressFree",
        "HostRegister", "HostUnregister", "MemHostRegister",   "MemHostUnregister"}) {
    if (absl::StartsWith(stem, allocator)) return CallCategory::kAllocator;
  }
  // Graph capture and instantiation: the launches in between are recorded, not run. Not
  // cudaStreamIsCapturing or cudaStreamGetCaptureInfo, which PyTorch asks at every allocation.
  if (absl::StartsWith(stem, "StreamBeginCapture") || absl::StartsWith(stem, "StreamEndCapture") ||
      absl::StartsWith(stem, "GraphInstantiate") || absl::StartsWith(stem, "GraphUpload")) {
    return CallCategory::kGraphCapture;
  }
  // Driver and context initialisation: once per process and device.
  if (stem == "Init" || absl::StartsWith(stem, "DevicePrimaryCtxRetain") ||
      absl::StartsWith(stem, "CtxCreate") || stem == "InitDevice") {
    return CallCategory::kInit;
  }
  return CallCategory::kOther;
}

bool FreeWaitsForDevice(absl::string_view name) {
  const absl::string_view stem = Stem(name);
  if (absl::StrContains(stem, "Async")) return false;
  return absl::StartsWith(stem, "Free") || absl::StartsWith(stem, "MemFree") ||
         absl::StartsWith(stem, "HostFree");
}

bool MapsVirtualMemory(absl::string_view name) {
  const absl::string_view stem = Stem(name);
  for (absl::string_view vmm : {"MemCreate", "MemMap", "MemSetAccess", "MemUnmap", "MemRelease"}) {
    if (absl::StartsWith(stem, vmm)) return true;
  }
  return false;
}

bool LoadsCodeCompiledAheadOfTime(absl::string_view name) {
  return absl::StartsWith(Stem(name), "LibraryLoad");
}

bool LaunchesGraph(absl::string_view name) { return absl::StartsWith(Stem(name), "GraphLaunch"); }

CaptureCall CaptureCallOf(absl::string_view name) {
  const absl::string_view stem = Stem(name);
  if (absl::StartsWith(stem, "StreamBeginCapture")) return CaptureCall::kBegin;
  if (absl::StartsWith(stem, "StreamEndCapture")) return CaptureCall::kEnd;
  return CaptureCall::kGraphSetUp;
}

absl::string_view CanonicalCudaApiName(absl::string_view cupti_name) {
  const size_t v = cupti_name.rfind("_v");
  if (v == absl::string_view::npos || v + 2 == cupti_name.size()) return cupti_name;
  for (char c : cupti_name.substr(v + 2)) {
    if (c < '0' || c > '9') return cupti_name;
  }
  return cupti_name.substr(0, v);
}

bool IsCommunicationKernel(absl::string_view kernel_name) {
  return absl::StartsWith(kernel_name, "ncclDevKernel") ||
         absl::StartsWith(kernel_name, "ncclKernel") ||
         absl::StartsWith(kernel_name, "void ncclKernel") ||
         absl::StartsWith(kernel_name, "void ncclDevKernel") ||
         absl::StartsWith(kernel_name, "rcclKernel");
}

CopyDescription DescribeCopy(absl::string_view memcpy_name) {
  CopyDescription d;
  if (absl::StrContains(memcpy_name, "HtoD")) {
    d.kind = CopyKind::kHtoD;
  } else if (absl::StrContains(memcpy_name, "DtoH")) {
    d.kind = CopyKind::kDtoH;
  } else if (absl::StrContains(memcpy_name, "DtoD")) {
    d.kind = CopyKind::kDtoD;
  } else if (absl::StrContains(memcpy_name, "HtoH")) {
    d.kind = CopyKind::kHtoH;
  } else if (absl::StrContains(memcpy_name, "PtoP")) {
    d.kind = CopyKind::kPeer;
  }
  d.pageable = absl::StrContains(memcpy_name, "Pageable");
  return d;
}

}  // namespace gpuidle::internal
