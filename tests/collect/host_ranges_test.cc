#include "collect/host_ranges.h"

#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/string_view.h"
#include "collect/nvtx_capture.h"
#include "gmock/gmock.h"
#include "gpuidle/profiler.h"
#include "gtest/gtest.h"
#include "model/timeline.h"

namespace gpuidle::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using ::testing::StartsWith;

// A closed range as the tests compare it.
struct Seen {
  std::string name;
  RangeKind kind;
  uint64_t thread;
  int64_t start_ns;
  int64_t end_ns;
};

// Every test records from the start (and drains ranges left by others); none leaves the
// process-wide recorder recording.
class HostRangesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Drain();
    recorder().SetRecording(true);
  }
  void TearDown() override {
    recorder().SetRecording(false);
    Drain();
  }

  static HostRangeRecorder& recorder() { return HostRangeRecorder::Get(); }

  static void Drain() {
    Timeline scratch;
    recorder().MoveInto(&scratch);
  }

  // The closed ranges, sorted by start, with their names.
  static std::vector<Seen> Closed() {
    Timeline t;
    recorder().MoveInto(&t);
    t.Finalize();
    std::vector<Seen> seen;
    for (const Range& r : t.ranges) {
      seen.push_back(
          Seen{std::string(t.strings.Get(r.name)), r.kind, r.thread, r.start_ns, r.end_ns});
    }
    return seen;
  }

  static std::vector<std::string> Names(const std::vector<Seen>& seen) {
    std::vector<std::string> names;
    for (const Seen& s : seen) names.push_back(s.name);
    return names;
  }

  // Makes the clock advance, so that start < end for a range around it.
  static void Tick() { std::this_thread::sleep_for(std::chrono::microseconds(50)); }
};

// --- the recorder ----------------------------------------------------------------------------

TEST_F(HostRangesTest, KeepsAtMostItsLimitAndCountsTheRestAsLost) {
  recorder().SetLimit(2);
  for (int i = 0; i < 3; ++i) {
    recorder().Push(0, RangeKind::kPython, "x.py:1 in f");
    recorder().Pop(0);
  }
  recorder().Start(7, RangeKind::kUser, "started past the limit");
  recorder().End(7);
  Timeline t;
  recorder().MoveInto(&t);
  recorder().SetLimit(HostRangeRecorder::kDefaultLimit);
  EXPECT_EQ(t.ranges.size(), 2u);
  EXPECT_EQ(t.info.dropped_records, 2u);
  // Counted once: the next recording starts from zero.
  Timeline next;
  recorder().MoveInto(&next);
  EXPECT_EQ(next.info.dropped_records, 0u);
}

TEST_F(HostRangesTest, PushAndPopGiveARangeOnTheCallingThread) {
  recorder().Push(0, RangeKind::kData, "load");
  Tick();
  recorder().Pop(0);
  const std::vector<Seen> seen = Closed();
  ASSERT_THAT(seen, SizeIs(1));
  EXPECT_EQ(seen[0].name, "load");
  EXPECT_EQ(seen[0].kind, RangeKind::kData);
  EXPECT_EQ(seen[0].thread, CurrentThreadId());
  EXPECT_LT(seen[0].start_ns, seen[0].end_ns);
}

TEST_F(HostRangesTest, NestedPushesCloseInnermostFirst) {
  recorder().Push(0, RangeKind::kStep, "outer");
  Tick();
  recorder().Push(0, RangeKind::kUser, "inner");
  Tick();
  recorder().Pop(0);
  Tick();
  recorder().Pop(0);
  const std::vector<Seen> seen = Closed();
  ASSERT_THAT(Names(seen), ElementsAre("outer", "inner"));
  EXPECT_LT(seen[0].start_ns, seen[1].start_ns);
  EXPECT_LT(seen[1].end_ns, seen[0].end_ns) << "inner must close before outer";
}

