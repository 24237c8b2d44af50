#include "collect/collector.h"

#include <cupti.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "analysis/analyze.h"
#include "collect/call_sites.h"
#include "collect/clock.h"
#include "collect/cuda_driver.h"
#include "collect/fake_cupti.h"
#include "collect/host_ranges.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/timeline.h"
#include "testing/temp_dir.h"

namespace gpuidle::internal {
namespace {

namespace fake = fake_cupti;

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;
using ::testing::UnorderedElementsAre;

// The collector is one per process and creates its buffer pool at the first Start, so every
// test uses the same pool shape: two buffers, large enough for any test's records.
constexpr size_t kBufferBytes = 64 << 10;
constexpr size_t kBufferCount = 2;

CollectorOptions Options(int64_t max_records = 1'000'000) {
  CollectorOptions o;
  o.buffer_bytes = kBufferBytes;
  o.buffer_count = kBufferCount;
  o.max_records = max_records;
  // The injection's way (most tests check which ids are traced); kWholeKinds has its own tests.
  o.api_records = ApiRecords::kIdsOnly;
  // No driver in CPU tests (the real queries would say so too; these say it for certain).
  o.driver.initialized = [] { return false; };
  o.driver.device_count = [] { return -1; };
  o.driver.device_name = [](int) { return std::string(); };
  o.driver.why_no_device = [] { return std::string(); };
  return o;
}

uint32_t ThisThreadId() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

// Waits (up to 10 s) for condition; true if it came true.
bool Eventually(const std::function<bool()>& condition) {
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

constexpr uint32_t kLaunch = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
constexpr uint32_t kStreamSync = CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020;

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
  EXPECT_THAT(enabled, Contains(CUPTI_ACTIVITY_KIND_MEMCPY));
  EXPECT_THAT(enabled, Contains(CUPTI_ACTIVITY_KIND_MEMSET));
  EXPECT_THAT(enabled, Contains(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION));
  EXPECT_THAT(enabled, Contains(CUPTI_ACTIVITY_KIND_CUDA_EVENT));
  EXPECT_THAT(enabled, Contains(CUPTI_ACTIVITY_KIND_DEVICE));
  // Whole-kind API tracing would record every call (cudaGetDevice included).
  EXPECT_THAT(enabled, Not(Contains(CUPTI_ACTIVITY_KIND_RUNTIME)));
  EXPECT_THAT(enabled, Not(Contains(CUPTI_ACTIVITY_KIND_DRIVER)));
}

TEST_F(CollectorTest, TracesOnlyLaunchSyncCopyAndWaitEventCalls) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  EXPECT_THAT(Locked<std::set<CUpti_CallbackId>>([](fake::State& s) { return s.enabled_runtime; }),
              UnorderedElementsAre(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                   CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
                                   CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020,
                                   CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020));
  EXPECT_THAT(Locked<std::set<CUpti_CallbackId>>([](fake::State& s) { return s.enabled_driver; }),
              UnorderedElementsAre(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
                                   CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize));
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
  EXPECT_THAT(s.runtime_ever_enabled, Not(IsEmpty()));
  EXPECT_THAT(s.enabled_runtime, IsEmpty());
  EXPECT_THAT(s.driver_ever_enabled, Not(IsEmpty()));
  EXPECT_THAT(s.enabled_driver, IsEmpty());
  EXPECT_FALSE(s.subscribed);
  EXPECT_EQ(s.flush_period_ms, 0u);
  for (CUpti_ActivityKind kind : s.kinds_ever_enabled) {
    EXPECT_EQ(s.disable_calls[kind], 1) << "kind " << kind;
  }
}

TEST(CollectorPartsTest, ParsesTheBenchmarksNamesAndNamesAnUnknownOne) {
  absl::StatusOr<uint32_t> bits = ParseCollectorParts("runtime, decode,other-kinds,detach");
  ASSERT_TRUE(bits.ok()) << bits.status();
  EXPECT_EQ(*bits, kPartRuntimeCalls | kPartDecode | kPartOtherKinds | kPartDetach);
  EXPECT_EQ(*ParseCollectorParts(""), 0u);
  absl::StatusOr<uint32_t> bad = ParseCollectorParts("runtime,kernels");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("'kernels'"));
  EXPECT_THAT(bad.status().message(), HasSubstr("call-timing, cupti-clock)"))
      << "every name listed";
}

