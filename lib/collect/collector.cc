#include "collect/collector.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "collect/api_activity_probe.h"
#include "collect/buffer_pool.h"
#include "collect/call_site_naming.h"
#include "collect/call_timing.h"
#include "collect/callback_ids.h"
#include "collect/clock.h"
#include "collect/cupti_detach.h"
#include "collect/decode_worker.h"
#include "collect/host_ranges.h"
#include "collect/kinds_on_demand.h"
#include "collect/record_translation.h"
#include "collect/timed_calls.h"
#include "core/status_macros.h"

namespace gpuidle::internal {
namespace {

// Calls per chunk of timed calls, and chunks: 4 MB, hundreds of thousands of calls in flight
// while the decode thread catches up.
constexpr size_t kCallsPerChunk = 2048;
constexpr size_t kCallChunks = 64;

// Distinct CUPTI failures a collection keeps as warnings; the rest are counted.
constexpr size_t kMaxFailureWarnings = 16;

}  // namespace

// Everything the collector keeps, in one object that lives as long as the process.
struct CollectorState {
  // Set while collecting; read by CUPTI's callbacks. clock_api is also the clock of host ranges
  // and is cleared before a detach, so that nothing reads CUPTI's clock (re-attaching it).
  const CuptiApi* api = nullptr;
  std::atomic<const CuptiApi*> clock_api{nullptr};
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
  // The overhead benchmark's seam (collect/collector_probes.h): constant answers, the product's
  // way, in a product build.
  CollectorProbes probes;
  CudaDriverQueries driver;
  CUpti_SubscriberHandle subscriber = nullptr;
  std::vector<CUpti_ActivityKind> enabled_kinds;
  NeededCallbackIdTable needed;
  CallTimer timer;
  CallSiteNaming naming;
  // Kinds enabled at the first call they record (collect/kinds_on_demand.h): the copies at the
  // first copy call, the syncs and events at the first sync or wait-event call.
  KindsOnDemand copies{{CallCategory::kCopy},
                       {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2}};
  KindsOnDemand waits{{CallCategory::kSync, CallCategory::kWaitEvent},
                      {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_CUDA_EVENT}};
  // Whether those kinds wait for their calls: they do when CUPTI calls back at the calls, which
  // it does unless a probe leaves the subscriber or the callbacks out.
  bool kinds_on_demand = false;
  LostRecordTracker lost;
  DecodeWorker worker;
  std::unique_ptr<RecordTranslator> translator;  // used by the worker only while it runs

  // CUPTI calls that failed without stopping the collection, for the timeline's warnings: each
  // distinct message with its count (a few kinds at most), the rest counted.
  std::mutex failures_mu;
  std::vector<std::pair<std::string, int>> failures;
  int other_failures = 0;

  int64_t CuptiNowNs() const {
    uint64_t t = 0;
    const CuptiApi* a = clock_api.load(std::memory_order_acquire);
    if (a == nullptr || a->GetTimestamp(&t) != CUPTI_SUCCESS) return 0;
    return static_cast<int64_t>(t);
  }

  void NoteFailure(const absl::Status& status) {
    if (status.ok()) return;
    std::lock_guard<std::mutex> lock(failures_mu);
    for (auto& [message, times] : failures) {
      if (message == status.message()) {
        ++times;
        return;
      }
    }
    if (failures.size() < kMaxFailureWarnings) {
      failures.emplace_back(std::string(status.message()), 1);
    } else {
      ++other_failures;
    }
  }

  // The failures as warnings of the timeline, once per message; forgotten afterwards.
  void MoveFailuresInto(Timeline* timeline) {
    std::lock_guard<std::mutex> lock(failures_mu);
    for (const auto& [message, times] : failures) {
      timeline->info.warnings.push_back(
          absl::StrCat(message, times > 1 ? absl::StrCat(" (", times, " times)") : "",
                       "; the report may lack what it would have recorded"));
    }
    if (other_failures > 0) {
      timeline->info.warnings.push_back(
          absl::StrCat(other_failures, " other CUPTI failures of other kinds"));
    }
    failures.clear();
    other_failures = 0;
  }

