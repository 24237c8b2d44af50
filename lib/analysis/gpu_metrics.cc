#include "analysis/gpu_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "model/trace_names.h"

namespace gpuidle::internal {
namespace {

// A busy reading whose SM clock is under this share of its maximum ran slow.
constexpr double kSlowClockRatio = 0.9;
// Findings need this many busy readings, and clocks this share of them slow, to be said.
constexpr int64_t kMinBusySamples = 5;
constexpr double kMinSlowShare = 0.10;

// The device's kernels as disjoint sorted intervals.
std::vector<std::pair<int64_t, int64_t>> KernelIntervals(const DeviceTimeline& device) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const DeviceOp& op : device.ops) {
    if (op.kind != OpKind::kKernel || op.end_ns <= op.start_ns) continue;
    if (!out.empty() && op.start_ns <= out.back().second) {
      out.back().second = std::max(out.back().second, op.end_ns);
    } else {
      out.emplace_back(op.start_ns, op.end_ns);
    }
  }
  return out;
}

bool Inside(const std::vector<std::pair<int64_t, int64_t>>& intervals, int64_t t) {
  auto it =
      std::upper_bound(intervals.begin(), intervals.end(), t,
                       [](int64_t v, const std::pair<int64_t, int64_t>& i) { return v < i.first; });
  return it != intervals.begin() && t < std::prev(it)->second;
}

