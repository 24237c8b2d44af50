// A fake CUPTI for CPU tests of the collect layer: a CuptiApi whose functions are static
// functions over one global FakeCupti state, plus builders for real CUPTI record structs.
//
// Activity buffers use a layout of the fake's own: a sequence of entries
// [uint64_t length][record bytes, padded to 8], which ActivityGetNextRecord walks. The test
// queues "recorded" records (Record()); ActivityFlushAll (or Deliver()) asks the collector for
// buffers through the BufferRequested callback it registered, packs the records and hands the
// buffers back through BufferCompleted, as CUPTI does. A request answered with size 0 makes the
// fake drop the records and count them, like CUPTI.
//
//   fake_cupti::Reset();
//   fake_cupti::Record(fake_cupti::Kernel(/*device=*/0, /*stream=*/7, 100, 200, "_Z1kv", 1));
//   ASSERT_TRUE(Collector::Get().Start(fake_cupti::FakeApi(), options).ok());
//   absl::StatusOr<Timeline> t = Collector::Get().Stop();  // FlushAll delivers the record
#ifndef GPUIDLE_TESTS_COLLECT_FAKE_CUPTI_H_
#define GPUIDLE_TESTS_COLLECT_FAKE_CUPTI_H_

#include <cupti.h>
#include <time.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "collect/cupti_api.h"

