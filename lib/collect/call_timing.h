// Timing the launch, sync, copy and wait-event calls in CUPTI's API callbacks
// (ApiRecords::kCallbacks): CUPTI's clock at the entry and exit of each call, on the calling
// thread, appended to that thread's chunk of the TimedCallLog. Also keeps, per thread, when its
// latest outermost call began and ended, for the host-stack sampler of a language binding
// (ThreadsAwayFromCuda). Runs on the application's threads: no lock, no allocation per call.
#ifndef GPUIDLE_LIB_COLLECT_CALL_TIMING_H_
#define GPUIDLE_LIB_COLLECT_CALL_TIMING_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "collect/collector_probes.h"
#include "collect/cupti_api.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// What tracing adds to the calls timed here (model/timeline.h TracerCostModel), which the
// analysis takes out of the timeline (analysis/untraced_view.h). Fitted on the H200 (driver 580,
// CUPTI 13.0, torch 2.11) to PyTorch processes traced against their own untraced steps
// (docs/PERFORMANCE.md, "What the tracer costs each call"): a timed launch call beyond 5 us spent
// the excess in the tracer, and the program lost 1.2 us more outside the call per microsecond of
// it; a launch over 30 us waited for the GPU's queue, not for CUPTI. (Refitted when the
// synchronization and event records stopped costing every launch: the floor was 3 us.)
inline constexpr TracerCostModel kTracerCostOfTimedCalls{.launch_floor_ns = 5'000,
                                                         .launch_excess_max_ns = 30'000,
                                                         .outside_permille = 1'200,
                                                         .per_call_ns = 0};

// What a thread keeps across callbacks; reset at its first callback of each collection.
struct CollectingThread {
  uint32_t thread = 0;  // the OS thread id (gettid), as CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM
  uint64_t epoch = 0;
  int runtime_depth = 0;            // timed runtime calls this thread is inside
  int64_t next_site_sample_ns = 0;  // collect/call_site_naming.h
};

// One per collector (Collector's state); CUPTI's callbacks reach it through the subscriber.
class CallTimer {
 public:
  // A new collection: every thread's state starts afresh at its next callback.
  void NewCollection() { epoch_.fetch_add(1, std::memory_order_acq_rel); }
  // This thread's state in the current collection.
  CollectingThread& ThisThread();

  // Reads api's clock from now on (naming call sites reads it too, timed or not).
  void UseClockOf(const CuptiApi& api) {
    get_timestamp_.store(api.GetTimestamp, std::memory_order_relaxed);
  }
  // Starts timing calls; calls that began before now are not kept.
  void Start(const CollectorProbes& probes);
  void Stop() { timing_.store(false, std::memory_order_release); }
  bool timing() const { return timing_.load(std::memory_order_acquire); }

  // CUPTI's clock now, 0 if it cannot be read.
  int64_t Now() const;
  // One API callback (entry or exit) of a timed callback id. A driver call made inside a timed
  // runtime call (cudaLaunchKernel calls cuLaunchKernel) is the same call: only the runtime
  // call is kept, as CUPTI's records do.
  void OnCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                  const CUpti_CallbackData& call);

  // The OS thread ids of the threads that made a timed call in the running collection, are not
  // inside one now, and ended their latest one at least min_away_ns before now_ns. Empty when
  // not timing. Lock-free; any thread. Threads beyond kActivitySlots are not listed.
  void ThreadsAwayFromCuda(int64_t now_ns, int64_t min_away_ns,
                           std::vector<uint64_t>* threads) const;

  static constexpr size_t kActivitySlots = 512;

 private:
  // Per thread: when its latest outermost timed call began and ended. Written only by its
  // thread (two relaxed stores per call), each on its own cache line; a thread claims one at
  // its first timed call and frees it when it exits.
  struct alignas(64) ThreadActivity {
    std::atomic<uint32_t> thread{0};
    std::atomic<int64_t> enter_ns{0};
    std::atomic<int64_t> exit_ns{0};
  };
  struct ActivitySlot;
  ThreadActivity* ActivityOf(uint32_t thread);
  // The probes' switches (Start): constant false in a product build, so that its hot path reads
  // neither.
  bool nested_calls_timed() const {
    return kProbesCompiledIn && nested_calls_timed_.load(std::memory_order_relaxed);
  }
  bool realtime_clock() const {
    return kProbesCompiledIn && realtime_clock_.load(std::memory_order_relaxed);
  }

  std::atomic<bool> timing_{false};
  std::atomic<uint64_t> since_ns_{0};
  std::atomic<uint64_t> epoch_{0};
  std::atomic<CUptiResult (*)(uint64_t*)> get_timestamp_{nullptr};
  // Probes (collector_probes.h): never set in a product build.
  std::atomic<bool> nested_calls_timed_{false};
  std::atomic<int64_t> realtime_to_cupti_ns_{0};
  std::atomic<bool> realtime_clock_{false};
  ThreadActivity activity_[kActivitySlots];
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_CALL_TIMING_H_
