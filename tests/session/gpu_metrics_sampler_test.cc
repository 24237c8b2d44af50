// The GPU-metrics sampler and the NVML it reads (collect/nvml.h), against a fake NVML
// (tests/testing/fake_nvml.cc): readings land with the right fields, the memory stays bounded,
// every failure is a Status and no crash, the collecting process is not "another process", and
// the time stamps are on the timeline's clock, in order.
#include "session/gpu_metrics_sampler.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "collect/clock.h"
#include "collect/nvml.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/timeline.h"

namespace gpuidle::internal {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

constexpr char kUuid0[] = "GPU-11111111-2222-3333-4444-555555555555";
constexpr char kUuid1[] = "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee";
constexpr int kNoPermission = 4;
constexpr int kDriverNotLoaded = 9;

// The fake's script, through the library the sampler loads (one copy in the process).
class FakeNvml {
 public:
  FakeNvml() : handle_(dlopen(GPUIDLE_FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL)) {
    if (handle_ != nullptr) Call<void (*)()>("fake_nvml_reset")();
  }
  ~FakeNvml() {
    if (handle_ != nullptr) {
      Call<void (*)()>("fake_nvml_reset")();
      dlclose(handle_);
    }
  }
  bool loaded() const { return handle_ != nullptr; }
  void SetInitResult(int r) { Call<void (*)(int)>("fake_nvml_set_init_result")(r); }
  void SetDeviceResult(int r) { Call<void (*)(int)>("fake_nvml_set_device_result")(r); }
  void SetProcessResult(int r) { Call<void (*)(int)>("fake_nvml_set_process_result")(r); }
  void SetOtherProcesses(unsigned n) {
    Call<void (*)(unsigned)>("fake_nvml_set_other_processes")(n);
  }
  int Shutdowns() { return Call<int (*)()>("fake_nvml_shutdowns")(); }

 private:
  template <typename F>
  F Call(const char* name) {
    return reinterpret_cast<F>(dlsym(handle_, name));
  }
  void* handle_;
};

class GpuMetricsSamplerTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(fake_.loaded()) << dlerror(); }

  static GpuMetricsSampler::Options FakeOptions(int64_t period_ns) {
    GpuMetricsSampler::Options o;
    o.period_ns = period_ns;
    o.library = GPUIDLE_FAKE_NVML_PATH;
    return o;  // CUDA_VISIBLE_DEVICES not set: both devices
  }

  static GpuMetricsSampler::Result Sample(GpuMetricsSampler::Options o,
                                          std::chrono::milliseconds how_long) {
    GpuMetricsSampler sampler(std::move(o));
    sampler.Start();
    std::this_thread::sleep_for(how_long);
    return sampler.Stop();
  }

  // A timeline of CUDA devices 0 and 1, whose UUIDs are the fake's in the other order.
  static Timeline TwoDevices() {
    Timeline t;
    t.devices.resize(2);
    t.devices[0].device = 0;
    t.devices[1].device = 1;
    t.info.visible_devices = {0, 1};
    t.info.visible_device_uuids = {kUuid1, kUuid0};
    return t;
  }

  FakeNvml fake_;
};