  absl::Status Subscribe(const CuptiApi& cupti);
  void UseClockOf(const CuptiApi& cupti);
  absl::Status EnableActivityKinds(const CuptiApi& cupti);
  void EnableApiCalls(const CuptiApi& cupti);
  void EnableTimedCalls(const CuptiApi& cupti, bool driver_only);
  void DisableRecording();
  void Unsubscribe();
  void Decode(const DecodeWorker::Work& work);
  void NoteLossesAtStop(Timeline* timeline);
};

namespace {

CollectorState& TheState() {
  static CollectorState* state = new CollectorState();  // never destroyed: CUPTI may call back
  return *state;
}

// gpuidle subscribes to claim CUPTI (a second subscriber is refused, which is how another tool
// — or gpuidle — learns that CUPTI is taken), to time the calls the analysis needs, and, when a
// binding set a call-site provider, to ask it where the syncs, copies and launches come from.
// Runs on the application's thread.
void CUPTIAPI ApiCallback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          const void* data) {
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  CollectorState& s = *static_cast<CollectorState*>(userdata);
  const auto* call = static_cast<const CUpti_CallbackData*>(data);
  if (call->callbackSite == CUPTI_API_ENTER) {
    s.copies.OnCallEntry(domain, cbid);
    s.waits.OnCallEntry(domain, cbid);
  }
  // Named before the call's start is read, so that the provider's time is not the call's.
  if (call->callbackSite == CUPTI_API_ENTER && s.naming.naming()) {
    s.naming.OnCallEntry(domain, cbid, *call, s.timer);
  }
  if (s.timer.timing()) s.timer.OnCallback(domain, cbid, *call);
}

int64_t CuptiClockNs() { return TheState().CuptiNowNs(); }

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  CollectorState& s = TheState();
  *max_records = 0;  // as many as fit
  // Stamped, so that a buffer that never comes back tells from when records are missing.
  *buffer = s.pool != nullptr ? s.pool->Acquire(s.CuptiNowNs()) : nullptr;
  // No buffer: CUPTI drops the records and counts them; the report shows the count.
  *size = *buffer != nullptr ? s.pool->buffer_bytes() : 0;
}

void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream, uint8_t* buffer, size_t,
                              size_t valid_size) {
  CollectorState& s = TheState();
  if (s.api != nullptr) {
    size_t dropped = 0;
    if (s.api->ActivityGetNumDroppedRecords(context, stream, &dropped) != CUPTI_SUCCESS) {
      dropped = 0;  // unknown: the next completed buffer of this queue asks again
    }
    s.dropped.fetch_add(dropped, std::memory_order_relaxed);
    s.lost.NoteCompletion(reinterpret_cast<uintptr_t>(context), stream, s.CuptiNowNs(), dropped);
  }
  if (buffer == nullptr || s.pool == nullptr || !s.pool->Owns(buffer)) return;
  if (valid_size > 0 && s.worker.Push(DecodeWorker::Work{buffer, valid_size, false})) return;
  s.pool->Release(buffer);
}

// A full chunk of timed calls, from an application thread: decoded by the worker.
void HandOverTimedCalls(uint8_t* chunk) {
  CollectorState& s = TheState();
  if (s.worker.Push(DecodeWorker::Work{chunk, 0, true})) return;
  s.call_pool->Release(chunk);
}

}  // namespace

