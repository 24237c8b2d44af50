#include "analysis/gpu_metrics.h"

#include <cstdint>
#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuidle::internal {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kMs = 1'000'000;

// Device 0 runs a kernel in the first 5 ms of every 10 ms, for a second; NVML reads it every
// 5 ms (at 2.5, 7.5, 12.5, ... ms: busy, idle, busy, ...).
Timeline SteadyRun(uint32_t busy_clock_mhz, uint64_t busy_events) {
  Timeline t;
  DeviceTimeline& d = t.DeviceFor(0);
  for (int64_t i = 0; i < 100; ++i) {
    DeviceOp op;
    op.start_ns = i * 10 * kMs;
    op.end_ns = op.start_ns + 5 * kMs;
    d.ops.push_back(op);
  }
  for (int64_t i = 0; i < 200; ++i) {
    GpuMetricSample s;
    s.time_ns = 2'500'000 + i * 5 * kMs;
    const bool busy = i % 2 == 0;
    s.sm_clock_mhz = busy ? busy_clock_mhz : 1980;
    s.sm_clock_max_mhz = 1980;
    s.power_mw = busy ? 700'000 : 100'000;
    s.power_limit_mw = 700'000;
    s.temperature_c = 60 + static_cast<uint32_t>(i % 10);
    s.clock_events = busy ? busy_events : kClockEventGpuIdle;
    s.has_clock_events = true;
    s.pcie_generation = busy ? 4 : 1;  // the link slows down at rest
    s.pcie_generation_max = 5;
    s.pcie_width = 16;
    s.pcie_width_max = 16;
    s.pcie_replays = 7 + static_cast<uint64_t>(i / 100);  // one replay half-way
    s.memory_used_bytes = uint64_t{40} << 30;
    s.memory_total_bytes = uint64_t{80} << 30;
    t.gpu_metrics.push_back(s);
  }
  return t;
}

TEST(GpuMetrics, NamesAPowerCappedClockWhileBusy) {
  const Timeline t = SteadyRun(1410, kClockEventPowerCap);
  const std::optional<GpuMetrics> m = SummariseGpuMetrics(t, t.devices[0], 0, 1000 * kMs);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->samples, 200);
  EXPECT_EQ(m->busy_samples, 100);
  EXPECT_EQ(m->idle_samples, 100);
  EXPECT_EQ(m->period_ns, 5 * kMs);
  EXPECT_EQ(m->sm_clock_median_mhz, 1410u);
  EXPECT_EQ(m->sm_clock_max_mhz, 1980u);
  EXPECT_DOUBLE_EQ(m->slow_clock_share, 1.0);
  EXPECT_EQ(m->slow_clock_reason, "power_cap");
  EXPECT_EQ(m->power_median_mw, 700'000u);
  EXPECT_EQ(m->temperature_max_c, 69u);
  EXPECT_EQ(m->pcie_replays, 1u);
  ASSERT_GE(m->findings.size(), 3u);
  EXPECT_EQ(m->findings[0].kind, "clocks");
  EXPECT_THAT(m->findings[0].text, HasSubstr("busy, but at 1.41 of 1.98 GHz"));
  EXPECT_THAT(m->findings[0].text, HasSubstr("in 100% of the busy readings (power cap)"));
  EXPECT_THAT(m->findings[0].fix, HasSubstr("power limit"));
  // The link at its widest while busy: Gen4 of Gen5 (the Gen1 at rest is power saving).
  EXPECT_EQ(m->findings[1].kind, "pcie_link");
  EXPECT_EQ(m->findings[1].text, "PCIe link at Gen4 x16 of Gen5 x16 while busy");
  EXPECT_EQ(m->findings[2].kind, "pcie_replays");
}

TEST(GpuMetrics, SaysNothingOfClocksAtTheirMaximum) {
  Timeline t = SteadyRun(1980, 0);
  for (GpuMetricSample& s : t.gpu_metrics) s.pcie_generation = std::min(s.pcie_generation * 5, 5u);
  for (GpuMetricSample& s : t.gpu_metrics) s.pcie_replays = 7;
  const std::optional<GpuMetrics> m = SummariseGpuMetrics(t, t.devices[0], 0, 1000 * kMs);
  ASSERT_TRUE(m.has_value());
  EXPECT_DOUBLE_EQ(m->slow_clock_share, 0);
  EXPECT_EQ(m->slow_clock_reason, "");
  EXPECT_TRUE(m->findings.empty());
}