namespace gpuidle::internal::fake_cupti {

// --- records ---------------------------------------------------------------------------------

using RecordBytes = std::vector<uint8_t>;

template <typename T>
RecordBytes Bytes(const T& record) {
  RecordBytes bytes(sizeof(T));
  std::memcpy(bytes.data(), &record, sizeof(T));
  return bytes;
}

inline CUpti_ActivityKernel10 Kernel(uint32_t device, uint32_t stream, uint64_t start, uint64_t end,
                                     const char* name, uint32_t correlation) {
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.deviceId = device;
  k.streamId = stream;
  k.start = start;
  k.end = end;
  k.name = name;
  k.correlationId = correlation;
  return k;
}

inline CUpti_ActivityMemcpy6 Memcpy(uint32_t device, uint32_t stream, uint64_t start, uint64_t end,
                                    CUpti_ActivityMemcpyKind copy_kind,
                                    CUpti_ActivityMemoryKind src, CUpti_ActivityMemoryKind dst,
                                    uint64_t bytes, uint32_t correlation) {
  CUpti_ActivityMemcpy6 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.deviceId = device;
  m.streamId = stream;
  m.start = start;
  m.end = end;
  m.copyKind = static_cast<uint8_t>(copy_kind);
  m.srcKind = static_cast<uint8_t>(src);
  m.dstKind = static_cast<uint8_t>(dst);
  m.bytes = bytes;
  m.correlationId = correlation;
  return m;
}

inline CUpti_ActivityMemset4 Memset(uint32_t device, uint32_t stream, uint64_t start, uint64_t end,
                                    uint64_t bytes, uint32_t correlation) {
  CUpti_ActivityMemset4 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  m.deviceId = device;
  m.streamId = stream;
  m.start = start;
  m.end = end;
  m.bytes = bytes;
  m.correlationId = correlation;
  return m;
}

// A runtime (CUPTI_ACTIVITY_KIND_RUNTIME) or driver (CUPTI_ACTIVITY_KIND_DRIVER) API record.
inline CUpti_ActivityAPI Api(CUpti_ActivityKind kind, CUpti_CallbackId cbid, uint64_t start,
                             uint64_t end, uint32_t thread, uint32_t correlation) {
  CUpti_ActivityAPI a{};
  a.kind = kind;
  a.cbid = cbid;
  a.start = start;
  a.end = end;
  a.threadId = thread;
  a.processId = 1;
  a.correlationId = correlation;
  return a;
}

inline CUpti_ActivitySynchronization2 Sync(CUpti_ActivitySynchronizationType type, uint32_t stream,
                                           uint32_t event, uint64_t start, uint64_t end,
                                           uint32_t correlation) {
  CUpti_ActivitySynchronization2 s{};
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = type;
  s.streamId = stream;
  s.cudaEventId = event;
  s.start = start;
  s.end = end;
  s.correlationId = correlation;
  return s;
}

inline CUpti_ActivityCudaEvent2 EventRecord(uint32_t event, uint32_t stream, uint32_t correlation) {
  CUpti_ActivityCudaEvent2 e{};
  e.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
  e.eventId = event;
  e.streamId = stream;
  e.correlationId = correlation;
  return e;
}

inline CUpti_ActivityDevice5 Device(uint32_t id, const char* name, bool visible) {
  CUpti_ActivityDevice5 d{};
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.id = id;
  d.name = name;
  d.isCudaVisible = visible ? 1 : 0;
  return d;
}

// --- the fake buffer layout ------------------------------------------------------------------

inline size_t PaddedSize(size_t n) { return (n + 7) / 8 * 8; }
inline size_t EntrySize(const RecordBytes& r) { return sizeof(uint64_t) + PaddedSize(r.size()); }

// Appends the record at buffer + *used if it fits in capacity.
inline bool PackRecord(const RecordBytes& r, uint8_t* buffer, size_t capacity, size_t* used) {
  if (*used + EntrySize(r) > capacity) return false;
  const uint64_t length = PaddedSize(r.size());
  std::memcpy(buffer + *used, &length, sizeof(length));
  std::memset(buffer + *used + sizeof(length), 0, length);
  std::memcpy(buffer + *used + sizeof(length), r.data(), r.size());
  *used += EntrySize(r);
  return true;
}

// A buffer of the fake layout holding records (8-byte aligned storage).
struct PackedBuffer {
  std::vector<uint64_t> storage;
  size_t valid_bytes = 0;
  uint8_t* data() { return reinterpret_cast<uint8_t*>(storage.data()); }
};

inline PackedBuffer Pack(const std::vector<RecordBytes>& records) {
  size_t total = 0;
  for (const RecordBytes& r : records) total += EntrySize(r);
  PackedBuffer b;
  b.storage.resize(total / 8 + 1);
  for (const RecordBytes& r : records) PackRecord(r, b.data(), total, &b.valid_bytes);
  return b;
}

inline CUptiResult CUPTIAPI GetNextRecord(uint8_t* buffer, size_t valid_bytes,
                                          CUpti_Activity** record) {
  uint8_t* next = buffer;
  if (*record != nullptr) {
    uint8_t* current = reinterpret_cast<uint8_t*>(*record);
    uint64_t length = 0;
    std::memcpy(&length, current - sizeof(uint64_t), sizeof(length));
    next = current + length;
  }
  if (next + sizeof(uint64_t) > buffer + valid_bytes) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  uint64_t length = 0;
  std::memcpy(&length, next, sizeof(length));
  if (next + sizeof(uint64_t) + length > buffer + valid_bytes) {
    return CUPTI_ERROR_MAX_LIMIT_REACHED;
  }
  *record = reinterpret_cast<CUpti_Activity*>(next + sizeof(uint64_t));
  return CUPTI_SUCCESS;
}

// --- callback names ---------------------------------------------------------------------------

// A few real runtime and driver callback ids with the names CUPTI gives them.
inline const std::map<std::pair<CUpti_CallbackDomain, uint32_t>, const char*>& CallbackNames() {
  static const auto* names = new std::map<std::pair<CUpti_CallbackDomain, uint32_t>, const char*>{
      {{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000},
       "cudaLaunchKernel_v7000"},
      {{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020},
       "cudaGetDevice_v3020"},
      {{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020},
       "cudaStreamSynchronize_v3020"},
      {{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020},
       "cudaStreamWaitEvent_v3020"},
      {{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020},
       "cudaMemcpyAsync_v3020"},
      {{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020},
       "cudaEventRecord_v3020"},
      {{CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx}, "cuLaunchKernelEx"},
      {{CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent}, "cuCtxGetCurrent"},
      {{CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize},
       "cuStreamSynchronize"},
  };
  return *names;
}

inline CUptiResult CUPTIAPI GetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
                                            const char** name) {
  auto it = CallbackNames().find({domain, cbid});
  if (it == CallbackNames().end()) return CUPTI_ERROR_INVALID_PARAMETER;
  *name = it->second;
  return CUPTI_SUCCESS;
}