TEST_F(CollectorTest, LeavesOutWhatTheBenchmarkAsksAndKeepsKernels) {
  CollectorOptions options = Options();
  options.leave_out = kPartRuntimeCalls | kPartDriverCalls | kPartOtherKinds | kPartSubscriber |
                      kPartSystemThreadIds | kPartFlushPeriod;
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
  absl::StatusOr<uint32_t> parts = ParseCollectorParts("sync-records,event-records");
  ASSERT_TRUE(parts.ok()) << parts.status();
  options.leave_out = *parts;
  ASSERT_TRUE(collector().Start(fake::FakeApi(), options).ok());
  {
    fake::State& s = fake::GetState();
    std::lock_guard<std::mutex> lock(s.mu);
    EXPECT_THAT(
        s.enabled_kinds,
        UnorderedElementsAre(CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                             CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2,
                             CUPTI_ACTIVITY_KIND_MEMSET));
  }
  ASSERT_TRUE(collector().Stop().ok());
}

TEST_F(CollectorTest, ReturnsBuffersUndecodedWhenDecodingIsLeftOut) {
  CollectorOptions options = Options();
  options.leave_out = kPartDecode;
  absl::StatusOr<Timeline> t =
      Collect([] { fake::Record(fake::Kernel(0, 7, 1200, 2200, "_Z4spinPfi", 1)); }, options);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(t->devices, IsEmpty());
  EXPECT_EQ(collector().counters().records, 0u);
}

// A binding's provider, as the Python package's names the Python line calling CUDA.
const char* PythonLine() { return "train.py:42 in train_step"; }
const char* NoPlace() { return nullptr; }

class CallSiteTest : public CollectorTest {
 protected:
  void TearDown() override {
    SetSiteFunction(nullptr);
    CollectorTest::TearDown();
  }
};

TEST_F(CallSiteTest, AsksNothingOfCuptiWithoutAProvider) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  EXPECT_THAT(
      Locked<std::set<CUpti_CallbackId>>([](fake::State& s) { return s.runtime_callbacks; }),
      IsEmpty());
}

TEST_F(CallSiteTest, CallsBackOnLaunchSyncAndCopyCallsOnly) {
  SetSiteFunction(&PythonLine);
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  EXPECT_THAT(
      Locked<std::set<CUpti_CallbackId>>([](fake::State& s) { return s.runtime_callbacks; }),
      UnorderedElementsAre(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                           CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
                           CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020));
}

int provider_calls = 0;
const char* CountedPythonLine() {
  ++provider_calls;
  return "train.py:42 in train_step";
}

TEST_F(CallSiteTest, SyncsAreNamedEachTimeAndLaunchesOncePerMillisecondOfEachThread) {
  // Naming every launch would walk the Python stack at every launch of a launch-bound loop.
  SetSiteFunction(&CountedPythonLine);
  provider_calls = 0;
  CollectorOptions options = Options();
  options.api_records = ApiRecords::kCallbacks;
  constexpr int kLaunches = 50;
  int64_t launching_ns = 0;
  absl::StatusOr<Timeline> t = Collect(
      [&] {
        const auto begin = std::chrono::steady_clock::now();
        for (int i = 0; i < kLaunches; ++i) EXPECT_TRUE(fake::CallRuntimeApi(kLaunch, 1 + i));
        launching_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::steady_clock::now() - begin)
                           .count();
        EXPECT_TRUE(fake::CallRuntimeApi(kStreamSync, 100));
      },
      options);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_THAT(t->calls, SizeIs(kLaunches + 1));
  const int launch_samples = provider_calls - 1;  // one for the sync
  EXPECT_GE(launch_samples, 1);
  EXPECT_LE(launch_samples, 1 + launching_ns / 1'000'000) << "at most one a millisecond";
  ASSERT_THAT(t->ranges, SizeIs(launch_samples + 1));
  // The first sample began before the first launch did and holds for at most a millisecond.
  const Range& first = t->ranges[0];
  EXPECT_EQ(first.kind, RangeKind::kPython);
  EXPECT_EQ(first.thread, ThisThreadId());
  EXPECT_LE(first.start_ns, t->calls[0].start_ns);
  EXPECT_GT(first.end_ns, t->calls[0].start_ns);
  EXPECT_LE(first.end_ns - first.start_ns, 1'000'000);
  // The sync's frame spans exactly its call.
  const HostCall& sync = t->calls.back();
  EXPECT_TRUE(std::any_of(t->ranges.begin(), t->ranges.end(), [&](const Range& r) {
    return r.start_ns == sync.start_ns && r.end_ns == sync.end_ns;
  }));
}

