// Invariants of the idle accounting on many random timelines: busy + idle = window, causes
// sum to idle, steps tile their spans, results are deterministic.
#include <algorithm>
#include <array>
#include <random>
#include <vector>

#include "analysis/analyze.h"
#include "gpuidle/analyze.h"
#include "gtest/gtest.h"
#include "testing/random_timeline.h"

namespace gpuidle {
namespace {

using ::gpuidle::testing::RandomTimeline;

// Busy time computed the slow, obvious way: sort the kernel intervals and merge them.
int64_t OracleBusyNs(const internal::DeviceTimeline& d, int64_t lo, int64_t hi) {
  std::vector<std::pair<int64_t, int64_t>> v;
  for (const internal::DeviceOp& op : d.ops) {
    if (op.kind != internal::OpKind::kKernel) continue;
    const int64_t s = std::max(op.start_ns, lo), e = std::min(op.end_ns, hi);
    if (e > s) v.emplace_back(s, e);
  }
  std::sort(v.begin(), v.end());
  int64_t total = 0, cur_s = 0, cur_e = -1;
  for (auto [s, e] : v) {
    if (s > cur_e) {
      if (cur_e > cur_s) total += cur_e - cur_s;
      cur_s = s;
      cur_e = e;
    } else {
      cur_e = std::max(cur_e, e);
    }
  }
  if (cur_e > cur_s) total += cur_e - cur_s;
  return total;
}

TEST(Invariants, HoldOnRandomTimelines) {
  std::mt19937_64 rng(20261130);
  IdleBreakdown seen;  // the generator must reach every subcause, or the test proves little
  for (int iteration = 0; iteration < 500; ++iteration) {
    SCOPED_TRACE(::testing::Message() << "iteration " << iteration);
    const internal::Timeline t = RandomTimeline(rng);
    AnalysisOptions options;
    options.launch_gap_max_ns = 1000 * (1 + static_cast<int64_t>(rng() % 2000));
    // Queued waits past a short dispatch latency: unattributed, or behind another process.
    options.dispatch_latency_max_ns = 1000 * (1 + static_cast<int64_t>(rng() % 100));
    absl::StatusOr<Report> r = internal::Analyze(t, options);
    if (t.devices.empty()) continue;
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->devices.size(), t.devices.size());
    for (size_t i = 0; i < t.devices.size(); ++i) {
      const DeviceReport& d = r->devices[i];
      ASSERT_EQ(d.device, t.devices[i].device);
      // Phases: start-up, steady state, wind-down tile the window; one-off parts tile the
      // start-up and the wind-down; the steady state is busy + idle + its one-off time.
      EXPECT_LE(d.window_start_ns, d.steady_start_ns);
      EXPECT_LE(d.steady_start_ns, d.steady_end_ns);
      EXPECT_LE(d.steady_end_ns, d.window_end_ns);
      EXPECT_EQ(d.busy_ns, OracleBusyNs(t.devices[i], d.steady_start_ns, d.steady_end_ns));
      EXPECT_EQ(d.busy_ns + d.idle_ns + d.SteadyOneOffNs(), d.PhaseNs(Phase::kSteady));
      EXPECT_EQ(
          d.PhaseNs(Phase::kStartUp) + d.PhaseNs(Phase::kSteady) + d.PhaseNs(Phase::kWindDown),
          d.window_ns);
      std::array<int64_t, kNumPhases> parts{};
      for (const OneOffTime& o : d.one_off) {
        EXPECT_GT(o.ns, 0);
        EXPECT_GT(o.count, 0);
        parts[static_cast<int>(o.phase)] += o.ns;
      }
      EXPECT_EQ(parts[static_cast<int>(Phase::kStartUp)], d.PhaseNs(Phase::kStartUp));
      EXPECT_EQ(parts[static_cast<int>(Phase::kWindDown)], d.PhaseNs(Phase::kWindDown));
      EXPECT_EQ(d.idle.TotalNs(), d.idle_ns);
      int64_t by_cause = 0;
      for (int c = 0; c < kNumCauses; ++c) by_cause += d.idle.CauseNs(static_cast<Cause>(c));
      EXPECT_EQ(by_cause, d.idle_ns);
      for (int64_t ns : d.idle.ns) EXPECT_GE(ns, 0);
      seen += d.idle;
      EXPECT_LE(d.exposed_comm_ns, d.comm_ns);
      EXPECT_LE(d.comm_ns, d.busy_ns);

      // Steps: each step's busy + idle is its span, and steps never overlap.
      int64_t last_end = INT64_MIN;
      IdleBreakdown steps_idle;
      for (const StepReport& s : r->steps) {
        if (s.device != d.device) continue;
        EXPECT_LE(s.start_ns, s.end_ns);
        EXPECT_GE(s.start_ns, last_end);
        last_end = s.end_ns;
        EXPECT_GE(s.one_off_ns, 0);
        EXPECT_EQ(s.busy_ns + s.idle.TotalNs() + s.one_off_ns, s.end_ns - s.start_ns);
        steps_idle += s.idle;
      }
      for (int k = 0; k < kNumSubcauses; ++k) EXPECT_LE(steps_idle.ns[k], d.idle.ns[k]);
    }
    for (const GapRecord& g : r->longest_gaps) EXPECT_LT(g.start_ns, g.end_ns);

    // Deterministic: the same input gives the same report, byte for byte.
    absl::StatusOr<Report> again = internal::Analyze(t, options);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*FormatReport(*r, "json"), *FormatReport(*again, "json"));
  }
  for (int k = 0; k < kNumSubcauses; ++k) {
    const auto s = static_cast<Subcause>(k);
    if (s == Subcause::kCommWait) continue;  // needs several ranks; covered in analyze_test
    EXPECT_GT(seen[s], 0) << QualifiedSubcauseName(s) << " never occurred";
  }
}

}  // namespace
}  // namespace gpuidle
