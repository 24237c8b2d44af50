#include "session/gpu_metrics_sampler.h"

#include <pthread.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "collect/clock.h"
#include "collect/nvml.h"
#include "core/text_safety.h"

namespace gpuidle::internal {

struct GpuMetricsSampler::Device {
  int index = 0;  // into result_.uuids
  NvmlDevice handle;
  uint64_t last_seen_us = 0;  // NVML's per-process samples read up to here
};

namespace {

uint64_t RealtimeMicros() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000u + static_cast<uint64_t>(ts.tv_nsec) / 1000u;
}

// The NVML devices CUDA_VISIBLE_DEVICES selects, as indices into nvml_uuids (NVML's order): all
// when it is not set; an integer entry is NVML's index, a "GPU-..." entry a UUID or its unique
// prefix; the list ends at the first entry that is neither (CUDA's rule), a "MIG-..." entry is
// skipped (NVML reads a MIG instance through its parent only).
std::vector<size_t> SelectedDevices(const std::optional<std::string>& cuda_visible_devices,
                                    const std::vector<std::string>& nvml_uuids) {
  std::vector<size_t> out;
  auto add = [&out](size_t i) {
    if (std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
  };
  if (!cuda_visible_devices) {
    for (size_t i = 0; i < nvml_uuids.size(); ++i) add(i);
    return out;
  }
  for (absl::string_view entry : absl::StrSplit(*cuda_visible_devices, ',')) {
    entry = absl::StripAsciiWhitespace(entry);
    size_t index = 0;
    const bool digits = !entry.empty() && std::all_of(entry.begin(), entry.end(), [](char c) {
      return absl::ascii_isdigit(static_cast<unsigned char>(c));
    });
    if (digits && absl::SimpleAtoi(entry, &index)) {
      if (index < nvml_uuids.size()) add(index);
    } else if (absl::StartsWith(entry, "GPU-")) {
      std::optional<size_t> match;
      bool ambiguous = false;
      for (size_t i = 0; i < nvml_uuids.size(); ++i) {
        if (!nvml_uuids[i].empty() && absl::StartsWith(nvml_uuids[i], entry)) {
          ambiguous = ambiguous || match.has_value();
          match = i;
        }
      }
      if (match && !ambiguous) add(*match);
    } else if (!absl::StartsWith(entry, "MIG-")) {
      break;
    }
  }
  return out;
}

}  // namespace

GpuMetricsSampler::GpuMetricsSampler(Options options) : options_(std::move(options)) {
  if (options_.own_pid == 0) options_.own_pid = static_cast<int64_t>(::getpid());
}

GpuMetricsSampler::GpuMetricsSampler(int64_t period_ns)
    : GpuMetricsSampler([period_ns] {
        Options o;
        o.period_ns = period_ns;
        if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"); v != nullptr) {
          o.cuda_visible_devices = std::string(v);
        }
        return o;
      }()) {}

GpuMetricsSampler::~GpuMetricsSampler() {
  if (thread_.joinable()) Stop();
}

void GpuMetricsSampler::Start() {
  if (options_.period_ns <= 0 || thread_.joinable()) return;
  stop_.store(false);
  result_ = Result{};
  result_.status = absl::CancelledError("stopped before NVML was read");
  result_.period_ns = options_.period_ns;
  result_.max_samples = options_.max_samples;
  devices_from_cuda_ = false;
  fallback_done_ = false;
  busy_samples_ = 0;
  thread_ = std::thread([this] { Run(); });
}

GpuMetricsSampler::Result GpuMetricsSampler::Stop() {
  if (!thread_.joinable()) {
    Result off;
    off.status = absl::FailedPreconditionError("not sampled (off)");
    return off;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true);
  }
  wake_.notify_all();
  thread_.join();
  Result out = std::move(result_);
  result_ = Result{};
  return out;
}

void GpuMetricsSampler::Run() {
  pthread_setname_np(pthread_self(), "gpuidle-nvml");
  absl::StatusOr<std::unique_ptr<Nvml>> loaded = Nvml::Load(options_.library);
  if (!loaded.ok()) {
    result_.status = loaded.status();
    return;
  }
  Nvml& nvml = **loaded;
  if (stop_.load()) return;  // stopped while NVML loaded: Cancelled, nothing read
  result_.status = absl::OkStatus();
  std::vector<Device> devices;
  using Clock = std::chrono::steady_clock;
  Clock::time_point next = Clock::now();
  while (!stop_.load()) {
    ResolveDevices(nvml, &devices);
    for (Device& device : devices) {
      if (stop_.load()) break;
      ReadDevice(nvml, device);
    }
    next += std::chrono::nanoseconds(result_.period_ns);
    const Clock::time_point now = Clock::now();
    if (next < now) next = now;  // late (a slow NVML): the next reading a period from now
    std::unique_lock<std::mutex> lock(mu_);
    wake_.wait_until(lock, next, [this] { return stop_.load(); });
  }
  if (result_.status.ok() && fallback_done_ && devices.empty() && !devices_from_cuda_) {
    result_.status = absl::NotFoundError(
        options_.cuda_visible_devices
            ? absl::StrCat("NVML has no device that CUDA_VISIBLE_DEVICES=",
                           QuoteForMessage(*options_.cuda_visible_devices, 40), " selects")
            : std::string("NVML lists no device"));
  }
  // nvmlShutdown as the Nvml goes: the one NVML call a stop may wait for after the last reading.
}

