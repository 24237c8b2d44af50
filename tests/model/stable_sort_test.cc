#include "model/stable_sort.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuidle::internal {
namespace {

using Item = std::pair<int64_t, int>;  // key, input position

std::vector<Item> Numbered(const std::vector<int64_t>& keys) {
  std::vector<Item> v;
  for (size_t i = 0; i < keys.size(); ++i) v.emplace_back(keys[i], static_cast<int>(i));
  return v;
}

std::vector<Item> Expected(std::vector<Item> v) {
  std::stable_sort(v.begin(), v.end(),
                   [](const Item& a, const Item& b) { return a.first < b.first; });
  return v;
}

std::vector<Item> Sorted(std::vector<Item> v) {
  StableSortByKey(v, [](const Item& x) { return x.first; });
  return v;
}

TEST(StableSortByKeyTest, LeavesASortedSequenceAsItIs) {
  const std::vector<Item> v = Numbered({1, 2, 2, 5, 9});
  EXPECT_EQ(Sorted(v), v);
}

TEST(StableSortByKeyTest, MergesRunsKeepingTiesInInputOrder) {
  // Three sorted runs with ties across them: the earlier run's element comes first.
  const std::vector<Item> v = Numbered({3, 5, 7, 9,  11, 13, 15, 17, 19, 21, 23, 25, 27,  //
                                        1, 5, 9, 9,  20, 30, 31, 32, 33, 34, 35,          //
                                        0, 5, 9, 40, 41, 42, 43, 44, 45, 46, 47, 48});
  const std::vector<Item> sorted = Sorted(v);
  EXPECT_EQ(sorted, Expected(v));
  EXPECT_THAT(std::vector<Item>(sorted.begin() + 3, sorted.begin() + 6),
              ::testing::ElementsAre(Item{5, 1}, Item{5, 14}, Item{5, 25}));
}

TEST(StableSortByKeyTest, GivesStableSortsOrderForRunsAndForShuffledInput) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    const size_t n = rng() % 3000;
    const size_t runs = 1 + rng() % 12;
    std::vector<int64_t> keys(n);
    // Sorted runs of few distinct keys (many ties), or with probability 1/4 shuffled keys.
    const bool shuffled = rng() % 4 == 0;
    for (size_t i = 0; i < n; ++i) keys[i] = static_cast<int64_t>(rng() % 50);
    if (!shuffled) {
      for (size_t r = 0; r < runs; ++r) {
        const auto begin = keys.begin() + static_cast<std::ptrdiff_t>(n * r / runs);
        const auto end = keys.begin() + static_cast<std::ptrdiff_t>(n * (r + 1) / runs);
        std::sort(begin, end);
      }
    }
    const std::vector<Item> v = Numbered(keys);
    ASSERT_EQ(Sorted(v), Expected(v)) << "round " << round;
  }
}

}  // namespace
}  // namespace gpuidle::internal
