// Host stack samples: bounded while collecting, and at the stop kept only where they are
// evidence (inside a long stretch without a CUDA call of their thread).
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/timeline.h"
#include "session/session.h"
#include "settings/python_site.h"

namespace gpuidle::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr int64_t kGap = 1'000'000;  // launch_gap_max: 1 ms

void AddCall(Timeline* t, uint64_t thread, int64_t start, int64_t end) {
  HostCall c;
  c.start_ns = start;
  c.end_ns = end;
  c.thread = thread;
  c.category = CallCategory::kLaunch;
  t->calls.push_back(c);
}

std::vector<int64_t> Times(const Timeline& t) {
  std::vector<int64_t> times;
  for (const HostSample& s : t.samples) times.push_back(s.time_ns);
  return times;
}

TEST(HostSampleBufferTest, KeepsOnlySamplesInsideLongStretchesWithoutCudaCallsOfTheirThread) {
  Timeline t;
  AddCall(&t, 7, 0, 100);
  AddCall(&t, 7, 200, 300);              // 100 ns after the first: a short stretch
  AddCall(&t, 7, 5'000'300, 5'000'400);  // 5 ms of host work before it
  AddCall(&t, 8, 150, 10'000'000);       // another thread, in one long call
  HostSampleBuffer buffer;
  buffer.Add(150, 7, "a.py:1 f");           // between two close launches: not host work
  buffer.Add(250, 7, "a.py:1 f");           // inside a call
  buffer.Add(3'000'000, 7, "a.py:2 g");     // in the 5 ms stretch
  buffer.Add(2'000'000, 7, "a.py:2 g");     // too (out of order: sorted at the end)
  buffer.Add(9'000'000, 7, "a.py:3 h");     // after the thread's last call: open stretch
  buffer.Add(9'000'000, 8, "b.py:1 wait");  // inside thread 8's call
  buffer.Add(4'000'000, 9, "c.py:1 main");  // a thread without calls: kept
  HostSampleBuffer::MoveInto(buffer.Take(), kGap, &t);
  EXPECT_THAT(Times(t), ElementsAre(2'000'000, 3'000'000, 4'000'000, 9'000'000));
  EXPECT_EQ(t.strings.Get(t.samples[0].stack), "a.py:2 g");
  EXPECT_EQ(t.samples[0].stack, t.samples[1].stack) << "identical stacks are interned once";
  EXPECT_EQ(t.samples[2].thread, 9u);
  EXPECT_EQ(t.strings.Get(t.samples[3].stack), "a.py:3 h");
  EXPECT_THAT(t.info.warnings, IsEmpty());
}

TEST(HostSampleBufferTest, ACallInsideALongerOneOpensNoStretch) {
  Timeline t;
  AddCall(&t, 7, 0, 10'000'000);
  AddCall(&t, 7, 100, 200);  // nested in the first (a driver call inside a runtime call)
  HostSampleBuffer buffer;
  buffer.Add(5'000'000, 7, "x");
  HostSampleBuffer::MoveInto(buffer.Take(), kGap, &t);
  EXPECT_THAT(t.samples, IsEmpty());
}

TEST(HostSampleBufferTest, IsBoundedAndCountsWhatItDropped) {
  HostSampleBuffer buffer(/*max_samples=*/3, /*max_stack_bytes=*/10);
  buffer.Add(1, 1, "0123456789");
  buffer.Add(2, 1, "0123456789");  // the same stack: no more bytes
  buffer.Add(3, 1, "new");         // a new stack over the byte limit: dropped
  buffer.Add(4, 1, "0123456789");
  buffer.Add(5, 1, "0123456789");  // over the sample limit
  HostSampleBuffer::Contents c = buffer.Take();
  EXPECT_THAT(c.samples, SizeIs(3));
  EXPECT_THAT(c.stacks, SizeIs(1));
  EXPECT_EQ(c.dropped, 2u);
  EXPECT_THAT(buffer.Take().samples, IsEmpty()) << "Take empties the buffer";
  Timeline t;
  HostSampleBuffer::MoveInto(std::move(c), kGap, &t);
  EXPECT_THAT(t.samples, SizeIs(3));
  ASSERT_THAT(t.info.warnings, SizeIs(1));
  EXPECT_THAT(t.info.warnings[0], HasSubstr("2 host stack samples dropped"));
}

TEST(HostSampleBufferTest, TheDefaultLimitIsAHundredThousandSamples) {
  HostSampleBuffer buffer;
  for (int i = 0; i < 100'010; ++i) buffer.Add(i, 1, "s");
  HostSampleBuffer::Contents c = buffer.Take();
  EXPECT_EQ(c.samples.size(), 100'000u);
  EXPECT_EQ(c.dropped, 10u);
}

TEST(SessionHostSamplesTest, AreIgnoredWhileNothingCollects) {
  Session::Get().RecordHostSamples(1, {{1, "a.py:1 f"}});
  EXPECT_FALSE(gpuidle::CurrentCollection().collecting);
  EXPECT_TRUE(gpuidle::ThreadsAwayFromCuda(0).empty());
}

TEST(PythonSiteTest, PrependsOnceAndKeepsTheRest) {
  EXPECT_EQ(PrependToSearchPath("", "/site"), "/site");
  EXPECT_EQ(PrependToSearchPath("/a:/b", "/site"), "/site:/a:/b");
  EXPECT_EQ(PrependToSearchPath("/a:/site:/b", "/site"), "/site:/a:/b");
  EXPECT_EQ(PrependToSearchPath("/a::/b", "/site"), "/site:/a::/b");
}

TEST(PythonSiteTest, ReadsNo) {
  EXPECT_TRUE(SaysNo("0"));
  EXPECT_TRUE(SaysNo(" False "));
  EXPECT_TRUE(SaysNo("no"));
  EXPECT_FALSE(SaysNo(nullptr));
  EXPECT_FALSE(SaysNo("1"));
  EXPECT_FALSE(SaysNo(""));
}

TEST(PythonSiteTest, FindsNothingForALibraryWithoutThePackage) {
  EXPECT_EQ(PythonSiteDir("/nonexistent/lib/libgpuidle.so"), "");
  EXPECT_EQ(PythonSiteDir(""), "");
}

}  // namespace
}  // namespace gpuidle::internal
