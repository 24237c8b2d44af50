// The baseline of the overhead benchmark: the least a CUPTI kernel tracer can cost. Loaded by
// the CUDA driver through CUDA_INJECTION64_PATH, it records concurrent-kernel activity only,
// counts the records and throws them away. gpuidle's own added time is compared with this
// one's (run_overhead_benchmark.sh): what is left over is gpuidle's, not CUPTI's.
//
//   CUDA_INJECTION64_PATH=build/lib/libgpuidle_bare_cupti.so ./app
//   ... stderr at exit: "bare_cupti: 300000 kernel records"
//
// The paired benchmark (gpuidle_bench_overhead --pair bare) links it instead and switches it
// on and off between rounds with gpuidle_bare_cupti_start / _stop.
#include <cupti.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace {

// CUPTI fills a buffer before handing it back; 8 MiB holds tens of thousands of kernel records.
constexpr size_t kBufferBytes = size_t{8} << 20;

std::atomic<int64_t> kernel_records{0};
std::atomic<bool> injected{false};

bool Ok(CUptiResult result, const char* call) {
  if (result == CUPTI_SUCCESS) return true;
  const char* message = "unknown error";
  cuptiGetResultString(result, &message);
  std::fprintf(stderr, "bare_cupti: %s failed: %s\n", call, message);
  return false;
}

// malloc is 16-byte aligned, more than the 8 bytes CUPTI asks for.
void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_num_records) {
  *buffer = static_cast<uint8_t*>(std::malloc(kBufferBytes));
  *size = *buffer == nullptr ? 0 : kBufferBytes;
  *max_num_records = 0;  // as many as fit
}

void CUPTIAPI BufferCompleted(CUcontext /*context*/, uint32_t /*stream_id*/, uint8_t* buffer,
                              size_t /*size*/, size_t valid_size) {
  int64_t kernels = 0;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ++kernels;
  }
  kernel_records.fetch_add(kernels, std::memory_order_relaxed);
  std::free(buffer);
}

// Registered from InitializeInjection, i.e. after the CUDA runtime registered its own teardown,
// so this runs first, while the context still exists. Holds no containers that static
// destruction could have destroyed.
void FlushAtExit() {
  Ok(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
  size_t dropped = 0;
  Ok(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped), "cuptiActivityGetNumDroppedRecords");
  std::fprintf(stderr, "bare_cupti: %lld kernel records",
               static_cast<long long>(kernel_records.load()));
  if (dropped > 0) std::fprintf(stderr, ", %zu dropped", dropped);
  std::fprintf(stderr, "\n");
}

// GPUIDLE_BARE_TIMES_LAUNCHES=1: the baseline also times every kernel launch call, the least
// that knowing when the host launched costs: CUPTI calls back at the entry and exit of each
// launch (runtime and driver, as gpuidle's callbacks), which reads CUPTI's clock twice and
// counts the calls on its thread. What gpuidle adds beyond this is gpuidle's own.
std::atomic<int64_t> launch_calls{0};
CUpti_SubscriberHandle launch_subscriber = nullptr;
struct LaunchSums {
  int64_t calls = 0;
  ~LaunchSums() { launch_calls.fetch_add(calls, std::memory_order_relaxed); }
};
thread_local LaunchSums launch_sums;

void CUPTIAPI TimeLaunch(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void* data) {
  const auto* call = static_cast<const CUpti_CallbackData*>(data);
  uint64_t now = 0;
  cuptiGetTimestamp(&now);
  if (call->callbackSite == CUPTI_API_ENTER) {
    *call->correlationData = now;
  } else if (now >= *call->correlationData) {
    ++launch_sums.calls;
  }
}

bool TimesLaunches() {
  const char* v = std::getenv("GPUIDLE_BARE_TIMES_LAUNCHES");
  return v != nullptr && v[0] == '1';
}

bool StartTimingLaunches() {
  if (!Ok(cuptiSubscribe(&launch_subscriber, TimeLaunch, nullptr), "cuptiSubscribe")) return false;
  constexpr CUpti_CallbackId kRuntime[] = {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                           CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
                                           CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
                                           CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
                                           CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
                                           CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000};
  constexpr CUpti_CallbackId kDriver[] = {
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz};
  bool ok = true;
  for (CUpti_CallbackId id : kRuntime) {
    ok = ok && Ok(cuptiEnableCallback(1, launch_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, id),
                  "cuptiEnableCallback(runtime)");
  }
  for (CUpti_CallbackId id : kDriver) {
    ok = ok && Ok(cuptiEnableCallback(1, launch_subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id),
                  "cuptiEnableCallback(driver)");
  }
  return ok;
}

void StopTimingLaunches() {
  if (launch_subscriber == nullptr) return;
  Ok(cuptiUnsubscribe(launch_subscriber), "cuptiUnsubscribe");  // its callbacks go with it
  launch_subscriber = nullptr;
}

}  // namespace