TEST(GpuMetrics, CountsReplaysFromACounterThatStartedAtZero) {
  Timeline t = SteadyRun(1980, 0);
  for (size_t i = 0; i < t.gpu_metrics.size(); ++i) {
    t.gpu_metrics[i].pcie_generation = 5;
    t.gpu_metrics[i].pcie_replays = i < 150 ? 0 : 3;
  }
  const std::optional<GpuMetrics> m = SummariseGpuMetrics(t, t.devices[0], 0, 1000 * kMs);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->pcie_replays, 3u);
  ASSERT_EQ(m->findings.size(), 1u);
  EXPECT_EQ(m->findings[0].text, "3 PCIe replays during the collection");
}

TEST(GpuMetrics, TellsThermalFromPowerAndCountsOnlyTheSteadyState) {
  const Timeline t = SteadyRun(1200, kClockEventPowerCap | kClockEventHardwareThermal);
  const std::optional<GpuMetrics> m = SummariseGpuMetrics(t, t.devices[0], 500 * kMs, 1000 * kMs);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->samples, 100);
  EXPECT_EQ(m->slow_clock_reason, "thermal");
  EXPECT_THAT(m->findings[0].fix, HasSubstr("cooling"));
  EXPECT_FALSE(SummariseGpuMetrics(t, t.devices[0], 2000 * kMs, 3000 * kMs).has_value());
}

TEST(GpuMetrics, NamesAnotherProcessThatRanKernelsWhileThisJobIdled) {
  Timeline t = SteadyRun(1980, 0);
  for (GpuMetricSample& s : t.gpu_metrics) {  // a healthy link
    s.pcie_generation = 5;
    s.pcie_replays = 7;
  }
  GpuProcessSeen other;
  other.pid = 4242;
  other.memory_bytes = uint64_t{31} << 30;
  // It ran kernels near the idle readings of the first half (7.5, 17.5, ... 497.5 ms).
  for (int64_t i = 0; i < 50; ++i) {
    other.busy_sample_ns.push_back(7'500'000 + i * 10 * kMs + 1000);
  }
  t.gpu_processes.push_back(other);
  GpuProcessSeen quiet;  // held memory, ran nothing
  quiet.pid = 7;
  quiet.memory_bytes = 1 << 20;
  t.gpu_processes.push_back(quiet);
  const std::optional<GpuMetrics> m = SummariseGpuMetrics(t, t.devices[0], 0, 1000 * kMs);
  ASSERT_TRUE(m.has_value());
  ASSERT_EQ(m->other_processes.size(), 2u);
  EXPECT_EQ(m->other_processes[0].pid, 4242);
  EXPECT_EQ(m->other_processes[0].idle_samples_busy, 50);
  EXPECT_EQ(m->other_processes[1].idle_samples_busy, 0);
  ASSERT_EQ(m->findings.size(), 1u);
  EXPECT_EQ(m->findings[0].kind, "other_process");
  EXPECT_EQ(m->findings[0].text,
            "another process (pid 4242, 31.0 GiB) ran kernels on this GPU during at least 50% of "
            "this job's idle readings");
}

TEST(GpuMetrics, NamesAnotherProcessThatRanKernelsWhileThisJobsKernelsRan) {
  // Time-slicing: the other process ran kernels at a quarter of the job's busy readings (2.5,
  // 12.5, ..., 242.5 ms) and at none of its idle ones: the job's kernels took longer by its turns.
  Timeline t = SteadyRun(1980, 0);
  GpuProcessSeen other;
  other.pid = 1192;
  other.memory_bytes = uint64_t{3} << 30;
  for (int64_t i = 0; i < 25; ++i) other.busy_sample_ns.push_back(2'500'000 + i * 10 * kMs);
  t.gpu_processes.push_back(other);
  const std::optional<GpuMetrics> m = SummariseGpuMetrics(t, t.devices[0], 0, 1000 * kMs);
  ASSERT_TRUE(m.has_value());
  ASSERT_EQ(m->other_processes.size(), 1u);
  EXPECT_EQ(m->other_processes[0].busy_samples_busy, 25);
  EXPECT_EQ(m->other_processes[0].idle_samples_busy, 0);
  const GpuMetrics::Finding& f = m->findings.back();  // after the link's finding
  EXPECT_EQ(f.kind, "other_process");
  EXPECT_EQ(f.text,
            "another process (pid 1192, 3.0 GiB) ran kernels on this GPU during at least 25% of "
            "its busy readings (the GPU takes turns between processes: this job's kernels took "
            "longer by the other's turns)");
}

