#include "analysis/job_checks.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuidle::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// A rank active for 8 us from `start_us` (the window of one launch and its kernel).
JobMember Rank(std::optional<int> rank, std::optional<int> world_size, int64_t start_us = 0) {
  return JobMember{rank, world_size, start_us * 1000, start_us * 1000 + 10'000};
}

// CheckJob of the members, named rank0.json, rank1.json, ...
template <typename... T>
std::vector<std::string> Check(T... ranks) {
  std::vector<JobMember> all;
  (all.push_back(ranks), ...);
  std::vector<std::string> names;
  for (size_t i = 0; i < all.size(); ++i) names.push_back("rank" + std::to_string(i) + ".json");
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
                          "(waits for peers are then underestimated: a missing rank may be the one "
                          "the others waited for)"));
  EXPECT_THAT(Check(Rank(0, 3), Rank(1, 3)),
              ElementsAre("world_size is 3 but 2 of its ranks are given; missing: rank 2 "
                          "(waits for peers are then underestimated: a missing rank may be the one "
                          "the others waited for)"));
}

TEST(JobChecksTest, NamesTheMissingRanksOfAHugeWorldWithoutListingThemOneByOne) {
  // A world_size of 2^31 - 1 is one number in a file: the check stays as cheap as the inputs.
  EXPECT_THAT(Check(Rank(0, 2147483647), Rank(5, 2147483647)),
              ElementsAre("world_size is 2147483647 but 2 of its ranks are given; missing: ranks "
                          "1-4, 6-2147483646 (waits for peers are then underestimated: a missing "
                          "rank may be the one the others waited for)"));
  std::vector<JobMember> all;
  for (int r = 0; r < 100; r += 2) all.push_back(Rank(r, 100));
  EXPECT_THAT(
      CheckJob(all, {}),
      ElementsAre("world_size is 100 but 50 of its ranks are given; missing: ranks 1, 3, "
                  "5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31, 33, 35, 37, 39, ... "
                  "(waits for peers are then underestimated: a missing rank may be the one the "
                  "others waited for)"));
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

}  // namespace
}  // namespace gpuidle::internal
