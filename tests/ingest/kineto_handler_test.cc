// The SAX state machine on its own: RapidJSON's plain reader over a string (not the chunked
// stream and scanners of kineto_reader.cc) drives the handler, so these tests see only where
// the handler thinks it is and what it collects.
#include "ingest/kineto_handler.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ingest/trace_post_process.h"
#include "rapidjson/reader.h"
#include "rapidjson/stream.h"

namespace gpuidle::internal::kineto {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

struct Handled {
  bool parsed = false;
  std::string error;
  bool saw_trace_events = false;
  uint64_t events = 0;
  Timeline timeline;
};

Handled Handle(const std::string& json) {
  Handled out;
  KinetoHandler handler(&out.timeline);
  rapidjson::StringStream stream(json.c_str());
  rapidjson::Reader reader;
  out.parsed = !reader
                    .Parse<rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseIterativeFlag>(
                        stream, handler)
                    .IsError();
  out.error = handler.error();
  out.saw_trace_events = handler.saw_trace_events();
  out.events = handler.events();
  if (out.parsed) {
    EXPECT_TRUE(
        FinishTimeline(handler.mapper(), handler.warnings(), handler.base_time_ns(), &out.timeline)
            .ok());
  }
  return out;
}

TEST(KinetoHandler, ReadsEventsOfAnObjectTrace) {
  const Handled h = Handle(R"({"schemaVersion": 1, "traceEvents": [
      {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 5,
       "args": {"device": 0, "stream": 7, "correlation": 3, "grid": [1, 1, 1]}},
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2,
       "ts": 8, "dur": 1, "args": {"correlation": 3, "nested": {"device": 5}}}]})");
  ASSERT_TRUE(h.parsed) << h.error;
  EXPECT_TRUE(h.saw_trace_events);
  EXPECT_EQ(h.events, 2u);
  ASSERT_EQ(h.timeline.devices.size(), 1u);
  ASSERT_EQ(h.timeline.devices[0].ops.size(), 1u);
  EXPECT_EQ(h.timeline.devices[0].ops[0].start_ns, 10'000);
  EXPECT_EQ(h.timeline.devices[0].ops[0].stream, 7u);
  ASSERT_EQ(h.timeline.calls.size(), 1u);
  EXPECT_EQ(h.timeline.calls[0].correlation_id, 3u);
  EXPECT_THAT(h.timeline.info.warnings, IsEmpty());  // args nested deeper are not the event's
}

TEST(KinetoHandler, ReadsTheBareArrayFormat) {
  const Handled h = Handle(R"([{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1,
                               "tid": 1, "ts": 1, "dur": 2}])");
  ASSERT_TRUE(h.parsed) << h.error;
  EXPECT_TRUE(h.saw_trace_events);
  ASSERT_EQ(h.timeline.ranges.size(), 1u);
  EXPECT_EQ(h.timeline.ranges[0].kind, RangeKind::kFrameworkOp);
}

TEST(KinetoHandler, CountsEntriesThatAreNotObjects) {
  const Handled h = Handle(R"({"traceEvents": [1, "x", [2], null, {"ph": "X"}]})");
  ASSERT_TRUE(h.parsed) << h.error;
  EXPECT_EQ(h.events, 5u);
  EXPECT_THAT(h.timeline.info.warnings,
              ElementsAre("skipped 4 entries of \"traceEvents\" that are not objects"));
}

