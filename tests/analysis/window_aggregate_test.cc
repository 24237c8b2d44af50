// Sampled collection: windows analysed one at a time and folded into one report.
#include "analysis/window_aggregate.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "gmock/gmock.h"
#include "gpuidle/analyze.h"
#include "gtest/gtest.h"
#include "testing/analysis_helpers.h"
#include "testing/json.h"
#include "testing/timeline_builder.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::MustAnalyze;
using ::gpuidle::testing::OnlyDevice;
using ::gpuidle::testing::TimelineBuilder;
using ::testing::HasSubstr;

constexpr double kStepUs = 10'000;

// Steps [first, first + count) of a training loop, each 10 ms: the thread waits 3 ms in the
// DataLoader (the GPU idles), then launches kernels of 600 us with 100 us between them (launch
// gaps), and every fifth step syncs for 1 ms at its end.
Timeline Steps(int first, int count) {
  TimelineBuilder b;
  for (int s = first; s < first + count; ++s) {
    const double t0 = s * kStepUs;
    b.Step(1, t0, t0 + kStepUs, "gpuidle.step#" + std::to_string(s + 1));
    b.Data(1, t0, t0 + 3000);
    double t = t0 + 3000;
    for (int k = 0; k < 9; ++k) {
      b.Launch(1, t, t + 10);
      b.Kernel(t + 20, t + 620);
      t += 700;
    }
    if (s % 5 == 4) b.Sync(1, t, t + 1000);
  }
  return b.Build();
}

// Closes a window of steps [first, first + count) into the aggregate; the window's edges are
// where its first step begins and its last ends.
void AddWindow(WindowAggregate& aggregate, int first, int count) {
  const Report window = MustAnalyze(Steps(first, count), aggregate.WindowOptions());
  aggregate.Add(static_cast<int64_t>(first * kStepUs * 1000),
                static_cast<int64_t>((first + count) * kStepUs * 1000), &window);
}

double Share(const DeviceReport& d, Cause c) {
  return static_cast<double>(d.idle.CauseNs(c)) / static_cast<double>(d.idle_ns);
}

TEST(WindowAggregate, SumsTheSteadyStatesOfItsWindowsAndStatesTheCoverage) {
  WindowAggregate aggregate(AnalysisOptions{});
  EXPECT_FALSE(aggregate.Result().has_value());
  AddWindow(aggregate, 0, 20);
  AddWindow(aggregate, 100, 20);
  AddWindow(aggregate, 200, 20);
  const std::optional<Report> r = aggregate.Result();
  ASSERT_TRUE(r.has_value());
  ASSERT_TRUE(r->coverage.has_value());
  EXPECT_EQ(r->coverage->windows, 3);
  EXPECT_EQ(r->coverage->traced_ns, 3 * 20 * 10'000'000LL);
  EXPECT_EQ(r->coverage->span_ns, 220 * 10'000'000LL);

  ASSERT_EQ(r->devices.size(), 1u);
  const DeviceReport& d = r->devices[0];
  int64_t steady = 0, busy = 0, idle = 0, steps = 0, kernels = 0, steady_kernels = 0;
  for (int first : {0, 100, 200}) {
    const Report w = MustAnalyze(Steps(first, 20), AnalysisOptions{});
    steady += w.devices[0].PhaseNs(Phase::kSteady);
    busy += w.devices[0].busy_ns;
    idle += w.devices[0].idle_ns;
    steps += w.devices[0].step_count;
    kernels += w.devices[0].kernel_count;
    steady_kernels += w.devices[0].graph_replays.kernels_alone;
  }
  EXPECT_EQ(d.PhaseNs(Phase::kSteady), steady);
  EXPECT_EQ(d.busy_ns, busy);
  EXPECT_EQ(d.idle_ns, idle);
  EXPECT_EQ(d.idle.TotalNs(), d.idle_ns);
  EXPECT_EQ(d.step_count, steps);
  EXPECT_EQ(d.kernel_count, kernels);
  EXPECT_GT(steady_kernels, 0);
  EXPECT_EQ(d.graph_replays.kernels_alone, steady_kernels);
  // The invariant of the headline holds for the sums.
  EXPECT_EQ(d.busy_ns + d.idle_ns + d.SteadyOneOffNs(), d.PhaseNs(Phase::kSteady));
  EXPECT_EQ(r->steps.size(), static_cast<size_t>(steps));
  EXPECT_FALSE(r->advice.empty());
  EXPECT_EQ(r->advice[0].subcause, Subcause::kDataLoader);
}

