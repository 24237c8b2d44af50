// The one seam between the collector and the overhead benchmark's probes (docs/PERFORMANCE.md):
// the benchmark fills a CollectorProbes, to leave a part of the collector out or record the API
// calls another way, and the collector asks it at a few named points (LeavesOut, TimesCalls,
// ApiRecordsFor; collect/api_activity_probe.h KeepsKind and the probes' own CUPTI work). The
// probes exist only in a build configured with -DGPUIDLE_COLLECTOR_PROBES=ON, which compiles in
// the benchmark's reader of its settings (tests/benchmarks/overhead/probe_settings.cc); in every
// other build kProbesCompiledIn is false, every answer below is a constant (the product's way)
// and no benchmark setting is read. Leaving a part out loses evidence or breaks the timeline's
// thread ids: never a user setting.
//
// No CUPTI type here: code above collect asks kProbesCompiledIn too.
#ifndef GPUIDLE_LIB_COLLECT_COLLECTOR_PROBES_H_
#define GPUIDLE_LIB_COLLECT_COLLECTOR_PROBES_H_

#include <cstdint>

#include "absl/status/statusor.h"

#ifndef GPUIDLE_COLLECTOR_PROBES
#define GPUIDLE_COLLECTOR_PROBES 0
#endif

namespace gpuidle::internal {

inline constexpr bool kProbesCompiledIn = GPUIDLE_COLLECTOR_PROBES != 0;

enum CollectorPart : uint32_t {
  kPartRuntimeCalls = 1u << 0,     // runtime API calls (launch, sync, copy, wait-event)
  kPartDriverCalls = 1u << 1,      // driver API calls
  kPartOtherKinds = 1u << 2,       // every activity kind but CONCURRENT_KERNEL
  kPartDecode = 1u << 3,           // translating buffers (they are returned undecoded)
  kPartSubscriber = 1u << 4,       // the callback subscriber that claims CUPTI
  kPartSystemThreadIds = 1u << 5,  // CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM
  kPartFlushPeriod = 1u << 6,      // the periodic flush
  kPartNestedCallSkip = 1u << 7,   // timed calls: skipping driver calls inside runtime calls
  kPartDetach = 1u << 8,           // detaching CUPTI when a collection stops (CuptiAfterStop)
  // One of the other activity kinds at a time, to find which of them costs what:
  kPartMemcpyRecords = 1u << 9,   // MEMCPY and MEMCPY2
  kPartMemsetRecords = 1u << 10,  // MEMSET
  kPartSyncRecords = 1u << 11,    // SYNCHRONIZATION
  kPartEventRecords = 1u << 12,   // CUDA_EVENT
  kPartDeviceRecords = 1u << 13,  // DEVICE
  // The timed calls' own work, to tell it from CUPTI's dispatch of the callbacks:
  kPartCallTiming = 1u << 14,  // callbacks enabled, but they return at once (nothing timed)
  kPartCuptiClock = 1u << 15,  // calls timed on CLOCK_REALTIME + an offset, not cuptiGetTimestamp
  // Not left out but added, to price what CUPTI offers beyond today's collection:
  kAddLatencyTimestamps = 1u << 16,   // kernel records' queued/submitted (cuptiActivityEnable-
                                      // LatencyTimestamps)
  kAddLargeDeviceBuffers = 1u << 17,  // 32 MiB device buffers, 4 preallocated, pool limit 16
};

// How the launch, sync, copy and wait-event calls are recorded.
//
// kCallbacks, the product's only way: gpuidle enables CUPTI's API callbacks for the needed
// callback ids and times each call itself (collect/call_timing.h). It works whenever the
// collection starts, and CUPTI intercepts nothing else.
//
// The others, probes only, ask CUPTI for an activity record per call. Enabling single callback
// ids records calls when CUPTI starts while CUDA initialises (the injection), but records
// nothing when a collection starts after CUDA was initialised (H200, CUDA 13.0:
// docs/VALIDATION.md). Enabling the API kinds and switching off every unneeded callback id
// works in both (Kineto's way) but intercepts every API call; the ids are switched back on when
// the collection stops, so that the next user of CUPTI finds CUPTI's defaults.
enum class ApiRecords {
  kCallbacks,
  // ... in the driver's callbacks only: every runtime call reaches the driver, with the same
  // correlation id (H200 probe), and no runtime callback is enabled.
  kDriverCallbacks,
  kAuto,        // activity records: kIdsOnly before the program initialised CUDA, else kWholeKinds
  kWholeKinds,  // activity records of the API kinds, every unneeded callback id off
  kIdsOnly,     // activity records of the needed callback ids only
};

struct CollectorProbes {
  uint32_t leave_out = 0;  // CollectorPart bits
  ApiRecords api_records = ApiRecords::kCallbacks;

  // Whether the collector leaves any of parts out; never in a product build.
  constexpr bool LeavesOut(uint32_t parts) const {
    return kProbesCompiledIn && (leave_out & parts) != 0;
  }
  // Whether the probes add part (a kAdd part); never in a product build.
  constexpr bool Adds(CollectorPart part) const { return LeavesOut(part); }
  // Whether the API calls are timed in callbacks (always in a product build).
  constexpr bool TimesCalls() const {
    return !kProbesCompiledIn || api_records == ApiRecords::kCallbacks ||
           api_records == ApiRecords::kDriverCallbacks;
  }
  // How this start records the calls: api_records, except that timing them needs the subscriber
  // (only a probe leaves it out) and kAuto asks cuda_initialized() which records work now.
  template <typename CudaInitialized>
  constexpr ApiRecords ApiRecordsFor(bool subscribed, CudaInitialized cuda_initialized) const {
    if constexpr (!kProbesCompiledIn) return ApiRecords::kCallbacks;
    ApiRecords mode = TimesCalls() && !subscribed ? ApiRecords::kAuto : api_records;
    if (mode != ApiRecords::kAuto) return mode;
    return cuda_initialized() ? ApiRecords::kWholeKinds : ApiRecords::kIdsOnly;
  }
};

#if GPUIDLE_COLLECTOR_PROBES
// What the benchmark asks of this process's collections, from its settings: an InvalidArgument
// error naming the setting for a bad value. Defined by the benchmark
// (tests/benchmarks/overhead/probe_settings.cc), which only a probe build compiles in.
absl::StatusOr<CollectorProbes> BenchmarkProbes();
#else
// A product build reads nothing: the product's way.
inline absl::StatusOr<CollectorProbes> BenchmarkProbes() { return CollectorProbes(); }
#endif

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_COLLECTOR_PROBES_H_
