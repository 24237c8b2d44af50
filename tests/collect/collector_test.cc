// The collector with a fake CUPTI: starting and stopping, activity kinds, buffers, the record
// limit and lost records.
#include "collect/collector.h"

#include <cupti.h>

#include <cstdint>
#include <deque>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collect/clock.h"
#include "collect/collector_fixture.h"
#include "collect/cuda_driver.h"
#include "collect/fake_cupti.h"
#include "collect/host_ranges.h"
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

TEST_F(CollectorTest, StopReturnsTheRecordsCuptiDelivered) {
  fake::GetState().dropped_to_report = 7;
  absl::StatusOr<Timeline> t = Collect([] {
    fake::Record(fake::Device(0, "NVIDIA H200", true));
    fake::Record(fake::Api(CUPTI_ACTIVITY_KIND_RUNTIME, kLaunch, 1000, 1100, 42, 1));
    fake::Record(fake::Kernel(0, 7, 1200, 2200, "_Z4spinPfi", 1));
    fake::Record(fake::Api(CUPTI_ACTIVITY_KIND_RUNTIME, kLaunch, 1300, 1400, 42, 2));
    fake::Record(fake::Kernel(0, 7, 2300, 3300, "_Z4spinPfi", 2));
    fake::Record(fake::Api(CUPTI_ACTIVITY_KIND_RUNTIME, kStreamSync, 1500, 3400, 42, 3));
    fake::Record(fake::Memcpy(0, 7, 3400, 3500, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH,
                              CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                              CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, 4, 4));
  });
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE(collector().collecting());
  EXPECT_EQ(t->info.source, "gpuidle");
  EXPECT_EQ(t->info.dropped_records, 7u);
  EXPECT_FALSE(t->info.record_limit_reached);
  EXPECT_THAT(t->info.visible_devices, ElementsAre(0));

  ASSERT_THAT(t->devices, SizeIs(1));
  EXPECT_EQ(t->devices[0].name, "NVIDIA H200");
  const std::vector<DeviceOp>& ops = t->devices[0].ops;
  ASSERT_THAT(ops, SizeIs(3));
  EXPECT_EQ(Name(*t, ops[0].name), "spin(float*, int)");
  EXPECT_EQ(ops[0].start_ns, 1200);
  EXPECT_EQ(ops[1].start_ns, 2300);
  EXPECT_EQ(ops[2].kind, OpKind::kMemcpy);
  EXPECT_TRUE(ops[2].pageable);

  ASSERT_THAT(t->calls, SizeIs(3));
  EXPECT_EQ(Name(*t, t->calls[0].name), "cudaLaunchKernel");
  EXPECT_EQ(t->calls[0].thread, 42u);
  EXPECT_EQ(Name(*t, t->calls[2].name), "cudaStreamSynchronize");
  EXPECT_EQ(t->calls[2].category, CallCategory::kSync);
  EXPECT_EQ(collector().counters().records, 7u);
}

TEST_F(CollectorTest, StopFlushesForcedSoThatWorkInFlightIsIncluded) {
  ASSERT_TRUE(Collect([] {}).ok());
  EXPECT_THAT(Locked<std::vector<uint32_t>>([](fake::State& s) { return s.flush_flags; }),
              ElementsAre(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
}

TEST_F(CollectorTest, ReportsNoDroppedRecordsWhenCuptiDroppedNone) {
  absl::StatusOr<Timeline> t =
      Collect([] { fake::Record(fake::Kernel(0, 7, 1200, 2200, "_Z4spinPfi", 1)); });
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->info.dropped_records, 0u);
}

TEST_F(CollectorTest, DecodesBuffersWhileStillCollecting) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  fake::Record(fake::Kernel(0, 7, 1200, 2200, "_Z4spinPfi", 1));
  fake::Record(fake::Kernel(0, 7, 2300, 3300, "_Z4spinPfi", 2));
  fake::Deliver();  // a periodic flush, or a full buffer
  EXPECT_TRUE(Eventually([] { return collector().counters().records == 2; }));
  EXPECT_TRUE(collector().collecting());

  fake::Record(fake::Kernel(0, 7, 3400, 4400, "_Z4spinPfi", 3));
  absl::StatusOr<Timeline> t = collector().Stop();
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_THAT(t->devices, SizeIs(1));
  EXPECT_THAT(t->devices[0].ops, SizeIs(3));
}

