// The untraced view: a live capture's tracer time taken out of the host calls, ranges, samples,
// lost-record spans and device ops (times in microseconds, every expected value by hand).
//
// Most tests use the model below: a launch that lasted more than 3 us spent the excess (at most
// 10 us) in the tracer, and every timed call paid 2 us before it (no more than the thread's time
// since its previous call). An 8 us launch thus costs 2 + 5 = 7 us.
#include "analysis/untraced_view.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "analysis/analyze.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/analysis_helpers.h"
#include "testing/timeline_builder.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::kUs;
using ::gpuidle::testing::MustAnalyze;
using ::gpuidle::testing::OnlyDevice;
using ::gpuidle::testing::TimelineBuilder;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::Pair;

using Span = std::pair<int64_t, int64_t>;

constexpr TracerCostModel kModel{
    .launch_floor_ns = 3 * kUs, .launch_excess_max_ns = 10 * kUs, .per_call_ns = 2 * kUs};

// [start, end) in microseconds, as nanoseconds; fractions of a microsecond allowed.
Span Us(double start_us, double end_us) {
  return {std::llround(start_us * 1000.0), std::llround(end_us * 1000.0)};
}

std::vector<Span> OpSpans(const Timeline& t, size_t device_index = 0) {
  std::vector<Span> out;
  for (const DeviceOp& op : t.devices.at(device_index).ops)
    out.emplace_back(op.start_ns, op.end_ns);
  return out;
}

std::vector<Span> CallSpans(const Timeline& t) {
  std::vector<Span> out;
  for (const HostCall& c : t.calls) out.emplace_back(c.start_ns, c.end_ns);
  return out;
}

std::vector<Span> RangeSpans(const Timeline& t) {
  std::vector<Span> out;
  for (const Range& r : t.ranges) out.emplace_back(r.start_ns, r.end_ns);
  return out;
}

std::vector<int64_t> SampleTimes(const Timeline& t) {
  std::vector<int64_t> out;
  for (const HostSample& s : t.samples) out.push_back(s.time_ns);
  return out;
}

// The idle time between consecutive ops of one stream (ops sorted by start).
std::vector<int64_t> Gaps(const std::vector<Span>& ops) {
  std::vector<int64_t> gaps;
  for (size_t i = 1; i < ops.size(); ++i) gaps.push_back(ops[i].first - ops[i - 1].second);
  return gaps;
}

int64_t Sum(const std::vector<int64_t>& v) {
  int64_t s = 0;
  for (int64_t x : v) s += x;
  return s;
}

// One thread launches n 1 us kernels: launch k lasts 8 us from 10k, its kernel starts 1 us after
// the call returned.
Timeline LaunchBoundChain(int n) {
  TimelineBuilder b;
  for (int k = 0; k < n; ++k) b.Launch(1, 10 * k, 10 * k + 8).Kernel(10 * k + 9, 10 * k + 10);
  Timeline t = b.Build();
  t.info.tracer_cost = kModel;
  return t;
}

// A timeline with a bit of everything, to check that nothing moves.
Timeline Everything() {
  Timeline t = TimelineBuilder()
                   .Step(1, 0, 100, "ProfilerStep#1")
                   .Launch(1, 0, 8)
                   .Kernel(9, 10)
                   .Sync(1, 10, 50)
                   .OtherCall(1, 50, 51)
                   .Sample(1, 60, "a.py:1 f")
                   .Launch(1, 60, 80)
                   .Kernel(81, 82)
                   .Build();
  t.info.lost_record_spans = {{20, 30, 1}};
  return t;
}

// Everything a timeline's times say, for comparing before and after.
struct Times {
  std::vector<Span> ops, calls, ranges, lost;
  std::vector<int64_t> samples;
  bool operator==(const Times&) const = default;
};
Times TimesOf(const Timeline& t) {
  Times x{OpSpans(t), CallSpans(t), RangeSpans(t), {}, SampleTimes(t)};
  for (const LostRecordSpan& s : t.info.lost_record_spans)
    x.lost.emplace_back(s.start_ns, s.end_ns);
  return x;
}

