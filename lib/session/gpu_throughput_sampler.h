// The GPU-throughput sampler of a live collection (issue 32; docs/ANALYSIS.md, "GPU
// throughput"): a thread of its own ("gpuidle-pm") that starts CUPTI's PM sampling
// (collect/collection.h StartDeviceThroughput) on each device the program uses, as soon as it
// uses it (an active primary context: the device is never touched before the program touches
// it, and devices of other ranks never), and every decode period turns what the hardware
// gathered into GpuThroughputSamples. Started when a collection starts, stopped when it stops;
// its samples become Timeline::gpu_throughput.
//
// Bounded: at most max_samples samples; beyond it neighbours are merged in pairs (their
// time-weighted averages) and later ones arrive merged as much, so a long run keeps its whole
// span at a coarser grain (a warning says so).
//
// The GPU's clock: CUPTI's activity records are on CLOCK_REALTIME; PM samples carry the GPU's
// timestamps. Where they differ by more than a second, the samples are moved by the difference
// measured at the first decode (the last sample's end against the time of the decode: off by at
// most the decode period), and a warning says so.
#ifndef GPUIDLE_LIB_SESSION_GPU_THROUGHPUT_SAMPLER_H_
#define GPUIDLE_LIB_SESSION_GPU_THROUGHPUT_SAMPLER_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "model/timeline.h"

namespace gpuidle::internal {

class GpuThroughputSampler {
 public:
  static constexpr int64_t kDefaultIntervalNs = 10'000'000;  // the rate it is built for
  static constexpr int64_t kDecodePeriodNs = 100'000'000;
  static constexpr size_t kMaxSamples = 36'000;  // 6 minutes of one GPU at 10 ms, then merged
  // Clocks further apart than this are different clocks (see above).
  static constexpr int64_t kSameClockNs = 1'000'000'000;

  // What the sampler calls; tests replace them (the defaults: collect/collection.h and
  // collect/cuda_driver.h).
  struct Hooks {
    std::function<int()> device_count;
    std::function<bool(int)> device_active;
    std::function<absl::Status(int, int64_t)> start_device;
    std::function<absl::Status(std::vector<GpuThroughputSample>*, bool*)> decode;
    std::function<void()> stop;
    std::function<int64_t()> now;  // the timeline's clock
    static Hooks Default();
  };
  struct Options {
    int64_t interval_ns = kDefaultIntervalNs;  // 0 or less: the sampler does nothing
    int64_t decode_period_ns = kDecodePeriodNs;
    size_t max_samples = kMaxSamples;
    Hooks hooks = Hooks::Default();
  };
  struct Result {
    std::vector<GpuThroughputSample> samples;  // on the timeline's clock, by start time
    // Why a used device was not sampled, the first such reason ("device 0: ..."; a device whose
    // sampling started but delivered nothing says for how long it ran); "" otherwise.
    std::string unavailable;
    absl::Status decode_failure;  // the first failed decode
    bool overflow = false;        // the hardware dropped samples at some point
    int merges = 0;               // times neighbours were merged to stay within the bound
    int64_t clock_shift_ns = 0;   // added to the GPU's timestamps (see above)
  };

  explicit GpuThroughputSampler(Options options);
  // Stops the thread (what it gathered is lost). After fork() the session forgets (leaks) it.
  ~GpuThroughputSampler();
  GpuThroughputSampler(const GpuThroughputSampler&) = delete;
  GpuThroughputSampler& operator=(const GpuThroughputSampler&) = delete;

  void Start();
  // Stops the devices' sampling and the thread, decoding what is left; what it gathered.
  Result Stop();

  // Puts result into timeline: samples of the timeline's devices, sorted; the reason a device
  // was not sampled into info.gpu_throughput_unavailable; merges, overflow and a moved clock
  // as warnings.
  static void MoveInto(Result result, Timeline* timeline);

 private:
  void Run();
  void StartUsedDevices();
  void DecodeAndStore();
  void Store(GpuThroughputSample sample);

  Options options_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;  // for the wait only
  std::condition_variable wake_;
  std::vector<bool> tried_;  // by device ordinal: sampling asked for
  // By device ordinal, for the devices whose sampling started: when (the timeline's clock), how
  // long its set-up took, and how many samples it delivered (a device with none is said).
  struct Started {
    int device = 0;
    int64_t at_ns = 0;
    int64_t setup_ns = 0;
    size_t samples = 0;
  };
  std::vector<Started> started_;
  bool clock_known_ = false;
  size_t group_ = 1;  // samples merged into each stored one (doubles at each merge)
  std::vector<GpuThroughputSample> pending_;  // per device: the group being merged
  std::vector<size_t> pending_count_;
  Result result_;  // the thread's until it is joined
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_SESSION_GPU_THROUGHPUT_SAMPLER_H_