TEST_F(CollectorTest, EnablesConcurrentKernelAndNeverKernel) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  const std::set<CUpti_ActivityKind> enabled =
      Locked<std::set<CUpti_ActivityKind>>([](fake::State& s) { return s.enabled_kinds; });
  EXPECT_THAT(enabled, Contains(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  EXPECT_THAT(enabled, Not(Contains(CUPTI_ACTIVITY_KIND_KERNEL)));
  EXPECT_THAT(enabled, Contains(CUPTI_ACTIVITY_KIND_MEMSET));
  EXPECT_THAT(enabled, Contains(CUPTI_ACTIVITY_KIND_DEVICE));
  // Synchronization and event records wait for the first sync or wait (below).
  EXPECT_THAT(enabled, Not(Contains(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)));
  // Whole-kind API tracing would record every call (cudaGetDevice included).
  EXPECT_THAT(enabled, Not(Contains(CUPTI_ACTIVITY_KIND_RUNTIME)));
  EXPECT_THAT(enabled, Not(Contains(CUPTI_ACTIVITY_KIND_DRIVER)));
}

// Copy records cost every launch while enabled (collect/kinds_on_demand.h): the first copy call
// enables them, at its entry, so that its own record is kept.
TEST_F(CollectorTest, EnablesCopyRecordsAtTheFirstCopyCallOnly) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  const auto enabled = [this] {
    return Locked<std::set<CUpti_ActivityKind>>([](fake::State& s) { return s.enabled_kinds; });
  };
  EXPECT_THAT(enabled(), Not(Contains(CUPTI_ACTIVITY_KIND_MEMCPY)));
  EXPECT_TRUE(fake::CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, kStreamSync, 1, [] {}));
  EXPECT_THAT(enabled(), Not(Contains(CUPTI_ACTIVITY_KIND_MEMCPY))) << "a sync is no copy";
  bool enabled_inside = false;
  EXPECT_TRUE(
      fake::CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 2,
                    [&] { enabled_inside = enabled().contains(CUPTI_ACTIVITY_KIND_MEMCPY); }));
  EXPECT_TRUE(enabled_inside) << "enabled before the copy itself runs";
  EXPECT_THAT(enabled(), Contains(CUPTI_ACTIVITY_KIND_MEMCPY2));
  ASSERT_TRUE(collector().Stop().ok());
  EXPECT_THAT(enabled(), Not(Contains(CUPTI_ACTIVITY_KIND_MEMCPY)));
  // The next collection waits for its own first copy again.
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  EXPECT_THAT(enabled(), Not(Contains(CUPTI_ACTIVITY_KIND_MEMCPY)));
  ASSERT_TRUE(collector().Stop().ok());
}

// Synchronization and event records cost every launch too: the first sync or wait-event call
// enables both, at its entry; a copy does not.
TEST_F(CollectorTest, EnablesSyncAndEventRecordsAtTheFirstSyncOrWaitOnly) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  const auto enabled = [this] {
    return Locked<std::set<CUpti_ActivityKind>>([](fake::State& s) { return s.enabled_kinds; });
  };
  EXPECT_TRUE(fake::CallApi(CUPTI_CB_DOMAIN_RUNTIME_API,
                            CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 1, [] {}));
  EXPECT_THAT(enabled(), Not(Contains(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION))) << "a copy";
  bool enabled_inside = false;
  EXPECT_TRUE(fake::CallApi(
      CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, 2,
      [&] { enabled_inside = enabled().contains(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION); }));
  EXPECT_TRUE(enabled_inside) << "enabled before the wait itself runs";
  EXPECT_THAT(enabled(), Contains(CUPTI_ACTIVITY_KIND_CUDA_EVENT));
  ASSERT_TRUE(collector().Stop().ok());
  EXPECT_THAT(enabled(), Not(Contains(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)));
  EXPECT_THAT(enabled(), Not(Contains(CUPTI_ACTIVITY_KIND_CUDA_EVENT)));
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  EXPECT_TRUE(fake::CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, kStreamSync, 3, [] {}));
  EXPECT_THAT(enabled(), Contains(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)) << "a sync";
  ASSERT_TRUE(collector().Stop().ok());
}

TEST_F(CollectorTest, TracesOnlyLaunchSyncCopyAndWaitEventCalls) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  // Timed in callbacks of these ids only; no API activity records at all.
  EXPECT_THAT(
      Locked<std::set<CUpti_CallbackId>>([](fake::State& s) { return s.runtime_callbacks; }),
      UnorderedElementsAre(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                           CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
                           CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020,
                           CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020));
  EXPECT_THAT(Locked<std::set<CUpti_CallbackId>>([](fake::State& s) { return s.driver_callbacks; }),
              UnorderedElementsAre(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
                                   CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize));
  EXPECT_THAT(Locked<std::set<CUpti_CallbackId>>([](fake::State& s) { return s.enabled_runtime; }),
              IsEmpty());
  EXPECT_THAT(Locked<std::set<CUpti_CallbackId>>([](fake::State& s) { return s.enabled_driver; }),
              IsEmpty());
}

