// The memory of a sampled collection over a long job, on the CPU: one recorded live trace is
// replayed as window after window, each analysed as the session analyses a closing window
// (WindowAggregate::WindowOptions), folded into a WindowAggregate, and published as the session
// publishes it (the aggregate's Result() formatted as Prometheus metrics after every window, as
// a JSON summary every --every windows). The process's resident memory must stay flat once the
// bounded lists (steps, gaps, offenders, warnings) are full.
//
//   build/bin/window_memory_benchmark [--trace PATH] [--windows 10000] [--every 500]
//                                     [--distinct 1] [--max-growth-mb 5] [--metrics-out PATH]
//
// Each window's timestamps are moved on by a period (10 s windows of every 100 s), and with
// --distinct 1 (the default) its offenders and a warning are named apart from every other
// window's, the worst case for the merged lists. The memory grows until the aggregate's step
// list is full (Report::kMaxStepRows); from then on, or from the first 10% of windows if that is
// later, it must stay flat. malloc gives memory back to the system unevenly, so the peaks are
// compared: exits 1 if the highest resident memory of the second half of those windows exceeds
// that of the first half by more than --max-growth-mb.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "analysis/analyze.h"
#include "analysis/window_aggregate.h"
#include "gpuidle/analyze.h"
#include "gpuidle/report.h"
#include "ingest/read_trace.h"
#include "report/prometheus_writer.h"