// Starts recording kernels (and timing launches, GPUIDLE_BARE_TIMES_LAUNCHES); 1 on success.
// The buffer callbacks are registered at every start: a detach (gpuidle_bare_cupti_detach)
// makes CUPTI forget them.
extern "C" __attribute__((visibility("default"))) int gpuidle_bare_cupti_start(void) {
  return Ok(cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted),
            "cuptiActivityRegisterCallbacks") &&
                 Ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
                    "cuptiActivityEnable(CONCURRENT_KERNEL)") &&
                 (!TimesLaunches() || StartTimingLaunches())
             ? 1
             : 0;
}

// Stops recording and hands every buffer back (so that their records are counted); 1 on success.
extern "C" __attribute__((visibility("default"))) int gpuidle_bare_cupti_stop(void) {
  StopTimingLaunches();
  return Ok(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
            "cuptiActivityDisable(CONCURRENT_KERNEL)") &&
                 Ok(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED),
                    "cuptiActivityFlushAll")
             ? 1
             : 0;
}

// Launch calls timed so far on threads that have ended, plus the calling thread's.
extern "C" __attribute__((visibility("default"))) long long gpuidle_bare_cupti_launch_calls(void) {
  return launch_calls.load() + launch_sums.calls;
}

namespace {
std::atomic<bool> detach_pending{false};
CUpti_SubscriberHandle detach_subscriber = nullptr;

void CUPTIAPI DetachAtExit(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                           const void* data) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API || cbid != CUPTI_DRIVER_TRACE_CBID_cuDeviceGetCount ||
      static_cast<const CUpti_CallbackData*>(data)->callbackSite != CUPTI_API_EXIT ||
      !detach_pending.exchange(false)) {
    return;
  }
  Ok(cuptiUnsubscribe(detach_subscriber), "cuptiUnsubscribe");
  Ok(cuptiFinalize(), "cuptiFinalize");
}

// Subscribes DetachAtExit, makes the call that triggers it; true if it ran.
bool DetachThrough(int (*device_count)(int*)) {
  if (!Ok(cuptiSubscribe(&detach_subscriber, DetachAtExit, nullptr), "cuptiSubscribe"))
    return false;
  if (!Ok(cuptiEnableCallback(1, detach_subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                              CUPTI_DRIVER_TRACE_CBID_cuDeviceGetCount),
          "cuptiEnableCallback")) {
    cuptiUnsubscribe(detach_subscriber);
    return false;
  }
  detach_pending = true;
  int devices = 0;
  device_count(&devices);
  if (detach_pending.exchange(false)) {  // no callback came
    std::fprintf(stderr, "bare_cupti: detach: no callback from cuDeviceGetCount\n");
    cuptiUnsubscribe(detach_subscriber);
    return false;
  }
  return true;
}
}  // namespace

// After a stop: detaches CUPTI from the process, as gpuidle does when it stops (CUPTI keeps
// intercepting CUDA calls until then), at the exit of a cuDeviceGetCount made for it (CUPTI's
// guidance). For the benchmark's alternation of both tracers in one process; 1 if detached.
extern "C" __attribute__((visibility("default"))) int gpuidle_bare_cupti_detach(void) {
  // The static CUDA runtime loads the driver privately (RTLD_LOCAL): look in it, not globally.
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (driver == nullptr) {
    std::fprintf(stderr, "bare_cupti: detach: the CUDA driver is not loaded\n");
    return 0;
  }
  using DeviceGetCount = int (*)(int*);
  const auto device_count = reinterpret_cast<DeviceGetCount>(dlsym(driver, "cuDeviceGetCount"));
  const int detached = device_count != nullptr && DetachThrough(device_count) ? 1 : 0;
  dlclose(driver);  // drops only the reference taken above
  return detached;
}

// What reading CUPTI's clock costs next to CLOCK_REALTIME (which CUPTI normalises to on Linux),
// and how far apart they are: one line on stdout.
extern "C" __attribute__((visibility("default"))) void gpuidle_bare_cupti_clock_probe(void) {
  constexpr int kReads = 1'000'000;
  auto realtime_ns = [] {
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  };
  uint64_t t = 0;
  uint64_t sum = 0;
  const int64_t start = realtime_ns();
  for (int i = 0; i < kReads; ++i) {
    cuptiGetTimestamp(&t);
    sum += t;
  }
  const int64_t middle = realtime_ns();
  for (int i = 0; i < kReads; ++i) sum += static_cast<uint64_t>(realtime_ns());
  const int64_t end = realtime_ns();
  cuptiGetTimestamp(&t);
  const int64_t offset = static_cast<int64_t>(t) - realtime_ns();
  std::printf(
      "clock_probe: cuptiGetTimestamp_ns=%.1f clock_realtime_ns=%.1f cupti_minus_realtime_ns=%lld "
      "(%llu)\n",
      static_cast<double>(middle - start) / kReads, static_cast<double>(end - middle) / kReads,
      static_cast<long long>(offset), static_cast<unsigned long long>(sum % 10));
}

extern "C" __attribute__((visibility("default"))) long long gpuidle_bare_cupti_kernel_records(
    void) {
  return kernel_records.load();
}

// Called by the CUDA driver during cuInit when CUDA_INJECTION64_PATH names this library.
// Returns 1 on success; on failure the program runs on untraced.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  if (injected.exchange(true)) return 1;
  if (gpuidle_bare_cupti_start() == 0) return 0;
  std::atexit(FlushAtExit);
  return 1;
}