TEST_F(CollectorTest, KeepsCuptisClockAndRegistersNoTimestampCallback) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  // A timestamp callback costs time on every launch; CUPTI's own clock is the timeline's.
  EXPECT_EQ(Locked<CUpti_TimestampCallbackFunc>([](fake::State& s) { return s.timestamp; }),
            nullptr);
  const int64_t before = fake::FakeClockNs();
  const int64_t now = TimelineNowNs();
  const int64_t after = fake::FakeClockNs();
  EXPECT_GE(now, before);
  EXPECT_LE(now, after);
}

TEST_F(CollectorTest, StampsHostRangesWithCuptisClock) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  const int64_t before = fake::FakeClockNs();
  HostRangeRecorder::Get().Push(0, RangeKind::kUser, "on CUPTI's clock");
  HostRangeRecorder::Get().Pop(0);
  const int64_t after = fake::FakeClockNs();
  absl::StatusOr<Timeline> t = collector().Stop();
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_THAT(t->ranges, SizeIs(1));
  EXPECT_GE(t->ranges[0].start_ns, before);
  EXPECT_LE(t->ranges[0].end_ns, after);
}

TEST_F(CollectorTest, AsksCuptiForSystemThreadIds) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  EXPECT_EQ(Locked<CUpti_ActivityThreadIdType>([](fake::State& s) { return s.thread_id_type; }),
            CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
}

TEST_F(CollectorTest, DisablesEverythingItEnabledWhenStopped) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  EXPECT_TRUE(Locked<bool>([](fake::State& s) { return s.subscribed; }));
  EXPECT_EQ(Locked<uint32_t>([](fake::State& s) { return s.flush_period_ms; }), 1000u);
  ASSERT_TRUE(collector().Stop().ok());

  fake::State& s = fake::GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  EXPECT_THAT(s.kinds_ever_enabled, Not(IsEmpty()));
  EXPECT_THAT(s.enabled_kinds, IsEmpty());
  // The timed calls' callbacks go with the subscriber.
  EXPECT_FALSE(s.subscribed);
  EXPECT_THAT(s.runtime_callbacks, IsEmpty());
  EXPECT_THAT(s.driver_callbacks, IsEmpty());
  EXPECT_EQ(s.flush_period_ms, 0u);
  for (CUpti_ActivityKind kind : s.kinds_ever_enabled) {
    EXPECT_EQ(s.disable_calls[kind], 1) << "kind " << kind;
  }
}

TEST_F(CollectorTest, RegistersItsBufferCallbacksAtEveryStart) {
  // Between two collections another tool (torch.profiler) may have registered its own.
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  ASSERT_TRUE(collector().Stop().ok());
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  EXPECT_EQ(Locked<int>([](fake::State& s) { return s.register_callbacks_calls; }), 2);
}

TEST_F(CollectorTest, NamesDevicesThatCuptiSentNoDeviceRecordFor) {
  // A collection started after CUDA was initialised gets kernels but no DEVICE record.
  CollectorOptions options = Options();
  options.driver.device_name = [](int device) {
    return "GPU named by the driver " + std::to_string(device);
  };
  absl::StatusOr<Timeline> t = Collect(
      [] {
        fake::Record(fake::Device(0, "NVIDIA H200", true));
        fake::Record(fake::Kernel(0, 7, 1200, 2200, "_Z4spinPfi", 1));
        fake::Record(fake::Kernel(1, 7, 1200, 2200, "_Z4spinPfi", 2));
      },
      options);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_THAT(t->devices, SizeIs(2));
  EXPECT_EQ(t->devices[0].name, "NVIDIA H200");  // CUPTI's name stays
  EXPECT_EQ(t->devices[1].name, "GPU named by the driver 1");
  // Listed as visible, so that a saved trace carries the name (deviceProperties).
  EXPECT_THAT(t->info.visible_devices, ElementsAre(0, 1));
  EXPECT_THAT(t->info.visible_device_names,
              ElementsAre("NVIDIA H200", "GPU named by the driver 1"));
}

