// DevicePmSampler against a fake of CUPTI's PM-sampling and profiler-host calls: which metrics
// it chooses, what a decode gives, and how a refusal reads.
#include "collect/pm_sampling.h"

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuidle::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// What the fake chip offers and holds.
struct FakeChip {
  std::set<std::string> offered;
  size_t max_per_pass = 16;  // more metrics than this take two passes
  CUptiResult availability = CUPTI_SUCCESS;
  std::vector<std::string> added;  // the host object's metrics
  struct Sample {
    uint64_t start, end;
    std::vector<double> values;  // by metric, in the order the sampler asked for them
  };
  std::vector<Sample> hardware;  // completed, not yet decoded
  size_t decoded_in_image = 0;
  int starts = 0, stops = 0;
  std::vector<std::string> teardown;  // the teardown calls, in order
};
FakeChip* chip = nullptr;

CUpti_Profiler_Host_Object* const kHost = reinterpret_cast<CUpti_Profiler_Host_Object*>(0x10);
CUpti_PmSampling_Object* const kSampling = reinterpret_cast<CUpti_PmSampling_Object*>(0x20);

CUptiResult Init(CUpti_Profiler_Initialize_Params*) { return CUPTI_SUCCESS; }
CUptiResult ChipName(CUpti_Device_GetChipName_Params* p) {
  p->pChipName = "GH100";
  return CUPTI_SUCCESS;
}
CUptiResult Availability(CUpti_PmSampling_GetCounterAvailability_Params* p) {
  p->counterAvailabilityImageSize = 8;
  return chip->availability;
}
CUptiResult Enable(CUpti_PmSampling_Enable_Params* p) {
  p->pPmSamplingObject = kSampling;
  return CUPTI_SUCCESS;
}
CUptiResult SetConfig(CUpti_PmSampling_SetConfig_Params* p) {
  EXPECT_EQ(p->triggerMode, CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL);
  EXPECT_EQ(p->samplingInterval, 10'000'000u);
  return CUPTI_SUCCESS;
}
CUptiResult DataSize(CUpti_PmSampling_GetCounterDataSize_Params* p) {
  p->counterDataSize = 64;
  return CUPTI_SUCCESS;
}
CUptiResult DataInit(CUpti_PmSampling_CounterDataImage_Initialize_Params* p) {
  std::memset(p->pCounterData, 0, p->counterDataSize);
  return CUPTI_SUCCESS;
}
CUptiResult Start(CUpti_PmSampling_Start_Params*) {
  ++chip->starts;
  return CUPTI_SUCCESS;
}
CUptiResult Stop(CUpti_PmSampling_Stop_Params*) {
  ++chip->stops;
  chip->teardown.push_back("stop");
  return CUPTI_SUCCESS;
}
CUptiResult Disable(CUpti_PmSampling_Disable_Params* p) {
  EXPECT_EQ(p->pPmSamplingObject, kSampling);
  chip->teardown.push_back("disable");
  return CUPTI_SUCCESS;
}
CUptiResult DeInit(CUpti_Profiler_DeInitialize_Params*) {
  chip->teardown.push_back("profiler");
  return CUPTI_SUCCESS;
}
// Decodes at most 2 samples per image, to make the sampler decode again.
CUptiResult Decode(CUpti_PmSampling_DecodeData_Params* p) {
  chip->decoded_in_image = std::min<size_t>(2, chip->hardware.size());
  p->decodeStopReason = chip->hardware.size() > 2
                            ? CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL
                            : CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS;
  return CUPTI_SUCCESS;
}
CUptiResult Info(CUpti_PmSampling_GetCounterDataInfo_Params* p) {
  p->numCompletedSamples = chip->decoded_in_image;
  return CUPTI_SUCCESS;
}
CUptiResult SampleInfo(CUpti_PmSampling_CounterData_GetSampleInfo_Params* p) {
  p->startTimestamp = chip->hardware[p->sampleIndex].start;
  p->endTimestamp = chip->hardware[p->sampleIndex].end;
  return CUPTI_SUCCESS;
}
CUptiResult HostInit(CUpti_Profiler_Host_Initialize_Params* p) {
  EXPECT_EQ(p->profilerType, CUPTI_PROFILER_TYPE_PM_SAMPLING);
  chip->added.clear();
  p->pHostObject = kHost;
  return CUPTI_SUCCESS;
}
CUptiResult HostDone(CUpti_Profiler_Host_Deinitialize_Params*) {
  chip->teardown.push_back("host");
  return CUPTI_SUCCESS;
}
CUptiResult AddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params* p) {
  for (size_t i = 0; i < p->numMetrics; ++i) {
    if (chip->offered.count(p->ppMetricNames[i]) == 0) return CUPTI_ERROR_INVALID_METRIC_NAME;
  }
  for (size_t i = 0; i < p->numMetrics; ++i) chip->added.push_back(p->ppMetricNames[i]);
  return CUPTI_SUCCESS;
}
CUptiResult ConfigSize(CUpti_Profiler_Host_GetConfigImageSize_Params* p) {
  p->configImageSize = 16;
  return CUPTI_SUCCESS;
}
CUptiResult ConfigImage(CUpti_Profiler_Host_GetConfigImage_Params*) { return CUPTI_SUCCESS; }
CUptiResult Passes(CUpti_Profiler_Host_GetNumOfPasses_Params* p) {
  p->numOfPasses = chip->added.size() > chip->max_per_pass ? 2 : 1;
  return CUPTI_SUCCESS;
}
CUptiResult Evaluate(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) {
  const FakeChip::Sample& s = chip->hardware[p->rangeIndex];
  EXPECT_EQ(p->numMetrics, s.values.size());
  for (size_t i = 0; i < p->numMetrics; ++i) p->pMetricValues[i] = s.values[i];
  if (p->rangeIndex + 1 == chip->decoded_in_image) {
    chip->hardware.erase(chip->hardware.begin(),
                         chip->hardware.begin() + static_cast<long>(chip->decoded_in_image));
  }
  return CUPTI_SUCCESS;
}
CUptiResult ResultString(CUptiResult r, const char** text) {
  *text = r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"
                                                   : "CUPTI_ERROR_UNKNOWN";
  return CUPTI_SUCCESS;
}