TEST_F(HostRangesTest, MoveIntoHandsOverEachRangeOnce) {
  recorder().Push(0, RangeKind::kUser, "once");
  recorder().Pop(0);
  EXPECT_THAT(Closed(), SizeIs(1));
  EXPECT_THAT(Closed(), IsEmpty());
}

TEST_F(HostRangesTest, MoveIntoAppendsToTheTimelinesRanges) {
  Timeline t;
  Range existing;
  existing.name = t.strings.Intern("from a trace");
  t.ranges.push_back(existing);
  recorder().Push(0, RangeKind::kUser, "live");
  recorder().Pop(0);
  recorder().MoveInto(&t);
  ASSERT_THAT(t.ranges, SizeIs(2));
  EXPECT_EQ(t.strings.Get(t.ranges[0].name), "from a trace");
  EXPECT_EQ(t.strings.Get(t.ranges[1].name), "live");
}

TEST_F(HostRangesTest, RangesPushedWhileNotRecordingAreNotReportedButStillPair) {
  recorder().SetRecording(false);
  recorder().Push(0, RangeKind::kUser, "before");
  recorder().SetRecording(true);
  recorder().Push(0, RangeKind::kUser, "during");
  recorder().Pop(0);  // closes "during"
  recorder().Pop(0);  // closes "before": not reported
  recorder().Push(0, RangeKind::kUser, "after");
  recorder().Pop(0);  // must close "after", not a leftover
  EXPECT_THAT(Names(Closed()), ElementsAre("during", "after"));
}

TEST_F(HostRangesTest, RangesOpenWhenRecordingStopsAreDropped) {
  recorder().Push(0, RangeKind::kUser, "cut");
  recorder().SetRecording(false);
  recorder().Pop(0);
  recorder().SetRecording(true);
  EXPECT_THAT(Closed(), IsEmpty());
}

TEST_F(HostRangesTest, RangesOpenWhenRecordingStopsAreDroppedEvenIfRecordingRestarts) {
  // A range of the previous collection must not appear in the next one, starting before it.
  recorder().Push(0, RangeKind::kStep, "previous collection");
  const uint64_t id = 1234567;
  recorder().Start(id, RangeKind::kUser, "previous start/end");
  recorder().SetRecording(false);
  recorder().SetRecording(true);
  recorder().Pop(0);
  recorder().End(id);
  EXPECT_THAT(Closed(), IsEmpty());
}

TEST_F(HostRangesTest, NothingIsRecordedWhileOff) {
  recorder().SetRecording(false);
  recorder().Push(0, RangeKind::kUser, "off");
  recorder().Pop(0);
  recorder().Start(99, RangeKind::kUser, "off too");
  recorder().End(99);
  recorder().SetRecording(true);
  EXPECT_THAT(Closed(), IsEmpty());
}

TEST_F(HostRangesTest, AnUnbalancedPopIsHarmless) {
  recorder().Pop(0);
  recorder().Pop(42);
  recorder().Push(0, RangeKind::kUser, "fine");
  recorder().Pop(0);
  recorder().Pop(0);
  EXPECT_THAT(Names(Closed()), ElementsAre("fine"));
}

TEST_F(HostRangesTest, StacksOfDifferentDomainsDoNotMix) {
  recorder().Push(1, RangeKind::kUser, "domain 1");
  Tick();
  recorder().Push(2, RangeKind::kUser, "domain 2");
  Tick();
  recorder().Pop(1);  // closes "domain 1", although "domain 2" is on top
  Tick();
  recorder().Pop(2);
  const std::vector<Seen> seen = Closed();
  ASSERT_THAT(Names(seen), ElementsAre("domain 1", "domain 2"));
  EXPECT_LT(seen[0].end_ns, seen[1].end_ns);
}

