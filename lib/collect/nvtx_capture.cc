#include "collect/nvtx_capture.h"

#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <cwchar>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "collect/host_ranges.h"
#include "model/timeline.h"
#include "model/trace_names.h"

namespace gpuidle::internal {
namespace {

// Registered strings and domains live as long as the process: NVTX has no call that releases a
// registered string, and a destroyed domain's ranges may still be open. Each one is chained from
// a list that is never freed, so that one the program drops is still held (not lost, for a leak
// checker). Lock-free: NVTX calls come from any thread, at any time, forks included.
struct Kept {
  const Kept* next_kept = nullptr;
};
std::atomic<const Kept*> kept_handles{nullptr};

template <typename T>
T* KeepForever(T* handle) {
  handle->next_kept = kept_handles.load(std::memory_order_relaxed);
  while (!kept_handles.compare_exchange_weak(handle->next_kept, handle, std::memory_order_release,
                                             std::memory_order_relaxed)) {
  }
  return handle;
}

struct Domain : Kept {
  Domain(std::string n, bool m) : name(std::move(n)), markers(m) {}
  std::string name;
  bool markers;  // gpuidle's own
};

struct RegisteredText : Kept {
  explicit RegisteredText(std::string t) : text(std::move(t)) {}
  std::string text;
};

std::atomic<int> modules_attached{0};

// Set on the thread that creates gpuidle's own marker domain while it does (MarkerDomain), so
// that DomainCreateA knows the call is gpuidle's own and notes that its markers reach the
// capture rather than another NVTX tool.
thread_local bool creating_own_domain = false;
std::atomic<bool> own_markers_captured{false};

std::string Narrow(const wchar_t* w) {
  std::string s;
  if (w == nullptr) return s;
  for (; *w != L'\0'; ++w) s.push_back(*w < 0x80 ? static_cast<char>(*w) : '?');
  return s;
}

const std::string* RegisteredString(nvtxStringHandle_t h) {
  return &reinterpret_cast<const RegisteredText*>(h)->text;
}
const Domain* AsDomain(nvtxDomainHandle_t h) { return reinterpret_cast<const Domain*>(h); }

std::string Message(const nvtxEventAttributes_t* a) {
  if (a == nullptr) return {};
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      return a->message.ascii != nullptr ? a->message.ascii : "";
    case NVTX_MESSAGE_TYPE_UNICODE:
      return Narrow(a->message.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED:
      return a->message.registered != nullptr ? *RegisteredString(a->message.registered) : "";
    default:
      return {};
  }
}

RangeKind KindOf(const Domain* d, const nvtxEventAttributes_t* a, absl::string_view name) {
  if (d != nullptr && d->markers && a != nullptr) {
    if (a->category == kMarkerCategoryStep) return RangeKind::kStep;
    if (a->category == kMarkerCategoryData) return RangeKind::kData;
    if (a->category == kMarkerCategoryCallSite) return RangeKind::kPython;
    if (a->category == kMarkerCategoryRequest) return RangeKind::kRequest;
    if (a->category == kMarkerCategoryRequestRun) return RangeKind::kRequestRun;
    return RangeKind::kUser;
  }
  return AnnotationRangeKind(name);
}

uintptr_t StackOf(nvtxDomainHandle_t d) { return reinterpret_cast<uintptr_t>(d); }

HostRangeRecorder& Recorder() { return HostRangeRecorder::Get(); }

// Start/end range ids: unique across threads and domains.
std::atomic<uint64_t> next_range_id{1};

// What a range is called and what it marks: worked out only while recording, because NVTX
// calls come on the program's busiest threads and mostly while nothing collects.
struct Named {
  std::string name;
  RangeKind kind;
};

Named FromText(std::string name) {
  const RangeKind kind = AnnotationRangeKind(name);
  return Named{std::move(name), kind};
}

Named FromAttributes(const Domain* d, const nvtxEventAttributes_t* a) {
  std::string name = Message(a);
  const RangeKind kind = KindOf(d, a, name);
  return Named{std::move(name), kind};
}

template <typename NamedFn>
void Push(uintptr_t stack, NamedFn named) {
  if (!Recorder().recording()) {
    Recorder().Push(stack, RangeKind::kUser, {});  // kept only so that its pop pairs up
    return;
  }
  const Named n = named();
  Recorder().Push(stack, n.kind, n.name);
}

template <typename NamedFn>
nvtxRangeId_t Start(NamedFn named) {
  const uint64_t id = next_range_id.fetch_add(1, std::memory_order_relaxed);
  if (Recorder().recording()) {
    const Named n = named();
    Recorder().Start(id, n.kind, n.name);
  }
  return id;
}

// --- the entry points NVTX calls (never throw, never block on CUPTI) ---

int NVTX_API RangePushA(const char* message) {
  Push(0, [&] { return FromText(message != nullptr ? message : ""); });
  return 0;
}
int NVTX_API RangePushW(const wchar_t* message) {
  Push(0, [&] { return FromText(Narrow(message)); });
  return 0;
}
int NVTX_API RangePushEx(const nvtxEventAttributes_t* a) {
  Push(0, [&] { return FromAttributes(nullptr, a); });
  return 0;
}
int NVTX_API RangePop() {
  Recorder().Pop(0);
  return 0;
}
nvtxRangeId_t NVTX_API RangeStartA(const char* message) {
  return Start([&] { return FromText(message != nullptr ? message : ""); });
}
nvtxRangeId_t NVTX_API RangeStartW(const wchar_t* message) {
  return Start([&] { return FromText(Narrow(message)); });
}
nvtxRangeId_t NVTX_API RangeStartEx(const nvtxEventAttributes_t* a) {
  return Start([&] { return FromAttributes(nullptr, a); });
}
void NVTX_API RangeEnd(nvtxRangeId_t id) { Recorder().End(id); }

nvtxDomainHandle_t NVTX_API DomainCreateA(const char* name) {
  const std::string n = name != nullptr ? name : "";
  if (creating_own_domain) own_markers_captured.store(true, std::memory_order_relaxed);
  return reinterpret_cast<nvtxDomainHandle_t>(KeepForever(new Domain(n, n == kMarkerDomain)));
}
nvtxDomainHandle_t NVTX_API DomainCreateW(const wchar_t* name) {
  const std::string n = Narrow(name);
  return reinterpret_cast<nvtxDomainHandle_t>(KeepForever(new Domain(n, n == kMarkerDomain)));
}
void NVTX_API DomainDestroy(nvtxDomainHandle_t) {
  // Kept: ranges of the domain may still be open, and a handle may be reused by the program.
}
nvtxStringHandle_t NVTX_API DomainRegisterStringA(nvtxDomainHandle_t, const char* s) {
  return reinterpret_cast<nvtxStringHandle_t>(
      KeepForever(new RegisteredText(s != nullptr ? s : "")));
}
nvtxStringHandle_t NVTX_API DomainRegisterStringW(nvtxDomainHandle_t, const wchar_t* s) {
  return reinterpret_cast<nvtxStringHandle_t>(KeepForever(new RegisteredText(Narrow(s))));
}
int NVTX_API DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  Push(StackOf(d), [&] { return FromAttributes(AsDomain(d), a); });
  return 0;
}
int NVTX_API DomainRangePop(nvtxDomainHandle_t d) {
  Recorder().Pop(StackOf(d));
  return 0;
}
nvtxRangeId_t NVTX_API DomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return Start([&] { return FromAttributes(AsDomain(d), a); });
}
void NVTX_API DomainRangeEnd(nvtxDomainHandle_t, nvtxRangeId_t id) { Recorder().End(id); }

