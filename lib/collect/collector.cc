#include "collect/collector.h"

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <deque>
#include <iterator>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "collect/buffer_pool.h"
#include "collect/call_sites.h"
#include "collect/clock.h"
#include "collect/cuda_driver.h"
#include "collect/host_ranges.h"
#include "collect/lost_records.h"
#include "collect/record_translation.h"
#include "collect/timed_calls.h"
#include "model/cuda_api.h"

namespace gpuidle::internal {
namespace {

// The API table of the running collection, for the clock of host ranges.
std::atomic<const CuptiApi*> clock_api{nullptr};

int64_t CuptiNowNs() {
  uint64_t t = 0;
  const CuptiApi* api = clock_api.load(std::memory_order_acquire);
  if (api == nullptr || api->GetTimestamp(&t) != CUPTI_SUCCESS) return 0;
  return static_cast<int64_t>(t);
}

// Sites named by a language binding, gathered at the start of the calls that the callbacks of
// the running collection were enabled for; on only while recording.
CallSiteLog call_sites;
std::atomic<bool> naming_call_sites{false};
// How the calls of each callback id of one domain (where the calls are timed) are named: every
// sync and copy; launches once per period on each thread, the sample holding until the thread's
// next one (a Python provider walks the interpreter's frames at each call it names: at every
// launch, that would cost a launch-bound loop more than the timing itself). Written while
// naming_call_sites is false; it is set (release) afterwards.
enum class SiteNaming : uint8_t { kNone, kEveryCall, kSampled };
constexpr int64_t kLaunchSitePeriodNs = 1'000'000;
std::atomic<CUpti_CallbackDomain> named_domain{CUPTI_CB_DOMAIN_RUNTIME_API};
std::array<SiteNaming,
           std::max<size_t>(CUPTI_RUNTIME_TRACE_CBID_SIZE, CUPTI_DRIVER_TRACE_CBID_SIZE)>
    named_ids{};
// 16 bytes a site, 32 a launch sample: 1M of them is at most 32 MB, hours of offenders.
constexpr size_t kMaxCallSites = size_t{1} << 20;

// Whether the API callbacks time the calls (ApiRecords::kCallbacks; set last, with release);
// the collection's start (an exit whose entry came before it carries no start time of ours);
// and a number that changes with every collection, so that threads start afresh.
std::atomic<bool> timing_calls{false};
std::atomic<uint64_t> timing_since_ns{0};
std::atomic<uint64_t> collection_epoch{0};
std::atomic<bool> timing_nested_calls{false};  // kPartNestedCallSkip left out (a probe)
// kPartCuptiClock left out (a probe): calls read CLOCK_REALTIME plus this offset to CUPTI's.
std::atomic<int64_t> realtime_to_cupti_ns{0};

int64_t ShiftedRealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec +
         realtime_to_cupti_ns.load(std::memory_order_relaxed);
}

// The clock timed calls read: CUPTI's (ShiftedRealtimeNs only for the probe).
std::atomic<int64_t (*)()> call_clock{&CuptiNowNs};

// What a thread keeps across callbacks, reset with every collection.
struct ThreadTiming {
  uint32_t thread = 0;  // the OS thread id (gettid), as CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM
  uint64_t epoch = 0;
  int runtime_depth = 0;  // timed runtime calls this thread is inside
  int64_t next_site_sample_ns = 0;
};
thread_local ThreadTiming this_thread_timing;

// Per thread: when its latest outermost timed CUDA call began and ended (the calls' clock), for
// the host-stack sampler of a language binding (ThreadsAwayFromCuda). Each slot is written only
// by its thread (two relaxed stores per call) and sits on its own cache line; a thread claims
// one at its first timed call and frees it when it exits. Threads beyond kActivitySlots are
// not sampled.
struct alignas(64) ThreadActivity {
  std::atomic<uint32_t> thread{0};
  std::atomic<int64_t> enter_ns{0};
  std::atomic<int64_t> exit_ns{0};
};
constexpr size_t kActivitySlots = 512;
ThreadActivity thread_activity[kActivitySlots];

struct ActivitySlot {
  ThreadActivity* slot = nullptr;
  bool claimed = false;  // tried already (slot stays null when the table was full)
  // Frees the slot for other threads; calls this thread makes later (from other thread-local
  // destructors) find no slot and are not tracked.
  ~ActivitySlot() {
    if (slot != nullptr) slot->thread.store(0, std::memory_order_release);
    slot = nullptr;
  }
};
thread_local ActivitySlot activity_slot;

ThreadActivity* ActivityOf(uint32_t thread) {
  ActivitySlot& a = activity_slot;
  if (a.claimed) return a.slot;
  a.claimed = true;
  for (ThreadActivity& slot : thread_activity) {
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

ThreadTiming& ThisThread() {
  ThreadTiming& t = this_thread_timing;
  const uint64_t epoch = collection_epoch.load(std::memory_order_acquire);
  if (t.epoch != epoch) {
    t.epoch = epoch;
    t.runtime_depth = 0;
    t.next_site_sample_ns = 0;
  }
  if (t.thread == 0) t.thread = static_cast<uint32_t>(syscall(SYS_gettid));
  return t;
}

// Times one launch, sync, copy or wait-event call: CUPTI's clock at entry and exit, on the
// calling thread. A driver call made inside a timed runtime call (cudaLaunchKernel calls
// cuLaunchKernel) is the same call: only the runtime call is kept, as CUPTI's records do.
void TimeCall(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& call) {
  ThreadTiming& t = ThisThread();
  const bool driver = domain == CUPTI_CB_DOMAIN_DRIVER_API;
  const int depth = timing_nested_calls.load(std::memory_order_relaxed) ? 0 : t.runtime_depth;
  if (call.callbackSite == CUPTI_API_ENTER) {
    if (!driver) {
      ++t.runtime_depth;
    } else if (depth > 0) {
      return;
    }
    const int64_t now = call_clock.load(std::memory_order_relaxed)();
    *call.correlationData = static_cast<uint64_t>(now);
    // Only the outermost call counts: a driver call inside a runtime call (timed when nested
    // calls are) is not the thread leaving or entering CUDA.
    if (driver ? t.runtime_depth == 0 : t.runtime_depth == 1) {
      if (ThreadActivity* a = ActivityOf(t.thread))
        a->enter_ns.store(now, std::memory_order_relaxed);
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
  const uint64_t end = static_cast<uint64_t>(call_clock.load(std::memory_order_relaxed)());
  if (t.runtime_depth == 0) {
    if (ThreadActivity* a = ActivityOf(t.thread)) {
      a->exit_ns.store(static_cast<int64_t>(end), std::memory_order_relaxed);
    }
  }
  if (start < timing_since_ns.load(std::memory_order_relaxed) || start > end) return;
  TimedCallLog::Get().Append(
      TimedCall{start, end, call.correlationId, t.thread, cbid, driver ? 1u : 0u});
}

// Asks the binding's provider where a call comes from (SiteNaming).
void NameCallSite(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                  const CUpti_CallbackData& call) {
  if (domain != named_domain.load(std::memory_order_relaxed) || cbid >= named_ids.size()) return;
  const SiteNaming naming = named_ids[cbid];
  if (naming == SiteNaming::kNone) return;
  const SiteFunction provider = CurrentCallSiteProvider();
  if (provider == nullptr) return;
  if (naming == SiteNaming::kEveryCall) {
    if (const char* site = provider(); site != nullptr) call_sites.Add(call.correlationId, site);
    return;
  }
  ThreadTiming& t = ThisThread();
  const int64_t now = CuptiNowNs();
  if (now < t.next_site_sample_ns) return;
  t.next_site_sample_ns = now + kLaunchSitePeriodNs;
  // No site (a thread without Python frames): the sample borrows another thread's call site.
  call_sites.AddSample(t.thread, now, kLaunchSitePeriodNs, provider());
}

// gpuidle subscribes to claim CUPTI (a second subscriber is refused, which is how another tool
// — or gpuidle — learns that CUPTI is taken), to time the calls the analysis needs
// (ApiRecords::kCallbacks), and, when a binding set a call-site provider, to ask it where the
// syncs, copies and launches come from. Runs on the application's thread.
void CUPTIAPI ApiCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          const void* data) {
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* call = static_cast<const CUpti_CallbackData*>(data);
  // Named before the call's start is read, so that the provider's time is not the call's.
  if (call->callbackSite == CUPTI_API_ENTER && naming_call_sites.load(std::memory_order_acquire)) {
    NameCallSite(domain, cbid, *call);
  }
  if (timing_calls.load(std::memory_order_acquire)) TimeCall(domain, cbid, *call);
}

// Detaching CUPTI (CuptiAfterStop::kDetach). CUPTI's guidance is to call cuptiFinalize at the
// exit of a CUDA call, where no thread is half-way through its instrumentation; Kineto waits for
// the program's next call. gpuidle makes one itself (cuDeviceGetCount) with a callback at its
// exit, so the detach happens inside Stop and never depends on what the program does next.
enum DetachState : int { kNotArmed, kArmed, kDetaching, kDetached };
std::atomic<int> detach_state{kNotArmed};
std::atomic<bool> detach_finalized{false};  // cuptiFinalize succeeded (set before kDetached)
std::atomic<const CuptiApi*> detach_api{nullptr};
CUpti_SubscriberHandle detach_subscriber = nullptr;
constexpr CUpti_CallbackId kDetachTrigger = CUPTI_DRIVER_TRACE_CBID_cuDeviceGetCount;

void CUPTIAPI DetachCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                             const void* data) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API || cbid != kDetachTrigger) return;
  if (static_cast<const CUpti_CallbackData*>(data)->callbackSite != CUPTI_API_EXIT) return;
  int armed = kArmed;  // one thread detaches, even if others call cuDeviceGetCount meanwhile
  if (!detach_state.compare_exchange_strong(armed, kDetaching)) return;
  const CuptiApi* api = detach_api.load();
  api->Unsubscribe(detach_subscriber);
  detach_finalized.store(api->Finalize() == CUPTI_SUCCESS);
  detach_state.store(kDetached);
}

// Subscribes DetachCallback and makes the CUDA call that triggers it. True if CUPTI detached;
// false leaves CUPTI attached, as it was (or as a failed cuptiFinalize left it).
bool DetachCupti(const CuptiApi& api, int (*cuda_call)()) {
  if (api.Finalize == nullptr || cuda_call == nullptr) return false;
  if (api.Subscribe(&detach_subscriber, &DetachCallback, nullptr) != CUPTI_SUCCESS) return false;
  if (api.EnableCallback(1, detach_subscriber, CUPTI_CB_DOMAIN_DRIVER_API, kDetachTrigger) !=
      CUPTI_SUCCESS) {
    api.Unsubscribe(detach_subscriber);
    return false;
  }
  detach_api.store(&api);
  detach_state.store(kArmed);
  cuda_call();
  int armed = kArmed;
  if (detach_state.compare_exchange_strong(armed, kNotArmed)) {
    api.Unsubscribe(detach_subscriber);  // CUPTI did not call back (no driver, say)
    return false;
  }
  // The callback ran: on this thread, or on one that called cuDeviceGetCount meanwhile.
  while (detach_state.load() != kDetached) std::this_thread::yield();
  detach_state.store(kNotArmed);
  return detach_finalized.load();
}

// The benchmark's parts that leave an activity kind out (never the kernels).
uint32_t PartsOfKind(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return 0;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      return kPartOtherKinds | kPartMemcpyRecords;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return kPartOtherKinds | kPartMemsetRecords;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return kPartOtherKinds | kPartSyncRecords;
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
      return kPartOtherKinds | kPartEventRecords;
    case CUPTI_ACTIVITY_KIND_DEVICE:
      return kPartOtherKinds | kPartDeviceRecords;
    default:
      return kPartOtherKinds;
  }
}