TEST_F(CallSiteTest, EachNamedCallGetsAPythonFrameSpanningIt) {
  SetSiteFunction(&PythonLine);
  absl::StatusOr<Timeline> t = Collect([] {
    EXPECT_TRUE(fake::CallRuntimeApi(kStreamSync, 3));
    fake::Record(fake::Api(CUPTI_ACTIVITY_KIND_RUNTIME, kStreamSync, 1500, 3400, 42, 3));
    // A site whose call record never arrived (lost, say) adds nothing.
    EXPECT_TRUE(fake::CallRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 4));
  });
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_THAT(t->ranges, SizeIs(1));
  const Range& frame = t->ranges[0];
  EXPECT_EQ(frame.kind, RangeKind::kPython);
  EXPECT_EQ(Name(*t, frame.name), "train.py:42 in train_step");
  EXPECT_EQ(frame.start_ns, 1500);
  EXPECT_EQ(frame.end_ns, 3400);
  EXPECT_EQ(frame.thread, 42u);
}

TEST_F(CallSiteTest, ACallTheProviderCannotPlaceGetsNoFrame) {
  SetSiteFunction(&NoPlace);
  absl::StatusOr<Timeline> t = Collect([] {
    EXPECT_TRUE(fake::CallRuntimeApi(kStreamSync, 3));
    fake::Record(fake::Api(CUPTI_ACTIVITY_KIND_RUNTIME, kStreamSync, 1500, 3400, 42, 3));
  });
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(t->ranges, IsEmpty());
}

TEST_F(CallSiteTest, StopsCallingBackWithTheCollection) {
  SetSiteFunction(&PythonLine);
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  ASSERT_TRUE(collector().Stop().ok());
  EXPECT_FALSE(fake::CallRuntimeApi(kStreamSync, 5));
}

// Twenty launches of a tiny kernel, each running right after its launch: the GPU then waits
// for the next launch (launch-bound), on the calling thread.
void LaunchTinyKernels() {
  for (uint32_t c = 1; c <= 20; ++c) {
    EXPECT_TRUE(fake::CallRuntimeApi(kLaunch, c));
    const auto ran = static_cast<uint64_t>(fake::FakeClockNs());
    fake::Record(fake::Kernel(0, 7, ran + 10, ran + 20, "_Z4tinyv", c));
  }
}

// The site of the report's first launch-bound offender ("" if it has none).
std::string LaunchBoundSite(const Timeline& t) {
  absl::StatusOr<Report> report = Analyze(t, AnalysisOptions());
  EXPECT_TRUE(report.ok()) << report.status();
  if (!report.ok()) return "";
  for (const Offender& o : report->offenders) {
    if (CauseOf(o.subcause) == Cause::kLaunchBound) return o.site;
  }
  return "";
}

TEST_F(CallSiteTest, ALaunchStormIsBlamedOnTheSampledLine) {
  // The whole path: sampled launch sites -> Python-frame ranges -> the report's offenders.
  SetSiteFunction(&PythonLine);
  CollectorOptions options = Options();
  options.api_records = ApiRecords::kCallbacks;
  absl::StatusOr<Timeline> t = Collect(&LaunchTinyKernels, options);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(LaunchBoundSite(*t), HasSubstr("train.py:42 in train_step"));
}

TEST(CallSiteLogTest, ALaunchSampleHoldsUntilTheThreadsNextOneForAtMostItsSpan) {
  CallSiteLog log;
  log.Reset(10);
  log.AddSample(/*thread=*/1, 100, 100, "a.py:1");
  log.AddSample(/*thread=*/2, 120, 100, "b.py:2");
  log.AddSample(/*thread=*/1, 150, 100, "a.py:3");
  Timeline t;
  log.MoveInto(&t);
  ASSERT_THAT(t.ranges, SizeIs(3));
  std::vector<std::string> got;
  for (const Range& r : t.ranges) {
    EXPECT_EQ(r.kind, RangeKind::kPython);
    got.push_back(absl::StrCat("thread ", r.thread, " ", r.start_ns, "-", r.end_ns, " ",
                               t.strings.Get(r.name)));
  }
  EXPECT_THAT(got, UnorderedElementsAre("thread 1 100-150 a.py:1", "thread 1 150-250 a.py:3",
                                        "thread 2 120-220 b.py:2"));
}

