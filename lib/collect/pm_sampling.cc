#include "collect/pm_sampling.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace gpuidle::internal {
namespace {

// CUPTI's parameter structs: size set, the rest zero.
template <typename T>
T Params(size_t size) {
  T p;
  std::memset(&p, 0, sizeof(p));
  p.structSize = size;
  return p;
}
#define GPUIDLE_PM_PARAMS(type) Params<type>(type##_STRUCT_SIZE)

}  // namespace

absl::Status PmSamplingStatus(const CuptiApi& api, CUptiResult result, const char* what) {
  if (result == CUPTI_SUCCESS) return absl::OkStatus();
  std::string words = absl::StrCat(what, " failed: ", DescribeCuptiResult(api, result));
  if (result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
    absl::StrAppend(&words,
                    " (the driver lets only administrators read GPU performance counters: "
                    "NVreg_RestrictProfilingToAdminUsers=0 allows every user)");
  }
  return absl::UnavailableError(words);
}

absl::StatusOr<std::unique_ptr<DevicePmSampler>> DevicePmSampler::Create(const CuptiApi& api,
                                                                         int device,
                                                                         int64_t interval_ns) {
  if (api.pm_sampling_missing != nullptr || api.ProfilerInitialize == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("this CUPTI has no PM sampling (",
                     api.pm_sampling_missing != nullptr ? api.pm_sampling_missing : "", ")"));
  }
  std::unique_ptr<DevicePmSampler> s(new DevicePmSampler(api, device));
  auto init = GPUIDLE_PM_PARAMS(CUpti_Profiler_Initialize_Params);
  if (absl::Status st = PmSamplingStatus(api, api.ProfilerInitialize(&init), "profiler set-up");
      !st.ok()) {
    return st;
  }
  s->profiler_initialized_ = true;
  auto chip = GPUIDLE_PM_PARAMS(CUpti_Device_GetChipName_Params);
  chip.deviceIndex = static_cast<size_t>(device);
  if (absl::Status st = PmSamplingStatus(api, api.DeviceGetChipName(&chip), "chip name");
      !st.ok()) {
    return st;
  }
  s->chip_ = chip.pChipName != nullptr ? chip.pChipName : "";

  auto avail = GPUIDLE_PM_PARAMS(CUpti_PmSampling_GetCounterAvailability_Params);
  avail.deviceIndex = static_cast<size_t>(device);
  if (absl::Status st = PmSamplingStatus(api, api.PmSamplingGetCounterAvailability(&avail),
                                         "counter availability");
      !st.ok()) {
    return st;
  }
  std::vector<uint8_t> availability(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = availability.data();
  if (absl::Status st = PmSamplingStatus(api, api.PmSamplingGetCounterAvailability(&avail),
                                         "counter availability");
      !st.ok()) {
    return st;
  }
  if (absl::Status st = s->ChooseMetrics(availability); !st.ok()) return st;

  auto config_size = GPUIDLE_PM_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
  config_size.pHostObject = s->host_;
  if (absl::Status st = PmSamplingStatus(api, api.ProfilerHostGetConfigImageSize(&config_size),
                                         "config image size");
      !st.ok()) {
    return st;
  }
  std::vector<uint8_t> config(config_size.configImageSize);
  auto config_image = GPUIDLE_PM_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
  config_image.pHostObject = s->host_;
  config_image.configImageSize = config.size();
  config_image.pConfigImage = config.data();
  if (absl::Status st =
          PmSamplingStatus(api, api.ProfilerHostGetConfigImage(&config_image), "config image");
      !st.ok()) {
    return st;
  }

  auto enable = GPUIDLE_PM_PARAMS(CUpti_PmSampling_Enable_Params);
  enable.deviceIndex = static_cast<size_t>(device);
  if (absl::Status st = PmSamplingStatus(api, api.PmSamplingEnable(&enable), "PM sampling enable");
      !st.ok()) {
    return st;
  }
  s->sampling_ = enable.pPmSamplingObject;

  auto set = GPUIDLE_PM_PARAMS(CUpti_PmSampling_SetConfig_Params);
  set.pPmSamplingObject = s->sampling_;
  set.configSize = config.size();
  set.pConfig = config.data();
  set.hardwareBufferSize = kHardwareBufferBytes;
  set.samplingInterval = static_cast<uint64_t>(interval_ns);
  set.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
  set.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_LATEST;
  if (absl::Status st = PmSamplingStatus(api, api.PmSamplingSetConfig(&set), "PM sampling config");
      !st.ok()) {
    return st;
  }

  std::vector<const char*> names;
  for (const std::string& m : s->metrics_) names.push_back(m.c_str());
  auto data_size = GPUIDLE_PM_PARAMS(CUpti_PmSampling_GetCounterDataSize_Params);
  data_size.pPmSamplingObject = s->sampling_;
  data_size.pMetricNames = names.data();
  data_size.numMetrics = names.size();
  data_size.maxSamples = kSamplesPerDecode;
  if (absl::Status st =
          PmSamplingStatus(api, api.PmSamplingGetCounterDataSize(&data_size), "counter data size");
      !st.ok()) {
    return st;
  }
  s->counter_data_.assign(data_size.counterDataSize, 0);
  auto init_data = GPUIDLE_PM_PARAMS(CUpti_PmSampling_CounterDataImage_Initialize_Params);
  init_data.pPmSamplingObject = s->sampling_;
  init_data.counterDataSize = s->counter_data_.size();
  init_data.pCounterData = s->counter_data_.data();
  if (absl::Status st = PmSamplingStatus(api, api.PmSamplingCounterDataImageInitialize(&init_data),
                                         "counter data image");
      !st.ok()) {
    return st;
  }
  s->counter_data_empty_ = s->counter_data_;
  return s;
}