absl::Status CollectorState::Subscribe(const CuptiApi& cupti) {
  if (probes.LeavesOut(kPartSubscriber)) return absl::OkStatus();
  const CUptiResult r = cupti.Subscribe(&subscriber, &ApiCallback, this);
  if (r == CUPTI_SUCCESS) return absl::OkStatus();
  subscriber = nullptr;
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    return absl::UnavailableError(
        "CUPTI is in use by another tool in this process (torch.profiler, which keeps it once "
        "it has run; Nsight Systems, ...)");
  }
  // CUPTI's code says little (CUPTI_ERROR_UNKNOWN without a driver): the driver's reason first,
  // where it has one.
  const std::string cupti_says = DescribeCuptiResult(cupti, r);
  const std::string driver_says = driver.why_no_device != nullptr ? driver.why_no_device() : "";
  return absl::UnavailableError(driver_says.empty()
                                    ? absl::StrCat("CUPTI cannot start: ", cupti_says)
                                    : absl::StrCat(driver_says, " (CUPTI: ", cupti_says, ")"));
}

void CollectorState::Unsubscribe() {
  if (subscriber != nullptr) {
    NoteFailure(CuptiStatus(*api, api->Unsubscribe(subscriber), "unsubscribing"));
  }
  subscriber = nullptr;
}

// One clock for records, timed calls and host ranges: CUPTI's (see collect/clock.h).
void CollectorState::UseClockOf(const CuptiApi& cupti) {
  clock_api.store(&cupti, std::memory_order_release);
  SetTimelineClock(&CuptiClockNs);
  timer.UseClockOf(cupti);
}

absl::Status CollectorState::EnableActivityKinds(const CuptiApi& cupti) {
  enabled_kinds.clear();
  EnableAddedProbes(probes);
  kinds_on_demand = subscriber != nullptr && probes.TimesCalls();
  for (CUpti_ActivityKind kind : kCollectedKinds) {
    if (!KeepsKind(probes, kind)) continue;
    if (kinds_on_demand && (copies.Handles(kind) || waits.Handles(kind))) continue;  // at a call
    const CUptiResult r = cupti.ActivityEnable(kind);
    if (r == CUPTI_SUCCESS) {
      enabled_kinds.push_back(kind);
    } else if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      return CuptiStatus(cupti, r, "kernel tracing");
    } else {
      // Other kinds are extra evidence: without them the analysis has less to go on.
      NoteFailure(
          CuptiStatus(cupti, r, absl::StrCat("enabling activity kind ", static_cast<int>(kind))));
    }
  }
  return absl::OkStatus();
}

// Only the calls the analysis needs: tracing every API call costs far more (DESIGN.md).
void CollectorState::EnableApiCalls(const CuptiApi& cupti) {
  needed.LookUp(cupti);
  if (kinds_on_demand) {
    const auto wanted = [&](CUpti_ActivityKind k) { return KeepsKind(probes, k); };
    copies.Arm(cupti, needed, wanted);
    waits.Arm(cupti, needed, wanted);
  }
  const ApiRecords mode =
      probes.ApiRecordsFor(subscriber != nullptr, [&] { return driver.initialized(); });
  naming.Reset(static_cast<size_t>(std::max<int64_t>(max_records, 0)));
  timer.NewCollection();
  const bool driver_only = mode == ApiRecords::kDriverCallbacks;
  if (mode == ApiRecords::kCallbacks || driver_only) {
    EnableTimedCalls(cupti, driver_only);
  } else {
    EnableApiActivityRecords(cupti, mode, needed, probes);
  }
  std::vector<absl::Status> naming_failures;
  // Without a provider the callbacks skip naming at once (a C++ program's launches).
  const bool on =
      naming.Enable(cupti, subscriber,
                    driver_only ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, needed,
                    &naming_failures) &&
      !probes.LeavesOut(kPartCallTiming);  // the probe: callbacks with nothing to do
  for (const absl::Status& failure : naming_failures) NoteFailure(failure);
  naming.SetNaming(on);
}

