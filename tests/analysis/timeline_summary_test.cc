#include "analysis/timeline_summary.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/analyze.h"
#include "analysis/rank_merge.h"
#include "analysis/window_aggregate.h"
#include "gpuidle/report.h"
#include "gtest/gtest.h"
#include "testing/rank_reports.h"
#include "testing/timeline_builder.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::TimelineBuilder;

struct Totals {
  int64_t busy = 0;
  int64_t one_off = 0;
  std::array<int64_t, kNumCauses> idle{};
  int64_t All() const {
    int64_t s = busy + one_off;
    for (int64_t v : idle) s += v;
    return s;
  }
};

Totals Sum(const TimelineSummary& t) {
  Totals s;
  for (const TimelineSummary::Bin& b : t.bins) {
    s.busy += b.busy_ns;
    s.one_off += b.one_off_ns;
    for (int c = 0; c < kNumCauses; ++c) s.idle[c] += b.idle_ns[c];
  }
  return s;
}

int64_t CauseNs(const Totals& t, Cause c) { return t.idle[static_cast<size_t>(c)]; }

TEST(TimelineSummaryTest, BinsTileTheWindowAndEachColumnSumsToItsIntervals) {
  const Interval window{1'000, 1'000 + 6'001};  // not a multiple of the bin count
  const std::vector<Interval> busy = {{1'000, 2'500}, {4'000, 4'100}};
  std::vector<IdlePiece> idle(2);
  idle[0] = {2'500, 3'000, Subcause::kHostSync};
  idle[1] = {3'000, 4'000, Subcause::kDataLoader};
  const TimelineSummary t = SummarizeTimeline(window, busy, idle, 600);
  EXPECT_EQ(t.start_ns, 1'000);
  ASSERT_GT(t.bin_ns, 0);
  EXPECT_LE(t.bins.size(), 600u);
  EXPECT_GE(static_cast<int64_t>(t.bins.size()) * t.bin_ns, 6'001);
  const Totals s = Sum(t);
  EXPECT_EQ(s.busy, 1'600);
  EXPECT_EQ(CauseNs(s, Cause::kSyncBound), 500);
  EXPECT_EQ(CauseNs(s, Cause::kDataStarved), 1'000);
  EXPECT_EQ(s.All(), 6'001);  // the rest is one-off time
  for (size_t i = 0; i + 1 < t.bins.size(); ++i) {
    const TimelineSummary::Bin& b = t.bins[i];
    int64_t in_bin = b.busy_ns + b.one_off_ns;
    for (int64_t v : b.idle_ns) in_bin += v;
    EXPECT_EQ(in_bin, t.bin_ns) << "bin " << i;
  }
}

TEST(TimelineSummaryTest, AnIntervalLandsInTheBinsItCovers) {
  const TimelineSummary t = SummarizeTimeline({0, 1'000}, {{250, 260}}, {}, 10);
  ASSERT_EQ(t.bin_ns, 100);
  ASSERT_EQ(t.bins.size(), 10u);
  for (size_t i = 0; i < t.bins.size(); ++i) EXPECT_EQ(t.bins[i].busy_ns, i == 2 ? 10 : 0);
}

TEST(TimelineSummaryTest, AnEmptyWindowHasNoSummary) {
  const TimelineSummary t = SummarizeTimeline({5, 5}, {}, {}, 600);
  EXPECT_EQ(t.bin_ns, 0);
  EXPECT_TRUE(t.bins.empty());
}

TEST(TimelineSummaryTest, CoarseningKeepsTheSums) {
  TimelineSummary t = SummarizeTimeline({0, 1'003}, {{0, 400}, {900, 1'003}},
                                        {{400, 900, Subcause::kLaunchOverhead}}, 600);
  const Totals before = Sum(t);
  const int64_t bin = t.bin_ns;
  CoarsenTimeline(7, &t);
  EXPECT_EQ(t.bin_ns, 7 * bin);
  const Totals after = Sum(t);
  EXPECT_EQ(after.busy, before.busy);
  EXPECT_EQ(after.idle, before.idle);
  EXPECT_EQ(after.one_off, before.one_off);
  EXPECT_GE(static_cast<int64_t>(t.bins.size()) * t.bin_ns, 1'003);
}

TEST(TimelineSummaryTest, WindowsAddUpWithinTheBinLimitAndKeepEveryColumnsTotal) {
  // Three windows of a sampled collection, far apart: the sum covers the whole span.
  TimelineSummary sum;
  Totals want;
  for (int w = 0; w < 3; ++w) {
    const int64_t start = w * 1'000'000;
    const TimelineSummary one = SummarizeTimeline(
        {start, start + 10'000}, {{start, start + 3'000}},
        {{start + 3'000, start + 9'000, Subcause::kCommWait}}, TimelineSummary::kBins);
    const Totals s = Sum(one);
    want.busy += s.busy;
    want.one_off += s.one_off;
    for (int c = 0; c < kNumCauses; ++c) want.idle[c] += s.idle[c];
    AddTimeline(one, &sum);
  }
  EXPECT_EQ(sum.start_ns, 0);
  EXPECT_LE(sum.bins.size(), static_cast<size_t>(TimelineSummary::kBins));
  EXPECT_GE(sum.start_ns + static_cast<int64_t>(sum.bins.size()) * sum.bin_ns, 2'010'000);
  const Totals got = Sum(sum);
  EXPECT_EQ(got.busy, want.busy);
  EXPECT_EQ(got.idle, want.idle);
  EXPECT_EQ(got.one_off, want.one_off);
  // The time between the windows was not traced: the bins there hold nothing.
  const size_t middle = static_cast<size_t>(500'000 / sum.bin_ns);
  EXPECT_EQ(sum.bins[middle].busy_ns + sum.bins[middle].one_off_ns, 0);
}

TEST(TimelineSummaryTest, AnalysisBinsTheWholeWindowOfEachDevice) {
  // Busy, a data-starved gap, busy, a sync-bound wait, busy.
  const Timeline t = TimelineBuilder()
                         .Launch(1, 0, 5)
                         .Kernel(10, 1'000)
                         .Data(1, 1'000, 3'000)
                         .Launch(1, 3'000, 3'010)
                         .Kernel(3'020, 4'000)
                         .Launch(1, 4'000, 4'010)
                         .Kernel(4'020, 5'000)
                         .Build();
  absl::StatusOr<Report> r = Analyze(t, AnalysisOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->devices.size(), 1u);
  const DeviceReport& d = r->devices[0];
  ASSERT_GT(d.timeline.bin_ns, 0);
  EXPECT_EQ(d.timeline.start_ns, d.window_start_ns);
  EXPECT_LE(d.timeline.bins.size(), static_cast<size_t>(TimelineSummary::kBins));
  const Totals s = Sum(d.timeline);
  EXPECT_EQ(s.All(), d.window_ns);
  // The steady state's idle time by cause is the device's, exactly.
  for (int c = 0; c < kNumCauses; ++c) {
    EXPECT_EQ(s.idle[c], d.idle.CauseNs(static_cast<Cause>(c))) << CauseName(static_cast<Cause>(c));
  }
  EXPECT_GE(s.busy, d.busy_ns);  // start-up and wind-down kernels too
  EXPECT_GT(CauseNs(s, Cause::kDataStarved), 0);
}

// A device's timeline over its own window: busy in the first half, sync-bound idle after.
TimelineSummary HalfBusy(const DeviceReport& d) {
  const int64_t mid = d.window_start_ns + d.window_ns / 2;
  return SummarizeTimeline({d.window_start_ns, d.window_end_ns}, {{d.window_start_ns, mid}},
                           {{mid, d.window_end_ns, Subcause::kHostSync}});
}

TEST(TimelineSummaryTest, AMergeOfManyRanksSharesTheBinsAndKeepsEachDevicesSums) {
  ::gpuidle::testing::JobSpec spec;
  spec.world_size = 128;
  spec.steps = 4;
  std::vector<Report> ranks;
  std::vector<std::string> names;
  std::vector<Totals> want;
  for (int r = 0; r < spec.world_size; ++r) {
    Report one = ::gpuidle::testing::RankReportOf(spec, r);
    one.devices[0].timeline = HalfBusy(one.devices[0]);
    want.push_back(Sum(one.devices[0].timeline));
    ranks.push_back(std::move(one));
    names.push_back(absl::StrCat("rank", r, ".json"));
  }
  absl::StatusOr<Report> job = MergeRanks(std::move(ranks), names, AnalysisOptions{});
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_EQ(job->devices.size(), 128u);
  size_t bins = 0;
  for (const DeviceReport& d : job->devices) {
    bins += d.timeline.bins.size();
    EXPECT_LE(d.timeline.bins.size(), 64u * TimelineSummary::kBins / 128);
    const Totals got = Sum(d.timeline);
    const Totals& w = want[static_cast<size_t>(*d.rank)];
    EXPECT_EQ(got.busy, w.busy);
    EXPECT_EQ(got.idle, w.idle);
    EXPECT_EQ(got.one_off, w.one_off);
  }
  EXPECT_LE(bins, 64u * TimelineSummary::kBins);
}

TEST(TimelineSummaryTest, ASampledCollectionBinsTheWholeSpanOfItsWindows) {
  WindowAggregate aggregate(AnalysisOptions{});
  Totals want;
  int64_t end = 0;
  for (int w = 0; w < 4; ++w) {
    const int64_t start = w * 10'000'000'000;  // a 1 s window every 10 s
    Report r;
    r.source = "gpuidle";
    DeviceReport& d = r.devices.emplace_back();
    d.window_start_ns = d.steady_start_ns = start;
    d.window_end_ns = d.steady_end_ns = end = start + 1'000'000'000;
    d.window_ns = 1'000'000'000;
    d.busy_ns = d.window_ns / 2;
    d.idle[Subcause::kHostSync] = d.window_ns / 2;
    d.idle_ns = d.window_ns / 2;
    d.timeline = HalfBusy(d);
    const Totals s = Sum(d.timeline);
    want.busy += s.busy;
    for (int c = 0; c < kNumCauses; ++c) want.idle[c] += s.idle[c];
    aggregate.Add(start, end, &r);
  }
  const std::optional<Report> r = aggregate.Result();
  ASSERT_TRUE(r.has_value());
  const TimelineSummary& t = r->devices.at(0).timeline;
  EXPECT_EQ(t.start_ns, 0);
  EXPECT_LE(t.bins.size(), static_cast<size_t>(TimelineSummary::kBins));
  EXPECT_GE(t.start_ns + static_cast<int64_t>(t.bins.size()) * t.bin_ns, end);
  const Totals got = Sum(t);
  EXPECT_EQ(got.busy, want.busy);
  EXPECT_EQ(got.idle, want.idle);
  // The idle time of the bins is the device's, summed over the windows.
  EXPECT_EQ(CauseNs(got, Cause::kSyncBound), r->devices[0].idle.CauseNs(Cause::kSyncBound));
}

TEST(TimelineSummary, GpuReadingsAreMeansPerBinThatMergingKeeps) {
  Timeline readings;
  // Bins of 10 us over [0, 40) us: NVML readings in bins 0 and 1, a PM sample over bins 1 and 2.
  for (const auto& [at, clock] : {std::pair{1'000, 1000u}, {3'000, 2000u}, {12'000, 1800u}}) {
    GpuMetricSample s;
    s.time_ns = at;
    s.sm_clock_mhz = clock;
    s.sm_clock_max_mhz = 1980;
    s.power_mw = clock * 100;
    s.power_limit_mw = 700'000;
    readings.gpu_metrics.push_back(s);
  }
  GpuThroughputSample pm;
  pm.start_ns = 15'000;
  pm.end_ns = 30'000;
  pm.sm_active_pct = 80;
  readings.gpu_throughput.push_back(pm);
  TimelineSummary t = SummarizeTimeline(Interval{0, 40'000}, {}, {}, 4);
  AddGpuReadings(readings, 0, &t);
  ASSERT_EQ(t.gpu.size(), 4u);
  EXPECT_EQ(t.sm_clock_max_mhz, 1980u);
  EXPECT_EQ(t.gpu[0].samples, 2);
  EXPECT_EQ(t.gpu[0].sm_clock_mhz, 1500u);
  EXPECT_EQ(t.gpu[0].power_mw, 150'000u);
  EXPECT_LT(t.gpu[0].sm_active_pct, 0);
  EXPECT_EQ(t.gpu[1].sm_clock_mhz, 1800u);
  EXPECT_EQ(t.gpu[1].pm_ns, 5'000);
  EXPECT_EQ(t.gpu[2].pm_ns, 10'000);
  EXPECT_DOUBLE_EQ(t.gpu[2].sm_active_pct, 80);
  EXPECT_EQ(t.gpu[3].samples, 0);
  EXPECT_EQ(t.gpu[3].pm_ns, 0);
  // Coarsened: means weighted by the readings merged.
  CoarsenTimeline(2, &t);
  ASSERT_EQ(t.gpu.size(), 2u);
  EXPECT_EQ(t.gpu[0].samples, 3);
  EXPECT_EQ(t.gpu[0].sm_clock_mhz, 1600u);
  EXPECT_EQ(t.gpu[0].pm_ns, 5'000);
  EXPECT_DOUBLE_EQ(t.gpu[1].sm_active_pct, 80);
  // Another device has none: no column at all.
  TimelineSummary other = SummarizeTimeline(Interval{0, 40'000}, {}, {}, 4);
  AddGpuReadings(readings, 1, &other);
  EXPECT_TRUE(other.gpu.empty());
  // A later window without readings keeps the bins' count and the readings of the first.
  TimelineSummary later = SummarizeTimeline(Interval{40'000, 80'000}, {}, {}, 2);
  AddTimeline(later, &t);
  ASSERT_EQ(t.gpu.size(), t.bins.size());
  EXPECT_EQ(t.gpu[0].samples, 3);
}

// Requests in flight are a sum per bin, like the time columns: coarsened bins and windows added
// to a sum keep its total exactly, and a window without requests adds empty bins.
TEST(TimelineSummary, RequestsInFlightAddUpLikeTheTimeColumns) {
  TimelineSummary t = SummarizeTimeline(Interval{0, 40'000}, {}, {}, 4);
  t.in_flight_ns = {10'000, 25'000, 0, 7'000};
  CoarsenTimeline(2, &t);
  EXPECT_EQ(t.in_flight_ns, (std::vector<int64_t>{35'000, 7'000}));
  // A window that straddles the sum's bins: shared by overlap, its total kept.
  TimelineSummary later = SummarizeTimeline(Interval{45'000, 75'000}, {}, {}, 3);
  later.in_flight_ns = {3'333, 10'000, 20'001};
  AddTimeline(later, &t);
  ASSERT_EQ(t.in_flight_ns.size(), t.bins.size());
  int64_t total = 0;
  for (int64_t v : t.in_flight_ns) total += v;
  EXPECT_EQ(total, 35'000 + 7'000 + 3'333 + 10'000 + 20'001);
  EXPECT_EQ(t.in_flight_ns[0], 35'000);  // the first window's bins keep theirs
  // A window without requests: the column grows with zeros.
  TimelineSummary quiet = SummarizeTimeline(Interval{200'000, 240'000}, {}, {}, 4);
  AddTimeline(quiet, &t);
  ASSERT_EQ(t.in_flight_ns.size(), t.bins.size());
  EXPECT_EQ(t.in_flight_ns.back(), 0);
  // ... and a sum without them that takes a window with them starts the column.
  TimelineSummary none = SummarizeTimeline(Interval{0, 40'000}, {}, {}, 4);
  TimelineSummary busy = SummarizeTimeline(Interval{40'000, 80'000}, {}, {}, 4);
  busy.in_flight_ns = {1, 2, 3, 4};
  AddTimeline(busy, &none);
  ASSERT_EQ(none.in_flight_ns.size(), none.bins.size());
  EXPECT_EQ(none.in_flight_ns, (std::vector<int64_t>{0, 0, 0, 0, 1, 2, 3, 4}));
}

}  // namespace
}  // namespace gpuidle::internal