TEST(CallSiteLogTest, ASampleWithoutASiteBorrowsTheCallSiteOpenOnAnotherThread) {
  // Autograd's backward thread launches while the Python thread waits in loss.backward().
  Timeline t;
  const StringId backward = t.strings.Intern("train.py:25 in step");
  t.ranges.push_back(Range{100, 500, /*thread=*/1, backward, RangeKind::kPython});
  CallSiteLog log;
  log.Reset(10);
  log.AddSample(/*thread=*/2, 200, 100, nullptr);
  log.AddSample(/*thread=*/2, 450, 100, nullptr);  // ends with the backward call
  log.AddSample(/*thread=*/2, 600, 100, nullptr);  // nothing open elsewhere: no range
  log.AddSample(/*thread=*/1, 300, 100, nullptr);  // never its own thread's range
  // Thread 1's own marker (a forward pass) names its launches, though thread 3 has one open.
  t.ranges.push_back(
      Range{700, 900, /*thread=*/1, t.strings.Intern("train.py:23 in step"), RangeKind::kPython});
  t.ranges.push_back(
      Range{750, 800, /*thread=*/3, t.strings.Intern("other.py:9 in f"), RangeKind::kPython});
  log.AddSample(/*thread=*/1, 760, 100, nullptr);
  log.MoveInto(&t);
  std::vector<std::string> got;
  for (size_t i = 3; i < t.ranges.size(); ++i) {
    const Range& r = t.ranges[i];
    got.push_back(absl::StrCat("thread ", r.thread, " ", r.start_ns, "-", r.end_ns, " ",
                               t.strings.Get(r.name)));
  }
  EXPECT_THAT(got, UnorderedElementsAre("thread 2 200-300 train.py:25 in step",
                                        "thread 2 450-500 train.py:25 in step"));
}

TEST_F(CallSiteTest, BackwardThreadLaunchesAreBlamedOnTheLineWaitingForThem) {
  SetSiteFunction(&NoPlace);  // the launching thread holds no Python frame
  CollectorOptions options = Options();
  options.api_records = ApiRecords::kCallbacks;
  absl::StatusOr<Timeline> t = Collect(
      [] {
        // The Python thread waits in loss.backward() (gpuidle/_torch.py marks it) while
        // autograd's thread launches the backward kernels.
        HostRangeRecorder::Get().Push(0, RangeKind::kPython, "train.py:25 in step");
        std::thread(&LaunchTinyKernels).join();
        HostRangeRecorder::Get().Pop(0);
      },
      options);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(LaunchBoundSite(*t), HasSubstr("train.py:25 in step"));
}

TEST(CallSiteLogTest, KeepsAtMostItsLimitAndCountsTheRest) {
  CallSiteLog log;
  log.Reset(2);
  for (uint64_t c = 1; c <= 5; ++c) log.Add(c, "x.py:1");
  EXPECT_EQ(log.overflowed(), 3u);
  Timeline t;
  for (uint64_t c = 1; c <= 5; ++c) {
    HostCall call;
    call.correlation_id = c;
    call.start_ns = static_cast<int64_t>(c) * 10;
    call.end_ns = call.start_ns + 5;
    t.calls.push_back(call);
  }
  log.MoveInto(&t);
  ASSERT_THAT(t.ranges, SizeIs(2));
  EXPECT_EQ(t.ranges[0].start_ns, 10);
  EXPECT_EQ(t.ranges[1].start_ns, 20);
  EXPECT_EQ(t.ranges[0].name, t.ranges[1].name) << "one string per site";
}

TEST_F(CollectorTest, RegistersItsBufferCallbacksAtEveryStart) {
  // Between two collections another tool (torch.profiler) may have registered its own.
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  ASSERT_TRUE(collector().Stop().ok());
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  EXPECT_EQ(Locked<int>([](fake::State& s) { return s.register_callbacks_calls; }), 2);
}

TEST_F(CollectorTest, WholeKindModeSwitchesOffEveryUnneededCallbackIdUntilItStops) {
  // A collection started after CUDA was initialised records API calls only this way (H200).
  CollectorOptions options = Options();
  options.api_records = ApiRecords::kWholeKinds;
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
  EXPECT_EQ(CollectorOptions().api_records, ApiRecords::kCallbacks);
}

TEST(ApiRecordsTest, ParsesTheModes) {
  EXPECT_EQ(*ParseApiRecords("callbacks"), ApiRecords::kCallbacks);
  EXPECT_EQ(*ParseApiRecords("driver-callbacks"), ApiRecords::kDriverCallbacks);
  EXPECT_EQ(*ParseApiRecords("auto"), ApiRecords::kAuto);
  EXPECT_FALSE(ParseApiRecords("attach").ok());  // tried on the H200: recorded nothing
  EXPECT_EQ(*ParseApiRecords("ids"), ApiRecords::kIdsOnly);
  EXPECT_EQ(*ParseApiRecords("kinds"), ApiRecords::kWholeKinds);
  EXPECT_FALSE(ParseApiRecords("all").ok());
}

// ApiRecords::kCallbacks: CUPTI calls back at entry and exit of the needed calls; gpuidle times
// them on the calling thread.
CollectorOptions TimedCallOptions() {
  CollectorOptions o = Options();
  o.api_records = ApiRecords::kCallbacks;
  return o;
}

constexpr uint32_t kLaunchEx = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx;

