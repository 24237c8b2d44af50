// Invariants of the idle accounting on many random timelines: busy + idle = window, causes
// sum to idle, steps tile their spans, results are deterministic.
#include <algorithm>
#include <random>
#include <vector>

#include "analysis/analyze.h"
#include "gpuidle/analyze.h"
#include "gtest/gtest.h"
#include "testing/timeline_builder.h"

namespace gpuidle {
namespace {

using ::gpuidle::testing::TimelineBuilder;
using internal::CopyKind;
using internal::RangeKind;

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

internal::Timeline RandomTimeline(std::mt19937_64& rng) {
  auto uniform = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };
  TimelineBuilder b;
  const int devices = 1 + static_cast<int>(rng() % 3);
  const int threads = 1 + static_cast<int>(rng() % 3);
  double host = 0;
  const int events = 20 + static_cast<int>(rng() % 200);
  std::vector<double> gpu_free(devices, 0);
  double step_start = 0;
  int step = 0;
  for (int i = 0; i < events; ++i) {
    const uint64_t thread = 1 + rng() % threads;
    const int device = static_cast<int>(rng() % devices);
    b.Device(device).Stream(7 + static_cast<uint32_t>(rng() % 3));
    host += uniform(0, chance(0.1) ? 3000 : 80);
    const double call = uniform(1, 20);
    switch (rng() % 9) {
      case 0:
        b.Data(thread, host, host + uniform(10, 5000));
        break;
      case 1:
        b.Sync(thread, host, std::max(host + 1, gpu_free[device] + uniform(0, 5)));
        break;
      case 2: {
        const double start = std::max(host + call, gpu_free[device]) + uniform(0, 10);
        const double end = start + uniform(1, 2000);
        b.CopyCall(thread, host, host + call)
            .Copy(start, end, chance(0.5) ? CopyKind::kHtoD : CopyKind::kDtoH, chance(0.5));
        break;
      }
      case 3:
        b.WaitEvent(thread, host, host + 2, 7 + static_cast<uint32_t>(rng() % 3),
                    7 + static_cast<uint32_t>(rng() % 3));
        break;
      case 4:
        b.Op(thread, host, host + uniform(5, 400), "aten::op");
        break;
      case 5:
        if (chance(0.3)) {
          b.Step(1, step_start, host, "ProfilerStep#" + std::to_string(step++));
          step_start = host;
        }
        break;
      default: {
        // A kernel, usually launched; sometimes without its call (unattributed), sometimes
        // a collective, overlapping others at random.
        const bool launched = chance(0.9);
        if (launched) b.Launch(thread, host, host + call);
        const double start = std::max(host + call, chance(0.5) ? gpu_free[device] : 0) +
                             uniform(0, 30);
        const double end = start + uniform(0.5, chance(0.2) ? 5000 : 50);
        if (chance(0.1)) {
          b.NcclKernel(start, end);
        } else {
          b.Kernel(start, end, chance(0.5) ? "tiny" : "big");
        }
        gpu_free[device] = std::max(gpu_free[device], end);
        break;
      }
    }
  }
  return b.Build();
}

TEST(Invariants, HoldOnRandomTimelines) {
  std::mt19937_64 rng(20261130);
  IdleBreakdown seen;  // the generator must reach every subcause, or the test proves little
  for (int iteration = 0; iteration < 500; ++iteration) {
    SCOPED_TRACE(::testing::Message() << "iteration " << iteration);
    const internal::Timeline t = RandomTimeline(rng);
    AnalysisOptions options;
    options.launch_gap_max_ns = 1000 * (1 + static_cast<int64_t>(rng() % 2000));
    absl::StatusOr<Report> r = internal::Analyze(t, options);
    if (t.devices.empty()) continue;
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->devices.size(), t.devices.size());
    for (size_t i = 0; i < t.devices.size(); ++i) {
      const DeviceReport& d = r->devices[i];
      ASSERT_EQ(d.device, t.devices[i].device);
      EXPECT_EQ(d.busy_ns, OracleBusyNs(t.devices[i], d.window_start_ns, d.window_end_ns));
      EXPECT_EQ(d.busy_ns + d.idle_ns, d.window_ns);
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
        EXPECT_EQ(s.busy_ns + s.idle.TotalNs(), s.end_ns - s.start_ns);
        steps_idle += s.idle;
      }
      for (int k = 0; k < kNumSubcauses; ++k) EXPECT_LE(steps_idle.ns[k], d.idle.ns[k]);
    }
    for (const GapRecord& g : r->longest_gaps) EXPECT_LT(g.start_ns, g.end_ns);

    // Deterministic: the same input gives the same report, byte for byte.
    absl::StatusOr<Report> again = internal::Analyze(t, options);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*FormatReport(*r, "json", options), *FormatReport(*again, "json", options));
  }
  for (int k = 0; k < kNumSubcauses; ++k) {
    const auto s = static_cast<Subcause>(k);
    if (s == Subcause::kCommWait) continue;  // needs several ranks; covered in analyze_test
    EXPECT_GT(seen[s], 0) << QualifiedSubcauseName(s) << " never occurred";
  }
}

}  // namespace
}  // namespace gpuidle
