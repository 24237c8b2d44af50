// RangeIndex: which host range of a kind encloses a moment on a thread (the framework op or
// Python frame a sync or launch is attributed to). Ranges are half-open, [start, end).
#include "analysis/range_index.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/timeline.h"

namespace gpuidle::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr int32_t kNone = RangeIndex::kNone;

bool KeepAll(const Range&) { return true; }

// Appends a range in the given order (the index must not rely on the order of timeline.ranges)
// and returns its index.
int32_t Add(Timeline& t, uint64_t thread, int64_t start, int64_t end,
            RangeKind kind = RangeKind::kFrameworkOp, const std::string& name = "op") {
  t.ranges.push_back(Range{start, end, thread, t.strings.Intern(name), kind});
  return static_cast<int32_t>(t.ranges.size() - 1);
}

TEST(RangeIndexTest, AnEmptyTimelineHasNoRangesAnywhere) {
  const Timeline t;
  const RangeIndex index(t, KeepAll);
  EXPECT_EQ(index.Innermost(1, 0), kNone);
  EXPECT_EQ(index.Outermost(1, 0), kNone);
  EXPECT_THAT(index.Enclosing(1, 0), IsEmpty());
  EXPECT_THAT(index.Threads(), IsEmpty());
  EXPECT_THAT(index.Roots(1), IsEmpty());
}

TEST(RangeIndexTest, ARangeContainsItsStartButNotItsEnd) {
  Timeline t;
  const int32_t op = Add(t, 1, 100, 200);
  const RangeIndex index(t, KeepAll);
  EXPECT_EQ(index.Innermost(1, 99), kNone);
  EXPECT_EQ(index.Innermost(1, 100), op);
  EXPECT_EQ(index.Innermost(1, 199), op);
  EXPECT_EQ(index.Innermost(1, 200), kNone);
  EXPECT_EQ(index.Outermost(1, 150), op);
}

TEST(RangeIndexTest, AnEmptyRangeContainsNothing) {
  Timeline t;
  Add(t, 1, 100, 100);
  const RangeIndex index(t, KeepAll);
  EXPECT_EQ(index.Innermost(1, 100), kNone);
  EXPECT_THAT(index.Enclosing(1, 100), IsEmpty());
}

TEST(RangeIndexTest, NestedRangesAnswerInnermostOutermostAndTheWholeChain) {
  Timeline t;
  const int32_t outer = Add(t, 1, 0, 1000, RangeKind::kFrameworkOp, "aten::linear");
  const int32_t middle = Add(t, 1, 100, 500, RangeKind::kFrameworkOp, "aten::addmm");
  const int32_t inner = Add(t, 1, 200, 300, RangeKind::kFrameworkOp, "aten::copy_");
  const RangeIndex index(t, KeepAll);
  EXPECT_EQ(index.Innermost(1, 250), inner);
  EXPECT_EQ(index.Outermost(1, 250), outer);
  EXPECT_THAT(index.Enclosing(1, 250), ElementsAre(inner, middle, outer));
  // After the inner one ended the middle one is innermost again, then the outer one.
  EXPECT_EQ(index.Innermost(1, 300), middle);
  EXPECT_EQ(index.Innermost(1, 600), outer);
  EXPECT_THAT(index.Enclosing(1, 600), ElementsAre(outer));
  EXPECT_THAT(index.Roots(1), ElementsAre(outer));
}

// The last range started before t may have ended already; a range around it still counts.
TEST(RangeIndexTest, ASiblingThatEndedBeforeTDoesNotHideItsParent) {
  Timeline t;
  const int32_t parent = Add(t, 1, 0, 100);
  Add(t, 1, 10, 20);
  Add(t, 1, 30, 40);
  Add(t, 1, 32, 35);
  const RangeIndex index(t, KeepAll);
  EXPECT_EQ(index.Innermost(1, 50), parent);
  EXPECT_THAT(index.Enclosing(1, 50), ElementsAre(parent));
}

TEST(RangeIndexTest, RangesThatStartTogetherNestTheLongerOneOutside) {
  Timeline t;
  // Listed inner first: the index orders them itself.
  const int32_t inner = Add(t, 1, 100, 150);
  const int32_t outer = Add(t, 1, 100, 400);
  const RangeIndex index(t, KeepAll);
  EXPECT_EQ(index.Innermost(1, 100), inner);
  EXPECT_EQ(index.Outermost(1, 100), outer);
  EXPECT_EQ(index.Innermost(1, 150), outer);
  EXPECT_THAT(index.Roots(1), ElementsAre(outer));
}

TEST(RangeIndexTest, OfTwoIdenticalRangesTheOneListedLaterIsInside) {
  Timeline t;
  const int32_t first = Add(t, 1, 100, 200);
  const int32_t second = Add(t, 1, 100, 200);
  const RangeIndex index(t, KeepAll);
  EXPECT_EQ(index.Innermost(1, 150), second);
  EXPECT_EQ(index.Outermost(1, 150), first);
  EXPECT_THAT(index.Enclosing(1, 150), ElementsAre(second, first));
}

TEST(RangeIndexTest, RangesThatTouchAreSiblings) {
  Timeline t;
  const int32_t a = Add(t, 1, 0, 100);
  const int32_t b = Add(t, 1, 100, 200);
  const RangeIndex index(t, KeepAll);
  EXPECT_EQ(index.Innermost(1, 99), a);
  EXPECT_EQ(index.Innermost(1, 100), b);
  EXPECT_THAT(index.Enclosing(1, 100), ElementsAre(b));
  EXPECT_THAT(index.Roots(1), ElementsAre(a, b));
}

