#include "collect/call_timing.h"

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "collect/clock.h"
#include "collect/timed_calls.h"

namespace gpuidle::internal {

// A thread's slot in the activity table; freed for other threads when the thread exits. Calls
// the thread makes later (from other thread-local destructors) find no slot and are not listed.
struct CallTimer::ActivitySlot {
  ThreadActivity* slot = nullptr;
  bool claimed = false;  // tried already (slot stays null when the table was full)
  ~ActivitySlot() {
    if (slot != nullptr) slot->thread.store(0, std::memory_order_release);
    slot = nullptr;
  }
};

namespace {
thread_local CollectingThread this_thread;
}  // namespace

CollectingThread& CallTimer::ThisThread() {
  CollectingThread& t = this_thread;
  const uint64_t epoch = epoch_.load(std::memory_order_acquire);
  if (t.epoch != epoch) {
    t.epoch = epoch;
    t.runtime_depth = 0;
    t.next_site_sample_ns = 0;
  }
  if (t.thread == 0) t.thread = static_cast<uint32_t>(syscall(SYS_gettid));
  return t;
}

CallTimer::ThreadActivity* CallTimer::ActivityOf(uint32_t thread) {
  thread_local ActivitySlot a;
  if (a.claimed) return a.slot;
  a.claimed = true;
  for (ThreadActivity& slot : activity_) {
    uint32_t expected = slot.thread.load(std::memory_order_relaxed);
    // A slot left with this id by a thread whose exit was not seen (a forked child) is ours.
    if (expected == thread || (expected == 0 && slot.thread.compare_exchange_strong(
                                                    expected, thread, std::memory_order_acq_rel))) {
      slot.enter_ns.store(0, std::memory_order_relaxed);
      slot.exit_ns.store(0, std::memory_order_relaxed);
      a.slot = &slot;
      break;
    }
  }
  return a.slot;
}

void CallTimer::Start(const CollectorProbes& probes) {
  nested_calls_timed_ = probes.LeavesOut(kPartNestedCallSkip);
  realtime_clock_ = probes.LeavesOut(kPartCuptiClock);
  if (realtime_clock_) realtime_to_cupti_ns_ = -WallClockOffsetNs();  // the timeline is CUPTI's
  since_ns_ = static_cast<uint64_t>(Now());
  // kPartCallTiming (a probe): the callbacks stay enabled but find nothing to do.
  timing_.store(!probes.LeavesOut(kPartCallTiming), std::memory_order_release);
}

int64_t CallTimer::Now() const {
  if (realtime_clock()) {
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec +
           realtime_to_cupti_ns_.load(std::memory_order_relaxed);
  }
  uint64_t t = 0;
  CUptiResult (*get_timestamp)(uint64_t*) = get_timestamp_.load(std::memory_order_relaxed);
  if (get_timestamp == nullptr || get_timestamp(&t) != CUPTI_SUCCESS) return 0;
  return static_cast<int64_t>(t);
}

void CallTimer::OnCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                           const CUpti_CallbackData& call) {
  CollectingThread& t = ThisThread();
  const bool driver = domain == CUPTI_CB_DOMAIN_DRIVER_API;
  const int depth = nested_calls_timed() ? 0 : t.runtime_depth;
  if (call.callbackSite == CUPTI_API_ENTER) {
    if (!driver) {
      ++t.runtime_depth;
    } else if (depth > 0) {
      return;
    }
    const int64_t now = Now();
    *call.correlationData = static_cast<uint64_t>(now);
    // Only the outermost call counts: a driver call inside a runtime call (timed when nested
    // calls are) is not the thread leaving or entering CUDA.
    if (driver ? t.runtime_depth == 0 : t.runtime_depth == 1) {
      if (ThreadActivity* a = ActivityOf(t.thread)) {
        a->enter_ns.store(now, std::memory_order_relaxed);
      }
    }
    return;
  }
  if (!driver) {
    if (t.runtime_depth > 0) --t.runtime_depth;
  } else if (depth > 0) {
    return;
  }
  const uint64_t start = *call.correlationData;
  // Cleared, so that an exit whose entry was not seen (its id enabled in between) never reads
  // an earlier call's start, should CUPTI reuse the slot.
  *call.correlationData = 0;
  const uint64_t end = static_cast<uint64_t>(Now());
  if (t.runtime_depth == 0) {
    if (ThreadActivity* a = ActivityOf(t.thread)) {
      a->exit_ns.store(static_cast<int64_t>(end), std::memory_order_relaxed);
    }
  }
  if (start < since_ns_.load(std::memory_order_relaxed) || start > end) return;
  TimedCallLog::Get().Append(
      TimedCall{start, end, call.correlationId, t.thread, cbid, driver ? 1u : 0u});
}

void CallTimer::ThreadsAwayFromCuda(int64_t now_ns, int64_t min_away_ns,
                                    std::vector<uint64_t>* threads) const {
  threads->clear();
  if (!timing()) return;
  const int64_t since = static_cast<int64_t>(since_ns_.load(std::memory_order_relaxed));
  for (const ThreadActivity& slot : activity_) {
    const uint32_t thread = slot.thread.load(std::memory_order_acquire);
    if (thread == 0) continue;
    const int64_t enter = slot.enter_ns.load(std::memory_order_relaxed);
    const int64_t exit = slot.exit_ns.load(std::memory_order_relaxed);
    if (exit < since || enter > exit) continue;  // no call of this collection yet, or in one
    if (now_ns - exit >= min_away_ns) threads->push_back(thread);
  }
}

}  // namespace gpuidle::internal
