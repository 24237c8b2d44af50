// The overhead benchmark's probes (built only with -DGPUIDLE_COLLECTOR_PROBES=ON): the settings
// the benchmark fills them from (tests/benchmarks/overhead/probe_settings.cc), and what the
// collector does with them.
#include "collect/collector_probes.h"

#include <cupti.h>
#include <stdlib.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collect/call_sites.h"
#include "collect/collector_fixture.h"
#include "collect/cuda_driver.h"
#include "collect/fake_cupti.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/timeline.h"

namespace gpuidle::internal {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;
using ::testing::UnorderedElementsAre;

// The benchmark's settings as its scripts set them, for one test: GPUIDLE_BENCH_LEAVE_OUT and
// GPUIDLE_BENCH_API_RECORDS (nullptr: unset), both unset again at the end.
class BenchmarkSettings {
 public:
  BenchmarkSettings(const char* leave_out, const char* api_records) {
    Set(kLeaveOut, leave_out);
    Set(kApiRecords, api_records);
  }
  ~BenchmarkSettings() {
    unsetenv(kLeaveOut);
    unsetenv(kApiRecords);
  }
  BenchmarkSettings(const BenchmarkSettings&) = delete;
  BenchmarkSettings& operator=(const BenchmarkSettings&) = delete;

 private:
  static constexpr const char* kLeaveOut = "GPUIDLE_BENCH_LEAVE_OUT";
  static constexpr const char* kApiRecords = "GPUIDLE_BENCH_API_RECORDS";
  static void Set(const char* variable, const char* value) {
    if (value != nullptr) {
      setenv(variable, value, 1);
    } else {
      unsetenv(variable);
    }
  }
};

absl::StatusOr<uint32_t> PartsOf(const char* leave_out) {
  BenchmarkSettings settings(leave_out, nullptr);
  absl::StatusOr<CollectorProbes> probes = BenchmarkProbes();
  if (!probes.ok()) return probes.status();
  return probes->leave_out;
}

absl::StatusOr<ApiRecords> ApiRecordsOf(const char* api_records) {
  BenchmarkSettings settings(nullptr, api_records);
  absl::StatusOr<CollectorProbes> probes = BenchmarkProbes();
  if (!probes.ok()) return probes.status();
  return probes->api_records;
}

TEST(BenchmarkProbesTest, WithoutTheBenchmarksSettingsTheCollectorWorksAsTheProducts) {
  BenchmarkSettings none(nullptr, nullptr);
  absl::StatusOr<CollectorProbes> probes = BenchmarkProbes();
  ASSERT_TRUE(probes.ok()) << probes.status();
  EXPECT_EQ(probes->leave_out, 0u);
  EXPECT_EQ(probes->api_records, ApiRecords::kCallbacks);
}

TEST(BenchmarkProbesTest, ReadsThePartsNamesAndNamesAnUnknownOneWithTheVariable) {
  absl::StatusOr<uint32_t> bits = PartsOf("runtime, decode,other-kinds,detach");
  ASSERT_TRUE(bits.ok()) << bits.status();
  EXPECT_EQ(*bits, kPartRuntimeCalls | kPartDecode | kPartOtherKinds | kPartDetach);
  EXPECT_EQ(*PartsOf(""), 0u);
  EXPECT_EQ(*PartsOf("sync-records,event-records"), kPartSyncRecords | kPartEventRecords);
  EXPECT_EQ(*PartsOf("call-timing"), kPartCallTiming);
  EXPECT_EQ(*PartsOf("cupti-clock"), kPartCuptiClock);
  EXPECT_EQ(*PartsOf("+latency-timestamps"), kAddLatencyTimestamps);
  absl::StatusOr<uint32_t> bad = PartsOf("runtime,kernels");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("GPUIDLE_BENCH_LEAVE_OUT: "));
  EXPECT_THAT(bad.status().message(), HasSubstr("'kernels'"));
  EXPECT_THAT(bad.status().message(),
              HasSubstr("call-timing, cupti-clock, +latency-timestamps, +large-device-buffers)"))
      << "every name listed";
}

