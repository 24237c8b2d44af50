// NVTX capture: libgpuidle.so is an NVTX injection library. NVTX (header-only, compiled into
// each program and library that annotates: PyTorch, NCCL, the user's code) loads the library
// named by NVTX_INJECTION64_PATH and calls its InitializeInjectionNvtx2, which hands over the
// NVTX function tables; gpuidle fills the range entry points so that ranges reach the
// HostRangeRecorder. `gpuidle run` and LD_PRELOAD set NVTX_INJECTION64_PATH; gpuidle's own
// markers also reach it without the variable (InjectOwnNvtx).
//
// The domain "gpuidle" carries gpuidle's markers; its categories say what they mark.
#ifndef GPUIDLE_LIB_COLLECT_NVTX_CAPTURE_H_
#define GPUIDLE_LIB_COLLECT_NVTX_CAPTURE_H_

#include <cstdint>

namespace gpuidle::internal {

inline constexpr char kMarkerDomain[] = "gpuidle";
inline constexpr uint32_t kMarkerCategoryStep = 1;
inline constexpr uint32_t kMarkerCategoryData = 2;
inline constexpr uint32_t kMarkerCategoryUser = 3;
inline constexpr uint32_t kMarkerCategoryCallSite = 4;  // a place in the program: "file:line in f"
// Serving: start/end ranges named as model/trace_names.h says (kRequestName, kRequestRunName).
inline constexpr uint32_t kMarkerCategoryRequest = 5;
inline constexpr uint32_t kMarkerCategoryRequestRun = 6;

// NVTX's NvtxGetExportTableFunc_t, so that this header needs no NVTX header.
using NvtxExportTableGetter = const void* (*)(uint32_t export_table_id);

// Fills the range entry points of the NVTX instance that get_export_table belongs to (the body
// of InitializeInjectionNvtx2). Returns 1 on success, 0 if the tables are not there.
int AttachNvtx(NvtxExportTableGetter get_export_table);

// Makes gpuidle's own NVTX instance (its markers) report to the capture even when
// NVTX_INJECTION64_PATH is unset. Call before gpuidle's first NVTX call.
void InjectOwnNvtx();

// How many NVTX instances (modules) have handed their tables to gpuidle.
int NvtxModulesAttached();

// gpuidle's markers: a range of the domain "gpuidle" with one of the categories above, pushed
// and popped on the calling thread through gpuidle's own NVTX instance (so that any other NVTX
// tool sees them too). No-ops in a build without CUPTI.
void PushMarkerRange(uint32_t category, const char* message) noexcept;
void PopMarkerRange() noexcept;

// gpuidle's start/end markers (serving requests): a range of the domain "gpuidle" that may end on
// another thread. Returns the NVTX range id to end it with (0 when no tool takes NVTX ranges).
uint64_t StartMarkerRange(uint32_t category, const char* message) noexcept;
void EndMarkerRange(uint64_t range_id) noexcept;

// Whether a marker made now would reach anyone: gpuidle records, or gpuidle's markers go to
// another NVTX tool (NVTX_INJECTION64_PATH names Nsight Systems), which keeps them whether gpuidle
// records or not. Markers that cost more than one NVTX call (a request's bookkeeping) ask first.
bool MarkersWanted() noexcept;

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_NVTX_CAPTURE_H_