TEST(KinetoHandler, KeepsTheTopLevelMetadata) {
  const Handled h = Handle(R"({"deviceProperties": [{"id": 0, "name": "NVIDIA H200"},
                                                    {"id": "x", "name": "?"}],
                               "distributedInfo": {"rank": 3, "world_size": 8},
                               "baseTimeNanoseconds": 1000000,
                               "traceEvents": [{"ph": "X", "cat": "kernel", "name": "k",
                                                "pid": 0, "tid": 7, "ts": 1, "dur": 1}]})");
  ASSERT_TRUE(h.parsed) << h.error;
  EXPECT_THAT(h.timeline.info.visible_devices, ElementsAre(0));
  EXPECT_EQ(h.timeline.info.rank, 3);
  EXPECT_EQ(h.timeline.info.world_size, 8);
  ASSERT_EQ(h.timeline.devices.size(), 1u);
  EXPECT_EQ(h.timeline.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(h.timeline.devices[0].ops[0].start_ns, 1'000'000 + 1'000);  // on the base time
  EXPECT_THAT(h.timeline.info.warnings,
              ElementsAre(HasSubstr("1 \"deviceProperties\" entries whose \"id\" is not")));
}

TEST(KinetoHandler, MarksFieldsOfTheWrongTypeWithoutFailing) {
  const Handled h = Handle(R"({"traceEvents": [
      {"ph": "X", "cat": "kernel", "name": {"a": 1}, "pid": 0, "tid": 7, "ts": 1, "dur": 1},
      {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": [1], "dur": 1}]})");
  ASSERT_TRUE(h.parsed) << h.error;
  ASSERT_EQ(h.timeline.devices.size(), 1u);
  EXPECT_EQ(h.timeline.devices[0].ops.size(), 1u);  // a bad name costs the name only
  EXPECT_THAT(h.timeline.info.warnings,
              ElementsAre("ignored the \"name\" of 1 kernel events: it is not a string",
                          "skipped 1 kernel events whose \"ts\" is not a number"));
}

TEST(KinetoHandler, ReadsTheGpuidleObject) {
  const Handled h = Handle(R"({"gpuidle": {"format": "gpuidle.trace/2", "pid": 42,
                               "host": "node1", "dropped_records": 3, "version": "x",
                               "record_limit_reached": true, "zero_timestamp_records": 2},
                               "traceEvents": []})");
  ASSERT_TRUE(h.parsed) << h.error;
  EXPECT_EQ(h.timeline.info.source, "gpuidle");
  EXPECT_EQ(h.timeline.info.pid, 42u);
  EXPECT_EQ(h.timeline.info.host, "node1");
  EXPECT_EQ(h.timeline.info.dropped_records, 3u);
  EXPECT_TRUE(h.timeline.info.record_limit_reached);
  EXPECT_EQ(h.timeline.info.zero_timestamp_records, 2u);
}

TEST(KinetoHandler, RefusesWhatIsNoTrace) {
  EXPECT_THAT(Handle("7").error, HasSubstr("the JSON document is a number, not a trace"));
  EXPECT_THAT(Handle(R"({"traceEvents": {}})").error,
              HasSubstr("\"traceEvents\" must be an array of events, not an object"));
  EXPECT_THAT(Handle(R"({"gpuidle": [], "traceEvents": []})").error,
              HasSubstr("\"gpuidle\" must be an object, not an array"));
  EXPECT_THAT(Handle(R"({"gpuidle": {"pid": 1}, "traceEvents": []})").error,
              HasSubstr("the \"gpuidle\" object has no \"format\""));
  EXPECT_THAT(Handle(R"({"gpuidle": {"format": "gpuidle.trace/9"}})").error,
              HasSubstr("unsupported gpuidle trace format"));
  EXPECT_THAT(Handle(R"({"gpuidle": {"format": "gpuidle.trace/2", "pid": "1"}})").error,
              HasSubstr("\"gpuidle\": \"pid\" must be an integer or null, not a string"));
  EXPECT_THAT(Handle(std::string(kMaxJsonDepth + 1, '[')).error,
              HasSubstr("nested deeper than 512 levels"));
  const Handled no_events = Handle(R"({"schemaVersion": 1})");
  EXPECT_TRUE(no_events.parsed);
  EXPECT_FALSE(no_events.saw_trace_events);
}

}  // namespace
}  // namespace gpuidle::internal::kineto
