#include "analysis/timeline_summary.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace gpuidle::internal {
namespace {

using Bin = TimelineSummary::Bin;
using GpuBin = TimelineSummary::GpuBin;

// The columns of a bin, in one order, so that the sums below treat them alike.
constexpr int kColumns = 2 + kNumCauses;
int64_t& Column(Bin& b, int c) {
  if (c == 0) return b.busy_ns;
  if (c == 1) return b.one_off_ns;
  return b.idle_ns[static_cast<size_t>(c - 2)];
}
int64_t ColumnValue(const Bin& b, int c) {
  if (c == 0) return b.busy_ns;
  if (c == 1) return b.one_off_ns;
  return b.idle_ns[static_cast<size_t>(c - 2)];
}

// Adds [start, end) to the bins of t (which cover it), through `column`.
template <typename ColumnOf>
void AddSpan(TimelineSummary* t, int64_t start, int64_t end, ColumnOf column) {
  if (end <= start || t->bin_ns <= 0 || t->bins.empty()) return;
  const int64_t last = static_cast<int64_t>(t->bins.size()) - 1;
  int64_t i = std::clamp<int64_t>((start - t->start_ns) / t->bin_ns, 0, last);
  while (start < end && i <= last) {
    const int64_t bin_end = t->start_ns + (i + 1) * t->bin_ns;
    const int64_t piece_end = i == last ? end : std::min(end, bin_end);
    column(t->bins[static_cast<size_t>(i)]) += piece_end - start;
    start = piece_end;
    ++i;
  }
}

// Adds `value`, a figure of the bin [start, start + length) of another summary, to the bins of
// `sum` it overlaps, shared out by overlap; the last part takes what rounding left, so the sum
// is exact. `cell(j)` is the figure of sum's bin j.
template <typename Cell>
void ShareOut(int64_t value, int64_t start, int64_t length, TimelineSummary* sum, Cell cell) {
  if (value == 0) return;
  int64_t left = value;
  int64_t s = std::max(start, sum->start_ns);
  const int64_t e = start + length;
  const auto last_bin = static_cast<int64_t>(sum->bins.size()) - 1;
  while (s < e && left > 0) {
    const int64_t j = std::min<int64_t>((s - sum->start_ns) / sum->bin_ns, last_bin);
    const int64_t part_end = std::min(e, sum->start_ns + (j + 1) * sum->bin_ns);
    const bool last_part = part_end >= e || j == last_bin;
    const int64_t part =
        last_part ? left
                  : std::min(left, static_cast<int64_t>(static_cast<long double>(value) *
                                                        static_cast<long double>(part_end - s) /
                                                        static_cast<long double>(length)));
    cell(static_cast<size_t>(j)) += part;
    left -= part;
    s = last_part ? e : part_end;
  }
}

// A mean of `a` (weight wa) and `b` (weight wb); a negative figure was not measured.
double MeanOf(double a, double wa, double b, double wb) {
  if (a < 0 || wa <= 0) return b;
  if (b < 0 || wb <= 0) return a;
  return (a * wa + b * wb) / (wa + wb);
}

// `from`'s readings added to `into`'s: the means stay means over both.
void MergeGpuBin(const GpuBin& from, GpuBin* into) {
  const auto ni = static_cast<double>(into->samples), nf = static_cast<double>(from.samples);
  if (from.samples > 0) {
    into->sm_clock_mhz =
        static_cast<uint32_t>(MeanOf(into->sm_clock_mhz, ni, from.sm_clock_mhz, nf) + 0.5);
    into->power_mw = static_cast<uint32_t>(MeanOf(into->power_mw, ni, from.power_mw, nf) + 0.5);
    into->samples += from.samples;
  }
  if (from.pm_ns > 0) {
    const auto wi = static_cast<double>(into->pm_ns), wf = static_cast<double>(from.pm_ns);
    into->sm_active_pct = MeanOf(into->sm_active_pct, wi, from.sm_active_pct, wf);
    into->tensor_active_pct = MeanOf(into->tensor_active_pct, wi, from.tensor_active_pct, wf);
    into->dram_pct = MeanOf(into->dram_pct, wi, from.dram_pct, wf);
    into->pm_ns += from.pm_ns;
  }
}

}  // namespace

TimelineSummary SummarizeTimeline(Interval window, const std::vector<Interval>& busy,
                                  const std::vector<IdlePiece>& steady_idle, int bins) {
  TimelineSummary t;
  const int64_t length = window.end_ns - window.start_ns;
  if (length <= 0 || bins <= 0) return t;
  t.start_ns = window.start_ns;
  t.bin_ns = std::max<int64_t>(1, (length + bins - 1) / bins);
  t.bins.resize(static_cast<size_t>((length + t.bin_ns - 1) / t.bin_ns));
  for (const Interval& b : busy) {
    AddSpan(&t, std::max(b.start_ns, window.start_ns), std::min(b.end_ns, window.end_ns),
            [](Bin& bin) -> int64_t& { return bin.busy_ns; });
  }
  for (const IdlePiece& p : steady_idle) {
    const auto cause = static_cast<size_t>(CauseOf(p.subcause));
    AddSpan(&t, std::max(p.start_ns, window.start_ns), std::min(p.end_ns, window.end_ns),
            [cause](Bin& bin) -> int64_t& { return bin.idle_ns[cause]; });
  }
  // One-off: the rest of each bin's part of the window.
  for (size_t i = 0; i < t.bins.size(); ++i) {
    Bin& bin = t.bins[i];
    const int64_t bin_start = t.start_ns + static_cast<int64_t>(i) * t.bin_ns;
    const int64_t in_window = std::min(bin_start + t.bin_ns, window.end_ns) - bin_start;
    int64_t accounted = bin.busy_ns;
    for (int64_t v : bin.idle_ns) accounted += v;
    bin.one_off_ns = std::max<int64_t>(0, in_window - accounted);
  }
  return t;
}