int GpuMetricsSampler::UuidIndex(const std::string& uuid, int cuda_ordinal) {
  for (size_t i = 0; i < result_.uuids.size(); ++i) {
    if (result_.uuids[i] == uuid) {
      if (cuda_ordinal >= 0) result_.cuda_ordinals[i] = cuda_ordinal;
      return static_cast<int>(i);
    }
  }
  result_.uuids.push_back(uuid);
  result_.cuda_ordinals.push_back(cuda_ordinal);
  return static_cast<int>(result_.uuids.size() - 1);
}

void GpuMetricsSampler::ResolveDevices(Nvml& nvml, std::vector<Device>* devices) {
  if (devices_from_cuda_) return;
  const uint64_t since = RealtimeMicros();
  if (options_.cuda_device_uuids) {
    const std::vector<std::string> cuda = options_.cuda_device_uuids();
    if (std::any_of(cuda.begin(), cuda.end(), [](const std::string& u) { return !u.empty(); })) {
      std::vector<Device> from_cuda;
      for (size_t ordinal = 0; ordinal < cuda.size(); ++ordinal) {
        if (cuda[ordinal].empty() || stop_.load()) continue;
        absl::StatusOr<NvmlDevice> handle = nvml.FindDevice(cuda[ordinal]);
        if (!handle.ok()) continue;
        Device d;
        d.index = UuidIndex(cuda[ordinal], static_cast<int>(ordinal));
        d.handle = *handle;
        d.last_seen_us = since;
        // A device already sampled keeps its place in NVML's per-process samples.
        for (const Device& old : *devices) {
          if (old.index == d.index) d.last_seen_us = old.last_seen_us;
        }
        from_cuda.push_back(d);
      }
      *devices = std::move(from_cuda);
      devices_from_cuda_ = true;
      return;
    }
  }
  if (fallback_done_) return;
  fallback_done_ = true;
  absl::StatusOr<std::vector<std::string>> uuids = nvml.DeviceUuids();
  if (!uuids.ok()) {
    result_.status = uuids.status();
    return;
  }
  for (size_t i : SelectedDevices(options_.cuda_visible_devices, *uuids)) {
    const std::string& uuid = (*uuids)[i];
    if (uuid.empty() || stop_.load()) continue;
    absl::StatusOr<NvmlDevice> handle = nvml.FindDevice(uuid);
    if (!handle.ok()) continue;
    Device d;
    d.index = UuidIndex(uuid, -1);
    d.handle = *handle;
    d.last_seen_us = since;
    devices->push_back(d);
  }
}

void GpuMetricsSampler::ReadDevice(Nvml& nvml, Device& device) {
  ++result_.readings;
  absl::StatusOr<GpuMetricSample> sample = nvml.ReadMetrics(device.handle, &stop_);
  if (absl::IsCancelled(sample.status())) {
    --result_.readings;
    return;
  }
  if (!sample.ok()) {
    ++result_.failed_readings;
    if (result_.first_failure.ok()) result_.first_failure = sample.status();
    return;
  }
  sample->device = device.index;
  const int64_t time_ns = sample->time_ns;
  Store(*sample);

  if (stop_.load()) return;
  absl::StatusOr<std::vector<NvmlProcess>> processes = nvml.ComputeProcesses(device.handle);
  if (processes.ok()) {
    for (const NvmlProcess& p : *processes) {
      if (p.pid == options_.own_pid) continue;
      GpuProcessSeen* seen = ProcessEntry(device.index, p.pid, time_ns);
      if (seen == nullptr) continue;
      seen->memory_bytes = std::max(seen->memory_bytes, p.memory_bytes);
      seen->last_seen_ns = std::max(seen->last_seen_ns, time_ns);
    }
  } else if (result_.process_failure.ok()) {
    result_.process_failure = processes.status();
  }

  if (stop_.load()) return;
  absl::StatusOr<std::vector<NvmlProcessUtilization>> use =
      nvml.ProcessUtilization(device.handle, &device.last_seen_us);
  if (use.ok()) {
    for (const NvmlProcessUtilization& u : *use) {
      if (u.pid == options_.own_pid || u.sm_percent == 0) continue;
      NoteBusy(device.index, u.pid, u.time_ns);
    }
  } else if (result_.process_failure.ok()) {
    result_.process_failure = use.status();
  }
}

void GpuMetricsSampler::Store(const GpuMetricSample& sample) {
  std::vector<GpuMetricSample>& samples = result_.samples;
  if (samples.size() >= std::max<size_t>(result_.max_samples, 2)) {
    // Half the rate: every other reading of each device dropped, the period doubled.
    absl::flat_hash_map<int, size_t> seen;
    size_t kept = 0;
    for (size_t i = 0; i < samples.size(); ++i) {
      if (seen[samples[i].device]++ % 2 == 0) samples[kept++] = samples[i];
    }
    samples.resize(kept);
    result_.period_ns *= 2;
    ++result_.halvings;
  }
  samples.push_back(sample);
}

