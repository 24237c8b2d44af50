// TimelineIndex: the joins and lookups every per-device analysis shares. Device work is joined
// to the host call that issued it by correlation id, copies get their direction from the
// memcpy they issued, data waits come from range kinds and the data-range patterns, and a call
// site names the outermost framework op and the innermost user frame.
#include "analysis/timeline_index.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gpuidle/options.h"
#include "gtest/gtest.h"
#include "model/timeline.h"

namespace gpuidle::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

HostCall Call(uint64_t thread, int64_t start, int64_t end, uint64_t correlation,
              CallCategory category = CallCategory::kLaunch) {
  HostCall c;
  c.thread = thread;
  c.start_ns = start;
  c.end_ns = end;
  c.correlation_id = correlation;
  c.category = category;
  return c;
}

DeviceOp Op(int64_t start, int64_t end, uint64_t correlation, OpKind kind = OpKind::kKernel,
            CopyKind copy = CopyKind::kUnknown) {
  DeviceOp op;
  op.start_ns = start;
  op.end_ns = end;
  op.correlation_id = correlation;
  op.kind = kind;
  op.copy_kind = copy;
  return op;
}

int32_t AddRange(Timeline& t, uint64_t thread, int64_t start, int64_t end, RangeKind kind,
                 const std::string& name) {
  t.ranges.push_back(Range{start, end, thread, t.strings.Intern(name), kind});
  return static_cast<int32_t>(t.ranges.size() - 1);
}

TEST(TimelineIndexTest, AnEmptyTimelineHasNothingToJoin) {
  const Timeline t;
  const TimelineIndex index(t, AnalysisOptions{});
  EXPECT_THAT(index.data_ranges(), IsEmpty());
  EXPECT_FALSE(index.LaunchedWithin(1, INT64_MIN, INT64_MAX));
  EXPECT_EQ(index.CallSite(1, 0), "");
  EXPECT_EQ(&index.timeline(), &t);
}

TEST(TimelineIndexTest, JoinsEachOpToTheCallWithItsCorrelationOnItsOwnDevice) {
  Timeline t;
  t.calls = {Call(1, 0, 10, 5), Call(1, 20, 30, 6), Call(2, 25, 35, 7)};
  t.devices.resize(2);
  t.devices[0].ops = {Op(40, 50, 6), Op(50, 60, 5)};
  t.devices[1].device = 1;
  t.devices[1].ops = {Op(45, 55, 7)};
  const TimelineIndex index(t, AnalysisOptions{});
  EXPECT_EQ(index.IssuingCall(t.devices[0], 0), 1);
  EXPECT_EQ(index.IssuingCall(t.devices[0], 1), 0);
  EXPECT_EQ(index.IssuingCall(t.devices[1], 0), 2);
}

TEST(TimelineIndexTest, AnOpWithoutCorrelationOrWithoutItsCallHasNoIssuingCall) {
  Timeline t;
  t.calls = {Call(1, 0, 10, 5), Call(1, 20, 30, kNoCorrelation)};
  t.devices.resize(1);
  t.devices[0].ops = {Op(40, 50, kNoCorrelation), Op(50, 60, 99), Op(60, 70, 5)};
  const TimelineIndex index(t, AnalysisOptions{});
  EXPECT_EQ(index.IssuingCall(t.devices[0], 0), -1);
  EXPECT_EQ(index.IssuingCall(t.devices[0], 1), -1);
  EXPECT_EQ(index.IssuingCall(t.devices[0], 2), 0);
}

// One launch call may issue several ops (a graph launch); they all point back to it.
TEST(TimelineIndexTest, SeveralOpsMayShareOneIssuingCall) {
  Timeline t;
  t.calls = {Call(1, 0, 10, 5)};
  t.devices.resize(1);
  t.devices[0].ops = {Op(40, 50, 5), Op(50, 60, 5), Op(60, 70, 5)};
  const TimelineIndex index(t, AnalysisOptions{});
  for (int32_t op = 0; op < 3; ++op) EXPECT_EQ(index.IssuingCall(t.devices[0], op), 0);
}