struct Completed {
  uint8_t* buffer;
  size_t valid_bytes;  // of a CUPTI activity buffer; 0 for a chunk of timed calls
  bool timed_calls;
};

// Calls per chunk of timed calls, and chunks: 4 MB, hundreds of thousands of calls in flight
// while the decode thread catches up.
constexpr size_t kCallsPerChunk = 2048;
constexpr size_t kCallChunks = 64;

// The callback ids of one API domain whose calls the analysis needs (launch, sync, copy,
// wait-event: model/cuda_api.h decides), ascending, each with its category.
struct NeededId {
  CUpti_CallbackId cbid;
  CallCategory category;
};
std::vector<NeededId> NeededCallbackIds(const CuptiApi& api, CUpti_CallbackDomain domain,
                                        uint32_t end) {
  std::vector<NeededId> ids;
  for (uint32_t cbid = 1; cbid < end; ++cbid) {
    const char* name = nullptr;
    if (api.GetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
    const CallCategory category = CategorizeCudaApi(CanonicalCudaApiName(name));
    if (category != CallCategory::kOther) ids.push_back(NeededId{cbid, category});
  }
  return ids;
}

}  // namespace

absl::StatusOr<uint32_t> ParseCollectorParts(absl::string_view names) {
  static constexpr std::pair<absl::string_view, CollectorPart> kParts[] = {
      {"runtime", kPartRuntimeCalls},
      {"driver", kPartDriverCalls},
      {"other-kinds", kPartOtherKinds},
      {"decode", kPartDecode},
      {"subscriber", kPartSubscriber},
      {"system-thread-ids", kPartSystemThreadIds},
      {"flush-period", kPartFlushPeriod},
      {"nested-call-skip", kPartNestedCallSkip},
      {"detach", kPartDetach},
      {"memcpy-records", kPartMemcpyRecords},
      {"memset-records", kPartMemsetRecords},
      {"sync-records", kPartSyncRecords},
      {"event-records", kPartEventRecords},
      {"device-records", kPartDeviceRecords},
      {"call-timing", kPartCallTiming},
      {"cupti-clock", kPartCuptiClock},
  };
  uint32_t bits = 0;
  for (absl::string_view name : absl::StrSplit(names, ',', absl::SkipWhitespace())) {
    name = absl::StripAsciiWhitespace(name);
    const auto* part = std::find_if(std::begin(kParts), std::end(kParts),
                                    [&](const auto& p) { return p.first == name; });
    if (part == std::end(kParts)) {
      const auto append_name = [](std::string* out, const auto& p) {
        absl::StrAppend(out, p.first);
      };
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown collector part '", name, "' (", absl::StrJoin(kParts, ", ", append_name), ")"));
    }
    bits |= part->second;
  }
  return bits;
}