TEST_F(CollectorTest, LeavesOutWhatTheBenchmarkAsksAndKeepsKernels) {
  CollectorOptions options = Options();
  options.probes.leave_out = kPartRuntimeCalls | kPartDriverCalls | kPartOtherKinds |
                             kPartSubscriber | kPartSystemThreadIds | kPartFlushPeriod;
  ASSERT_TRUE(collector().Start(fake::FakeApi(), options).ok());
  {
    fake::State& s = fake::GetState();
    std::lock_guard<std::mutex> lock(s.mu);
    EXPECT_THAT(s.enabled_kinds, ElementsAre(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    EXPECT_THAT(s.enabled_runtime, IsEmpty());
    EXPECT_THAT(s.enabled_driver, IsEmpty());
    EXPECT_FALSE(s.subscribed);
    EXPECT_NE(s.thread_id_type, CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    EXPECT_EQ(s.flush_period_ms, 0u);
  }
  ASSERT_TRUE(collector().Stop().ok());
}

TEST_F(CollectorTest, LeavesOutOneActivityKindAtATime) {
  CollectorOptions options = Options();
  options.probes.leave_out = kPartSyncRecords | kPartEventRecords;
  ASSERT_TRUE(collector().Start(fake::FakeApi(), options).ok());
  {
    fake::State& s = fake::GetState();
    std::lock_guard<std::mutex> lock(s.mu);
    // The copy kinds wait for the first copy call (collect/kinds_on_demand.h).
    EXPECT_THAT(s.enabled_kinds, UnorderedElementsAre(CUPTI_ACTIVITY_KIND_DEVICE,
                                                      CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                                      CUPTI_ACTIVITY_KIND_MEMSET));
  }
  ASSERT_TRUE(collector().Stop().ok());
}

// Without CUPTI's API callbacks (activity records of the calls instead) no copy call would
// enable the copy kinds: they are enabled at the start.
TEST_F(CollectorTest, EnablesCopyRecordsAtTheStartWhenNoCallbackCouldDoIt) {
  CollectorOptions options = Options();
  options.probes.api_records = ApiRecords::kWholeKinds;
  ASSERT_TRUE(collector().Start(fake::FakeApi(), options).ok());
  {
    fake::State& s = fake::GetState();
    std::lock_guard<std::mutex> lock(s.mu);
    EXPECT_THAT(s.enabled_kinds,
                ::testing::IsSupersetOf({CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2}));
  }
  ASSERT_TRUE(collector().Stop().ok());
}

TEST_F(CollectorTest, ReturnsBuffersUndecodedWhenDecodingIsLeftOut) {
  CollectorOptions options = Options();
  options.probes.leave_out = kPartDecode;
  absl::StatusOr<Timeline> t =
      Collect([] { fake::Record(fake::Kernel(0, 7, 1200, 2200, "_Z4spinPfi", 1)); }, options);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(t->devices, IsEmpty());
  EXPECT_EQ(collector().counters().records, 0u);
}

TEST_F(CollectorTest, WholeKindModeSwitchesOffEveryUnneededCallbackIdUntilItStops) {
  // A collection started after CUDA was initialised records API calls only this way (H200).
  CollectorOptions options = Options();
  options.probes.api_records = ApiRecords::kWholeKinds;
  ASSERT_TRUE(collector().Start(fake::FakeApi(), options).ok());
  fake::State& s = fake::GetState();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    EXPECT_THAT(s.enabled_kinds, Contains(CUPTI_ACTIVITY_KIND_RUNTIME));
    EXPECT_THAT(s.enabled_kinds, Contains(CUPTI_ACTIVITY_KIND_DRIVER));
    EXPECT_THAT(s.runtime_turned_off, Contains(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
    EXPECT_THAT(s.runtime_turned_off, Not(Contains(kLaunch)));
    EXPECT_THAT(s.runtime_turned_off, Not(Contains(kStreamSync)));
  }
  ASSERT_TRUE(collector().Stop().ok());
  std::lock_guard<std::mutex> lock(s.mu);
  EXPECT_THAT(s.enabled_kinds, IsEmpty());
  // CUPTI's defaults again for torch.profiler or whoever uses CUPTI next.
  EXPECT_THAT(s.enabled_runtime, Contains(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
}

TEST(ApiRecordsTest, GpuidleTimesTheCallsItselfUnlessABenchmarkSaysOtherwise) {
  EXPECT_EQ(CollectorOptions().probes.api_records, ApiRecords::kCallbacks);
}

TEST(ApiRecordsTest, ReadsTheModesAndNamesTheVariableOfABadOne) {
  EXPECT_EQ(*ApiRecordsOf("callbacks"), ApiRecords::kCallbacks);
  EXPECT_EQ(*ApiRecordsOf(""), ApiRecords::kCallbacks);
  EXPECT_EQ(*ApiRecordsOf("driver-callbacks"), ApiRecords::kDriverCallbacks);
  EXPECT_EQ(*ApiRecordsOf("auto"), ApiRecords::kAuto);
  EXPECT_FALSE(ApiRecordsOf("attach").ok());  // tried on the H200: recorded nothing
  EXPECT_EQ(*ApiRecordsOf("ids"), ApiRecords::kIdsOnly);
  EXPECT_EQ(*ApiRecordsOf("kinds"), ApiRecords::kWholeKinds);
  absl::StatusOr<ApiRecords> bad = ApiRecordsOf("all");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("GPUIDLE_BENCH_API_RECORDS: "));
}

TEST_F(CollectorTest, DriverCallbackModeTimesEveryCallAtTheDriverAndEnablesNoRuntimeCallback) {
  SetSiteFunction(&PythonLine);
  CollectorOptions options = Options();
  options.probes.api_records = ApiRecords::kDriverCallbacks;
  ASSERT_TRUE(collector().Start(fake::FakeApi(), options).ok());
  EXPECT_THAT(
      Locked<std::set<CUpti_CallbackId>>([](fake::State& s) { return s.runtime_callbacks; }),
      IsEmpty());
  // cudaStreamSynchronize reaches the driver as cuStreamSynchronize, with the same correlation.
  EXPECT_FALSE(fake::CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, kStreamSync, 31, [] {
    EXPECT_TRUE(fake::CallApi(CUPTI_CB_DOMAIN_DRIVER_API,
                              CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, 31, [] {}));
  }));
  EXPECT_TRUE(fake::CallApi(CUPTI_CB_DOMAIN_DRIVER_API, kLaunchEx, 32, [] {}));
  absl::StatusOr<Timeline> t = collector().Stop();
  SetSiteFunction(nullptr);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_THAT(t->calls, SizeIs(2));
  EXPECT_EQ(Name(*t, t->calls[0].name), "cuStreamSynchronize");
  EXPECT_EQ(t->calls[0].category, CallCategory::kSync);
  EXPECT_EQ(t->calls[0].correlation_id, 31u);
  EXPECT_EQ(Name(*t, t->calls[1].name), "cuLaunchKernelEx");
  // The sync is named at the driver, and the launch sampled there.
  ASSERT_THAT(t->ranges, SizeIs(2));
  EXPECT_EQ(t->ranges[0].start_ns, t->calls[0].start_ns);
  EXPECT_EQ(t->ranges[0].end_ns, t->calls[0].end_ns);
  EXPECT_LE(t->ranges[1].start_ns, t->calls[1].start_ns);
}

TEST_F(CollectorTest, AProbeCanTimeTheNestedDriverCallsToo) {
  CollectorOptions options = Options();
  options.probes.leave_out = kPartNestedCallSkip;  // GPUIDLE_BENCH_LEAVE_OUT=nested-call-skip
  absl::StatusOr<Timeline> t = Collect(
      [] {
        fake::CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, kLaunch, 21,
                      [] { fake::CallApi(CUPTI_CB_DOMAIN_DRIVER_API, kLaunchEx, 22, [] {}); });
      },
      options);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_THAT(t->calls, SizeIs(2));
  EXPECT_EQ(t->calls[0].correlation_id, 21u);
  EXPECT_EQ(t->calls[1].correlation_id, 22u);
}

TEST_F(CollectorTest, AProbeCanLeaveTheCallbacksIdleToPriceCuptisDispatchAlone) {
  CollectorOptions options = Options();
  options.probes.leave_out = kPartCallTiming;
  ASSERT_TRUE(collector().Start(fake::FakeApi(), options).ok());
  EXPECT_TRUE(Locked<bool>([](fake::State& s) { return s.runtime_callbacks.count(kLaunch) > 0; }))
      << "the callbacks stay enabled: CUPTI still dispatches them";
  EXPECT_TRUE(fake::CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, kLaunch, 21, [] {}));
  fake::Record(fake::Kernel(0, 7, 1200, 2200, "_Z4spinPfi", 21));
  absl::StatusOr<Timeline> t = collector().Stop();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(t->calls, IsEmpty());
  EXPECT_EQ(collector().counters().records, 1u) << "the kernel only";
}

TEST_F(CollectorTest, AProbeCanTimeCallsOnTheRealtimeClockShiftedToCuptis) {
  CollectorOptions options = Options();
  options.probes.leave_out = kPartCuptiClock;
  const int64_t before = fake::FakeClockNs();
  absl::StatusOr<Timeline> t = Collect(
      [] {
        EXPECT_TRUE(fake::CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, kStreamSync, 9, [] {
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }));
      },
      options);
  const int64_t after = fake::FakeClockNs();
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_THAT(t->calls, SizeIs(1));
  // On CUPTI's (the fake's) time line, within the offset's measuring error.
  constexpr int64_t kSlackNs = 1'000'000;
  EXPECT_GE(t->calls[0].start_ns, before - kSlackNs);
  EXPECT_LE(t->calls[0].end_ns, after + kSlackNs);
  EXPECT_GE(t->calls[0].end_ns - t->calls[0].start_ns, 2'000'000);
}

TEST_F(CollectorTest, AutoModeTracesSingleIdsBeforeCudaIsInitialisedAndKindsAfter) {
  CollectorOptions options = Options();
  options.probes.api_records = ApiRecords::kAuto;
  options.driver.initialized = [] { return false; };
  ASSERT_TRUE(collector().Start(fake::FakeApi(), options).ok());
  EXPECT_THAT(Locked<std::set<CUpti_ActivityKind>>([](fake::State& s) { return s.enabled_kinds; }),
              Not(Contains(CUPTI_ACTIVITY_KIND_RUNTIME)));
  EXPECT_THAT(Locked<std::set<CUpti_CallbackId>>([](fake::State& s) { return s.enabled_runtime; }),
              Contains(kLaunch));
  ASSERT_TRUE(collector().Stop().ok());

  options.driver.initialized = [] { return true; };
  ASSERT_TRUE(collector().Start(fake::FakeApi(), options).ok());
  EXPECT_THAT(Locked<std::set<CUpti_ActivityKind>>([](fake::State& s) { return s.enabled_kinds; }),
              Contains(CUPTI_ACTIVITY_KIND_RUNTIME));
}

TEST_F(CollectorTest, StaysAttachedWhenTheBenchmarkLeavesTheDetachOut) {
  CollectorOptions without = DetachableOptions();
  without.probes.leave_out = kPartDetach;
  ASSERT_TRUE(collector().Start(fake::FakeApi(), without).ok());
  ASSERT_TRUE(collector().Stop(CuptiAfterStop::kDetach).ok());
  EXPECT_EQ(Locked<int>([](fake::State& s) { return s.finalize_calls; }), 0);
}

// The injection's way before the callbacks: activity records of the needed ids.
CollectorOptions IdsOnlyOptions() {
  CollectorOptions o = Options();
  o.probes.api_records = ApiRecords::kIdsOnly;
  return o;
}

TEST_F(CallSiteTest, IdsOnlyAsksNothingOfCuptiWithoutAProvider) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), IdsOnlyOptions()).ok());
  EXPECT_THAT(
      Locked<std::set<CUpti_CallbackId>>([](fake::State& s) { return s.runtime_callbacks; }),
      IsEmpty());
}