TEST_F(HostRangesTest, EachThreadHasItsOwnStack) {
  recorder().Push(0, RangeKind::kUser, "main");
  uint64_t other_thread = 0;
  std::thread([&] {
    other_thread = CurrentThreadId();
    recorder().Push(0, RangeKind::kUser, "other");
    recorder().Pop(0);
    recorder().Pop(0);  // nothing more on this thread: "main" stays open
  }).join();
  recorder().Pop(0);
  const std::vector<Seen> seen = Closed();
  ASSERT_THAT(Names(seen), ElementsAre("main", "other"));
  EXPECT_EQ(seen[0].thread, CurrentThreadId());
  EXPECT_EQ(seen[1].thread, other_thread);
  EXPECT_NE(other_thread, CurrentThreadId());
}

TEST_F(HostRangesTest, StartEndRangesMayEndOnAnotherThread) {
  recorder().Start(7, RangeKind::kData, "async");
  Tick();
  std::thread([] { recorder().End(7); }).join();
  recorder().End(7);  // already ended: ignored
  recorder().End(8);  // never started: ignored
  const std::vector<Seen> seen = Closed();
  ASSERT_THAT(seen, SizeIs(1));
  EXPECT_EQ(seen[0].name, "async");
  EXPECT_EQ(seen[0].kind, RangeKind::kData);
  EXPECT_EQ(seen[0].thread, CurrentThreadId()) << "a range belongs to the thread that started it";
  EXPECT_LT(seen[0].start_ns, seen[0].end_ns);
}

// --- NVTX calls of this binary reach the recorder (static injection) ---------------------------

class NvtxCaptureTest : public HostRangesTest {
 protected:
  void SetUp() override {
    HostRangesTest::SetUp();
    // NVTX initialises once per module, at the module's first NVTX call, and looks for the
    // injection then. gpuidle's markers set up the static injection before their first call, so
    // a marker comes first here; the test's own NVTX calls share this binary's NVTX instance.
    PushMarker(MarkerKind::kUser, "warm-up");
    PopMarker();
    ASSERT_GE(NvtxModulesAttached(), 1)
        << "NVTX's static injection did not reach collect/nvtx_capture.cc";
    Drain();
  }
};

TEST_F(NvtxCaptureTest, PushAndPopReachTheRecorder) {
  nvtxRangePushA("forward");
  Tick();
  nvtxRangePop();
  const std::vector<Seen> seen = Closed();
  ASSERT_THAT(seen, SizeIs(1));
  EXPECT_EQ(seen[0].name, "forward");
  EXPECT_EQ(seen[0].kind, RangeKind::kUser);
  EXPECT_EQ(seen[0].thread, CurrentThreadId());
  EXPECT_LT(seen[0].start_ns, seen[0].end_ns);
}

TEST_F(NvtxCaptureTest, ClassifiesRangesByNameOutsideGpuidlesDomain) {
  nvtxRangePushA("ProfilerStep#3");
  nvtxRangePushA("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
  nvtxRangePop();
  nvtxRangePop();
  const std::vector<Seen> seen = Closed();
  ASSERT_THAT(seen, SizeIs(2));
  EXPECT_EQ(seen[0].name, "ProfilerStep#3");
  EXPECT_EQ(seen[0].kind, RangeKind::kStep);
  EXPECT_EQ(seen[1].kind, RangeKind::kData);
}

TEST_F(NvtxCaptureTest, WideAndAttributeMessagesAreNamed) {
  nvtxRangePushW(L"wide");
  nvtxRangePop();
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "with attributes";
  nvtxRangePushEx(&a);
  nvtxRangePop();
  EXPECT_THAT(Names(Closed()), ElementsAre("wide", "with attributes"));
}

TEST_F(NvtxCaptureTest, StartEndRangesMayEndOnAnotherThread) {
  nvtxRangeId_t id = 0;
  uint64_t starter = 0;
  std::thread([&] {
    starter = CurrentThreadId();
    id = nvtxRangeStartA("request");
  }).join();
  Tick();
  std::thread([&] { nvtxRangeEnd(id); }).join();
  const std::vector<Seen> seen = Closed();
  ASSERT_THAT(seen, SizeIs(1));
  EXPECT_EQ(seen[0].name, "request");
  EXPECT_EQ(seen[0].thread, starter);
  EXPECT_LT(seen[0].start_ns, seen[0].end_ns);
}

TEST_F(NvtxCaptureTest, StartEndRangeIdsAreUnique) {
  const nvtxRangeId_t a = nvtxRangeStartA("a");
  const nvtxRangeId_t b = nvtxRangeStartA("b");
  EXPECT_NE(a, b);
  nvtxRangeEnd(b);
  nvtxRangeEnd(a);
  EXPECT_THAT(Names(Closed()), ElementsAre("a", "b"));
}

nvtxEventAttributes_t Attributes(const char* message, uint32_t category = 0) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.category = category;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = message;
  return a;
}