// CUPTI calls back at the entry and exit of every call the analysis needs, in both domains
// (kDriverCallbacks: the driver's only), and gpuidle times them. The callbacks go with the
// subscriber.
void CollectorState::EnableTimedCalls(const CuptiApi& cupti, bool driver_only) {
  if (call_pool == nullptr) {
    call_pool = new BufferPool(TimedCallLog::ChunkBytes(kCallsPerChunk), kCallChunks);
  }
  TimedCallLog::Get().Start(call_pool, &HandOverTimedCalls);
  timer.Start(probes);
  const auto enable = [&](CUpti_CallbackDomain domain, const std::vector<NeededId>& ids) {
    for (const NeededId& id : ids) {
      NoteFailure(CuptiStatus(cupti, cupti.EnableCallback(1, subscriber, domain, id.cbid),
                              "enabling a call's callback"));
    }
  };
  if (!probes.LeavesOut(kPartRuntimeCalls) && !driver_only) {
    enable(CUPTI_CB_DOMAIN_RUNTIME_API, needed.runtime());
  }
  if (!probes.LeavesOut(kPartDriverCalls)) enable(CUPTI_CB_DOMAIN_DRIVER_API, needed.driver());
}

// Stops CUPTI from producing records. Idempotent; called by Stop() and by the worker when the
// record limit is reached. Never under a lock of ours (no lock across a CUPTI call).
void CollectorState::DisableRecording() {
  if (disabled.exchange(true)) return;
  naming.SetNaming(false);
  timer.Stop();
  DisableProbes(*api, probes);
  for (CUpti_ActivityKind kind : enabled_kinds) {
    NoteFailure(CuptiStatus(*api, api->ActivityDisable(kind), "disabling an activity kind"));
  }
  NoteFailure(copies.Disarm());
  NoteFailure(waits.Disarm());
}

void CollectorState::Decode(const DecodeWorker::Work& work) {
  const bool decode = !probes.LeavesOut(kPartDecode);
  if (work.timed_calls) {
    if (decode) translator->TranslateCalls(TimedCallLog::Calls(work.buffer));
    call_pool->Release(work.buffer);
  } else {
    if (decode) translator->TranslateBuffer(work.buffer, work.valid_bytes);
    pool->Release(work.buffer);
  }
  records.store(translator->records(), std::memory_order_relaxed);
  if (translator->records() >= static_cast<uint64_t>(max_records) &&
      !limit_reached.exchange(true)) {
    limit_reached_at_ns = CuptiNowNs();
    DisableRecording();
    // Host ranges too: steps recorded after the limit, without their kernels, would stretch the
    // window with time that reads as idle.
    HostRangeRecorder::Get().SetRecording(false);
  }
}

// At the stop, after the forced flush: every buffer CUPTI held came back unless another client
// took CUPTI's buffer callbacks (Kineto registers its own without subscribing) and with them
// gpuidle's buffers and every record after. Their time, and the time after the record limit
// stopped recording, are lost spans too.
void CollectorState::NoteLossesAtStop(Timeline* timeline) {
  const int64_t now = CuptiNowNs();
  const BufferPool::Outstanding taken = pool->OutstandingSince(lost.started_ns());
  if (taken.count > 0) {
    lost.AddUntil(taken.earliest_ns, now);
    buffers_taken.fetch_add(taken.count);
    timeline->info.buffers_taken_by_another_client = taken.count;
    const int64_t missing_ms = std::max<int64_t>(0, now - taken.earliest_ns) / 1'000'000;
    timeline->info.warnings.push_back(
        absl::StrCat("another CUPTI client took ", taken.count, " activity buffer",
                     taken.count == 1 ? "" : "s", "; the report misses their records (the last ",
                     missing_ms, " ms of the collection are incomplete)"));
  }
  if (limit_reached.load()) lost.AddUntil(limit_reached_at_ns.load(), now);
  timeline->info.lost_record_spans = lost.Finish();
}

Collector& Collector::Get() {
  static Collector* collector = new Collector(&TheState());
  return *collector;
}

bool Collector::collecting() const { return state_->collecting.load(); }

