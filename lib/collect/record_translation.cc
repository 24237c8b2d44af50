#include "collect/record_translation.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "model/cuda_api.h"
#include "model/trace_names.h"

namespace gpuidle::internal {
namespace {

CopyKind ToCopyKind(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return CopyKind::kHtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return CopyKind::kDtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
      return CopyKind::kDtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return CopyKind::kHtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return CopyKind::kPeer;
    default:
      return CopyKind::kUnknown;
  }
}

absl::string_view MemoryKindName(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
      return "Pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
      return "Pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
      return "Device";
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
      return "Array";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
      return "Managed";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
      return "Static";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
      return "ManagedStatic";
    default:
      return "Unknown";
  }
}

bool IsPageable(uint8_t src_kind, uint8_t dst_kind) {
  return src_kind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE ||
         dst_kind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
}

}  // namespace

bool RecordTranslator::ValidTimes(uint64_t start, uint64_t end) {
  // CUPTI leaves zero (or end < start) when it could not time a record: such a record is
  // counted and dropped, never turned into an interval (or into idle time around it).
  if (start == 0 || end == 0 || end < start || end > static_cast<uint64_t>(INT64_MAX)) {
    ++timeline_.info.zero_timestamp_records;
    return false;
  }
  return true;
}

DeviceOp* RecordTranslator::AddDeviceOp(uint32_t device, uint64_t start, uint64_t end,
                                        uint32_t correlation, uint32_t stream, OpKind kind) {
  if (!ValidTimes(start, end)) return nullptr;
  DeviceOp& op = timeline_.DeviceFor(static_cast<int>(device)).ops.emplace_back();
  op.start_ns = static_cast<int64_t>(start);
  op.end_ns = static_cast<int64_t>(end);
  op.correlation_id = correlation;
  op.stream = stream;
  op.kind = kind;
  return &op;
}

const RecordTranslator::KernelInfo& RecordTranslator::Kernel(const char* raw) {
  const absl::string_view key = raw != nullptr ? raw : "";
  auto it = kernels_.find(key);
  if (it != kernels_.end()) return it->second;
  int status = 0;
  // Only C++ symbols: __cxa_demangle also decodes bare types, so an extern "C" kernel named
  // "f" would become "float".
  char* demangled =
      absl::StartsWith(key, "_Z") ? abi::__cxa_demangle(raw, nullptr, nullptr, &status) : nullptr;
  const absl::string_view name =
      status == 0 && demangled != nullptr ? absl::string_view(demangled) : key;
  const KernelInfo info{timeline_.strings.Intern(name), IsCommunicationKernel(name)};
  std::free(demangled);
  return kernels_.emplace(key, info).first->second;
}

StringId RecordTranslator::CopyName(uint8_t copy_kind, uint8_t src_kind, uint8_t dst_kind) {
  const uint32_t key = copy_kind << 16 | src_kind << 8 | dst_kind;
  auto it = copy_names_.find(key);
  if (it != copy_names_.end()) return it->second;
  // The names Kineto and Nsight use, so that DescribeCopy() reads them back from a trace.
  const StringId id = timeline_.strings.Intern(
      absl::StrCat("Memcpy ", CopyKindName(ToCopyKind(copy_kind)), " (", MemoryKindName(src_kind),
                   " -> ", MemoryKindName(dst_kind), ")"));
  copy_names_.emplace(key, id);
  return id;
}

StringId RecordTranslator::ApiName(bool driver, CUpti_CallbackId cbid, CallCategory* category) {
  const uint64_t key = static_cast<uint64_t>(driver) << 32 | cbid;
  auto it = api_names_.find(key);
  if (it == api_names_.end()) {
    const CUpti_CallbackDomain domain =
        driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
    const char* raw = nullptr;
    std::string name;
    if (api_.GetCallbackName != nullptr &&
        api_.GetCallbackName(domain, cbid, &raw) == CUPTI_SUCCESS && raw != nullptr) {
      name = std::string(CanonicalCudaApiName(raw));
    } else {
      name = absl::StrCat(driver ? "driver" : "runtime", " API ", cbid);
    }
    it = api_names_.emplace(key, ApiInfo{timeline_.strings.Intern(name), CategorizeCudaApi(name)})
             .first;
  }
  *category = it->second.category;
  return it->second.name;
}

void RecordTranslator::AddCall(bool driver, CUpti_CallbackId cbid, uint64_t start, uint64_t end,
                               uint32_t correlation, uint32_t thread) {
  if (!ValidTimes(start, end)) return;
  HostCall c;
  c.start_ns = static_cast<int64_t>(start);
  c.end_ns = static_cast<int64_t>(end);
  c.correlation_id = correlation;
  c.thread = thread;
  c.name = ApiName(driver, cbid, &c.category);
  // Calls that mean nothing to the analysis (only traced if CUPTI traced more than asked).
  if (c.category == CallCategory::kOther) return;
  timeline_.calls.push_back(c);
}

void RecordTranslator::TranslateCalls(absl::Span<const TimedCall> calls) {
  for (const TimedCall& call : calls) {
    ++records_;
    AddCall(call.driver != 0, call.cbid, call.start_ns, call.end_ns, call.correlation, call.thread);
  }
}