TEST_F(NvtxCaptureTest, DomainStacksDoNotMixWithTheGlobalStack) {
  const nvtxDomainHandle_t nccl = nvtxDomainCreateA("NCCL");
  nvtxRangePushA("global");
  Tick();
  const nvtxEventAttributes_t a = Attributes("ncclAllReduce");
  nvtxDomainRangePushEx(nccl, &a);
  Tick();
  nvtxRangePop();  // closes "global", not the NCCL range on top
  Tick();
  nvtxDomainRangePop(nccl);
  const std::vector<Seen> seen = Closed();
  ASSERT_THAT(Names(seen), ElementsAre("global", "ncclAllReduce"));
  EXPECT_LT(seen[0].end_ns, seen[1].end_ns);
  EXPECT_EQ(seen[1].kind, RangeKind::kUser);
}

TEST_F(NvtxCaptureTest, CategoriesOfOtherDomainsDoNotMakeSteps) {
  const nvtxDomainHandle_t nccl = nvtxDomainCreateA("NCCL");
  const nvtxEventAttributes_t a = Attributes("not a step", kMarkerCategoryStep);
  nvtxDomainRangePushEx(nccl, &a);
  nvtxDomainRangePop(nccl);
  const std::vector<Seen> seen = Closed();
  ASSERT_THAT(seen, SizeIs(1));
  EXPECT_EQ(seen[0].kind, RangeKind::kUser);
}

TEST_F(NvtxCaptureTest, RegisteredStringsAreNamed) {
  const nvtxDomainHandle_t domain = nvtxDomainCreateA("mylib");
  const nvtxStringHandle_t s = nvtxDomainRegisterStringA(domain, "registered name");
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = s;
  nvtxDomainRangePushEx(domain, &a);
  nvtxDomainRangePop(domain);
  const nvtxRangeId_t id = nvtxDomainRangeStartEx(domain, &a);
  nvtxDomainRangeEnd(domain, id);
  EXPECT_THAT(Names(Closed()), ElementsAre("registered name", "registered name"));
}

TEST_F(NvtxCaptureTest, AnUnbalancedNvtxPopIsHarmless) {
  nvtxRangePop();
  const nvtxDomainHandle_t nccl = nvtxDomainCreateA("NCCL");
  nvtxDomainRangePop(nccl);
  nvtxRangePushA("fine");
  nvtxRangePop();
  EXPECT_THAT(Names(Closed()), ElementsAre("fine"));
}

TEST_F(NvtxCaptureTest, NvtxRangesPushedWhileNotRecordingAreNotReportedButStillPair) {
  recorder().SetRecording(false);
  nvtxRangePushA("before");
  recorder().SetRecording(true);
  nvtxRangePushA("during");
  nvtxRangePop();
  nvtxRangePop();
  nvtxRangePushA("after");
  nvtxRangePop();
  EXPECT_THAT(Names(Closed()), ElementsAre("during", "after"));
}

