// model/cuda_api: what a CUDA API call means for the analysis. CategorizeCudaApi also decides
// which CUPTI callbacks the collector turns on (collect: every id whose canonical name is not
// kOther), so a name in the wrong category either loses launches, syncs or copies from every
// live report or times a hot query that the analysis never reads (tracing every call in a
// small PyTorch loop saw 149k cudaGetDevice and 37k cuDevicePrimaryCtxGetState).
#include "model/cuda_api.h"

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/timeline.h"

namespace gpuidle::internal {
namespace {

using ::testing::Contains;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// The callback names CUPTI lists for one API domain, read from the toolkit's header
// ("CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 = 211," gives "cudaLaunchKernel_v7000").
std::vector<std::string> CuptiCallbackNames(absl::string_view header, absl::string_view prefix) {
  std::vector<std::string> names;
#ifdef GPUIDLE_CUPTI_INCLUDE_DIR
  std::ifstream in(absl::StrCat(GPUIDLE_CUPTI_INCLUDE_DIR, "/", header));
  std::string line;
  while (std::getline(in, line)) {
    const size_t at = absl::string_view(line).find(prefix);
    if (at == std::string::npos) continue;
    size_t end = at + prefix.size();
    while (end < line.size() && (absl::ascii_isalnum(line[end]) || line[end] == '_')) ++end;
    const std::string name = line.substr(at + prefix.size(), end - at - prefix.size());
    if (name != "INVALID" && name != "SIZE" && name != "FORCE_INT") names.push_back(name);
  }
#else
  (void)header;
  (void)prefix;
#endif
  return names;
}

std::vector<std::string> RuntimeCallbackNames() {
  return CuptiCallbackNames("cupti_runtime_cbid.h", "CUPTI_RUNTIME_TRACE_CBID_");
}
std::vector<std::string> DriverCallbackNames() {
  return CuptiCallbackNames("cupti_driver_cbid.h", "CUPTI_DRIVER_TRACE_CBID_");
}
std::vector<std::string> AllCallbackNames() {
  std::vector<std::string> names = RuntimeCallbackNames();
  const std::vector<std::string> driver = DriverCallbackNames();
  names.insert(names.end(), driver.begin(), driver.end());
  return names;
}

// As the collector and the CUPTI record translation categorise a callback.
CallCategory CategoryOfCallback(absl::string_view cupti_name) {
  return CategorizeCudaApi(CanonicalCudaApiName(cupti_name));
}

bool StartsWithAny(absl::string_view name, const std::vector<absl::string_view>& prefixes) {
  for (absl::string_view p : prefixes) {
    if (absl::StartsWith(name, p)) return true;
  }
  return false;
}

// --- CanonicalCudaApiName --------------------------------------------------------------------

TEST(CanonicalCudaApiNameTest, DropsTheVersionOfTheEntryPoint) {
  EXPECT_EQ(CanonicalCudaApiName("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(CanonicalCudaApiName("cuMemcpyHtoD_v2"), "cuMemcpyHtoD");
  EXPECT_EQ(CanonicalCudaApiName("cuCtxSynchronize_v2"), "cuCtxSynchronize");
  EXPECT_EQ(CanonicalCudaApiName("cudaMemcpyBatchAsync_v13000"), "cudaMemcpyBatchAsync");
}

TEST(CanonicalCudaApiNameTest, KeepsThePerThreadStreamSuffix) {
  EXPECT_EQ(CanonicalCudaApiName("cudaLaunchKernel_ptsz_v7000"), "cudaLaunchKernel_ptsz");
  EXPECT_EQ(CanonicalCudaApiName("cuLaunchKernel_ptsz"), "cuLaunchKernel_ptsz");
}

TEST(CanonicalCudaApiNameTest, LeavesNamesWithoutAVersionAlone) {
  EXPECT_EQ(CanonicalCudaApiName("cuLaunchKernel"), "cuLaunchKernel");
  EXPECT_EQ(CanonicalCudaApiName("cudaLaunchKernel"), "cudaLaunchKernel");
  EXPECT_EQ(CanonicalCudaApiName(""), "");
  EXPECT_EQ(CanonicalCudaApiName("name_v"), "name_v");      // no digits after _v
  EXPECT_EQ(CanonicalCudaApiName("name_v2x"), "name_v2x");  // not digits only
  EXPECT_EQ(CanonicalCudaApiName("name_value"), "name_value");
}

// --- the categories of the calls that matter -------------------------------------------------

struct Case {
  const char* cupti_name;  // as CUPTI's headers spell it
  CallCategory category;
};

const Case kNeededCalls[] = {
    // Kernel launches, all spellings, runtime and driver.
    {"cudaLaunchKernel_v7000", CallCategory::kLaunch},
    {"cudaLaunchKernel_ptsz_v7000", CallCategory::kLaunch},
    {"cudaLaunchKernelExC_v11060", CallCategory::kLaunch},
    {"cudaLaunchKernelExC_ptsz_v11060", CallCategory::kLaunch},
    {"cudaLaunchCooperativeKernel_v9000", CallCategory::kLaunch},
    {"cudaLaunchCooperativeKernelMultiDevice_v9000", CallCategory::kLaunch},
    {"cudaLaunchHostFunc_v10000", CallCategory::kLaunch},
    {"cuLaunchKernel", CallCategory::kLaunch},
    {"cuLaunchKernel_ptsz", CallCategory::kLaunch},
    {"cuLaunchKernelEx", CallCategory::kLaunch},
    {"cuLaunchKernelEx_ptsz", CallCategory::kLaunch},
    {"cuLaunchCooperativeKernel", CallCategory::kLaunch},
    {"cuLaunchHostFunc", CallCategory::kLaunch},
    {"cuLaunchGridAsync", CallCategory::kLaunch},
    // Graph launches (CUDA graphs: torch.compile's "reduce-overhead", CUDA-graph capture).
    {"cudaGraphLaunch_v10000", CallCategory::kLaunch},
    {"cudaGraphLaunch_ptsz_v10000", CallCategory::kLaunch},
    {"cuGraphLaunch", CallCategory::kLaunch},
    {"cuGraphLaunch_ptsz", CallCategory::kLaunch},
    // Memsets queue GPU work as a kernel does.
    {"cudaMemsetAsync_v3020", CallCategory::kLaunch},
    {"cudaMemset_v3020", CallCategory::kLaunch},
    {"cuMemsetD32Async", CallCategory::kLaunch},
    {"cuMemsetD8_v2", CallCategory::kLaunch},
    // Syncs.
    {"cudaDeviceSynchronize_v3020", CallCategory::kSync},
    {"cudaStreamSynchronize_v3020", CallCategory::kSync},
    {"cudaStreamSynchronize_ptsz_v7000", CallCategory::kSync},
    {"cudaEventSynchronize_v3020", CallCategory::kSync},
    {"cudaThreadSynchronize_v3020", CallCategory::kSync},
    {"cuCtxSynchronize", CallCategory::kSync},
    {"cuCtxSynchronize_v2", CallCategory::kSync},
    {"cuStreamSynchronize", CallCategory::kSync},
    {"cuStreamSynchronize_ptsz", CallCategory::kSync},
    {"cuEventSynchronize", CallCategory::kSync},
    // Copies, synchronous and asynchronous.
    {"cudaMemcpy_v3020", CallCategory::kCopy},
    {"cudaMemcpyAsync_v3020", CallCategory::kCopy},
    {"cudaMemcpyAsync_ptsz_v7000", CallCategory::kCopy},
    {"cudaMemcpy2DAsync_v3020", CallCategory::kCopy},
    {"cudaMemcpyToSymbol_v3020", CallCategory::kCopy},
    {"cudaMemcpyPeerAsync_v4000", CallCategory::kCopy},
    {"cudaMemcpyBatchAsync_v13000", CallCategory::kCopy},
    {"cuMemcpyHtoD_v2", CallCategory::kCopy},
    {"cuMemcpyDtoH_v2", CallCategory::kCopy},
    {"cuMemcpyHtoDAsync_v2", CallCategory::kCopy},
    {"cuMemcpyDtoHAsync_v2_ptsz", CallCategory::kCopy},
    {"cuMemcpyAsync", CallCategory::kCopy},
    {"cuMemcpy3DPeerAsync", CallCategory::kCopy},
    // A stream made to wait for an event of another stream.
    {"cudaStreamWaitEvent_v3020", CallCategory::kWaitEvent},
    {"cudaStreamWaitEvent_ptsz_v7000", CallCategory::kWaitEvent},
    {"cuStreamWaitEvent", CallCategory::kWaitEvent},
    {"cuStreamWaitEvent_ptsz", CallCategory::kWaitEvent},
    // Loading GPU code, and initialisation: one-off work the report shows apart.
    {"cuModuleLoadData", CallCategory::kModuleLoad},
    {"cuModuleLoadDataEx", CallCategory::kModuleLoad},
    {"cuLibraryLoadData", CallCategory::kModuleLoad},
    {"cudaLibraryLoadData_v12060", CallCategory::kModuleLoad},
    {"cuLinkComplete", CallCategory::kModuleLoad},
    {"cuInit", CallCategory::kInit},
    {"cuDevicePrimaryCtxRetain", CallCategory::kInit},
    {"cuCtxCreate_v4", CallCategory::kInit},
    {"cudaInitDevice_v12000", CallCategory::kInit},
    // Memory management: the caching allocator's cudaMalloc and cudaFree (after empty_cache(),
    // on fragmentation), pinned memory, the virtual-memory calls of expandable segments.
    {"cudaMalloc_v3020", CallCategory::kAllocator},
    {"cudaFree_v3020", CallCategory::kAllocator},
    {"cudaFreeAsync_v11020", CallCategory::kAllocator},
    {"cudaHostAlloc_v3020", CallCategory::kAllocator},
    {"cudaFreeHost_v3020", CallCategory::kAllocator},
    {"cuMemAlloc_v2", CallCategory::kAllocator},
    {"cuMemFree_v2", CallCategory::kAllocator},
    {"cuMemCreate", CallCategory::kAllocator},
    {"cuMemMap", CallCategory::kAllocator},
    {"cuMemSetAccess", CallCategory::kAllocator},
    {"cuMemUnmap", CallCategory::kAllocator},
    {"cuMemRelease", CallCategory::kAllocator},
    {"cuMemAddressReserve", CallCategory::kAllocator},
    // Graph capture: the launches between begin and end are recorded, not run.
    {"cudaStreamBeginCapture_v10000", CallCategory::kGraphCapture},
    {"cudaStreamBeginCapture_ptsz_v10000", CallCategory::kGraphCapture},
    {"cuStreamBeginCapture_v2", CallCategory::kGraphCapture},
    {"cudaStreamEndCapture_v10000", CallCategory::kGraphCapture},
    {"cudaGraphInstantiateWithFlags_v11040", CallCategory::kGraphCapture},
    {"cudaGraphUpload_v10000", CallCategory::kGraphCapture},
};

// Called often and never read by the analysis: their callbacks must stay off.
const char* const kHotCallsTheAnalysisDoesNotNeed[] = {
    "cudaGetDevice_v3020",
    "cudaSetDevice_v3020",
    "cudaGetLastError_v3020",
    "cudaPeekAtLastError_v3020",
    "cudaStreamIsCapturing_v10000",
    "cudaStreamIsCapturing_ptsz_v10000",
    "cudaStreamGetCaptureInfo_v2_v11030",
    "cudaEventRecord_v3020",
    "cudaEventQuery_v3020",
    "cudaStreamQuery_v3020",
    "cudaGetDeviceProperties_v12000",
    "cudaFuncGetAttributes_v3020",
    "cudaPointerGetAttributes_v4000",
    "cudaMemGetInfo_v3020",
    "cudaGraphAddMemcpyNode_v10000",
    "cudaGraphAddMemsetNode_v10000",
    "cuCtxGetCurrent",
    "cuCtxSetCurrent",
    "cuCtxGetDevice",
    "cuDevicePrimaryCtxGetState",
    "cuDevicePrimaryCtxRelease_v2",
    "cuStreamIsCapturing",
    "cuStreamGetCtx",
    "cuPointerGetAttribute",
    "cuGetProcAddress_v2",
    "cuLinkAddData_v2",
};

TEST(CategorizeCudaApiTest, TheCallsTheAnalysisNeedsHaveTheirCategory) {
  for (const Case& c : kNeededCalls) {
    EXPECT_EQ(CategoryOfCallback(c.cupti_name), c.category) << c.cupti_name;
  }
}

TEST(CategorizeCudaApiTest, HotCallsTheAnalysisDoesNotNeedAreOther) {
  for (const char* name : kHotCallsTheAnalysisDoesNotNeed) {
    EXPECT_EQ(CategoryOfCallback(name), CallCategory::kOther) << name;
  }
}

// Kineto traces carry the names without CUPTI's version suffix; ROCm traces carry HIP's.
TEST(CategorizeCudaApiTest, TraceNamesWithoutVersionAndHipNamesHaveTheSameCategories) {
  EXPECT_EQ(CategorizeCudaApi("cudaLaunchKernel"), CallCategory::kLaunch);
  EXPECT_EQ(CategorizeCudaApi("cudaStreamSynchronize"), CallCategory::kSync);
  EXPECT_EQ(CategorizeCudaApi("cudaMemcpyAsync"), CallCategory::kCopy);
  EXPECT_EQ(CategorizeCudaApi("cudaStreamWaitEvent"), CallCategory::kWaitEvent);
  EXPECT_EQ(CategorizeCudaApi("cudaGetDevice"), CallCategory::kOther);
  EXPECT_EQ(CategorizeCudaApi("hipLaunchKernel"), CallCategory::kLaunch);
  EXPECT_EQ(CategorizeCudaApi("hipExtModuleLaunchKernel"), CallCategory::kLaunch);
  EXPECT_EQ(CategorizeCudaApi("hipDeviceSynchronize"), CallCategory::kSync);
  EXPECT_EQ(CategorizeCudaApi("hipMemcpyAsync"), CallCategory::kCopy);
  EXPECT_EQ(CategorizeCudaApi("hipDrvMemcpy2DUnaligned"), CallCategory::kCopy);
  EXPECT_EQ(CategorizeCudaApi("hipStreamWaitEvent"), CallCategory::kWaitEvent);
  EXPECT_EQ(CategorizeCudaApi("hipGetDevice"), CallCategory::kOther);
  EXPECT_EQ(CategorizeCudaApi("cudaFree"), CallCategory::kAllocator);
  EXPECT_EQ(CategorizeCudaApi("hipMalloc"), CallCategory::kAllocator);
  EXPECT_EQ(CategorizeCudaApi("hipFree"), CallCategory::kAllocator);
  EXPECT_EQ(CategorizeCudaApi("hipHostMalloc"), CallCategory::kAllocator);
  EXPECT_EQ(CategorizeCudaApi("hipExtMallocWithFlags"), CallCategory::kAllocator);
  EXPECT_EQ(CategorizeCudaApi("cudaMemGetInfo"), CallCategory::kOther);
  EXPECT_EQ(CategorizeCudaApi("cudaStreamBeginCapture"), CallCategory::kGraphCapture);
  EXPECT_EQ(CategorizeCudaApi("hipStreamEndCapture"), CallCategory::kGraphCapture);
  EXPECT_EQ(CategorizeCudaApi("hipGraphInstantiate"), CallCategory::kGraphCapture);
  EXPECT_EQ(CategorizeCudaApi("cudaStreamIsCapturing"), CallCategory::kOther);
}

TEST(CategorizeCudaApiTest, OnlySynchronousFreesWaitForTheDevice) {
  for (absl::string_view name : {"cudaFree", "cuMemFree_v2", "cudaFreeHost", "hipFree",
                                 "hipHostFree", "cuMemFreeHost", "cudaFreeArray"}) {
    EXPECT_TRUE(FreeWaitsForDevice(name)) << name;
  }
  for (absl::string_view name : {"cudaFreeAsync", "cuMemFreeAsync", "cudaMalloc", "cuMemUnmap",
                                 "cuMemRelease", "hipFreeAsync"}) {
    EXPECT_FALSE(FreeWaitsForDevice(name)) << name;
  }
  EXPECT_TRUE(MapsVirtualMemory("cuMemSetAccess"));
  EXPECT_TRUE(MapsVirtualMemory("cuMemUnmap"));
  EXPECT_FALSE(MapsVirtualMemory("cudaFree"));
  EXPECT_FALSE(MapsVirtualMemory("cuMemAlloc_v2"));
  EXPECT_EQ(CaptureCallOf("cudaStreamBeginCapture_v10000"), CaptureCall::kBegin);
  EXPECT_EQ(CaptureCallOf("cuStreamEndCapture"), CaptureCall::kEnd);
  EXPECT_EQ(CaptureCallOf("hipStreamBeginCapture"), CaptureCall::kBegin);
  EXPECT_EQ(CaptureCallOf("cudaGraphInstantiate"), CaptureCall::kGraphSetUp);
}

TEST(CategorizeCudaApiTest, GraphLaunchesAreLaunchesThatReplayAGraph) {
  for (absl::string_view name :
       {"cudaGraphLaunch", "cudaGraphLaunch_v10000", "cudaGraphLaunch_ptsz_v10000", "cuGraphLaunch",
        "hipGraphLaunch"}) {
    EXPECT_TRUE(LaunchesGraph(name)) << name;
    EXPECT_EQ(CategorizeCudaApi(name), CallCategory::kLaunch) << name;
  }
  for (absl::string_view name : {"cudaLaunchKernel", "cuLaunchKernelEx", "cudaGraphInstantiate",
                                 "cudaStreamBeginCapture", "cudaGraphUpload"}) {
    EXPECT_FALSE(LaunchesGraph(name)) << name;
  }
}

TEST(CategorizeCudaApiTest, NamesThatAreNoCudaCallAreOther) {
  EXPECT_EQ(CategorizeCudaApi(""), CallCategory::kOther);
  EXPECT_EQ(CategorizeCudaApi("aten::mm"), CallCategory::kOther);
  EXPECT_EQ(CategorizeCudaApi("cuda"), CallCategory::kOther);
  EXPECT_EQ(CategorizeCudaApi("cu"), CallCategory::kOther);
  EXPECT_EQ(CategorizeCudaApi("CUDALAUNCHKERNEL"), CallCategory::kOther);
}

// --- over every callback CUPTI 13 lists ------------------------------------------------------

TEST(CategorizeCudaApiTest, EveryNamedCallIsOneCuptiLists) {
  const std::vector<std::string> names = AllCallbackNames();
  if (names.empty()) GTEST_SKIP() << "no CUPTI headers in this build";
  ASSERT_THAT(RuntimeCallbackNames(), SizeIs(::testing::Gt(400u)));
  ASSERT_THAT(DriverCallbackNames(), SizeIs(::testing::Gt(600u)));
  for (const Case& c : kNeededCalls) EXPECT_THAT(names, Contains(c.cupti_name));
  for (const char* name : kHotCallsTheAnalysisDoesNotNeed) EXPECT_THAT(names, Contains(name));
}

// The families the analysis reads, by the canonical names' prefixes: whatever CUPTI adds to a
// family later (a new memcpy, a launch variant) gets its category without a code change.
TEST(CategorizeCudaApiTest, EveryCuptiCallbackOfANeededFamilyHasItsCategory) {
  const std::vector<std::string> names = AllCallbackNames();
  if (names.empty()) GTEST_SKIP() << "no CUPTI headers in this build";
  const std::vector<absl::string_view> launches = {"cudaLaunchKernel",
                                                   "cudaLaunchCooperativeKernel",
                                                   "cudaLaunchHostFunc",
                                                   "cudaGraphLaunch",
                                                   "cudaMemset",
                                                   "cuLaunchKernel",
                                                   "cuLaunchCooperativeKernel",
                                                   "cuLaunchHostFunc",
                                                   "cuLaunchGrid",
                                                   "cuGraphLaunch",
                                                   "cuMemset"};
  const std::vector<absl::string_view> copies = {"cudaMemcpy", "cuMemcpy"};
  const std::vector<absl::string_view> waits = {"cudaStreamWaitEvent", "cuStreamWaitEvent"};
  const std::vector<absl::string_view> syncs = {"cudaDeviceSynchronize", "cudaStreamSynchronize",
                                                "cudaEventSynchronize",  "cudaThreadSynchronize",
                                                "cuCtxSynchronize",      "cuStreamSynchronize",
                                                "cuEventSynchronize"};
  int checked = 0;
  for (const std::string& name : names) {
    const absl::string_view canonical = CanonicalCudaApiName(name);
    const CallCategory category = CategoryOfCallback(name);
    if (StartsWithAny(canonical, launches)) {
      EXPECT_EQ(category, CallCategory::kLaunch) << name;
    } else if (StartsWithAny(canonical, copies)) {
      EXPECT_EQ(category, CallCategory::kCopy) << name;
    } else if (StartsWithAny(canonical, waits)) {
      EXPECT_EQ(category, CallCategory::kWaitEvent) << name;
    } else if (StartsWithAny(canonical, syncs)) {
      EXPECT_EQ(category, CallCategory::kSync) << name;
    } else {
      continue;
    }
    ++checked;
  }
  EXPECT_GT(checked, 200);
}

// Conversely, no callback outside those families is turned on: the ones that are stay within
// launches, syncs, copies, waits, code loading, initialisation, memory management and graph
// capture.
TEST(CategorizeCudaApiTest, NoCuptiCallbackOutsideTheNeededFamiliesIsTurnedOn) {
  const std::vector<std::string> names = AllCallbackNames();
  if (names.empty()) GTEST_SKIP() << "no CUPTI headers in this build";
  const std::vector<absl::string_view> families = {"cudaLaunch",
                                                   "cuLaunch",
                                                   "cudaGraphLaunch",
                                                   "cuGraphLaunch",
                                                   "cudaMemset",
                                                   "cuMemset",
                                                   "cudaMemcpy",
                                                   "cuMemcpy",
                                                   "cudaStreamWaitEvent",
                                                   "cuStreamWaitEvent",
                                                   "cudaDeviceSynchronize",
                                                   "cudaStreamSynchronize",
                                                   "cudaEventSynchronize",
                                                   "cudaThreadSynchronize",
                                                   "cuCtxSynchronize",
                                                   "cuStreamSynchronize",
                                                   "cuEventSynchronize",
                                                   "cuModuleLoad",
                                                   "cuLibraryLoad",
                                                   "cudaLibraryLoad",
                                                   "cuLinkComplete",
                                                   "cuInit",
                                                   "cudaInitDevice",
                                                   "cuDevicePrimaryCtxRetain",
                                                   "cuCtxCreate",
                                                   "cudaMalloc",
                                                   "cudaFree",
                                                   "cudaHostAlloc",
                                                   "cudaHostRegister",
                                                   "cudaHostUnregister",
                                                   "cuMemAlloc",
                                                   "cuMemFree",
                                                   "cuMemHostAlloc",
                                                   "cuMemHostRegister",
                                                   "cuMemHostUnregister",
                                                   "cuMemCreate",
                                                   "cuMemRelease",
                                                   "cuMemMap",
                                                   "cuMemUnmap",
                                                   "cuMemSetAccess",
                                                   "cuMemAddressReserve",
                                                   "cuMemAddressFree",
                                                   "cudaStreamBeginCapture",
                                                   "cuStreamBeginCapture",
                                                   "cudaStreamEndCapture",
                                                   "cuStreamEndCapture",
                                                   "cudaGraphInstantiate",
                                                   "cuGraphInstantiate",
                                                   "cudaGraphUpload",
                                                   "cuGraphUpload"};
  std::vector<std::string> unexpected;
  int turned_on = 0;
  for (const std::string& name : names) {
    if (CategoryOfCallback(name) == CallCategory::kOther) continue;
    ++turned_on;
    if (!StartsWithAny(CanonicalCudaApiName(name), families)) unexpected.push_back(name);
  }
  EXPECT_THAT(unexpected, IsEmpty());
  // A small share of the ~1300 callbacks: the collector's callbacks stay cheap.
  EXPECT_LT(turned_on, static_cast<int>(names.size()) / 4);
}

// Getters, setters and queries never queue or wait for GPU work.
TEST(CategorizeCudaApiTest, NoCuptiGetterSetterOrQueryIsTurnedOn) {
  const std::vector<std::string> names = AllCallbackNames();
  if (names.empty()) GTEST_SKIP() << "no CUPTI headers in this build";
  int checked = 0;
  for (const std::string& name : names) {
    // cuMemSetAccess is no setter of state: it maps new memory (expandable segments' growth).
    if (name == "cuMemSetAccess") continue;
    if (absl::StrContains(name, "Get") || absl::StrContains(name, "Set") ||
        absl::StrContains(name, "Query") || absl::StrContains(name, "IsCapturing")) {
      EXPECT_EQ(CategoryOfCallback(name), CallCategory::kOther) << name;
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
}

// --- IsCommunicationKernel and DescribeCopy ---------------------------------------------------

TEST(IsCommunicationKernelTest, NcclAndRcclKernelsAreCommunication) {
  EXPECT_TRUE(IsCommunicationKernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
  EXPECT_TRUE(IsCommunicationKernel("ncclKernel_AllGather_RING_LL_Sum_int8_t"));
  EXPECT_TRUE(IsCommunicationKernel("void ncclKernel_Broadcast_RING_LL(ncclDevComm*)"));
  EXPECT_TRUE(IsCommunicationKernel("void ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096>)"));
  EXPECT_TRUE(IsCommunicationKernel("rcclKernel_AllReduce"));
  EXPECT_FALSE(IsCommunicationKernel("ampere_sgemm_128x64_nn"));
  EXPECT_FALSE(IsCommunicationKernel("my_nccl_like_kernel"));
  EXPECT_FALSE(IsCommunicationKernel(""));
}

TEST(DescribeCopyTest, ReadsTheDirectionAndPageableMemoryFromTheName) {
  const CopyDescription pageable = DescribeCopy("Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(pageable.kind, CopyKind::kHtoD);
  EXPECT_TRUE(pageable.pageable);
  const CopyDescription pinned = DescribeCopy("Memcpy DtoH (Device -> Pinned)");
  EXPECT_EQ(pinned.kind, CopyKind::kDtoH);
  EXPECT_FALSE(pinned.pageable);
  EXPECT_EQ(DescribeCopy("Memcpy DtoD (Device -> Device)").kind, CopyKind::kDtoD);
  EXPECT_EQ(DescribeCopy("Memcpy HtoH (Pinned -> Pinned)").kind, CopyKind::kHtoH);
  EXPECT_EQ(DescribeCopy("Memcpy PtoP (Device -> Device)").kind, CopyKind::kPeer);
  const CopyDescription unknown = DescribeCopy("Memset (Device)");
  EXPECT_EQ(unknown.kind, CopyKind::kUnknown);
  EXPECT_FALSE(unknown.pageable);
  EXPECT_EQ(DescribeCopy("").kind, CopyKind::kUnknown);
}

}  // namespace
}  // namespace gpuidle::internal