inline CUptiResult CUPTIAPI GetResultString(CUptiResult result, const char** text) {
  switch (result) {
    case CUPTI_SUCCESS:
      *text = "CUPTI_SUCCESS";
      return CUPTI_SUCCESS;
    case CUPTI_ERROR_NOT_INITIALIZED:
      *text = "CUPTI_ERROR_NOT_INITIALIZED";
      return CUPTI_SUCCESS;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      *text = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
      return CUPTI_SUCCESS;
    case CUPTI_ERROR_NOT_SUPPORTED:
      *text = "CUPTI_ERROR_NOT_SUPPORTED";
      return CUPTI_SUCCESS;
    default:
      return CUPTI_ERROR_INVALID_PARAMETER;
  }
}

// --- the fake's state -------------------------------------------------------------------------

struct State {
  std::mutex mu;
  // Configuration.
  CUptiResult subscribe_result = CUPTI_SUCCESS;
  std::set<CUpti_ActivityKind> refused_kinds;  // ActivityEnable fails for these
  size_t dropped_to_report = 0;                // GetNumDroppedRecords: returned once
  bool keeps_held_buffers = false;             // a flush does not complete the held buffers
  CUptiResult finalize_result = CUPTI_SUCCESS;

  // What the collector did.
  bool subscribed = false;
  int subscribe_calls = 0;
  int unsubscribe_calls = 0;
  int finalize_calls = 0;
  CUpti_BuffersCallbackRequestFunc buffer_requested = nullptr;  // kept across Reset()
  CUpti_BuffersCallbackCompleteFunc buffer_completed = nullptr;
  CUpti_TimestampCallbackFunc timestamp = nullptr;
  int register_callbacks_calls = 0;
  CUpti_CallbackFunc api_callback = nullptr;  // the subscriber's
  void* api_callback_userdata = nullptr;
  std::set<CUpti_CallbackId> runtime_callbacks;  // EnableCallback(1, RUNTIME_API, id)
  std::set<CUpti_CallbackId> driver_callbacks;   // EnableCallback(1, DRIVER_API, id)
  CUpti_ActivityThreadIdType thread_id_type = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
  // The order of calls: "Subscribe", "ActivityEnable <kind>", "EnableRuntimeApi off", ...
  std::vector<std::string> calls;
  std::set<CUpti_ActivityKind> enabled_kinds;
  std::vector<CUpti_ActivityKind> kinds_ever_enabled;
  std::map<CUpti_ActivityKind, int> disable_calls;
  std::set<CUpti_CallbackId> enabled_runtime;
  std::set<CUpti_CallbackId> enabled_driver;
  std::set<CUpti_CallbackId> runtime_ever_enabled;
  std::set<CUpti_CallbackId> driver_ever_enabled;
  std::set<CUpti_CallbackId> runtime_turned_off;  // ids passed with enable = 0
  std::set<CUpti_CallbackId> driver_turned_off;
  std::vector<uint32_t> flush_flags;
  uint32_t flush_period_ms = 0;

  // Records "recorded" and not yet delivered; buffers handed out and not yet completed.
  std::vector<RecordBytes> queued;
  std::vector<std::pair<uint8_t*, size_t>> held;
  size_t dropped_for_lack_of_buffer = 0;
  int empty_buffer_answers = 0;
};

inline State& GetState() {
  static State* state = new State();
  return *state;
}

// Forgets everything but the buffer callbacks, which CUPTI keeps between collections.
inline void Reset() {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  s.subscribe_result = CUPTI_SUCCESS;
  s.refused_kinds.clear();
  s.dropped_to_report = 0;
  s.keeps_held_buffers = false;
  s.finalize_result = CUPTI_SUCCESS;
  s.subscribed = false;
  s.subscribe_calls = 0;
  s.unsubscribe_calls = 0;
  s.finalize_calls = 0;
  s.timestamp = nullptr;
  s.register_callbacks_calls = 0;
  s.thread_id_type = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
  s.calls.clear();
  s.enabled_kinds.clear();
  s.kinds_ever_enabled.clear();
  s.disable_calls.clear();
  s.enabled_runtime.clear();
  s.enabled_driver.clear();
  s.runtime_ever_enabled.clear();
  s.driver_ever_enabled.clear();
  s.runtime_turned_off.clear();
  s.driver_turned_off.clear();
  s.flush_flags.clear();
  s.flush_period_ms = 0;
  s.api_callback = nullptr;
  s.api_callback_userdata = nullptr;
  s.runtime_callbacks.clear();
  s.driver_callbacks.clear();
  s.queued.clear();
  s.held.clear();
  s.dropped_for_lack_of_buffer = 0;
  s.empty_buffer_answers = 0;
}

