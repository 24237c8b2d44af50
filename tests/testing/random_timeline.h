// Random timelines for property tests: kernels (some collectives), copies, syncs, cross-stream
// waits, data ranges, framework ops and steps on a few devices, streams and threads.
//
//   std::mt19937_64 rng(42);
//   for (int i = 0; i < 300; ++i) {
//     const Timeline t = RandomTimeline(rng, {.every_kind = true});
//     ...
//   }
//
// With every_kind, the timelines also hold every op, copy, call and range kind, names that
// do not imply their kind, sync streams, thread ids beyond int64, absolute clocks far from 0,
// host stack samples and every TimelineInfo field: what a trace format has to carry. Without
// it, the sequence of timelines for a seed is the one the analysis invariants were calibrated
// on.
#ifndef GPUIDLE_TESTS_TESTING_RANDOM_TIMELINE_H_
#define GPUIDLE_TESTS_TESTING_RANDOM_TIMELINE_H_

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "model/timeline.h"
#include "testing/timeline_builder.h"

namespace gpuidle::testing {

struct RandomTimelineOptions {
  bool every_kind = false;
};

namespace random_timeline_internal {

// Fills what the builder leaves at its defaults; keeps every start time's order.
inline void AddEveryKind(std::mt19937_64& rng, Timeline& t) {
  using internal::CallCategory;
  using internal::CopyKind;
  using internal::OpKind;
  auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };

  // CUPTI's memcpy names for most copies (the kind is in the name); the builder's plain
  // "Memcpy" for the rest (the kind must travel on its own).
  for (internal::DeviceTimeline& d : t.devices) {
    for (internal::DeviceOp& op : d.ops) {
      if (op.kind == OpKind::kMemcpy && chance(0.7)) {
        static constexpr CopyKind kKinds[] = {CopyKind::kHtoD, CopyKind::kDtoH, CopyKind::kDtoD,
                                              CopyKind::kHtoH, CopyKind::kPeer};
        op.copy_kind = kKinds[rng() % 5];
        const bool host = op.copy_kind == CopyKind::kHtoD || op.copy_kind == CopyKind::kDtoH;
        op.pageable = host && chance(0.5);
        // As CUPTI and Kineto name them: "Memcpy HtoD (Pageable -> Device)".
        static constexpr const char* kNames[] = {"HtoD", "DtoH", "DtoD", "HtoH", "PtoP"};
        const char* host_memory = op.pageable ? "Pageable" : "Pinned";
        const int k = static_cast<int>(op.copy_kind) - static_cast<int>(CopyKind::kHtoD);
        std::string name = std::string("Memcpy ") + kNames[k] + " (";
        if (op.copy_kind == CopyKind::kHtoD) {
          name += std::string(host_memory) + " -> Device)";
        } else if (op.copy_kind == CopyKind::kDtoH) {
          name += std::string("Device -> ") + host_memory + ")";
        } else if (op.copy_kind == CopyKind::kHtoH) {
          name += "Pinned -> Pinned)";
        } else {
          name += "Device -> Device)";
        }
        op.name = t.strings.Intern(name);
      }
      if (op.kind == OpKind::kKernel && chance(0.02)) op.communication = !op.communication;
      if (chance(0.05)) op.stream = internal::kNoStream;
      if (chance(0.05)) op.correlation_id = internal::kNoCorrelation;
    }
  }
  for (internal::HostCall& c : t.calls) {
    if (c.category == CallCategory::kSync && chance(0.5))
      c.stream = 7 + static_cast<uint32_t>(rng() % 3);
    if (chance(0.02)) c.category = CallCategory::kOther;  // a name that says otherwise
  }
  // Thread ids as the OS gives them, including pthread_t values beyond int64.
  static constexpr uint64_t kThreads[] = {0, 4242, 139872651118400ull, 18446744073709551557ull};
  for (internal::HostCall& c : t.calls) c.thread = kThreads[c.thread % 4];
  for (internal::Range& r : t.ranges) r.thread = kThreads[r.thread % 4];