TEST(TimelineIndexTest, ACopyCallTakesTheDirectionOfTheMemcpyItIssued) {
  Timeline t;
  t.calls = {Call(1, 0, 10, 5, CallCategory::kCopy), Call(1, 20, 30, 6, CallCategory::kCopy),
             Call(1, 40, 50, 7, CallCategory::kLaunch), Call(1, 60, 70, 8, CallCategory::kCopy)};
  t.devices.resize(1);
  t.devices[0].ops = {Op(10, 20, 5, OpKind::kMemcpy, CopyKind::kDtoH),
                      Op(30, 40, 6, OpKind::kMemcpy, CopyKind::kHtoD),
                      // A kernel's copy kind is not a direction, even where a producer set one.
                      Op(50, 60, 7, OpKind::kKernel, CopyKind::kDtoD)};
  const TimelineIndex index(t, AnalysisOptions{});
  EXPECT_EQ(index.CopyKindOfCall(0), CopyKind::kDtoH);
  EXPECT_EQ(index.CopyKindOfCall(1), CopyKind::kHtoD);
  EXPECT_EQ(index.CopyKindOfCall(2), CopyKind::kUnknown);
  EXPECT_EQ(index.CopyKindOfCall(3), CopyKind::kUnknown) << "no memcpy was joined to it";
}

TEST(TimelineIndexTest, DataRangesAreDataKindsAndUserRangesThatMatchAPattern) {
  Timeline t;
  const int32_t data = AddRange(t, 1, 0, 10, RangeKind::kData, "anything");
  const int32_t loader = AddRange(t, 1, 10, 20, RangeKind::kUser,
                                  "enumerate(DataLoader)#_SingleProcessDataLoaderIter");
  const int32_t mixed_case = AddRange(t, 1, 20, 30, RangeKind::kUser, "my NEXT_BATCH wait");
  AddRange(t, 1, 30, 40, RangeKind::kUser, "forward");
  // Only user annotations are matched by name: an op or a step named so is not a data wait.
  AddRange(t, 1, 40, 50, RangeKind::kFrameworkOp, "DataLoader");
  AddRange(t, 1, 50, 60, RangeKind::kStep, "load_batch step");
  AddRange(t, 1, 60, 70, RangeKind::kPython, "data_load.py(3): load");
  const int32_t again = AddRange(t, 2, 70, 80, RangeKind::kUser, "my NEXT_BATCH wait");
  const TimelineIndex index(t, AnalysisOptions{});
  EXPECT_THAT(index.data_ranges(), ElementsAre(data, loader, mixed_case, again));
  for (int32_t r = 0; r < static_cast<int32_t>(t.ranges.size()); ++r) {
    const bool listed = r == data || r == loader || r == mixed_case || r == again;
    EXPECT_EQ(index.IsDataRange(r), listed) << t.strings.Get(t.ranges[r].name);
  }
}

TEST(TimelineIndexTest, TheDataRangePatternsComeFromTheOptions) {
  Timeline t;
  AddRange(t, 1, 0, 10, RangeKind::kUser, "DataLoader");
  const int32_t custom = AddRange(t, 1, 10, 20, RangeKind::kUser, "fetch shard 3");
  AnalysisOptions options;
  options.data_range_patterns = {"", "Fetch Shard"};  // an empty pattern matches nothing
  const TimelineIndex index(t, options);
  EXPECT_THAT(index.data_ranges(), ElementsAre(custom));

  options.data_range_patterns.clear();
  const TimelineIndex none(t, options);
  EXPECT_THAT(none.data_ranges(), IsEmpty());
}