void AddGpuReadings(const Timeline& timeline, int device, TimelineSummary* t) {
  t->gpu.clear();
  if (t->bin_ns <= 0 || t->bins.empty()) return;
  const auto n = static_cast<int64_t>(t->bins.size());
  const int64_t end = t->start_ns + n * t->bin_ns;
  std::vector<GpuBin> gpu(t->bins.size());
  bool any = false;
  for (const GpuMetricSample& s : timeline.gpu_metrics) {
    if (s.device != device || s.time_ns < t->start_ns || s.time_ns >= end) continue;
    GpuBin one;
    one.samples = 1;
    one.sm_clock_mhz = s.sm_clock_mhz;
    one.power_mw = s.power_mw;
    MergeGpuBin(one, &gpu[static_cast<size_t>((s.time_ns - t->start_ns) / t->bin_ns)]);
    t->sm_clock_max_mhz = std::max(t->sm_clock_max_mhz, s.sm_clock_max_mhz);
    t->power_limit_mw = std::max(t->power_limit_mw, s.power_limit_mw);
    any = true;
  }
  for (const GpuThroughputSample& s : timeline.gpu_throughput) {
    if (s.device != device) continue;
    // Each bin gets the part of the sample that falls in it.
    for (int64_t from = std::max(s.start_ns, t->start_ns); from < std::min(s.end_ns, end);) {
      const int64_t i = (from - t->start_ns) / t->bin_ns;
      const int64_t to = std::min({s.end_ns, end, t->start_ns + (i + 1) * t->bin_ns});
      GpuBin part;
      part.pm_ns = to - from;
      part.sm_active_pct = s.sm_active_pct;
      part.tensor_active_pct = s.tensor_active_pct;
      part.dram_pct = s.dram_pct;
      MergeGpuBin(part, &gpu[static_cast<size_t>(i)]);
      any = true;
      from = to;
    }
  }
  if (any) t->gpu = std::move(gpu);
}

void CoarsenTimeline(int factor, TimelineSummary* t) {
  if (factor <= 1 || t->bins.empty()) return;
  const size_t f = static_cast<size_t>(factor);
  std::vector<Bin> coarse((t->bins.size() + f - 1) / f);
  for (size_t i = 0; i < t->bins.size(); ++i) {
    for (int c = 0; c < kColumns; ++c) Column(coarse[i / f], c) += ColumnValue(t->bins[i], c);
  }
  if (!t->in_flight_ns.empty()) {
    std::vector<int64_t> in_flight(coarse.size());
    for (size_t i = 0; i < t->in_flight_ns.size(); ++i) in_flight[i / f] += t->in_flight_ns[i];
    t->in_flight_ns = std::move(in_flight);
  }
  if (!t->gpu.empty()) {
    std::vector<GpuBin> gpu(coarse.size());
    for (size_t i = 0; i < t->gpu.size(); ++i) MergeGpuBin(t->gpu[i], &gpu[i / f]);
    t->gpu = std::move(gpu);
  }
  t->bins = std::move(coarse);
  t->bin_ns *= factor;
}

void AddTimeline(const TimelineSummary& window, TimelineSummary* sum) {
  if (window.bin_ns <= 0 || window.bins.empty()) return;
  if (sum->bin_ns <= 0 || sum->bins.empty()) {
    *sum = window;
    return;
  }
  const int64_t end = window.start_ns + static_cast<int64_t>(window.bins.size()) * window.bin_ns;
  while (end - sum->start_ns > int64_t{TimelineSummary::kBins} * sum->bin_ns) {
    CoarsenTimeline(2, sum);
  }
  const int64_t needed = (end - sum->start_ns + sum->bin_ns - 1) / sum->bin_ns;
  if (needed > static_cast<int64_t>(sum->bins.size()))
    sum->bins.resize(static_cast<size_t>(needed));
  // The readings of a window's bin go to the bin of `sum` that holds its middle.
  if (!window.gpu.empty() || !sum->gpu.empty()) sum->gpu.resize(sum->bins.size());
  for (size_t i = 0; i < window.gpu.size(); ++i) {
    const int64_t middle =
        window.start_ns + static_cast<int64_t>(i) * window.bin_ns + window.bin_ns / 2;
    const int64_t j = std::clamp<int64_t>((middle - sum->start_ns) / sum->bin_ns, 0,
                                          static_cast<int64_t>(sum->gpu.size()) - 1);
    MergeGpuBin(window.gpu[i], &sum->gpu[static_cast<size_t>(j)]);
  }
  sum->sm_clock_max_mhz = std::max(sum->sm_clock_max_mhz, window.sm_clock_max_mhz);
  sum->power_limit_mw = std::max(sum->power_limit_mw, window.power_limit_mw);
  // Requests in flight add like the time columns; a window without them adds none.
  if (!window.in_flight_ns.empty() || !sum->in_flight_ns.empty()) {
    sum->in_flight_ns.resize(sum->bins.size());
  }
  for (size_t i = 0; i < window.bins.size(); ++i) {
    const int64_t start = window.start_ns + static_cast<int64_t>(i) * window.bin_ns;
    for (int c = 0; c < kColumns; ++c) {
      ShareOut(ColumnValue(window.bins[i], c), start, window.bin_ns, sum,
               [sum, c](size_t j) -> int64_t& { return Column(sum->bins[j], c); });
    }
    if (i < window.in_flight_ns.size()) {
      ShareOut(window.in_flight_ns[i], start, window.bin_ns, sum,
               [sum](size_t j) -> int64_t& { return sum->in_flight_ns[j]; });
    }
  }
}

}  // namespace gpuidle::internal