// Traces are not always well nested (an op that outlives its parent): every range that
// contains t is still found, the latest started innermost.
TEST(RangeIndexTest, OverlappingRangesAreAllFound) {
  Timeline t;
  const int32_t a = Add(t, 1, 0, 200);
  const int32_t b = Add(t, 1, 100, 300);
  const RangeIndex index(t, KeepAll);
  EXPECT_THAT(index.Enclosing(1, 150), ElementsAre(b, a));
  EXPECT_EQ(index.Innermost(1, 250), b);
  EXPECT_EQ(index.Outermost(1, 250), b);
  EXPECT_EQ(index.Outermost(1, 150), a);
}

TEST(RangeIndexTest, ThreadsAreIndexedApart) {
  Timeline t;
  const int32_t on_one = Add(t, 1, 0, 100);
  const int32_t on_two = Add(t, 2, 50, 150);
  const RangeIndex index(t, KeepAll);
  EXPECT_EQ(index.Innermost(1, 75), on_one);
  EXPECT_EQ(index.Innermost(2, 75), on_two);
  EXPECT_EQ(index.Innermost(1, 120), kNone);
  EXPECT_EQ(index.Innermost(3, 75), kNone);
  EXPECT_THAT(index.Threads(), ElementsAre(1u, 2u));
  EXPECT_THAT(index.Roots(2), ElementsAre(on_two));
}

TEST(RangeIndexTest, ThreadsAreListedInAscendingOrder) {
  Timeline t;
  for (uint64_t thread : {uint64_t{9}, uint64_t{3}, UINT64_MAX, uint64_t{0}, uint64_t{3}}) {
    Add(t, thread, 0, 10);
  }
  const RangeIndex index(t, KeepAll);
  EXPECT_THAT(index.Threads(), ElementsAre(0u, 3u, 9u, UINT64_MAX));
}

// A range that is not kept is invisible: it is neither found nor anyone's parent.
TEST(RangeIndexTest, OnlyKeptRangesAreIndexed) {
  Timeline t;
  const int32_t step = Add(t, 1, 0, 1000, RangeKind::kStep, "ProfilerStep#1");
  const int32_t op = Add(t, 1, 100, 200, RangeKind::kFrameworkOp, "aten::mm");
  Add(t, 2, 0, 1000, RangeKind::kStep, "ProfilerStep#1");
  const RangeIndex ops(t, [](const Range& r) { return r.kind == RangeKind::kFrameworkOp; });
  EXPECT_EQ(ops.Innermost(1, 150), op);
  EXPECT_EQ(ops.Outermost(1, 150), op);
  EXPECT_EQ(ops.Innermost(1, 500), kNone);
  EXPECT_THAT(ops.Roots(1), ElementsAre(op));
  EXPECT_THAT(ops.Threads(), ElementsAre(1u));
  const RangeIndex steps(t, [](const Range& r) { return r.kind == RangeKind::kStep; });
  EXPECT_EQ(steps.Innermost(1, 150), step);
}

TEST(RangeIndexTest, InnermostMatchingSkipsRangesThatAreNotAccepted) {
  Timeline t;
  const int32_t user = Add(t, 1, 0, 1000, RangeKind::kPython, "train.py(42): step");
  Add(t, 1, 100, 900, RangeKind::kPython, "torch/nn/modules/module.py(1501): _call_impl");
  const int32_t innermost = Add(t, 1, 200, 300, RangeKind::kPython, "torch/functional.py(7): f");
  const RangeIndex index(t, KeepAll);
  const auto not_torch = [&t](const Range& r) {
    return t.strings.Get(r.name).substr(0, 6) != "torch/";
  };
  EXPECT_EQ(index.InnermostMatching(1, 250, not_torch), user);
  EXPECT_EQ(index.Innermost(1, 250), innermost);
  EXPECT_EQ(index.InnermostMatching(1, 250, [](const Range&) { return false; }), kNone);
  EXPECT_EQ(index.InnermostMatching(7, 250, not_torch), kNone);
}

TEST(RangeIndexTest, WorksAtTheEdgesOfTheClock) {
  Timeline t;
  const int32_t early = Add(t, 1, kMinTimeNs, kMinTimeNs + 10);
  const int32_t late = Add(t, 1, kMaxTimeNs - 10, kMaxTimeNs);
  const RangeIndex index(t, KeepAll);
  EXPECT_EQ(index.Innermost(1, kMinTimeNs), early);
  EXPECT_EQ(index.Innermost(1, kMaxTimeNs - 1), late);
  EXPECT_EQ(index.Innermost(1, INT64_MIN), kNone);
  EXPECT_EQ(index.Innermost(1, INT64_MAX), kNone);
  EXPECT_EQ(index.Innermost(1, 0), kNone);
}

TEST(RangeIndexTest, ADeepStackIsAnsweredWhole) {
  Timeline t;
  std::vector<int32_t> stack;
  for (int64_t depth = 0; depth < 1000; ++depth) stack.push_back(Add(t, 1, depth, 10'000 - depth));
  const RangeIndex index(t, KeepAll);
  EXPECT_EQ(index.Innermost(1, 5000), stack.back());
  EXPECT_EQ(index.Outermost(1, 5000), stack.front());
  const std::vector<int32_t> enclosing = index.Enclosing(1, 5000);
  ASSERT_EQ(enclosing.size(), stack.size());
  EXPECT_TRUE(std::equal(enclosing.rbegin(), enclosing.rend(), stack.begin()));
  EXPECT_THAT(index.Roots(1), ElementsAre(stack.front()));
  EXPECT_EQ(index.Innermost(1, 9'990), stack[9]);  // [9, 9991) is the deepest still open
}

}  // namespace
}  // namespace gpuidle::internal