  // A clock far from zero (CLOCK_MONOTONIC, or Unix time), or below it.
  static constexpr int64_t kOffsets[] = {0, 5173076062853604123, 1790857026000000000, -7000000000};
  const int64_t offset = kOffsets[rng() % 4];
  for (internal::DeviceTimeline& d : t.devices) {
    for (internal::DeviceOp& op : d.ops) {
      op.start_ns += offset;
      op.end_ns += offset;
    }
  }
  for (internal::HostCall& c : t.calls) {
    c.start_ns += offset;
    c.end_ns += offset;
  }
  for (internal::Range& r : t.ranges) {
    r.start_ns += offset;
    r.end_ns += offset;
  }

  // Host stack samples on the calls' threads, some before or after all other activity (they
  // never widen the window); stacks of several frames, one empty.
  {
    int64_t first = 0, last = 0;
    if (!t.calls.empty()) {
      first = t.calls.front().start_ns;
      last = t.calls.back().end_ns;
    }
    const int samples = static_cast<int>(rng() % 6);
    int64_t at = first - static_cast<int64_t>(rng() % 5000);
    for (int i = 0; i < samples; ++i) {
      internal::HostSample sample;
      at += static_cast<int64_t>(rng() % static_cast<uint64_t>(last - first + 10000));
      sample.time_ns = at;
      sample.thread = kThreads[rng() % 4];
      static constexpr const char* kStacks[] = {
          "train.py:88 <module>\ntrain.py:41 train\ndataloader.py:631 __next__",
          "train.py:88 <module>\nlogging/__init__.py:1089 emit", ""};
      sample.stack = t.strings.Intern(kStacks[rng() % 3]);
      t.samples.push_back(sample);
    }
  }

  internal::TimelineInfo& info = t.info;
  for (internal::DeviceTimeline& d : t.devices) {
    d.name = chance(0.8) ? "NVIDIA H200" : "";
    info.visible_devices.push_back(d.device);
    info.visible_device_names.push_back(d.name);
  }
  if (chance(0.5)) {  // a GPU the process could see but never used
    info.visible_devices.push_back(7);
    info.visible_device_names.push_back("NVIDIA H200");
  }
  if (chance(0.5)) {
    info.world_size = 1 + static_cast<int>(rng() % 8);
    info.rank = static_cast<int>(rng() % static_cast<uint64_t>(*info.world_size));
  }
  if (chance(0.7)) info.dropped_records = chance(0.5) ? 0 : rng() % 100000;
  info.zero_timestamp_records = chance(0.5) ? 0 : rng() % 50;
  info.record_limit_reached = chance(0.2);
  if (chance(0.7)) info.pid = static_cast<int64_t>(100 + rng() % 4000000);
  info.host = chance(0.7) ? "node-17.cluster \"a\"" : "";
  if (chance(0.7)) info.wall_clock_offset_ns = static_cast<int64_t>(rng() >> 2) - (1ll << 60);
}

}  // namespace random_timeline_internal

