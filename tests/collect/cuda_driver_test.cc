// What the collector asks the CUDA driver.
#include "collect/cuda_driver.h"

#include <cupti.h>

#include <cstdint>
#include <optional>
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
using ::testing::IsEmpty;
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

TEST(CudaDriverTest, EveryListedDeviceGetsItsUuidAndPhysicalIndex) {
  // CUDA_VISIBLE_DEVICES=5,2: CUDA device 0 is GPU 5, device 1 GPU 2.
  Timeline t;
  t.devices.push_back(DeviceTimeline{1, "", {}});
  CudaDriverQueries driver;
  driver.device_count = [] { return 2; };
  driver.device_name = [](int) { return std::string("NVIDIA H200"); };
  driver.device_uuid = [](int device) {
    return absl::StrCat("GPU-0000000", device, "-1111-2222-3333-444444444444");
  };
  driver.cuda_visible_devices = []() -> std::optional<std::string> { return "5,2"; };
  CompleteDevicesFromDriver(&t, driver);
  EXPECT_THAT(t.info.visible_devices, ElementsAre(0, 1));
  EXPECT_THAT(t.info.visible_device_uuids, ElementsAre("GPU-00000000-1111-2222-3333-444444444444",
                                                       "GPU-00000001-1111-2222-3333-444444444444"));
  EXPECT_THAT(t.info.visible_device_physical, ElementsAre(5, 2));
}

TEST(CudaDriverTest, DevicesListedByCuptiGetThemInCuptisOrder) {
  Timeline t;
  t.info.visible_devices = {1, 0};
  t.info.visible_device_names = {"a", "b"};
  CudaDriverQueries driver;
  driver.device_uuid = [](int device) {
    return device == 1 ? std::string("GPU-one") : std::string();
  };
  driver.cuda_visible_devices = []() -> std::optional<std::string> { return std::nullopt; };
  CompleteDevicesFromDriver(&t, driver);
  EXPECT_THAT(t.info.visible_device_uuids, ElementsAre("GPU-one", ""));
  EXPECT_THAT(t.info.visible_device_physical, ElementsAre(1, 0));  // all GPUs visible
}

TEST(CudaDriverTest, WithoutUuidsFromTheDriverOrIndicesFromTheVariableBothStayEmpty) {
  Timeline t;
  t.info.visible_devices = {0, 1};
  t.info.visible_device_names = {"", ""};
  CudaDriverQueries driver;
  driver.device_uuid = [](int) { return std::string(); };
  // Devices named by UUID: only NVML could give their indices.
  driver.cuda_visible_devices = []() -> std::optional<std::string> {
    return "GPU-2f9c1a7e-0b3d-4c55-9e61-7a8b9c0d1e2f,MIG-abc";
  };
  CompleteDevicesFromDriver(&t, driver);
  EXPECT_THAT(t.info.visible_devices, ElementsAre(0, 1));
  EXPECT_THAT(t.info.visible_device_uuids, IsEmpty());
  EXPECT_THAT(t.info.visible_device_physical, IsEmpty());
}

TEST(CudaDriverTest, PhysicalIndicesFollowCudaVisibleDevices) {
  EXPECT_THAT(PhysicalDeviceIndices(std::nullopt, 3), ElementsAre(0, 1, 2));
  EXPECT_THAT(PhysicalDeviceIndices("3,1", 2), ElementsAre(3, 1));
  EXPECT_THAT(PhysicalDeviceIndices(" 6 , 7", 3), ElementsAre(6, 7, -1));
  EXPECT_THAT(PhysicalDeviceIndices("4,GPU-2f9c1a7e-0b3d-4c55-9e61-7a8b9c0d1e2f,2", 3),
              ElementsAre(4, -1, 2));
  // CUDA stops at the first entry it cannot read: no device from there on.
  EXPECT_THAT(PhysicalDeviceIndices("1,x,2", 3), ElementsAre(1, -1, -1));
  EXPECT_THAT(PhysicalDeviceIndices("-1", 1), ElementsAre(-1));
  EXPECT_THAT(PhysicalDeviceIndices("", 1), ElementsAre(-1));
  EXPECT_THAT(PhysicalDeviceIndices("99999999999", 1), ElementsAre(-1));  // beyond int
  EXPECT_THAT(PhysicalDeviceIndices("0", 0), IsEmpty());
}

TEST(CudaDriverTest, UuidsArePrintedAsNvidiaSmiPrintsThem) {
  const uint8_t bytes[16] = {0x2f, 0x9c, 0x1a, 0x7e, 0x0b, 0x3d, 0x4c, 0x55,
                             0x9e, 0x61, 0x7a, 0x8b, 0x9c, 0x0d, 0x1e, 0x2f};
  EXPECT_EQ(GpuUuidText(bytes), "GPU-2f9c1a7e-0b3d-4c55-9e61-7a8b9c0d1e2f");
}

TEST(CudaDriverTest, WithoutALoadedDriverThereIsNoUuid) { EXPECT_EQ(CudaDriverDeviceUuid(0), ""); }

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