// Each candidate the chip offers alone, then together; while they need more than one pass, the
// least important goes.
absl::Status DevicePmSampler::ChooseMetrics(const std::vector<uint8_t>& availability) {
  const auto fresh_host = [&]() -> absl::Status {
    if (host_ != nullptr) {
      auto done = GPUIDLE_PM_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
      done.pHostObject = host_;
      api_.ProfilerHostDeinitialize(&done);
      host_ = nullptr;
    }
    auto p = GPUIDLE_PM_PARAMS(CUpti_Profiler_Host_Initialize_Params);
    p.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
    p.pChipName = chip_.c_str();
    p.pCounterAvailabilityImage = availability.data();
    absl::Status st = PmSamplingStatus(api_, api_.ProfilerHostInitialize(&p), "profiler host");
    if (st.ok()) host_ = p.pHostObject;
    return st;
  };
  const auto add = [&](const std::vector<const char*>& names) {
    auto p = GPUIDLE_PM_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
    p.pHostObject = host_;
    p.ppMetricNames = const_cast<const char**>(names.data());
    p.numMetrics = names.size();
    return api_.ProfilerHostConfigAddMetrics(&p);
  };

  std::vector<const char*> chosen;
  std::vector<ThroughputFigure> roles;
  for (const ThroughputMetric& c : kThroughputMetrics) {
    const bool have_role = std::find(roles.begin(), roles.end(), c.figure) != roles.end();
    if (have_role && c.figure != ThroughputFigure::kTensorActive) continue;
    if (absl::Status st = fresh_host(); !st.ok()) return st;
    if (add({c.name.data()}) == CUPTI_SUCCESS) {
      chosen.push_back(c.name.data());
      roles.push_back(c.figure);
    }
  }
  if (chosen.empty()) {
    return absl::UnavailableError(
        absl::StrCat("chip ", chip_, " offers none of the throughput metrics gpuidle samples"));
  }
  while (true) {
    if (absl::Status st = fresh_host(); !st.ok()) return st;
    if (absl::Status st = PmSamplingStatus(api_, add(chosen), "metric set"); !st.ok()) return st;
    // The image must exist to count its passes.
    auto size = GPUIDLE_PM_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
    size.pHostObject = host_;
    if (absl::Status st =
            PmSamplingStatus(api_, api_.ProfilerHostGetConfigImageSize(&size), "config image size");
        !st.ok()) {
      return st;
    }
    std::vector<uint8_t> image(size.configImageSize);
    auto get = GPUIDLE_PM_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
    get.pHostObject = host_;
    get.configImageSize = image.size();
    get.pConfigImage = image.data();
    if (absl::Status st =
            PmSamplingStatus(api_, api_.ProfilerHostGetConfigImage(&get), "config image");
        !st.ok()) {
      return st;
    }
    auto passes = GPUIDLE_PM_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
    passes.configImageSize = image.size();
    passes.pConfigImage = image.data();
    if (absl::Status st =
            PmSamplingStatus(api_, api_.ProfilerHostGetNumOfPasses(&passes), "pass count");
        !st.ok()) {
      return st;
    }
    if (passes.numOfPasses == 1) break;
    if (chosen.size() == 1) {
      return absl::UnavailableError(
          absl::StrCat("chip ", chip_, " cannot sample ", chosen[0], " in one pass"));
    }
    chosen.pop_back();
    roles.pop_back();
  }
  metrics_.assign(chosen.begin(), chosen.end());
  roles_ = std::move(roles);
  return absl::OkStatus();
}

