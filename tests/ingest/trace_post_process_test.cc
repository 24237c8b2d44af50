// After the parse: placement, warnings, joins, the base time and sorting.
#include "ingest/trace_post_process.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ingest/event_mapper.h"

namespace gpuidle::internal::kineto {
namespace {

using ::testing::AllOf;
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

Event Annotation(absl::string_view cat, absl::string_view name, int64_t ts_us, int64_t dur_us,
                 uint64_t tid = 7) {
  Event e;
  e.ph = "X";
  e.cat = std::string(cat);
  e.name = std::string(name);
  e.ts_ns = ts_us * 1000;
  e.dur_ns = dur_us * 1000;
  e.tid = tid;
  return e;
}

std::vector<std::string> StepsOf(const Timeline& t) {
  std::vector<std::string> steps;
  for (const Range& r : t.ranges) {
    if (r.kind == RangeKind::kStep) {
      steps.push_back(
          absl::StrCat(t.strings.Get(r.name), " ", r.start_ns / 1000, "-", r.end_ns / 1000));
    }
  }
  return steps;
}

// Without ProfilerStep, PyTorch's own optimizer-step annotations make the steps: from one step's
// end to the next's, for the first optimizer, its annotation and CPU op counted once.
TEST(TracePostProcess, OptimizerStepCallsMakeTheStepsOfATraceWithoutSteps) {
  Timeline t;
  ReaderWarnings warnings;
  EventMapper mapper(&t, &warnings);
  for (int64_t at : {100, 300, 500, 700}) {
    mapper.Map(Annotation("user_annotation", "Optimizer.step#SGD.step", at, 20));
    mapper.Map(Annotation("cpu_op", "Optimizer.step#SGD.step", at, 20));
    // A second optimizer, and the first's zero_grad: not steps.
    mapper.Map(Annotation("user_annotation", "Optimizer.step#Adam.step", at + 50, 10));
    mapper.Map(Annotation("user_annotation", "Optimizer.zero_grad#SGD.zero_grad", at + 80, 5));
  }
  // The same optimizer on another thread (a second process's trace merged in, say): not counted.
  mapper.Map(Annotation("user_annotation", "Optimizer.step#SGD.step", 400, 20, /*tid=*/9));
  ASSERT_TRUE(FinishTimeline(mapper, warnings, std::nullopt, &t).ok());
  EXPECT_THAT(StepsOf(t), ElementsAre("optimizer.step#1 120-320", "optimizer.step#2 320-520",
                                      "optimizer.step#3 520-720"));
  EXPECT_TRUE(std::is_sorted(t.ranges.begin(), t.ranges.end(), [](const Range& a, const Range& b) {
    return a.start_ns < b.start_ns;
  }));
}

TEST(TracePostProcess, ATraceWithStepsKeepsThemAndOneOptimizerCallMakesNoStep) {
  Timeline with_steps;
  ReaderWarnings warnings;
  EventMapper mapper(&with_steps, &warnings);
  mapper.Map(Annotation("user_annotation", "ProfilerStep#4", 0, 250));
  mapper.Map(Annotation("user_annotation", "ProfilerStep#5", 250, 250));
  for (int64_t at : {100, 300}) {
    mapper.Map(Annotation("user_annotation", "Optimizer.step#SGD.step", at, 20));
  }
  ASSERT_TRUE(FinishTimeline(mapper, warnings, std::nullopt, &with_steps).ok());
  EXPECT_THAT(StepsOf(with_steps), ElementsAre("ProfilerStep#4 0-250", "ProfilerStep#5 250-500"));

  Timeline once;
  EventMapper mapper_once(&once, &warnings);
  mapper_once.Map(Annotation("user_annotation", "Optimizer.step#SGD.step", 100, 20));
  ASSERT_TRUE(FinishTimeline(mapper_once, warnings, std::nullopt, &once).ok());
  EXPECT_THAT(StepsOf(once), ::testing::IsEmpty());
}

// A step that torch.profiler closed long after its own span ended (its schedule stopped
// recording mid-step) is cut to the span: the time after it was never recorded.
TEST(TracePostProcess, StepsAreCutToTheProfilersSpan) {
  Timeline t;
  ReaderWarnings warnings;
  EventMapper mapper(&t, &warnings);
  Event span = Annotation("Trace", "PyTorch Profiler (0)", 50, 950);
  span.pid = 0;
  mapper.Map(span);
  mapper.Map(Annotation("user_annotation", "ProfilerStep#1", 100, 300));
  mapper.Map(Annotation("user_annotation", "ProfilerStep#2", 400, 13'600));  // ends at 14 ms
  mapper.Map(Annotation("user_annotation", "late annotation", 2'000, 10));   // after the span
  mapper.Map(Annotation("cpu_op", "aten::mm", 420, 30));
  ASSERT_TRUE(FinishTimeline(mapper, warnings, int64_t{5'000'000}, &t).ok());
  EXPECT_THAT(StepsOf(t), ElementsAre("ProfilerStep#1 5100-5400", "ProfilerStep#2 5400-6000"));
  ASSERT_THAT(t.ranges, ::testing::SizeIs(3));  // the late annotation left out
  EXPECT_THAT(
      t.info.warnings,
      ElementsAre(AllOf(HasSubstr("2 host ranges ran outside the profiler's recorded span"),
                        HasSubstr("\"ProfilerStep#2\", by 13 ms"), HasSubstr("1 left out"))));
}

// A span that misses recorded events is widened to them: no step is cut inside the recording.
TEST(TracePostProcess, TheProfilersSpanIsWidenedToTheRecordedEvents) {
  Timeline t;
  ReaderWarnings warnings;
  EventMapper mapper(&t, &warnings);
  mapper.Map(Annotation("Trace", "PyTorch Profiler (0)", 0, 100));
  mapper.Map(Annotation("user_annotation", "ProfilerStep#1", 0, 5'000));
  mapper.Map(Annotation("cpu_op", "aten::mm", 4'000, 500));  // recorded after the span's end
  ASSERT_TRUE(FinishTimeline(mapper, warnings, std::nullopt, &t).ok());
  EXPECT_THAT(StepsOf(t), ElementsAre("ProfilerStep#1 0-4500"));
}

TEST(TracePostProcess, WithoutTheProfilersSpanRangesAreKept) {
  Timeline t;
  ReaderWarnings warnings;
  EventMapper mapper(&t, &warnings);
  mapper.Map(Annotation("user_annotation", "ProfilerStep#1", 100, 13'600));
  mapper.Map(Annotation("cpu_op", "aten::mm", 120, 30));
  ASSERT_TRUE(FinishTimeline(mapper, warnings, std::nullopt, &t).ok());
  EXPECT_THAT(StepsOf(t), ElementsAre("ProfilerStep#1 100-13700"));
  EXPECT_TRUE(t.info.warnings.empty());
}

}  // namespace
}  // namespace gpuidle::internal::kineto
