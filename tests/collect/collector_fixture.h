// What the collector's tests share: one fake CUPTI (collect/fake_cupti.h), the options every
// test starts from, and a fixture that leaves the process-wide collector stopped.
#ifndef GPUIDLE_TESTS_COLLECT_COLLECTOR_FIXTURE_H_
#define GPUIDLE_TESTS_COLLECT_COLLECTOR_FIXTURE_H_

#include <cupti.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "collect/call_sites.h"
#include "collect/collector.h"
#include "collect/fake_cupti.h"
#include "gtest/gtest.h"
#include "model/timeline.h"

namespace gpuidle::internal {

namespace fake = fake_cupti;

// The collector is one per process and creates its buffer pool at the first Start, so every
// test uses the same pool shape: two buffers, large enough for any test's records.
inline constexpr size_t kBufferBytes = 64 << 10;
inline constexpr size_t kBufferCount = 2;

inline CollectorOptions Options(int64_t max_records = 1'000'000) {
  CollectorOptions o;
  o.buffer_bytes = kBufferBytes;
  o.buffer_count = kBufferCount;
  o.max_records = max_records;
  // No driver in CPU tests (the real queries would say so too; these say it for certain).
  o.driver.initialized = [] { return false; };
  o.driver.device_count = [] { return -1; };
  o.driver.device_name = [](int) { return std::string(); };
  o.driver.why_no_device = [] { return std::string(); };
  return o;
}

inline uint32_t ThisThreadId() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

// Waits (up to 10 s) for condition; true if it came true.
inline bool Eventually(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return condition();
}

template <typename T>
T Locked(const std::function<T(fake::State&)>& read) {
  fake::State& s = fake::GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  return read(s);
}

inline constexpr uint32_t kLaunch = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
inline constexpr uint32_t kStreamSync = CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020;

class CollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake::Reset();
    ASSERT_FALSE(collector().collecting()) << "a previous test left the collector running";
  }
  void TearDown() override {
    // The collector is process-wide: leave it stopped for the next test.
    if (collector().collecting()) collector().Stop().IgnoreError();
    fake::Reset();
  }

  static Collector& collector() { return Collector::Get(); }
  static std::string Name(const Timeline& t, StringId id) { return std::string(t.strings.Get(id)); }

  // Starts, records what record() queues while collecting, stops.
  static absl::StatusOr<Timeline> Collect(const std::function<void()>& record,
                                          const CollectorOptions& options = Options()) {
    if (absl::Status s = collector().Start(fake::FakeApi(), options); !s.ok()) return s;
    record();
    return collector().Stop();
  }
};

inline constexpr uint32_t kLaunchEx = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx;

// A binding's provider, as the Python package's names the Python line calling CUDA.
inline const char* PythonLine() { return "train.py:42 in train_step"; }
inline const char* NoPlace() { return nullptr; }

class CallSiteTest : public CollectorTest {
 protected:
  void TearDown() override {
    SetSiteFunction(nullptr);
    CollectorTest::TearDown();
  }
};

// Once CUPTI has traced, it keeps intercepting CUDA calls until detached (CuptiAfterStop).
inline CollectorOptions DetachableOptions() {
  CollectorOptions o = Options();
  o.driver.device_count = &fake::DeviceGetCount;  // reaches CUPTI's driver callbacks
  return o;
}

}  // namespace gpuidle::internal

#endif  // GPUIDLE_TESTS_COLLECT_COLLECTOR_FIXTURE_H_
