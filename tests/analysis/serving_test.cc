// Serving (docs/ANALYSIS.md, "Serving"): idle with no request in flight is no demand, idle while
// a request waited to be taken up is requests_waiting; the requests' figures and the advice.
// Times in microseconds.
#include "analysis/serving.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gpuidle/analyze.h"
#include "gtest/gtest.h"
#include "testing/analysis_helpers.h"
#include "testing/timeline_builder.h"

namespace gpuidle {
namespace {

using ::gpuidle::testing::kUs;
using ::gpuidle::testing::MustAnalyze;
using ::gpuidle::testing::OnlyDevice;
using ::gpuidle::testing::TimelineBuilder;
using internal::RangeKind;
using ::testing::HasSubstr;

int64_t NoDemandNs(const DeviceReport& d) {
  int64_t ns = 0;
  for (const OneOffTime& o : d.one_off) {
    if (o.kind == OneOffKind::kNoDemand) {
      EXPECT_EQ(o.phase, Phase::kSteady);
      ns += o.ns;
    }
  }
  return ns;
}

// clang-format off
// Two requests far apart: the GPU idles between them for lack of demand, which is not lost.
TEST(Serving, IdleWithNoRequestInFlightIsNoDemandNotLostTime) {
  const auto t = TimelineBuilder()
                     .Range(1, 0, 300, RangeKind::kRequest, "gpuidle.request:1")
                     .Launch(1, 10, 15).Kernel(20, 200)
                     .Range(1, 5000, 5300, RangeKind::kRequest, "gpuidle.request:2")
                     .Launch(1, 5010, 5015).Kernel(5020, 5200)
                     .Build();
  const Report r = MustAnalyze(t);
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(NoDemandNs(d), 4700 * kUs);  // [300, 5000)
  EXPECT_EQ(d.idle_ns, (100 + 20) * kUs);  // [200, 300) and [5000, 5020): requests running
  EXPECT_EQ(d.idle[Subcause::kRequestsWaiting], 0);
  EXPECT_EQ(d.busy_ns + d.idle_ns + d.SteadyOneOffNs(), d.PhaseNs(Phase::kSteady));
  ASSERT_TRUE(d.demand_ns.has_value());
  EXPECT_EQ(*d.demand_ns, (280 + 200) * kUs);  // the steady state [20, 5200) with a request
  EXPECT_EQ(d.demand_busy_ns, 360 * kUs);
  ASSERT_TRUE(r.serving.has_value());
  EXPECT_EQ(r.serving->requests, 2);
  EXPECT_EQ(r.serving->in_flight_max, 1);
  EXPECT_EQ(r.serving->latency.p50_ns, 300 * kUs);
  ASSERT_TRUE(r.verdict.has_value());
  EXPECT_FALSE(r.verdict->worth_fixing);
  EXPECT_THAT(*FormatReport(r, "text"), HasSubstr("not waste, nothing to fix"));
}

// A thread per request and one model: the second request waits for the first (its first launch
// comes when it gets the model); the GPU's gaps meanwhile are requests_waiting.
TEST(Serving, IdleWhileARequestWaitedToBeTakenUpIsRequestsWaiting) {
  const auto t = TimelineBuilder()
                     .Range(1, 0, 1000, RangeKind::kRequest, "gpuidle.request:1")
                     .Range(2, 100, 2000, RangeKind::kRequest, "gpuidle.request:2")
                     .Launch(1, 10, 15).Kernel(20, 200)
                     .Launch(1, 400, 405).Kernel(410, 600)
                     .Launch(1, 800, 805).Kernel(810, 990)
                     .Launch(2, 1000, 1005).Kernel(1010, 1200)
                     .Launch(2, 1500, 1505).Kernel(1510, 1990)
                     .Build();
  const Report r = MustAnalyze(t);
  const DeviceReport& d = OnlyDevice(r);
  EXPECT_EQ(NoDemandNs(d), 0);
  // [200, 410), [600, 810) and [990, 1000) while request 2 waited; [1000, 1010) and
  // [1200, 1510) are request 2's own.
  EXPECT_EQ(d.idle[Subcause::kRequestsWaiting], 430 * kUs);
  EXPECT_EQ(d.idle_ns, (430 + 10 + 310) * kUs);
  EXPECT_EQ(CauseOf(Subcause::kRequestsWaiting), Cause::kLaunchBound);
  ASSERT_TRUE(r.serving.has_value());
  const Serving& s = *r.serving;
  EXPECT_EQ(s.requests, 2);
  EXPECT_EQ(s.run_known, 2);
  EXPECT_EQ(s.queue.p99_ns, 900 * kUs);  // request 2: arrived at 100, taken up at 1000
  EXPECT_EQ(s.queue.p50_ns, 0);          // request 1 arrived to an idle server
  EXPECT_EQ(s.in_flight_max, 2);
  // The advice batches the two: a batch runs as long as one request's run while its GPU time
  // fits in it (no PM sampling here: small kernels, taking as long for two as for one).
  ASSERT_FALSE(r.advice.empty());
  const Advice& a = r.advice.front();
  EXPECT_EQ(a.subcause, Subcause::kRequestsWaiting);
  ASSERT_TRUE(a.batch.has_value());
  EXPECT_EQ(*a.batch, 2);
  ASSERT_TRUE(a.predicted_requests_per_s.has_value());
  // Runs: request 1 [0, 1000), request 2 [1000, 2000): 1000 us; GPU time per request (busy
  // 1220 us while there was demand, / 2) = 610 us.
  EXPECT_EQ(d.demand_busy_ns, 1220 * kUs);
  EXPECT_EQ(*a.predicted_latency_ns, 1000 * kUs);
  EXPECT_NEAR(*a.predicted_requests_per_s, 2 / 1000e-6, 1e-6);
  EXPECT_THAT(a.evidence, HasSubstr("a batch of 2 runs about as long as one request's run"));
}
// clang-format on

// The run of a request handed to another thread is the one with its id; an unnamed run is the
// request of its own thread that holds its start; a request without one was taken up when it
// arrived if no other request ran then; else it never counts as waiting (no launch of its own).
TEST(Serving, RunsAreMatchedByIdThenByThread) {
  const internal::Timeline t =
      TimelineBuilder()
          .Range(1, 0, 1000, RangeKind::kRequest, "gpuidle.request:a")
          .Range(9, 400, 1000, RangeKind::kRequestRun, "gpuidle.request_run:a")
          .Range(2, 100, 900, RangeKind::kRequest, "gpuidle.request")
          .Range(2, 300, 900, RangeKind::kRequestRun, "gpuidle.request_run")
          .Range(3, 200, 800, RangeKind::kRequest, "gpuidle.request:c")
          .Range(4, 500, 700, RangeKind::kRequest, "gpuidle.request:d")
          .Range(9, 500, 600, RangeKind::kRequestRun, "gpuidle.request_run:zzz")  // no request
          .Launch(9, 410, 415)
          .Kernel(420, 990)
          .Build();
  const internal::Demand demand(t);
  ASSERT_EQ(demand.requests().size(), 4u);
  EXPECT_EQ(demand.requests()[0].run_start_ns, 400 * kUs);
  EXPECT_EQ(demand.requests()[1].run_start_ns, 300 * kUs);
  EXPECT_EQ(demand.requests()[2].run_start_ns, 200 * kUs);  // none ran when it arrived
  // d arrived while others ran, and its thread launched nothing: never known to wait.
  EXPECT_FALSE(demand.requests()[3].run_start_ns.has_value());
  ASSERT_EQ(demand.waiting().size(), 1u);  // [0, 400) and [100, 300)
  EXPECT_EQ(demand.waiting()[0].start_ns, 0);
  EXPECT_EQ(demand.waiting()[0].end_ns, 400 * kUs);
  ASSERT_EQ(demand.in_flight().size(), 1u);
  EXPECT_EQ(demand.in_flight()[0].end_ns, 1000 * kUs);
}

TEST(Serving, SummarisesRateLatencyAndRequestsPerStep) {
  // Ten requests of 1..10 ms, one after another, each run from half of it; steps of 2 ms.
  TimelineBuilder b;
  double at = 0;
  for (int i = 1; i <= 10; ++i) {
    const double len = 1000.0 * i;
    b.Range(1, at, at + len, RangeKind::kRequest, "gpuidle.request:" + std::to_string(i));
    b.Range(1, at + len / 2, at + len, RangeKind::kRequestRun,
            "gpuidle.request_run:" + std::to_string(i));
    at += len;
  }
  const internal::Timeline t = b.Kernel(0, 1).Build();
  const internal::Demand demand(t);
  const std::vector<internal::Interval> steps = {{0, 2'000 * kUs}, {2'000 * kUs, 4'000 * kUs}};
  const Serving s = internal::SummariseServing(demand, {0, 55'000 * kUs}, steps);
  EXPECT_EQ(s.requests, 10);
  EXPECT_DOUBLE_EQ(s.requests_per_s, 10 / 0.055);
  EXPECT_EQ(s.latency.p50_ns, 5'000 * kUs);
  EXPECT_EQ(s.latency.p90_ns, 9'000 * kUs);
  EXPECT_EQ(s.latency.p99_ns, 10'000 * kUs);
  EXPECT_EQ(s.queue.p50_ns, 2'500 * kUs);
  EXPECT_EQ(s.run.p50_ns, 2'500 * kUs);
  EXPECT_DOUBLE_EQ(s.in_flight_mean, 1.0);
  EXPECT_EQ(s.in_flight_max, 1);  // one ends as the next arrives
  ASSERT_TRUE(s.batch_mean.has_value());
  EXPECT_DOUBLE_EQ(*s.batch_mean, (1 + 1) / 2.0);  // step 1: run 1; step 2: run 2 [2, 3 ms)
}

TEST(Serving, WindowsOfASampledRunAndRanksOfAJobAddUp) {
  Serving a;
  a.requests = 10;
  a.requests_per_s = 10;
  a.latency = {100, 200, 300};
  a.run_known = 10;
  a.queue = {10, 20, 30};
  a.run = {90, 180, 270};
  a.in_flight_mean = 1;
  a.in_flight_max = 2;
  Serving b = a;
  b.requests = 30;
  b.requests_per_s = 30;
  b.latency = {200, 400, 900};
  b.in_flight_mean = 3;
  b.in_flight_max = 5;
  // One after the other, 1 s each.
  Serving windows;
  int64_t span = 0;
  internal::AddServing(a, 1'000'000'000, false, &windows, &span);
  internal::AddServing(b, 1'000'000'000, false, &windows, &span);
  EXPECT_EQ(span, 2'000'000'000);
  EXPECT_EQ(windows.requests, 40);
  EXPECT_DOUBLE_EQ(windows.requests_per_s, 20);
  EXPECT_DOUBLE_EQ(windows.in_flight_mean, 2);
  EXPECT_EQ(windows.in_flight_max, 5);
  EXPECT_EQ(windows.latency.p50_ns, 175);  // (100 x 10 + 200 x 30) / 40
  EXPECT_EQ(windows.latency.p99_ns, 900);
  // Side by side: rates and concurrency add.
  Serving ranks;
  span = 0;
  internal::AddServing(a, 1'000'000'000, true, &ranks, &span);
  internal::AddServing(b, 1'000'000'000, true, &ranks, &span);
  EXPECT_DOUBLE_EQ(ranks.requests_per_s, 40);
  EXPECT_DOUBLE_EQ(ranks.in_flight_mean, 4);
  EXPECT_EQ(ranks.in_flight_max, 7);
}

// Two overlapping requests across 100 us bins: each bin holds their time in it, added (request
// nanoseconds), so that its mean in flight is that over the bin's traced time.
TEST(Serving, RequestsInFlightPerBinAreTheirTimeInTheBin) {
  const auto t = TimelineBuilder()
                     .Range(1, 50, 250, RangeKind::kRequest, "gpuidle.request:1")
                     .Range(2, 150, 320, RangeKind::kRequest, "gpuidle.request:2")
                     .Build();
  const internal::Demand demand(t);
  ASSERT_FALSE(demand.empty());
  TimelineSummary tl;
  tl.start_ns = 0;
  tl.bin_ns = 100 * kUs;
  tl.bins.resize(4);
  for (TimelineSummary::Bin& b : tl.bins) b.one_off_ns = tl.bin_ns;
  tl.bins[3].one_off_ns = 10 * kUs;  // the window ends at 310 us
  internal::AddInFlight(demand, {0, 310 * kUs}, &tl);
  // [0, 100): request 1 for 50 us; [100, 200): 1 for 100 and 2 for 50; [200, 300): 1 for 50
  // and 2 for 100; [300, 310): 2, cut at the window's end.
  EXPECT_THAT(tl.in_flight_ns, ::testing::ElementsAre(50 * kUs, 150 * kUs, 150 * kUs, 10 * kUs));
  std::vector<double> mean;
  for (size_t i = 0; i < tl.bins.size(); ++i) {
    mean.push_back(static_cast<double>(tl.in_flight_ns[i]) /
                   static_cast<double>(tl.bins[i].one_off_ns));
  }
  EXPECT_THAT(mean, ::testing::ElementsAre(0.5, 1.5, 1.5, 1.0));
  // No requests: no column.
  internal::AddInFlight(internal::Demand(TimelineBuilder().Kernel(0, 10).Build()), {0, 310 * kUs},
                        &tl);
  EXPECT_TRUE(tl.in_flight_ns.empty());
}

// The analysis fills the column for a serving process over the device's whole window, and only
// for one.
TEST(Serving, TheTimelineOfAServingProcessHasItsRequestsInFlight) {
  const auto t = TimelineBuilder()
                     .Range(1, 0, 300, RangeKind::kRequest, "gpuidle.request:1")
                     .Launch(1, 10, 15)
                     .Kernel(20, 200)
                     .Range(2, 100, 600, RangeKind::kRequest, "gpuidle.request:2")
                     .Launch(2, 400, 405)
                     .Kernel(410, 590)
                     .Build();
  const DeviceReport d = OnlyDevice(MustAnalyze(t));
  const TimelineSummary& tl = d.timeline;
  ASSERT_EQ(tl.in_flight_ns.size(), tl.bins.size());
  ASSERT_GT(tl.bins.size(), 1u);
  // Every request's time inside the timeline's window.
  const int64_t from = tl.start_ns, to = d.window_end_ns;
  int64_t want = 0;
  for (const auto& [a, e] : {std::pair{0 * kUs, 300 * kUs}, std::pair{100 * kUs, 600 * kUs}}) {
    want += std::max<int64_t>(0, std::min(e, to) - std::max(a, from));
  }
  int64_t got = 0;
  for (int64_t v : tl.in_flight_ns) got += v;
  EXPECT_EQ(got, want);
  EXPECT_GT(want, 0);
  // No bin holds more than two requests for all of its traced time.
  for (size_t i = 0; i < tl.bins.size(); ++i) {
    int64_t traced = tl.bins[i].busy_ns + tl.bins[i].one_off_ns;
    for (int64_t v : tl.bins[i].idle_ns) traced += v;
    EXPECT_LE(tl.in_flight_ns[i], 2 * traced) << "bin " << i;
  }
  const DeviceReport plain =
      OnlyDevice(MustAnalyze(TimelineBuilder().Launch(1, 10, 15).Kernel(20, 200).Build()));
  EXPECT_TRUE(plain.timeline.in_flight_ns.empty());
}

}  // namespace
}  // namespace gpuidle