template <typename T>
void Record(const T& record) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  s.queued.push_back(Bytes(record));
}

// Asks the collector for a buffer and keeps it (as CUPTI does while it fills one). False if the
// collector had none to give.
inline bool HoldBuffer() {
  State& s = GetState();
  CUpti_BuffersCallbackRequestFunc requested;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    requested = s.buffer_requested;
  }
  if (requested == nullptr) return false;
  uint8_t* buffer = nullptr;
  size_t size = 0;
  size_t max_records = 0;
  requested(&buffer, &size, &max_records);
  std::lock_guard<std::mutex> lock(s.mu);
  if (buffer == nullptr || size == 0) {
    ++s.empty_buffer_answers;
    return false;
  }
  s.held.emplace_back(buffer, size);
  return true;
}

// What CUPTI does on a flush: writes the recorded records into buffers it requests and
// completes them, then completes the buffers it was holding (empty here). Never holds the
// fake's lock while calling the collector (its callbacks call back into the fake).
inline void Deliver() {
  State& s = GetState();
  CUpti_BuffersCallbackRequestFunc requested;
  CUpti_BuffersCallbackCompleteFunc completed;
  std::vector<RecordBytes> records;
  std::vector<std::pair<uint8_t*, size_t>> held;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    requested = s.buffer_requested;
    completed = s.buffer_completed;
    records.swap(s.queued);
    if (!s.keeps_held_buffers) held.swap(s.held);
  }
  if (requested == nullptr || completed == nullptr) return;
  size_t next = 0;
  while (next < records.size()) {
    uint8_t* buffer = nullptr;
    size_t size = 0;
    size_t max_records = 0;
    requested(&buffer, &size, &max_records);
    if (buffer == nullptr || size == 0) {
      // No buffer: CUPTI drops what it recorded and counts it.
      std::lock_guard<std::mutex> lock(s.mu);
      ++s.empty_buffer_answers;
      s.dropped_for_lack_of_buffer += records.size() - next;
      s.dropped_to_report += records.size() - next;
      break;
    }
    size_t used = 0;
    while (next < records.size() && PackRecord(records[next], buffer, size, &used)) ++next;
    completed(nullptr, 0, buffer, size, used);
    if (used == 0) break;  // a record larger than a buffer: give up rather than spin
  }
  for (const auto& [buffer, size] : held) completed(nullptr, 0, buffer, size, 0);
}

// --- the CuptiApi functions -------------------------------------------------------------------

inline CUptiResult CUPTIAPI Subscribe(CUpti_SubscriberHandle* subscriber,
                                      CUpti_CallbackFunc callback, void* userdata) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  ++s.subscribe_calls;
  s.calls.push_back("Subscribe");
  if (s.subscribe_result != CUPTI_SUCCESS) return s.subscribe_result;
  if (s.subscribed) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  s.subscribed = true;
  s.api_callback = callback;
  s.api_callback_userdata = userdata;
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&s);
  return CUPTI_SUCCESS;
}

inline CUptiResult CUPTIAPI Unsubscribe(CUpti_SubscriberHandle subscriber) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  ++s.unsubscribe_calls;
  s.calls.push_back("Unsubscribe");
  if (!s.subscribed || subscriber != reinterpret_cast<CUpti_SubscriberHandle>(&s)) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  s.subscribed = false;
  s.runtime_callbacks.clear();  // CUPTI forgets a subscriber's callbacks with it
  s.driver_callbacks.clear();
  return CUPTI_SUCCESS;
}

inline CUptiResult CUPTIAPI RegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                              CUpti_BuffersCallbackCompleteFunc completed) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  ++s.register_callbacks_calls;
  s.buffer_requested = requested;
  s.buffer_completed = completed;
  return CUPTI_SUCCESS;
}