TEST_F(CollectorTest, PutsTheDriversReasonBeforeCuptisWhenCuptiCannotStart) {
  fake::GetState().subscribe_result = CUPTI_ERROR_NOT_INITIALIZED;
  CollectorOptions options = Options();
  options.driver.why_no_device = [] { return std::string("no NVIDIA driver (it is elsewhere)"); };
  const absl::Status status = collector().Start(fake::FakeApi(), options);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(status.message(),
            "no NVIDIA driver (it is elsewhere) (CUPTI: CUPTI_ERROR_NOT_INITIALIZED)");
  EXPECT_FALSE(collector().collecting());
}

TEST_F(CollectorTest, RecordsHostRangesOnlyWhileCollecting) {
  HostRangeRecorder& ranges = HostRangeRecorder::Get();
  EXPECT_FALSE(ranges.recording());
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  EXPECT_TRUE(ranges.recording());
  ranges.Push(0, RangeKind::kData, "load batch");
  ranges.Pop(0);
  absl::StatusOr<Timeline> t = collector().Stop();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE(ranges.recording());
  ASSERT_THAT(t->ranges, SizeIs(1));
  EXPECT_EQ(Name(*t, t->ranges[0].name), "load batch");
  EXPECT_EQ(t->ranges[0].kind, RangeKind::kData);
  EXPECT_EQ(t->ranges[0].thread, CurrentThreadId());
}

TEST_F(CollectorTest, StepsAsideWhenAnotherToolOwnsCupti) {
  fake::GetState().subscribe_result = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  const absl::Status status = collector().Start(fake::FakeApi(), Options());
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(status.message()), HasSubstr("another tool"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("torch.profiler"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("Nsight Systems"));
  EXPECT_FALSE(collector().collecting());
  EXPECT_FALSE(HostRangeRecorder::Get().recording());

  fake::State& s = fake::GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  EXPECT_THAT(s.kinds_ever_enabled, IsEmpty());
  EXPECT_THAT(s.runtime_ever_enabled, IsEmpty());
  EXPECT_THAT(s.driver_ever_enabled, IsEmpty());
  EXPECT_EQ(s.timestamp, nullptr) << "another tool's clock must not be replaced";
  EXPECT_EQ(s.thread_id_type, CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT);
}

TEST_F(CollectorTest, SaysWhyWhenCuptiCannotStart) {
  fake::GetState().subscribe_result = CUPTI_ERROR_NOT_INITIALIZED;
  const absl::Status status = collector().Start(fake::FakeApi(), Options());
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(status.message()), HasSubstr("CUPTI_ERROR_NOT_INITIALIZED"));
  EXPECT_FALSE(collector().collecting());
  EXPECT_THAT(
      Locked<std::vector<CUpti_ActivityKind>>([](fake::State& s) { return s.kinds_ever_enabled; }),
      IsEmpty());
}

TEST_F(CollectorTest, GivesUpAndReleasesCuptiWhenKernelTracingIsRefused) {
  fake::GetState().refused_kinds = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL};
  const absl::Status status = collector().Start(fake::FakeApi(), Options());
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(status.message()), HasSubstr("kernel tracing"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("CUPTI_ERROR_NOT_SUPPORTED"));
  EXPECT_FALSE(collector().collecting());
  {
    fake::State& s = fake::GetState();
    std::lock_guard<std::mutex> lock(s.mu);
    EXPECT_THAT(s.enabled_kinds, IsEmpty());
    EXPECT_THAT(s.enabled_runtime, IsEmpty());
    EXPECT_THAT(s.enabled_driver, IsEmpty());
    EXPECT_FALSE(s.subscribed);
    s.refused_kinds.clear();
  }
  // Nothing is left behind: collection can start afterwards.
  absl::StatusOr<Timeline> t =
      Collect([] { fake::Record(fake::Kernel(0, 7, 1200, 2200, "_Z4spinPfi", 1)); });
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_THAT(t->devices, SizeIs(1));
  EXPECT_THAT(t->devices[0].ops, SizeIs(1));
}

TEST_F(CollectorTest, KeepsCollectingWhenAnOptionalKindIsRefused) {
  fake::GetState().refused_kinds = {CUPTI_ACTIVITY_KIND_CUDA_EVENT};
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  EXPECT_TRUE(collector().collecting());
  ASSERT_TRUE(collector().Stop().ok());
  EXPECT_EQ(
      Locked<int>([](fake::State& s) { return s.disable_calls[CUPTI_ACTIVITY_KIND_CUDA_EVENT]; }),
      0)
      << "a kind that was never enabled is not disabled";
}