TEST(UntracedView, NothingMovesWithoutATracerCost) {
  Timeline t = Everything();
  ASSERT_FALSE(t.info.tracer_cost.has_value());
  const Times before = TimesOf(t);
  const TracerShift shift = RemoveTracerTime(&t);
  EXPECT_EQ(TimesOf(t), before);
  EXPECT_EQ(shift.host_ns(), 0);
  EXPECT_EQ(shift.TakenOutNs(0, 0, 100 * kUs), 0);
  EXPECT_EQ(shift.TakenOutNs(0, -1000 * kUs, 1000 * kUs), 0);
}

TEST(UntracedView, NothingMovesWithAZeroCost) {
  Timeline t = Everything();
  t.info.tracer_cost = TracerCostModel{0, 0, 0};
  const Times before = TimesOf(t);
  const TracerShift shift = RemoveTracerTime(&t);
  EXPECT_EQ(TimesOf(t), before);
  EXPECT_EQ(shift.host_ns(), 0);
  EXPECT_EQ(shift.TakenOutNs(0, -1000 * kUs, 1000 * kUs), 0);
}

TEST(UntracedView, ALaunchBoundChainLosesEachLaunchsCostFromItsGaps) {
  Timeline t = LaunchBoundChain(5);
  const std::vector<Span> recorded = OpSpans(t);
  // Call k: 2 us before it, 5 us inside it: the host's shift after call k is 7(k+1) us, and
  // kernel k (launched by it, 9 us after the previous kernel ended) moves as far.
  const TracerShift shift = RemoveTracerTime(&t);
  EXPECT_EQ(shift.host_ns(), 5 * 7 * kUs);
  // Kernel k at [10k+9, 10k+10] - 7(k+1) = [3k+2, 3k+3].
  EXPECT_THAT(OpSpans(t), ElementsAre(Us(2, 3), Us(5, 6), Us(8, 9), Us(11, 12), Us(14, 15)));
  // Call k at [10k, 10k+8] - (7k+2 at its start, 7k+7 at its end) = [3k-2, 3k+1]: as long as the
  // launch floor.
  EXPECT_THAT(CallSpans(t), ElementsAre(Us(-2, 1), Us(1, 4), Us(4, 7), Us(7, 10), Us(10, 13)));

  // Each 9 us gap shrinks by the 7 us of the launch that delayed its next kernel.
  const std::vector<int64_t> before = Gaps(recorded), after = Gaps(OpSpans(t));
  EXPECT_THAT(before, ElementsAre(9 * kUs, 9 * kUs, 9 * kUs, 9 * kUs));
  EXPECT_THAT(after, ElementsAre(2 * kUs, 2 * kUs, 2 * kUs, 2 * kUs));
  EXPECT_EQ(Sum(before), 36 * kUs);
  EXPECT_EQ(Sum(after), 8 * kUs);

  // From the first kernel to the last (corrected times): 35 - 7 us taken out, the total idle
  // time the gaps lost.
  EXPECT_EQ(shift.TakenOutNs(0, 2 * kUs, 14 * kUs), Sum(before) - Sum(after));
  EXPECT_EQ(shift.TakenOutNs(0, 2 * kUs, 14 * kUs), 28 * kUs);
  // Before the first op nothing moved yet; each op's start is where its shift begins.
  EXPECT_EQ(shift.TakenOutNs(0, 0, 14 * kUs), 35 * kUs);
  EXPECT_EQ(shift.TakenOutNs(0, 2 * kUs, 4999), 0);
  EXPECT_EQ(shift.TakenOutNs(0, 2 * kUs, 5 * kUs), 7 * kUs);
  EXPECT_EQ(shift.TakenOutNs(0, 5 * kUs, 11 * kUs), 14 * kUs);
  // Never negative; a device without work gives 0.
  EXPECT_EQ(shift.TakenOutNs(0, 14 * kUs, 2 * kUs), 0);
  EXPECT_EQ(shift.TakenOutNs(3, 0, 14 * kUs), 0);
}