TEST_F(CollectorTest, TimedCallsAreCalledBackForTheNeededIdsOnlyAndRecordNoApiActivity) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), TimedCallOptions()).ok());
  fake::State& s = fake::GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  EXPECT_THAT(s.runtime_callbacks,
              UnorderedElementsAre(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                   CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
                                   CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020,
                                   CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020));
  EXPECT_THAT(s.driver_callbacks,
              UnorderedElementsAre(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
                                   CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize));
  EXPECT_THAT(s.enabled_kinds, Not(Contains(CUPTI_ACTIVITY_KIND_RUNTIME)));
  EXPECT_THAT(s.enabled_kinds, Not(Contains(CUPTI_ACTIVITY_KIND_DRIVER)));
  EXPECT_THAT(s.runtime_ever_enabled, IsEmpty());
  EXPECT_THAT(s.driver_ever_enabled, IsEmpty());
  EXPECT_THAT(s.enabled_kinds, Contains(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
}

TEST_F(CollectorTest, ATimedCallSpansItsEntryAndExitOnItsThread) {
  const int64_t before = fake::FakeClockNs();
  int64_t entered = 0;
  absl::StatusOr<Timeline> t = Collect(
      [&] {
        EXPECT_TRUE(fake::CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, kStreamSync, 9, [&] {
          entered = fake::FakeClockNs();
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }));
        fake::Record(fake::Kernel(0, 7, 1200, 2200, "_Z4spinPfi", 9));
      },
      TimedCallOptions());
  const int64_t after = fake::FakeClockNs();
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_THAT(t->calls, SizeIs(1));
  const HostCall& call = t->calls[0];
  EXPECT_EQ(Name(*t, call.name), "cudaStreamSynchronize");
  EXPECT_EQ(call.category, CallCategory::kSync);
  EXPECT_EQ(call.correlation_id, 9u);
  EXPECT_EQ(call.thread, ThisThreadId());
  EXPECT_GE(call.start_ns, before);
  EXPECT_LE(call.start_ns, entered);
  EXPECT_GE(call.end_ns - call.start_ns, 2'000'000);
  EXPECT_LE(call.end_ns, after);
  EXPECT_EQ(collector().counters().records, 2u) << "the call and the kernel";
}

TEST_F(CollectorTest, ADriverCallInsideATimedRuntimeCallIsTheSameCall) {
  absl::StatusOr<Timeline> t = Collect(
      [] {
        // cudaLaunchKernel calls cuLaunchKernelEx; CUPTI calls back for both.
        EXPECT_TRUE(fake::CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, kLaunch, 21, [] {
          EXPECT_TRUE(fake::CallApi(CUPTI_CB_DOMAIN_DRIVER_API, kLaunchEx, 22, [] {}));
        }));
        // NCCL launches through the driver itself.
        EXPECT_TRUE(fake::CallApi(CUPTI_CB_DOMAIN_DRIVER_API, kLaunchEx, 23, [] {}));
      },
      TimedCallOptions());
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_THAT(t->calls, SizeIs(2));
  EXPECT_EQ(Name(*t, t->calls[0].name), "cudaLaunchKernel");
  EXPECT_EQ(t->calls[0].correlation_id, 21u);
  EXPECT_EQ(Name(*t, t->calls[1].name), "cuLaunchKernelEx");
  EXPECT_EQ(t->calls[1].correlation_id, 23u);
  EXPECT_EQ(t->calls[1].category, CallCategory::kLaunch);
}

TEST_F(CollectorTest, DriverCallbackModeTimesEveryCallAtTheDriverAndEnablesNoRuntimeCallback) {
  SetSiteFunction(&PythonLine);
  CollectorOptions options = TimedCallOptions();
  options.api_records = ApiRecords::kDriverCallbacks;
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
  CollectorOptions options = TimedCallOptions();
  options.leave_out = kPartNestedCallSkip;  // GPUIDLE_BENCH_LEAVE_OUT=nested-call-skip
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
  CollectorOptions options = TimedCallOptions();
  options.leave_out = *ParseCollectorParts("call-timing");
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
  CollectorOptions options = TimedCallOptions();
  options.leave_out = *ParseCollectorParts("cupti-clock");
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

TEST_F(CollectorTest, TimedCallsCountTowardsTheRecordLimit) {
  CollectorOptions options = TimedCallOptions();
  options.max_records = 5;
  absl::StatusOr<Timeline> t = Collect(
      [] {
        for (uint32_t c = 1; c <= 20; ++c) fake::CallRuntimeApi(kLaunch, c);
      },
      options);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->info.record_limit_reached);
  EXPECT_GE(t->calls.size(), 5u);
}