TEST_F(CollectorTest, ARefusedOptionalKindIsOneWarningOfTheTimeline) {
  fake::GetState().refused_kinds = {CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_MEMSET};
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  absl::StatusOr<Timeline> t = collector().Stop();
  ASSERT_TRUE(t.ok()) << t.status();
  // One line per refusal, naming CUPTI's reason; none left for the next collection.
  ASSERT_THAT(t->info.warnings, SizeIs(2));
  for (const std::string& w : t->info.warnings) {
    EXPECT_THAT(w, HasSubstr("CUPTI enabling activity kind"));
    EXPECT_THAT(w, HasSubstr("CUPTI_ERROR_NOT_SUPPORTED"));
  }
  fake::GetState().refused_kinds.clear();
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  absl::StatusOr<Timeline> next = collector().Stop();
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_THAT(next->info.warnings, IsEmpty());
}

TEST_F(CollectorTest, StartingTwiceIsAFailedPrecondition) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  const absl::Status second = collector().Start(fake::FakeApi(), Options());
  EXPECT_EQ(second.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(collector().collecting());
  EXPECT_EQ(Locked<int>([](fake::State& s) { return s.subscribe_calls; }), 1);
  EXPECT_TRUE(collector().Stop().ok());
}

TEST_F(CollectorTest, StoppingWithoutStartingIsAFailedPrecondition) {
  EXPECT_EQ(collector().Stop().status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Locked<int>([](fake::State& s) { return s.unsubscribe_calls; }), 0);
}

TEST_F(CollectorTest, StopsRecordingAtTheRecordLimitAndSaysSo) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options(/*max_records=*/3)).ok());
  for (uint32_t i = 0; i < 5; ++i) {
    fake::Record(fake::Kernel(0, 7, 1000 + 100 * i, 1050 + 100 * i, "_Z4spinPfi", i + 1));
  }
  fake::Deliver();
  // The worker disables every kind and call as soon as it has decoded the limit.
  EXPECT_TRUE(Eventually([] {
    return Locked<bool>([](fake::State& s) {
      return s.enabled_kinds.empty() && s.enabled_runtime.empty() && s.enabled_driver.empty();
    });
  }));
  EXPECT_TRUE(collector().collecting());

  absl::StatusOr<Timeline> t = collector().Stop();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->info.record_limit_reached);
  ASSERT_THAT(t->devices, SizeIs(1));
  EXPECT_GE(t->devices[0].ops.size(), 3u);

  fake::State& s = fake::GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  for (CUpti_ActivityKind kind : s.kinds_ever_enabled) {
    EXPECT_EQ(s.disable_calls[kind], 1) << "kind " << kind << " disabled more than once";
  }
}

TEST_F(CollectorTest, DoesNotReportTheRecordLimitWhenItWasNotReached) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options(/*max_records=*/3)).ok());
  fake::Record(fake::Kernel(0, 7, 1000, 1050, "_Z4spinPfi", 1));
  fake::Record(fake::Kernel(0, 7, 2000, 2050, "_Z4spinPfi", 2));
  absl::StatusOr<Timeline> t = collector().Stop();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE(t->info.record_limit_reached);
}

TEST_F(CollectorTest, AnswersWithAnEmptyBufferWhenThePoolIsExhausted) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  const uint64_t exhausted_before = collector().counters().pool_exhausted;
  for (size_t i = 0; i < kBufferCount; ++i) ASSERT_TRUE(fake::HoldBuffer()) << "buffer " << i;

  uint8_t* buffer = reinterpret_cast<uint8_t*>(&buffer);  // not null, to see it cleared
  size_t size = 123;
  size_t max_records = 123;
  fake::GetState().buffer_requested(&buffer, &size, &max_records);
  EXPECT_EQ(buffer, nullptr);
  EXPECT_EQ(size, 0u);
  EXPECT_EQ(collector().counters().pool_exhausted, exhausted_before + 1);

  // CUPTI drops what it records meanwhile, and says so when a buffer completes.
  fake::Record(fake::Kernel(0, 7, 1000, 1050, "_Z4spinPfi", 1));
  fake::Record(fake::Kernel(0, 7, 2000, 2050, "_Z4spinPfi", 2));
  fake::Record(fake::Kernel(0, 7, 3000, 3050, "_Z4spinPfi", 3));
  absl::StatusOr<Timeline> t = collector().Stop();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(Locked<size_t>([](fake::State& s) { return s.dropped_for_lack_of_buffer; }), 3u);
  EXPECT_EQ(t->info.dropped_records, 3u);
  EXPECT_TRUE(t->devices.empty() || t->devices[0].ops.empty());

  // The held buffers came back with the flush: the pool is whole again.
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  for (size_t i = 0; i < kBufferCount; ++i) EXPECT_TRUE(fake::HoldBuffer()) << "buffer " << i;
  EXPECT_TRUE(collector().Stop().ok());
}