namespace gpuidle::internal {
namespace {

constexpr int64_t kSecondNs = 1'000'000'000;
// The schedule the windows stand for: 10 s traced of every 100 s.
constexpr int64_t kWindowNs = 10 * kSecondNs;
constexpr int64_t kPeriodNs = 100 * kSecondNs;

double ResidentMb() {
  std::ifstream statm("/proc/self/statm");
  long long pages = 0, resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1 << 20);
}

struct Flags {
  std::string trace = absl::StrCat(GPUIDLE_TEST_DATA_DIR,
                                   "/traces/live_python/tiny_mlp_launch_bound.trace.json.gz");
  int64_t windows = 10'000;
  int64_t every = 500;
  bool distinct = true;
  double max_growth_mb = 5;
  std::string metrics_out;  // where to leave the last metrics text ("": nowhere)
};

bool ParseFlags(int argc, char** argv, Flags* flags) {
  for (int i = 1; i < argc; ++i) {
    const std::string name = argv[i];
    if (i + 1 >= argc) return false;
    const char* value = argv[++i];
    int64_t n = 0;
    if (name == "--trace") {
      flags->trace = value;
    } else if (name == "--metrics-out") {
      flags->metrics_out = value;
    } else if (name == "--windows" && absl::SimpleAtoi(value, &n) && n >= 10) {
      flags->windows = n;
    } else if (name == "--every" && absl::SimpleAtoi(value, &n) && n >= 1) {
      flags->every = n;
    } else if (name == "--distinct" && absl::SimpleAtoi(value, &n)) {
      flags->distinct = n != 0;
    } else if (name != "--max-growth-mb" || !absl::SimpleAtod(value, &flags->max_growth_mb)) {
      return false;
    }
  }
  return true;
}

// Moves a window's report by shift_ns on the clock, as the next window's activity would be.
void Shift(int64_t shift_ns, Report* r) {
  r->window_start_ns += shift_ns;
  r->window_end_ns += shift_ns;
  for (DeviceReport& d : r->devices) {
    d.window_start_ns += shift_ns;
    d.window_end_ns += shift_ns;
    d.steady_start_ns += shift_ns;
    d.steady_end_ns += shift_ns;
  }
  for (StepReport& s : r->steps) {
    s.start_ns += shift_ns;
    s.end_ns += shift_ns;
  }
  for (GapRecord& g : r->longest_gaps) {
    g.start_ns += shift_ns;
    g.end_ns += shift_ns;
  }
}

int Run(const Flags& flags) {
  absl::StatusOr<Timeline> timeline = ReadTraceFile(flags.trace);
  if (!timeline.ok()) {
    std::fprintf(stderr, "window_memory_benchmark: %s\n",
                 std::string(timeline.status().message()).c_str());
    return 2;
  }
  WindowAggregate aggregate{AnalysisOptions{}};
  const MetricsLabels labels{"benchmark", "", absl::StrCat(getpid())};
  const int64_t baseline_after = std::max<int64_t>(1, flags.windows / 10);
  // Resident memory (MB) at each printed window from the baseline window on.
  std::vector<std::pair<int64_t, double>> flat_rss;
  int64_t baseline_window = 0, steps_full_at = 0;
  double rss_peak = 0;
  const double rss_first = ResidentMb();
  int64_t replayed_ns = 0, kernels = 0;
  size_t metrics_bytes = 0, summary_bytes = 0;
  std::string metrics;
  std::printf("trace %s\n", flags.trace.c_str());
  std::printf("%8s %9s %8s %10s %6s %9s %8s %13s\n", "window", "rss_mb", "steps", "unlisted",
              "gaps", "offenders", "warnings", "metrics_bytes");
  for (int64_t i = 0; i < flags.windows; ++i) {
    absl::StatusOr<Report> window = Analyze(*timeline, aggregate.WindowOptions());
    if (!window.ok()) {
      std::fprintf(stderr, "window_memory_benchmark: window %lld: %s\n", static_cast<long long>(i),
                   std::string(window.status().message()).c_str());
      return 2;
    }
    if (i == 0) {
      replayed_ns = window->window_end_ns - window->window_start_ns;
      for (const DeviceReport& d : window->devices) kernels += d.kernel_count;
    }
    Shift(i * kPeriodNs, &*window);
    if (flags.distinct) {
      for (Offender& o : window->offenders) absl::StrAppend(&o.what, " #", i);
      window->warnings.push_back(absl::StrCat("window ", i, ": a warning of its own"));
    }
    const int64_t start_ns = window->window_start_ns;
    aggregate.Add(start_ns, start_ns + kWindowNs, &*window);

    // What PublishWindowsLocked does after each window: the metrics; a summary now and then.
    const std::optional<Report> result = aggregate.Result();
    if (!result) continue;
    if (steps_full_at == 0 && result->steps.size() >= Report::kMaxStepRows) steps_full_at = i + 1;
    metrics = FormatPrometheusMetrics(*result, labels);
    metrics_bytes = metrics.size();
    const bool report_now = (i + 1) % flags.every == 0 || i + 1 == flags.windows;
    if (!report_now) continue;
    absl::StatusOr<std::string> summary = FormatReport(*result, "json");
    summary_bytes = summary.ok() ? summary->size() : 0;
    // Measured with the same things alive every time: the aggregate, its result, the summary.
    const double rss = ResidentMb();
    rss_peak = std::max(rss_peak, rss);
    const bool lists_full = steps_full_at > 0 || result->steps.empty();
    if (i + 1 >= baseline_after && lists_full) {
      if (flat_rss.empty()) baseline_window = i + 1;
      flat_rss.emplace_back(i + 1, rss);
    }
    std::printf("%8lld %9.1f %8zu %10llu %6zu %9zu %8zu %13zu\n", static_cast<long long>(i + 1),
                rss, result->steps.size(),
                static_cast<unsigned long long>(result->steps_not_listed),
                result->longest_gaps.size(), result->offenders.size(), result->warnings.size(),
                metrics_bytes);
  }
  const std::optional<Report> result = aggregate.Result();
  if (!flags.metrics_out.empty()) std::ofstream(flags.metrics_out) << metrics;
  const double hours = static_cast<double>(flags.windows * kPeriodNs) / (3600.0 * kSecondNs);
  std::printf(
      "windows=%lld replayed_ms_per_window=%.1f kernels_per_window=%lld "
      "job_hours_at_10s_of_100s=%.1f summary_json_bytes=%zu\n",
      static_cast<long long>(flags.windows), static_cast<double>(replayed_ns) / 1e6,
      static_cast<long long>(kernels), hours, summary_bytes);
  if (result && result->coverage) {
    std::printf("coverage windows=%lld traced_s=%.0f span_s=%.0f\n",
                static_cast<long long>(result->coverage->windows),
                static_cast<double>(result->coverage->traced_ns) / kSecondNs,
                static_cast<double>(result->coverage->span_ns) / kSecondNs);
  }
  const int64_t middle = (baseline_window + flags.windows) / 2;
  double first_peak = -1, second_peak = -1;
  for (const auto& [window, rss] : flat_rss) {
    double& peak = window <= middle ? first_peak : second_peak;
    peak = std::max(peak, rss);
  }
  if (first_peak < 0 || second_peak < 0) {
    std::printf(
        "FAIL: too few windows after the step list filled: run more (or a smaller "
        "--every)\n");
    return 1;
  }
  const double growth = second_peak - first_peak;
  std::printf("steps_list_full_at_window=%lld baseline_window=%lld\n",
              static_cast<long long>(steps_full_at), static_cast<long long>(baseline_window));
  std::printf(
      "rss_first_mb=%.1f rss_peak_mb=%.1f rss_last_mb=%.1f peak_mb_windows_%lld_to_%lld=%.1f "
      "peak_mb_windows_%lld_to_%lld=%.1f growth_mb=%.1f\n",
      rss_first, rss_peak, flat_rss.back().second, static_cast<long long>(baseline_window),
      static_cast<long long>(middle), first_peak, static_cast<long long>(middle + 1),
      static_cast<long long>(flags.windows), second_peak, growth);
  if (growth > flags.max_growth_mb) {
    std::printf("FAIL: resident memory grew by %.1f MB in the second half (limit %.1f MB)\n",
                growth, flags.max_growth_mb);
    return 1;
  }
  std::printf("PASS: resident memory flat within %.1f MB from window %lld to %lld\n",
              flags.max_growth_mb, static_cast<long long>(baseline_window),
              static_cast<long long>(flags.windows));
  return 0;
}

}  // namespace
}  // namespace gpuidle::internal

int main(int argc, char** argv) {
  gpuidle::internal::Flags flags;
  if (!gpuidle::internal::ParseFlags(argc, argv, &flags)) {
    std::fprintf(stderr,
                 "usage: window_memory_benchmark [--trace PATH] [--windows N>=10] [--every K] "
                 "[--distinct 0|1] [--max-growth-mb MB] [--metrics-out PATH]\n");
    return 2;
  }
  return gpuidle::internal::Run(flags);
}
