// The gap records stage: the record of an idle piece, and the longest ones kept.
#include "analysis/gap_records.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/analysis_helpers.h"
#include "testing/timeline_builder.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::kUs;
using ::gpuidle::testing::TimelineBuilder;
using ::testing::IsEmpty;

int32_t CallNamed(const Timeline& t, absl::string_view name) {
  for (size_t i = 0; i < t.calls.size(); ++i) {
    if (t.strings.Get(t.calls[i].name) == name) return static_cast<int32_t>(i);
  }
  return -1;
}

class GapRecordsTest : public ::testing::Test {
 protected:
  GapRecordsTest()
      : t_(TimelineBuilder()
               .Rank(3)
               .Launch(7, 0, 5)
               .Kernel(10, 100, "first")
               .Sync(7, 100, 400)
               .Launch(7, 400, 405)
               .Kernel(410, 500, "second")
               .Build()),
        index_(t_, AnalysisOptions()),
        stacks_(t_, index_.python_frames()) {
    report_.rank = 3;
    report_.device = 0;
  }

  IdlePiece Piece(double start_us, double end_us, Subcause s) const {
    IdlePiece p;
    p.start_ns = static_cast<int64_t>(start_us * kUs);
    p.end_ns = static_cast<int64_t>(end_us * kUs);
    p.subcause = s;
    return p;
  }

  Timeline t_;
  TimelineIndex index_;
  HostStacks stacks_;
  DeviceReport report_;
};

TEST_F(GapRecordsTest, ASyncGapNamesTheCallAndTheKernelAfterIt) {
  IdlePiece p = Piece(100, 410, Subcause::kHostSync);
  p.call = CallNamed(t_, "cudaStreamSynchronize");
  p.next_op = 1;
  const GapRecord g = ToGapRecord(index_, stacks_, t_.devices[0], report_, p);
  EXPECT_EQ(g.rank, 3);
  EXPECT_EQ(g.device, 0);
  EXPECT_EQ(g.start_ns, 100 * kUs);
  EXPECT_EQ(g.end_ns, 410 * kUs);
  EXPECT_EQ(g.subcause, Subcause::kHostSync);
  EXPECT_EQ(g.next_op, "second");
  EXPECT_EQ(g.evidence, "cudaStreamSynchronize");
  EXPECT_EQ(g.thread, 7u);  // the launching thread of "second"
}

TEST_F(GapRecordsTest, HostWorkSaysHowLongNoCudaCallWasMade) {
  const GapRecord g =
      ToGapRecord(index_, stacks_, t_.devices[0], report_, Piece(100, 350, Subcause::kHost));
  EXPECT_EQ(g.evidence, "no CUDA call for 250 us");
  EXPECT_EQ(g.next_op, "");  // none given: the end of the window
  EXPECT_EQ(g.thread, 0u);
}

GapRecord Gap(int64_t start, int64_t end) {
  GapRecord g;
  g.start_ns = start;
  g.end_ns = end;
  return g;
}

TEST(LongestGaps, KeepsTheNLongestLongestFirstEarlierFirstOnTies) {
  LongestGaps longest(3);
  EXPECT_TRUE(longest.WouldKeep(1));
  longest.Offer(Gap(0, 10));
  longest.Offer(Gap(100, 130));
  longest.Offer(Gap(200, 205));
  EXPECT_FALSE(longest.WouldKeep(5));  // no longer than the shortest kept
  EXPECT_TRUE(longest.WouldKeep(6));
  longest.Offer(Gap(300, 310));  // as long as (0, 10), later
  longest.Offer(Gap(400, 450));
  const std::vector<GapRecord> kept = longest.Take();
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[0].start_ns, 400);
  EXPECT_EQ(kept[1].start_ns, 100);
  EXPECT_EQ(kept[2].start_ns, 0);
}

TEST(LongestGaps, ZeroKeepsNone) {
  LongestGaps none(0);
  EXPECT_FALSE(none.WouldKeep(1000));
  none.Offer(Gap(0, 1000));
  EXPECT_THAT(none.Take(), IsEmpty());
}

}  // namespace
}  // namespace gpuidle::internal