TEST_F(CollectorTest, ReturnsBuffersCompletedAfterStopToThePool) {
  ASSERT_TRUE(Collect([] {}).ok());
  // CUPTI may hand buffers back later (a flush by another part of the process).
  for (size_t i = 0; i < kBufferCount; ++i) ASSERT_TRUE(fake::HoldBuffer()) << "buffer " << i;
  EXPECT_FALSE(fake::HoldBuffer());
  fake::Deliver();  // completes the held buffers
  for (size_t i = 0; i < kBufferCount; ++i) EXPECT_TRUE(fake::HoldBuffer()) << "buffer " << i;
  fake::Deliver();
}

TEST_F(CollectorTest, IgnoresBuffersThatAreNotItsOwn) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  fake::PackedBuffer foreign = fake::Pack({fake::Bytes(fake::Kernel(0, 7, 1, 2, "_Z1kv", 1))});
  fake::GetState().buffer_completed(nullptr, 0, foreign.data(), foreign.valid_bytes,
                                    foreign.valid_bytes);
  fake::GetState().buffer_completed(nullptr, 0, nullptr, 0, 0);
  absl::StatusOr<Timeline> t = collector().Stop();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE(t->HasActivity());
}

TEST_F(CollectorTest, StartAndStopCanAlternate) {
  fake::GetState().dropped_to_report = 2;
  absl::StatusOr<Timeline> first =
      Collect([] { fake::Record(fake::Kernel(0, 7, 1000, 1050, "_Z5firstv", 1)); });
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<Timeline> second = Collect([] {
    fake::Record(fake::Kernel(1, 3, 5000, 5050, "_Z6secondv", 9));
    fake::Record(fake::Kernel(1, 3, 6000, 6050, "_Z6secondv", 10));
  });
  ASSERT_TRUE(second.ok()) << second.status();

  ASSERT_THAT(first->devices, SizeIs(1));
  ASSERT_THAT(first->devices[0].ops, SizeIs(1));
  EXPECT_EQ(Name(*first, first->devices[0].ops[0].name), "first()");
  EXPECT_EQ(first->info.dropped_records, 2u);

  ASSERT_THAT(second->devices, SizeIs(1));
  EXPECT_EQ(second->devices[0].device, 1);
  ASSERT_THAT(second->devices[0].ops, SizeIs(2));
  EXPECT_EQ(Name(*second, second->devices[0].ops[0].name), "second()");
  EXPECT_EQ(second->info.dropped_records, 0u) << "counts of the first session leaked";
  EXPECT_EQ(collector().counters().records, 2u);

  // Both sessions enabled and disabled everything.
  fake::State& s = fake::GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  EXPECT_EQ(s.subscribe_calls, 2);
  EXPECT_EQ(s.unsubscribe_calls, 2);
  EXPECT_THAT(s.enabled_kinds, IsEmpty());
  EXPECT_EQ(s.disable_calls[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL], 2);
}

// --- lost records: when, so that the analysis can leave that time out of idle time ----------

TEST_F(CollectorTest, ACollectionThatLostNothingHasNoLostSpansAndNoWarning) {
  absl::StatusOr<Timeline> t =
      Collect([] { fake::Record(fake::Kernel(0, 7, 1000, 1050, "_Z4spinPfi", 1)); });
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->info.dropped_records, 0u);
  EXPECT_THAT(t->info.warnings, IsEmpty());
  EXPECT_THAT(collector().last_lost_record_spans(), IsEmpty());
}

