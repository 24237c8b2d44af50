// The terminal summary: a table a person reads in ten seconds.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/terminal.h"
#include "core/text_safety.h"
#include "core/time_units.h"
#include "gpuidle/report.h"
#include "model/report_names.h"
#include "model/trace_names.h"
#include "report/advice_text.h"
#include "report/phases.h"
#include "report/writer.h"

namespace gpuidle::internal {
namespace {

constexpr size_t kMaxStepsShown = 20;
constexpr size_t kMaxOffendersShown = 8;
constexpr size_t kSiteWidth = 78;
constexpr size_t kMaxStepNameWidth = 22;
constexpr size_t kMinStepNameWidth = 10;
constexpr size_t kDeviceNameWidth = 40;
constexpr size_t kEvidenceWidth = 48;
constexpr size_t kMaxWarningsShown = 5;
constexpr size_t kMaxCollectiveKindsShown = 8;
constexpr size_t kMaxRanksShown = 16;
constexpr size_t kMaxStragglersShown = 3;
constexpr size_t kMaxDevicesNamed = 4;
constexpr size_t kMaxWidth = 100;  // display columns of every line (FitLines makes sure)

// ANSI colours where the caller asks for them (TextOptions::color), in the trace writer's
// palette: reds for data-starved, blues for launch-bound, yellows for sync-bound, magenta for
// waiting for peers (busy, yet no work), grey for no evidence. Only escape codes are added:
// without them the text is the uncoloured text.
class Palette {
 public:
  explicit Palette(bool on) : on_(on) {}
  std::string Bold(absl::string_view s) const { return Sgr("1", s); }
  std::string Warning(absl::string_view s) const { return Sgr("33", s); }
  std::string OfCause(Cause c, absl::string_view s) const {
    switch (c) {
      case Cause::kDataStarved:
        return Sgr("31", s);
      case Cause::kLaunchBound:
        return Sgr("34", s);
      case Cause::kSyncBound:
        return Sgr("33", s);
      case Cause::kUnattributed:
        return Sgr("2", s);
    }
    return std::string(s);
  }
  std::string OfSubcause(Subcause sub, absl::string_view s) const {
    return sub == Subcause::kCommWait ? Waiting(s) : OfCause(CauseOf(sub), s);
  }
  std::string Waiting(absl::string_view s) const { return Sgr("35", s); }

