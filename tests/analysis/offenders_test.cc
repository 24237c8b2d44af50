// The offenders stage: idle time summed per program site, and the ranks' lists merged.
#include "analysis/offenders.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/analysis_helpers.h"
#include "testing/timeline_builder.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::kUs;
using ::gpuidle::testing::TimelineBuilder;

class OffendersTest : public ::testing::Test {
 protected:
  OffendersTest()
      : t_(TimelineBuilder()
               .Launch(1, 0, 5)
               .Kernel(10, 100, "gemm")
               .Sync(1, 100, 400)
               .Launch(1, 400, 405)
               .Kernel(410, 500, "relu")
               .Build()),
        index_(t_, AnalysisOptions()),
        stacks_(t_, index_.python_frames()),
        table_(index_, stacks_) {}

  IdlePiece Piece(double start_us, double end_us, Subcause s, int32_t gap) const {
    IdlePiece p;
    p.start_ns = static_cast<int64_t>(start_us * kUs);
    p.end_ns = static_cast<int64_t>(end_us * kUs);
    p.subcause = s;
    p.gap = gap;
    return p;
  }

  int32_t SyncCall() const {
    for (size_t i = 0; i < t_.calls.size(); ++i) {
      if (t_.calls[i].category == CallCategory::kSync) return static_cast<int32_t>(i);
    }
    return -1;
  }

  Timeline t_;
  TimelineIndex index_;
  HostStacks stacks_;
  OffenderTable table_;
};

TEST_F(OffendersTest, SumsIdleTimePerSiteAndCountsGaps) {
  const DeviceTimeline& d = t_.devices[0];
  IdlePiece sync = Piece(100, 300, Subcause::kHostSync, 0);
  sync.call = SyncCall();
  table_.Add(d, sync);
  sync.start_ns = 300 * kUs;
  sync.end_ns = 400 * kUs;
  table_.Add(d, sync);  // a second piece of the same gap
  sync.gap = 5;
  table_.Add(d, sync);  // another gap
  IdlePiece late = Piece(405, 410, Subcause::kLaunchOverhead, 6);
  late.next_op = 1;
  table_.Add(d, late);
  table_.Add(d, Piece(500, 510, Subcause::kHost, 7));

  const std::vector<Offender> top = table_.Top(10);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].subcause, Subcause::kHostSync);
  EXPECT_EQ(top[0].what, "cudaStreamSynchronize");
  EXPECT_EQ(top[0].idle_ns, 400 * kUs);
  EXPECT_EQ(top[0].count, 2);
  EXPECT_EQ(top[1].what, "host work outside CUDA");
  EXPECT_EQ(top[1].idle_ns, 10 * kUs);
  EXPECT_EQ(top[2].what, "relu");  // the kernel that came late
  EXPECT_EQ(top[2].subcause, Subcause::kLaunchOverhead);
  EXPECT_EQ(top[2].count, 1);
  ASSERT_EQ(table_.Top(1).size(), 1u);
  EXPECT_EQ(table_.Top(1)[0].what, "cudaStreamSynchronize");
  EXPECT_TRUE(table_.Top(0).empty());
}

Offender Named(const std::string& what, int64_t idle_ns) {
  Offender o;
  o.what = what;
  o.idle_ns = idle_ns;
  return o;
}

TEST(MergeOffenders, MostIdleFirstTiesInRankOrderAtMostTheLimit) {
  const std::vector<Offender> merged = MergeOffenders(
      {Named("rank0 a", 50), Named("rank0 b", 10), Named("rank1 a", 70), Named("rank1 b", 10)}, 3);
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged[0].what, "rank1 a");
  EXPECT_EQ(merged[1].what, "rank0 a");
  EXPECT_EQ(merged[2].what, "rank0 b");  // stable: rank 0's tie first
  EXPECT_TRUE(MergeOffenders({Named("x", 1)}, 0).empty());
}

}  // namespace
}  // namespace gpuidle::internal