TEST(GpuMetrics, SaysHowLongQueuedWorkWaitedBehindOtherProcesses) {
  DeviceReport d;
  d.idle[Subcause::kOtherProcess] = 30 * kMs;
  d.idle[Subcause::kHostSync] = 30 * kMs;
  d.idle_ns = 60 * kMs;
  GpuMetrics m;
  m.other_processes = {{4242, uint64_t{31} << 30, 0}, {7, 1 << 20, 0}};
  // No idle reading caught it running: the waits are the finding.
  NoteWaitBehindOtherProcesses(d, &m);
  ASSERT_EQ(m.findings.size(), 1u);
  EXPECT_EQ(m.findings[0].kind, "other_process");
  EXPECT_EQ(m.findings[0].text,
            "another process (pid 4242, 31.0 GiB) ran kernels on this GPU; this job's queued work "
            "waited behind other processes for 30.0 ms, 50% of its idle time "
            "(sync_bound.other_process)");
  // A reading's finding gets the figure once.
  m.findings = {{"clocks", "slow", "fix"},
                {"other_process", "seen", "fix"},
                {"other_process", "also seen", "fix"}};
  NoteWaitBehindOtherProcesses(d, &m);
  EXPECT_THAT(m.findings[1].text, HasSubstr("seen; this job's queued work waited"));
  EXPECT_EQ(m.findings[2].text, "also seen");
  // Nothing waited: nothing said.
  d.idle[Subcause::kOtherProcess] = 0;
  m.findings.clear();
  NoteWaitBehindOtherProcesses(d, &m);
  EXPECT_TRUE(m.findings.empty());
}

// Device 0 busy in the first 5 ms of every 10 ms; PM samples of 10 ms each (half busy) read
// the device's averages over the whole sample, idle half included, as the hardware does.
Timeline ThroughputRun(float sm, float tensor, float dram) {
  Timeline t;
  DeviceTimeline& d = t.DeviceFor(0);
  for (int64_t i = 0; i < 100; ++i) {
    DeviceOp op;
    op.start_ns = i * 10 * kMs;
    op.end_ns = op.start_ns + 8 * kMs;
    d.ops.push_back(op);
  }
  for (int64_t i = 0; i < 100; ++i) {
    GpuThroughputSample s;
    s.device = 0;
    s.start_ns = i * 10 * kMs;
    s.end_ns = s.start_ns + 10 * kMs;
    // Averages over the sample: busy 80% of it.
    s.sm_active_pct = 0.8F * sm;
    s.tensor_active_pct = 0.8F * tensor;
    s.dram_pct = 0.8F * dram;
    s.pcie_read_bytes_per_s = 0.8F * 2e9F;
    t.gpu_throughput.push_back(s);
  }
  return t;
}

TEST(GpuThroughput, FiguresAreRatesWhileKernelsRan) {
  const Timeline t = ThroughputRun(95, 70, 30);
  const std::optional<GpuMetrics> m = SummariseGpuMetrics(t, t.devices[0], 0, 1000 * kMs);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->samples, 0);  // no NVML readings
  ASSERT_TRUE(m->throughput.has_value());
  const GpuMetrics::Throughput& th = *m->throughput;
  EXPECT_EQ(th.samples, 100);
  EXPECT_EQ(th.busy_samples, 100);
  EXPECT_EQ(th.period_ns, 10 * kMs);
  EXPECT_NEAR(th.kernel_time_share, 0.8, 1e-9);
  EXPECT_NEAR(th.sm_active_pct, 95, 1e-3);
  EXPECT_NEAR(th.tensor_active_pct, 70, 1e-3);
  EXPECT_NEAR(th.dram_pct, 30, 1e-3);
  EXPECT_NEAR(th.pcie_read_bytes_per_s, 2e9, 1e3);
  EXPECT_LT(th.nvlink_read_bytes_per_s, 0);  // not measured
  EXPECT_TRUE(m->findings.empty());          // compute-bound: nothing to say
}