absl::StatusOr<ApiRecords> ParseApiRecords(absl::string_view name) {
  if (name == "callbacks") return ApiRecords::kCallbacks;
  if (name == "driver-callbacks") return ApiRecords::kDriverCallbacks;
  if (name == "auto") return ApiRecords::kAuto;
  if (name == "ids") return ApiRecords::kIdsOnly;
  if (name == "kinds") return ApiRecords::kWholeKinds;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown API record mode '", name, "' (callbacks, driver-callbacks, auto, ids, kinds)"));
}

struct Collector::State {
  // Set while collecting; read by CUPTI's callbacks.
  const CuptiApi* api = nullptr;
  BufferPool* pool = nullptr;       // created by the first Start, never freed
  BufferPool* call_pool = nullptr;  // chunks of timed calls: likewise
  // The chunks threads held when the last collection stopped: back to the pool only when the
  // next one stops (TimedCallLog::Stop: a late write may still land in them).
  std::vector<uint8_t*> stopped_chunks;
  std::atomic<bool> collecting{false};
  std::atomic<bool> disabled{true};
  std::atomic<uint64_t> dropped{0};
  std::atomic<uint64_t> records{0};
  std::atomic<bool> limit_reached{false};
  std::atomic<int64_t> limit_reached_at_ns{0};  // CUPTI's clock when the limit stopped recording
  std::atomic<uint64_t> buffers_taken{0};
  std::atomic<uint64_t> detaches{0};
  int64_t max_records = 0;
  uint32_t leave_out = 0;
  CudaDriverQueries driver;
  CUpti_SubscriberHandle subscriber = nullptr;
  std::vector<CUpti_ActivityKind> enabled_kinds;
  std::vector<CUpti_CallbackId> runtime_cbids;
  std::vector<CUpti_CallbackId> driver_cbids;
  std::vector<CUpti_CallbackId> runtime_ids_off;  // switched off under ApiRecords::kWholeKinds
  std::vector<CUpti_CallbackId> driver_ids_off;
  // The needed ids of the CUPTI in use: named by CUPTI, so looked up once, not at every start.
  const CuptiApi* needed_for = nullptr;
  std::vector<NeededId> runtime_needed;
  std::vector<NeededId> driver_needed;