CuptiApi FakeApi() {
  CuptiApi api;
  api.GetResultString = &ResultString;
  api.ProfilerInitialize = &Init;
  api.ProfilerDeInitialize = &DeInit;
  api.DeviceGetChipName = &ChipName;
  api.PmSamplingGetCounterAvailability = &Availability;
  api.PmSamplingEnable = &Enable;
  api.PmSamplingDisable = &Disable;
  api.PmSamplingSetConfig = &SetConfig;
  api.PmSamplingGetCounterDataSize = &DataSize;
  api.PmSamplingCounterDataImageInitialize = &DataInit;
  api.PmSamplingStart = &Start;
  api.PmSamplingStop = &Stop;
  api.PmSamplingDecodeData = &Decode;
  api.PmSamplingGetCounterDataInfo = &Info;
  api.PmSamplingCounterDataGetSampleInfo = &SampleInfo;
  api.ProfilerHostInitialize = &HostInit;
  api.ProfilerHostDeinitialize = &HostDone;
  api.ProfilerHostConfigAddMetrics = &AddMetrics;
  api.ProfilerHostGetConfigImageSize = &ConfigSize;
  api.ProfilerHostGetConfigImage = &ConfigImage;
  api.ProfilerHostGetNumOfPasses = &Passes;
  api.ProfilerHostEvaluateToGpuValues = &Evaluate;
  return api;
}

constexpr char kSm[] = "sm__cycles_active.avg.pct_of_peak_sustained_elapsed";
constexpr char kDram[] = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed";
constexpr char kGmma[] = "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed";
constexpr char kHmma[] = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed";
constexpr char kPcieRead[] = "pcie__read_bytes.sum.per_second";
constexpr char kNvlRead[] = "nvlrx__bytes.sum.per_second";

class PmSamplingTest : public ::testing::Test {
 protected:
  void SetUp() override { chip = &chip_; }
  void TearDown() override { chip = nullptr; }
  FakeChip chip_;
  CuptiApi api_ = FakeApi();
};

TEST_F(PmSamplingTest, ChoosesTheFirstOfferedMetricOfEachFigureAndEveryTensorPipe) {
  chip_.offered = {kSm,
                   kDram,
                   kGmma,
                   kHmma,
                   kPcieRead,
                   kNvlRead,
                   "dram__throughput.avg.pct_of_peak_sustained_elapsed_not_this"};
  absl::StatusOr<std::unique_ptr<DevicePmSampler>> s = DevicePmSampler::Create(api_, 0, 10'000'000);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)->chip(), "GH100");
  EXPECT_THAT((*s)->metrics(), ElementsAre(kSm, kDram, kGmma, kHmma, kPcieRead, kNvlRead));
}