GpuProcessSeen* GpuMetricsSampler::ProcessEntry(int device, int64_t pid, int64_t time_ns) {
  for (GpuProcessSeen& p : result_.processes) {
    if (p.device == device && p.pid == pid) return &p;
  }
  if (result_.processes.size() >= kMaxProcesses) return nullptr;
  GpuProcessSeen p;
  p.device = device;
  p.pid = pid;
  p.first_seen_ns = time_ns;
  p.last_seen_ns = time_ns;
  result_.processes.push_back(std::move(p));
  return &result_.processes.back();
}

void GpuMetricsSampler::NoteBusy(int device, int64_t pid, int64_t time_ns) {
  GpuProcessSeen* p = ProcessEntry(device, pid, time_ns);
  if (p == nullptr) return;
  p->first_seen_ns = std::min(p->first_seen_ns, time_ns);
  p->last_seen_ns = std::max(p->last_seen_ns, time_ns);
  if (busy_samples_ >= std::max<size_t>(result_.max_samples, 2)) {
    // As bounded as the readings: every other busy sample of each process dropped.
    busy_samples_ = 0;
    for (GpuProcessSeen& q : result_.processes) {
      size_t kept = 0;
      for (size_t i = 0; i < q.busy_sample_ns.size(); i += 2) {
        q.busy_sample_ns[kept++] = q.busy_sample_ns[i];
      }
      q.busy_sample_ns.resize(kept);
      busy_samples_ += kept;
    }
  }
  p->busy_sample_ns.push_back(time_ns);
  ++busy_samples_;
}

void GpuMetricsSampler::MoveInto(Result result, Timeline* timeline) {
  TimelineInfo& info = timeline->info;
  // UUID -> CUDA ordinal: the timeline's (the driver's, at the stop), else the sampler's.
  std::vector<int> ordinal_of(result.uuids.size(), -1);
  for (size_t i = 0; i < result.uuids.size(); ++i) {
    for (size_t v = 0; v < info.visible_device_uuids.size() && v < info.visible_devices.size();
         ++v) {
      if (info.visible_device_uuids[v] == result.uuids[i]) ordinal_of[i] = info.visible_devices[v];
    }
    if (ordinal_of[i] < 0) ordinal_of[i] = result.cuda_ordinals[i];
  }
  auto of_timeline = [&](int ordinal) {
    return ordinal >= 0 &&
           std::any_of(timeline->devices.begin(), timeline->devices.end(),
                       [ordinal](const DeviceTimeline& d) { return d.device == ordinal; });
  };
  auto map = [&](int index) {
    return index >= 0 && static_cast<size_t>(index) < ordinal_of.size()
               ? ordinal_of[static_cast<size_t>(index)]
               : -1;
  };
  timeline->gpu_metrics.clear();
  for (GpuMetricSample& s : result.samples) {
    const int ordinal = map(s.device);
    if (!of_timeline(ordinal)) continue;
    s.device = ordinal;
    timeline->gpu_metrics.push_back(s);
  }
  std::stable_sort(
      timeline->gpu_metrics.begin(), timeline->gpu_metrics.end(),
      [](const GpuMetricSample& a, const GpuMetricSample& b) { return a.time_ns < b.time_ns; });
  timeline->gpu_processes.clear();
  for (GpuProcessSeen& p : result.processes) {
    const int ordinal = map(p.device);
    if (!of_timeline(ordinal)) continue;
    p.device = ordinal;
    std::sort(p.busy_sample_ns.begin(), p.busy_sample_ns.end());
    timeline->gpu_processes.push_back(std::move(p));
  }
  std::stable_sort(timeline->gpu_processes.begin(), timeline->gpu_processes.end(),
                   [](const GpuProcessSeen& a, const GpuProcessSeen& b) {
                     return std::tie(a.first_seen_ns, a.device, a.pid) <
                            std::tie(b.first_seen_ns, b.device, b.pid);
                   });
  if (!result.status.ok()) return;  // the session says it, where asked
  if (result.halvings > 0) {
    info.warnings.push_back(absl::StrCat(
        "GPU metrics: more than ", result.max_samples,
        " readings; every other one was dropped and the period doubled (", result.halvings,
        result.halvings == 1 ? " time" : " times", ", to ", result.period_ns / 1'000'000, " ms)"));
  }
  if (result.failed_readings > 0) {
    info.warnings.push_back(absl::StrCat("GPU metrics: ", result.failed_readings, " of ",
                                         result.readings, " device readings failed (",
                                         result.first_failure.message(), ")"));
  }
  if (!result.process_failure.ok()) {
    info.warnings.push_back(absl::StrCat("GPU metrics: other processes on the GPUs not known (",
                                         result.process_failure.message(), ")"));
  }
}

}  // namespace gpuidle::internal