inline CUptiResult CUPTIAPI RegisterTimestampCallback(CUpti_TimestampCallbackFunc callback) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  s.timestamp = callback;
  s.calls.push_back("RegisterTimestampCallback");
  return CUPTI_SUCCESS;
}

inline CUptiResult CUPTIAPI SetThreadIdType(CUpti_ActivityThreadIdType type) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  s.thread_id_type = type;
  return CUPTI_SUCCESS;
}

inline CUptiResult CUPTIAPI ActivityEnable(CUpti_ActivityKind kind) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  s.calls.push_back("ActivityEnable " + std::to_string(static_cast<int>(kind)));
  if (s.refused_kinds.count(kind) > 0) return CUPTI_ERROR_NOT_SUPPORTED;
  s.enabled_kinds.insert(kind);
  s.kinds_ever_enabled.push_back(kind);
  return CUPTI_SUCCESS;
}

inline CUptiResult CUPTIAPI ActivityDisable(CUpti_ActivityKind kind) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  s.calls.push_back("ActivityDisable " + std::to_string(static_cast<int>(kind)));
  ++s.disable_calls[kind];
  s.enabled_kinds.erase(kind);
  return CUPTI_SUCCESS;
}

// cuptiActivityEnableRuntimeApi / cuptiActivityEnableDriverApi: what one domain's ids became.
inline CUptiResult EnableApiId(const char* what, std::set<CUpti_CallbackId> State::*enabled,
                               std::set<CUpti_CallbackId> State::*ever,
                               std::set<CUpti_CallbackId> State::*turned_off, CUpti_CallbackId cbid,
                               uint8_t enable) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  s.calls.push_back(std::string(what) + (enable != 0 ? " on" : " off"));
  if (enable != 0) {
    (s.*enabled).insert(cbid);
    (s.*ever).insert(cbid);
  } else {
    (s.*enabled).erase(cbid);
    (s.*turned_off).insert(cbid);
  }
  return CUPTI_SUCCESS;
}

inline CUptiResult CUPTIAPI EnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable) {
  return EnableApiId("EnableRuntimeApi", &State::enabled_runtime, &State::runtime_ever_enabled,
                     &State::runtime_turned_off, cbid, enable);
}

inline CUptiResult CUPTIAPI EnableDriverApi(CUpti_CallbackId cbid, uint8_t enable) {
  return EnableApiId("EnableDriverApi", &State::enabled_driver, &State::driver_ever_enabled,
                     &State::driver_turned_off, cbid, enable);
}

inline CUptiResult CUPTIAPI GetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  *dropped = s.dropped_to_report;  // reset on read, as CUPTI's
  s.dropped_to_report = 0;
  return CUPTI_SUCCESS;
}

inline CUptiResult CUPTIAPI FlushAll(uint32_t flags) {
  {
    State& s = GetState();
    std::lock_guard<std::mutex> lock(s.mu);
    s.flush_flags.push_back(flags);
    s.calls.push_back("FlushAll");
  }
  Deliver();
  return CUPTI_SUCCESS;
}

inline CUptiResult CUPTIAPI FlushPeriod(uint32_t ms) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  s.flush_period_ms = ms;
  return CUPTI_SUCCESS;
}

// CUPTI's clock, as the fake has it: CLOCK_MONOTONIC shifted far away, so that a timestamp
// shows which clock it came from.
inline constexpr int64_t kFakeClockOffsetNs = int64_t{1'000'000'000} * 1'000'000;

inline int64_t FakeClockNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return kFakeClockOffsetNs + static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

inline CUptiResult CUPTIAPI EnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                           CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.subscribed || subscriber != reinterpret_cast<CUpti_SubscriberHandle>(&s)) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  std::set<CUpti_CallbackId>* ids = domain == CUPTI_CB_DOMAIN_RUNTIME_API  ? &s.runtime_callbacks
                                    : domain == CUPTI_CB_DOMAIN_DRIVER_API ? &s.driver_callbacks
                                                                           : nullptr;
  if (ids == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  if (enable != 0) {
    ids->insert(cbid);
  } else {
    ids->erase(cbid);
  }
  return CUPTI_SUCCESS;
}

