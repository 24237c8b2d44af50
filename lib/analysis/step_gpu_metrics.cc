#include "analysis/step_gpu_metrics.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <vector>

#include "analysis/gpu_metrics.h"

namespace gpuidle::internal {
namespace {

// As in the device's summary (gpu_metrics.cc): a busy reading under this share of its maximum
// clock ran slow.
constexpr double kSlowClockRatio = 0.9;

// The busy time within [start, end): `busy` is sorted and disjoint. A small local helper: the
// device summary's own one is private to gpu_metrics.cc.
int64_t BusyWithin(const std::vector<Interval>& busy, int64_t start, int64_t end) {
  auto it = std::upper_bound(busy.begin(), busy.end(), start,
                             [](int64_t v, const Interval& i) { return v < i.end_ns; });
  int64_t ns = 0;
  for (; it != busy.end() && it->start_ns < end; ++it) {
    ns += std::max<int64_t>(0, std::min(end, it->end_ns) - std::max(start, it->start_ns));
  }
  return ns;
}

bool IsBusy(const std::vector<Interval>& busy, int64_t t) { return BusyWithin(busy, t, t + 1) > 0; }

uint32_t Median(std::vector<uint32_t> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

void FillStepGpuMetrics(const Timeline& t, int device, const std::vector<Interval>& busy,
                        std::span<StepReport> steps) {
  std::vector<const GpuMetricSample*> readings;
  for (const GpuMetricSample& s : t.gpu_metrics) {
    if (s.device == device) readings.push_back(&s);
  }
  std::sort(
      readings.begin(), readings.end(),
      [](const GpuMetricSample* a, const GpuMetricSample* b) { return a->time_ns < b->time_ns; });
  std::vector<const GpuThroughputSample*> pm;
  // Range-profiler counters lie at times Kineto made up: they tell no step from another.
  for (const GpuThroughputSample& s : t.gpu_throughput) {
    if (s.device == device && s.end_ns > s.start_ns && !t.info.device_times_made_up) {
      pm.push_back(&s);
    }
  }
  std::sort(pm.begin(), pm.end(), [](const GpuThroughputSample* a, const GpuThroughputSample* b) {
    return a->start_ns < b->start_ns;
  });
  if (readings.empty() && pm.empty()) return;
  for (StepReport& step : steps) {
    StepReport::Gpu g;
    auto r = std::lower_bound(readings.begin(), readings.end(), step.start_ns,
                              [](const GpuMetricSample* s, int64_t v) { return s->time_ns < v; });
    std::vector<uint32_t> clocks, power;
    int64_t slow = 0;
    for (; r != readings.end() && (*r)->time_ns < step.end_ns; ++r) {
      const GpuMetricSample& s = **r;
      ++g.samples;
      g.sm_clock_max_mhz = std::max(g.sm_clock_max_mhz, s.sm_clock_max_mhz);
      g.power_limit_mw = std::max(g.power_limit_mw, s.power_limit_mw);
      if (!IsBusy(busy, s.time_ns)) continue;
      if (s.power_mw > 0) power.push_back(s.power_mw);
      if (s.sm_clock_mhz == 0) continue;
      clocks.push_back(s.sm_clock_mhz);
      if (s.sm_clock_max_mhz > 0 && s.sm_clock_mhz < kSlowClockRatio * s.sm_clock_max_mhz) ++slow;
    }
    g.sm_clock_median_mhz = Median(clocks);
    g.power_median_mw = Median(power);
    if (!clocks.empty()) {
      g.slow_clock_share = static_cast<double>(slow) / static_cast<double>(clocks.size());
    }
    // A device's PM samples do not overlap, so their ends are sorted too: the first that reaches
    // into the step is found by its end.
    auto p =
        std::upper_bound(pm.begin(), pm.end(), step.start_ns,
                         [](int64_t v, const GpuThroughputSample* s) { return v < s->end_ns; });
    RateWhileBusy sm, tensor, dram;
    bool any_pm = false;
    for (; p != pm.end() && (*p)->start_ns < step.end_ns; ++p) {
      const GpuThroughputSample& s = **p;
      const int64_t from = std::max(s.start_ns, step.start_ns),
                    to = std::min(s.end_ns, step.end_ns);
      if (to <= from) continue;
      any_pm = true;
      const int64_t kernels = BusyWithin(busy, from, to);
      sm.Add(s.sm_active_pct, to - from, kernels);
      tensor.Add(s.tensor_active_pct, to - from, kernels);
      dram.Add(s.dram_pct, to - from, kernels);
    }
    if (g.samples == 0 && !any_pm) continue;
    g.sm_active_pct = sm.Rate(100);
    g.tensor_active_pct = tensor.Rate(100);
    g.dram_pct = dram.Rate(100);
    step.gpu = g;
  }
}

}  // namespace gpuidle::internal
