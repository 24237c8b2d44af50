#include "session/gpu_throughput_sampler.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuidle::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kMs = 1'000'000;

// A stand-in for CUPTI's PM sampling and the driver: devices, which of them the program uses,
// and a hardware that completes one 10 ms sample per device at each decode.
struct FakeHardware {
  std::mutex mu;
  int devices = 2;
  std::vector<bool> active = {false, true};
  std::vector<int> started;
  absl::Status refuse = absl::OkStatus();  // what start says
  bool silent = false;                     // started, but completes no sample
  int64_t gpu_clock = 5'000 * kMs;         // the GPU's timestamps
  int64_t timeline_now = 5'000 * kMs;      // the timeline's clock
  int decodes = 0;
  int stops = 0;

  GpuThroughputSampler::Options Options(int64_t decode_period_ns = kMs) {
    GpuThroughputSampler::Options o;
    o.interval_ns = 10 * kMs;
    o.decode_period_ns = decode_period_ns;
    o.hooks.device_count = [this] {
      std::lock_guard<std::mutex> lock(mu);
      return devices;
    };
    o.hooks.device_active = [this](int d) {
      std::lock_guard<std::mutex> lock(mu);
      return active[static_cast<size_t>(d)];
    };
    o.hooks.start_device = [this](int d, int64_t interval) {
      std::lock_guard<std::mutex> lock(mu);
      EXPECT_EQ(interval, 10 * kMs);
      if (!refuse.ok()) return refuse;
      started.push_back(d);
      return absl::OkStatus();
    };
    o.hooks.decode = [this](std::vector<GpuThroughputSample>* out, bool* overflow) {
      std::lock_guard<std::mutex> lock(mu);
      *overflow = false;
      ++decodes;
      for (int d : started) {
        if (silent) break;
        GpuThroughputSample s;
        s.device = d;
        s.start_ns = gpu_clock;
        s.end_ns = gpu_clock + 10 * kMs;
        s.dram_pct = 50;
        out->push_back(s);
      }
      if (!started.empty()) {
        gpu_clock += 10 * kMs;
        timeline_now += 10 * kMs;
      }
      return absl::OkStatus();
    };
    o.hooks.stop = [this] {
      std::lock_guard<std::mutex> lock(mu);
      ++stops;
    };
    o.hooks.now = [this] {
      std::lock_guard<std::mutex> lock(mu);
      return timeline_now;
    };
    return o;
  }
  int Decodes() {
    std::lock_guard<std::mutex> lock(mu);
    return decodes;
  }
};