 private:
  std::string Sgr(absl::string_view code, absl::string_view s) const {
    if (!on_ || s.empty()) return std::string(s);
    return absl::StrCat("\x1b[", code, "m", s, "\x1b[0m");
  }
  bool on_;
};

std::string Ms(int64_t ns) { return absl::StrFormat("%.1f", static_cast<double>(ns) / 1e6); }

std::string Pct(int64_t part, int64_t whole) {
  if (whole <= 0) return "-";
  return absl::StrFormat("%.1f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

std::string Duration(int64_t ns) { return FormatDuration(ns); }

// A share (0..1) as a percentage: "0.6%", "12%", with a decimal below 10%.
std::string Share(double share) {
  const double pct = 100 * share;
  return pct < 9.95 ? absl::StrFormat("%.1f%%", pct) : absl::StrFormat("%.0f%%", pct);
}

// Lost time by subcause: the idle time, plus the collectives' wait for peers under
// sync_bound.comm_wait.
IdleBreakdown LostBreakdown(IdleBreakdown idle, const std::optional<int64_t>& comm_wait_ns) {
  idle[Subcause::kCommWait] += comm_wait_ns.value_or(0);
  return idle;
}

// Kernel "void ns::kernel<T>(int, float*)" -> "ns::kernel<T>": the signature says little here.
std::string DisplayName(absl::string_view name) {
  if (absl::StartsWith(name, "void ")) name.remove_prefix(5);
  int depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    if (name[i] == '>') --depth;
    if (name[i] != '(' || depth != 0 || i == 0) continue;
    if (absl::StartsWith(name.substr(i), "(anonymous namespace)")) continue;
    return std::string(name.substr(0, i));
  }
  return std::string(name);
}

// "site -> what" in at most kSiteWidth columns: each part elided in the middle on its own, so
// that the site's file:line and the call or kernel both stay readable.
std::string OffenderLine(const Offender& o) {
  const bool kernel = o.subcause == Subcause::kLaunchOverhead ||
                      o.subcause == Subcause::kKernelGap || o.subcause == Subcause::kUnattributed;
  std::string what = Printable(kernel ? DisplayName(o.what) : o.what);
  if (o.site.empty()) return ElideMiddle(what, kSiteWidth);
  std::string site = Printable(o.site);
  const bool host = o.subcause == Subcause::kHost;
  const size_t joint = host ? 8 : 4;  // " before ", " -> "
  const size_t room = kSiteWidth - joint;
  if (DisplayWidth(site) + DisplayWidth(what) > room) {
    // The site's file name and line come first: its directories give way, then the name of
    // what it waited on (down to kMinWhatWidth), then the site's own middle.
    constexpr size_t kMinWhatWidth = 24;
    site = ElideKeepingFileNames(site, room - std::min(DisplayWidth(what), kMinWhatWidth));
    what = ElideMiddle(what, room - DisplayWidth(site));
  }
  return host ? absl::StrCat(what, " before ", site) : absl::StrCat(site, " -> ", what);
}

std::string DeviceLabel(const std::optional<int>& rank, int device) {
  return rank ? absl::StrCat("rank ", *rank, " GPU ", device) : absl::StrCat("GPU ", device);
}

// Shown for every device with collectives, idle or not: a fully busy GPU may still spend its
// time in exposed communication or waiting for peers.
void Communication(const DeviceReport& d, std::string* out) {
  if (d.comm_ns > 0 || d.comm_wait_ns) {
    absl::StrAppendFormat(
        out, "  communication %s ms, exposed %s ms%s\n", Ms(d.comm_ns), Ms(d.exposed_comm_ns),
        d.comm_wait_ns ? absl::StrCat(", waiting for peers ", Ms(*d.comm_wait_ns), " ms") : "");
  }
}

// "compilation 2.20 s (cuModuleLoadData), CUDA init 310 ms, GPU busy 20.0 ms": the largest
// max_parts parts, with their counts and evidence if notes_too.
std::string PartsLine(const DeviceReport& d, Phase p, size_t max_parts = SIZE_MAX,
                      bool notes_too = true) {
  std::vector<std::string> parts;
  for (const OneOffTime* o : PartsOf(d, p)) {
    if (o->ns <= 0) continue;
    if (parts.size() == max_parts) break;
    std::vector<std::string> notes;
    if (notes_too && o->count > 1) notes.push_back(absl::StrCat(o->count, "x"));
    if (notes_too && !o->evidence.empty()) {
      notes.push_back(ElideKeepingFileNames(Printable(o->evidence), kEvidenceWidth));
    }
    parts.push_back(
        absl::StrCat(OneOffLabel(o->kind, p), " ", Duration(o->ns),
                     notes.empty() ? "" : absl::StrCat(" (", absl::StrJoin(notes, ", "), ")")));
  }
  return absl::StrJoin(parts, ", ");
}

// Whether spans from lo to hi differ enough to say so: by more than 10% and 1 ms.
bool DifferMaterially(int64_t lo, int64_t hi) {
  return hi - lo > std::max<int64_t>(hi / 10, 1'000'000);
}

// Whether the devices' start-ups (wind-downs) differ enough to show each device's.
bool PhasesDiffer(const Report& r, Phase p) {
  if (r.devices.size() < 2) return false;
  int64_t lo = r.devices[0].PhaseNs(p), hi = lo;
  for (const DeviceReport& d : r.devices) {
    lo = std::min(lo, d.PhaseNs(p));
    hi = std::max(hi, d.PhaseNs(p));
  }
  return DifferMaterially(lo, hi);
}

// "start-up 2.61 s (before the first step): compilation 2.20 s (cuModuleLoadData), ..." for the
// device with the longest start-up (likewise the wind-down); nothing when no device has one.
void PhaseHeadline(const Report& r, Phase p, bool has_steps, std::string* out) {
  const DeviceReport* longest = LongestPhase(r, p);
  if (longest == nullptr || longest->PhaseNs(p) <= 0) return;
  const bool start = p == Phase::kStartUp;
  std::string where = start ? (has_steps ? "before the first step" : "before the loop's kernels")
                            : (has_steps ? "after the last step" : "after the last kernel");
  if (PhasesDiffer(r, p)) {
    int64_t shortest = longest->PhaseNs(p);
    for (const DeviceReport& d : r.devices) shortest = std::min(shortest, d.PhaseNs(p));
    absl::StrAppend(&where, "; the longest, on ", DeviceLabel(longest->rank, longest->device),
                    "; the shortest ", Duration(shortest));
  }
  const std::string parts = PartsLine(*longest, p);
  absl::StrAppend(out, start ? "start-up " : "wind-down ", Duration(longest->PhaseNs(p)), " (",
                  where, ")", parts.empty() ? "" : ": ", parts, "\n");
}

// "steady state 10.1 s, 49 steps (ProfilerStep)": the longest steady state of the devices (a
// range when they differ), the steps per device.
void SteadyHeadline(const Report& r, std::string* out) {
  if (r.devices.empty()) return;
  int64_t lo = r.devices[0].PhaseNs(Phase::kSteady), hi = lo;
  size_t fewest = SIZE_MAX, most = 0;
  for (const DeviceReport& d : r.devices) {
    lo = std::min(lo, d.PhaseNs(Phase::kSteady));
    hi = std::max(hi, d.PhaseNs(Phase::kSteady));
    // Report::steps may list fewer rows than the device had steps.
    const size_t listed =
        static_cast<size_t>(std::count_if(r.steps.begin(), r.steps.end(), [&](const StepReport& s) {
          return s.device == d.device && s.rank == d.rank;
        }));
    const size_t n = std::max(listed, static_cast<size_t>(d.step_count));
    fewest = std::min(fewest, n);
    most = std::max(most, n);
  }
  std::string span = Duration(hi);
  if (DifferMaterially(lo, hi)) span = absl::StrCat(Duration(lo), " to ", span);
  std::string steps;
  if (most == 0 && r.step_source.empty()) {
    steps =
        " (no steps found: the steady state runs from the kernels after the start-up to the last "
        "kernel)";
  } else if (most == 0) {  // steps, all of them in the start-up (a warm-up step)
    steps = absl::StrCat(", no steps after the start-up (", Printable(r.step_source), ")");
  } else {
    steps = absl::StrCat(
        ", ", fewest == most ? absl::StrCat(most) : absl::StrCat(fewest, " to ", most),
        most == 1 ? " step" : " steps", fewest == most ? "" : " per GPU",
        r.step_source.empty() ? "" : absl::StrCat(" (", Printable(r.step_source), ")"));
  }
  absl::StrAppend(out, "steady state ", span, steps, "\n");
}

// A serving process: its requests over the steady state (docs/ANALYSIS.md, "Serving").
void ServingLines(const Report& r, std::string* out) {
  if (!r.serving.has_value()) return;
  const Serving& s = *r.serving;
  auto percentiles = [](const Serving::Percentiles& p) {
    return absl::StrCat("p50 ", Duration(p.p50_ns), ", p90 ", Duration(p.p90_ns), ", p99 ",
                        Duration(p.p99_ns));
  };
  absl::StrAppendFormat(out, "serving: %d request%s, %.2f/s; latency %s\n", s.requests,
                        s.requests == 1 ? "" : "s", s.requests_per_s, percentiles(s.latency));
  if (s.run_known > 0) {
    absl::StrAppend(out, "  waiting to be taken up ", percentiles(s.queue), "; running ",
                    percentiles(s.run), " (", s.run_known, " with a known start of work)\n");
  }
  absl::StrAppendFormat(out, "  in flight %.1f on average, %d at most", s.in_flight_mean,
                        s.in_flight_max);
  if (s.batch_mean.has_value())
    absl::StrAppendFormat(out, "; %.1f running per step", *s.batch_mean);
  out->append("\n");
}

// The headline of a device with communication (docs/ANALYSIS.md, "Communication"): compute
// (some other kernel runs), communication (only collectives run; the part of all collective
// time that waited for peers in parentheses), idle; then the lost time, idle plus waiting.
void CommHeadline(const DeviceReport& d, const std::string& label, const Palette& paint,
                  std::string* out) {
  const int64_t steady = d.PhaseNs(Phase::kSteady);
  std::string figures = absl::StrCat("compute ", Pct(d.busy_ns - d.exposed_comm_ns, steady),
                                     "  communication ", Pct(d.exposed_comm_ns, steady));
  if (d.comm_wait_ns) {
    // A wait that overlapped compute is no part of the exposed communication.
    const bool inside = *d.comm_wait_ns <= d.exposed_comm_ns;
    absl::StrAppend(&figures, inside ? " (" : "  ",
                    paint.Waiting(absl::StrCat("waiting for peers ", Pct(*d.comm_wait_ns, steady))),
                    inside ? ")" : "");
  }
  absl::StrAppend(&figures, "  idle ", Pct(d.idle_ns, steady));
  if (DisplayWidth(label) + 2 + DisplayWidth(figures) <= kMaxWidth) {
    absl::StrAppend(out, paint.Bold(label), "  ", figures, "\n");
  } else {
    absl::StrAppend(out, paint.Bold(label), "\n  ", figures, "\n");
  }
  absl::StrAppend(
      out, "  lost ", Pct(d.LostNs(), steady), " of the steady state (", Duration(d.LostNs()),
      " of ", Duration(steady), ")",
      d.comm_wait_ns
          ? absl::StrCat(
                ": ", paint.Waiting(absl::StrCat("waiting for peers ", Duration(*d.comm_wait_ns))),
                ", idle ", Duration(d.idle_ns))
          : ": idle",
      "\n");
}

// Bytes in binary units, three significant digits: "512 B", "1.50 KiB", "20.0 MiB", "1.20 GiB".
std::string Bytes(int64_t b) {
  if (b < 1024) return absl::StrCat(b, " B");
  constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(b) / 1024;
  size_t i = 0;
  while (i + 1 < 5 && v >= 1023.5) {
    v /= 1024;
    ++i;
  }
  const int decimals = v >= 99.95 ? 0 : v >= 9.995 ? 1 : 2;
  return absl::StrFormat("%.*f %s", decimals, v, kUnits[i]);
}

// NVML's readings and PM samples of a device: what they were while it was busy, then what they
// mean.
void GpuMetricsLines(const GpuMetrics& m, std::string* out) {
  std::vector<std::string> parts;
  if (m.sm_clock_max_mhz > 0 && m.sm_clock_median_mhz > 0) {
    parts.push_back(absl::StrFormat("SM clock %.2f of %.2f GHz", m.sm_clock_median_mhz / 1000.0,
                                    m.sm_clock_max_mhz / 1000.0));
  }
  if (m.power_limit_mw > 0 && m.power_median_mw > 0) {
    parts.push_back(absl::StrFormat("power %.0f of %.0f W", m.power_median_mw / 1000.0,
                                    m.power_limit_mw / 1000.0));
  }
  if (m.temperature_max_c > 0) parts.push_back(absl::StrCat("up to ", m.temperature_max_c, " C"));
  if (m.pcie_generation > 0 && m.pcie_width > 0) {
    parts.push_back(absl::StrCat("PCIe Gen", m.pcie_generation, " x", m.pcie_width, " of Gen",
                                 m.pcie_generation_max, " x", m.pcie_width_max));
  }
  if (m.memory_total_bytes > 0) {
    parts.push_back(absl::StrCat("memory ", Bytes(static_cast<int64_t>(m.memory_used_max_bytes)),
                                 " of ", Bytes(static_cast<int64_t>(m.memory_total_bytes))));
  }
  if (!m.other_processes.empty()) {
    parts.push_back(absl::StrCat(m.other_processes.size(), " other process",
                                 m.other_processes.size() == 1 ? "" : "es", " on it"));
  }
  if (m.samples > 0) {
    absl::StrAppend(out, "  GPU metrics (NVML, ", m.samples, " readings, ", m.busy_samples,
                    " while busy)", parts.empty() ? "" : ": ", absl::StrJoin(parts, ", "), "\n");
  }
  if (m.throughput) {
    const GpuMetrics::Throughput& t = *m.throughput;
    std::vector<std::string> rates;
    const auto pct = [&rates](const char* what, double v) {
      if (v >= 0) rates.push_back(absl::StrFormat("%s %.0f%%", what, v));
    };
    pct("SMs active", t.sm_active_pct);
    pct("tensor pipes", t.tensor_active_pct);
    pct("DRAM", t.dram_pct);
    const auto rate = [&rates](const char* what, double read, double write) {
      if (read < 0 && write < 0) return;
      rates.push_back(absl::StrFormat("%s %.1f/%.1f GB/s in/out", what, std::max(read, 0.0) / 1e9,
                                      std::max(write, 0.0) / 1e9));
    };
    rate("PCIe", t.pcie_read_bytes_per_s, t.pcie_write_bytes_per_s);
    rate("NVLink", t.nvlink_read_bytes_per_s, t.nvlink_write_bytes_per_s);
    const std::string basis =
        t.source == kThroughputSourceRangeProfiler
            ? absl::StrCat("CUPTI range profiler, ", t.samples, " ranges, each weighing the same")
            : absl::StrCat("PM sampling, ", t.busy_samples, " of ", t.samples, " samples busy");
    absl::StrAppend(out, "  GPU throughput while busy (", basis, ")", rates.empty() ? "" : ": ",
                    absl::StrJoin(rates, ", "), "\n");
  } else if (!m.throughput_unavailable.empty()) {
    absl::StrAppend(out, "  GPU throughput not sampled: ", Printable(m.throughput_unavailable),
                    "\n");
  }
  for (const GpuMetrics::Finding& f : m.findings) {
    absl::StrAppend(out, "  ", Printable(f.text), ": ", Printable(f.fix), "\n");
  }
}

// The collectives of a device by kind: "0/allreduce  40  326.1  324.0  321.0  1.20 GiB".
void Collectives(const DeviceReport& d, std::string* out) {
  std::vector<const CollectiveStats*> kinds;
  bool waits = false, bytes = false;
  for (const CollectiveStats& c : d.collectives) {
    if (c.count == 0) continue;
    kinds.push_back(&c);
    waits = waits || c.wait_ns.has_value();
    bytes = bytes || c.bytes.has_value();
  }
  if (kinds.empty()) return;
  const auto row = [&](const std::string& kind, const std::string& count, const std::string& ms,
                       const std::string& exposed, const std::string& wait,
                       const std::string& size) {
    std::string line = absl::StrFormat("    %s %7s %10s %11s", Cell(kind, 26), count, ms, exposed);
    if (waits) absl::StrAppendFormat(&line, " %11s", wait);
    if (bytes) absl::StrAppendFormat(&line, " %10s", size);
    absl::StrAppend(out, line, "\n");
  };
  row("collective", "count", "ms", "exposed ms", "waiting ms", "bytes");
  for (size_t i = 0; i < kinds.size() && i < kMaxCollectiveKindsShown; ++i) {
    const CollectiveStats& c = *kinds[i];
    std::string kind = c.op.empty() ? "(unnamed)" : c.op;
    if (!c.group.empty()) kind = absl::StrCat(c.group, "/", kind);
    row(Printable(kind), absl::StrCat(c.count), Ms(c.ns), Ms(c.exposed_ns),
        c.wait_ns ? Ms(*c.wait_ns) : "-", c.bytes ? Bytes(*c.bytes) : "-");
  }
  if (kinds.size() > kMaxCollectiveKindsShown) {
    absl::StrAppend(out, "    and ", kinds.size() - kMaxCollectiveKindsShown,
                    " more kinds (all in --format json)\n");
  }
}

// The line that says a report read from files has no GPU metrics, where a user looks for them:
// once, under the first device, when no device has any (docs/ANALYSIS.md, "GPU metrics"). Not
// for a live run, which says why NVML gave nothing in its warnings, nor under every device of a
// merge of many ranks.
void NoGpuMetricsLine(const Report& r, const DeviceReport& d, std::string* out) {
  if (r.inputs.empty() || r.devices.empty() || &d != &r.devices.front()) return;
  if (r.source != "gpuidle" && r.source != "pytorch-profiler") return;
  for (const DeviceReport& other : r.devices) {
    if (other.gpu_metrics) return;
  }
  absl::StrAppend(out, "  GPU metrics: none in this trace (",
                  r.source == "gpuidle"
                      ? "it was captured without NVML"
                      : "torch.profiler traces carry none, but for profiler_metrics' counters",
                  "; a live gpuidle capture reads NVML)\n");
}

void Device(const Report& r, const DeviceReport& d, const Palette& paint, std::string* out) {
  const int64_t steady = d.PhaseNs(Phase::kSteady);
  const std::string label =
      absl::StrCat(DeviceLabel(d.rank, d.device),
                   d.name.empty() ? "" : "  " + ElideMiddle(Printable(d.name), kDeviceNameWidth));
  if (d.comm_ns > 0) {
    CommHeadline(d, label, paint, out);
  } else {
    absl::StrAppendFormat(out, "%s  busy %s  idle %s of the steady state (%s of %s)\n",
                          paint.Bold(label), Pct(d.busy_ns, steady), Pct(d.idle_ns, steady),
                          Duration(d.idle_ns), Duration(steady));
  }
  if (r.device_times == report_values::kMadeUp) {
    absl::StrAppend(out,
                    "  (times made up by Kineto's range profiler: not the GPU's busy and idle "
                    "time)\n");
  }
  if (d.demand_ns.has_value()) {  // serving: idle with no request in flight is not lost
    absl::StrAppend(out, "  busy ", Pct(d.demand_busy_ns, *d.demand_ns),
                    " while requests were in flight (", Duration(*d.demand_ns), ", ",
                    Pct(*d.demand_ns, steady), " of the steady state)\n");
  }
  if (d.tracer_ns > 0) {
    // The figures above describe the program without gpuidle (Report::tracer_time).
    const std::string per = d.step_count > 0
                                ? absl::StrCat(Duration(d.tracer_ns / d.step_count), "/step")
                                : Duration(d.tracer_ns);
    absl::StrAppend(out, "  gpuidle's own cost, ", per,
                    ", is not counted (the timeline as recorded: --as-recorded)\n");
  }
  // The lost time by cause, each as a share of the steady state (the figure the headline, the
  // advice and the HTML cards use): idle time, and waiting for peers under sync_bound.
  const IdleBreakdown lost = LostBreakdown(d.idle, d.comm_wait_ns);
  if (lost.TotalNs() > 0) {
    absl::StrAppendFormat(out, "  %-14s %10s %10s   %s\n", "lost to", "ms", "of steady",
                          "subcauses (ms)");
    std::vector<Cause> causes;
    for (int c = 0; c < kNumCauses; ++c) causes.push_back(static_cast<Cause>(c));
    std::stable_sort(causes.begin(), causes.end(),
                     [&](Cause a, Cause b) { return lost.CauseNs(a) > lost.CauseNs(b); });
    for (Cause c : causes) {
      const int64_t ns = lost.CauseNs(c);
      if (ns == 0) continue;
      std::vector<std::string> parts;
      for (int s = 0; s < kNumSubcauses; ++s) {
        const auto sub = static_cast<Subcause>(s);
        if (CauseOf(sub) == c && lost[sub] > 0 && sub != Subcause::kUnattributed) {
          parts.push_back(
              paint.OfSubcause(sub, absl::StrCat(SubcauseName(sub), " ", Ms(lost[sub]))));
        }
      }
      absl::StrAppendFormat(
          out, "  %s %10s %10s   %s\n", PadRight(paint.OfCause(c, CauseName(c)), 14), Ms(ns),
          Pct(ns, steady),
          c == Cause::kUnattributed ? "no evidence in the trace" : absl::StrJoin(parts, ", "));
    }
  }
  Communication(d, out);
  if (d.gpu_metrics) GpuMetricsLines(*d.gpu_metrics, out);
  NoGpuMetricsLine(r, d, out);
  Collectives(d, out);
  const std::string steady_parts = PartsLine(d, Phase::kSteady);
  if (!steady_parts.empty()) {
    absl::StrAppend(out, "  one-off in the steady state: ", steady_parts, "\n");
  }
  // Each device's own start-up and wind-down, where they differ from device to device: the
  // span and its two largest parts (the headline has the longest in full).
  for (Phase p : {Phase::kStartUp, Phase::kWindDown}) {
    if (!PhasesDiffer(r, p) || d.PhaseNs(p) <= 0) continue;
    const std::string parts = PartsLine(d, p, 2, false);
    absl::StrAppend(out, p == Phase::kStartUp ? "  start-up " : "  wind-down ",
                    Duration(d.PhaseNs(p)), parts.empty() ? "" : absl::StrCat(" (", parts, ")"),
                    "\n");
  }
}

// Periodic work, each activity once however its idle time splits between causes.
void PeriodicWorkLines(const Report& r, std::string* out) {
  if (r.periodic_work.empty()) return;
  int64_t steady_ns = 0, steps = 0;
  for (const DeviceReport& d : r.devices) {
    steady_ns += d.steady_end_ns - d.steady_start_ns;
    steps = std::max(steps, d.step_count);
  }
  absl::StrAppend(out, "periodic work in the steady state (each once, whatever its causes):\n");
  for (const PeriodicWork& w : r.periodic_work) {
    std::vector<std::string> parts;
    for (int s = 0; s < kNumSubcauses; ++s) {
      const auto sub = static_cast<Subcause>(s);
      if (w.idle[sub] > 0) parts.push_back(absl::StrCat(SubcauseName(sub), " ", Ms(w.idle[sub])));
    }
    absl::StrAppend(out, "  ", w.activity, " at ", Printable(w.site), ": ", w.occurrences, "x, ",
                    Duration(w.span_ns / std::max<int64_t>(w.occurrences, 1)), " each; GPU idle ",
                    Duration(w.idle_ns), " (", Pct(w.idle_ns, steady_ns), " of the steady state",
                    steps > 0 ? absl::StrCat(", ", Duration(w.idle_ns / steps), "/step") : "",
                    "): ", absl::StrJoin(parts, ", "), " ms\n");
    absl::StrAppend(out, "    fix: ", w.fix, "\n");
  }
}

void Warnings(const Report& r, const Palette& paint, std::string* out) {
  if (r.warnings.empty()) return;
  absl::StrAppend(out, paint.Warning(r.warnings.size() == 1 ? "warning:" : "warnings:"),
                  r.warnings.size() == 1 ? " " : "\n");
  if (r.warnings.size() == 1) {
    absl::StrAppend(out, Printable(r.warnings[0]), "\n");
    return;
  }
  for (size_t i = 0; i < r.warnings.size() && i < kMaxWarningsShown; ++i) {
    absl::StrAppend(out, "  ", Printable(r.warnings[i]), "\n");
  }
  if (r.warnings.size() > kMaxWarningsShown) {
    absl::StrAppend(out, "  and ", r.warnings.size() - kMaxWarningsShown,
                    " more (all in --format json)\n");
  }
}

IdleBreakdown StepLost(const StepReport& s) { return LostBreakdown(s.idle, s.comm_wait_ns); }

// "1.41/1.98 GHz 655/700 W SM 82% tensor 40% DRAM 55%": a step's readings while busy, under its
// row; "" without any.
std::string StepGpuLine(const StepReport& s) {
  if (!s.gpu) return "";
  const StepReport::Gpu& g = *s.gpu;
  std::vector<std::string> parts;
  if (g.sm_clock_median_mhz > 0) {
    parts.push_back(absl::StrFormat("%.2f/%.2f GHz", g.sm_clock_median_mhz / 1000.0,
                                    g.sm_clock_max_mhz / 1000.0));
  }
  if (g.power_median_mw > 0) {
    parts.push_back(
        absl::StrFormat("%.0f/%.0f W", g.power_median_mw / 1000.0, g.power_limit_mw / 1000.0));
  }
  for (const auto& [label, pct] :
       {std::pair{"SM", g.sm_active_pct}, std::pair{"tensor", g.tensor_active_pct},
        std::pair{"DRAM", g.dram_pct}}) {
    if (pct >= 0) parts.push_back(absl::StrFormat("%s %.0f%%", label, pct));
  }
  return parts.empty() ? "" : absl::StrJoin(parts, "  ");
}

// The step names' column, one width for every device's table (so that the ranks' names are cut
// alike): what the other columns leave of kMaxWidth (kMaxStepNameWidth at most,
// kMinStepNameWidth at least), the widest dominant subcause and the wait column deciding.
size_t StepNameWidth(const Report& r) {
  size_t dominant_width = std::string("dominant").size();
  bool wait_column = false;
  for (const StepReport& s : r.steps) {
    const IdleBreakdown lost = StepLost(s);
    if (lost.TotalNs() > 0) {
      dominant_width = std::max(dominant_width, QualifiedSubcauseName(lost.Dominant()).size());
    }
    wait_column = wait_column || s.comm_wait_ns.has_value();
  }
  const size_t numbers = 2 + 8 + 7 + 8 + 10 + 8 + 9 + (wait_column ? 8 : 0) + 2;
  return std::clamp(kMaxWidth - std::min(kMaxWidth, numbers + dominant_width), kMinStepNameWidth,
                    kMaxStepNameWidth);
}

void Steps(const Report& r, const Palette& paint, std::string* out) {
  const size_t name_width = StepNameWidth(r);
  for (const DeviceReport& d : r.devices) {
    std::vector<const StepReport*> steps;
    bool waits = false;  // of any step of the device: then the steps that lost most are listed
    for (const StepReport& s : r.steps) {
      if (s.device != d.device || s.rank != d.rank) continue;
      steps.push_back(&s);
      waits = waits || s.comm_wait_ns.has_value();
    }
    if (steps.empty()) continue;
    const size_t total = steps.size();
    if (steps.size() > kMaxStepsShown) {  // the steps that lost the most, in time order
      std::stable_sort(steps.begin(), steps.end(), [](const StepReport* a, const StepReport* b) {
        return StepLost(*a).TotalNs() > StepLost(*b).TotalNs();
      });
      steps.resize(kMaxStepsShown);
      std::sort(steps.begin(), steps.end(),
                [](const StepReport* a, const StepReport* b) { return a->start_ns < b->start_ns; });
    }
    const bool wait_column = std::any_of(steps.begin(), steps.end(), [](const StepReport* s) {
      return s->comm_wait_ns.has_value();
    });
    absl::StrAppendFormat(
        out, "\n%s%s\n", paint.Bold(absl::StrCat("steps on ", DeviceLabel(d.rank, d.device))),
        total > steps.size() ? absl::StrCat(" (", steps.size(), " of ", total, " with the most ",
                                            waits ? "lost" : "idle", " time; all in --format json)")
                             : "");
    const auto row = [&](absl::string_view name, const std::string& ms, const std::string& busy,
                         const std::string& data, const std::string& launch,
                         const std::string& sync, const std::string& other, const std::string& wait,
                         const std::string& dominant) {
      absl::StrAppend(
          out, "  ", PadRight(ElideStart(name, name_width), name_width),
          absl::StrFormat(" %7s %6s %7s %9s %7s %8s", ms, busy, data, launch, sync, other),
          wait_column ? absl::StrFormat(" %7s", wait) : "", "  ", dominant, "\n");
    };
    row("step", "ms", "busy", "data ms", "launch ms", "sync ms", "other ms", "wait ms", "dominant");
    for (const StepReport* s : steps) {
      const int64_t span = s->end_ns - s->start_ns;
      const IdleBreakdown lost = StepLost(*s);
      const std::string dominant =
          lost.TotalNs() > 0
              ? paint.OfSubcause(lost.Dominant(), QualifiedSubcauseName(lost.Dominant()))
              : "-";
      row(Printable(s->name), Ms(span), Pct(s->busy_ns, span),
          Ms(s->idle.CauseNs(Cause::kDataStarved)), Ms(s->idle.CauseNs(Cause::kLaunchBound)),
          Ms(s->idle.CauseNs(Cause::kSyncBound)), Ms(s->idle.CauseNs(Cause::kUnattributed)),
          s->comm_wait_ns ? Ms(*s->comm_wait_ns) : "-", dominant);
      // The step's readings while busy, where a live capture took them, under its row.
      const std::string gpu = StepGpuLine(*s);
      if (!gpu.empty()) absl::StrAppend(out, "    gpu ", gpu, "\n");
    }
  }
}

const RankReport* FindRank(const Report& r, int rank) {
  for (const RankReport& k : r.ranks) {
    if (k.rank == rank) return &k;
  }
  return nullptr;
}

std::string OwnCause(const RankReport& k) {
  if (!k.own_cause) return "-";
  return absl::StrFormat("%s %.0f%%", QualifiedSubcauseName(*k.own_cause), 100 * k.own_cause_share);
}

// "straggler: rank 1 arrived last at 40 of 40 collectives, 20.1 ms late on average; its own lost
// time is 89% data_starved.host", on two lines where one would be too long.
void StragglerLine(const Report& r, int rank, std::string* out) {
  const RankReport* k = FindRank(r, rank);
  std::string first = absl::StrCat("straggler: rank ", rank);
  if (k == nullptr) {
    absl::StrAppend(out, "  ", first, "\n");
    return;
  }
  if (k->arrived_last > 0) {
    absl::StrAppend(&first, " arrived last at ", k->arrived_last, " of ",
                    k->matched > 0 ? k->matched : k->collectives, " collectives, ",
                    Duration(k->late_ns / k->arrived_last), " late on average");
  } else {
    absl::StrAppend(&first, ", the others waited ", Duration(k->late_ns), " for it");
  }
  if (!k->own_cause) {
    absl::StrAppend(out, "  ", first, "\n");
    return;
  }
  const std::string cause =
      absl::StrFormat("its own lost time is %.0f%% %s", 100 * k->own_cause_share,
                      QualifiedSubcauseName(*k->own_cause));
  if (2 + DisplayWidth(first) + 2 + DisplayWidth(cause) <= kMaxWidth) {
    absl::StrAppend(out, "  ", first, "; ", cause, "\n");
  } else {
    absl::StrAppend(out, "  ", first, ";\n    ", cause, "\n");
  }
}

void ClockLine(const ClockAlignment& c, std::string* out) {
  if (c.method.empty()) return;
  const std::string hosts = absl::StrCat(c.hosts, c.hosts == 1 ? " host" : " hosts");
  if (c.method == "one clock") {
    absl::StrAppend(out, "  clocks: one clock", c.hosts > 0 ? absl::StrCat(" (", hosts, ")") : "",
                    "\n");
  } else if (c.method == "aligned") {
    absl::StrAppendFormat(out,
                          "  clocks: aligned across %s from collective ends, residual %s, %.0f%% "
                          "of collectives matched\n",
                          hosts, Duration(c.residual_ns), 100 * c.matched_share);
  } else {
    absl::StrAppend(out, "  clocks: ", ElideMiddle(Printable(c.method), 60), "\n");
  }
}

// The job, where the report has several ranks: the straggler(s) and their own cause, the clocks,
// a row per rank (docs/ANALYSIS.md, "Many ranks").
void Job(const Report& r, const Palette& paint, std::string* out) {
  if (r.ranks.size() < 2) return;
  std::vector<std::string> hosts;
  for (const RankReport& k : r.ranks) {
    if (!k.host.empty() && std::find(hosts.begin(), hosts.end(), k.host) == hosts.end()) {
      hosts.push_back(k.host);
    }
  }
  absl::StrAppend(out, "\n",
                  paint.Bold(absl::StrCat(
                      "job: ", r.ranks.size(), " ranks",
                      hosts.empty() ? ""
                                    : absl::StrCat(" on ", hosts.size(),
                                                   hosts.size() == 1 ? " host" : " hosts"))),
                  "\n");
  std::vector<int> stragglers = r.stragglers;
  if (r.straggler_rank &&
      std::find(stragglers.begin(), stragglers.end(), *r.straggler_rank) == stragglers.end()) {
    stragglers.insert(stragglers.begin(), *r.straggler_rank);
  }
  for (size_t i = 0; i < stragglers.size() && i < kMaxStragglersShown; ++i) {
    StragglerLine(r, stragglers[i], out);
  }
  if (stragglers.size() > kMaxStragglersShown) {
    absl::StrAppend(out, "  and ", stragglers.size() - kMaxStragglersShown,
                    " more stragglers (all in --format json)\n");
  }
  if (stragglers.empty()) {
    const bool matched = std::any_of(r.ranks.begin(), r.ranks.end(),
                                     [](const RankReport& k) { return k.matched > 0; });
    const bool any = std::any_of(r.ranks.begin(), r.ranks.end(),
                                 [](const RankReport& k) { return k.collectives > 0; });
    if (matched) {
      absl::StrAppend(out, "  ranks arrived together (no straggler)\n");
    } else if (any) {
      absl::StrAppend(out, "  no collective matched across the ranks (no straggler named)\n");
    }
  }
  ClockLine(r.clock, out);

  std::vector<const RankReport*> rows;
  for (const RankReport& k : r.ranks) rows.push_back(&k);
  if (rows.size() > kMaxRanksShown) {  // the stragglers, then the ranks that waited most
    const auto place = [&](const RankReport* k) {
      const auto it = std::find(stragglers.begin(), stragglers.end(), k->rank);
      return static_cast<size_t>(it - stragglers.begin());
    };
    std::stable_sort(rows.begin(), rows.end(), [&](const RankReport* a, const RankReport* b) {
      if (place(a) != place(b)) return place(a) < place(b);
      return a->wait_ns > b->wait_ns;
    });
    rows.resize(kMaxRanksShown);
    absl::StrAppend(out, "  ", rows.size(), " of ", r.ranks.size(),
                    " ranks: the stragglers, then those that waited most (all in --format json)\n");
  }
  absl::StrAppendFormat(out, "  %5s  %s %8s %12s %9s %9s  %s\n", "rank", Cell("host", 14),
                        "matched", "arrived last", "late ms", "wait ms", "own cause");
  for (const RankReport* k : rows) {
    absl::StrAppendFormat(out, "  %5d  %s %8d %12d %9s %9s  %s\n", k->rank,
                          Cell(k->host.empty() ? "-" : Printable(k->host), 14), k->matched,
                          k->arrived_last, Ms(k->late_ns), Ms(k->wait_ns), OwnCause(*k));
  }
}

// "GPUs: 2 of 8 visible used (never used: 2, 3, ...)"; where the input lists the visible
// devices with their physical index or UUID, those of the devices: "GPUs: 1 of 8 visible used:
// 0 (physical 3); unused: 1 (physical 0, GPU-5e3c...), ..., and 5 more".
std::string GpusLine(const Report& r) {
  const auto plain = [](int visible, const std::vector<int>& unused) {
    return absl::StrFormat(
        "GPUs: %d of %d visible used%s\n", visible - static_cast<int>(unused.size()), visible,
        unused.empty() ? "" : absl::StrCat(" (never used: ", absl::StrJoin(unused, ", "), ")"));
  };
  // One row per GPU: a UUID listed twice (by two ranks of one host) is one GPU.
  std::vector<VisibleDevice> gpus;
  for (const VisibleDevice& v : r.visible_devices) {
    auto same = std::find_if(gpus.begin(), gpus.end(), [&](const VisibleDevice& g) {
      return !v.uuid.empty() && g.uuid == v.uuid;
    });
    if (same == gpus.end()) {
      gpus.push_back(v);
    } else {
      same->used = same->used || v.used;
    }
  }
  // New: a UUID, or an index that CUDA_VISIBLE_DEVICES remapped.
  const bool news = std::any_of(gpus.begin(), gpus.end(), [](const VisibleDevice& v) {
    return !v.uuid.empty() || (v.physical_index && *v.physical_index != v.device);
  });
  if (!news) {
    if (r.visible_device_count > 0) return plain(r.visible_device_count, r.unused_devices);
    if (gpus.empty()) return "";
    std::vector<int> unused;
    for (const VisibleDevice& v : gpus) {
      if (!v.used) unused.push_back(v.device);
    }
    return plain(static_cast<int>(gpus.size()), unused);
  }
  std::vector<int> ranks;
  for (const VisibleDevice& v : gpus) {
    if (v.rank && std::find(ranks.begin(), ranks.end(), *v.rank) == ranks.end()) {
      ranks.push_back(*v.rank);
    }
  }
  const auto item = [&](const VisibleDevice& v) {
    std::string s = ranks.size() > 1 && v.rank ? absl::StrCat("rank ", *v.rank, " GPU ", v.device)
                                               : absl::StrCat(v.device);
    std::vector<std::string> notes;
    if (v.physical_index) notes.push_back(absl::StrCat("physical ", *v.physical_index));
    if (!v.uuid.empty()) {
      notes.push_back(Printable(v.uuid.size() > 11 ? v.uuid.substr(0, 8) + "..." : v.uuid));
    }
    if (!notes.empty()) absl::StrAppend(&s, " (", absl::StrJoin(notes, ", "), ")");
    return s;
  };
  std::vector<const VisibleDevice*> used, unused;
  bool remapped = false;  // a used GPU that CUDA_VISIBLE_DEVICES numbers otherwise
  for (const VisibleDevice& v : gpus) {
    (v.used ? used : unused).push_back(&v);
    remapped = remapped || (v.used && v.physical_index && *v.physical_index != v.device);
  }
  // Appends the items of a list to line while it stays within kMaxWidth with "and N more";
  // whether all of them.
  const auto append = [&](const std::vector<const VisibleDevice*>& list, size_t max_items,
                          std::string* line) {
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string next = absl::StrCat(i == 0 ? "" : ", ", item(*list[i]));
      const size_t rest =
          i + 1 == list.size() ? 0 : absl::StrCat(", and ", list.size() - i - 1, " more").size();
      if (i == max_items ||
          (i > 0 && DisplayWidth(*line) + DisplayWidth(next) + rest > kMaxWidth)) {
        absl::StrAppend(line, ", and ", list.size() - i, " more");
        return false;
      }
      *line += next;
    }
    return true;
  };
  std::string line = absl::StrFormat("GPUs: %d of %d visible used", used.size(), gpus.size());
  if (remapped && !used.empty()) {
    line += ": ";
    (void)append(used, kMaxDevicesNamed, &line);
  }
  if (unused.empty()) return line + "\n";
  // The unused on the same line where all of them fit, else on a line of their own.
  std::string one_line = line + "; unused: ";
  if (append(unused, SIZE_MAX, &one_line) && DisplayWidth(one_line) <= kMaxWidth) {
    return one_line + "\n";
  }
  std::string second = "  unused: ";
  (void)append(unused, SIZE_MAX, &second);
  return absl::StrCat(line, "\n", second, "\n");
}

// A serving process's idle time without demand, which is never lost: "; it idled 6.2 s with no
// request in flight: not waste"; "" where it has none.
std::string NoDemandNote(const Report& r) {
  int64_t none = 0;
  for (const DeviceReport& d : r.devices) {
    for (const OneOffTime& o : d.one_off) {
      if (o.kind == OneOffKind::kNoDemand) none += o.ns;
    }
  }
  if (none <= 0) return "";
  return absl::StrCat("; ", r.devices.size() > 1 ? "they" : "it", " idled ", Duration(none),
                      " with no request in flight: not waste, nothing to fix");
}

// "nothing worth fixing here: the GPU lost 0.6% of the steady state (6.1 ms of 1.02 s), below the
// 5% that advice starts at".
std::string NothingWorthFixing(const Report& r) {
  const Verdict& v = *r.verdict;
  return absl::StrCat("nothing worth fixing here: ", r.devices.size() > 1 ? "the GPUs" : "the GPU",
                      " lost ", Share(v.LostShare()), " of the steady state (", Duration(v.lost_ns),
                      " of ", Duration(v.steady_ns), ", idle or waiting for peers), below the ",
                      Share(v.threshold_share), " that advice starts at", NoDemandNote(r));
}

class TextWriter : public ReportWriter {
 public:
  explicit TextWriter(const TextOptions& options) : options_(options) {}

