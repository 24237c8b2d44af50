// Records this process's GPU timeline with CUPTI activity tracing (DESIGN.md, collector rules):
// CONCURRENT_KERNEL, MEMCPY, MEMSET, SYNCHRONIZATION, CUDA events, DEVICE, and the runtime and
// driver calls the analysis needs (collect/callback_ids.h), timed in CUPTI's API callbacks
// (collect/call_timing.h). Buffers come from a preallocated pool; a worker thread decodes
// completed buffers (collect/decode_worker.h), so the application's threads only hand buffers
// over. Lost records are kept as spans (collect/lost_records.h); a stop in the middle of a
// program detaches CUPTI (collect/cupti_detach.h).
//
// One per process (CUPTI has one activity client): the collector lives for the whole process
// because CUPTI may call back at any time; Start and Stop may alternate. The session reaches it
// through collect/collection.h; tests drive it with a fake CUPTI.
#ifndef GPUIDLE_LIB_COLLECT_COLLECTOR_H_
#define GPUIDLE_LIB_COLLECT_COLLECTOR_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collect/collection.h"
#include "collect/collector_probes.h"
#include "collect/cuda_driver.h"
#include "collect/cupti_api.h"
#include "collect/lost_records.h"
#include "gpuidle/options.h"
#include "model/timeline.h"

namespace gpuidle::internal {

struct CollectorOptions {
  size_t buffer_bytes = size_t{8} << 20;  // CUPTI's recommended buffer size
  size_t buffer_count = 8;
  // Collection stops (every kind disabled) once this many records were decoded; the timeline
  // says so (TimelineInfo::record_limit_reached).
  int64_t max_records = 20'000'000;
  // Whether CUDA is initialised, the devices and their names where CUPTI sent no DEVICE record
  // (a late start); tests replace them.
  CudaDriverQueries driver;
  // The overhead benchmark's probes; without effect unless probes are compiled in.
  CollectorProbes probes;

  // The buffers and the record limit a collection's options ask for: the pool of
  // ProfilerOptions::buffer_pool_mb in buffers of CUPTI's recommended 8 MiB, or smaller so that
  // there are at least 4 (CUPTI always has one while others are being decoded).
  static CollectorOptions For(const ProfilerOptions& options);
};

struct CollectorCounters {
  uint64_t records = 0;
  uint64_t dropped = 0;         // CUPTI's count: no buffer, or a buffer overflowed
  uint64_t pool_exhausted = 0;  // buffer requests gpuidle could not serve
  uint64_t detaches = 0;        // stops that detached CUPTI (CuptiAfterStop::kDetach)
  // Buffers another CUPTI client took (they never came back after a stop's forced flush).
  uint64_t buffers_taken = 0;
};

struct CollectorState;

class Collector {
 public:
  static Collector& Get();

  // Takes CUPTI and starts recording. Unavailable with CUPTI's reason when it refuses (no
  // driver or GPU, another tool subscribed, ...) or ResourceExhausted when no decode thread can
  // be created; nothing stays enabled then. A CUPTI call that fails without stopping the
  // collection (an optional record kind, a callback id) becomes a warning of the timeline.
  absl::Status Start(const CuptiApi& api, const CollectorOptions& options,
                     StartCost* cost = nullptr);
  // Disables recording, flushes CUPTI, waits until every buffer is decoded, releases CUPTI and
  // returns the timeline (host ranges included). With kDetach, CUPTI is then detached from the
  // process when that is safe (every buffer back, the driver's callback came).
  absl::StatusOr<Timeline> Stop(CuptiAfterStop after = CuptiAfterStop::kStayAttached,
                                StopCost* cost = nullptr);
  bool collecting() const;
  // Whether Stop(kDetach) detaches CUPTI (a benchmark's probe may leave the detach out).
  bool DetachesAtStop() const;
  CollectorCounters counters() const;
  // When the last stopped collection lost records: sorted, merged; empty when it lost none.
  std::vector<LostRecordSpan> last_lost_record_spans() const;
  // collect/collection.h ThreadsAwayFromCuda.
  void ThreadsAwayFromCuda(int64_t now_ns, int64_t min_away_ns,
                           std::vector<uint64_t>* threads) const;

  // In a forked child: forget the parent's collection without calling CUPTI or joining the
  // parent's threads (they do not exist here).
  void AbandonAfterFork();

 private:
  explicit Collector(CollectorState* state) : state_(state) {}
  CollectorState* state_;  // never freed (process lifetime)
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_COLLECTOR_H_
