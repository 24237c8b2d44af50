#include "analysis/timeline_summary.h"

#include <algorithm>
#include <cstdint>

namespace gpuidle::internal {
namespace {

using Bin = TimelineSummary::Bin;

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

void CoarsenTimeline(int factor, TimelineSummary* t) {
  if (factor <= 1 || t->bins.empty()) return;
  const size_t f = static_cast<size_t>(factor);
  std::vector<Bin> coarse((t->bins.size() + f - 1) / f);
  for (size_t i = 0; i < t->bins.size(); ++i) {
    for (int c = 0; c < kColumns; ++c) Column(coarse[i / f], c) += ColumnValue(t->bins[i], c);
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
  for (size_t i = 0; i < window.bins.size(); ++i) {
    const int64_t start = window.start_ns + static_cast<int64_t>(i) * window.bin_ns;
    for (int c = 0; c < kColumns; ++c) {
      const int64_t value = ColumnValue(window.bins[i], c);
      if (value == 0) continue;
      // Shared out by overlap; the last part takes what rounding left, so the sum is exact.
      int64_t left = value;
      int64_t s = std::max(start, sum->start_ns);
      const int64_t e = start + window.bin_ns;
      while (s < e && left > 0) {
        const int64_t j = std::min<int64_t>((s - sum->start_ns) / sum->bin_ns,
                                            static_cast<int64_t>(sum->bins.size()) - 1);
        const int64_t part_end = std::min(e, sum->start_ns + (j + 1) * sum->bin_ns);
        const bool last_part = part_end >= e || j == static_cast<int64_t>(sum->bins.size()) - 1;
        const int64_t part =
            last_part
                ? left
                : std::min(left, static_cast<int64_t>(static_cast<long double>(value) *
                                                      static_cast<long double>(part_end - s) /
                                                      static_cast<long double>(window.bin_ns)));
        Column(sum->bins[static_cast<size_t>(j)], c) += part;
        left -= part;
        s = last_part ? e : part_end;
      }
    }
  }
}

}  // namespace gpuidle::internal