  // When records were lost (collect/lost_records.h), under lost_mu: each queue's (context,
  // stream) latest completed buffer, the spans of the running collection, those of the last.
  std::mutex lost_mu;
  bool noting_losses = false;
  int64_t started_at_ns = 0;
  absl::flat_hash_map<std::pair<uintptr_t, uint32_t>, int64_t> last_completion_ns;
  LostRecordLog lost;
  std::vector<LostRecordSpan> last_lost;

  void StartNotingLosses() {
    std::lock_guard<std::mutex> lock(lost_mu);
    started_at_ns = CuptiNowNs();
    last_completion_ns.clear();
    lost.Take();
    noting_losses = true;
  }

  std::vector<LostRecordSpan> StopNotingLosses() {
    std::lock_guard<std::mutex> lock(lost_mu);
    noting_losses = false;
    return lost.Take();
  }

  // At the stop, after the forced flush: every buffer CUPTI held came back unless another
  // client took CUPTI's buffer callbacks (Kineto registers its own without subscribing) and
  // with them gpuidle's buffers and every record after. Their time, and the time after the
  // record limit stopped recording, are lost spans too. The spans are kept for
  // last_lost_record_spans().
  void NoteLossesAtStop(Timeline* timeline) {
    const int64_t now = CuptiNowNs();
    std::lock_guard<std::mutex> lock(lost_mu);
    noting_losses = false;
    const BufferPool::Outstanding taken = pool->OutstandingSince(started_at_ns);
    if (taken.count > 0) {
      lost.Add(taken.earliest_ns, now, 0);
      buffers_taken.fetch_add(taken.count);
      const int64_t missing_ms = std::max<int64_t>(0, now - taken.earliest_ns) / 1'000'000;
      timeline->info.warnings.push_back(
          absl::StrCat("another CUPTI client took ", taken.count, " activity buffer",
                       taken.count == 1 ? "" : "s", "; the report misses their records (the last ",
                       missing_ms, " ms of the collection are incomplete)"));
    }
    if (limit_reached.load()) lost.Add(limit_reached_at_ns.load(), now, 0);
    last_lost = lost.Take();
  }

  // A completed buffer of one queue, with what CUPTI dropped of that queue since its last one:
  // those records were lost between the two.
  void NoteCompletion(CUcontext context, uint32_t stream, int64_t now_ns, uint64_t dropped) {
    // Far more queues than any program has (one per context, or per stream): the rest count
    // from the collection's start.
    constexpr size_t kMaxQueues = 4096;
    std::lock_guard<std::mutex> lock(lost_mu);
    if (!noting_losses) return;
    const auto queue = std::make_pair(reinterpret_cast<uintptr_t>(context), stream);
    auto it = last_completion_ns.find(queue);
    const int64_t since = it != last_completion_ns.end() ? it->second : started_at_ns;
    if (dropped > 0) lost.Add(since, now_ns, dropped);
    if (it != last_completion_ns.end()) {
      it->second = now_ns;
    } else if (last_completion_ns.size() < kMaxQueues) {
      last_completion_ns.emplace(queue, now_ns);
    }
  }