// An API call on the calling thread, as CUPTI reports it to the subscriber when its callback id
// is enabled: API_ENTER, then whatever `during` does (a driver call the runtime makes, time
// passing), then API_EXIT, with the call's correlation id and CUPTI's per-call data slot. False
// if the id is not enabled (CUPTI would not call back; `during` still runs).
template <typename During>
bool CallApi(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, uint32_t correlation,
             During during) {
  CUpti_CallbackFunc callback;
  void* userdata;
  {
    State& s = GetState();
    std::lock_guard<std::mutex> lock(s.mu);
    const std::set<CUpti_CallbackId>& ids =
        domain == CUPTI_CB_DOMAIN_RUNTIME_API ? s.runtime_callbacks : s.driver_callbacks;
    callback = s.subscribed && ids.count(cbid) > 0 ? s.api_callback : nullptr;
    userdata = s.api_callback_userdata;
  }
  uint64_t slot = 0xdeadbeef;  // CUPTI does not clear it either
  CUpti_CallbackData data{};
  data.correlationId = correlation;
  data.correlationData = &slot;
  data.callbackSite = CUPTI_API_ENTER;
  if (callback != nullptr) callback(userdata, domain, cbid, &data);
  during();
  data.callbackSite = CUPTI_API_EXIT;
  if (callback != nullptr) callback(userdata, domain, cbid, &data);
  return callback != nullptr;
}

inline bool CallRuntimeApi(CUpti_CallbackId cbid, uint32_t correlation) {
  return CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, correlation, [] {});
}

// cuDeviceGetCount as the driver makes it: CUPTI calls back where the id is enabled. For
// CudaDriverQueries::device_count.
inline int DeviceGetCount() {
  CallApi(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuDeviceGetCount, 0, [] {});
  return 1;
}

// cuptiFinalize: CUPTI detaches and forgets everything a client set up, the buffer callbacks
// included (they must be registered again).
inline CUptiResult CUPTIAPI Finalize() {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  ++s.finalize_calls;
  s.calls.push_back("Finalize");
  if (s.finalize_result != CUPTI_SUCCESS) return s.finalize_result;
  s.subscribed = false;
  s.runtime_callbacks.clear();
  s.driver_callbacks.clear();
  s.enabled_kinds.clear();
  s.buffer_requested = nullptr;
  s.buffer_completed = nullptr;
  s.flush_period_ms = 0;
  return CUPTI_SUCCESS;
}

inline CUptiResult CUPTIAPI GetTimestamp(uint64_t* timestamp) {
  *timestamp = static_cast<uint64_t>(FakeClockNs());
  return CUPTI_SUCCESS;
}

// The fake's table (process lifetime: the collector keeps a pointer to it).
inline const CuptiApi& FakeApi() {
  static const CuptiApi* api = [] {
    auto* a = new CuptiApi();
    a->Subscribe = &Subscribe;
    a->Unsubscribe = &Unsubscribe;
    a->EnableCallback = &EnableCallback;
    a->ActivityRegisterCallbacks = &RegisterCallbacks;
    a->ActivityRegisterTimestampCallback = &RegisterTimestampCallback;
    a->SetThreadIdType = &SetThreadIdType;
    a->ActivityEnable = &ActivityEnable;
    a->ActivityDisable = &ActivityDisable;
    a->ActivityEnableRuntimeApi = &EnableRuntimeApi;
    a->ActivityEnableDriverApi = &EnableDriverApi;
    a->ActivityGetNextRecord = &GetNextRecord;
    a->ActivityGetNumDroppedRecords = &GetNumDroppedRecords;
    a->ActivityFlushAll = &FlushAll;
    a->ActivityFlushPeriod = &FlushPeriod;
    a->GetCallbackName = &GetCallbackName;
    a->GetResultString = &GetResultString;
    a->GetTimestamp = &GetTimestamp;
    a->Finalize = &Finalize;
    return a;
  }();
  return *api;
}

}  // namespace gpuidle::internal::fake_cupti

#endif  // GPUIDLE_TESTS_COLLECT_FAKE_CUPTI_H_
