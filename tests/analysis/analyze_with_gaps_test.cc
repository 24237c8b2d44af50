// AnalyzeWithGaps: the report and the trace's gap list from one pass where the timeline is
// analysed as recorded, and exactly what Analyze and ListGaps give apart in every case.
#include <random>
#include <string>

#include "analysis/analyze.h"
#include "gtest/gtest.h"
#include "report/writer.h"
#include "testing/random_timeline.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::RandomTimeline;

std::string Json(const Report& r) { return MakeJsonWriter()->Write(r); }

void ExpectSameGaps(const GapList& got, const GapList& want) {
  ASSERT_EQ(got.gaps.size(), want.gaps.size());
  for (size_t i = 0; i < got.gaps.size(); ++i) {
    const GapRecord& a = got.gaps[i];
    const GapRecord& b = want.gaps[i];
    EXPECT_EQ(a.device, b.device);
    EXPECT_EQ(a.rank, b.rank);
    EXPECT_EQ(a.start_ns, b.start_ns);
    EXPECT_EQ(a.end_ns, b.end_ns);
    EXPECT_EQ(a.subcause, b.subcause);
    EXPECT_EQ(a.evidence, b.evidence);
    EXPECT_EQ(a.next_op, b.next_op);
    EXPECT_EQ(a.call_site, b.call_site);
  }
  ASSERT_EQ(got.devices.size(), want.devices.size());
  for (size_t i = 0; i < got.devices.size(); ++i) {
    EXPECT_EQ(got.devices[i].device, want.devices[i].device);
    EXPECT_EQ(got.devices[i].gaps, want.devices[i].gaps);
    EXPECT_EQ(got.devices[i].idle_ns, want.devices[i].idle_ns);
  }
}

// Whether there was a report to compare (random timelines without steps may have none).
bool ExpectAsApart(const Timeline& t, const AnalysisOptions& options, int max_gaps) {
  absl::StatusOr<Report> report = Analyze(t, options);
  absl::StatusOr<GapList> gaps = ListGaps(t, options, max_gaps);
  absl::StatusOr<AnalysisWithGaps> both = AnalyzeWithGaps(t, options, max_gaps);
  EXPECT_EQ(both.ok(), report.ok()) << both.status() << " / " << report.status();
  if (!report.ok() || !both.ok()) return false;
  EXPECT_TRUE(gaps.ok()) << gaps.status();
  if (!gaps.ok()) return false;
  EXPECT_EQ(Json(both->report), Json(*report));
  ExpectSameGaps(both->gaps, *gaps);
  return !both->gaps.gaps.empty();
}

TEST(AnalyzeWithGaps, GivesWhatAnalyzeAndListGapsGiveApart) {
  std::mt19937_64 rng(20261206);
  int compared = 0;
  for (int iteration = 0; iteration < 200; ++iteration) {
    SCOPED_TRACE(::testing::Message() << "iteration " << iteration);
    Timeline t = RandomTimeline(rng, {.every_kind = true});
    AnalysisOptions options;
    options.launch_gap_max_ns = 1000 * (1 + static_cast<int64_t>(rng() % 2000));
    // A cap below, at and above the report's own (max_gap_records): the lists differ, the
    // report must not.
    const int max_gaps = static_cast<int>(rng() % 3) * options.max_gap_records / 2 + 1;
    switch (iteration % 3) {
      case 0:  // an offline trace: one pass
        break;
      case 1:  // a live capture whose report takes the tracer's time out: two passes
        t.info.tracer_cost = TracerCostModel{
            .launch_floor_ns = 3000, .launch_excess_max_ns = 10'000, .per_call_ns = 2000};
        break;
      case 2:  // a live capture analysed as recorded: one pass again
        t.info.tracer_cost = TracerCostModel{.per_call_ns = 2000};
        options.as_recorded = true;
        break;
    }
    compared += ExpectAsApart(t, options, max_gaps) ? 1 : 0;
  }
  EXPECT_GT(compared, 100);  // most random timelines have gaps to compare
}

TEST(AnalyzeWithGaps, RefusesBadOptionsAsAnalyzeDoes) {
  std::mt19937_64 rng(1);
  const Timeline t = RandomTimeline(rng, {});
  AnalysisOptions options;
  options.max_gap_records = -1;
  EXPECT_EQ(AnalyzeWithGaps(t, options, 10).status().code(), Analyze(t, options).status().code());
  EXPECT_FALSE(AnalyzeWithGaps(t, options, 10).ok());
}

}  // namespace
}  // namespace gpuidle::internal
