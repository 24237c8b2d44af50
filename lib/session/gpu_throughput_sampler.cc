#include "session/gpu_throughput_sampler.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "collect/clock.h"
#include "collect/collection.h"
#include "collect/cuda_driver.h"

namespace gpuidle::internal {
namespace {

// a's figures become the time-weighted averages of a and b, and a spans both. A figure one of
// them lacks (negative) is the other's.
void Merge(GpuThroughputSample& a, const GpuThroughputSample& b) {
  const double wa = static_cast<double>(std::max<int64_t>(a.end_ns - a.start_ns, 1));
  const double wb = static_cast<double>(std::max<int64_t>(b.end_ns - b.start_ns, 1));
  const auto mix = [&](float& x, float y) {
    if (y < 0) return;
    x = x < 0 ? y : static_cast<float>((x * wa + y * wb) / (wa + wb));
  };
  mix(a.sm_active_pct, b.sm_active_pct);
  mix(a.tensor_active_pct, b.tensor_active_pct);
  mix(a.dram_pct, b.dram_pct);
  mix(a.pcie_read_bytes_per_s, b.pcie_read_bytes_per_s);
  mix(a.pcie_write_bytes_per_s, b.pcie_write_bytes_per_s);
  mix(a.nvlink_read_bytes_per_s, b.nvlink_read_bytes_per_s);
  mix(a.nvlink_write_bytes_per_s, b.nvlink_write_bytes_per_s);
  a.start_ns = std::min(a.start_ns, b.start_ns);
  a.end_ns = std::max(a.end_ns, b.end_ns);
}

}  // namespace

GpuThroughputSampler::Hooks GpuThroughputSampler::Hooks::Default() {
  Hooks h;
  h.device_count = &CudaDriverDeviceCount;
  h.device_active = &CudaDriverDeviceActive;
  h.start_device = &StartDeviceThroughput;
  h.decode = &DecodeDeviceThroughput;
  h.stop = &StopDeviceThroughput;
  h.now = &TimelineNowNs;
  return h;
}

GpuThroughputSampler::GpuThroughputSampler(Options options) : options_(std::move(options)) {}

GpuThroughputSampler::~GpuThroughputSampler() {
  if (thread_.joinable()) (void)Stop();
}

void GpuThroughputSampler::Start() {
  if (options_.interval_ns <= 0 || thread_.joinable()) return;
  stop_.store(false);
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "gpuidle-pm");
    Run();
  });
}

GpuThroughputSampler::Result GpuThroughputSampler::Stop() {
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_.store(true);
    }
    wake_.notify_all();
    thread_.join();
    // The hardware stops first, then what it gathered up to there is decoded.
    options_.hooks.stop();
    DecodeAndStore();
    for (size_t d = 0; d < pending_.size(); ++d) {
      if (pending_count_[d] > 0) result_.samples.push_back(pending_[d]);
      pending_count_[d] = 0;
    }
    // A short collection may end before the hardware completed a sample, or before a slow
    // set-up finished: said, rather than an empty "throughput" with no reason.
    const int64_t stopped_ns = options_.hooks.now();
    for (const Started& s : started_) {
      if (s.samples > 0 || !result_.unavailable.empty()) continue;
      result_.unavailable = absl::StrFormat(
          "device %d: PM sampling delivered no samples in the %.0f ms it ran (its set-up took "
          "%.0f ms; one sample every %.0f ms)",
          s.device, static_cast<double>(stopped_ns - s.at_ns) / 1e6,
          static_cast<double>(s.setup_ns) / 1e6, static_cast<double>(options_.interval_ns) / 1e6);
    }
  }
  return std::move(result_);
}

void GpuThroughputSampler::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_.load()) {
    lock.unlock();
    StartUsedDevices();
    DecodeAndStore();
    lock.lock();
    wake_.wait_for(lock, std::chrono::nanoseconds(options_.decode_period_ns),
                   [this] { return stop_.load(); });
  }
}

// A device is asked for once per collection, as soon as the program uses it.
void GpuThroughputSampler::StartUsedDevices() {
  const int count = options_.hooks.device_count();
  if (count <= 0) return;  // CUDA not initialised yet (or no device)
  if (tried_.size() < static_cast<size_t>(count)) tried_.resize(static_cast<size_t>(count), false);
  for (int d = 0; d < count; ++d) {
    if (tried_[static_cast<size_t>(d)] || !options_.hooks.device_active(d)) continue;
    tried_[static_cast<size_t>(d)] = true;
    const int64_t asked_ns = options_.hooks.now();
    absl::Status st = options_.hooks.start_device(d, options_.interval_ns);
    const int64_t started_ns = options_.hooks.now();
    if (st.ok()) {
      started_.push_back({d, started_ns, started_ns - asked_ns, 0});
    } else if (result_.unavailable.empty()) {
      result_.unavailable = absl::StrCat("device ", d, ": ", st.message());
    }
  }
}

