// What the collector asks the CUDA driver.
#include "collect/cuda_driver.h"

#include <cupti.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "collect/collector_fixture.h"
#include "collect/cuda_driver.h"
#include "collect/fake_cupti.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/timeline.h"
#include "testing/temp_dir.h"

namespace gpuidle::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

TEST(CudaDriverTest, WithoutALoadedDriverCudaIsNotInitialised) {
  EXPECT_FALSE(CudaDriverInitialized());
  EXPECT_EQ(CudaDriverDeviceCount(), -1);
}

TEST(CudaDriverTest, ALateStartListsEveryVisibleDeviceSoThatUnusedOnesShow) {
  // Eight GPUs, work on one, no DEVICE records (the collection began after CUDA was ready).
  Timeline t;
  t.devices.push_back(DeviceTimeline{3, "", {}});
  CudaDriverQueries driver;
  driver.device_count = [] { return 8; };
  driver.device_name = [](int) { return std::string("NVIDIA H200"); };
  CompleteDevicesFromDriver(&t, driver);
  EXPECT_THAT(t.info.visible_devices, ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  EXPECT_THAT(t.info.visible_device_names, SizeIs(8));
  EXPECT_EQ(t.devices[0].name, "NVIDIA H200");
}

TEST(CudaDriverTest, KeepsWhatCuptiListed) {
  Timeline t;
  t.info.visible_devices = {0};
  t.info.visible_device_names = {"NVIDIA H100"};
  t.devices.push_back(DeviceTimeline{0, "", {}});
  CudaDriverQueries driver;
  driver.device_count = [] { return 8; };  // not asked: CUPTI listed the devices
  driver.device_name = [](int) { return std::string("from the driver"); };
  CompleteDevicesFromDriver(&t, driver);
  EXPECT_THAT(t.info.visible_devices, ElementsAre(0));
  EXPECT_EQ(t.devices[0].name, "NVIDIA H100");
}

TEST(CudaDriverTest, AMachineWithoutTheDriversDeviceNodeHasNoNvidiaGpu) {
  gpuidle::testing::TempDir dev;
  const absl::Status none = CheckForNvidiaGpu(dev.path());
  EXPECT_EQ(none.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(none.message(),
            absl::StrCat("no NVIDIA GPU on this machine (", dev.path(), "/nvidiactl is missing)"));
  dev.Write("nvidiactl", "");
  EXPECT_TRUE(CheckForNvidiaGpu(dev.path()).ok());

  gpuidle::testing::TempDir wsl;  // WSL 2: the GPU is reached through /dev/dxg
  wsl.Write("dxg", "");
  EXPECT_TRUE(CheckForNvidiaGpu(wsl.path()).ok());
}

TEST(CudaDriverTest, WithoutADriverTheReasonNamesTheDriversLibrary) {
  if (CheckForNvidiaGpu().ok()) GTEST_SKIP() << "this machine may have a driver";
  const std::string why = CudaDriverWhyNoDevice();
  if (why.empty()) GTEST_SKIP() << "libcuda.so.1 loads here although there is no GPU";
  EXPECT_THAT(why, HasSubstr("no NVIDIA driver"));
  EXPECT_THAT(why, HasSubstr("libcuda.so.1"));
  EXPECT_LE(why.size(), 200u) << why;
  EXPECT_EQ(CudaDriverDeviceCount(), -1) << "the driver must not stay loaded";
}

TEST(DeviceNamesTest, WithoutALoadedDriverThereIsNoName) {
  // This test process never loads libcuda (and gpuidle never loads it itself).
  EXPECT_EQ(CudaDriverDeviceName(0), "");
}

}  // namespace
}  // namespace gpuidle::internal