TEST_F(CollectorTest, RecordsCuptiDroppedAreLostBetweenTheirQueuesTwoCompletedBuffers) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  fake::Record(fake::Kernel(0, 7, 1000, 1050, "_Z5firstv", 1));
  const int64_t before_first = fake::FakeClockNs();
  fake::Deliver();  // a completed buffer, nothing dropped
  const int64_t after_first = fake::FakeClockNs();
  // Decoded (the worker returns the buffer to the pool first), so that both can be held.
  ASSERT_TRUE(Eventually([] { return collector().counters().records >= 1; }));
  for (size_t i = 0; i < kBufferCount; ++i) ASSERT_TRUE(fake::HoldBuffer()) << "buffer " << i;
  for (uint32_t i = 0; i < 3; ++i) {
    fake::Record(fake::Kernel(0, 7, 2000 + 100 * i, 2050 + 100 * i, "_Z4lostv", 2 + i));
  }
  // No buffer for them: CUPTI drops them and says so at the next completed buffer.
  fake::Deliver();
  const int64_t after_drop = fake::FakeClockNs();
  absl::StatusOr<Timeline> t = collector().Stop();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->info.dropped_records, 3u);

  const std::vector<LostRecordSpan> lost = collector().last_lost_record_spans();
  ASSERT_THAT(lost, SizeIs(1));
  EXPECT_EQ(lost[0].records, 3u);
  // From the completed buffer before the drop to the one that reported it.
  EXPECT_GE(lost[0].start_ns, before_first);
  EXPECT_LE(lost[0].start_ns, after_first);
  EXPECT_GE(lost[0].end_ns, after_first);
  EXPECT_LE(lost[0].end_ns, after_drop);
  EXPECT_THAT(t->info.warnings, IsEmpty()) << "every buffer came back: no other client";
}

TEST_F(CollectorTest, TheTimeAfterTheRecordLimitStoppedRecordingIsLost) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options(/*max_records=*/3)).ok());
  for (uint32_t i = 0; i < 5; ++i) {
    fake::Record(fake::Kernel(0, 7, 1000 + 100 * i, 1050 + 100 * i, "_Z4spinPfi", i + 1));
  }
  const int64_t before = fake::FakeClockNs();
  fake::Deliver();
  ASSERT_TRUE(Eventually(
      [] { return Locked<bool>([](fake::State& s) { return s.enabled_kinds.empty(); }); }));
  const int64_t stopped_recording = fake::FakeClockNs();
  // A step after the limit: without its kernels it would only stretch the window with "idle".
  ASSERT_TRUE(Eventually([] { return !HostRangeRecorder::Get().recording(); }));
  HostRangeRecorder::Get().Push(0, RangeKind::kStep, "step after the limit");
  HostRangeRecorder::Get().Pop(0);
  absl::StatusOr<Timeline> t = collector().Stop();
  const int64_t after = fake::FakeClockNs();
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_TRUE(t->info.record_limit_reached);

  const std::vector<LostRecordSpan> lost = collector().last_lost_record_spans();
  ASSERT_THAT(lost, SizeIs(1));
  EXPECT_GE(lost[0].start_ns, before);
  EXPECT_LE(lost[0].start_ns, stopped_recording);
  EXPECT_GE(lost[0].end_ns, stopped_recording);
  EXPECT_LE(lost[0].end_ns, after);
  EXPECT_EQ(lost[0].records, 0u) << "nobody counts what was never recorded";
  EXPECT_THAT(t->ranges, IsEmpty());
}

// Another CUPTI client's buffer callbacks, registered without subscribing (Kineto's way): it
// hands CUPTI buffers of its own, and keeps the ones it did not hand out (as Kineto does, it
// ignores them), so that the test can give them back.
class OtherClient {
 public:
  static void CUPTIAPI Requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    std::lock_guard<std::mutex> lock(Get().mu_);
    Get().own_.emplace_back(kBufferBytes / 8);
    *buffer = reinterpret_cast<uint8_t*>(Get().own_.back().data());
    *size = kBufferBytes;
    *max_records = 0;
  }
  static void CUPTIAPI Completed(CUcontext, uint32_t, uint8_t* buffer, size_t size, size_t) {
    std::lock_guard<std::mutex> lock(Get().mu_);
    for (const std::vector<uint64_t>& own : Get().own_) {
      if (reinterpret_cast<const uint8_t*>(own.data()) == buffer) return;
    }
    Get().foreign_.emplace_back(buffer, size);
  }
  // The buffers CUPTI completed to it that were not its own.
  static std::vector<std::pair<uint8_t*, size_t>> TakeForeign() {
    std::lock_guard<std::mutex> lock(Get().mu_);
    std::vector<std::pair<uint8_t*, size_t>> taken;
    taken.swap(Get().foreign_);
    return taken;
  }

 private:
  static OtherClient& Get() {
    static OtherClient* client = new OtherClient();
    return *client;
  }
  std::mutex mu_;
  std::deque<std::vector<uint64_t>> own_;  // a deque: buffers never move
  std::vector<std::pair<uint8_t*, size_t>> foreign_;
};

