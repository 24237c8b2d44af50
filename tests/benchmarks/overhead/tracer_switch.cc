#include "tracer_switch.h"

#include <cstdint>
#include <cstdio>
#include <memory>

#include "absl/status/statusor.h"
#include "gpuidle/profiler.h"
#include "gpuidle/report.h"

extern "C" int gpuidle_bare_cupti_start(void);
extern "C" int gpuidle_bare_cupti_stop(void);
extern "C" int gpuidle_bare_cupti_detach(void);
extern "C" long long gpuidle_bare_cupti_kernel_records(void);

namespace gpuidle_bench {
namespace {

long long gpuidle_kernels = 0;
int64_t gpuidle_idle_ns = 0;
int64_t gpuidle_launch_bound_ns = 0;

gpuidle::Profiler& GpuidleProfiler() {
  static gpuidle::Profiler* profiler = [] {
    absl::StatusOr<gpuidle::ProfilerOptions> options = gpuidle::ProfilerOptionsFromEnvironment();
    gpuidle::ProfilerOptions o = options.ok() ? *options : gpuidle::ProfilerOptions();
    o.print_summary = false;
    o.report_path.clear();  // one report per round would be written otherwise
    o.trace_path.clear();
    return new gpuidle::Profiler(o);
  }();
  return *profiler;
}

}  // namespace

bool KnownTracer(const std::string& name) { return name == "bare" || name == "gpuidle"; }

bool StartTracer(const std::string& name) {
  if (name == "bare") return gpuidle_bare_cupti_start() == 1;
  return GpuidleProfiler().Start().ok();  // gpuidle printed why not
}

bool StopTracer(const std::string& name) {
  if (name == "bare") return gpuidle_bare_cupti_stop() == 1;
  if (absl::Status s = GpuidleProfiler().Stop(); !s.ok()) {
    std::fprintf(stderr, "gpuidle stop: %s\n", s.ToString().c_str());
    return false;
  }
  if (const gpuidle::Report* report = GpuidleProfiler().report(); report != nullptr) {
    for (const gpuidle::DeviceReport& device : report->devices) {
      gpuidle_kernels += device.kernel_count;
      gpuidle_idle_ns += device.idle_ns;
      gpuidle_launch_bound_ns += device.idle.CauseNs(gpuidle::Cause::kLaunchBound);
    }
  }
  return true;
}

bool DetachTracer(const std::string& name) {
  if (name != "bare") return true;  // gpuidle's Stop detached (collect/collector.h CuptiAfterStop)
  if (gpuidle_bare_cupti_detach() == 1) return true;
  std::fprintf(stderr, "bare: CUPTI could not be detached\n");
  return false;
}

long long TracerRecords(const std::string& name) {
  return name == "bare" ? gpuidle_bare_cupti_kernel_records() : gpuidle_kernels;
}

double TracerLaunchBoundPercent(const std::string& name) {
  if (name == "bare" || gpuidle_idle_ns <= 0) return -1;
  return 100.0 * static_cast<double>(gpuidle_launch_bound_ns) /
         static_cast<double>(gpuidle_idle_ns);
}

}  // namespace gpuidle_bench