void GpuThroughputSampler::DecodeAndStore() {
  std::vector<GpuThroughputSample> decoded;
  bool overflow = false;
  absl::Status st = options_.hooks.decode(&decoded, &overflow);
  if (!st.ok() && result_.decode_failure.ok()) result_.decode_failure = st;
  result_.overflow = result_.overflow || overflow;
  if (decoded.empty()) return;
  if (!clock_known_) {
    int64_t last_end = 0;
    for (const GpuThroughputSample& s : decoded) last_end = std::max(last_end, s.end_ns);
    const int64_t apart = options_.hooks.now() - last_end;
    result_.clock_shift_ns = std::llabs(apart) > kSameClockNs ? apart : 0;
    clock_known_ = true;
  }
  for (GpuThroughputSample& s : decoded) {
    s.start_ns += result_.clock_shift_ns;
    s.end_ns += result_.clock_shift_ns;
    for (Started& d : started_) d.samples += d.device == s.device ? 1 : 0;
    Store(s);
  }
}

void GpuThroughputSampler::Store(GpuThroughputSample sample) {
  if (sample.device < 0 || sample.device >= 4096 || sample.end_ns < sample.start_ns) return;
  const auto d = static_cast<size_t>(sample.device);
  if (pending_.size() <= d) {
    pending_.resize(d + 1);
    pending_count_.resize(d + 1, 0);
  }
  if (pending_count_[d] == 0) {
    pending_[d] = sample;
  } else {
    Merge(pending_[d], sample);
  }
  if (++pending_count_[d] < group_) return;
  pending_count_[d] = 0;
  std::vector<GpuThroughputSample>& kept = result_.samples;
  kept.push_back(pending_[d]);
  if (kept.size() < std::max<size_t>(options_.max_samples, 2)) return;
  // Full: each device's neighbours merged in pairs, and from now on twice as many per sample.
  std::stable_sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.device != b.device ? a.device < b.device : a.start_ns < b.start_ns;
  });
  std::vector<GpuThroughputSample> merged;
  merged.reserve(kept.size() / 2 + 1);
  for (size_t i = 0; i < kept.size(); ++i) {
    if (i + 1 < kept.size() && kept[i + 1].device == kept[i].device) {
      GpuThroughputSample m = kept[i];
      Merge(m, kept[i + 1]);
      merged.push_back(m);
      ++i;
    } else {
      merged.push_back(kept[i]);
    }
  }
  kept = std::move(merged);
  group_ *= 2;
  ++result_.merges;
}

void GpuThroughputSampler::MoveInto(Result result, Timeline* timeline) {
  std::vector<GpuThroughputSample>& out = timeline->gpu_throughput;
  for (const GpuThroughputSample& s : result.samples) {
    if (timeline->FindDevice(s.device) != nullptr) out.push_back(s);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  TimelineInfo& info = timeline->info;
  info.gpu_throughput_unavailable = result.unavailable;
  if (result.merges > 0) {
    info.warnings.push_back(absl::StrCat(
        "GPU throughput: the samples were merged ", result.merges,
        result.merges == 1 ? " time" : " times", " to stay within ", kMaxSamples,
        " (each now spans ", 1 << std::min(result.merges, 30), " of the hardware's samples)"));
  }
  if (result.overflow) {
    info.warnings.push_back(
        "GPU throughput: the hardware's sample buffer overflowed; some samples are missing");
  }
  if (!result.decode_failure.ok()) {
    info.warnings.push_back(
        absl::StrCat("GPU throughput: a decode failed: ", result.decode_failure.message()));
  }
  if (result.clock_shift_ns != 0 && !out.empty()) {
    info.warnings.push_back(absl::StrFormat(
        "GPU throughput: the GPU's clock is %.3f s from the timeline's; its samples were moved "
        "by that (to within %d ms)",
        static_cast<double>(result.clock_shift_ns) / 1e9,
        static_cast<int>(kDecodePeriodNs / 1'000'000)));
  }
}

}  // namespace gpuidle::internal
