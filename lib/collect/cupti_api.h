// The seam between gpuidle and CUPTI: the CUPTI functions the collector calls, as a table of
// function pointers. LoadCupti() fills it from the libcupti the process uses (one copy per
// process: PyTorch wheels bring their own); CPU tests fill it with a fake that hands recorded
// activity records to the collector. One indirect call per CUPTI call, none per record.
#ifndef GPUIDLE_LIB_COLLECT_CUPTI_API_H_
#define GPUIDLE_LIB_COLLECT_CUPTI_API_H_

#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpuidle::internal {

struct CuptiApi {
  CUptiResult (*Subscribe)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*) = nullptr;
  CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle) = nullptr;
  CUptiResult (*EnableCallback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                CUpti_CallbackId) = nullptr;
  CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
                                           CUpti_BuffersCallbackCompleteFunc) = nullptr;
  CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc) = nullptr;
  CUptiResult (*SetThreadIdType)(CUpti_ActivityThreadIdType) = nullptr;
  CUptiResult (*ActivityEnable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*ActivityDisable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*ActivityEnableRuntimeApi)(CUpti_CallbackId, uint8_t) = nullptr;
  CUptiResult (*ActivityEnableDriverApi)(CUpti_CallbackId, uint8_t) = nullptr;
  CUptiResult (*ActivityGetNextRecord)(uint8_t*, size_t, CUpti_Activity**) = nullptr;
  CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t*) = nullptr;
  CUptiResult (*ActivityFlushAll)(uint32_t) = nullptr;
  CUptiResult (*ActivityFlushPeriod)(uint32_t) = nullptr;
  CUptiResult (*GetCallbackName)(CUpti_CallbackDomain, uint32_t, const char**) = nullptr;
  CUptiResult (*GetResultString)(CUptiResult, const char**) = nullptr;
  CUptiResult (*GetTimestamp)(uint64_t*) = nullptr;
  CUptiResult (*Finalize)() = nullptr;

  // PM sampling of device throughput (collect/pm_sampling.h). Optional: null where this CUPTI
  // lacks them, and then only throughput sampling is unavailable.
  CUptiResult (*ProfilerInitialize)(CUpti_Profiler_Initialize_Params*) = nullptr;
  CUptiResult (*ProfilerDeInitialize)(CUpti_Profiler_DeInitialize_Params*) = nullptr;
  CUptiResult (*DeviceGetChipName)(CUpti_Device_GetChipName_Params*) = nullptr;
  CUptiResult (*PmSamplingGetCounterAvailability)(CUpti_PmSampling_GetCounterAvailability_Params*) =
      nullptr;
  CUptiResult (*PmSamplingEnable)(CUpti_PmSampling_Enable_Params*) = nullptr;
  CUptiResult (*PmSamplingDisable)(CUpti_PmSampling_Disable_Params*) = nullptr;
  CUptiResult (*PmSamplingSetConfig)(CUpti_PmSampling_SetConfig_Params*) = nullptr;
  CUptiResult (*PmSamplingGetCounterDataSize)(CUpti_PmSampling_GetCounterDataSize_Params*) =
      nullptr;
  CUptiResult (*PmSamplingCounterDataImageInitialize)(
      CUpti_PmSampling_CounterDataImage_Initialize_Params*) = nullptr;
  CUptiResult (*PmSamplingStart)(CUpti_PmSampling_Start_Params*) = nullptr;
  CUptiResult (*PmSamplingStop)(CUpti_PmSampling_Stop_Params*) = nullptr;
  CUptiResult (*PmSamplingDecodeData)(CUpti_PmSampling_DecodeData_Params*) = nullptr;
  CUptiResult (*PmSamplingGetCounterDataInfo)(CUpti_PmSampling_GetCounterDataInfo_Params*) =
      nullptr;
  CUptiResult (*PmSamplingCounterDataGetSampleInfo)(
      CUpti_PmSampling_CounterData_GetSampleInfo_Params*) = nullptr;
  CUptiResult (*ProfilerHostInitialize)(CUpti_Profiler_Host_Initialize_Params*) = nullptr;
  CUptiResult (*ProfilerHostDeinitialize)(CUpti_Profiler_Host_Deinitialize_Params*) = nullptr;
  CUptiResult (*ProfilerHostConfigAddMetrics)(CUpti_Profiler_Host_ConfigAddMetrics_Params*) =
      nullptr;
  CUptiResult (*ProfilerHostGetConfigImageSize)(CUpti_Profiler_Host_GetConfigImageSize_Params*) =
      nullptr;
  CUptiResult (*ProfilerHostGetConfigImage)(CUpti_Profiler_Host_GetConfigImage_Params*) = nullptr;
  CUptiResult (*ProfilerHostGetNumOfPasses)(CUpti_Profiler_Host_GetNumOfPasses_Params*) = nullptr;
  CUptiResult (*ProfilerHostEvaluateToGpuValues)(CUpti_Profiler_Host_EvaluateToGpuValues_Params*) =
      nullptr;
  // The first of them this CUPTI lacks (nullptr: it has them all).
  const char* pm_sampling_missing = nullptr;
};

// The CUPTI of this process: the libcupti.so.13 already loaded (PyTorch's), else the one named
// by GPUIDLE_CUPTI_PATH, else the system's (library path, then /usr/local/cuda). Loaded once.
// Unavailable with what was tried if there is none, or naming the file when it is not CUDA 13's
// CUPTI; InvalidArgument naming the variable when GPUIDLE_CUPTI_PATH names a file that cannot
// be used (never a fall-back to another CUPTI). Each message is one short line.
absl::StatusOr<const CuptiApi*> LoadCupti();

// "CUPTI_ERROR_NOT_INITIALIZED (...)" for messages.
std::string DescribeCuptiResult(const CuptiApi& api, CUptiResult result);

// The one way a CUPTI result becomes a Status: OK, or Unavailable "CUPTI <what> failed:
// <CUPTI's words>".
absl::Status CuptiStatus(const CuptiApi& api, CUptiResult result, absl::string_view what);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_CUPTI_API_H_