TEST_F(CallSiteTest, IdsOnlyCallsBackOnLaunchSyncAndCopyCallsOnly) {
  SetSiteFunction(&PythonLine);
  ASSERT_TRUE(collector().Start(fake::FakeApi(), IdsOnlyOptions()).ok());
  EXPECT_THAT(
      Locked<std::set<CUpti_CallbackId>>([](fake::State& s) { return s.runtime_callbacks; }),
      UnorderedElementsAre(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                           CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
                           CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020));
}

TEST_F(CallSiteTest, IdsOnlyEachNamedCallGetsAPythonFrameSpanningIt) {
  SetSiteFunction(&PythonLine);
  absl::StatusOr<Timeline> t = Collect(
      [] {
        EXPECT_TRUE(fake::CallRuntimeApi(kStreamSync, 3));
        fake::Record(fake::Api(CUPTI_ACTIVITY_KIND_RUNTIME, kStreamSync, 1500, 3400, 42, 3));
        // A site whose call record never arrived (lost, say) adds nothing.
        EXPECT_TRUE(fake::CallRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 4));
      },
      IdsOnlyOptions());
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_THAT(t->ranges, SizeIs(1));
  const Range& frame = t->ranges[0];
  EXPECT_EQ(frame.kind, RangeKind::kPython);
  EXPECT_EQ(Name(*t, frame.name), "train.py:42 in train_step");
  EXPECT_EQ(frame.start_ns, 1500);
  EXPECT_EQ(frame.end_ns, 3400);
  EXPECT_EQ(frame.thread, 42u);
}

TEST_F(CollectorTest, IdsOnlyModeRecordsLaunchSyncCopyAndWaitEventCallsOnly) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), IdsOnlyOptions()).ok());
  EXPECT_THAT(Locked<std::set<CUpti_CallbackId>>([](fake::State& s) { return s.enabled_runtime; }),
              UnorderedElementsAre(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                   CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
                                   CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020,
                                   CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020));
  EXPECT_THAT(Locked<std::set<CUpti_CallbackId>>([](fake::State& s) { return s.enabled_driver; }),
              UnorderedElementsAre(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
                                   CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize));
}

}  // namespace
}  // namespace gpuidle::internal