inline Timeline RandomTimeline(std::mt19937_64& rng, const RandomTimelineOptions& options = {}) {
  auto uniform = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };
  TimelineBuilder b;
  const int devices = 1 + static_cast<int>(rng() % 3);
  const int threads = 1 + static_cast<int>(rng() % 3);
  double host = 0;
  const int events = 20 + static_cast<int>(rng() % 200);
  std::vector<double> gpu_free(devices, 0);
  double step_start = 0;
  int step = 0;
  for (int i = 0; i < events; ++i) {
    const uint64_t thread = 1 + rng() % threads;
    const int device = static_cast<int>(rng() % devices);
    b.Device(device).Stream(7 + static_cast<uint32_t>(rng() % 3));
    host += uniform(0, chance(0.1) ? 3000 : 80);
    const double call = uniform(1, 20);
    switch (rng() % (options.every_kind ? 12 : 9)) {
      case 0:
        b.Data(thread, host, host + uniform(10, 5000));
        break;
      case 1:  // a sync, or a free (which waits for the device first, then frees)
        b.Sync(thread, host, std::max(host + 1, gpu_free[device] + uniform(0, 5)),
               chance(0.2) ? "cudaFree" : "cudaStreamSynchronize");
        break;
      case 2: {
        const double start = std::max(host + call, gpu_free[device]) + uniform(0, 10);
        const double end = start + uniform(1, 2000);
        b.CopyCall(thread, host, host + call)
            .Copy(start, end, chance(0.5) ? CopyKind::kHtoD : CopyKind::kDtoH, chance(0.5));
        break;
      }
      case 3:
        b.WaitEvent(thread, host, host + 2, 7 + static_cast<uint32_t>(rng() % 3),
                    7 + static_cast<uint32_t>(rng() % 3));
        break;
      case 4:
        b.Op(thread, host, host + uniform(5, 400), "aten::op");
        break;
      case 5:
        if (chance(0.3)) {
          b.Step(1, step_start, host, "ProfilerStep#" + std::to_string(step++));
          step_start = host;
        }
        break;
      case 9: {  // a memset, launched
        const double start = std::max(host + call, gpu_free[device]) + uniform(0, 10);
        b.Launch(thread, host, host + call, "cudaMemsetAsync").Memset(start, start + 2);
        break;
      }
      case 10:
        if (chance(0.5)) {
          b.OtherCall(thread, host, host + call, chance(0.5) ? "cudaGetDevice" : "cuCtxGetCurrent");
        } else {
          b.OtherCall(thread, host, host + uniform(5, 2000), "cudaMalloc");
        }
        break;
      case 11: {
        // Ranges whose kind the name does not give away (gpuidle.step / gpuidle.data markers,
        // NVTX ranges), and Python frames.
        const double end = host + uniform(1, 800);
        switch (rng() % 4) {
          case 0:
            b.Range(thread, host, end, RangeKind::kStep, "step " + std::to_string(i));
            break;
          case 1:
            b.Range(thread, host, end, RangeKind::kData, "gpuidle.data");
            break;
          case 2:
            b.Range(thread, host, end, RangeKind::kUser, "nvtx: forward");
            break;
          default:
            b.Range(thread, host, end, RangeKind::kPython, "train.py(42): step");
            break;
        }
        break;
      }
      default: {
        // A kernel, usually launched; sometimes without its call (unattributed), sometimes
        // a collective, overlapping others at random.
        const bool launched = chance(0.9);
        if (launched) b.Launch(thread, host, host + call);
        const double start =
            std::max(host + call, chance(0.5) ? gpu_free[device] : 0) + uniform(0, 30);
        const double end = start + uniform(0.5, chance(0.2) ? 5000 : 50);
        if (chance(0.1)) {
          b.NcclKernel(start, end);
        } else {
          b.Kernel(start, end, chance(0.5) ? "tiny" : "big");
        }
        gpu_free[device] = std::max(gpu_free[device], end);
        break;
      }
    }
  }
  if (chance(0.3)) {  // a server: two requests, the second arriving while the first runs
    b.Range(1, 0, host / 2, RangeKind::kRequest, "gpuidle.request:1");
    b.Range(2, host / 4, host, RangeKind::kRequest, "gpuidle.request:2");
  }
  Timeline t = b.Build();
  if (chance(0.3)) {  // another process ran kernels on device 0 (NVML), in the first second
    internal::GpuProcessSeen other;
    other.pid = 4242;
    other.busy_sample_ns = {0};
    t.gpu_processes.push_back(other);
  }
  if (options.every_kind) random_timeline_internal::AddEveryKind(rng, t);
  return t;
}

}  // namespace gpuidle::testing

#endif  // GPUIDLE_TESTS_TESTING_RANDOM_TIMELINE_H_