TEST(GpuThroughput, NamesAMemoryBoundDevice) {
  const Timeline t = ThroughputRun(99, 0, 88);
  const std::optional<GpuMetrics> m = SummariseGpuMetrics(t, t.devices[0], 0, 1000 * kMs);
  ASSERT_TRUE(m.has_value());
  ASSERT_EQ(m->findings.size(), 1u);
  EXPECT_EQ(m->findings[0].kind, "memory_bound");
  EXPECT_EQ(m->findings[0].text,
            "busy, but memory-bound: DRAM at 88% of its peak while kernels ran, tensor pipes 0%, "
            "SMs active 99%");
  EXPECT_THAT(m->findings[0].fix, HasSubstr("fuse elementwise"));
}

TEST(GpuThroughput, AMatmulThatAlsoStreamsMemoryIsNotMemoryBound) {
  const Timeline t = ThroughputRun(99, 65, 75);
  const std::optional<GpuMetrics> m = SummariseGpuMetrics(t, t.devices[0], 0, 1000 * kMs);
  ASSERT_TRUE(m.has_value());
  EXPECT_TRUE(m->findings.empty());
}

TEST(GpuThroughput, NamesSmsLeftIdleByKernelsTooSmall) {
  const Timeline t = ThroughputRun(20, 5, 10);
  const std::optional<GpuMetrics> m = SummariseGpuMetrics(t, t.devices[0], 0, 1000 * kMs);
  ASSERT_TRUE(m.has_value());
  ASSERT_EQ(m->findings.size(), 1u);
  EXPECT_EQ(m->findings[0].kind, "sm_underused");
  EXPECT_EQ(m->findings[0].text,
            "busy, but the SMs were active only 20% of the time kernels ran, tensor pipes 5%");
}

TEST(GpuThroughput, MostlyIdleSamplesAreNoBasisForAFinding) {
  Timeline t = ThroughputRun(99, 0, 88);
  // Kernels now cover 1 ms of each 10 ms sample: too little to read a rate while busy from.
  for (DeviceOp& op : t.devices[0].ops) op.end_ns = op.start_ns + kMs;
  const std::optional<GpuMetrics> m = SummariseGpuMetrics(t, t.devices[0], 0, 1000 * kMs);
  ASSERT_TRUE(m.has_value());
  ASSERT_TRUE(m->throughput.has_value());
  EXPECT_EQ(m->throughput->busy_samples, 0);
  EXPECT_LT(m->throughput->dram_pct, 0);
  EXPECT_TRUE(m->findings.empty());
}

TEST(GpuThroughput, SaysWhyThereAreNoSamples) {
  Timeline t = SteadyRun(1980, 0);
  t.info.gpu_throughput_unavailable =
      "device 0: counter availability failed: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
  const std::optional<GpuMetrics> m = SummariseGpuMetrics(t, t.devices[0], 0, 1000 * kMs);
  ASSERT_TRUE(m.has_value());
  EXPECT_FALSE(m->throughput.has_value());
  EXPECT_EQ(m->throughput_unavailable, t.info.gpu_throughput_unavailable);
  EXPECT_EQ(m->samples, 200);  // NVML's readings stand alone
}

TEST(GpuMetrics, FindingsFollowFromTheFiguresAlone) {
  Timeline t = SteadyRun(1410, kClockEventPowerCap);
  GpuProcessSeen other;
  other.pid = 4242;
  other.memory_bytes = uint64_t{31} << 30;
  for (int64_t i = 0; i < 50; ++i) other.busy_sample_ns.push_back(7'500'000 + i * 10 * kMs);
  t.gpu_processes.push_back(other);
  const std::optional<GpuMetrics> m = SummariseGpuMetrics(t, t.devices[0], 0, 1000 * kMs);
  ASSERT_TRUE(m.has_value());
  ASSERT_EQ(m->findings.size(), 4u);
  GpuMetrics derived = *m;
  derived.findings = {{"stale", "from another window", ""}};
  DeriveGpuFindings(&derived);
  ASSERT_EQ(derived.findings.size(), m->findings.size());
  for (size_t i = 0; i < m->findings.size(); ++i) {
    EXPECT_EQ(derived.findings[i].kind, m->findings[i].kind);
    EXPECT_EQ(derived.findings[i].text, m->findings[i].text);
    EXPECT_EQ(derived.findings[i].fix, m->findings[i].fix);
  }
}