  // The decode queue: CUPTI's thread (or a flushing thread) pushes, the worker pops.
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Completed> queue;
  bool accepting = false;
  bool stop_worker = false;
  std::thread worker;
  std::unique_ptr<RecordTranslator> translator;  // used by the worker only while it runs

  // Stops CUPTI from producing records. Idempotent; called by Stop() and by the worker when
  // the record limit is reached. Never under mu (no lock of ours across a CUPTI call).
  void DisableRecording() {
    if (disabled.exchange(true)) return;
    naming_call_sites = false;
    timing_calls = false;
    for (CUpti_CallbackId cbid : runtime_cbids) api->ActivityEnableRuntimeApi(cbid, 0);
    for (CUpti_CallbackId cbid : driver_cbids) api->ActivityEnableDriverApi(cbid, 0);
    for (CUpti_ActivityKind kind : enabled_kinds) api->ActivityDisable(kind);
    // CUPTI's defaults again for the next user of CUPTI (ApiRecords::kWholeKinds).
    for (CUpti_CallbackId cbid : runtime_ids_off) api->ActivityEnableRuntimeApi(cbid, 1);
    for (CUpti_CallbackId cbid : driver_ids_off) api->ActivityEnableDriverApi(cbid, 1);
    runtime_ids_off.clear();
    driver_ids_off.clear();
  }

  // The needed callback ids of cupti (named by CUPTI: looked up once per CUPTI).
  void LookUpNeededIds(const CuptiApi& cupti) {
    if (needed_for == &cupti) return;
    runtime_needed =
        NeededCallbackIds(cupti, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE);
    driver_needed =
        NeededCallbackIds(cupti, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE);
    needed_for = &cupti;
  }

  // Enables records of the API calls the analysis needs, as `mode` says (ApiRecords).
  void EnableApiCalls(const CuptiApi& cupti, ApiRecords mode) {
    if ((leave_out & kPartRuntimeCalls) == 0) {
      EnableApiDomain(cupti, mode, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_SIZE,
                      runtime_needed, cupti.ActivityEnableRuntimeApi, &runtime_cbids,
                      &runtime_ids_off);
    }
    if ((leave_out & kPartDriverCalls) == 0) {
      EnableApiDomain(cupti, mode, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_SIZE,
                      driver_needed, cupti.ActivityEnableDriverApi, &driver_cbids, &driver_ids_off);
    }
  }

  void EnableApiDomain(const CuptiApi& cupti, ApiRecords mode, CUpti_ActivityKind kind,
                       uint32_t end, const std::vector<NeededId>& needed,
                       CUptiResult (*enable_id)(CUpti_CallbackId, uint8_t),
                       std::vector<CUpti_CallbackId>* enabled,
                       std::vector<CUpti_CallbackId>* switched_off) {
    if (mode == ApiRecords::kWholeKinds) {
      if (cupti.ActivityEnable(kind) != CUPTI_SUCCESS) return;
      enabled_kinds.push_back(kind);
      auto next = needed.begin();  // ascending, like the loop
      for (uint32_t cbid = 1; cbid < end; ++cbid) {
        if (next != needed.end() && next->cbid == cbid) {
          ++next;
        } else if (enable_id(cbid, 0) == CUPTI_SUCCESS) {
          switched_off->push_back(cbid);
        }
      }
      return;
    }
    for (const NeededId& id : needed) {
      if (enable_id(id.cbid, 1) == CUPTI_SUCCESS) enabled->push_back(id.cbid);
    }
  }

