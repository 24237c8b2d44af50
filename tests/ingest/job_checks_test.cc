#include "ingest/job_checks.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/timeline.h"
#include "testing/timeline_builder.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::TimelineBuilder;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// A rank's timeline: one launch and one kernel at `start_us`.
Timeline Rank(std::optional<int> rank, std::optional<int> world_size, double start_us = 0) {
  Timeline t = TimelineBuilder()
                   .Launch(1, start_us, start_us + 1)
                   .Kernel(start_us + 2, start_us + 10)
                   .Build();
  t.info.rank = rank;
  t.info.world_size = world_size;
  return t;
}

// CheckJob of the timelines, named rank0.json, rank1.json, ... (timelines move, not copy).
template <typename... T>
std::vector<std::string> Check(T... ranks) {
  std::vector<Timeline> timelines;
  (timelines.push_back(std::move(ranks)), ...);
  std::vector<const Timeline*> all;
  std::vector<std::string> names;
  for (const Timeline& t : timelines) {
    all.push_back(&t);
    names.push_back("rank" + std::to_string(names.size()) + ".json");
  }
  return CheckJob(all, names);
}

TEST(JobChecksTest, ACompleteJobHasNoWarnings) {
  EXPECT_THAT(Check(Rank(0, 2), Rank(1, 2)), IsEmpty());
}

TEST(JobChecksTest, ASingleInputIsNoJobAndGetsNoWarnings) {
  EXPECT_THAT(Check(Rank(3, 8)), IsEmpty());
}

TEST(JobChecksTest, InputsWithoutRanksGetNoRankWarnings) {
  EXPECT_THAT(Check(Rank(std::nullopt, std::nullopt), Rank(std::nullopt, std::nullopt)), IsEmpty());
}

TEST(JobChecksTest, NamesTheInputsThatClaimOneRank) {
  EXPECT_THAT(Check(Rank(0, 2), Rank(1, 2), Rank(1, 2)),
              ElementsAre("2 inputs claim rank 1: rank1.json, rank2.json; cross-rank results "
                          "pair them as different ranks"));
}

TEST(JobChecksTest, NamesTheMissingRanksOfAPartialJob) {
  EXPECT_THAT(Check(Rank(0, 8), Rank(2, 8), Rank(7, 8)),
              ElementsAre("world_size is 8 but 3 of its ranks are given; missing: ranks 1, 3-6 "
                          "(cross-rank results cover the ranks given)"));
  EXPECT_THAT(Check(Rank(0, 3), Rank(1, 3)),
              ElementsAre("world_size is 3 but 2 of its ranks are given; missing: rank 2 "
                          "(cross-rank results cover the ranks given)"));
}

TEST(JobChecksTest, NamesTheMissingRanksOfAHugeWorldWithoutListingThemOneByOne) {
  // A world_size of 2^31 - 1 is one number in a file: the check stays as cheap as the inputs.
  EXPECT_THAT(Check(Rank(0, 2147483647), Rank(5, 2147483647)),
              ElementsAre("world_size is 2147483647 but 2 of its ranks are given; missing: ranks "
                          "1-4, 6-2147483646 (cross-rank results cover the ranks given)"));
  std::vector<Timeline> every_other;
  std::vector<const Timeline*> all;
  for (int r = 0; r < 100; r += 2) every_other.push_back(Rank(r, 100));
  for (const Timeline& t : every_other) all.push_back(&t);
  EXPECT_THAT(
      CheckJob(all, {}),
      ElementsAre("world_size is 100 but 50 of its ranks are given; missing: ranks 1, 3, "
                  "5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31, 33, 35, 37, 39, ... "
                  "(cross-rank results cover the ranks given)"));
}

TEST(JobChecksTest, WarnsWhenTheInputsDisagreeOnWorldSizeOrARankLiesOutsideIt) {
  EXPECT_THAT(Check(Rank(0, 2), Rank(1, 4)),
              ElementsAre("the traces disagree on world_size (2, 4): not one job"));
  EXPECT_THAT(Check(Rank(0, 2), Rank(1, 2), Rank(5, 2)),
              ElementsAre("rank 5 lies outside world_size 2"));
}

TEST(JobChecksTest, WarnsWhenTheTracesDoNotOverlapInTime) {
  // rank 0 ends at 10 us; rank 1 begins at 2.5 s.
  EXPECT_THAT(Check(Rank(0, 2), Rank(1, 2, 2500000)),
              ElementsAre("the traces do not overlap in time: rank0.json ends 2499.990 ms "
                          "before rank1.json begins; they are probably not one job, or their "
                          "clocks differ (cross-rank results compare times across them)"));
  // Overlapping windows, in any order, are fine.
  EXPECT_THAT(Check(Rank(0, 3, 5), Rank(1, 3), Rank(2, 3, 8)), IsEmpty());
}

TEST(JobChecksTest, PutsTheJobsWarningsAfterTheFirstInputsOwn) {
  std::vector<Timeline> timelines;
  timelines.push_back(Rank(0, 2));
  timelines.push_back(Rank(0, 2));
  timelines[0].info.warnings.push_back("a reader warning");
  AddJobWarnings(timelines, {"a.json", "b.json"});
  EXPECT_THAT(timelines[0].info.warnings,
              ElementsAre("a reader warning",
                          "2 inputs claim rank 0: a.json, b.json; cross-rank results pair them "
                          "as different ranks",
                          "world_size is 2 but 1 of its ranks are given; missing: rank 1 "
                          "(cross-rank results cover the ranks given)"));
  EXPECT_THAT(timelines[1].info.warnings, IsEmpty());
}

}  // namespace
}  // namespace gpuidle::internal