TEST_F(NvtxCaptureTest, GpuidleMarkersGetTheirKindFromTheirCategory) {
  PushMarker(MarkerKind::kStep);
  PushMarker(MarkerKind::kData);
  PopMarker();
  PushMarker(MarkerKind::kUser, "custom");
  PopMarker();
  // The category decides, not the name.
  PushMarker(MarkerKind::kData, "ProfilerStep#9");
  PopMarker();
  PopMarker();
  const std::vector<Seen> seen = Closed();
  ASSERT_THAT(seen, SizeIs(4));
  EXPECT_THAT(seen[0].name, StartsWith("gpuidle.step#"));
  EXPECT_EQ(seen[0].kind, RangeKind::kStep);
  EXPECT_EQ(seen[1].name, "gpuidle.data");
  EXPECT_EQ(seen[1].kind, RangeKind::kData);
  EXPECT_EQ(seen[2].name, "custom");
  EXPECT_EQ(seen[2].kind, RangeKind::kUser);
  EXPECT_EQ(seen[3].name, "ProfilerStep#9");
  EXPECT_EQ(seen[3].kind, RangeKind::kData);
  for (const Seen& s : seen) EXPECT_EQ(s.thread, CurrentThreadId());
}

TEST_F(NvtxCaptureTest, ScopedMarkersCloseAtTheEndOfTheirScope) {
  {
    StepMarker step;
    {
      DataRange data;
      Tick();
    }
    UserRange user("train");
    Tick();
  }
  const std::vector<Seen> seen = Closed();
  ASSERT_THAT(seen, SizeIs(3));
  EXPECT_EQ(seen[0].kind, RangeKind::kStep);
  EXPECT_EQ(seen[1].kind, RangeKind::kData);
  EXPECT_EQ(seen[2].kind, RangeKind::kUser);
  EXPECT_EQ(seen[2].name, "train");
  EXPECT_LE(seen[1].end_ns, seen[2].start_ns);
  EXPECT_GE(seen[0].end_ns, seen[2].end_ns);
}

TEST_F(NvtxCaptureTest, StepNumbersCountUp) {
  PushMarker(MarkerKind::kStep);
  PopMarker();
  PushMarker(MarkerKind::kStep);
  PopMarker();
  const std::vector<Seen> seen = Closed();
  ASSERT_THAT(seen, SizeIs(2));
  EXPECT_NE(seen[0].name, seen[1].name);
}

TEST_F(NvtxCaptureTest, MarkersAndNvtxRangesKeepSeparateStacks) {
  nvtxRangePushA("user nvtx");
  PushMarker(MarkerKind::kData);
  nvtxRangePop();  // the NVTX range, not gpuidle's marker
  Tick();
  PopMarker();
  const std::vector<Seen> seen = Closed();
  ASSERT_THAT(Names(seen), ElementsAre("user nvtx", "gpuidle.data"));
  EXPECT_LT(seen[0].end_ns, seen[1].end_ns);
  EXPECT_EQ(seen[1].kind, RangeKind::kData);
}

// --- serving requests: start/end markers of gpuidle's domain -------------------------------------

