// Names of the idle taxonomy (docs/ANALYSIS.md): the strings users and the JSON schema see.
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gpuidle/report.h"

namespace gpuidle {

Cause CauseOf(Subcause s) {
  switch (s) {
    case Subcause::kDataLoader:
    case Subcause::kH2DCopy:
    case Subcause::kHost:
      return Cause::kDataStarved;
    case Subcause::kLaunchOverhead:
    case Subcause::kKernelGap:
    case Subcause::kRequestsWaiting:
      return Cause::kLaunchBound;
    case Subcause::kHostSync:
    case Subcause::kDeviceWait:
    case Subcause::kCommWait:
    case Subcause::kCopyWait:
    case Subcause::kAllocator:
    case Subcause::kOtherProcess:
      return Cause::kSyncBound;
    case Subcause::kUnattributed:
      break;
  }
  return Cause::kUnattributed;
}

absl::string_view CauseName(Cause c) {
  switch (c) {
    case Cause::kDataStarved:
      return "data_starved";
    case Cause::kLaunchBound:
      return "launch_bound";
    case Cause::kSyncBound:
      return "sync_bound";
    case Cause::kUnattributed:
      break;
  }
  return "unattributed";
}

absl::string_view SubcauseName(Subcause s) {
  switch (s) {
    case Subcause::kDataLoader:
      return "dataloader";
    case Subcause::kH2DCopy:
      return "h2d_copy";
    case Subcause::kHost:
      return "host";
    case Subcause::kLaunchOverhead:
      return "launch_overhead";
    case Subcause::kKernelGap:
      return "kernel_gap";
    case Subcause::kRequestsWaiting:
      return "requests_waiting";
    case Subcause::kHostSync:
      return "host_sync";
    case Subcause::kDeviceWait:
      return "device_wait";
    case Subcause::kCommWait:
      return "comm_wait";
    case Subcause::kCopyWait:
      return "copy_wait";
    case Subcause::kAllocator:
      return "allocator";
    case Subcause::kOtherProcess:
      return "other_process";
    case Subcause::kUnattributed:
      break;
  }
  return "unattributed";
}

absl::string_view PhaseName(Phase p) {
  switch (p) {
    case Phase::kStartUp:
      return "start_up";
    case Phase::kSteady:
      return "steady";
    case Phase::kWindDown:
      return "wind_down";
  }
  return "steady";
}

absl::string_view OneOffKindName(OneOffKind k) {
  switch (k) {
    case OneOffKind::kCudaInit:
      return "cuda_init";
    case OneOffKind::kCompilation:
      return "compilation";
    case OneOffKind::kModuleLoad:
      return "module_load";
    case OneOffKind::kFirstCall:
      return "first_call";
    case OneOffKind::kWarmUpStep:
      return "warm_up_step";
    case OneOffKind::kSetUp:
      return "set_up";
    case OneOffKind::kWindDown:
      return "wind_down";
    case OneOffKind::kGpuBusy:
      return "gpu_busy";
    case OneOffKind::kRecordsLost:
      return "records_lost";
    case OneOffKind::kGraphCapture:
      return "graph_capture";
    case OneOffKind::kNoDemand:
      return "no_demand";
  }
  return "set_up";
}

int64_t DeviceReport::PhaseNs(Phase p) const {
  if (phase_ns.has_value()) return (*phase_ns)[static_cast<int>(p)];
  switch (p) {
    case Phase::kStartUp:
      return std::max<int64_t>(0, steady_start_ns - window_start_ns);
    case Phase::kWindDown:
      return std::max<int64_t>(0, window_end_ns - steady_end_ns);
    case Phase::kSteady:
      break;
  }
  return std::max<int64_t>(0, steady_end_ns - steady_start_ns);
}

int64_t DeviceReport::SteadyOneOffNs() const {
  int64_t ns = 0;
  for (const OneOffTime& o : one_off) {
    if (o.phase == Phase::kSteady) ns += o.ns;
  }
  return ns;
}

std::string QualifiedSubcauseName(Subcause s) {
  if (s == Subcause::kUnattributed) return "unattributed";
  return absl::StrCat(CauseName(CauseOf(s)), ".", SubcauseName(s));
}

std::optional<Subcause> ParseSubcause(absl::string_view qualified_name) {
  for (int i = 0; i < kNumSubcauses; ++i) {
    const auto s = static_cast<Subcause>(i);
    if (QualifiedSubcauseName(s) == qualified_name) return s;
  }
  return std::nullopt;
}

int64_t IdleBreakdown::CauseNs(Cause c) const {
  int64_t total = 0;
  for (int i = 0; i < kNumSubcauses; ++i) {
    if (CauseOf(static_cast<Subcause>(i)) == c) total += ns[i];
  }
  return total;
}

int64_t IdleBreakdown::TotalNs() const {
  int64_t total = 0;
  for (int64_t v : ns) total += v;
  return total;
}

Subcause IdleBreakdown::Dominant() const {
  int best = static_cast<int>(Subcause::kUnattributed);
  for (int i = 0; i < kNumSubcauses; ++i) {
    if (ns[i] > ns[best]) best = i;
  }
  return static_cast<Subcause>(best);
}

IdleBreakdown& IdleBreakdown::operator+=(const IdleBreakdown& other) {
  for (int i = 0; i < kNumSubcauses; ++i) ns[i] += other.ns[i];
  return *this;
}

IdleBreakdown Report::TotalIdle() const {
  IdleBreakdown total;
  for (const DeviceReport& d : devices) total += d.idle;
  return total;
}

}  // namespace gpuidle