  // ApiRecords::kCallbacks: CUPTI calls back at the entry and exit of every call the analysis
  // needs, in both domains (kDriverCallbacks: the driver's only), and gpuidle times them. The
  // callbacks go with the subscriber.
  void EnableTimedCalls(const CuptiApi& cupti, bool driver_only) {
    if (call_pool == nullptr) {
      call_pool = new BufferPool(TimedCallLog::ChunkBytes(kCallsPerChunk), kCallChunks);
    }
    TimedCallLog::Get().Start(call_pool, &HandOverTimedCalls);
    timing_since_ns = static_cast<uint64_t>(CuptiNowNs());
    timing_nested_calls = (leave_out & kPartNestedCallSkip) != 0;
    if ((leave_out & kPartCuptiClock) != 0) {
      realtime_to_cupti_ns = -WallClockOffsetNs();  // the timeline's clock is CUPTI's by now
      call_clock = &ShiftedRealtimeNs;
    } else {
      call_clock = &CuptiNowNs;
    }
    // kPartCallTiming (a probe): the callbacks stay enabled but find nothing to do.
    timing_calls.store((leave_out & kPartCallTiming) == 0, std::memory_order_release);
    if ((leave_out & kPartRuntimeCalls) == 0 && !driver_only) {
      for (const NeededId& id : runtime_needed) {
        cupti.EnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, id.cbid);
      }
    }
    if ((leave_out & kPartDriverCalls) == 0) {
      for (const NeededId& id : driver_needed) {
        cupti.EnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id.cbid);
      }
    }
  }

  // A full chunk of timed calls, from an application thread: decoded by the worker.
  static void HandOverTimedCalls(uint8_t* chunk) {
    State& s = *Collector::Get().state_;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      if (s.accepting) {
        s.queue.push_back(Completed{chunk, 0, true});
        s.cv.notify_one();
        return;
      }
    }
    s.call_pool->Release(chunk);
  }

  // With a call-site provider: CUPTI calls back at the start of every sync, copy and launch of
  // domain (named_ids). The callbacks go with the subscriber. True if any call is named.
  bool EnableCallSites(const CuptiApi& cupti, CUpti_CallbackDomain domain) {
    named_ids.fill(SiteNaming::kNone);
    named_domain = domain;
    if (CurrentCallSiteProvider() == nullptr || subscriber == nullptr) return false;
    for (const NeededId& id :
         domain == CUPTI_CB_DOMAIN_DRIVER_API ? driver_needed : runtime_needed) {
      if (id.category == CallCategory::kSync || id.category == CallCategory::kCopy) {
        named_ids[id.cbid] = SiteNaming::kEveryCall;
      } else if (id.category == CallCategory::kLaunch) {
        named_ids[id.cbid] = SiteNaming::kSampled;
      } else {
        continue;
      }
      cupti.EnableCallback(1, subscriber, domain, id.cbid);
    }
    return true;
  }

  void Work() {
    for (;;) {
      Completed c;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return !queue.empty() || stop_worker; });
        if (queue.empty()) return;
        c = queue.front();
        queue.pop_front();
      }
      if (c.timed_calls) {
        if ((leave_out & kPartDecode) == 0)
          translator->TranslateCalls(TimedCallLog::Calls(c.buffer));
        call_pool->Release(c.buffer);
      } else {
        if ((leave_out & kPartDecode) == 0) translator->TranslateBuffer(c.buffer, c.valid_bytes);
        pool->Release(c.buffer);
      }
      records.store(translator->records(), std::memory_order_relaxed);
      if (translator->records() >= static_cast<uint64_t>(max_records) &&
          !limit_reached.exchange(true)) {
        limit_reached_at_ns = CuptiNowNs();
        DisableRecording();
        // Host ranges too: steps recorded after the limit, without their kernels, would stretch
        // the window with time that reads as idle.
        HostRangeRecorder::Get().SetRecording(false);
      }
    }
  }
};

Collector::Collector() : state_(new State()) {}

Collector& Collector::Get() {
  static Collector* collector = new Collector();
  return *collector;
}

bool Collector::collecting() const { return state_->collecting.load(); }

CollectorCounters Collector::counters() const {
  CollectorCounters c;
  c.records = state_->records.load();
  c.dropped = state_->dropped.load();
  c.pool_exhausted = state_->pool != nullptr ? state_->pool->exhausted() : 0;
  c.detaches = state_->detaches.load();
  c.buffers_taken = state_->buffers_taken.load();
  return c;
}

std::vector<LostRecordSpan> Collector::last_lost_record_spans() const {
  std::lock_guard<std::mutex> lock(state_->lost_mu);
  return state_->last_lost;
}

void Collector::BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  State* s = Get().state_;
  *max_records = 0;  // as many as fit
  // Stamped, so that a buffer that never comes back tells from when records are missing.
  *buffer = s->pool != nullptr ? s->pool->Acquire(CuptiNowNs()) : nullptr;
  // No buffer: CUPTI drops the records and counts them; the report shows the count.
  *size = *buffer != nullptr ? s->pool->buffer_bytes() : 0;
}

void Collector::BufferCompleted(CUcontext context, uint32_t stream, uint8_t* buffer, size_t,
                                size_t valid_size) {
  State* s = Get().state_;
  if (s->api != nullptr) {
    size_t dropped = 0;
    if (s->api->ActivityGetNumDroppedRecords(context, stream, &dropped) != CUPTI_SUCCESS) {
      dropped = 0;
    }
    s->dropped.fetch_add(dropped, std::memory_order_relaxed);
    s->NoteCompletion(context, stream, CuptiNowNs(), dropped);
  }
  if (buffer == nullptr || s->pool == nullptr || !s->pool->Owns(buffer)) return;
  {
    std::lock_guard<std::mutex> lock(s->mu);
    if (s->accepting && valid_size > 0) {
      s->queue.push_back(Completed{buffer, valid_size, false});
      s->cv.notify_one();
      return;
    }
  }
  s->pool->Release(buffer);
}