bool Collector::DetachesAtStop() const { return !state_->probes.LeavesOut(kPartDetach); }

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
  return state_->lost.last();
}

void Collector::ThreadsAwayFromCuda(int64_t now_ns, int64_t min_away_ns,
                                    std::vector<uint64_t>* threads) const {
  state_->timer.ThreadsAwayFromCuda(now_ns, min_away_ns, threads);
}

CollectorOptions CollectorOptions::For(const ProfilerOptions& options) {
  CollectorOptions c;
  const size_t pool_bytes = static_cast<size_t>(std::max(options.buffer_pool_mb, 1)) << 20;
  c.buffer_bytes = std::min<size_t>(size_t{8} << 20, pool_bytes / 4);
  c.buffer_count = pool_bytes / c.buffer_bytes;
  c.max_records = options.max_records;
  return c;
}

absl::Status Collector::Start(const CuptiApi& api, const CollectorOptions& options,
                              StartCost* cost) {
  CollectorState& s = *state_;
  if (s.collecting.load()) return absl::FailedPreconditionError("already collecting");
  StartCost spent;
  int64_t part_start = SteadyNowNs();
  s.probes = options.probes;
  s.driver = options.driver;
  s.api = &api;
  GPUIDLE_RETURN_IF_ERROR(s.Subscribe(api));
  // Undoes what a start did so far; the reason is returned.
  const auto give_up = [&s](absl::Status why) {
    s.lost.Cancel();
    s.Unsubscribe();
    return why;
  };
  // Thread ids as the kernel knows them, like gpuidle's own host ranges.
  if (!s.probes.LeavesOut(kPartSystemThreadIds)) {
    s.NoteFailure(CuptiStatus(api, api.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM),
                              "setting system thread ids"));
  }
  s.UseClockOf(api);
  s.lost.Start(s.CuptiNowNs());
  // At every start: another tool (torch.profiler) may have registered its own in between, and
  // gpuidle's records would then go to it.
  if (absl::Status r =
          CuptiStatus(api, api.ActivityRegisterCallbacks(&BufferRequested, &BufferCompleted),
                      "buffer callbacks");
      !r.ok()) {
    return give_up(r);
  }
  if (s.pool == nullptr) s.pool = new BufferPool(options.buffer_bytes, options.buffer_count);
  s.max_records = options.max_records;
  s.records = 0;
  s.dropped = 0;
  s.limit_reached = false;
  s.limit_reached_at_ns = 0;
  s.translator = std::make_unique<RecordTranslator>(api);
  if (absl::Status w = s.worker.Start([&s](const DecodeWorker::Work& work) { s.Decode(work); });
      !w.ok()) {
    return give_up(w);
  }
  s.disabled = false;
  spent.attach_ns = SteadyNowNs() - part_start;
  part_start = SteadyNowNs();
  if (absl::Status kinds = s.EnableActivityKinds(api); !kinds.ok()) {
    s.DisableRecording();
    s.worker.Stop();
    return give_up(kinds);
  }
  spent.kinds_ns = SteadyNowNs() - part_start;
  part_start = SteadyNowNs();
  s.EnableApiCalls(api);
  spent.calls_ns = SteadyNowNs() - part_start;
  // Hand buffers over at least every second so long runs are decoded as they go.
  if (!s.probes.LeavesOut(kPartFlushPeriod)) {
    s.NoteFailure(CuptiStatus(api, api.ActivityFlushPeriod(1000), "setting the flush period"));
  }
  s.collecting = true;
  HostRangeRecorder::Get().SetLimit(std::min(
      HostRangeRecorder::kDefaultLimit, static_cast<size_t>(std::max<int64_t>(s.max_records, 1))));
  HostRangeRecorder::Get().SetRecording(true);
  if (cost != nullptr) *cost = spent;
  return absl::OkStatus();
}