TEST_F(CollectorTest, TimedCallsOfManyThreadsAllArriveAcrossManyChunks) {
  constexpr uint32_t kThreads = 4;
  constexpr uint32_t kCallsEach = 5000;  // more than one chunk each
  std::vector<uint32_t> thread_ids(kThreads);
  absl::StatusOr<Timeline> t = Collect(
      [&] {
        std::vector<std::thread> threads;
        for (uint32_t i = 0; i < kThreads; ++i) {
          threads.emplace_back([&thread_ids, i] {
            thread_ids[i] = ThisThreadId();
            for (uint32_t c = 0; c < kCallsEach; ++c) {
              fake::CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, kLaunch, 1 + i * kCallsEach + c, [] {});
            }
          });
        }
        for (std::thread& thread : threads) thread.join();
      },
      TimedCallOptions());
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_THAT(t->calls, SizeIs(kThreads * kCallsEach));
  std::set<uint64_t> correlations;
  std::map<uint32_t, int> per_thread;
  for (const HostCall& c : t->calls) {
    correlations.insert(c.correlation_id);
    ++per_thread[static_cast<uint32_t>(c.thread)];
  }
  EXPECT_THAT(correlations, SizeIs(kThreads * kCallsEach));
  for (uint32_t id : thread_ids) EXPECT_EQ(per_thread[id], static_cast<int>(kCallsEach));
  EXPECT_EQ(t->info.dropped_records, 0u);
}

TEST_F(CollectorTest, KnowsWhichThreadsAreAwayFromCudaForTheHostSampler) {
  const uint64_t me = static_cast<uint64_t>(syscall(SYS_gettid));
  std::vector<uint64_t> away;
  ThreadsAwayFromCuda(fake::FakeClockNs(), 0, &away);
  EXPECT_THAT(away, IsEmpty()) << "nothing collects";
  ASSERT_TRUE(collector().Start(fake::FakeApi(), TimedCallOptions()).ok());
  ThreadsAwayFromCuda(fake::FakeClockNs(), 0, &away);
  EXPECT_THAT(away, Not(Contains(me))) << "no CUDA call of this collection yet";
  EXPECT_TRUE(fake::CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, kStreamSync, 3, [&] {
    ThreadsAwayFromCuda(fake::FakeClockNs(), 0, &away);
    EXPECT_THAT(away, Not(Contains(me))) << "inside a call";
  }));
  ThreadsAwayFromCuda(fake::FakeClockNs(), 0, &away);
  EXPECT_THAT(away, Contains(me));
  ThreadsAwayFromCuda(fake::FakeClockNs(), int64_t{3600} * 1'000'000'000, &away);
  EXPECT_THAT(away, Not(Contains(me))) << "not away for an hour";
  // Another thread's calls make it a candidate; this thread stays one.
  std::thread other([] { fake::CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, kLaunch, 4, [] {}); });
  other.join();  // it has ended: its slot is free again
  ThreadsAwayFromCuda(fake::FakeClockNs(), 0, &away);
  EXPECT_THAT(away, SizeIs(1));
  ASSERT_TRUE(collector().Stop().ok());
  ThreadsAwayFromCuda(fake::FakeClockNs(), 0, &away);
  EXPECT_THAT(away, IsEmpty()) << "stopped";
}

TEST_F(CollectorTest, TimedCallsStopWithTheCollection) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), TimedCallOptions()).ok());
  ASSERT_TRUE(collector().Stop().ok());
  EXPECT_FALSE(fake::CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, kLaunch, 5, [] {}));
}

TEST_F(CollectorTest, ACallThatBeganInTheLastCollectionIsNotTimedInTheNext) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), TimedCallOptions()).ok());
  absl::StatusOr<Timeline> first;
  // The sync's entry comes during the first collection, its exit during the second.
  EXPECT_TRUE(fake::CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, kStreamSync, 6, [&] {
    first = collector().Stop();
    ASSERT_TRUE(collector().Start(fake::FakeApi(), TimedCallOptions()).ok());
  }));
  fake::CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, kLaunch, 7, [] {});
  absl::StatusOr<Timeline> second = collector().Stop();
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_THAT(first->calls, IsEmpty());  // it had not ended yet
  ASSERT_THAT(second->calls, SizeIs(1));
  EXPECT_EQ(second->calls[0].correlation_id, 7u);
}

TEST_F(CallSiteTest, ATimedCallIsNamedLikeARecordedOne) {
  SetSiteFunction(&PythonLine);
  absl::StatusOr<Timeline> t = Collect(
      [] { EXPECT_TRUE(fake::CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, kStreamSync, 3, [] {})); },
      TimedCallOptions());
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_THAT(t->calls, SizeIs(1));
  ASSERT_THAT(t->ranges, SizeIs(1));
  EXPECT_EQ(Name(*t, t->ranges[0].name), "train.py:42 in train_step");
  EXPECT_EQ(t->ranges[0].start_ns, t->calls[0].start_ns);
  EXPECT_EQ(t->ranges[0].end_ns, t->calls[0].end_ns);
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