TEST(WindowAggregate, SharesMatchTheWholeRunsTrace) {
  const Report whole = MustAnalyze(Steps(0, 300), AnalysisOptions{});
  WindowAggregate aggregate(AnalysisOptions{});
  for (int first = 0; first < 300; first += 30) AddWindow(aggregate, first, 5);
  const std::optional<Report> sampled = aggregate.Result();
  ASSERT_TRUE(sampled.has_value());
  for (Cause c : {Cause::kDataStarved, Cause::kLaunchBound, Cause::kSyncBound}) {
    EXPECT_NEAR(Share(sampled->devices[0], c), Share(whole.devices[0], c), 0.05) << CauseName(c);
  }
}

TEST(WindowAggregate, ARunThatEndsInItsFirstWindowIsReportedAsIfUnsampled) {
  AnalysisOptions options;
  options.max_offenders = 2;
  WindowAggregate aggregate(options);
  AddWindow(aggregate, 0, 30);
  const std::optional<Report> r = aggregate.Result();
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->coverage.has_value());
  EXPECT_EQ(*FormatReport(*r, "json"), *FormatReport(MustAnalyze(Steps(0, 30), options), "json"));
  EXPECT_EQ(*FormatReport(*r, "text"), *FormatReport(MustAnalyze(Steps(0, 30), options), "text"));
}

// gpuidle run's default: the first minute whole, then windows. A job that ended before the
// next window (issue 28: an 89 s job read as if its 60 s were all of it) says what it did not
// see; one that stopped in its first window (or just after it) is reported as if unsampled.
TEST(WindowAggregate, AFirstWindowThatTheRunOutlivedStatesTheCoverage) {
  const int64_t kMs = 1'000'000;
  WindowAggregate ended_in_it(AnalysisOptions{});
  AddWindow(ended_in_it, 0, 20);      // [0, 200 ms)
  ended_in_it.CoverUntil(250 * kMs);  // 50 ms later: within the tolerance
  ASSERT_TRUE(ended_in_it.Result().has_value());
  EXPECT_FALSE(ended_in_it.Result()->coverage.has_value());

  WindowAggregate outlived(AnalysisOptions{});
  AddWindow(outlived, 0, 20);
  outlived.CoverUntil(1500 * kMs);
  const std::optional<Report> r = outlived.Result();
  ASSERT_TRUE(r.has_value());
  ASSERT_TRUE(r->coverage.has_value());
  EXPECT_EQ(r->coverage->windows, 1);
  EXPECT_EQ(r->coverage->traced_ns, 200 * kMs);
  EXPECT_EQ(r->coverage->span_ns, 1500 * kMs);
  // The figures are the window's own, as before.
  EXPECT_EQ(r->steps.size(), ended_in_it.Result()->steps.size());
  absl::StatusOr<std::string> text = FormatReport(*r, "text");
  ASSERT_TRUE(text.ok());
  EXPECT_THAT(
      *text, HasSubstr("traced 200 ms (13.3%) of 1.50 s in 1 window; nothing traced after 200 ms"));
  // With the plan it followed (gpuidle run's auto: the first window whole, then 1 s of 40 s).
  WindowAggregate planned(AnalysisOptions{});
  planned.SetPlan(150 * kMs, 10 * kMs, 400 * kMs);
  AddWindow(planned, 0, 20);
  planned.CoverUntil(1500 * kMs);
  text = FormatReport(*planned.Result(), "text");
  ASSERT_TRUE(text.ok());
  EXPECT_THAT(*text, HasSubstr(": the first 150 ms whole, then 10.0 ms of every"));
  EXPECT_THAT(*text, HasSubstr("400 ms; nothing traced after 200 ms"));
  const rapidjson::Document json =
      ::gpuidle::testing::Parse(*FormatReport(*planned.Result(), "json"));
  EXPECT_EQ(json["coverage"]["traced_until_ns"].GetInt64(), 200 * kMs);
  EXPECT_EQ(json["coverage"]["first_window_ns"].GetInt64(), 150 * kMs);
  EXPECT_EQ(json["coverage"]["window_ns"].GetInt64(), 10 * kMs);
  EXPECT_EQ(json["coverage"]["period_ns"].GetInt64(), 400 * kMs);

  // Several windows: the span runs to the end of the run, never back.
  WindowAggregate windows(AnalysisOptions{});
  AddWindow(windows, 0, 20);
  AddWindow(windows, 100, 20);
  windows.CoverUntil(3000 * kMs);
  windows.CoverUntil(2000 * kMs);
  ASSERT_TRUE(windows.Result()->coverage.has_value());
  EXPECT_EQ(windows.Result()->coverage->span_ns, 3000 * kMs);
  EXPECT_EQ(windows.Result()->coverage->traced_ns, 400 * kMs);
}