TEST_F(GpuMetricsSamplerTest, NvmlReadsEveryFieldOfADevice) {
  absl::StatusOr<std::unique_ptr<Nvml>> nvml = Nvml::Load(GPUIDLE_FAKE_NVML_PATH);
  ASSERT_TRUE(nvml.ok()) << nvml.status();
  absl::StatusOr<std::vector<std::string>> uuids = (*nvml)->DeviceUuids();
  ASSERT_TRUE(uuids.ok()) << uuids.status();
  EXPECT_THAT(*uuids, ElementsAre(kUuid0, kUuid1));
  absl::StatusOr<NvmlDevice> device = (*nvml)->FindDevice(kUuid0);
  ASSERT_TRUE(device.ok()) << device.status();
  const int64_t before = TimelineNowNs();
  absl::StatusOr<GpuMetricSample> s = (*nvml)->ReadMetrics(*device);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_GE(s->time_ns, before);
  EXPECT_LE(s->time_ns, TimelineNowNs());
  EXPECT_EQ(s->sm_clock_mhz, 1410u);
  EXPECT_EQ(s->sm_clock_max_mhz, 1980u);
  EXPECT_EQ(s->memory_clock_mhz, 2619u);
  EXPECT_EQ(s->memory_clock_max_mhz, 2619u);
  EXPECT_EQ(s->power_mw, 700000u);
  EXPECT_EQ(s->power_limit_mw, 700000u);
  EXPECT_EQ(s->temperature_c, 71u);
  EXPECT_EQ(s->utilization_percent, 97u);
  // Read through the older name (the fake lacks nvmlDeviceGetCurrentClocksEventReasons).
  EXPECT_TRUE(s->has_clock_events);
  EXPECT_EQ(s->clock_events, uint64_t{kClockEventPowerCap});
  EXPECT_EQ(s->pcie_generation, 4u);
  EXPECT_EQ(s->pcie_generation_max, 5u);
  EXPECT_EQ(s->pcie_width, 16u);
  EXPECT_EQ(s->pcie_width_max, 16u);
  EXPECT_EQ(s->pcie_replays, 3u);
  EXPECT_EQ(s->memory_used_bytes, uint64_t{40} << 30);
  EXPECT_EQ(s->memory_total_bytes, uint64_t{80} << 30);

  absl::StatusOr<NvmlDevice> missing = (*nvml)->FindDevice("GPU-00000000-0000-0000-0000-0");
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
}