template <typename F>
void Set(NvtxFunctionTable table, unsigned int size, unsigned int index, F fn) {
  if (table != nullptr && index < size && table[index] != nullptr) {
    *table[index] = reinterpret_cast<NvtxFunctionPointer>(fn);
  }
}

}  // namespace

int AttachNvtx(NvtxExportTableGetter get_export_table) {
  if (get_export_table == nullptr) return 0;
  const auto* callbacks =
      static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->GetModuleFunctionTable == nullptr) return 0;
  NvtxFunctionTable core = nullptr;
  unsigned int core_size = 0;
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size) != 0) {
    Set(core, core_size, NVTX_CBID_CORE_RangePushA, &RangePushA);
    Set(core, core_size, NVTX_CBID_CORE_RangePushW, &RangePushW);
    Set(core, core_size, NVTX_CBID_CORE_RangePushEx, &RangePushEx);
    Set(core, core_size, NVTX_CBID_CORE_RangePop, &RangePop);
    Set(core, core_size, NVTX_CBID_CORE_RangeStartA, &RangeStartA);
    Set(core, core_size, NVTX_CBID_CORE_RangeStartW, &RangeStartW);
    Set(core, core_size, NVTX_CBID_CORE_RangeStartEx, &RangeStartEx);
    Set(core, core_size, NVTX_CBID_CORE_RangeEnd, &RangeEnd);
  }
  NvtxFunctionTable core2 = nullptr;
  unsigned int core2_size = 0;
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size) != 0) {
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, &DomainCreateA);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainCreateW, &DomainCreateW);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainDestroy, &DomainDestroy);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA, &DomainRegisterStringA);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringW, &DomainRegisterStringW);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, &DomainRangePushEx);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, &DomainRangePop);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRangeStartEx, &DomainRangeStartEx);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRangeEnd, &DomainRangeEnd);
  }
  modules_attached.fetch_add(1, std::memory_order_relaxed);
  return 1;
}