TEST_F(CollectorTest, AnotherClientTakingTheBufferCallbacksIsOneWarningAndALostSpan) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  fake::Record(fake::Kernel(0, 7, 1000, 1050, "_Z5firstv", 1));
  fake::Deliver();  // before the other client came: gpuidle's
  const int64_t before_hold = fake::FakeClockNs();
  ASSERT_TRUE(fake::HoldBuffer());  // CUPTI is filling one of gpuidle's buffers ...
  const int64_t after_hold = fake::FakeClockNs();
  // ... when the other client registers its callbacks: CUPTI completes every buffer to it now.
  ASSERT_EQ(
      fake::FakeApi().ActivityRegisterCallbacks(&OtherClient::Requested, &OtherClient::Completed),
      CUPTI_SUCCESS);
  fake::Record(fake::Kernel(0, 7, 2000, 2050, "_Z6secondv", 2));
  const uint64_t taken_before = collector().counters().buffers_taken;
  absl::StatusOr<Timeline> t = collector().Stop();
  const int64_t after_stop = fake::FakeClockNs();
  ASSERT_TRUE(t.ok()) << t.status();

  ASSERT_THAT(t->devices, SizeIs(1));
  ASSERT_THAT(t->devices[0].ops, SizeIs(1)) << "the second kernel went to the other client";
  EXPECT_EQ(Name(*t, t->devices[0].ops[0].name), "first()");
  EXPECT_EQ(collector().counters().buffers_taken, taken_before + 1);
  EXPECT_EQ(t->info.buffers_taken_by_another_client, 1u);  // the session says so on stderr
  ASSERT_THAT(t->info.warnings, SizeIs(1));
  EXPECT_THAT(t->info.warnings[0], HasSubstr("another CUPTI client took 1 activity buffer;"));
  EXPECT_THAT(t->info.warnings[0], HasSubstr("the report misses their records"));
  const std::vector<LostRecordSpan> lost = collector().last_lost_record_spans();
  ASSERT_THAT(lost, SizeIs(1));
  // From when the taken buffer was handed out to the stop.
  EXPECT_GE(lost[0].start_ns, before_hold);
  EXPECT_LE(lost[0].start_ns, after_hold);
  EXPECT_GE(lost[0].end_ns, after_hold);
  EXPECT_LE(lost[0].end_ns, after_stop);

  // The next collection takes the callbacks back (it registers at every start) and does not
  // blame the buffer lost before it on anyone.
  absl::StatusOr<Timeline> next =
      Collect([] { fake::Record(fake::Kernel(0, 7, 5000, 5050, "_Z5thirdv", 3)); });
  ASSERT_TRUE(next.ok()) << next.status();
  ASSERT_THAT(next->devices, SizeIs(1));
  EXPECT_THAT(next->devices[0].ops, SizeIs(1));
  EXPECT_THAT(next->info.warnings, IsEmpty());
  EXPECT_EQ(next->info.buffers_taken_by_another_client, 0u);
  EXPECT_THAT(collector().last_lost_record_spans(), IsEmpty());
  EXPECT_EQ(collector().counters().buffers_taken, taken_before + 1);

  // Handed back (as a client might): the pool is whole again for the other tests.
  const std::vector<std::pair<uint8_t*, size_t>> foreign = OtherClient::TakeForeign();
  ASSERT_THAT(foreign, SizeIs(1));
  for (const auto& [buffer, size] : foreign)
    fake::GetState().buffer_completed(nullptr, 0, buffer, size, 0);
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  for (size_t i = 0; i < kBufferCount; ++i) EXPECT_TRUE(fake::HoldBuffer()) << "buffer " << i;
  EXPECT_TRUE(collector().Stop().ok());
}

// The one step from a collection's options to the collector's buffers: the pool in CUPTI's 8 MiB
// buffers, smaller ones where the pool would hold fewer than 4.
TEST(CollectorOptionsFor, SplitsThePoolIntoAtLeastFourBuffers) {
  ProfilerOptions options;
  options.buffer_pool_mb = 64;
  options.max_records = 1234;
  CollectorOptions c = CollectorOptions::For(options);
  EXPECT_EQ(c.buffer_bytes, size_t{8} << 20);
  EXPECT_EQ(c.buffer_count, 8u);
  EXPECT_EQ(c.max_records, 1234);

  options.buffer_pool_mb = 1;
  c = CollectorOptions::For(options);
  EXPECT_EQ(c.buffer_bytes, size_t{256} << 10);
  EXPECT_EQ(c.buffer_count, 4u);

  options.buffer_pool_mb = 0;  // never from the option table (1 to 4096), yet never no buffer
  c = CollectorOptions::For(options);
  EXPECT_EQ(c.buffer_count, 4u);
}

}  // namespace
}  // namespace gpuidle::internal
