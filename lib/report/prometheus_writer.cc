#include "report/prometheus_writer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/text_safety.h"
#include "gpuidle/report.h"

namespace gpuidle::internal {
namespace {

// The figures of one series key (rank, device). Devices that share a key (reports merged
// without ranks) are summed: a family may not hold a series twice.
struct DeviceFigures {
  std::string rank;  // the label's value, "" for none
  int device = 0;
  int64_t traced_ns = 0;
  int64_t busy_ns = 0;
  IdleBreakdown idle;
  int64_t steady_one_off_ns = 0;
  int64_t comm_ns = 0;
  int64_t exposed_comm_ns = 0;
  std::optional<int64_t> comm_wait_ns;
  bool comm_wait_known = true;
  int64_t steps = 0;
  int64_t kernels = 0;
  int64_t memcpys = 0;
  int64_t memsets = 0;
  // Serving: the steady state's time with a request in flight, the busy time within it, and the
  // idle time with none (one-off no_demand); demand_ns is unset where no device had requests.
  std::optional<int64_t> demand_ns;
  int64_t demand_busy_ns = 0;
  int64_t no_demand_ns = 0;
  // NVML's and PM sampling's figures (a live capture's); of the first device of the key that has
  // them, as readings do not add up.
  const GpuMetrics* gpu = nullptr;
};

// Devices with a rank first, by rank, then those without; then by device number.
using DeviceKey = std::tuple<bool, int, int>;

std::vector<DeviceFigures> FiguresByDevice(const Report& report, const MetricsLabels& labels) {
  std::map<DeviceKey, DeviceFigures> by_key;
  for (const DeviceReport& d : report.devices) {
    DeviceFigures& f = by_key[DeviceKey(!d.rank.has_value(), d.rank.value_or(0), d.device)];
    f.rank = d.rank ? absl::StrCat(*d.rank) : labels.rank;
    f.device = d.device;
    // The steady state's span, as the sum of its parts: for an aggregate of windows it is the
    // time traced, which the window bounds of an aggregate are not.
    f.traced_ns += d.busy_ns + d.idle_ns + d.SteadyOneOffNs();
    f.busy_ns += d.busy_ns;
    f.idle += d.idle;
    f.steady_one_off_ns += d.SteadyOneOffNs();
    f.comm_ns += d.comm_ns;
    f.exposed_comm_ns += d.exposed_comm_ns;
    if (d.comm_wait_ns) {
      f.comm_wait_ns = f.comm_wait_ns.value_or(0) + *d.comm_wait_ns;
    } else {
      f.comm_wait_known = false;
    }
    f.steps += d.step_count;
    f.kernels += d.kernel_count;
    f.memcpys += d.memcpy_count;
    f.memsets += d.memset_count;
    if (d.demand_ns) {
      f.demand_ns = f.demand_ns.value_or(0) + *d.demand_ns;
      f.demand_busy_ns += d.demand_busy_ns;
    }
    for (const OneOffTime& o : d.one_off) {
      if (o.phase == Phase::kSteady && o.kind == OneOffKind::kNoDemand) f.no_demand_ns += o.ns;
    }
    if (f.gpu == nullptr && d.gpu_metrics) f.gpu = &*d.gpu_metrics;
  }
  std::vector<DeviceFigures> figures;
  figures.reserve(by_key.size());
  for (auto& [key, f] : by_key) {
    if (!f.comm_wait_known) f.comm_wait_ns.reset();
    figures.push_back(std::move(f));
  }
  return figures;
}

// Nanoseconds as seconds, exactly (no rounding through a double): "12.5", "0.000001".
std::string Seconds(int64_t ns) {
  if (ns <= 0) return "0";  // a counter is never negative
  std::string s = absl::StrCat(ns / 1'000'000'000);
  const int64_t fraction = ns % 1'000'000'000;
  if (fraction == 0) return s;
  std::string digits = absl::StrCat(fraction);
  digits.insert(0, 9 - digits.size(), '0');
  digits.erase(digits.find_last_not_of('0') + 1);
  return absl::StrCat(s, ".", digits);
}

std::string Count(int64_t n) { return absl::StrCat(std::max<int64_t>(n, 0)); }

// The shortest text that reads back as v; non-finite values never reach here.
std::string Ratio(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return ec == std::errc() ? std::string(buf, end) : "0";
}

// HELP text: backslash and newline escaped (the format's rule for HELP).
std::string EscapeHelp(absl::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

using Label = std::pair<absl::string_view, std::string>;

class Exposition {
 public:
  explicit Exposition(const MetricsLabels& labels) {
    // The process's own labels come first in every series; the rank is the series' own.
    if (!labels.host.empty()) process_labels_.emplace_back("host", labels.host);
    if (!labels.pid.empty()) process_labels_.emplace_back("pid", labels.pid);
    process_rank_ = labels.rank;
  }

  void Family(absl::string_view name, absl::string_view type, absl::string_view help) {
    absl::StrAppend(&out_, "# HELP ", name, " ", EscapeHelp(help), "\n# TYPE ", name, " ", type,
                    "\n");
    name_ = std::string(name);
  }

  // A sample of the current family; rank "" adds no rank label.
  void Sample(absl::string_view rank, const std::vector<Label>& labels, absl::string_view value) {
    out_ += name_;
    bool first = true;
    auto add = [&](absl::string_view label, absl::string_view v) {
      if (v.empty()) return;
      absl::StrAppend(&out_, first ? "{" : ",", label, "=\"", EscapePrometheusLabelValue(v), "\"");
      first = false;
    };
    for (const Label& l : process_labels_) add(l.first, l.second);
    add("rank", rank);
    for (const Label& l : labels) add(l.first, l.second);
    if (!first) out_ += "}";
    absl::StrAppend(&out_, " ", value, "\n");
  }

  // A sample of a report-wide series (the process's rank).
  void ProcessSample(absl::string_view value) { Sample(process_rank_, {}, value); }
  const std::string& process_rank() const { return process_rank_; }

  // A counter or gauge of every device, value(f) as text.
  template <typename Value>
  void PerDevice(const std::vector<DeviceFigures>& devices, absl::string_view name,
                 absl::string_view type, absl::string_view help, Value value) {
    Family(name, type, help);
    for (const DeviceFigures& f : devices) {
      Sample(f.rank, {{"gpu", absl::StrCat(f.device)}}, value(f));
    }
  }

  std::string Take() { return std::move(out_); }

 private:
  std::vector<Label> process_labels_;
  std::string process_rank_;
  std::string name_;
  std::string out_;
};

// The devices' readings as gauges (docs/METRICS.md, "GPU readings"), in base units (hertz, watts,
// ratios); each family only where some device has the figure.
void GpuGauges(const std::vector<DeviceFigures>& devices, Exposition& e) {
  std::vector<DeviceFigures> nvml, pm;
  for (const DeviceFigures& f : devices) {
    if (f.gpu != nullptr && f.gpu->samples > 0) nvml.push_back(f);
    if (f.gpu != nullptr && f.gpu->throughput) pm.push_back(f);
  }
  const auto gauge = [&](const std::vector<DeviceFigures>& of, absl::string_view name,
                         absl::string_view help, auto value) {
    if (!of.empty()) e.PerDevice(of, name, "gauge", help, value);
  };
  gauge(nvml, "gpuidle_gpu_sm_clock_median_hertz",
        "Median SM clock while the GPU ran kernels in the steady state, in hertz (NVML).",
        [](const DeviceFigures& f) {
          return Count(int64_t{f.gpu->sm_clock_median_mhz} * 1'000'000);
        });
  gauge(nvml, "gpuidle_gpu_sm_clock_max_hertz", "Maximum SM clock of the GPU, in hertz (NVML).",
        [](const DeviceFigures& f) { return Count(int64_t{f.gpu->sm_clock_max_mhz} * 1'000'000); });
  gauge(nvml, "gpuidle_gpu_slow_clock_ratio",
        "Share of the busy readings with the SM clock under 90% of its maximum (0 to 1).",
        [](const DeviceFigures& f) { return Ratio(f.gpu->slow_clock_share); });
  gauge(nvml, "gpuidle_gpu_power_median_watts",
        "Median power draw while the GPU ran kernels in the steady state, in watts (NVML).",
        [](const DeviceFigures& f) { return Ratio(f.gpu->power_median_mw / 1000.0); });
  gauge(nvml, "gpuidle_gpu_power_limit_watts", "Enforced power limit of the GPU, in watts (NVML).",
        [](const DeviceFigures& f) { return Ratio(f.gpu->power_limit_mw / 1000.0); });
  gauge(nvml, "gpuidle_gpu_temperature_max_celsius",
        "Highest GPU temperature read in the steady state, in degrees Celsius (NVML).",
        [](const DeviceFigures& f) { return Count(f.gpu->temperature_max_c); });
  gauge(nvml, "gpuidle_gpu_pcie_generation",
        "PCIe link generation while busy (the link slows down at rest; 0: not read).",
        [](const DeviceFigures& f) { return Count(f.gpu->pcie_generation); });
  gauge(nvml, "gpuidle_gpu_pcie_width", "PCIe link width (lanes) while busy (0: not read).",
        [](const DeviceFigures& f) { return Count(f.gpu->pcie_width); });
  gauge(nvml, "gpuidle_gpu_other_processes",
        "Other processes NVML saw on the GPU during the collection.", [](const DeviceFigures& f) {
          return Count(static_cast<int64_t>(f.gpu->other_processes.size()));
        });
  // PM sampling: a figure not measured (negative) is left out, not written as 0.
  for (const auto& [name, member, help] :
       {std::tuple{"gpuidle_gpu_sm_active_ratio", &GpuMetrics::Throughput::sm_active_pct,
                   "Share of cycles with work resident on the SMs while busy (0 to 1; CUPTI PM "
                   "sampling)."},
        std::tuple{"gpuidle_gpu_tensor_active_ratio", &GpuMetrics::Throughput::tensor_active_pct,
                   "Tensor pipes' activity while busy, share of their peak (0 to 1; CUPTI PM "
                   "sampling)."},
        std::tuple{"gpuidle_gpu_dram_ratio", &GpuMetrics::Throughput::dram_pct,
                   "DRAM throughput while busy, share of its peak (0 to 1; CUPTI PM sampling)."}}) {
    const auto figure = member;  // a variable: lambdas cannot capture a binding in C++17
    std::vector<DeviceFigures> measured;
    for (const DeviceFigures& f : pm) {
      if ((*f.gpu->throughput).*figure >= 0) measured.push_back(f);
    }
    gauge(measured, name, help,
          [figure](const DeviceFigures& f) { return Ratio((*f.gpu->throughput).*figure / 100.0); });
  }
}

// A serving process's figures (docs/METRICS.md, "Serving"): the report's requests (rate, latency
// percentiles by part, requests in flight) and each device's busy share while there was demand
// and its idle time without any. Only for a report with requests.
void ServingGauges(const Report& report, const std::vector<DeviceFigures>& devices, Exposition& e) {
  if (!report.serving) return;
  const Serving& s = *report.serving;
  e.Family("gpuidle_serving_requests_total", "counter",
           "Requests the program marked that were in flight during the steady state: those the "
           "serving figures describe.");
  e.ProcessSample(Count(s.requests));
  e.Family("gpuidle_serving_requests_per_second", "gauge",
           "Requests over the steady state's length, per second.");
  e.ProcessSample(Ratio(std::isfinite(s.requests_per_s) ? s.requests_per_s : 0.0));
  // Queue and run only where the start of work of some request is known; else they say nothing.
  if (s.requests > 0) {
    e.Family("gpuidle_serving_latency_seconds", "gauge",
             "Request latency percentiles, in seconds: part total is arrival to end, queue "
             "arrival to the start of work, run the start of work to the end (of the requests "
             "whose start of work is known).");
  }
  const std::tuple<absl::string_view, const Serving::Percentiles*, bool> parts[] = {
      {"total", &s.latency, s.requests > 0},
      {"queue", &s.queue, s.run_known > 0},
      {"run", &s.run, s.run_known > 0}};
  for (const auto& [part, p, known] : parts) {
    if (!known) continue;
    for (const auto& [quantile, ns] :
         {std::pair{"0.5", p->p50_ns}, std::pair{"0.9", p->p90_ns}, std::pair{"0.99", p->p99_ns}}) {
      e.Sample(e.process_rank(), {{"quantile", quantile}, {"part", std::string(part)}},
               Seconds(ns));
    }
  }
  e.Family("gpuidle_serving_requests_in_flight", "gauge",
           "Requests in flight, time-weighted mean over the steady state.");
  e.ProcessSample(Ratio(std::isfinite(s.in_flight_mean) ? s.in_flight_mean : 0.0));
  e.Family("gpuidle_serving_requests_in_flight_max", "gauge",
           "Most requests in flight at once during the steady state.");
  e.ProcessSample(Count(s.in_flight_max));
  if (s.batch_mean) {
    e.Family("gpuidle_serving_batch_size_mean", "gauge",
             "Requests running per steady-state step, mean (a batching server's batch).");
    e.ProcessSample(Ratio(std::isfinite(*s.batch_mean) ? *s.batch_mean : 0.0));
  }
  std::vector<DeviceFigures> with_demand;
  for (const DeviceFigures& f : devices) {
    if (f.demand_ns) with_demand.push_back(f);
  }
  if (with_demand.empty()) return;
  e.PerDevice(with_demand, "gpuidle_gpu_busy_ratio_while_demand", "gauge",
              "Share of the steady state's time with a request in flight that the GPU executed "
              "kernels (0 to 1; 0 with no such time).",
              [](const DeviceFigures& f) {
                return *f.demand_ns > 0 ? Ratio(std::clamp(static_cast<double>(f.demand_busy_ns) /
                                                               static_cast<double>(*f.demand_ns),
                                                           0.0, 1.0))
                                        : std::string("0");
              });
  e.PerDevice(with_demand, "gpuidle_no_demand_seconds_total", "counter",
              "Steady-state idle time with no request in flight (no demand: not lost, part of "
              "gpuidle_steady_one_off_seconds_total), in seconds.",
              [](const DeviceFigures& f) { return Seconds(f.no_demand_ns); });
}

}  // namespace

std::string EscapePrometheusLabelValue(absl::string_view v) {
  const std::string valid = ToValidUtf8(v);
  std::string out;
  out.reserve(valid.size());
  for (char c : valid) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatPrometheusMetrics(const Report& report, const MetricsLabels& labels) {
  const std::vector<DeviceFigures> devices = FiguresByDevice(report, labels);
  Exposition e(labels);

  e.PerDevice(devices, "gpuidle_traced_seconds_total", "counter",
              "Steady-state time traced on the GPU (busy + idle + one-off idle), in seconds.",
              [](const DeviceFigures& f) { return Seconds(f.traced_ns); });
  e.PerDevice(devices, "gpuidle_busy_seconds_total", "counter",
              "Steady-state time the GPU executed at least one kernel, in seconds.",
              [](const DeviceFigures& f) { return Seconds(f.busy_ns); });

  e.Family("gpuidle_idle_seconds_total", "counter",
           "Steady-state idle time of the GPU by cause and subcause, in seconds.");
  for (const DeviceFigures& f : devices) {
    for (int s = 0; s < kNumSubcauses; ++s) {
      const Subcause subcause = static_cast<Subcause>(s);
      e.Sample(f.rank,
               {{"gpu", absl::StrCat(f.device)},
                {"cause", std::string(CauseName(CauseOf(subcause)))},
                {"subcause", std::string(SubcauseName(subcause))}},
               Seconds(f.idle[subcause]));
    }
  }

  e.PerDevice(devices, "gpuidle_steady_one_off_seconds_total", "counter",
              "Idle time inside the steady state spent on one-off work (a re-compilation, a "
              "first call), not in gpuidle_idle_seconds_total, in seconds.",
              [](const DeviceFigures& f) { return Seconds(f.steady_one_off_ns); });
  e.PerDevice(devices, "gpuidle_comm_seconds_total", "counter",
              "Steady-state time NCCL kernels executed, in seconds.",
              [](const DeviceFigures& f) { return Seconds(f.comm_ns); });
  e.PerDevice(devices, "gpuidle_exposed_comm_seconds_total", "counter",
              "Steady-state time NCCL kernels executed while no other kernel did, in seconds.",
              [](const DeviceFigures& f) { return Seconds(f.exposed_comm_ns); });

  std::vector<DeviceFigures> with_comm_wait;
  for (const DeviceFigures& f : devices) {
    if (f.comm_wait_ns) with_comm_wait.push_back(f);
  }
  if (!with_comm_wait.empty()) {
    e.PerDevice(with_comm_wait, "gpuidle_comm_wait_seconds_total", "counter",
                "Part of the NCCL kernels' time spent waiting for peer ranks, in seconds "
                "(only where every rank was traced).",
                [](const DeviceFigures& f) { return Seconds(*f.comm_wait_ns); });
  }

  e.PerDevice(devices, "gpuidle_steps_total", "counter", "Steady-state steps traced.",
              [](const DeviceFigures& f) { return Count(f.steps); });
  e.PerDevice(devices, "gpuidle_kernels_total", "counter", "Kernels traced.",
              [](const DeviceFigures& f) { return Count(f.kernels); });
  e.PerDevice(devices, "gpuidle_memcpys_total", "counter", "Memory copies traced.",
              [](const DeviceFigures& f) { return Count(f.memcpys); });
  e.PerDevice(devices, "gpuidle_memsets_total", "counter", "Memory sets traced.",
              [](const DeviceFigures& f) { return Count(f.memsets); });

  GpuGauges(devices, e);
  ServingGauges(report, devices, e);

  if (report.coverage) {
    const Coverage& c = *report.coverage;
    e.Family("gpuidle_windows_total", "counter", "Windows traced by the sampled collection.");
    e.ProcessSample(Count(c.windows));
    if (c.span_ns > 0) {
      const double ratio =
          static_cast<double>(std::max<int64_t>(c.traced_ns, 0)) / static_cast<double>(c.span_ns);
      e.Family("gpuidle_coverage_ratio", "gauge",
               "Share of the run the sampled collection traced, from the first window's start "
               "to the last one's end (0 to 1).");
      e.ProcessSample(Ratio(std::isfinite(ratio) ? std::clamp(ratio, 0.0, 1.0) : 0.0));
    }
  }
  if (report.dropped_records) {
    e.Family("gpuidle_lost_records_total", "counter",
             "Activity records the capture lost (absent where the source does not say).");
    e.ProcessSample(absl::StrCat(*report.dropped_records));
  }
  e.Family("gpuidle_record_limit_reached", "gauge",
           "1 once the capture reached its record limit (GPUIDLE_MAX_RECORDS) and stopped "
           "collecting, else 0.");
  e.ProcessSample(report.record_limit_reached ? "1" : "0");
  return e.Take();
}

}  // namespace gpuidle::internal
