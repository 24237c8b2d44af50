// CUPTI's PM sampling of a device's throughput (issue 32; docs/ANALYSIS.md, "GPU throughput"):
// the GPU's performance monitors sample a few counters at a fixed interval into a buffer of
// their own, with no work on the program's threads and no change to its kernels; Decode turns
// what they gathered into GpuThroughputSamples (SM activity, tensor pipes, DRAM, PCIe, NVLink).
//
// Which counters: for each figure, the first of a few candidate metrics the chip offers
// (kThroughputMetrics in model/throughput_metrics.h), all of them in one pass; a figure the chip
// lacks stays "not measured". A device's sampler lives from the first collection that uses the
// device to the first stop that detaches CUPTI: a stop that stays attached only stops it, and the
// next collection starts it again; one that detaches destroys it first (stop, disable, the host
// object, the profiler: CUPTI's teardown order), so that nothing of it outlives cuptiFinalize.
// On the H100 (2026-12-07), samplers left enabled across a detach made the next collection
// record no GPU work at all.
#ifndef GPUIDLE_LIB_COLLECT_PM_SAMPLING_H_
#define GPUIDLE_LIB_COLLECT_PM_SAMPLING_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collect/cupti_api.h"
#include "model/throughput_metrics.h"
#include "model/timeline.h"

namespace gpuidle::internal {

class DevicePmSampler {
 public:
  // The hardware buffer: at 10 ms a sample and a decode every 100 ms it holds minutes.
  static constexpr size_t kHardwareBufferBytes = size_t{32} << 20;
  // Samples one decode can hold; a decode that fills it decodes again.
  static constexpr uint32_t kSamplesPerDecode = 1000;

  // Sets up sampling of a CUDA device (ordinal) every interval_ns: its chip, the counters it
  // makes available to this process, the metrics chosen. Not started. Unavailable with CUPTI's
  // reason, in a line (no permission for profiling counters, a chip without PM sampling, ...).
  static absl::StatusOr<std::unique_ptr<DevicePmSampler>> Create(const CuptiApi& api, int device,
                                                                 int64_t interval_ns);
  // Tears the device's sampling down (see above).
  ~DevicePmSampler();
  DevicePmSampler(const DevicePmSampler&) = delete;
  DevicePmSampler& operator=(const DevicePmSampler&) = delete;

  absl::Status Start();
  absl::Status Stop();
  // Appends the samples completed since the last call (times on the GPU's clock, device set).
  // *overflow: the hardware buffer overflowed since the last call (samples were lost).
  absl::Status Decode(std::vector<GpuThroughputSample>* out, bool* overflow);

  int device() const { return device_; }
  const std::string& chip() const { return chip_; }
  const std::vector<std::string>& metrics() const { return metrics_; }

 private:
  DevicePmSampler(const CuptiApi& api, int device) : api_(api), device_(device) {}
  absl::Status ChooseMetrics(const std::vector<uint8_t>& availability);
  absl::Status DecodeOnce(std::vector<GpuThroughputSample>* out, bool* overflow, bool* full);

  const CuptiApi& api_;
  int device_;
  std::string chip_;
  std::vector<std::string> metrics_;     // chosen, in kThroughputMetrics' order
  std::vector<ThroughputFigure> roles_;  // parallel: the figure each metric gives
  CUpti_Profiler_Host_Object* host_ = nullptr;
  CUpti_PmSampling_Object* sampling_ = nullptr;
  std::vector<uint8_t> counter_data_;
  std::vector<uint8_t> counter_data_empty_;  // as initialised: restored after each decode
  bool running_ = false;
  bool profiler_initialized_ = false;  // this sampler's cuptiProfilerInitialize, undone at the end
};

// The one way a PM-sampling failure reads: "<what> failed: <CUPTI's words>", with the remedy
// where CUPTI refused for want of permission.
absl::Status PmSamplingStatus(const CuptiApi& api, CUptiResult result, const char* what);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_PM_SAMPLING_H_
