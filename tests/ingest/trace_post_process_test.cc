// After the parse: placement, warnings, joins, the base time and sorting.
#include "ingest/trace_post_process.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ingest/event_mapper.h"

namespace gpuidle::internal::kineto {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Event Call(int64_t ts_us, uint64_t correlation) {
  Event e;
  e.ph = "X";
  e.cat = "cuda_runtime";
  e.name = "cudaStreamSynchronize";
  e.ts_ns = ts_us * 1000;
  e.dur_ns = 1000;
  e.correlation = static_cast<int64_t>(correlation);
  return e;
}

TEST(TracePostProcess, JoinsSyncsMovesTimesAndSorts) {
  Timeline t;
  ReaderWarnings warnings;
  EventMapper mapper(&t, &warnings);
  mapper.Map(Call(20, 2));
  mapper.Map(Call(10, 1));
  Event sync;
  sync.ph = "X";
  sync.cat = "cuda_sync";
  sync.correlation = 2;
  sync.stream = 7;
  mapper.Map(sync);
  warnings.not_objects = 1;
  ASSERT_TRUE(FinishTimeline(mapper, warnings, int64_t{1'000'000}, &t).ok());
  ASSERT_EQ(t.calls.size(), 2u);
  EXPECT_EQ(t.calls[0].start_ns, 1'000'000 + 10'000);  // sorted, on the base time
  EXPECT_EQ(t.calls[1].start_ns, 1'000'000 + 20'000);
  EXPECT_EQ(t.calls[1].stream, 7u);  // the sync's stream, joined by correlation
  EXPECT_EQ(t.calls[0].stream, kNoStream);
  EXPECT_THAT(t.info.warnings, ElementsAre(HasSubstr("not objects")));
}

TEST(TracePostProcess, ShiftTimesMovesEveryTimeStamp) {
  Timeline t;
  t.devices.emplace_back().ops.push_back(DeviceOp{});
  t.devices[0].ops[0].start_ns = 1;
  t.devices[0].ops[0].end_ns = 2;
  t.calls.emplace_back().start_ns = 3;
  t.ranges.emplace_back().end_ns = 4;
  t.samples.emplace_back().time_ns = 5;
  ASSERT_TRUE(ShiftTimes(100, &t).ok());
  EXPECT_EQ(t.devices[0].ops[0].start_ns, 101);
  EXPECT_EQ(t.devices[0].ops[0].end_ns, 102);
  EXPECT_EQ(t.calls[0].start_ns, 103);
  EXPECT_EQ(t.ranges[0].end_ns, 104);
  EXPECT_EQ(t.samples[0].time_ns, 105);
}

TEST(TracePostProcess, ABaseTimeThatMovesTimesOutOfRangeIsAnError) {
  Timeline t;
  t.calls.emplace_back().start_ns = 10;
  const absl::Status s = ShiftTimes(kMaxTimeNs, &t);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("moves time stamps out of range"));
  Timeline u;
  u.calls.emplace_back().start_ns = 10;
  EXPECT_FALSE(ShiftTimes(INT64_MAX, &u).ok());  // overflow, not wrap-around
}

}  // namespace
}  // namespace gpuidle::internal::kineto