void WaitForDecodes(FakeHardware& hw, int n) {
  for (int i = 0; i < 5000 && hw.Decodes() < n; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

TEST(GpuThroughputSampler, SamplesOnlyTheDevicesTheProgramUses) {
  FakeHardware hw;
  GpuThroughputSampler sampler(hw.Options());
  sampler.Start();
  WaitForDecodes(hw, 5);
  GpuThroughputSampler::Result r = sampler.Stop();
  EXPECT_THAT(hw.started, ElementsAre(1));
  EXPECT_EQ(hw.stops, 1);
  ASSERT_GE(r.samples.size(), 5u);
  for (const GpuThroughputSample& s : r.samples) EXPECT_EQ(s.device, 1);
  EXPECT_EQ(r.clock_shift_ns, 0);  // the same clock
  EXPECT_TRUE(r.unavailable.empty());
}

TEST(GpuThroughputSampler, ADeviceUsedLaterIsSampledFromThen) {
  FakeHardware hw;
  GpuThroughputSampler sampler(hw.Options());
  sampler.Start();
  WaitForDecodes(hw, 3);
  {
    std::lock_guard<std::mutex> lock(hw.mu);
    hw.active[0] = true;
  }
  WaitForDecodes(hw, 8);
  (void)sampler.Stop();
  EXPECT_THAT(hw.started, ElementsAre(1, 0));
}

TEST(GpuThroughputSampler, SaysWhyADeviceWasNotSampled) {
  FakeHardware hw;
  hw.refuse =
      absl::UnavailableError("counter availability failed: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
  GpuThroughputSampler sampler(hw.Options());
  sampler.Start();
  WaitForDecodes(hw, 3);
  GpuThroughputSampler::Result r = sampler.Stop();
  EXPECT_TRUE(r.samples.empty());
  EXPECT_EQ(r.unavailable,
            "device 1: counter availability failed: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
  Timeline t;
  t.DeviceFor(1);
  GpuThroughputSampler::MoveInto(std::move(r), &t);
  EXPECT_EQ(t.info.gpu_throughput_unavailable,
            "device 1: counter availability failed: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
  EXPECT_TRUE(t.gpu_throughput.empty());
}

TEST(GpuThroughputSampler, SaysWhenAStartedDeviceDeliveredNothing) {
  FakeHardware hw;
  hw.silent = true;
  GpuThroughputSampler sampler(hw.Options());
  sampler.Start();
  WaitForDecodes(hw, 3);
  GpuThroughputSampler::Result r = sampler.Stop();
  EXPECT_THAT(hw.started, ElementsAre(1));
  EXPECT_TRUE(r.samples.empty());
  EXPECT_THAT(r.unavailable, HasSubstr("device 1: PM sampling delivered no samples in the "));
  EXPECT_THAT(r.unavailable, HasSubstr("one sample every 10 ms"));

  // A device that delivered is not said.
  FakeHardware loud;
  GpuThroughputSampler heard(loud.Options());
  heard.Start();
  WaitForDecodes(loud, 3);
  EXPECT_TRUE(heard.Stop().unavailable.empty());
}

TEST(GpuThroughputSampler, MovesSamplesOfAnotherClockOntoTheTimeline) {
  FakeHardware hw;
  hw.gpu_clock = 3 * kMs;  // the GPU counts from its boot, the timeline from 1970
  GpuThroughputSampler sampler(hw.Options());
  sampler.Start();
  WaitForDecodes(hw, 4);
  GpuThroughputSampler::Result r = sampler.Stop();
  ASSERT_FALSE(r.samples.empty());
  EXPECT_EQ(r.clock_shift_ns, 5'000 * kMs - 3 * kMs);
  // The first sample ends where the timeline stood at its decode.
  EXPECT_EQ(r.samples.front().end_ns, 5'000 * kMs + 10 * kMs);
  Timeline t;
  t.DeviceFor(1);
  GpuThroughputSampler::MoveInto(std::move(r), &t);
  ASSERT_FALSE(t.info.warnings.empty());
  EXPECT_THAT(t.info.warnings.back(), HasSubstr("the GPU's clock is 4.997 s from the timeline's"));
}

TEST(GpuThroughputSampler, MergesNeighboursToStayWithinItsBound) {
  FakeHardware hw;
  GpuThroughputSampler::Options o = hw.Options();
  o.max_samples = 8;
  GpuThroughputSampler sampler(std::move(o));
  sampler.Start();
  WaitForDecodes(hw, 40);
  GpuThroughputSampler::Result r = sampler.Stop();
  EXPECT_LE(r.samples.size(), 8u);
  EXPECT_GE(r.merges, 2);
  // The whole span is kept, at a coarser grain, the figures averaged.
  int64_t covered = 0;
  for (const GpuThroughputSample& s : r.samples) {
    covered += s.end_ns - s.start_ns;
    EXPECT_FLOAT_EQ(s.dram_pct, 50);
  }
  EXPECT_EQ(covered, static_cast<int64_t>(hw.Decodes()) * 10 * kMs);
  Timeline t;
  t.DeviceFor(1);
  GpuThroughputSampler::MoveInto(std::move(r), &t);
  EXPECT_THAT(t.info.warnings.front(), HasSubstr("GPU throughput: the samples were merged"));
}

TEST(GpuThroughputSampler, KeepsOnlyTheTimelinesDevicesSorted) {
  GpuThroughputSampler::Result r;
  for (int64_t i : {3, 1, 2}) {
    GpuThroughputSample s;
    s.device = static_cast<int>(i % 2);
    s.start_ns = i * kMs;
    s.end_ns = s.start_ns + kMs;
    r.samples.push_back(s);
  }
  Timeline t;
  t.DeviceFor(1);
  GpuThroughputSampler::MoveInto(std::move(r), &t);
  ASSERT_EQ(t.gpu_throughput.size(), 2u);
  EXPECT_EQ(t.gpu_throughput[0].start_ns, 1 * kMs);
  EXPECT_EQ(t.gpu_throughput[1].start_ns, 3 * kMs);
}

TEST(GpuThroughputSampler, OffDoesNothing) {
  FakeHardware hw;
  GpuThroughputSampler::Options o = hw.Options();
  o.interval_ns = 0;
  GpuThroughputSampler sampler(std::move(o));
  sampler.Start();
  GpuThroughputSampler::Result r = sampler.Stop();
  EXPECT_EQ(hw.Decodes(), 0);
  EXPECT_TRUE(r.samples.empty());
}

}  // namespace
}  // namespace gpuidle::internal