TEST_F(GpuMetricsSamplerTest, NvmlListsProcessesAndAsksAgainWithRoomForMore) {
  fake_.SetOtherProcesses(40);  // 41 processes: more than the first array holds
  absl::StatusOr<std::unique_ptr<Nvml>> nvml = Nvml::Load(GPUIDLE_FAKE_NVML_PATH);
  ASSERT_TRUE(nvml.ok()) << nvml.status();
  absl::StatusOr<NvmlDevice> device = (*nvml)->FindDevice(kUuid0);
  ASSERT_TRUE(device.ok());
  absl::StatusOr<std::vector<NvmlProcess>> processes = (*nvml)->ComputeProcesses(*device);
  ASSERT_TRUE(processes.ok()) << processes.status();
  EXPECT_THAT(*processes, SizeIs(41));
  EXPECT_EQ((*processes)[1].pid, 4242);
  EXPECT_EQ((*processes)[1].memory_bytes, uint64_t{2} << 30);

  uint64_t last_seen_us = 0;
  absl::StatusOr<std::vector<NvmlProcessUtilization>> use =
      (*nvml)->ProcessUtilization(*device, &last_seen_us);
  ASSERT_TRUE(use.ok()) << use.status();
  ASSERT_THAT(*use, SizeIs(2));
  EXPECT_GT(last_seen_us, 0u);
  EXPECT_EQ((*use)[1].pid, 4242);
  EXPECT_EQ((*use)[1].sm_percent, 50u);
  // CLOCK_REALTIME microseconds, on the timeline's clock: close to now.
  EXPECT_LT(std::abs((*use)[1].time_ns - TimelineNowNs()), int64_t{1'000'000'000});
}

TEST_F(GpuMetricsSamplerTest, EveryLoadFailureIsAStatus) {
  absl::StatusOr<std::unique_ptr<Nvml>> none = Nvml::Load("/nonexistent/libnvidia-ml.so.1");
  EXPECT_TRUE(absl::IsUnavailable(none.status())) << none.status();
  EXPECT_THAT(none.status().message(), HasSubstr("NVML cannot be loaded"));

  // A library that is no NVML: lacks the entry points.
  absl::StatusOr<std::unique_ptr<Nvml>> not_nvml = Nvml::Load("libm.so.6");
  EXPECT_TRUE(absl::IsUnavailable(not_nvml.status())) << not_nvml.status();
  EXPECT_THAT(not_nvml.status().message(), HasSubstr("lacks nvmlInit_v2"));

  fake_.SetInitResult(kDriverNotLoaded);
  absl::StatusOr<std::unique_ptr<Nvml>> no_init = Nvml::Load(GPUIDLE_FAKE_NVML_PATH);
  EXPECT_TRUE(absl::IsUnavailable(no_init.status())) << no_init.status();
  EXPECT_THAT(no_init.status().message(), HasSubstr("Driver Not Loaded"));

  // The sampler: the reason, no reading, no crash; the timeline says nothing of it.
  GpuMetricsSampler::Result result = Sample(FakeOptions(1'000'000), std::chrono::milliseconds(20));
  EXPECT_THAT(result.status.message(), HasSubstr("Driver Not Loaded"));
  EXPECT_THAT(result.samples, IsEmpty());
  Timeline t = TwoDevices();
  GpuMetricsSampler::MoveInto(std::move(result), &t);
  EXPECT_THAT(t.gpu_metrics, IsEmpty());
  EXPECT_THAT(t.info.warnings, IsEmpty());

  GpuMetricsSampler::Options missing = FakeOptions(1'000'000);
  missing.library = "/nonexistent/libnvidia-ml.so.1";
  EXPECT_TRUE(absl::IsUnavailable(Sample(missing, std::chrono::milliseconds(5)).status));
}

TEST_F(GpuMetricsSamplerTest, NvmlShutsDownWhenItGoes) {
  {
    absl::StatusOr<std::unique_ptr<Nvml>> nvml = Nvml::Load(GPUIDLE_FAKE_NVML_PATH);
    ASSERT_TRUE(nvml.ok());
  }
  EXPECT_EQ(fake_.Shutdowns(), 1);
}

TEST_F(GpuMetricsSamplerTest, ADeviceWhoseEveryCallFailsIsOneFailedReading) {
  fake_.SetDeviceResult(999);
  absl::StatusOr<std::unique_ptr<Nvml>> nvml = Nvml::Load(GPUIDLE_FAKE_NVML_PATH);
  ASSERT_TRUE(nvml.ok());
  absl::StatusOr<NvmlDevice> device = (*nvml)->FindDevice(kUuid0);
  ASSERT_TRUE(device.ok());
  absl::StatusOr<GpuMetricSample> s = (*nvml)->ReadMetrics(*device);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("every NVML reading failed"));

  GpuMetricsSampler::Result result = Sample(FakeOptions(2'000'000), std::chrono::milliseconds(30));
  EXPECT_TRUE(result.status.ok()) << result.status;
  EXPECT_THAT(result.samples, IsEmpty());
  EXPECT_GT(result.failed_readings, 0u);
  EXPECT_EQ(result.failed_readings, result.readings);
  Timeline t = TwoDevices();
  GpuMetricsSampler::MoveInto(std::move(result), &t);
  EXPECT_THAT(t.gpu_metrics, IsEmpty());
  ASSERT_THAT(t.info.warnings, SizeIs(1));
  EXPECT_THAT(t.info.warnings[0], HasSubstr("device readings failed"));
}

TEST_F(GpuMetricsSamplerTest, PermissionDeniedOnProcessesKeepsTheReadings) {
  fake_.SetProcessResult(kNoPermission);
  GpuMetricsSampler::Result result = Sample(FakeOptions(2'000'000), std::chrono::milliseconds(30));
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_THAT(result.samples, Not(IsEmpty()));
  EXPECT_TRUE(absl::IsPermissionDenied(result.process_failure)) << result.process_failure;
  Timeline t = TwoDevices();
  GpuMetricsSampler::MoveInto(std::move(result), &t);
  EXPECT_THAT(t.gpu_metrics, Not(IsEmpty()));
  EXPECT_THAT(t.gpu_processes, IsEmpty());
  EXPECT_THAT(t.info.warnings, Contains(HasSubstr("other processes on the GPUs not known")));
  EXPECT_THAT(t.info.warnings, Contains(HasSubstr("Insufficient Permissions")));
}

TEST_F(GpuMetricsSamplerTest, ReadingsLandOnTheTimelinesDevicesByUuid) {
  const int64_t began = TimelineNowNs();
  GpuMetricsSampler::Result result = Sample(FakeOptions(5'000'000), std::chrono::milliseconds(60));
  const int64_t ended = TimelineNowNs();
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_THAT(result.uuids, ElementsAre(kUuid0, kUuid1));
  Timeline t = TwoDevices();  // CUDA ordinal 1 is the fake's first device
  GpuMetricsSampler::MoveInto(std::move(result), &t);
  EXPECT_THAT(t.info.warnings, IsEmpty());
  ASSERT_GE(t.gpu_metrics.size(), 4u);
  int on_0 = 0;
  int on_1 = 0;
  for (const GpuMetricSample& s : t.gpu_metrics) {
    EXPECT_GE(s.time_ns, began);
    EXPECT_LE(s.time_ns, ended);
    if (s.device == 1) {
      ++on_1;
      EXPECT_EQ(s.power_mw, s.power_limit_mw);
      EXPECT_TRUE(s.clock_events & kClockEventPowerCap);
      EXPECT_LT(s.pcie_generation, s.pcie_generation_max);
    } else {
      ASSERT_EQ(s.device, 0);
      ++on_0;
      EXPECT_EQ(s.power_mw, 90000u);
      EXPECT_EQ(s.pcie_width, 8u);
    }
  }
  EXPECT_GT(on_0, 0);
  EXPECT_GT(on_1, 0);
  EXPECT_TRUE(std::is_sorted(
      t.gpu_metrics.begin(), t.gpu_metrics.end(),
      [](const GpuMetricSample& a, const GpuMetricSample& b) { return a.time_ns < b.time_ns; }));

  // The other process, not this one.
  ASSERT_THAT(t.gpu_processes, SizeIs(1));
  const GpuProcessSeen& other = t.gpu_processes[0];
  EXPECT_EQ(other.pid, 4242);
  EXPECT_EQ(other.device, 1);
  EXPECT_EQ(other.memory_bytes, uint64_t{2} << 30);
  EXPECT_LE(other.first_seen_ns, other.last_seen_ns);
  EXPECT_GE(other.first_seen_ns, began - 1'000'000);
  EXPECT_THAT(other.busy_sample_ns, Not(IsEmpty()));
  EXPECT_TRUE(std::is_sorted(other.busy_sample_ns.begin(), other.busy_sample_ns.end()));
  for (const GpuProcessSeen& p : t.gpu_processes) EXPECT_NE(p.pid, ::getpid());
}

TEST_F(GpuMetricsSamplerTest, OnlyTheTimelinesDevicesAreKept) {
  GpuMetricsSampler::Result result = Sample(FakeOptions(5'000'000), std::chrono::milliseconds(30));
  Timeline t = TwoDevices();
  t.devices.resize(1);  // only CUDA device 0 (the fake's second) did work
  GpuMetricsSampler::MoveInto(std::move(result), &t);
  ASSERT_THAT(t.gpu_metrics, Not(IsEmpty()));
  for (const GpuMetricSample& s : t.gpu_metrics) EXPECT_EQ(s.device, 0);
  EXPECT_THAT(t.gpu_processes, IsEmpty());  // the other process is on the fake's first
}

TEST_F(GpuMetricsSamplerTest, CudaVisibleDevicesSelectsTheDevicesSampled) {
  GpuMetricsSampler::Options by_index = FakeOptions(5'000'000);
  by_index.cuda_visible_devices = "1";
  EXPECT_THAT(Sample(by_index, std::chrono::milliseconds(15)).uuids, ElementsAre(kUuid1));

  GpuMetricsSampler::Options by_uuid = FakeOptions(5'000'000);
  by_uuid.cuda_visible_devices = "GPU-1111,0";  // a UUID prefix, as CUDA takes it
  EXPECT_THAT(Sample(by_uuid, std::chrono::milliseconds(15)).uuids, ElementsAre(kUuid0));

  GpuMetricsSampler::Options none = FakeOptions(5'000'000);
  none.cuda_visible_devices = "";
  GpuMetricsSampler::Result result = Sample(none, std::chrono::milliseconds(15));
  EXPECT_TRUE(absl::IsNotFound(result.status)) << result.status;
  EXPECT_THAT(result.samples, IsEmpty());
}

TEST_F(GpuMetricsSamplerTest, CudasUuidsMapDevicesWhereTheTimelineHasNone) {
  GpuMetricsSampler::Options o = FakeOptions(5'000'000);
  o.cuda_device_uuids = [] { return std::vector<std::string>{kUuid1, kUuid0}; };
  GpuMetricsSampler::Result result = Sample(o, std::chrono::milliseconds(30));
  EXPECT_THAT(result.cuda_ordinals, SizeIs(2));
  Timeline t = TwoDevices();
  t.info.visible_device_uuids.clear();  // a driver without cuDeviceGetUuid
  GpuMetricsSampler::MoveInto(std::move(result), &t);
  ASSERT_THAT(t.gpu_metrics, Not(IsEmpty()));
  for (const GpuMetricSample& s : t.gpu_metrics) {
    EXPECT_EQ(s.power_mw == 700000u, s.device == 1) << s.device;
  }
}

TEST_F(GpuMetricsSamplerTest, MemoryIsBoundedByHalvingTheRate) {
  GpuMetricsSampler::Options o = FakeOptions(200'000);  // 0.2 ms
  o.max_samples = 40;
  GpuMetricsSampler::Result result = Sample(o, std::chrono::milliseconds(150));
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_LE(result.samples.size(), 40u);
  EXPECT_GE(result.halvings, 1);
  EXPECT_EQ(result.period_ns, int64_t{200'000} << result.halvings);
  // Both devices keep readings after the halvings.
  EXPECT_TRUE(std::any_of(result.samples.begin(), result.samples.end(),
                          [](const GpuMetricSample& s) { return s.device == 0; }));
  EXPECT_TRUE(std::any_of(result.samples.begin(), result.samples.end(),
                          [](const GpuMetricSample& s) { return s.device == 1; }));
  size_t busy = 0;
  for (const GpuProcessSeen& p : result.processes) busy += p.busy_sample_ns.size();
  EXPECT_LE(busy, 40u);
  Timeline t = TwoDevices();
  GpuMetricsSampler::MoveInto(std::move(result), &t);
  EXPECT_THAT(t.info.warnings, Contains(HasSubstr("every other one was dropped")));
  for (size_t i = 1; i < t.gpu_metrics.size(); ++i) {
    EXPECT_LE(t.gpu_metrics[i - 1].time_ns, t.gpu_metrics[i].time_ns);
  }
}

TEST_F(GpuMetricsSamplerTest, AStopDoesNotWaitForThePeriod) {
  GpuMetricsSampler sampler(FakeOptions(int64_t{60} * 1'000'000'000));  // a minute
  sampler.Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto began = std::chrono::steady_clock::now();
  GpuMetricsSampler::Result result = sampler.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(1));
  EXPECT_TRUE(result.status.ok()) << result.status;
  EXPECT_THAT(result.samples, SizeIs(2));  // the first reading, at once
}

TEST_F(GpuMetricsSamplerTest, AStopAtOnceIsCancelledOrRead) {
  for (int i = 0; i < 20; ++i) {
    GpuMetricsSampler sampler(FakeOptions(1'000'000));
    sampler.Start();
    GpuMetricsSampler::Result result = sampler.Stop();
    EXPECT_TRUE(result.status.ok() || absl::IsCancelled(result.status)) << result.status;
  }
  GpuMetricsSampler never_stopped(FakeOptions(1'000'000));
  never_stopped.Start();  // the destructor stops it
}

TEST_F(GpuMetricsSamplerTest, OffWhenThePeriodIsZero) {
  GpuMetricsSampler sampler(FakeOptions(0));
  sampler.Start();
  GpuMetricsSampler::Result result = sampler.Stop();
  EXPECT_FALSE(result.status.ok());
  EXPECT_THAT(result.samples, IsEmpty());
}

// On a machine with the driver's NVML (skipped elsewhere): the real ABI, every device read.
TEST(DriverNvmlTest, ReadsEveryDeviceWhereTheDriversNvmlIsThere) {
  absl::StatusOr<std::unique_ptr<Nvml>> nvml = Nvml::Load("libnvidia-ml.so.1");
  if (!nvml.ok()) GTEST_SKIP() << nvml.status();
  absl::StatusOr<std::vector<std::string>> uuids = (*nvml)->DeviceUuids();
  ASSERT_TRUE(uuids.ok()) << uuids.status();
  ASSERT_THAT(*uuids, Not(IsEmpty()));
  for (const std::string& uuid : *uuids) {
    EXPECT_THAT(uuid, ::testing::StartsWith("GPU-"));
    absl::StatusOr<NvmlDevice> device = (*nvml)->FindDevice(uuid);
    ASSERT_TRUE(device.ok()) << device.status();
    absl::StatusOr<GpuMetricSample> s = (*nvml)->ReadMetrics(*device);
    ASSERT_TRUE(s.ok()) << s.status();
    std::printf(
        "%s: sm %u/%u MHz, memory %u/%u MHz, power %u/%u mW, %u C, utilization %u %%, "
        "clock events 0x%llx (%d), PCIe gen %u/%u x%u/%u, replays %llu, memory %llu/%llu\n",
        uuid.c_str(), s->sm_clock_mhz, s->sm_clock_max_mhz, s->memory_clock_mhz,
        s->memory_clock_max_mhz, s->power_mw, s->power_limit_mw, s->temperature_c,
        s->utilization_percent, static_cast<unsigned long long>(s->clock_events),
        s->has_clock_events, s->pcie_generation, s->pcie_generation_max, s->pcie_width,
        s->pcie_width_max, static_cast<unsigned long long>(s->pcie_replays),
        static_cast<unsigned long long>(s->memory_used_bytes),
        static_cast<unsigned long long>(s->memory_total_bytes));
    EXPECT_GT(s->sm_clock_max_mhz, 0u);
    EXPECT_GT(s->memory_total_bytes, 0u);
    EXPECT_LE(s->memory_used_bytes, s->memory_total_bytes);
    EXPECT_GT(s->power_limit_mw, 0u);
    EXPECT_TRUE(s->has_clock_events);
    absl::StatusOr<std::vector<NvmlProcess>> processes = (*nvml)->ComputeProcesses(*device);
    std::printf("  processes: %s", processes.ok() ? "" : processes.status().ToString().c_str());
    if (processes.ok()) {
      for (const NvmlProcess& p : *processes) {
        std::printf(" %lld (%llu bytes)", static_cast<long long>(p.pid),
                    static_cast<unsigned long long>(p.memory_bytes));
      }
    }
    uint64_t last_seen_us = 0;
    absl::StatusOr<std::vector<NvmlProcessUtilization>> use =
        (*nvml)->ProcessUtilization(*device, &last_seen_us);
    std::printf("\n  utilization samples: %s", use.ok() ? "" : use.status().ToString().c_str());
    if (use.ok()) {
      for (const NvmlProcessUtilization& u : *use) {
        std::printf(" %lld: sm %u%% at %.3f s ago", static_cast<long long>(u.pid), u.sm_percent,
                    static_cast<double>(TimelineNowNs() - u.time_ns) / 1e9);
      }
    }
    std::printf("\n");
  }
  GpuMetricsSampler::Options o;
  o.period_ns = 50'000'000;
  o.library = "libnvidia-ml.so.1";
  GpuMetricsSampler sampler(o);
  sampler.Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  GpuMetricsSampler::Result result = sampler.Stop();
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(result.failed_readings, 0u) << result.first_failure;
  EXPECT_GE(result.samples.size(), 2 * uuids->size());
  std::printf("sampler: %zu readings of %zu devices; %zu other processes; %s\n",
              result.samples.size(), result.uuids.size(), result.processes.size(),
              result.process_failure.ToString().c_str());
  for (const GpuProcessSeen& p : result.processes) {
    std::printf("  pid %lld on %s: %llu bytes, %zu busy samples\n", static_cast<long long>(p.pid),
                result.uuids[static_cast<size_t>(p.device)].c_str(),
                static_cast<unsigned long long>(p.memory_bytes), p.busy_sample_ns.size());
  }
}

}  // namespace
}  // namespace gpuidle::internal