TEST_F(CollectorTest, AutoModeTracesSingleIdsBeforeCudaIsInitialisedAndKindsAfter) {
  CollectorOptions options = Options();
  options.api_records = ApiRecords::kAuto;
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

TEST(CudaDriverTest, WithoutALoadedDriverCudaIsNotInitialised) {
  EXPECT_FALSE(CudaDriverInitialized());
  EXPECT_EQ(CudaDriverDeviceCount(), -1);
}

TEST(CudaDriverTest, ALateStartListsEveryVisibleDeviceSoThatUnusedOnesShow) {
  // Eight GPUs, work on one, no DEVICE records (the collection began after CUDA was ready).
  Timeline t;
  t.devices.push_back(DeviceTimeline{3, "", {}});
  CudaDriverQueries driver;
  driver.device_count = [] { return 8; };
  driver.device_name = [](int) { return std::string("NVIDIA H200"); };
  CompleteDevicesFromDriver(&t, driver);
  EXPECT_THAT(t.info.visible_devices, ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  EXPECT_THAT(t.info.visible_device_names, SizeIs(8));
  EXPECT_EQ(t.devices[0].name, "NVIDIA H200");
}

TEST(CudaDriverTest, KeepsWhatCuptiListed) {
  Timeline t;
  t.info.visible_devices = {0};
  t.info.visible_device_names = {"NVIDIA H100"};
  t.devices.push_back(DeviceTimeline{0, "", {}});
  CudaDriverQueries driver;
  driver.device_count = [] { return 8; };  // not asked: CUPTI listed the devices
  driver.device_name = [](int) { return std::string("from the driver"); };
  CompleteDevicesFromDriver(&t, driver);
  EXPECT_THAT(t.info.visible_devices, ElementsAre(0));
  EXPECT_EQ(t.devices[0].name, "NVIDIA H100");
}

TEST(CudaDriverTest, AMachineWithoutTheDriversDeviceNodeHasNoNvidiaGpu) {
  gpuidle::testing::TempDir dev;
  const absl::Status none = CheckForNvidiaGpu(dev.path());
  EXPECT_EQ(none.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(none.message(),
            absl::StrCat("no NVIDIA GPU on this machine (", dev.path(), "/nvidiactl is missing)"));
  dev.Write("nvidiactl", "");
  EXPECT_TRUE(CheckForNvidiaGpu(dev.path()).ok());

  gpuidle::testing::TempDir wsl;  // WSL 2: the GPU is reached through /dev/dxg
  wsl.Write("dxg", "");
  EXPECT_TRUE(CheckForNvidiaGpu(wsl.path()).ok());
}

TEST(CudaDriverTest, WithoutADriverTheReasonNamesTheDriversLibrary) {
  if (CheckForNvidiaGpu().ok()) GTEST_SKIP() << "this machine may have a driver";
  const std::string why = CudaDriverWhyNoDevice();
  if (why.empty()) GTEST_SKIP() << "libcuda.so.1 loads here although there is no GPU";
  EXPECT_THAT(why, HasSubstr("no NVIDIA driver"));
  EXPECT_THAT(why, HasSubstr("libcuda.so.1"));
  EXPECT_LE(why.size(), 200u) << why;
  EXPECT_EQ(CudaDriverDeviceCount(), -1) << "the driver must not stay loaded";
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

TEST(DeviceNamesTest, WithoutALoadedDriverThereIsNoName) {
  // This test process never loads libcuda (and gpuidle never loads it itself).
  EXPECT_EQ(CudaDriverDeviceName(0), "");
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
  Collector::BufferRequested(&buffer, &size, &max_records);
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
  Collector::BufferCompleted(nullptr, 0, foreign.data(), foreign.valid_bytes, foreign.valid_bytes);
  Collector::BufferCompleted(nullptr, 0, nullptr, 0, 0);
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

// Once CUPTI has traced, it keeps intercepting CUDA calls until detached (CuptiAfterStop).
CollectorOptions DetachableOptions() {
  CollectorOptions o = Options();
  o.driver.device_count = &fake::DeviceGetCount;  // reaches CUPTI's driver callbacks
  return o;
}

TEST_F(CollectorTest, DetachesCuptiAtTheExitOfItsOwnDriverCallAndCanStartAgain) {
  ASSERT_TRUE(collector().Start(fake::FakeApi(), DetachableOptions()).ok());
  fake::Record(fake::Kernel(0, 7, 1000, 1050, "_Z5firstv", 1));
  const uint64_t detaches = collector().counters().detaches;
  absl::StatusOr<Timeline> first = collector().Stop(CuptiAfterStop::kDetach);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_THAT(first->devices, SizeIs(1));
  EXPECT_THAT(first->devices[0].ops, SizeIs(1)) << "the records came before the detach";
  EXPECT_EQ(collector().counters().detaches, detaches + 1);
  {
    fake::State& s = fake::GetState();
    std::lock_guard<std::mutex> lock(s.mu);
    EXPECT_EQ(s.finalize_calls, 1);
    EXPECT_FALSE(s.subscribed);
    ASSERT_GE(s.calls.size(), 2u);
    // The detach's own subscriber goes first, then CUPTI.
    EXPECT_EQ(s.calls[s.calls.size() - 2], "Unsubscribe");
    EXPECT_EQ(s.calls.back(), "Finalize");
  }

  // CUPTI forgot the buffer callbacks: the next collection registers them again.
  absl::StatusOr<Timeline> second = Collect(
      [] { fake::Record(fake::Kernel(0, 7, 5000, 5050, "_Z6secondv", 2)); }, DetachableOptions());
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_THAT(second->devices, SizeIs(1));
  ASSERT_THAT(second->devices[0].ops, SizeIs(1));
  EXPECT_EQ(Name(*second, second->devices[0].ops[0].name), "second()");
}

TEST_F(CollectorTest, StaysAttachedWhenNoCallbackComesOrNoDetachWasAsked) {
  // No driver: the trigger call never reaches CUPTI, so nothing is finalized and the detach's
  // subscriber is released again.
  ASSERT_TRUE(Collect([] {}, Options()).ok());  // the default stop stays attached
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  ASSERT_TRUE(collector().Stop(CuptiAfterStop::kDetach).ok());
  fake::State& s = fake::GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  EXPECT_EQ(s.finalize_calls, 0);
  EXPECT_FALSE(s.subscribed);
  EXPECT_EQ(s.subscribe_calls, 3);  // two collections, one try at detaching
  EXPECT_EQ(s.unsubscribe_calls, 3);
}

TEST_F(CollectorTest, AFailedFinalizeIsNotCountedAsADetach) {
  fake::GetState().finalize_result = CUPTI_ERROR_UNKNOWN;
  ASSERT_TRUE(collector().Start(fake::FakeApi(), DetachableOptions()).ok());
  const uint64_t detaches = collector().counters().detaches;
  ASSERT_TRUE(collector().Stop(CuptiAfterStop::kDetach).ok());
  EXPECT_EQ(Locked<int>([](fake::State& s) { return s.finalize_calls; }), 1);
  EXPECT_EQ(collector().counters().detaches, detaches);
}

TEST_F(CollectorTest, StaysAttachedWhileCuptiHoldsABufferOrTheBenchmarkLeavesItOut) {
  fake::GetState().keeps_held_buffers = true;
  ASSERT_TRUE(collector().Start(fake::FakeApi(), DetachableOptions()).ok());
  ASSERT_TRUE(fake::HoldBuffer());
  ASSERT_TRUE(collector().Stop(CuptiAfterStop::kDetach).ok());
  EXPECT_EQ(Locked<int>([](fake::State& s) { return s.finalize_calls; }), 0)
      << "a buffer CUPTI still held would be lost to the pool";
  // Given back, as CUPTI would at its next flush.
  fake::GetState().keeps_held_buffers = false;
  fake::Deliver();

  CollectorOptions without = DetachableOptions();
  without.leave_out = kPartDetach;
  ASSERT_TRUE(collector().Start(fake::FakeApi(), without).ok());
  ASSERT_TRUE(collector().Stop(CuptiAfterStop::kDetach).ok());
  EXPECT_EQ(Locked<int>([](fake::State& s) { return s.finalize_calls; }), 0);
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
  EXPECT_THAT(collector().last_lost_record_spans(), IsEmpty());
  EXPECT_EQ(collector().counters().buffers_taken, taken_before + 1);

  // Handed back (as a client might): the pool is whole again for the other tests.
  const std::vector<std::pair<uint8_t*, size_t>> foreign = OtherClient::TakeForeign();
  ASSERT_THAT(foreign, SizeIs(1));
  for (const auto& [buffer, size] : foreign)
    Collector::BufferCompleted(nullptr, 0, buffer, size, 0);
  ASSERT_TRUE(collector().Start(fake::FakeApi(), Options()).ok());
  for (size_t i = 0; i < kBufferCount; ++i) EXPECT_TRUE(fake::HoldBuffer()) << "buffer " << i;
  EXPECT_TRUE(collector().Stop().ok());
}

}  // namespace
}  // namespace gpuidle::internal
