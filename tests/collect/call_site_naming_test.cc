// Naming the call sites of traced calls through a binding's provider, and the call-site log.
#include "collect/call_site_naming.h"

#include <cupti.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "analysis/analyze.h"
#include "collect/call_sites.h"
#include "collect/collector_fixture.h"
#include "collect/fake_cupti.h"
#include "collect/host_ranges.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/timeline.h"

namespace gpuidle::internal {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using ::testing::UnorderedElementsAre;

int provider_calls = 0;
const char* CountedPythonLine() {
  ++provider_calls;
  return "train.py:42 in train_step";
}

TEST_F(CallSiteTest, NamesNothingWithoutAProvider) {
  absl::StatusOr<Timeline> t = Collect([] { EXPECT_TRUE(fake::CallRuntimeApi(kStreamSync, 3)); });
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(t->calls, SizeIs(1));  // timed, but nobody to ask where it came from
  EXPECT_THAT(t->ranges, IsEmpty());
}

TEST_F(CallSiteTest, AsksTheProviderAtLaunchSyncAndCopyCallsOnly) {
  SetSiteFunction(&CountedPythonLine);
  provider_calls = 0;
  absl::StatusOr<Timeline> t = Collect([] {
    EXPECT_TRUE(fake::CallRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, 1));
    EXPECT_EQ(provider_calls, 0) << "a wait-event is timed, never named";
    EXPECT_TRUE(fake::CallRuntimeApi(kStreamSync, 2));
    EXPECT_TRUE(fake::CallRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 3));
    EXPECT_TRUE(fake::CallRuntimeApi(kLaunch, 4));
  });
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(provider_calls, 3);
}

TEST_F(CallSiteTest, EachNamedCallGetsAPythonFrameSpanningIt) {
  SetSiteFunction(&PythonLine);
  absl::StatusOr<Timeline> t = Collect([] { EXPECT_TRUE(fake::CallRuntimeApi(kStreamSync, 3)); });
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_THAT(t->calls, SizeIs(1));
  ASSERT_THAT(t->ranges, SizeIs(1));
  const Range& frame = t->ranges[0];
  EXPECT_EQ(frame.kind, RangeKind::kPython);
  EXPECT_EQ(Name(*t, frame.name), "train.py:42 in train_step");
  EXPECT_EQ(frame.start_ns, t->calls[0].start_ns);
  EXPECT_EQ(frame.end_ns, t->calls[0].end_ns);
  EXPECT_EQ(frame.thread, t->calls[0].thread);
}

TEST_F(CallSiteTest, SyncsAreNamedEachTimeAndLaunchesOncePerMillisecondOfEachThread) {
  // Naming every launch would walk the Python stack at every launch of a launch-bound loop.
  SetSiteFunction(&CountedPythonLine);
  provider_calls = 0;
  CollectorOptions options = Options();
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
  // As recorded: the fake CUPTI's clock is not the tracer's, whose modelled cost would take
  // these few microseconds of gaps out (the sites are what is tested here).
  AnalysisOptions options;
  options.as_recorded = true;
  absl::StatusOr<Report> report = Analyze(t, options);
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

TEST_F(CallSiteTest, ATimedCallIsNamedLikeARecordedOne) {
  SetSiteFunction(&PythonLine);
  absl::StatusOr<Timeline> t = Collect(
      [] { EXPECT_TRUE(fake::CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, kStreamSync, 3, [] {})); },
      Options());
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_THAT(t->calls, SizeIs(1));
  ASSERT_THAT(t->ranges, SizeIs(1));
  EXPECT_EQ(Name(*t, t->ranges[0].name), "train.py:42 in train_step");
  EXPECT_EQ(t->ranges[0].start_ns, t->calls[0].start_ns);
  EXPECT_EQ(t->ranges[0].end_ns, t->calls[0].end_ns);
}

}  // namespace
}  // namespace gpuidle::internal