// A window's NVML figures, as SummariseGpuMetrics leaves them.
GpuMetrics Readings(int64_t busy, uint32_t clock_median_mhz, double slow_share,
                    const std::string& reason, uint32_t power_median_w) {
  GpuMetrics m;
  m.samples = 2 * busy;
  m.busy_samples = busy;
  m.idle_samples = busy;
  m.period_ns = 5 * kMs;
  m.sm_clock_max_mhz = 1980;
  m.sm_clock_median_mhz = clock_median_mhz;
  m.slow_clock_share = slow_share;
  m.slow_clock_reason = reason;
  m.power_median_mw = power_median_w * 1000;
  m.power_limit_mw = 700'000;
  m.temperature_max_c = 60;
  m.pcie_generation = 5;
  m.pcie_generation_max = 5;
  m.pcie_width = 16;
  m.pcie_width_max = 16;
  return m;
}

TEST(AddGpuMetrics, WeighsEachWindowsFiguresByTheReadingsTheyWereTakenOver) {
  GpuMetrics sum = Readings(100, 1980, 0.25, "power_cap", 400);
  sum.pcie_replays = 1;
  sum.memory_used_max_bytes = uint64_t{40} << 30;
  GpuMetrics window = Readings(300, 1220, 0.5, "thermal", 600);
  window.period_ns = 10 * kMs;
  window.temperature_max_c = 85;
  window.pcie_replays = 2;
  window.memory_used_max_bytes = uint64_t{30} << 30;
  window.pcie_generation = 4;  // narrower while busy in this window: the widest stays
  AddGpuMetrics(window, &sum);
  EXPECT_EQ(sum.samples, 800);
  EXPECT_EQ(sum.busy_samples, 400);
  EXPECT_EQ(sum.idle_samples, 400);
  EXPECT_EQ(sum.period_ns, 8'750'000);        // (200 x 5 + 600 x 10) ms / 800
  EXPECT_EQ(sum.sm_clock_median_mhz, 1410u);  // (100 x 1980 + 300 x 1220) / 400
  EXPECT_EQ(sum.power_median_mw, 550'000u);
  EXPECT_DOUBLE_EQ(sum.slow_clock_share, 0.4375);  // (25 + 150) of 400 busy readings ran slow
  EXPECT_EQ(sum.slow_clock_reason, "thermal");     // the side with more slow readings
  EXPECT_EQ(sum.temperature_max_c, 85u);
  EXPECT_EQ(sum.memory_used_max_bytes, uint64_t{40} << 30);
  EXPECT_EQ(sum.pcie_generation, 5u);
  EXPECT_EQ(sum.pcie_replays, 3u);
  ASSERT_EQ(sum.findings.size(), 2u);
  EXPECT_EQ(sum.findings[0].kind, "clocks");
  EXPECT_EQ(sum.findings[0].text,
            "busy, but at 1.41 of 1.98 GHz (median) with the SM clock under 90% of its maximum in "
            "44% of the busy readings (thermal slowdown); power 550 of 700 W, up to 85 C");
  EXPECT_THAT(sum.findings[0].fix, HasSubstr("cooling"));
  EXPECT_EQ(sum.findings[1].text, "3 PCIe replays during the collection");
}

TEST(AddGpuMetrics, AFigureOneSideDidNotMeasureIsTheOthers) {
  // No clock or power read while busy in the first window (0: none), no PM samples either.
  GpuMetrics sum = Readings(10, 0, 0, "", 0);
  sum.throughput_unavailable = "device 0: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
  GpuMetrics window = Readings(20, 1500, 0, "", 300);
  GpuThroughput th;
  th.samples = 100;
  th.busy_samples = 80;
  th.period_ns = 10 * kMs;
  th.kernel_time_share = 0.8;
  th.sm_active_pct = 90;
  th.dram_pct = 70;
  th.pcie_read_bytes_per_s = 2e9;
  window.throughput = th;
  AddGpuMetrics(window, &sum);
  EXPECT_EQ(sum.sm_clock_median_mhz, 1500u);
  EXPECT_EQ(sum.power_median_mw, 300'000u);
  EXPECT_DOUBLE_EQ(sum.slow_clock_share, 0);
  ASSERT_TRUE(sum.throughput.has_value());
  EXPECT_EQ(sum.throughput->samples, 100);
  EXPECT_DOUBLE_EQ(sum.throughput->sm_active_pct, 90);
  EXPECT_EQ(sum.throughput_unavailable, "");  // there are samples now

  // A later window measured what the first did not (tensor pipes, NVLink) and not DRAM.
  GpuMetrics later = Readings(20, 1500, 0, "", 300);
  GpuThroughput more;
  more.samples = 300;
  more.busy_samples = 20;
  more.period_ns = 10 * kMs;
  more.kernel_time_share = 0.4;
  more.sm_active_pct = 40;
  more.tensor_active_pct = 30;
  more.pcie_read_bytes_per_s = 1e9;
  more.nvlink_read_bytes_per_s = 5e9;
  later.throughput = more;
  AddGpuMetrics(later, &sum);
  const GpuThroughput& got = *sum.throughput;
  EXPECT_EQ(got.samples, 400);
  EXPECT_EQ(got.busy_samples, 100);
  EXPECT_EQ(got.period_ns, 10 * kMs);
  EXPECT_DOUBLE_EQ(got.kernel_time_share, 0.5);  // (80 + 120) of 400 samples' time
  EXPECT_DOUBLE_EQ(got.sm_active_pct, 80);       // (80 x 90 + 20 x 40) / 100
  EXPECT_DOUBLE_EQ(got.tensor_active_pct, 30);
  EXPECT_DOUBLE_EQ(got.dram_pct, 70);
  EXPECT_DOUBLE_EQ(got.pcie_read_bytes_per_s, 1.8e9);
  EXPECT_DOUBLE_EQ(got.nvlink_read_bytes_per_s, 5e9);
  EXPECT_LT(got.nvlink_write_bytes_per_s, 0);  // measured by neither
  ASSERT_EQ(sum.findings.size(), 1u);
  EXPECT_EQ(sum.findings[0].text,
            "busy, but memory-bound: DRAM at 70% of its peak while kernels ran, tensor pipes 30%, "
            "SMs active 80%");
}

TEST(AddGpuMetrics, JoinsOtherProcessesByPidAndKeepsTheNoteOfTheWaits) {
  GpuMetrics sum = Readings(50, 1980, 0, "", 400);
  sum.other_processes = {{4242, uint64_t{30} << 30, 0}};
  GpuMetrics window = Readings(50, 1980, 0, "", 400);
  window.other_processes = {{7, 1 << 20, 0}, {4242, uint64_t{31} << 30, 25}, {99, 1 << 30, 0}};
  AddGpuMetrics(window, &sum);
  ASSERT_EQ(sum.other_processes.size(), 3u);
  EXPECT_EQ(sum.other_processes[0].pid, 4242);  // most memory first
  EXPECT_EQ(sum.other_processes[0].memory_bytes, uint64_t{31} << 30);
  EXPECT_EQ(sum.other_processes[0].idle_samples_busy, 25);
  EXPECT_EQ(sum.other_processes[1].pid, 99);
  EXPECT_EQ(sum.other_processes[2].pid, 7);
  DeviceReport d;
  d.idle[Subcause::kOtherProcess] = 30 * kMs;
  d.idle[Subcause::kHostSync] = 30 * kMs;
  d.idle_ns = 60 * kMs;
  NoteWaitBehindOtherProcesses(d, &sum);
  const std::string seen =
      "another process (pid 4242, 31.0 GiB) ran kernels on this GPU during at least 25% of this "
      "job's idle readings";  // 25 of the 100 idle readings of both windows
  const std::string note =
      "; this job's queued work waited behind other processes for 30.0 ms, 50% of its idle time "
      "(sync_bound.other_process)";
  ASSERT_EQ(sum.findings.size(), 1u);
  EXPECT_EQ(sum.findings[0].text, seen + note);
  // Another window: the findings are derived again, and the note said once more, not twice.
  AddGpuMetrics(Readings(50, 1980, 0, "", 400), &sum);
  ASSERT_EQ(sum.findings.size(), 1u);
  EXPECT_THAT(sum.findings[0].text, HasSubstr("during at least 17% of"));  // 25 of 150
  EXPECT_THAT(sum.findings[0].text, ::testing::Not(HasSubstr("waited")));
  NoteWaitBehindOtherProcesses(d, &sum);
  EXPECT_THAT(sum.findings[0].text, ::testing::EndsWith(note));
  EXPECT_EQ(sum.findings[0].text.find("waited"), sum.findings[0].text.rfind("waited"));
}

}  // namespace
}  // namespace gpuidle::internal
