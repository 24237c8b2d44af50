// Whether this machine has an NVIDIA GPU, decided as gpuidle decides it at every way in
// (collect/cuda_driver.h CheckForNvidiaGpu). Tests of what gpuidle says and does without a GPU
// (the one "no NVIDIA GPU" warning, a refused Start) skip where there is one:
//
//   if (HostHasNvidiaGpu()) GTEST_SKIP() << kSkippedOnAGpuHost;
#ifndef GPUIDLE_TESTS_TESTING_GPU_HOST_H_
#define GPUIDLE_TESTS_TESTING_GPU_HOST_H_

#include "collect/collection.h"
#include "collect/cuda_driver.h"

namespace gpuidle::testing {

inline constexpr char kSkippedOnAGpuHost[] =
    "checks the behaviour without an NVIDIA GPU; this machine has one";

inline bool HostHasNvidiaGpu() { return internal::CheckForNvidiaGpu().ok(); }

// Tests of what the live collector says (a missing GPU, a missing CUPTI) skip in a build without
// it (-DGPUIDLE_WITH_CUPTI=OFF), which says only that it cannot collect:
//
//   if (!BuildCanCollect()) GTEST_SKIP() << kSkippedWithoutCollector;
inline constexpr char kSkippedWithoutCollector[] =
    "checks what the live collector says; this build has none (GPUIDLE_WITH_CUPTI=OFF)";

inline bool BuildCanCollect() { return internal::CollectionSupported(); }

}  // namespace gpuidle::testing

#endif  // GPUIDLE_TESTS_TESTING_GPU_HOST_H_