DevicePmSampler::~DevicePmSampler() {
  if (running_) (void)Stop();
  if (sampling_ != nullptr && api_.PmSamplingDisable != nullptr) {
    auto p = GPUIDLE_PM_PARAMS(CUpti_PmSampling_Disable_Params);
    p.pPmSamplingObject = sampling_;
    api_.PmSamplingDisable(&p);
  }
  if (host_ != nullptr) {
    auto done = GPUIDLE_PM_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
    done.pHostObject = host_;
    api_.ProfilerHostDeinitialize(&done);
  }
  if (profiler_initialized_ && api_.ProfilerDeInitialize != nullptr) {
    auto p = GPUIDLE_PM_PARAMS(CUpti_Profiler_DeInitialize_Params);
    api_.ProfilerDeInitialize(&p);
  }
}

absl::Status DevicePmSampler::Start() {
  if (running_) return absl::OkStatus();
  auto p = GPUIDLE_PM_PARAMS(CUpti_PmSampling_Start_Params);
  p.pPmSamplingObject = sampling_;
  absl::Status st = PmSamplingStatus(api_, api_.PmSamplingStart(&p), "PM sampling start");
  running_ = st.ok();
  return st;
}

absl::Status DevicePmSampler::Stop() {
  if (!running_) return absl::OkStatus();
  running_ = false;
  auto p = GPUIDLE_PM_PARAMS(CUpti_PmSampling_Stop_Params);
  p.pPmSamplingObject = sampling_;
  return PmSamplingStatus(api_, api_.PmSamplingStop(&p), "PM sampling stop");
}

absl::Status DevicePmSampler::Decode(std::vector<GpuThroughputSample>* out, bool* overflow) {
  *overflow = false;
  // A decode that fills the image leaves records in the hardware buffer: decode again, a bounded
  // number of times (the buffer holds minutes; a decode thread far behind catches up in steps).
  for (int round = 0; round < 16; ++round) {
    bool full = false;
    if (absl::Status st = DecodeOnce(out, overflow, &full); !st.ok()) return st;
    if (!full) break;
  }
  return absl::OkStatus();
}

absl::Status DevicePmSampler::DecodeOnce(std::vector<GpuThroughputSample>* out, bool* overflow,
                                         bool* full) {
  auto decode = GPUIDLE_PM_PARAMS(CUpti_PmSampling_DecodeData_Params);
  decode.pPmSamplingObject = sampling_;
  decode.pCounterDataImage = counter_data_.data();
  decode.counterDataImageSize = counter_data_.size();
  if (absl::Status st = PmSamplingStatus(api_, api_.PmSamplingDecodeData(&decode), "PM decode");
      !st.ok()) {
    return st;
  }
  *overflow = *overflow || decode.overflow != 0;
  *full = decode.decodeStopReason == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL;
  auto info = GPUIDLE_PM_PARAMS(CUpti_PmSampling_GetCounterDataInfo_Params);
  info.pCounterDataImage = counter_data_.data();
  info.counterDataImageSize = counter_data_.size();
  if (absl::Status st =
          PmSamplingStatus(api_, api_.PmSamplingGetCounterDataInfo(&info), "PM sample count");
      !st.ok()) {
    return st;
  }
  std::vector<const char*> names;
  for (const std::string& m : metrics_) names.push_back(m.c_str());
  std::vector<double> values(names.size());
  absl::Status result = absl::OkStatus();
  const size_t completed = std::min<size_t>(info.numCompletedSamples, kSamplesPerDecode);
  for (size_t i = 0; i < completed && result.ok(); ++i) {
    auto when = GPUIDLE_PM_PARAMS(CUpti_PmSampling_CounterData_GetSampleInfo_Params);
    when.pPmSamplingObject = sampling_;
    when.pCounterDataImage = counter_data_.data();
    when.counterDataImageSize = counter_data_.size();
    when.sampleIndex = i;
    result = PmSamplingStatus(api_, api_.PmSamplingCounterDataGetSampleInfo(&when), "PM sample");
    if (!result.ok()) break;
    auto eval = GPUIDLE_PM_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
    eval.pHostObject = host_;
    eval.pCounterDataImage = counter_data_.data();
    eval.counterDataImageSize = counter_data_.size();
    eval.rangeIndex = i;
    eval.ppMetricNames = names.data();
    eval.numMetrics = names.size();
    eval.pMetricValues = values.data();
    result = PmSamplingStatus(api_, api_.ProfilerHostEvaluateToGpuValues(&eval), "PM evaluate");
    if (!result.ok()) break;
    GpuThroughputSample& s = out->emplace_back();
    s.start_ns = static_cast<int64_t>(when.startTimestamp);
    s.end_ns = static_cast<int64_t>(when.endTimestamp);
    s.device = device_;
    for (size_t m = 0; m < values.size(); ++m) PutThroughput(roles_[m], values[m], &s);
  }
  // The image again as initialised: faster than CUPTI's initialisation, and the next decode
  // starts at index 0.
  std::memcpy(counter_data_.data(), counter_data_empty_.data(), counter_data_.size());
  return result;
}

}  // namespace gpuidle::internal
