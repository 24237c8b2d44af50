// The reader's warnings: one line per kind of problem, in a fixed order, and the kept-string
// rules that count what they changed.
#include "ingest/reader_warnings.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuidle::internal::kineto {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> Lines(const ReaderWarnings& w) {
  std::vector<std::string> out;
  AppendWarnings(w, &out);
  return out;
}

TEST(ReaderWarnings, NoProblemsNoLines) { EXPECT_THAT(Lines(ReaderWarnings()), IsEmpty()); }

TEST(ReaderWarnings, OneLinePerKindOfProblemWithTheCountAndTheFirstValue) {
  ReaderWarnings w;
  w.Warn(EventCategory::kKernel, Field::kTs, Problem::kOutOfRange, true, "\"1e30\"");
  w.Warn(EventCategory::kKernel, Field::kTs, Problem::kOutOfRange, true, "\"2e30\"");
  w.Warn(EventCategory::kRuntime, Field::kCorrelation, Problem::kNotInteger, false, "\"x\"");
  w.Warn(EventCategory::kCpuOp, Field::kDur, Problem::kMissing, true);
  w.Warn(EventCategory::kIgnored, Field::kCat, Problem::kWrongType, true);
  w.Warn(EventCategory::kRuntime, Field::kGpuidleCategory, Problem::kUnknownValue, false);
  EXPECT_THAT(Lines(w),
              ElementsAre("skipped 1 events whose \"cat\" is not a string",
                          "skipped 2 kernel events whose \"ts\" is out of range (first: \"1e30\")",
                          "ignored the \"args.correlation\" of 1 cuda_runtime events: it is not an "
                          "integer (first: \"x\")",
                          "ignored the \"args.gpuidle_category\" of 1 cuda_runtime events: it is "
                          "not one of launch, sync, copy, wait_event, init, module_load or other",
                          "skipped 1 cpu_op events without \"dur\""));
}

TEST(ReaderWarnings, CountsComeInAFixedOrder) {
  ReaderWarnings w;
  w.bad_distributed_info = true;
  w.bad_base_time = true;
  w.bad_device_properties = 2;
  w.zero_timestamp_count_saturated = true;
  w.device_properties_beyond_limit = 3;
  w.ops_beyond_device_limit = 4;
  w.unplaced_ranges = 5;
  w.invalid_utf8_bytes = 6;
  w.cut_strings = 7;
  w.not_objects = 8;
  const std::vector<std::string> lines = Lines(w);
  ASSERT_EQ(lines.size(), 10u);
  EXPECT_EQ(lines[0], "skipped 8 entries of \"traceEvents\" that are not objects");
  EXPECT_THAT(lines[1], ::testing::StartsWith("cut 7 names or stacks longer than 65536 bytes"));
  EXPECT_EQ(lines[2], "6 invalid UTF-8 bytes in names replaced by U+FFFD");
  EXPECT_THAT(lines[3], ::testing::StartsWith("skipped 5 cuda_profiler_range events"));
  EXPECT_THAT(lines[4], ::testing::StartsWith("skipped 4 device events on devices beyond"));
  EXPECT_EQ(lines[5], "ignored 3 \"deviceProperties\" entries beyond the first 1024");
  EXPECT_THAT(lines[6], ::testing::StartsWith("the count of records without time stamps"));
  EXPECT_THAT(lines[7], ::testing::StartsWith("ignored 2 \"deviceProperties\" entries whose"));
  EXPECT_THAT(lines[8], ::testing::StartsWith("ignored \"baseTimeNanoseconds\""));
  EXPECT_THAT(lines[9], ::testing::StartsWith("ignored a \"distributedInfo\" rank"));
}

TEST(ReaderWarnings, KeptTextIsBoundedAndCountedWhenCut) {
  ReaderWarnings w;
  std::string kept;
  KeepText(&kept, "short", &w);
  EXPECT_EQ(kept, "short");
  EXPECT_EQ(w.cut_strings, 0u);
  KeepText(&kept, std::string(kMaxKeptStringBytes + 1, 'a'), &w);
  EXPECT_LE(kept.size(), kMaxKeptStringBytes);
  EXPECT_THAT(kept, ::testing::EndsWith("..."));
  EXPECT_EQ(w.cut_strings, 1u);
}

TEST(ReaderWarnings, ValidTextReplacesAndCountsInvalidBytes) {
  ReaderWarnings w;
  EXPECT_EQ(ValidText("caf\xc3\xa9", &w), "caf\xc3\xa9");
  EXPECT_EQ(w.invalid_utf8_bytes, 0u);
  EXPECT_EQ(ValidText("a\xff\xfe"
                      "b",
                      &w),
            "a\xef\xbf\xbd\xef\xbf\xbd"
            "b");
  EXPECT_EQ(w.invalid_utf8_bytes, 2u);
}

}  // namespace
}  // namespace gpuidle::internal::kineto
