#include "collect/api_activity_probe.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace gpuidle::internal {
namespace {

template <typename Fn>
Fn CuptiFunction(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

void SetAttribute(CUpti_ActivityAttribute attribute, uint64_t value, const char* what) {
  using SetFn = CUptiResult (*)(CUpti_ActivityAttribute, size_t*, void*);
  auto set = CuptiFunction<SetFn>("cuptiActivitySetAttribute");
  size_t size = sizeof(value);
  if (set == nullptr || set(attribute, &size, &value) != CUPTI_SUCCESS) {
    std::fprintf(stderr, "gpuidle probe: setting %s failed\n", what);
  }
}

void LatencyTimestamps(bool on) {
  using EnableFn = CUptiResult (*)(uint8_t);
  auto enable = CuptiFunction<EnableFn>("cuptiActivityEnableLatencyTimestamps");
  if (enable == nullptr || enable(on ? 1 : 0) != CUPTI_SUCCESS) {
    std::fprintf(stderr, "gpuidle probe: latency timestamps not %s\n", on ? "enabled" : "disabled");
  }
}

// The activity records of the API calls that EnableApiActivityRecords enabled, until
// DisableProbes.
class ApiActivityProbe {
 public:
  void Enable(const CuptiApi& api, ApiRecords mode, const NeededCallbackIdTable& ids,
              const CollectorProbes& probes);
  void Disable(const CuptiApi& api);

 private:
  void EnableDomain(const CuptiApi& api, ApiRecords mode, CUpti_ActivityKind kind, uint32_t end,
                    const std::vector<NeededId>& needed,
                    CUptiResult (*enable_id)(CUpti_CallbackId, uint8_t),
                    std::vector<CUpti_CallbackId>* enabled,
                    std::vector<CUpti_CallbackId>* switched_off);

  std::vector<CUpti_ActivityKind> kinds_;
  std::vector<CUpti_CallbackId> runtime_ids_, driver_ids_;
  std::vector<CUpti_CallbackId> runtime_ids_off_, driver_ids_off_;
};

// One per process, as the collector is; never destroyed, like the collector's state.
ApiActivityProbe& TheApiActivityProbe() {
  static ApiActivityProbe* probe = new ApiActivityProbe();
  return *probe;
}

}  // namespace

void EnableAddedProbes(const CollectorProbes& probes) {
  if (probes.Adds(kAddLatencyTimestamps)) LatencyTimestamps(true);
  if (probes.Adds(kAddLargeDeviceBuffers)) {
    SetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, uint64_t{32} << 20, "device buffer size");
    SetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE, 4, "preallocated buffers");
    SetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT, 16, "device buffer pool limit");
  }
}

void EnableApiActivityRecords(const CuptiApi& api, ApiRecords mode,
                              const NeededCallbackIdTable& ids, const CollectorProbes& probes) {
  TheApiActivityProbe().Enable(api, mode, ids, probes);
}

void DisableProbes(const CuptiApi& api, const CollectorProbes& probes) {
  TheApiActivityProbe().Disable(api);
  if (probes.Adds(kAddLatencyTimestamps)) LatencyTimestamps(false);
}

void ApiActivityProbe::Enable(const CuptiApi& api, ApiRecords mode,
                              const NeededCallbackIdTable& ids, const CollectorProbes& probes) {
  if (!probes.LeavesOut(kPartRuntimeCalls)) {
    EnableDomain(api, mode, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_SIZE,
                 ids.runtime(), api.ActivityEnableRuntimeApi, &runtime_ids_, &runtime_ids_off_);
  }
  if (!probes.LeavesOut(kPartDriverCalls)) {
    EnableDomain(api, mode, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_SIZE, ids.driver(),
                 api.ActivityEnableDriverApi, &driver_ids_, &driver_ids_off_);
  }
}

void ApiActivityProbe::EnableDomain(const CuptiApi& api, ApiRecords mode, CUpti_ActivityKind kind,
                                    uint32_t end, const std::vector<NeededId>& needed,
                                    CUptiResult (*enable_id)(CUpti_CallbackId, uint8_t),
                                    std::vector<CUpti_CallbackId>* enabled,
                                    std::vector<CUpti_CallbackId>* switched_off) {
  if (mode == ApiRecords::kWholeKinds) {
    if (api.ActivityEnable(kind) != CUPTI_SUCCESS) return;
    kinds_.push_back(kind);
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

void ApiActivityProbe::Disable(const CuptiApi& api) {
  for (CUpti_CallbackId cbid : runtime_ids_) api.ActivityEnableRuntimeApi(cbid, 0);
  for (CUpti_CallbackId cbid : driver_ids_) api.ActivityEnableDriverApi(cbid, 0);
  for (CUpti_ActivityKind kind : kinds_) api.ActivityDisable(kind);
  for (CUpti_CallbackId cbid : runtime_ids_off_) api.ActivityEnableRuntimeApi(cbid, 1);
  for (CUpti_CallbackId cbid : driver_ids_off_) api.ActivityEnableDriverApi(cbid, 1);
  kinds_.clear();
  runtime_ids_.clear();
  driver_ids_.clear();
  runtime_ids_off_.clear();
  driver_ids_off_.clear();
}

}  // namespace gpuidle::internal