int NvtxModulesAttached() { return modules_attached.load(std::memory_order_relaxed); }

}  // namespace gpuidle::internal

namespace {

int NVTX_API AttachOwnNvtx(NvtxGetExportTableFunc_t get_export_table) {
  return gpuidle::internal::AttachNvtx(get_export_table);
}

}  // namespace

namespace gpuidle::internal {

void InjectOwnNvtx() {
  // NVTX's static-injection hook: a weak pointer that the NVTX header defines (hidden) in this
  // module and reads at the module's first NVTX call, when NVTX_INJECTION64_PATH is unset.
  InitializeInjectionNvtx2_fnptr = &AttachOwnNvtx;
}

namespace {

nvtxDomainHandle_t MarkerDomain() {
  static const nvtxDomainHandle_t domain = [] {
    InjectOwnNvtx();
    creating_own_domain = true;
    nvtxDomainHandle_t d = nvtxDomainCreateA(kMarkerDomain);
    creating_own_domain = false;
    return d;
  }();
  return domain;
}

nvtxEventAttributes_t MarkerAttributes(uint32_t category, const char* message) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.category = category;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = message;
  return a;
}

}  // namespace

void PushMarkerRange(uint32_t category, const char* message) noexcept {
  const nvtxEventAttributes_t a = MarkerAttributes(category, message);
  nvtxDomainRangePushEx(MarkerDomain(), &a);
}

void PopMarkerRange() noexcept { nvtxDomainRangePop(MarkerDomain()); }

uint64_t StartMarkerRange(uint32_t category, const char* message) noexcept {
  const nvtxEventAttributes_t a = MarkerAttributes(category, message);
  return nvtxDomainRangeStartEx(MarkerDomain(), &a);
}

void EndMarkerRange(uint64_t range_id) noexcept { nvtxDomainRangeEnd(MarkerDomain(), range_id); }

bool MarkersWanted() noexcept {
  if (HostRangeRecorder::Get().recording()) return true;
  // Without a tool NVTX hands out no domain: nobody would see the marker.
  return MarkerDomain() != nullptr && !own_markers_captured.load(std::memory_order_relaxed);
}

}  // namespace gpuidle::internal