  std::string Write(const Report& r) const override {
    const Palette paint(options_.color);
    std::string out = paint.Bold(r.devices.size() > 1 ? "gpuidle: why the GPUs were idle"
                                                      : "gpuidle: why the GPU was idle") +
                      "\n";
    std::vector<std::string> inputs;
    for (const std::string& in : r.inputs) inputs.push_back(Printable(in));
    absl::StrAppendFormat(
        &out, "source: %s%s\n", Printable(r.source),
        inputs.empty() ? "" : absl::StrCat(" (", absl::StrJoin(inputs, ", "), ")"));
    std::string records =
        !r.dropped_records ? "the source does not report lost records"
        : *r.dropped_records == 0
            ? "complete"
            : absl::StrCat(*r.dropped_records, " records lost (not counted as idle)");
    if (r.zero_timestamp_records > 0) {
      absl::StrAppend(&records, "; ", r.zero_timestamp_records,
                      " records without time stamps skipped");
    }
    if (r.record_limit_reached) {
      absl::StrAppend(&records,
                      "; collection stopped at the record limit (GPUIDLE_MAX_RECORDS): "
                      "the report covers the time until then");
    }
    absl::StrAppendFormat(&out, "window: %s   records: %s\n",
                          Duration(r.window_end_ns - r.window_start_ns), records);
    if (r.coverage.has_value()) {
      const Coverage& c = *r.coverage;
      absl::StrAppendFormat(&out, "sampled: traced %s (%s) of %s in %d window%s",
                            Duration(c.traced_ns), Pct(c.traced_ns, c.span_ns), Duration(c.span_ns),
                            c.windows, c.windows == 1 ? "" : "s");
      if (c.window_ns > 0 && c.period_ns > 0) {
        absl::StrAppend(
            &out, ": ",
            c.first_window_ns > c.window_ns
                ? absl::StrCat("the first ", Duration(c.first_window_ns), " whole, then ")
                : "",
            Duration(c.window_ns), " of every ", Duration(c.period_ns));
      }
      // The run went on after its last window: what was not seen, said (the rule of the
      // coverage itself: more than 100 ms and 1% of the span).
      const int64_t tail = c.span_ns - c.traced_until_ns;
      if (c.traced_until_ns > 0 && tail > std::max<int64_t>(100'000'000, c.span_ns / 100)) {
        absl::StrAppend(&out, "; nothing traced after ", Duration(c.traced_until_ns));
      }
      absl::StrAppend(
          &out, c.windows == 1 ? " (the figures are that window's)\n" : " (figures sum them)\n");
    }
    out += GpusLine(r);
    out += "\n";
    // Start-up apart, then the steady state that every figure below describes, then wind-down.
    const bool has_steps = !r.steps.empty() || !r.step_source.empty();
    if (r.devices.empty()) out += "no GPU activity recorded in this trace\n";
    PhaseHeadline(r, Phase::kStartUp, has_steps, &out);
    SteadyHeadline(r, &out);
    ServingLines(r, &out);
    for (const DeviceReport& d : r.devices) Device(r, d, paint, &out);
    PeriodicWorkLines(r, &out);
    PhaseHeadline(r, Phase::kWindDown, has_steps, &out);
    Job(r, paint, &out);
    Warnings(r, paint, &out);
    Steps(r, paint, &out);
    if (!r.offenders.empty()) {
      absl::StrAppendFormat(&out, "\n%s %10s %7s\n", PadRight(paint.Bold("top offenders"), 30),
                            "idle ms", "gaps");
      for (size_t i = 0; i < r.offenders.size() && i < kMaxOffendersShown; ++i) {
        const Offender& o = r.offenders[i];
        absl::StrAppendFormat(
            &out, "  %s %10s %7d\n    %s\n",
            PadRight(paint.OfSubcause(o.subcause, QualifiedSubcauseName(o.subcause)), 28),
            Ms(o.idle_ns), o.count, OffenderLine(o));
      }
    }
    if (r.device_times == report_values::kMadeUp && r.advice.empty()) {
      // Evenly spread ranges leave no gaps: "nothing worth fixing" would be Kineto's doing.
      absl::StrAppend(&out, "\n", paint.Bold("what to do"),
                      "\n  idle time not measured: the device work of this trace is CUPTI "
                      "range-profiler ranges (torch.profiler's profiler_metrics), which Kineto "
                      "spaces evenly; profile again without profiler_metrics for the idle "
                      "analysis\n");
    } else if (r.verdict.has_value() && !r.verdict->worth_fixing) {
      absl::StrAppend(&out, "\n", paint.Bold("what to do"), "\n  ", NothingWorthFixing(r), "\n");
    } else if (!r.advice.empty()) {
      out += "\n" + paint.Bold("what to do") + "\n";
      for (const Advice& a : r.advice) {
        const std::string gain = PredictedGain(a);
        absl::StrAppendFormat(&out, "  %s (%s of the steady state%s): %s\n",
                              paint.OfSubcause(a.subcause, QualifiedSubcauseName(a.subcause)),
                              Share(a.share_of_steady_state),
                              gain.empty() ? "" : absl::StrCat("; ", gain), Printable(a.fix));
        if (!a.evidence.empty()) {
          absl::StrAppendFormat(&out, "    evidence: %s\n", Printable(a.evidence));
        }
      }
    }
    // Names, paths, warnings and advice may be of any length: every line is fitted last.
    return FitLines(out, kMaxWidth);
  }

 private:
  TextOptions options_;
};

}  // namespace

std::unique_ptr<ReportWriter> MakeTextWriter(const TextOptions& options) {
  return std::make_unique<TextWriter>(options);
}

}  // namespace gpuidle::internal