absl::StatusOr<Timeline> Collector::Stop(CuptiAfterStop after, StopCost* cost) {
  CollectorState& s = *state_;
  if (!s.collecting.load()) return absl::FailedPreconditionError("not collecting");
  StopCost spent;
  int64_t part_start = SteadyNowNs();
  HostRangeRecorder::Get().SetRecording(false);
  s.DisableRecording();
  // The chunks threads still hold; full ones went to the worker already.
  const std::vector<uint8_t*> held_calls = TimedCallLog::Get().Stop();
  // Forced: also the buffers of work still in flight. CUPTI completes them before returning.
  s.NoteFailure(CuptiStatus(*s.api, s.api->ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED),
                            "flushing the activity buffers"));
  s.api->ActivityFlushPeriod(0);  // a failure changes nothing: every kind is off
  s.worker.Stop();
  s.Unsubscribe();
  s.collecting = false;
  for (uint8_t* chunk : s.stopped_chunks) s.call_pool->Release(chunk);
  s.stopped_chunks = held_calls;
  for (uint8_t* chunk : held_calls) {
    if (s.limit_reached.load()) break;
    s.translator->TranslateCalls(TimedCallLog::Calls(chunk));
    // As the worker does: past the limit (by at most one chunk), the rest is left out.
    if (s.translator->records() >= static_cast<uint64_t>(s.max_records) &&
        !s.limit_reached.exchange(true)) {
      s.limit_reached_at_ns = s.CuptiNowNs();
    }
  }
  s.records.store(s.translator->records());
  const uint64_t dropped_calls = TimedCallLog::Get().dropped();
  spent.flush_ns = SteadyNowNs() - part_start;
  part_start = SteadyNowNs();

  Timeline timeline = s.translator->Finish();
  s.translator.reset();
  CompleteDevicesFromDriver(&timeline, s.driver);
  HostRangeRecorder::Get().MoveInto(&timeline);
  s.naming.MoveInto(&timeline);  // after the host ranges: samples may borrow their sites
  timeline.Finalize();
  timeline.info.source = "gpuidle";
  timeline.info.tracer_cost = kTracerCostOfTimedCalls;
  // The host ranges dropped past their limit were counted in by MoveInto.
  timeline.info.dropped_records =
      timeline.info.dropped_records.value_or(0) + s.dropped.load() + dropped_calls;
  timeline.info.record_limit_reached = s.limit_reached.load();
  s.NoteLossesAtStop(&timeline);
  s.MoveFailuresInto(&timeline);
  spent.build_ns = SteadyNowNs() - part_start;
  part_start = SteadyNowNs();
  // Last: nothing of this collection calls CUPTI any more. Only with every buffer back, so that
  // none is lost to the pool with the CUPTI that held it.
  if (after == CuptiAfterStop::kDetach && !s.probes.LeavesOut(kPartDetach) &&
      s.pool->in_use() == 0) {
    // A range closed by a thread that saw recording on just before the stop must not read
    // CUPTI's clock (re-attaching it) while it detaches: such a range is dropped anyway.
    s.clock_api.store(nullptr, std::memory_order_release);
    if (DetachCupti(*s.api, s.driver.device_count)) s.detaches.fetch_add(1);
    spent.detach_ns = SteadyNowNs() - part_start;
  }
  if (cost != nullptr) *cost = spent;
  return timeline;
}

void Collector::AbandonAfterFork() {
  CollectorState& s = *state_;
  // Locks may be held by threads that do not exist in the child.
  new (&s.failures_mu) std::mutex();
  s.worker.AbandonAfterFork();
  s.lost.AbandonAfterFork();
  s.collecting = false;
  s.api = nullptr;
  s.timer.Stop();
  s.naming.SetNaming(false);
  s.copies.AbandonAfterFork();
  s.waits.AbandonAfterFork();
  TimedCallLog::Get().AbandonAfterFork();
  HostRangeRecorder::Get().ResetAfterFork();
}

}  // namespace gpuidle::internal