TEST_F(PmSamplingTest, DropsTheLeastImportantUntilOnePassHoldsThem) {
  chip_.offered = {kSm, kDram, kGmma, kPcieRead, kNvlRead};
  chip_.max_per_pass = 3;
  absl::StatusOr<std::unique_ptr<DevicePmSampler>> s = DevicePmSampler::Create(api_, 0, 10'000'000);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_THAT((*s)->metrics(), ElementsAre(kSm, kDram, kGmma));
}

TEST_F(PmSamplingTest, DecodesSamplesIntoFiguresTheBusiestTensorPipeCounting) {
  chip_.offered = {kSm, kDram, kGmma, kHmma, kPcieRead};
  absl::StatusOr<std::unique_ptr<DevicePmSampler>> s = DevicePmSampler::Create(api_, 3, 10'000'000);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE((*s)->Start().ok());
  // Five samples: the fake decodes two per image, so the sampler must decode three times.
  for (uint64_t i = 0; i < 5; ++i) {
    chip_.hardware.push_back(
        {i * 10, i * 10 + 10, {90.0 + static_cast<double>(i), 40, 12, 61, 2e9}});
  }
  std::vector<GpuThroughputSample> out;
  bool overflow = true;
  ASSERT_TRUE((*s)->Decode(&out, &overflow).ok());
  EXPECT_FALSE(overflow);
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[4].device, 3);
  EXPECT_EQ(out[4].start_ns, 40);
  EXPECT_EQ(out[4].end_ns, 50);
  EXPECT_FLOAT_EQ(out[4].sm_active_pct, 94);
  EXPECT_FLOAT_EQ(out[4].dram_pct, 40);
  EXPECT_FLOAT_EQ(out[4].tensor_active_pct, 61);  // the hmma pipe, busier than gmma's 12
  EXPECT_FLOAT_EQ(out[4].pcie_read_bytes_per_s, 2e9F);
  EXPECT_LT(out[4].nvlink_read_bytes_per_s, 0);  // not offered: not measured
  ASSERT_TRUE((*s)->Stop().ok());
  EXPECT_EQ(chip_.starts, 1);
  EXPECT_EQ(chip_.stops, 1);
}

TEST_F(PmSamplingTest, ASamplerTearsItsSamplingDownInCuptisOrder) {
  chip_.offered = {kSm, kDram};
  absl::StatusOr<std::unique_ptr<DevicePmSampler>> s = DevicePmSampler::Create(api_, 0, 10'000'000);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE((*s)->Start().ok());
  chip_.teardown.clear();  // the host objects of choosing the metrics
  s->reset();              // before CUPTI is detached: nothing of it may outlive cuptiFinalize
  EXPECT_THAT(chip_.teardown, ElementsAre("stop", "disable", "host", "profiler"));
}

TEST_F(PmSamplingTest, AChipOfferingNoneIsUnavailable) {
  chip_.offered = {};
  absl::StatusOr<std::unique_ptr<DevicePmSampler>> s = DevicePmSampler::Create(api_, 0, 10'000'000);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "chip GH100 offers none of the throughput metrics gpuidle samples");
}

TEST_F(PmSamplingTest, APermissionRefusalSaysHowToAllowIt) {
  chip_.offered = {kSm};
  chip_.availability = CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
  absl::StatusOr<std::unique_ptr<DevicePmSampler>> s = DevicePmSampler::Create(api_, 0, 10'000'000);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::IsUnavailable(s.status()));
  EXPECT_THAT(s.status().message(),
              HasSubstr("counter availability failed: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (the "
                        "driver lets only administrators read GPU performance counters"));
}

TEST_F(PmSamplingTest, ACuptiWithoutPmSamplingIsUnavailable) {
  api_.pm_sampling_missing = "cuptiPmSamplingEnable";
  absl::StatusOr<std::unique_ptr<DevicePmSampler>> s = DevicePmSampler::Create(api_, 0, 10'000'000);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(), "this CUPTI has no PM sampling (cuptiPmSamplingEnable)");
}

}  // namespace
}  // namespace gpuidle::internal