absl::Status Collector::Start(const CuptiApi& api, const CollectorOptions& options) {
  State& s = *state_;
  if (s.collecting.load()) return absl::FailedPreconditionError("already collecting");
  s.leave_out = options.leave_out;
  s.driver = options.driver;
  CUptiResult r = (s.leave_out & kPartSubscriber) != 0
                      ? CUPTI_SUCCESS
                      : api.Subscribe(&s.subscriber, &ApiCallback, nullptr);
  if (r != CUPTI_SUCCESS) {
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
      return absl::UnavailableError(
          "CUPTI is in use by another tool in this process (torch.profiler, which keeps it once "
          "it has run; Nsight Systems, ...)");
    }
    // CUPTI's code says little (CUPTI_ERROR_UNKNOWN without a driver): the driver's reason
    // first, where it has one.
    const std::string cupti_says = DescribeCuptiResult(api, r);
    const std::string driver_says =
        options.driver.why_no_device != nullptr ? options.driver.why_no_device() : "";
    return absl::UnavailableError(driver_says.empty()
                                      ? absl::StrCat("CUPTI cannot start: ", cupti_says)
                                      : absl::StrCat(driver_says, " (CUPTI: ", cupti_says, ")"));
  }
  auto fail = [&](absl::string_view what, CUptiResult result) {
    s.StopNotingLosses();
    if (s.subscriber != nullptr) api.Unsubscribe(s.subscriber);
    s.subscriber = nullptr;
    return absl::UnavailableError(
        absl::StrCat("CUPTI ", what, " failed: ", DescribeCuptiResult(api, result)));
  };
  // Thread ids as the kernel knows them, like gpuidle's own host ranges.
  if ((s.leave_out & kPartSystemThreadIds) == 0) {
    api.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  }
  // One clock for records and host ranges: CUPTI's (see collect/clock.h).
  clock_api.store(&api, std::memory_order_release);
  SetTimelineClock(&CuptiNowNs);
  // At every start: another tool (torch.profiler) may have registered its own in between,
  // and gpuidle's records would then go to it.
  s.StartNotingLosses();
  r = api.ActivityRegisterCallbacks(&Collector::BufferRequested, &Collector::BufferCompleted);
  if (r != CUPTI_SUCCESS) return fail("buffer callbacks", r);
  if (s.pool == nullptr) s.pool = new BufferPool(options.buffer_bytes, options.buffer_count);
  s.api = &api;
  s.max_records = options.max_records;
  s.records = 0;
  s.dropped = 0;
  s.limit_reached = false;
  s.limit_reached_at_ns = 0;
  s.translator = std::make_unique<RecordTranslator>(api);
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.accepting = true;
    s.stop_worker = false;
  }
  s.worker = std::thread([&s] { s.Work(); });

  s.disabled = false;
  s.enabled_kinds.clear();
  for (CUpti_ActivityKind kind : kCollectedKinds) {
    if ((s.leave_out & PartsOfKind(kind)) != 0) continue;
    r = api.ActivityEnable(kind);
    if (r == CUPTI_SUCCESS) {
      s.enabled_kinds.push_back(kind);
    } else if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      s.DisableRecording();
      {
        std::lock_guard<std::mutex> lock(s.mu);
        s.accepting = false;
        s.stop_worker = true;
      }
      s.cv.notify_one();
      s.worker.join();
      return fail("kernel tracing", r);
    }
    // Other kinds are extra evidence: without them the analysis has less to go on.
  }
  // Only the calls the analysis needs: tracing every API call costs far more (DESIGN.md).
  s.runtime_cbids.clear();
  s.driver_cbids.clear();
  s.LookUpNeededIds(api);
  ApiRecords api_records = options.api_records;
  // Timing calls needs the subscriber (which only the overhead benchmark leaves out).
  const bool timed =
      api_records == ApiRecords::kCallbacks || api_records == ApiRecords::kDriverCallbacks;
  if (timed && s.subscriber == nullptr) {
    api_records = ApiRecords::kAuto;
  }
  if (api_records == ApiRecords::kAuto) {
    api_records = options.driver.initialized() ? ApiRecords::kWholeKinds : ApiRecords::kIdsOnly;
  }
  call_sites.Reset(
      std::min(kMaxCallSites, static_cast<size_t>(std::max<int64_t>(s.max_records, 0))));
  collection_epoch.fetch_add(1);  // every thread's state starts afresh
  const bool driver_only = api_records == ApiRecords::kDriverCallbacks;
  if (api_records == ApiRecords::kCallbacks || driver_only) {
    s.EnableTimedCalls(api, driver_only);
  } else {
    s.EnableApiCalls(api, api_records);
  }
  // Without a provider the callbacks skip naming at once (a C++ program's launches).
  const bool naming =
      s.EnableCallSites(api,
                        driver_only ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API) &&
      (s.leave_out & kPartCallTiming) == 0;  // the probe: callbacks that find nothing to do
  naming_call_sites.store(naming, std::memory_order_release);
  // Hand buffers over at least every second so long runs are decoded as they go.
  if ((s.leave_out & kPartFlushPeriod) == 0) api.ActivityFlushPeriod(1000);
  s.collecting = true;
  HostRangeRecorder::Get().SetLimit(std::min(
      HostRangeRecorder::kDefaultLimit, static_cast<size_t>(std::max<int64_t>(s.max_records, 1))));
  HostRangeRecorder::Get().SetRecording(true);
  return absl::OkStatus();
}

