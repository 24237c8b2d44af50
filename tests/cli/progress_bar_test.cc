#include "cli/progress_bar.h"

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/temp_dir.h"

namespace gpuidle::internal {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr int64_t kMs = 1'000'000;
constexpr uint64_t kMib = 1024 * 1024;

struct FakeClock {
  int64_t now = 0;
  ProgressBar::Clock Get() {
    return [this] { return now; };
  }
};

TEST(ProgressBar, DrawsNothingForAShortRun) {
  std::ostringstream err;
  FakeClock clock;
  {
    ProgressBar bar(err, {10 * kMib}, clock.Get());
    bar.Update(0, 5 * kMib);
    clock.now = ProgressBar::kFirstDrawNs - 1;
    bar.Update(0, 10 * kMib);
    bar.Finish();
  }
  EXPECT_EQ(err.str(), "");
}

TEST(ProgressBar, ShowsTheBytesReadOverTheTotalOfAllFiles) {
  std::ostringstream err;
  FakeClock clock;
  ProgressBar bar(err, {10 * kMib, 30 * kMib}, clock.Get());
  clock.now = ProgressBar::kFirstDrawNs;
  bar.Update(1, 10 * kMib);  // the first file read, a third of the second
  EXPECT_EQ(err.str(),
            "\r\x1b[Kgpuidle: reading 2 files [############............]  50%  20.0 of 40.0 MiB");
}

TEST(ProgressBar, RedrawsAtMostAFewTimesASecondAndErasesItselfWhenDone) {
  std::ostringstream err;
  FakeClock clock;
  ProgressBar bar(err, {100 * kMib}, clock.Get());
  clock.now = ProgressBar::kFirstDrawNs;
  int draws = 0;
  for (int i = 0; i < 100; ++i) {  // an update every 10 ms for a second
    const size_t before = err.str().size();
    bar.Update(0, static_cast<uint64_t>(i) * kMib);
    draws += err.str().size() > before;
    clock.now += 10 * kMs;
  }
  EXPECT_EQ(draws, 5);  // every 200 ms
  bar.Finish();
  EXPECT_THAT(err.str(), ::testing::EndsWith("MiB\r\x1b[K"));
  const std::string after = err.str();
  bar.Update(0, 100 * kMib);
  bar.Finish();
  EXPECT_EQ(err.str(), after);
}

TEST(ProgressBar, ShowsOnlyTheBytesWhenAPipeHasNoSize) {
  std::ostringstream err;
  FakeClock clock;
  ProgressBar bar(err, {0}, clock.Get());
  clock.now = ProgressBar::kFirstDrawNs;
  bar.Update(0, 3 * kMib);
  EXPECT_EQ(bar.Line(), "gpuidle: reading 1 file  3.0 MiB");
}

TEST(FileSizes, GivesRegularFilesTheirSizeAndOthersNone) {
  testing::TempDir dir;
  const std::string file = dir.Path("t.json");
  { std::ofstream(file) << std::string(1234, 'x'); }
  EXPECT_EQ(FileSizes({file, "/dev/null", dir.Path("missing")}),
            (std::vector<uint64_t>{1234, 0, 0}));
}

}  // namespace
}  // namespace gpuidle::internal