const Seen* Named(const std::vector<Seen>& seen, absl::string_view name) {
  for (const Seen& s : seen) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

TEST_F(NvtxCaptureTest, ARequestAndItsRunAreRangesNamedWithItsId) {
  {
    RequestRange request("7");
    Tick();
    request.Running();
    Tick();
  }
  const std::vector<Seen> seen = Closed();
  ASSERT_THAT(seen, SizeIs(2));
  const Seen* request = Named(seen, "gpuidle.request:7");
  const Seen* run = Named(seen, "gpuidle.request_run:7");
  ASSERT_NE(request, nullptr);
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(request->kind, RangeKind::kRequest);
  EXPECT_EQ(run->kind, RangeKind::kRequestRun);
  // Arrival, then taken up, then answered: the run ends with the request.
  EXPECT_LT(request->start_ns, run->start_ns);
  EXPECT_LT(run->start_ns, run->end_ns);
  EXPECT_LE(run->end_ns, request->end_ns);
  EXPECT_EQ(request->thread, CurrentThreadId());
}

TEST_F(NvtxCaptureTest, ARequestWithoutAnIdHasTheBareNamesAndNoRunUnlessRunning) {
  { RequestRange waited_only; }
  {
    RequestRange served;
    served.Running();
  }
  EXPECT_THAT(Names(Closed()),
              ElementsAre("gpuidle.request", "gpuidle.request", "gpuidle.request_run"));
}

TEST_F(NvtxCaptureTest, ARequestMayRunAndEndOnOtherThreadsThanItStartedOn) {
  uint64_t handle = 0;
  uint64_t starter = 0;
  std::thread([&] {
    starter = CurrentThreadId();
    handle = StartRequest("r1");
  }).join();
  ASSERT_NE(handle, 0u);
  Tick();
  RequestRunning(handle);
  Tick();
  std::thread([&] { EndRequest(handle); }).join();
  const std::vector<Seen> seen = Closed();
  ASSERT_THAT(Names(seen), ElementsAre("gpuidle.request:r1", "gpuidle.request_run:r1"));
  EXPECT_EQ(seen[0].kind, RangeKind::kRequest);
  EXPECT_EQ(seen[0].thread, starter);  // the thread it arrived on
  EXPECT_EQ(seen[1].kind, RangeKind::kRequestRun);
  EXPECT_EQ(seen[1].thread, CurrentThreadId());  // the thread that took it up
  EXPECT_LT(seen[0].start_ns, seen[1].start_ns);
  EXPECT_LE(seen[1].end_ns, seen[0].end_ns);
}

TEST_F(NvtxCaptureTest, RunningTwiceKeepsTheFirstRun) {
  const uint64_t handle = StartRequest("x");
  RequestRunning(handle);
  Tick();
  const int64_t after_first = TimelineClockNs();
  RequestRunning(handle);
  EndRequest(handle);
  const std::vector<Seen> seen = Closed();
  ASSERT_THAT(Names(seen), ElementsAre("gpuidle.request:x", "gpuidle.request_run:x"));
  EXPECT_LT(seen[1].start_ns, after_first);
}

TEST_F(NvtxCaptureTest, UnknownAndEndedRequestHandlesAreIgnored) {
  EndRequest(0);
  RequestRunning(0);
  EndRequest(uint64_t{1} << 60);
  RequestRunning(uint64_t{1} << 60);
  const uint64_t handle = StartRequest("once");
  EndRequest(handle);
  EndRequest(handle);
  RequestRunning(handle);  // after its end: no run of its own
  EXPECT_THAT(Names(Closed()), ElementsAre("gpuidle.request:once"));
}

TEST_F(NvtxCaptureTest, RequestsInterleavedOnOneThreadEndIndependently) {
  const uint64_t a = StartRequest("a");
  const uint64_t b = StartRequest("b");
  EXPECT_NE(a, b);
  EndRequest(a);  // not the innermost: start/end ranges do not nest
  Tick();
  EndRequest(b);
  const std::vector<Seen> seen = Closed();
  ASSERT_THAT(Names(seen), ElementsAre("gpuidle.request:a", "gpuidle.request:b"));
  EXPECT_LT(seen[0].end_ns, seen[1].end_ns);
}

TEST_F(NvtxCaptureTest, RequestsStartedWhileNotRecordingGetNoHandleAndAreNotRecorded) {
  recorder().SetRecording(false);
  const uint64_t handle = StartRequest("before");
  EXPECT_EQ(handle, 0u) << "nobody would see it: no bookkeeping";
  {
    RequestRange scoped("scoped");
    recorder().SetRecording(true);
    scoped.Running();  // recording now, but the request was never started
  }
  RequestRunning(handle);
  EndRequest(handle);
  EXPECT_THAT(Closed(), IsEmpty());
}

}  // namespace
}  // namespace gpuidle::internal
