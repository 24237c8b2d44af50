// Records this process's GPU timeline with CUPTI activity tracing (DESIGN.md, collector rules):
// CONCURRENT_KERNEL, MEMCPY, MEMSET, SYNCHRONIZATION, CUDA events, and only the runtime and
// driver calls the analysis needs (chosen per callback id by model/cuda_api's categories),
// timed in CUPTI's API callbacks (ApiRecords).
// Buffers come from a preallocated pool; a worker thread decodes completed buffers, so the
// application's threads only hand buffers over.
//
// One per process (CUPTI has one activity client): the collector lives for the whole process
// because CUPTI may call back at any time; Start and Stop may alternate.
#ifndef GPUIDLE_LIB_COLLECT_COLLECTOR_H_
#define GPUIDLE_LIB_COLLECT_COLLECTOR_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "collect/cuda_driver.h"
#include "collect/cupti_api.h"
#include "collect/lost_records.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// Parts of the collector that the overhead benchmark can leave out, one at a time, to price
// each (GPUIDLE_BENCH_LEAVE_OUT, docs/PERFORMANCE.md). Leaving one out loses evidence or
// breaks the timeline's thread ids: never a user setting.
enum CollectorPart : uint32_t {
  kPartRuntimeCalls = 1u << 0,     // runtime API records (launch, sync, copy, wait-event)
  kPartDriverCalls = 1u << 1,      // driver API records
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
};

// What Stop leaves behind. Once CUPTI has traced, it keeps intercepting the program's CUDA calls
// after every kind and callback is off, until it is detached (cuptiFinalize): the H200 benchmark
// measured what stays (docs/PERFORMANCE.md), and PyTorch saw training run 10-20% slower after
// torch.profiler until it detached too (pytorch/pytorch#146604). A stop in the middle of a
// program detaches; a stop at exit does not (nothing runs after it, and teardown at exit has
// its own hazards). CUPTI attaches again at the next Start.
enum class CuptiAfterStop { kStayAttached, kDetach };

// How the launch, sync, copy and wait-event calls are recorded.
//
// kCallbacks, the default: gpuidle enables CUPTI's API callbacks for the needed callback ids
// only and times each call itself (collect/timed_calls.h). It works whenever the collection
// starts, and CUPTI intercepts nothing else.
//
// The others ask CUPTI for an activity record per call; the overhead benchmark compares them
// (GPUIDLE_BENCH_API_RECORDS, docs/PERFORMANCE.md). Enabling single callback ids records calls
// when CUPTI starts while CUDA initialises (the injection), but records nothing when a
// collection starts after CUDA was initialised (H200, CUDA 13.0: docs/VALIDATION.md). Enabling
// the API kinds and switching off every unneeded callback id works in both (Kineto's way) but
// intercepts every API call; the ids are switched back on when the collection stops, so that
// the next user of CUPTI (torch.profiler) finds CUPTI's defaults.
enum class ApiRecords {
  kCallbacks,  // gpuidle times the needed calls in CUPTI's callbacks
  // ... in the driver's callbacks only: every runtime call reaches the driver, with the same
  // correlation id (H200 probe), and no runtime callback is enabled.
  kDriverCallbacks,
  kAuto,        // activity records: kIdsOnly before the program initialised CUDA, else kWholeKinds
  kWholeKinds,  // activity records of the API kinds, every unneeded callback id off
  kIdsOnly,     // activity records of the needed callback ids only
};

// "callbacks", "driver-callbacks", "auto", "ids", "kinds" (GPUIDLE_BENCH_API_RECORDS).
absl::StatusOr<ApiRecords> ParseApiRecords(absl::string_view name);

// "runtime,decode" -> the parts' bits; an unknown name is an error naming it (the names:
// collector.cc ParseCollectorParts).
absl::StatusOr<uint32_t> ParseCollectorParts(absl::string_view names);

struct CollectorOptions {
  size_t buffer_bytes = size_t{8} << 20;  // CUPTI's recommended buffer size
  size_t buffer_count = 8;
  // Collection stops (every kind disabled) once this many records were decoded; the timeline
  // says so (TimelineInfo::record_limit_reached).
  int64_t max_records = 20'000'000;
  uint32_t leave_out = 0;  // CollectorPart bits: benchmark diagnostics only
  ApiRecords api_records = ApiRecords::kCallbacks;
  // Whether CUDA is initialised (kAuto), the devices and their names where CUPTI sent no
  // DEVICE record (a late start); tests replace them.
  CudaDriverQueries driver;
};

struct CollectorCounters {
  uint64_t records = 0;
  uint64_t dropped = 0;         // CUPTI's count: no buffer, or a buffer overflowed
  uint64_t pool_exhausted = 0;  // buffer requests gpuidle could not serve
  uint64_t detaches = 0;        // stops that detached CUPTI (CuptiAfterStop::kDetach)
  // Buffers another CUPTI client took (they never came back after a stop's forced flush).
  uint64_t buffers_taken = 0;
};

class Collector {
 public:
  static Collector& Get();

  // Takes CUPTI and starts recording. Unavailable with CUPTI's reason when it refuses (no
  // driver or GPU, another tool subscribed, ...); nothing stays enabled then.
  absl::Status Start(const CuptiApi& api, const CollectorOptions& options);
  // Disables recording, flushes CUPTI, waits until every buffer is decoded, releases CUPTI and
  // returns the timeline (host ranges included). With kDetach, CUPTI is then detached from the
  // process when that is safe (every buffer back, the driver's callback came).
  absl::StatusOr<Timeline> Stop(CuptiAfterStop after = CuptiAfterStop::kStayAttached);
  bool collecting() const;
  CollectorCounters counters() const;
  // When the last stopped collection lost records (collect/lost_records.h): sorted, merged;
  // empty when it lost none.
  std::vector<LostRecordSpan> last_lost_record_spans() const;

  // In a forked child: forget the parent's collection without calling CUPTI or joining the
  // parent's threads (they do not exist here).
  void AbandonAfterFork();

  // CUPTI's callbacks (C linkage is not needed: CUPTI takes plain function pointers).
  static void BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void BufferCompleted(CUcontext context, uint32_t stream, uint8_t* buffer, size_t size,
                              size_t valid_size);

 private:
  struct State;
  Collector();
  State* state_;  // never freed (process lifetime)
};

// The OS thread ids (gettid) of the threads that made a timed CUDA call (launch, sync, copy,
// wait-event) in the running collection, are not inside one now, and ended their latest one
// at least min_away_ns before now_ns (the timeline's clock): the threads whose host stack is
// worth sampling (a long stretch of host work). Empty when not collecting. Lock-free; any
// thread.
void ThreadsAwayFromCuda(int64_t now_ns, int64_t min_away_ns, std::vector<uint64_t>* threads);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_COLLECTOR_H_