absl::StatusOr<Timeline> Collector::Stop(CuptiAfterStop after) {
  State& s = *state_;
  if (!s.collecting.load()) return absl::FailedPreconditionError("not collecting");
  HostRangeRecorder::Get().SetRecording(false);
  s.DisableRecording();
  // The chunks threads still hold; full ones went to the worker already.
  const std::vector<uint8_t*> held_calls = TimedCallLog::Get().Stop();
  // Forced: also the buffers of work still in flight. CUPTI completes them before returning.
  s.api->ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  s.api->ActivityFlushPeriod(0);
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.accepting = false;
    s.stop_worker = true;
  }
  s.cv.notify_one();
  s.worker.join();
  if (s.subscriber != nullptr) s.api->Unsubscribe(s.subscriber);
  s.subscriber = nullptr;
  s.collecting = false;
  for (uint8_t* chunk : s.stopped_chunks) s.call_pool->Release(chunk);
  s.stopped_chunks = held_calls;
  for (uint8_t* chunk : held_calls) {
    if (s.limit_reached.load()) break;
    s.translator->TranslateCalls(TimedCallLog::Calls(chunk));
    // As the worker does: past the limit (by at most one chunk), the rest is left out.
    if (s.translator->records() >= static_cast<uint64_t>(s.max_records) &&
        !s.limit_reached.exchange(true)) {
      s.limit_reached_at_ns = CuptiNowNs();
    }
  }
  s.records.store(s.translator->records());
  const uint64_t dropped_calls = TimedCallLog::Get().dropped();

  Timeline timeline = s.translator->Finish();
  s.translator.reset();
  CompleteDevicesFromDriver(&timeline, s.driver);
  HostRangeRecorder::Get().MoveInto(&timeline);
  call_sites.MoveInto(&timeline);  // after the host ranges: samples may borrow their sites
  timeline.Finalize();
  timeline.info.source = "gpuidle";
  // The host ranges dropped past their limit were counted in by MoveInto.
  timeline.info.dropped_records =
      timeline.info.dropped_records.value_or(0) + s.dropped.load() + dropped_calls;
  timeline.info.record_limit_reached = s.limit_reached.load();
  s.NoteLossesAtStop(&timeline);
  timeline.info.lost_record_spans = last_lost_record_spans();
  // Last: nothing of this collection calls CUPTI any more. Only with every buffer back, so that
  // none is lost to the pool with the CUPTI that held it.
  if (after == CuptiAfterStop::kDetach && (s.leave_out & kPartDetach) == 0 &&
      s.pool->in_use() == 0) {
    // A range closed by a thread that saw recording on just before the stop must not read
    // CUPTI's clock (re-attaching it) while it detaches: such a range is dropped anyway.
    clock_api.store(nullptr, std::memory_order_release);
    if (DetachCupti(*s.api, s.driver.device_count)) s.detaches.fetch_add(1);
  }
  return timeline;
}

void ThreadsAwayFromCuda(int64_t now_ns, int64_t min_away_ns, std::vector<uint64_t>* threads) {
  threads->clear();
  if (!timing_calls.load(std::memory_order_acquire)) return;
  const int64_t since = static_cast<int64_t>(timing_since_ns.load(std::memory_order_relaxed));
  for (const ThreadActivity& slot : thread_activity) {
    const uint32_t thread = slot.thread.load(std::memory_order_acquire);
    if (thread == 0) continue;
    const int64_t enter = slot.enter_ns.load(std::memory_order_relaxed);
    const int64_t exit = slot.exit_ns.load(std::memory_order_relaxed);
    if (exit < since || enter > exit) continue;  // no call of this collection yet, or in one
    if (now_ns - exit >= min_away_ns) threads->push_back(thread);
  }
}

void Collector::AbandonAfterFork() {
  State& s = *state_;
  // Locks may be held by threads that do not exist in the child; the std::thread object of the
  // parent's worker is left as it is (never joined or destroyed).
  new (&s.mu) std::mutex();
  new (&s.lost_mu) std::mutex();
  new (&s.cv) std::condition_variable();
  s.noting_losses = false;
  s.queue.clear();
  s.accepting = false;
  s.collecting = false;
  s.api = nullptr;
  timing_calls = false;
  naming_call_sites = false;
  TimedCallLog::Get().AbandonAfterFork();
  HostRangeRecorder::Get().ResetAfterFork();
}

}  // namespace gpuidle::internal