TEST(UntracedView, GapsShrinkToZeroButNeverBelow) {
  // As the chain above, but 7 us kernels: the gaps are 3 us, less than the 7 us each launch
  // cost. Kernel k moves by min(7(k+1), shift of kernel k-1 + 3) = 7 + 3k us.
  TimelineBuilder b;
  for (int k = 0; k < 4; ++k) b.Launch(1, 10 * k, 10 * k + 8).Kernel(10 * k + 9, 10 * k + 16);
  Timeline t = b.Build();
  t.info.tracer_cost = kModel;
  EXPECT_THAT(Gaps(OpSpans(t)), ElementsAre(3 * kUs, 3 * kUs, 3 * kUs));
  const TracerShift shift = RemoveTracerTime(&t);
  // [10k+9, 10k+16] - (7+3k) = [7k+2, 7k+9]: back to back.
  EXPECT_THAT(OpSpans(t), ElementsAre(Us(2, 9), Us(9, 16), Us(16, 23), Us(23, 30)));
  EXPECT_THAT(Gaps(OpSpans(t)), ElementsAre(0, 0, 0));
  // The host's cost is all there (28 us), only 9 us of it reached the gaps.
  EXPECT_EQ(shift.host_ns(), 28 * kUs);
  EXPECT_EQ(shift.TakenOutNs(0, 2 * kUs, 23 * kUs), 9 * kUs);
}