TEST(WindowAggregate, KeepsTheLongestGapsAndMergesOffendersAcrossWindows) {
  AnalysisOptions options;
  options.max_gap_records = 5;
  options.max_offenders = 3;
  WindowAggregate aggregate(options);
  AddWindow(aggregate, 0, 10);
  AddWindow(aggregate, 50, 10);
  const Report one = MustAnalyze(Steps(0, 10), aggregate.WindowOptions());
  const std::optional<Report> r = aggregate.Result();
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->longest_gaps.size(), 5u);
  for (size_t i = 1; i < r->longest_gaps.size(); ++i) {
    EXPECT_GE(r->longest_gaps[i - 1].end_ns - r->longest_gaps[i - 1].start_ns,
              r->longest_gaps[i].end_ns - r->longest_gaps[i].start_ns);
  }
  ASSERT_FALSE(r->offenders.empty());
  EXPECT_LE(r->offenders.size(), 3u);
  // The same offender in both windows: one row with both windows' idle time and gaps.
  ASSERT_FALSE(one.offenders.empty());
  EXPECT_EQ(r->offenders[0].what, one.offenders[0].what);
  EXPECT_EQ(r->offenders[0].idle_ns, 2 * one.offenders[0].idle_ns);
  EXPECT_EQ(r->offenders[0].count, 2 * one.offenders[0].count);
}

TEST(WindowAggregate, LeavesTheWarmUpOutOfTheFirstWindowOnly) {
  AnalysisOptions options;
  options.skip_steps = 3;
  WindowAggregate aggregate(options);
  EXPECT_EQ(aggregate.WindowOptions().skip_steps, 3);
  AddWindow(aggregate, 0, 10);
  EXPECT_EQ(aggregate.WindowOptions().skip_steps, 0);
  EXPECT_EQ(aggregate.Result()->options.skip_steps, 3);
}