template <typename T>
T Median(std::vector<T> v) {
  if (v.empty()) return T{};
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// The reasons a slow reading gave, the most telling first where several are set.
const char* ReasonOf(uint64_t events) {
  if (events & (kClockEventHardwareThermal | kClockEventSoftwareThermal)) return "thermal";
  if (events & kClockEventPowerBrake) return "power_brake";
  if (events & kClockEventHardwareSlowdown) return "hardware_slowdown";
  if (events & kClockEventPowerCap) return "power_cap";
  if (events & kClockEventApplicationsClocks) return "applications_clocks";
  if (events & kClockEventSyncBoost) return "sync_boost";
  return "";
}

std::string ReasonWords(const std::string& reason) {
  if (reason == "power_cap") return "power cap";
  if (reason == "thermal") return "thermal slowdown";
  if (reason == "hardware_slowdown") return "hardware slowdown";
  if (reason == "power_brake") return "power brake";
  if (reason == "applications_clocks") return "applications clocks set below the maximum";
  if (reason == "sync_boost") return "sync boost";
  return "no reason given by NVML";
}

std::string FixForSlowClocks(const std::string& reason) {
  if (reason == "power_cap") {
    return "the GPU runs at its power limit: check the limit against the board's default "
           "(nvidia-smi -q -d POWER) and whether the job shares a power budget; fewer idle "
           "gaps will not make such steps faster";
  }
  if (reason == "thermal") {
    return "the GPU is too hot: check the cooling, the airflow and the fans of the node "
           "(nvidia-smi -q -d TEMPERATURE)";
  }
  if (reason == "hardware_slowdown" || reason == "power_brake") {
    return "the board slowed itself (power supply or temperature at the hardware's limit): "
           "have the node's power and cooling checked";
  }
  if (reason == "applications_clocks") {
    return "application clocks are set below the maximum: reset them (nvidia-smi -rac) or ask "
           "the cluster's administrators why they are set";
  }
  return "compare the clocks with the board's maximum in nvidia-smi -q -d CLOCK,PERFORMANCE";
}

std::string Ghz(uint32_t mhz) { return absl::StrFormat("%.2f", mhz / 1000.0); }

std::string Gib(uint64_t bytes) {
  return absl::StrFormat("%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
}

std::string Pct(double share) { return absl::StrFormat("%.0f%%", 100 * share); }

constexpr absl::string_view kOtherProcessFix =
    "the GPU is shared: the time it overlaps (idle, and its turns inside this job's kernels) is "
    "another job's work, not this one's waste; run the jobs on separate GPUs "
    "(CUDA_VISIBLE_DEVICES, the scheduler's exclusive mode) to compare";

// How long a kernel ran within [from, to).
int64_t BusyNs(const std::vector<std::pair<int64_t, int64_t>>& intervals, int64_t from,
               int64_t to) {
  auto it =
      std::upper_bound(intervals.begin(), intervals.end(), from,
                       [](int64_t v, const std::pair<int64_t, int64_t>& i) { return v < i.first; });
  if (it != intervals.begin()) --it;
  int64_t busy = 0;
  for (; it != intervals.end() && it->first < to; ++it) {
    busy += std::max<int64_t>(0, std::min(to, it->second) - std::max(from, it->first));
  }
  return busy;
}

// PM samples count towards the figures while busy only where kernels ran this much of them.
constexpr double kMinBusyFraction = 0.5;
constexpr int64_t kMinBusyThroughputSamples = 5;
// A device whose DRAM ran at this share of its peak while busy is memory-bound...
constexpr double kMemoryBoundDramPct = 60;
// ... unless its tensor pipes were this busy too (a matmul that also streams memory).
constexpr double kComputeBoundTensorPct = 40;
// SMs active less than this share of the busy time: kernels too small to fill the GPU.
constexpr double kUnderusedSmPct = 50;

// The device's PM samples in [from, to), as rates while busy (RateWhileBusy) over the samples
// that kernels mostly covered.
std::optional<GpuMetrics::Throughput> SummariseThroughput(
    const Timeline& t, int device, const std::vector<std::pair<int64_t, int64_t>>& kernels,
    int64_t from, int64_t to) {
  GpuMetrics::Throughput th;
  RateWhileBusy sm, tensor, dram, pcie_read, pcie_write, nvl_read, nvl_write;
  std::vector<int64_t> lengths;
  double total = 0, busy_total = 0;
  int64_t busy_samples = 0;
  for (const GpuThroughputSample& s : t.gpu_throughput) {
    if (s.device != device || s.start_ns < from || s.start_ns >= to || s.end_ns <= s.start_ns) {
      continue;
    }
    ++th.samples;
    const int64_t dur = s.end_ns - s.start_ns;
    const int64_t busy = BusyNs(kernels, s.start_ns, s.end_ns);
    lengths.push_back(dur);
    total += static_cast<double>(dur);
    busy_total += static_cast<double>(busy);
    if (static_cast<double>(busy) < kMinBusyFraction * static_cast<double>(dur)) continue;
    ++busy_samples;
    sm.Add(s.sm_active_pct, dur, busy);
    tensor.Add(s.tensor_active_pct, dur, busy);
    dram.Add(s.dram_pct, dur, busy);
    pcie_read.Add(s.pcie_read_bytes_per_s, dur, busy);
    pcie_write.Add(s.pcie_write_bytes_per_s, dur, busy);
    nvl_read.Add(s.nvlink_read_bytes_per_s, dur, busy);
    nvl_write.Add(s.nvlink_write_bytes_per_s, dur, busy);
  }
  if (th.samples == 0) return std::nullopt;
  th.source = std::string(t.info.device_times_made_up ? kThroughputSourceRangeProfiler
                                                      : kThroughputSourcePmSampling);
  th.period_ns = Median(lengths);
  th.kernel_time_share = total > 0 ? busy_total / total : 0;
  th.busy_samples = busy_samples;
  constexpr double kNoCap = 1e300;
  th.sm_active_pct = sm.Rate(100);
  th.tensor_active_pct = tensor.Rate(100);
  th.dram_pct = dram.Rate(100);
  th.pcie_read_bytes_per_s = pcie_read.Rate(kNoCap);
  th.pcie_write_bytes_per_s = pcie_write.Rate(kNoCap);
  th.nvlink_read_bytes_per_s = nvl_read.Rate(kNoCap);
  th.nvlink_write_bytes_per_s = nvl_write.Rate(kNoCap);
  return th;
}

void ThroughputFindings(const GpuMetrics::Throughput& th, std::vector<GpuMetrics::Finding>* out) {
  if (th.busy_samples < kMinBusyThroughputSamples) return;
  const std::string tensor = th.tensor_active_pct >= 0
                                 ? absl::StrFormat(", tensor pipes %.0f%%", th.tensor_active_pct)
                                 : "";
  const std::string sm =
      th.sm_active_pct >= 0 ? absl::StrFormat(", SMs active %.0f%%", th.sm_active_pct) : "";
  // Range-profiler counters are means over kernels, not over time: a short kernel weighs as
  // much as a long one, and the finding says so.
  const std::string basis = th.source == kThroughputSourceRangeProfiler
                                ? absl::StrCat(" (the mean of ", th.busy_samples,
                                               " profiled ranges, each weighing the same)")
                                : "";
  if (th.dram_pct >= kMemoryBoundDramPct &&
      (th.tensor_active_pct < 0 || th.tensor_active_pct < kComputeBoundTensorPct)) {
    out->push_back(
        {"memory_bound",
         absl::StrFormat("busy, but memory-bound: DRAM at %.0f%% of its peak while kernels ran",
                         th.dram_pct) +
             tensor + sm + basis,
         "the kernels move more bytes than they compute on: fuse elementwise operations "
         "(torch.compile), keep tensors in bf16 or fp8 to move fewer bytes, and raise the batch "
         "or sequence size of matmul-heavy layers; faster clocks or fewer idle gaps will not "
         "speed these kernels up"});
    return;
  }
  if (th.sm_active_pct >= 0 && th.sm_active_pct < kUnderusedSmPct) {
    out->push_back(
        {"sm_underused",
         absl::StrFormat("busy, but the SMs were active only %.0f%% of the time kernels ran",
                         th.sm_active_pct) +
             tensor + basis,
         "the kernels are too small to fill the GPU: larger batches, fused kernels, or several "
         "independent streams of work"});
  }
}

// Most memory first (the first is the one findings name when only waits caught it).
void SortOtherProcesses(std::vector<GpuMetrics::OtherProcess>* processes) {
  std::sort(processes->begin(), processes->end(),
            [](const GpuMetrics::OtherProcess& a, const GpuMetrics::OtherProcess& b) {
              return a.memory_bytes != b.memory_bytes ? a.memory_bytes > b.memory_bytes
                                                      : a.pid < b.pid;
            });
}

}  // namespace

std::optional<GpuMetrics> SummariseGpuMetrics(const Timeline& t, const DeviceTimeline& device,
                                              int64_t steady_start_ns, int64_t steady_end_ns) {
  std::vector<const GpuMetricSample*> readings;
  for (const GpuMetricSample& s : t.gpu_metrics) {
    if (s.device == device.device && s.time_ns >= steady_start_ns && s.time_ns < steady_end_ns) {
      readings.push_back(&s);
    }
  }
  const std::vector<std::pair<int64_t, int64_t>> kernels = KernelIntervals(device);
  std::optional<GpuMetrics::Throughput> throughput =
      SummariseThroughput(t, device.device, kernels, steady_start_ns, steady_end_ns);
  const std::string& unavailable = t.info.gpu_throughput_unavailable;
  if (readings.empty() && !throughput && unavailable.empty()) return std::nullopt;
  GpuMetrics m;
  m.throughput = throughput;
  if (!throughput) m.throughput_unavailable = unavailable;
  if (readings.empty()) {
    DeriveGpuFindings(&m);
    return m;
  }
  m.samples = static_cast<int64_t>(readings.size());
  std::vector<int64_t> gaps;
  for (size_t i = 1; i < readings.size(); ++i) {
    gaps.push_back(readings[i]->time_ns - readings[i - 1]->time_ns);
  }
  m.period_ns = Median(gaps);
  std::vector<uint32_t> busy_clocks, busy_power;
  std::map<std::string, int64_t> reasons;
  int64_t slow = 0;
  // The replay counter counts since boot and only grows: its rise from the first reading.
  const uint64_t replays_first = readings.front()->pcie_replays;
  uint64_t replays_last = replays_first;
  std::vector<int64_t> idle_times, busy_times;
  for (const GpuMetricSample* s : readings) {
    m.sm_clock_max_mhz = std::max(m.sm_clock_max_mhz, s->sm_clock_max_mhz);
    m.power_limit_mw = std::max(m.power_limit_mw, s->power_limit_mw);
    m.temperature_max_c = std::max(m.temperature_max_c, s->temperature_c);
    m.memory_used_max_bytes = std::max(m.memory_used_max_bytes, s->memory_used_bytes);
    m.memory_total_bytes = std::max(m.memory_total_bytes, s->memory_total_bytes);
    m.pcie_generation_max = std::max(m.pcie_generation_max, s->pcie_generation_max);
    m.pcie_width_max = std::max(m.pcie_width_max, s->pcie_width_max);
    replays_last = std::max(replays_last, s->pcie_replays);
    if (!Inside(kernels, s->time_ns)) {
      idle_times.push_back(s->time_ns);
      continue;
    }
    ++m.busy_samples;
    busy_times.push_back(s->time_ns);
    m.pcie_generation = std::max(m.pcie_generation, s->pcie_generation);
    m.pcie_width = std::max(m.pcie_width, s->pcie_width);
    if (s->sm_clock_mhz > 0) busy_clocks.push_back(s->sm_clock_mhz);
    if (s->power_mw > 0) busy_power.push_back(s->power_mw);
    if (s->sm_clock_mhz > 0 && s->sm_clock_max_mhz > 0 &&
        s->sm_clock_mhz < kSlowClockRatio * s->sm_clock_max_mhz) {
      ++slow;
      ++reasons[s->has_clock_events ? ReasonOf(s->clock_events) : ""];
    }
  }
  m.idle_samples = static_cast<int64_t>(idle_times.size());
  m.sm_clock_median_mhz = Median(busy_clocks);
  m.power_median_mw = Median(busy_power);
  m.pcie_replays = replays_last - replays_first;
  if (!busy_clocks.empty()) {
    m.slow_clock_share = static_cast<double>(slow) / static_cast<double>(busy_clocks.size());
  }
  int64_t most = 0;
  for (const auto& [reason, n] : reasons) {
    if (n > most) {
      most = n;
      m.slow_clock_reason = reason;
    }
  }

  // Other processes: the idle and busy readings near which NVML saw one of them run kernels
  // (its samples are its own, at the driver's rate: within half a reading period).
  const int64_t near = std::max<int64_t>(m.period_ns / 2, 1);
  for (const GpuProcessSeen& p : t.gpu_processes) {
    if (p.device != device.device) continue;
    GpuMetrics::OtherProcess o;
    o.pid = p.pid;
    o.memory_bytes = p.memory_bytes;
    auto near_one = [&](int64_t at) {
      auto it = std::lower_bound(p.busy_sample_ns.begin(), p.busy_sample_ns.end(), at - near);
      return it != p.busy_sample_ns.end() && *it <= at + near;
    };
    for (int64_t idle : idle_times) o.idle_samples_busy += near_one(idle) ? 1 : 0;
    for (int64_t busy : busy_times) o.busy_samples_busy += near_one(busy) ? 1 : 0;
    m.other_processes.push_back(o);
  }
  SortOtherProcesses(&m.other_processes);

  DeriveGpuFindings(&m);
  return m;
}

void DeriveGpuFindings(GpuMetrics* m) {
  m->findings.clear();
  if (m->throughput) ThroughputFindings(*m->throughput, &m->findings);
  if (m->busy_samples >= kMinBusySamples && m->slow_clock_share >= kMinSlowShare) {
    m->findings.push_back(
        {"clocks",
         absl::StrCat(
             "busy, but at ", Ghz(m->sm_clock_median_mhz), " of ", Ghz(m->sm_clock_max_mhz),
             " GHz (median) with the SM clock under 90% of its maximum in ",
             Pct(m->slow_clock_share), " of the busy readings (", ReasonWords(m->slow_clock_reason),
             ")",
             m->power_limit_mw > 0 && m->power_median_mw > 0
                 ? absl::StrFormat("; power %.0f of %.0f W", m->power_median_mw / 1000.0,
                                   m->power_limit_mw / 1000.0)
                 : "",
             m->temperature_max_c > 0 ? absl::StrCat(", up to ", m->temperature_max_c, " C") : ""),
         FixForSlowClocks(m->slow_clock_reason)});
  }
  if (m->busy_samples > 0 && m->pcie_generation > 0 && m->pcie_width > 0 &&
      (m->pcie_generation < m->pcie_generation_max || m->pcie_width < m->pcie_width_max)) {
    m->findings.push_back(
        {"pcie_link",
         absl::StrCat("PCIe link at Gen", m->pcie_generation, " x", m->pcie_width, " of Gen",
                      m->pcie_generation_max, " x", m->pcie_width_max, " while busy"),
         "host-device copies run slower on it: check the slot (one wired for "
         "all lanes), the riser or cable, and the BIOS's PCIe settings"});
  }
  if (m->pcie_replays > 0) {
    m->findings.push_back({"pcie_replays",
                           absl::StrCat(m->pcie_replays, " PCIe replays during the collection"),
                           "the link retransmits: reseat the card, check the slot and the cable"});
  }
  for (const GpuMetrics::OtherProcess& o : m->other_processes) {
    // While this job idled, and while its kernels ran: contexts take turns on a GPU, so a kernel
    // that "ran" beside another process's also waited for that process's turns.
    std::vector<std::string> when;
    if (o.idle_samples_busy > 0 && m->idle_samples > 0) {
      when.push_back(absl::StrCat(
          Pct(static_cast<double>(o.idle_samples_busy) / static_cast<double>(m->idle_samples)),
          " of this job's idle readings"));
    }
    if (o.busy_samples_busy > 0 && m->busy_samples > 0) {
      when.push_back(absl::StrCat(
          Pct(static_cast<double>(o.busy_samples_busy) / static_cast<double>(m->busy_samples)),
          " of its busy readings (the GPU takes turns between processes: this job's kernels "
          "took longer by the other's turns)"));
    }
    if (when.empty()) continue;
    m->findings.push_back(
        {"other_process",
         absl::StrCat("another process (pid ", o.pid, ", ", Gib(o.memory_bytes),
                      ") ran kernels on this GPU during at least ", absl::StrJoin(when, " and ")),
         std::string(kOtherProcessFix)});
  }
}

namespace {

// The mean of `a` over `wa` readings and `b` over `wb`; a negative figure was not measured and
// leaves the other's (the sum's where neither has readings).
double MeanOf(double a, double wa, double b, double wb) {
  if (a < 0) return b;
  if (b < 0 || wa + wb <= 0) return a;
  return (a * wa + b * wb) / (wa + wb);
}

// MeanOf for figures whose 0 means "no reading" (clocks, power, periods), rounded.
template <typename T>
T PositiveMeanOf(T a, int64_t wa, T b, int64_t wb) {
  const double mean = MeanOf(a > 0 ? static_cast<double>(a) : -1, static_cast<double>(wa),
                             b > 0 ? static_cast<double>(b) : -1, static_cast<double>(wb));
  return mean > 0 ? static_cast<T>(std::llround(mean)) : T{};
}

// The rates while busy are means over the busy samples; the share of kernel time over all.
void AddThroughput(const GpuThroughput& w, GpuThroughput* s) {
  const auto busy_s = static_cast<double>(s->busy_samples);
  const auto busy_w = static_cast<double>(w.busy_samples);
  for (auto [into, from] : {std::pair{&s->sm_active_pct, w.sm_active_pct},
                            {&s->tensor_active_pct, w.tensor_active_pct},
                            {&s->dram_pct, w.dram_pct},
                            {&s->pcie_read_bytes_per_s, w.pcie_read_bytes_per_s},
                            {&s->pcie_write_bytes_per_s, w.pcie_write_bytes_per_s},
                            {&s->nvlink_read_bytes_per_s, w.nvlink_read_bytes_per_s},
                            {&s->nvlink_write_bytes_per_s, w.nvlink_write_bytes_per_s}}) {
    *into = MeanOf(*into, busy_s, from, busy_w);
  }
  s->kernel_time_share = MeanOf(s->kernel_time_share, static_cast<double>(s->samples),
                                w.kernel_time_share, static_cast<double>(w.samples));
  s->period_ns = PositiveMeanOf(s->period_ns, s->samples, w.period_ns, w.samples);
  if (w.samples > s->samples) s->source = w.source;
  s->samples += w.samples;
  s->busy_samples += w.busy_samples;
}

}  // namespace

void AddGpuMetrics(const GpuMetrics& window, GpuMetrics* sum) {
  const GpuMetrics& w = window;
  GpuMetrics& s = *sum;
  // The reason of the side on which more busy readings ran slow (the windows' counts per reason
  // are not kept: the merged reason is the heavier side's most frequent one).
  if (w.slow_clock_share * static_cast<double>(w.busy_samples) >
      s.slow_clock_share * static_cast<double>(s.busy_samples)) {
    s.slow_clock_reason = w.slow_clock_reason;
  }
  // Over the busy readings, where clocks were read (a median of 0: none were): the share of slow
  // ones, and the medians, whose merge is the busy-readings-weighted mean of the windows'.
  const auto busy_s = static_cast<double>(s.busy_samples);
  const auto busy_w = static_cast<double>(w.busy_samples);
  s.slow_clock_share =
      std::max(0.0, MeanOf(s.sm_clock_median_mhz > 0 ? s.slow_clock_share : -1, busy_s,
                           w.sm_clock_median_mhz > 0 ? w.slow_clock_share : -1, busy_w));
  s.sm_clock_median_mhz =
      PositiveMeanOf(s.sm_clock_median_mhz, s.busy_samples, w.sm_clock_median_mhz, w.busy_samples);
  s.power_median_mw =
      PositiveMeanOf(s.power_median_mw, s.busy_samples, w.power_median_mw, w.busy_samples);
  s.period_ns = PositiveMeanOf(s.period_ns, s.samples, w.period_ns, w.samples);
  s.samples += w.samples;
  s.busy_samples += w.busy_samples;
  s.idle_samples += w.idle_samples;
  s.sm_clock_max_mhz = std::max(s.sm_clock_max_mhz, w.sm_clock_max_mhz);
  s.power_limit_mw = std::max(s.power_limit_mw, w.power_limit_mw);
  s.temperature_max_c = std::max(s.temperature_max_c, w.temperature_max_c);
  s.memory_used_max_bytes = std::max(s.memory_used_max_bytes, w.memory_used_max_bytes);
  s.memory_total_bytes = std::max(s.memory_total_bytes, w.memory_total_bytes);
  // A window's link is its widest while busy (at rest a link slows down): so is the merge's.
  s.pcie_generation = std::max(s.pcie_generation, w.pcie_generation);
  s.pcie_width = std::max(s.pcie_width, w.pcie_width);
  s.pcie_generation_max = std::max(s.pcie_generation_max, w.pcie_generation_max);
  s.pcie_width_max = std::max(s.pcie_width_max, w.pcie_width_max);
  s.pcie_replays += w.pcie_replays;  // during the windows (between them, unseen)
  for (const GpuMetrics::OtherProcess& o : w.other_processes) {
    auto same = std::find_if(s.other_processes.begin(), s.other_processes.end(),
                             [&](const GpuMetrics::OtherProcess& x) { return x.pid == o.pid; });
    if (same == s.other_processes.end()) {
      s.other_processes.push_back(o);
      continue;
    }
    same->memory_bytes = std::max(same->memory_bytes, o.memory_bytes);
    same->idle_samples_busy += o.idle_samples_busy;
    same->busy_samples_busy += o.busy_samples_busy;
  }
  SortOtherProcesses(&s.other_processes);
  if (w.throughput && s.throughput) {
    AddThroughput(*w.throughput, &*s.throughput);
  } else if (w.throughput) {
    s.throughput = w.throughput;
  }
  // Why there are no PM samples: said only while there are none, as in one window's figures.
  if (s.throughput_unavailable.empty()) s.throughput_unavailable = w.throughput_unavailable;
  if (s.throughput) s.throughput_unavailable.clear();
  DeriveGpuFindings(sum);
}

void NoteWaitBehindOtherProcesses(const DeviceReport& device, GpuMetrics* m) {
  const int64_t waited = device.idle[Subcause::kOtherProcess];
  if (waited <= 0 || device.idle_ns <= 0) return;
  const std::string note =
      absl::StrCat("this job's queued work waited behind other processes for ",
                   absl::StrFormat("%.1f ms", static_cast<double>(waited) / 1e6), ", ",
                   Pct(static_cast<double>(waited) / static_cast<double>(device.idle_ns)),
                   " of its idle time (", QualifiedSubcauseName(Subcause::kOtherProcess), ")");
  for (GpuMetrics::Finding& f : m->findings) {
    if (f.kind != "other_process") continue;
    absl::StrAppend(&f.text, "; ", note);
    return;  // once, on the first (the one with most memory)
  }
  // No idle reading caught one running: the waits are the evidence.
  if (m->other_processes.empty()) return;
  const GpuMetrics::OtherProcess& o = m->other_processes.front();
  m->findings.push_back({"other_process",
                         absl::StrCat("another process (pid ", o.pid, ", ", Gib(o.memory_bytes),
                                      ") ran kernels on this GPU; ", note),
                         std::string(kOtherProcessFix)});
}

}  // namespace gpuidle::internal