void RecordTranslator::Translate(const CUpti_Activity& record) {
  ++records_;
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
      const auto& k = reinterpret_cast<const CUpti_ActivityKernel10&>(record);
      DeviceOp* op =
          AddDeviceOp(k.deviceId, k.start, k.end, k.correlationId, k.streamId, OpKind::kKernel);
      if (op == nullptr) return;
      const KernelInfo& kernel = Kernel(k.name);
      op->name = kernel.name;
      op->communication = kernel.communication;
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto& m = reinterpret_cast<const CUpti_ActivityMemcpy6&>(record);
      DeviceOp* op =
          AddDeviceOp(m.deviceId, m.start, m.end, m.correlationId, m.streamId, OpKind::kMemcpy);
      if (op == nullptr) return;
      op->bytes = m.bytes;
      op->name = CopyName(m.copyKind, m.srcKind, m.dstKind);
      op->copy_kind = ToCopyKind(m.copyKind);
      op->pageable = IsPageable(m.srcKind, m.dstKind);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const auto& m = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4&>(record);
      DeviceOp* op =
          AddDeviceOp(m.deviceId, m.start, m.end, m.correlationId, m.streamId, OpKind::kMemcpy);
      if (op == nullptr) return;
      op->bytes = m.bytes;
      op->name = CopyName(CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, m.srcKind, m.dstKind);
      op->copy_kind = CopyKind::kPeer;
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto& m = reinterpret_cast<const CUpti_ActivityMemset4&>(record);
      DeviceOp* op =
          AddDeviceOp(m.deviceId, m.start, m.end, m.correlationId, m.streamId, OpKind::kMemset);
      if (op == nullptr) return;
      op->bytes = m.bytes;
      op->name = timeline_.strings.Intern("Memset");
      return;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto& a = reinterpret_cast<const CUpti_ActivityAPI&>(record);
      AddCall(a.kind == CUPTI_ACTIVITY_KIND_DRIVER, a.cbid, a.start, a.end, a.correlationId,
              a.threadId);
      return;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto& s = reinterpret_cast<const CUpti_ActivitySynchronization2&>(record);
      CallStreams cs;
      cs.correlation = s.correlationId;
      if (s.type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE ||
          s.type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT) {
        cs.stream = s.streamId;
      }
      if (s.type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT) {
        waits_.push_back(WaitRecord{s.cudaEventId, s.correlationId});
      }
      call_streams_.push_back(cs);
      return;
    }
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: {
      const auto& e = reinterpret_cast<const CUpti_ActivityCudaEvent2&>(record);
      events_.push_back(EventRecord{e.eventId, e.streamId, e.correlationId});
      return;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      const auto& d = reinterpret_cast<const CUpti_ActivityDevice5&>(record);
      if (!d.isCudaVisible) return;
      const int id = static_cast<int>(d.id);
      std::vector<int>& visible = timeline_.info.visible_devices;
      if (std::find(visible.begin(), visible.end(), id) != visible.end()) return;
      visible.push_back(id);
      timeline_.info.visible_device_names.push_back(d.name != nullptr ? d.name : "");
      return;
    }
    default:
      return;  // kinds gpuidle does not enable
  }
}

uint64_t RecordTranslator::TranslateBuffer(uint8_t* buffer, size_t valid_bytes) {
  uint64_t n = 0;
  CUpti_Activity* record = nullptr;
  while (api_.ActivityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
    Translate(*record);
    ++n;
  }
  return n;
}

Timeline RecordTranslator::Finish() {
  // A wait's peer stream: where its event was last recorded before the wait was issued
  // (correlation ids grow with time).
  absl::flat_hash_map<uint32_t, std::vector<EventRecord>> by_event;
  for (const EventRecord& e : events_) by_event[e.event_id].push_back(e);
  for (auto& [id, records] : by_event) {
    std::sort(records.begin(), records.end(), [](const EventRecord& a, const EventRecord& b) {
      return a.correlation < b.correlation;
    });
  }
  absl::flat_hash_map<uint64_t, int64_t> wait_peer;
  for (const WaitRecord& w : waits_) {
    auto records = by_event.find(w.event_id);
    if (records == by_event.end()) continue;
    const std::vector<EventRecord>& r = records->second;
    auto after =
        std::lower_bound(r.begin(), r.end(), w.correlation,
                         [](const EventRecord& e, uint64_t c) { return e.correlation < c; });
    if (after != r.begin()) wait_peer[w.correlation] = (after - 1)->stream;
  }
  for (CallStreams& cs : call_streams_) {
    auto it = wait_peer.find(cs.correlation);
    if (it != wait_peer.end()) cs.wait_on_stream = it->second;
  }
  // Device names from the device records.
  const std::vector<int>& visible = timeline_.info.visible_devices;
  for (DeviceTimeline& d : timeline_.devices) {
    auto it = std::find(visible.begin(), visible.end(), d.device);
    if (it != visible.end()) d.name = timeline_.info.visible_device_names[it - visible.begin()];
  }
  timeline_.Finalize();
  AttachCallStreams(call_streams_, &timeline_);
  Timeline out = std::move(timeline_);
  timeline_ = Timeline();
  call_streams_.clear();
  events_.clear();
  waits_.clear();
  kernels_.clear();
  copy_names_.clear();
  api_names_.clear();
  records_ = 0;
  return out;
}

}  // namespace gpuidle::internal