TEST(UntracedView, EachTimedCallCostsItsTimeBeforeItAndLaunchesTheirExcess) {
  Timeline t = TimelineBuilder()
                   .Launch(1, 0, 8)             // 2 before (fresh thread), 5 inside
                   .OtherCall(1, 8, 8.5)        // untimed: free
                   .Launch(1, 8.5, 16.5)        // 0.5 before (since the last timed call), 5
                   .WaitEvent(1, 20, 21, 7, 8)  // 2 before, nothing inside
                   .Launch(1, 30, 32)           // 2 before; 2 us: under the floor
                   .Launch(1, 40, 60)           // 2 before; 17 us over the floor: 10 inside
                   .Launch(2, 70, 78)           // another thread: the same clock, 2 + 5
                   .Build();
  t.info.tracer_cost = kModel;
  ASSERT_EQ(t.calls[1].category, CallCategory::kOther);
  ASSERT_EQ(t.calls[3].category, CallCategory::kWaitEvent);
  const TracerShift shift = RemoveTracerTime(&t);
  // Shifts at each call's start and end: (2, 7), (7, 7), (7.5, 12.5), (14.5, 14.5),
  // (16.5, 16.5), (18.5, 28.5), (30.5, 35.5).
  EXPECT_THAT(CallSpans(t), ElementsAre(Us(-2, 1), Us(1, 1.5), Us(1, 4), Us(5.5, 6.5),
                                        Us(13.5, 15.5), Us(21.5, 31.5), Us(39.5, 42.5)));
  EXPECT_EQ(shift.host_ns(), 35'500);
}

TEST(UntracedView, GpuBoundOpsKeepTheirPlacesRelativeToEachOther) {
  // Fast launches (2 us, under the floor: 2 us each, before them) queue 100 us kernels back to
  // back: the GPU never waited for the host.
  TimelineBuilder b;
  for (int k = 0; k < 5; ++k) b.Launch(1, 10 * k, 10 * k + 2).Kernel(100 * k + 5, 100 * k + 105);
  Timeline t = b.Build();
  t.info.tracer_cost = kModel;
  const TracerShift shift = RemoveTracerTime(&t);
  EXPECT_EQ(shift.host_ns(), 10 * kUs);
  // The first kernel moves by its launch's 2 us; every later one by no more than the one before
  // it (no gap between them), although its launch moved 2(k+1) us.
  EXPECT_THAT(OpSpans(t),
              ElementsAre(Us(3, 103), Us(103, 203), Us(203, 303), Us(303, 403), Us(403, 503)));
  EXPECT_THAT(Gaps(OpSpans(t)), ElementsAre(0, 0, 0, 0));
  EXPECT_EQ(shift.TakenOutNs(0, 3 * kUs, 503 * kUs), 0);
  EXPECT_EQ(shift.TakenOutNs(0, 103 * kUs, 403 * kUs), 0);
}

// Launch A lasts 8 us and its kernel runs [9, 1009]; the host then synchronizes (returning 1 us
// after the kernel ended) and launches B and C, 1 us kernels.
TEST(UntracedView, ASyncThatWaitedForTheGpuReAlignsTheHostWithIt) {
  Timeline t = TimelineBuilder()
                   .Launch(1, 0, 8)
                   .Kernel(9, 1009)
                   .Sync(1, 10, 1010)
                   .Launch(1, 1012, 1020)
                   .Kernel(1021, 1022)
                   .Launch(1, 1022, 1030)
                   .Kernel(1031, 1032)
                   .Build();
  t.info.tracer_cost = kModel;
  ASSERT_EQ(t.calls[1].category, CallCategory::kSync);
  const std::vector<Span> recorded = OpSpans(t);
  const TracerShift shift = RemoveTracerTime(&t);
  // A moves by its launch's 7 us. The sync costs 2 us before it (shift 9), but it returned when
  // A ended: after it the host's shift is A's, 7 us. B's launch then costs 7 (shift 14), C's 7
  // more (shift 21); without the re-alignment B would move 16 us and C 23 us.
  EXPECT_THAT(CallSpans(t), ElementsAre(Us(-2, 1), Us(1, 1003), Us(1003, 1006), Us(1006, 1009)));
  EXPECT_THAT(OpSpans(t), ElementsAre(Us(2, 1002), Us(1007, 1008), Us(1010, 1011)));
  // The sync still returns 1 us after A's end.
  EXPECT_EQ(t.calls[1].end_ns - t.devices[0].ops[0].end_ns, 1 * kUs);
  // Each gap after the sync shrinks by the cost of the one launch that delayed it (7 us), not by
  // the sync's 2 us.
  EXPECT_THAT(Gaps(recorded), ElementsAre(12 * kUs, 9 * kUs));
  EXPECT_THAT(Gaps(OpSpans(t)), ElementsAre(5 * kUs, 2 * kUs));
  EXPECT_EQ(shift.TakenOutNs(0, 2 * kUs, 1007 * kUs), 7 * kUs);
  EXPECT_EQ(shift.TakenOutNs(0, 2 * kUs, 1010 * kUs), 14 * kUs);
  EXPECT_EQ(shift.host_ns(), 23 * kUs);  // every call's cost, re-aligned or not
}

TEST(UntracedView, ASyncReAlignsTheHostWithAKernelThatDidNotMove) {
  // As above, with an unattributed kernel right before A: A cannot move (its device was busy up
  // to its start), so after the sync the host's shift is 0.
  Timeline t = TimelineBuilder()
                   .Kernel(0, 9, "unattributed")
                   .Launch(1, 0, 8)
                   .Kernel(9, 1009)
                   .Sync(1, 10, 1010)
                   .Launch(1, 1012, 1020)
                   .Kernel(1021, 1022)
                   .Build();
  t.info.tracer_cost = kModel;
  const TracerShift shift = RemoveTracerTime(&t);
  // The sync begins 9 us earlier and ends where it did; B's launch costs 7 us.
  EXPECT_THAT(CallSpans(t), ElementsAre(Us(-2, 1), Us(1, 1010), Us(1010, 1013)));
  EXPECT_THAT(OpSpans(t), ElementsAre(Us(0, 9), Us(9, 1009), Us(1014, 1015)));
  EXPECT_EQ(shift.TakenOutNs(0, 0, 1009 * kUs), 0);
  EXPECT_EQ(shift.TakenOutNs(0, 0, 1014 * kUs), 7 * kUs);
}

TEST(UntracedView, ASyncThatDidNotWaitForTheGpuDoesNotReAlign) {
  // The sync returns long before A ends (another stream, say): the host keeps its shift.
  Timeline t = TimelineBuilder()
                   .Launch(1, 0, 8)
                   .Kernel(9, 1009)
                   .Sync(1, 10, 11)
                   .Launch(1, 1012, 1020)
                   .Kernel(1021, 1022)
                   .Build();
  t.info.tracer_cost = kModel;
  RemoveTracerTime(&t);
  // Shifts: 7 after A's launch, 9 after the sync, 16 after B's launch.
  EXPECT_THAT(CallSpans(t), ElementsAre(Us(-2, 1), Us(1, 2), Us(1001, 1004)));
  EXPECT_THAT(OpSpans(t), ElementsAre(Us(2, 1002), Us(1005, 1006)));
  EXPECT_THAT(Gaps(OpSpans(t)), ElementsAre(3 * kUs));  // 12 - 9
}

TEST(UntracedView, ABlockingCopyReAlignsTheHostLikeASync) {
  // cudaMemcpy waits for A, then copies [1009, 1011]; it returns 1 us after the copy.
  Timeline t = TimelineBuilder()
                   .Launch(1, 0, 8)
                   .Kernel(9, 1009)
                   .CopyCall(1, 10, 1012, "cudaMemcpy")
                   .Copy(1009, 1011, CopyKind::kDtoH)
                   .Launch(1, 1013, 1021)
                   .Kernel(1022, 1023)
                   .Build();
  t.info.tracer_cost = kModel;
  ASSERT_EQ(t.calls[1].category, CallCategory::kCopy);
  RemoveTracerTime(&t);
  // The copy's call has shift 9, but its op cannot start before A ends: 7, as A. The host
  // re-aligns to 7 when the copy returns; B's launch then costs 1 us before it (the thread's
  // time since the copy) and 5 inside: shift 13.
  EXPECT_THAT(CallSpans(t), ElementsAre(Us(-2, 1), Us(1, 1005), Us(1005, 1008)));
  EXPECT_THAT(OpSpans(t), ElementsAre(Us(2, 1002), Us(1002, 1004), Us(1009, 1010)));
}

TEST(UntracedView, ASyncReAlignsWithTheDeviceWhoseWorkEndedLast) {
  // Device 0 runs A [9, 1009], device 1 runs B [19, 500]; the sync [20, 1010] waited for both,
  // A last.
  Timeline t = TimelineBuilder()
                   .Launch(1, 0, 8)
                   .Kernel(9, 1009)
                   .Device(1)
                   .Launch(1, 10, 18)
                   .Kernel(19, 500)
                   .Sync(1, 20, 1010, "cudaDeviceSynchronize")
                   .Device(0)
                   .Launch(1, 1012, 1020)
                   .Kernel(1021, 1022)
                   .Build();
  t.info.tracer_cost = kModel;
  const TracerShift shift = RemoveTracerTime(&t);
  // Shifts: A 7, B 14, the sync 16 before it, re-aligned to A's 7 after it; C 14.
  EXPECT_THAT(OpSpans(t, 0), ElementsAre(Us(2, 1002), Us(1007, 1008)));
  EXPECT_THAT(OpSpans(t, 1), ElementsAre(Us(5, 486)));
  EXPECT_EQ(shift.TakenOutNs(0, 2 * kUs, 1007 * kUs), 7 * kUs);
  EXPECT_EQ(shift.TakenOutNs(1, 0, 486 * kUs), 14 * kUs);
}

TEST(UntracedView, ASyncAfterTheGpuWentIdleDoesNotReAlign) {
  // A ended before the sync began: the sync did not wait for it.
  Timeline t = TimelineBuilder()
                   .Launch(1, 0, 8)
                   .Kernel(9, 10)
                   .Sync(1, 20, 30)
                   .Launch(1, 40, 48)
                   .Kernel(49, 50)
                   .Build();
  t.info.tracer_cost = kModel;
  RemoveTracerTime(&t);
  // Shifts: 7 after A's launch, 9 after the sync, 16 after B's launch (14 had the sync
  // re-aligned the host with A).
  EXPECT_THAT(CallSpans(t), ElementsAre(Us(-2, 1), Us(11, 21), Us(29, 32)));
  EXPECT_THAT(OpSpans(t), ElementsAre(Us(2, 3), Us(33, 34)));
}

TEST(UntracedView, AnOpNeverMovesBeforeTheEndOfItsDevicesLatestWork) {
  // B, on another stream, started when A ended (it waited for A's event): its launch moved
  // 14 us, but it moves only as far as A, 7.
  Timeline t = TimelineBuilder()
                   .Launch(1, 0, 8)
                   .Stream(7)
                   .Kernel(9, 1009)
                   .Launch(1, 10, 18)
                   .Stream(8)
                   .Kernel(1009, 1010)
                   .Build();
  t.info.tracer_cost = kModel;
  const TracerShift shift = RemoveTracerTime(&t);
  EXPECT_THAT(OpSpans(t), ElementsAre(Us(2, 1002), Us(1002, 1003)));
  EXPECT_EQ(shift.TakenOutNs(0, 2 * kUs, 1002 * kUs), 0);
}

TEST(UntracedView, AnOpNeverMovesBeforeThePreviousOpOfItsStream) {
  // F (stream 8, launched second: shift 14) runs [20, 500] and is the device's latest work; X
  // (stream 7, launched first: shift 7) runs [30, 40] beside it, and Z (stream 7, launched
  // third: shift 21) right after X. Z moves as far as X, 7 us, not as far as F.
  Timeline t = TimelineBuilder()
                   .Launch(1, 0, 8)
                   .Stream(7)
                   .Kernel(30, 40, "X")
                   .Launch(1, 10, 18)
                   .Stream(8)
                   .Kernel(20, 500, "F")
                   .Launch(1, 20, 28)
                   .Stream(7)
                   .Kernel(40, 41, "Z")
                   .Build();
  t.info.tracer_cost = kModel;
  RemoveTracerTime(&t);
  EXPECT_THAT(OpSpans(t), ElementsAre(Us(6, 486), Us(23, 33), Us(33, 34)));
  EXPECT_EQ(t.strings.Get(t.devices[0].ops[2].name), "Z");
}

TEST(UntracedView, AnOpMovesByItsLaunchEvenIfItRanBeforeAnEarlierCallEnded) {
  // Thread 2 launches K on device 1 while thread 1 is in a sync: K runs before the sync ends,
  // yet moves by its own launch's shift (7 after the sync re-aligned the host, 2 + 5 more).
  Timeline t = TimelineBuilder()
                   .Launch(1, 0, 8)
                   .Kernel(9, 1009)
                   .Sync(1, 10, 1010)
                   .Device(1)
                   .Launch(2, 20, 28)
                   .Kernel(29, 30)
                   .Build();
  t.info.tracer_cost = kModel;
  const TracerShift shift = RemoveTracerTime(&t);
  EXPECT_THAT(CallSpans(t), ElementsAre(Us(-2, 1), Us(1, 1003), Us(11, 14)));
  EXPECT_THAT(OpSpans(t, 0), ElementsAre(Us(2, 1002)));
  EXPECT_THAT(OpSpans(t, 1), ElementsAre(Us(15, 16)));
  EXPECT_EQ(shift.TakenOutNs(1, 0, 15 * kUs), 14 * kUs);
}

TEST(UntracedView, RangesSamplesAndLostSpansMoveWithTheHost) {
  Timeline t = TimelineBuilder()
                   .Step(1, 0, 30, "ProfilerStep#1")
                   .Range(2, 5, 6, RangeKind::kUser, "r1")
                   .Range(2, 9, 10, RangeKind::kUser, "r2")  // across call 1's 2 us before it
                   .Launch(1, 0, 8)
                   .Kernel(9, 10)
                   .Launch(1, 10, 18)
                   .Kernel(19, 20)
                   .Launch(1, 20, 28)
                   .Kernel(29, 30)
                   .Sample(1, 9, "a.py:2 g")
                   .Sample(1, 25, "a.py:3 h")
                   .Sample(1, 100, "a.py:4 i")
                   .Build();
  // Before any call (by hand: the builder rounds negative times toward zero).
  t.ranges.insert(t.ranges.begin(), Range{-5 * kUs, -1 * kUs, 2, StringTable::kEmpty});
  t.samples.insert(t.samples.begin(), HostSample{-1 * kUs, 1, StringTable::kEmpty});
  t.info.tracer_cost = kModel;
  t.info.lost_record_spans = {
      {1 * kUs, 9 * kUs, 3}, {10 * kUs, 12 * kUs, 4}, {30 * kUs, 40 * kUs, 5}};
  RemoveTracerTime(&t);
  // The host's shift: 0 before 0 us; from a call's start, its cost before it, and from its end,
  // its whole cost: 2 from 0, 7 from 8, 9 from 10, 14 from 18, 16 from 20, 21 from 28.
  EXPECT_THAT(CallSpans(t), ElementsAre(Us(-2, 1), Us(1, 4), Us(4, 7)));
  EXPECT_THAT(OpSpans(t), ElementsAre(Us(2, 3), Us(5, 6), Us(8, 9)));
  // r2 [9-7, 10-9] is empty at 2 us (its 1 us was the tracer's); it now starts before r1: the
  // ranges are sorted again.
  EXPECT_THAT(RangeSpans(t), ElementsAre(Us(-5, -1), Us(-2, 9), Us(2, 2), Us(3, 4)));
  EXPECT_EQ(t.strings.Get(t.ranges[2].name), "r2");
  EXPECT_EQ(t.strings.Get(t.ranges[3].name), "r1");
  EXPECT_THAT(SampleTimes(t), ElementsAre(-1 * kUs, 2 * kUs, 9 * kUs, 79 * kUs));
  // [1-2, 9-7] and [10-9, 12-9] now overlap: one span of both records; [30-21, 40-21].
  std::vector<std::pair<Span, uint64_t>> lost;
  for (const LostRecordSpan& s : t.info.lost_record_spans) {
    lost.push_back({{s.start_ns, s.end_ns}, s.records});
  }
  EXPECT_THAT(lost, ElementsAre(Pair(Us(-1, 3), 7u), Pair(Us(9, 19), 5u)));
  for (size_t i = 0; i < lost.size(); ++i) {
    EXPECT_LE(lost[i].first.first, lost[i].first.second);
    if (i > 0) {
      EXPECT_GT(lost[i].first.first, lost[i - 1].first.second);
    }
  }
}

// Six 100 us steps; in each the host launches five 1 us kernels as LaunchBoundChain does, from
// 1 us after the step began: launch j (of all 30) at [100s+10k+1, +8], its kernel at
// [100s+10k+10, +1]. Each launch costs 7 us: the host's shift after launch j is 7(j+1) us.
Timeline LaunchBoundSteps() {
  TimelineBuilder b;
  for (int s = 0; s < 6; ++s) {
    b.Step(1, 100 * s, 100 * s + 100, "ProfilerStep#" + std::to_string(s));
    for (int k = 0; k < 5; ++k) {
      const double at = 100 * s + 10 * k;
      b.Launch(1, at + 1, at + 9).Kernel(at + 10, at + 11);
    }
  }
  Timeline t = b.Build();
  t.info.tracer_cost = kModel;
  return t;
}

TEST(UntracedView, TheAnalysisTakesTheTracerTimeOutOfTheSteadyStatesIdleTime) {
  const Timeline t = LaunchBoundSteps();
  AnalysisOptions recorded_options;
  recorded_options.as_recorded = true;
  const Report recorded = MustAnalyze(t, recorded_options);
  const Report corrected = MustAnalyze(t);
  EXPECT_EQ(recorded.tracer_time, "as_recorded");
  EXPECT_EQ(corrected.tracer_time, "taken_out");
  const DeviceReport& r = OnlyDevice(recorded);
  const DeviceReport& c = OnlyDevice(corrected);

  // As recorded: the steady state is the six steps, [0, 600]; 30 us busy.
  EXPECT_EQ(r.steady_start_ns, 0);
  EXPECT_EQ(r.steady_end_ns, 600 * kUs);
  EXPECT_EQ(r.busy_ns, 30 * kUs);
  EXPECT_EQ(r.idle_ns, 570 * kUs);
  EXPECT_EQ(r.tracer_ns, 0);
  EXPECT_EQ(r.SteadyOneOffNs(), 0);

  // Corrected: the first step still begins at 0 (no call before it), the last ends 210 us
  // earlier (the host's shift after all 30 launches): [0, 390]. Every kernel moved by its
  // launch's shift, 7(j+1) us; the device's shift grew from 0 before its first kernel to 210.
  EXPECT_EQ(c.steady_start_ns, 0);
  EXPECT_EQ(c.steady_end_ns, 390 * kUs);
  EXPECT_EQ(c.busy_ns, r.busy_ns);
  EXPECT_EQ(c.kernel_count, 30);
  EXPECT_EQ(c.idle_ns, 360 * kUs);
  EXPECT_EQ(c.SteadyOneOffNs(), 0);
  EXPECT_EQ(c.tracer_ns, 210 * kUs);
  // Here the figures add up exactly: what the report says it took out is what the idle time
  // lost, and busy + idle still fill the steady state.
  EXPECT_EQ(r.idle_ns - c.idle_ns, c.tracer_ns);
  EXPECT_EQ(c.busy_ns + c.idle_ns, c.steady_end_ns - c.steady_start_ns);
  EXPECT_EQ(r.busy_ns + r.idle_ns, r.steady_end_ns - r.steady_start_ns);

  // Without a cost model nothing is taken out, and the report says it does not know.
  Timeline unknown = t.Copy();
  unknown.info.tracer_cost.reset();
  const Report u = MustAnalyze(unknown);
  EXPECT_EQ(u.tracer_time, "not_known");
  EXPECT_EQ(OnlyDevice(u).tracer_ns, 0);
  EXPECT_EQ(OnlyDevice(u).idle_ns, r.idle_ns);
}

// Where the steady state begins at a host time that moved (a step range that begins exactly
// where its first timed call begins moves by that call's cost before it), the report's
// tracer_ns (the device's shift at the steady state's end less that at its start) and the
// idle time the steady state lost differ by that host shift: here by the first call's 2 us.
TEST(UntracedView, TracerTimeAndLostIdleDifferByTheSteadyStartsHostShift) {
  TimelineBuilder b;
  for (int s = 0; s < 6; ++s) {
    b.Step(1, 100 * s, 100 * s + 100, "ProfilerStep#" + std::to_string(s));
    for (int k = 0; k < 5; ++k) {
      const double at = 100 * s + 10 * k;
      b.Launch(1, at, at + 8).Kernel(at + 9, at + 10);
    }
  }
  Timeline t = b.Build();
  t.info.tracer_cost = kModel;
  AnalysisOptions recorded_options;
  recorded_options.as_recorded = true;
  const Report recorded = MustAnalyze(t, recorded_options);
  const Report corrected = MustAnalyze(t);
  const DeviceReport& r = OnlyDevice(recorded);
  const DeviceReport& c = OnlyDevice(corrected);
  EXPECT_EQ(r.idle_ns, 570 * kUs);
  // The first step moves to -2 us with its first launch, the last ends at 600 - 210 us.
  EXPECT_EQ(c.steady_start_ns, -2 * kUs);
  EXPECT_EQ(c.steady_end_ns, 390 * kUs);
  EXPECT_EQ(c.busy_ns, r.busy_ns);
  EXPECT_EQ(c.idle_ns, 362 * kUs);
  EXPECT_EQ(c.tracer_ns, 210 * kUs);
  EXPECT_EQ(r.idle_ns - c.idle_ns, c.tracer_ns - kModel.per_call_ns);
}

// And where it ends at a host time that moved further than the device's last op (a timed call
// after the last launch that no op waited for), the idle time lost exceeds tracer_ns by the
// difference: here each step ends with a 1 us cudaStreamWaitEvent (2 us before it).
TEST(UntracedView, TracerTimeAndLostIdleDifferByTheHostsCostAfterTheLastLaunch) {
  TimelineBuilder b;
  for (int s = 0; s < 6; ++s) {
    b.Step(1, 100 * s, 100 * s + 100, "ProfilerStep#" + std::to_string(s));
    for (int k = 0; k < 5; ++k) {
      const double at = 100 * s + 10 * k;
      b.Launch(1, at + 1, at + 9).Kernel(at + 10, at + 11);
    }
    b.WaitEvent(1, 100 * s + 60, 100 * s + 61, 7, 8);
  }
  Timeline t = b.Build();
  t.info.tracer_cost = kModel;
  AnalysisOptions recorded_options;
  recorded_options.as_recorded = true;
  const Report recorded = MustAnalyze(t, recorded_options);
  const Report corrected = MustAnalyze(t);
  const DeviceReport& r = OnlyDevice(recorded);
  const DeviceReport& c = OnlyDevice(corrected);
  EXPECT_EQ(r.idle_ns, 570 * kUs);
  // Each step costs 5 * 7 + 2 = 37 us: the last step ends 222 us earlier, its last kernel moved
  // 220 us.
  EXPECT_EQ(c.steady_start_ns, 0);
  EXPECT_EQ(c.steady_end_ns, 378 * kUs);
  EXPECT_EQ(c.busy_ns, r.busy_ns);
  EXPECT_EQ(c.idle_ns, 348 * kUs);
  EXPECT_EQ(c.tracer_ns, 220 * kUs);
  EXPECT_EQ(r.idle_ns - c.idle_ns, c.tracer_ns + kModel.per_call_ns);
}

}  // namespace
}  // namespace gpuidle::internal