TEST(TimelineIndexTest, LaunchedWithinCountsLaunchesThatStartInTheHalfOpenWindow) {
  Timeline t;
  t.calls = {Call(1, 100, 110, 1), Call(1, 300, 310, 2, CallCategory::kSync), Call(2, 200, 210, 3)};
  const TimelineIndex index(t, AnalysisOptions{});
  EXPECT_TRUE(index.LaunchedWithin(1, 100, 101));
  EXPECT_TRUE(index.LaunchedWithin(1, 0, 1000));
  EXPECT_FALSE(index.LaunchedWithin(1, 0, 100)) << "the end is not in the window";
  EXPECT_FALSE(index.LaunchedWithin(1, 101, 300)) << "a launch that started before";
  EXPECT_FALSE(index.LaunchedWithin(1, 250, 400)) << "a sync is no launch";
  EXPECT_FALSE(index.LaunchedWithin(1, 150, 250)) << "thread 2 launched then";
  EXPECT_TRUE(index.LaunchedWithin(2, 150, 250));
  EXPECT_FALSE(index.LaunchedWithin(3, 0, 1000));
  EXPECT_FALSE(index.LaunchedWithin(1, 100, 100)) << "an empty window holds nothing";
}

TEST(TimelineIndexTest, ACallSiteNamesTheOutermostOpAndTheInnermostUserFrame) {
  Timeline t;
  AddRange(t, 1, 0, 1000, RangeKind::kFrameworkOp, "aten::item");
  AddRange(t, 1, 10, 900, RangeKind::kFrameworkOp, "aten::_local_scalar_dense");
  AddRange(t, 1, 0, 1000, RangeKind::kPython, "train.py(10): main");
  AddRange(t, 1, 5, 950, RangeKind::kPython, "train.py(42): step");
  AddRange(t, 1, 20, 800, RangeKind::kPython, "torch/_tensor.py(1000): item");
  AddRange(t, 1, 30, 700, RangeKind::kPython, "/usr/lib/python3/dist-packages/x.py(1): f");
  AddRange(t, 1, 40, 600, RangeKind::kPython, "/venv/lib/site-packages/y.py(2): g");
  AddRange(t, 1, 50, 500, RangeKind::kPython, "<built-in method item>");
  AddRange(t, 1, 60, 400, RangeKind::kPython, "/opt/conda/lib/torch/nn/functional.py(3): h");
  AddRange(t, 1, 70, 300, RangeKind::kPython, "contextlib.py(79): inner");
  AddRange(t, 1, 80, 200, RangeKind::kPython, "threading.py(1000): run");
  const TimelineIndex index(t, AnalysisOptions{});
  EXPECT_EQ(index.CallSite(1, 100), "aten::item at step() in train.py (def at line 42)");
  EXPECT_EQ(index.CallSite(1, 975), "aten::item at main() in train.py (def at line 10)");
}

TEST(TimelineIndexTest, ACallSiteHasWhatTheTraceHas) {
  Timeline t;
  AddRange(t, 1, 0, 100, RangeKind::kFrameworkOp, "aten::copy_");
  AddRange(t, 2, 0, 100, RangeKind::kPython, "run() in loop.py (def at line 7)");
  AddRange(t, 3, 0, 100, RangeKind::kPython, "torch/utils/data/dataloader.py(1): next");
  AddRange(t, 4, 0, 100, RangeKind::kUser, "forward");
  const TimelineIndex index(t, AnalysisOptions{});
  EXPECT_EQ(index.CallSite(1, 50), "aten::copy_");
  EXPECT_EQ(index.CallSite(2, 50), "run() in loop.py (def at line 7)");
  EXPECT_EQ(index.CallSite(3, 50), "") << "a framework frame says nothing of the user's code";
  EXPECT_EQ(index.CallSite(4, 50), "") << "user ranges are neither ops nor frames";
  EXPECT_EQ(index.CallSite(1, 100), "") << "outside every range";
}

}  // namespace
}  // namespace gpuidle::internal