TEST(WindowAggregate, AWindowWithoutActivityCountsAsTracedTime) {
  WindowAggregate aggregate(AnalysisOptions{});
  aggregate.Add(0, 1'000'000'000, nullptr);
  EXPECT_FALSE(aggregate.Result().has_value());
  AddWindow(aggregate, 1000, 10);
  AddWindow(aggregate, 2000, 10);
  const std::optional<Report> r = aggregate.Result();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->coverage->windows, 3);
  EXPECT_EQ(r->coverage->traced_ns, 1'000'000'000 + 2 * 10 * 10'000'000LL);
}

TEST(WindowAggregate, WritersShowTheCoverageAndThePhaseSums) {
  WindowAggregate aggregate(AnalysisOptions{});
  AddWindow(aggregate, 0, 10);
  AddWindow(aggregate, 90, 10);
  const Report r = *aggregate.Result();
  const std::string text = *FormatReport(r, "text");
  EXPECT_THAT(text, HasSubstr("sampled: traced 200 ms (20.0%) of "));
  EXPECT_THAT(text, HasSubstr("in 2 windows"));
  const rapidjson::Document json = ::gpuidle::testing::Parse(*FormatReport(r, "json"));
  ASSERT_TRUE(json.HasMember("coverage"));
  EXPECT_EQ(json["coverage"]["windows"].GetInt64(), 2);
  EXPECT_EQ(json["coverage"]["traced_ns"].GetInt64(), 200'000'000);
  EXPECT_EQ(json["coverage"]["span_ns"].GetInt64(), 1'000'000'000);
  // The steady phase's time is the windows' sum, not its span (which includes the pause).
  const int64_t steady = r.devices[0].PhaseNs(Phase::kSteady);
  EXPECT_LT(steady, r.devices[0].steady_end_ns - r.devices[0].steady_start_ns);
  EXPECT_EQ(json["devices"][0]["phases"]["steady"]["ns"].GetInt64(), steady);
  // An unsampled report has no coverage key.
  EXPECT_THAT(*FormatReport(MustAnalyze(Steps(0, 10)), "json"),
              ::testing::Not(HasSubstr("\"coverage\"")));
}

// Hours of windows: what the aggregate keeps stays bounded (steps, gaps, offenders, warnings).
TEST(WindowAggregate, StaysBoundedOverThousandsOfWindows) {
  AnalysisOptions options;
  WindowAggregate aggregate(options);
  Report window = MustAnalyze(Steps(0, 20), aggregate.WindowOptions());
  for (int i = 0; i < 100; ++i) window.warnings.push_back("warning " + std::to_string(i % 7));
  for (int w = 0; w < 2'000; ++w) {
    const int64_t start = int64_t{w} * 10'000'000'000;  // a 200 ms window every 10 s
    aggregate.Add(start, start + 200'000'000, &window);
  }
  const Report r = *aggregate.Result();
  EXPECT_EQ(r.coverage->windows, 2'000);
  EXPECT_EQ(r.steps.size(), Report::kMaxStepRows);
  EXPECT_EQ(r.steps.size() + r.steps_not_listed, 2'000u * window.steps.size());
  EXPECT_LE(r.longest_gaps.size(), static_cast<size_t>(options.max_gap_records));
  EXPECT_LE(r.offenders.size(), static_cast<size_t>(options.max_offenders));
  EXPECT_LE(r.warnings.size(), 100u);
  EXPECT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].step_count, 2'000 * window.devices[0].step_count);
  // The metrics' view: the same figures without the step rows.
  const Report metrics = *aggregate.Result(/*with_steps=*/false);
  EXPECT_TRUE(metrics.steps.empty());
  EXPECT_EQ(metrics.devices[0].idle_ns, r.devices[0].idle_ns);
}

TEST(WindowAggregate, SumsTheCollectivesOfItsWindowsByKindAndKeepsTheirRows) {
  WindowAggregate aggregate(AnalysisOptions{});
  const auto window = [](int64_t at_us, int collectives) {
    TimelineBuilder b;
    for (int i = 0; i < collectives; ++i) {
      const double at = static_cast<double>(at_us + 100 * i);
      b.Launch(1, at, at + 1).Kernel(at + 2, at + 40).NcclKernel(at + 40, at + 90);
    }
    return b.Build();
  };
  const Report first = MustAnalyze(window(0, 10), aggregate.WindowOptions());
  const Report second = MustAnalyze(window(100'000, 5), aggregate.WindowOptions());
  aggregate.Add(0, 2'000'000, &first);
  aggregate.Add(100'000'000, 101'000'000, &second);
  const std::optional<Report> r = aggregate.Result();
  ASSERT_TRUE(r.has_value());
  const DeviceReport& d = OnlyDevice(*r);
  ASSERT_EQ(d.collectives.size(), 1u);
  EXPECT_EQ(d.collectives[0].count,
            first.devices[0].collectives[0].count + second.devices[0].collectives[0].count);
  EXPECT_EQ(d.collectives[0].ns,
            first.devices[0].collectives[0].ns + second.devices[0].collectives[0].ns);
  EXPECT_EQ(d.collective_timings.size(), 15u);
  EXPECT_EQ(d.collective_timings.back().start_ns,
            second.devices[0].collective_timings.back().start_ns);
}

// The readings of a live capture on Steps(first, count): NVML reads device 0 in each step's
// DataLoader wait (idle) and in the middle of its first `busy_readings` kernels (busy, at
// `clock_mhz` and `power_w`, for the clock-event reason `events`).
struct Readings {
  uint32_t clock_mhz = 1980;
  uint64_t events = 0;
  uint32_t power_w = 400;
  uint32_t temperature_c = 60;
  int busy_readings = 1;
};
Timeline StepsRead(int first, int count, const Readings& r) {
  Timeline t = Steps(first, count);
  for (int s = first; s < first + count; ++s) {
    const double t0 = s * kStepUs;
    GpuMetricSample idle;
    idle.time_ns = static_cast<int64_t>((t0 + 1500) * 1000);
    idle.sm_clock_mhz = 1980;
    idle.sm_clock_max_mhz = 1980;
    idle.power_mw = 100'000;
    idle.power_limit_mw = 700'000;
    idle.temperature_c = r.temperature_c;
    t.gpu_metrics.push_back(idle);
    for (int k = 0; k < r.busy_readings; ++k) {
      GpuMetricSample busy = idle;
      busy.time_ns = static_cast<int64_t>((t0 + 3320 + 700 * k) * 1000);
      busy.sm_clock_mhz = r.clock_mhz;
      busy.power_mw = r.power_w * 1000;
      busy.clock_events = r.events;
      busy.has_clock_events = true;
      t.gpu_metrics.push_back(busy);
    }
  }
  return t;
}

// A long job's device: healthy in its first window; in a later one power-capped, sharing the GPU
// with another process, and PM-sampled as memory-bound. The report says what all windows read.
TEST(WindowAggregate, GpuMetricsDescribeEveryWindowNotTheFirstAlone) {
  WindowAggregate aggregate(AnalysisOptions{});
  const Report first = MustAnalyze(StepsRead(0, 20, {}), aggregate.WindowOptions());
  aggregate.Add(0, 200'000'000, &first);

  Timeline t = StepsRead(100, 20,
                         {.clock_mhz = 1380,
                          .events = kClockEventPowerCap,
                          .power_w = 700,
                          .temperature_c = 83,
                          .busy_readings = 2});
  GpuProcessSeen other;  // ran kernels at each of this window's idle readings
  other.pid = 4242;
  other.memory_bytes = uint64_t{31} << 30;
  for (const GpuMetricSample& s : t.gpu_metrics) {
    if (s.sm_clock_mhz == 1980) other.busy_sample_ns.push_back(s.time_ns);
  }
  t.gpu_processes.push_back(other);
  for (const DeviceOp& op : t.devices[0].ops) {  // a PM sample inside each kernel
    GpuThroughputSample pm;
    pm.start_ns = op.start_ns + 100'000;
    pm.end_ns = op.start_ns + 400'000;
    pm.sm_active_pct = 99;
    pm.tensor_active_pct = 0;
    pm.dram_pct = 88;
    t.gpu_throughput.push_back(pm);
  }
  const Report second = MustAnalyze(t, aggregate.WindowOptions());
  aggregate.Add(1'000'000'000, 1'200'000'000, &second);

  const GpuMetrics& m1 = *first.devices[0].gpu_metrics;
  const GpuMetrics& m2 = *second.devices[0].gpu_metrics;
  // Each window's steady state has the same steps: twice the busy readings in the second.
  ASSERT_GT(m1.busy_samples, 0);
  ASSERT_EQ(m2.busy_samples, 2 * m1.busy_samples);
  ASSERT_EQ(m2.idle_samples, m1.idle_samples);
  EXPECT_TRUE(m1.findings.empty());
  const std::optional<Report> r = aggregate.Result();
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->devices.size(), 1u);
  ASSERT_TRUE(r->devices[0].gpu_metrics.has_value());
  const GpuMetrics& m = *r->devices[0].gpu_metrics;
  EXPECT_EQ(m.samples, m1.samples + m2.samples);
  EXPECT_EQ(m.busy_samples, 3 * m1.busy_samples);
  EXPECT_EQ(m.idle_samples, 2 * m1.idle_samples);
  EXPECT_EQ(m.sm_clock_median_mhz, 1580u);  // (1 x 1980 + 2 x 1380) / 3
  EXPECT_EQ(m.power_median_mw, 600'000u);   // (1 x 400 + 2 x 700) / 3 W
  EXPECT_DOUBLE_EQ(m.slow_clock_share, 2.0 / 3);
  EXPECT_EQ(m.slow_clock_reason, "power_cap");
  EXPECT_EQ(m.temperature_max_c, 83u);
  ASSERT_EQ(m.other_processes.size(), 1u);
  EXPECT_EQ(m.other_processes[0].pid, 4242);
  EXPECT_EQ(m.other_processes[0].idle_samples_busy, m2.idle_samples);
  ASSERT_TRUE(m.throughput.has_value());
  EXPECT_EQ(m.throughput->busy_samples, m2.throughput->busy_samples);
  EXPECT_DOUBLE_EQ(m.throughput->dram_pct, 88);
  ASSERT_EQ(m.findings.size(), 3u);
  EXPECT_EQ(m.findings[0].kind, "memory_bound");
  EXPECT_EQ(m.findings[0].text,
            "busy, but memory-bound: DRAM at 88% of its peak while kernels ran, tensor pipes 0%, "
            "SMs active 99%");
  EXPECT_EQ(m.findings[1].kind, "clocks");
  EXPECT_EQ(m.findings[1].text,
            "busy, but at 1.58 of 1.98 GHz (median) with the SM clock under 90% of its maximum in "
            "67% of the busy readings (power cap); power 600 of 700 W, up to 83 C");
  EXPECT_EQ(m.findings[2].kind, "other_process");
  EXPECT_THAT(m.findings[2].text,
              ::testing::StartsWith("another process (pid 4242, 31.0 GiB) ran kernels on this GPU "
                                    "during at least 50% of this job's idle readings"));
  const std::string text = *FormatReport(*r, "text");
  EXPECT_THAT(text, HasSubstr("busy, but at 1.58 of 1.98 GHz"));

  // The steps keep their own readings (copied whole); the timeline's bins, those of both windows.
  ASSERT_EQ(r->steps.size(), first.steps.size() + second.steps.size());
  ASSERT_TRUE(r->steps.back().gpu.has_value());
  EXPECT_EQ(r->steps.back().gpu->sm_clock_median_mhz, 1380u);
  const auto readings = [](const TimelineSummary& s) {
    int64_t n = 0;
    for (const TimelineSummary::GpuBin& b : s.gpu) n += b.samples;
    return n;
  };
  EXPECT_EQ(readings(r->devices[0].timeline),
            readings(first.devices[0].timeline) + readings(second.devices[0].timeline));
}

}  // namespace
}  // namespace gpuidle::internal
