// AttachCallStreams: which stream a sync or wait call was about, joined from separate records by
// correlation id. The analysis blames a sync on the work of its stream and a wait on the stream
// it waited for, so a wrong join moves idle time between causes.
#include "model/call_streams.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "model/timeline.h"

namespace gpuidle::internal {
namespace {

HostCall Call(uint64_t correlation, CallCategory category, uint32_t stream = kNoStream) {
  HostCall c;
  c.correlation_id = correlation;
  c.category = category;
  c.stream = stream;
  return c;
}

CallStreams SyncOf(uint64_t correlation, int64_t stream) {
  CallStreams s;
  s.correlation = correlation;
  s.stream = stream;
  return s;
}

CallStreams WaitOf(uint64_t correlation, int64_t stream, int64_t waited_stream) {
  CallStreams s = SyncOf(correlation, stream);
  s.wait_on_stream = waited_stream;
  return s;
}

// A wait whose record names the cudaEventRecord call instead of the stream waited on.
CallStreams WaitForEventRecordedBy(uint64_t correlation, int64_t stream, uint64_t record_call) {
  CallStreams s = SyncOf(correlation, stream);
  s.event_record_correlation = record_call;
  return s;
}

TEST(AttachCallStreamsTest, GivesEachCallTheStreamOfTheRecordWithItsCorrelation) {
  Timeline t;
  t.calls = {Call(10, CallCategory::kSync), Call(11, CallCategory::kSync),
             Call(12, CallCategory::kSync)};
  AttachCallStreams({SyncOf(12, 3), SyncOf(10, 7)}, &t);
  EXPECT_EQ(t.calls[0].stream, 7u);
  EXPECT_EQ(t.calls[1].stream, kNoStream);
  EXPECT_EQ(t.calls[2].stream, 3u);
  for (const HostCall& c : t.calls) EXPECT_EQ(c.peer_stream, kNoStream);
}

TEST(AttachCallStreamsTest, IgnoresRecordsOfCallsTheTimelineDoesNotHave) {
  Timeline t;
  t.calls = {Call(10, CallCategory::kSync)};
  AttachCallStreams({SyncOf(99, 3)}, &t);
  EXPECT_EQ(t.calls[0].stream, kNoStream);
}

// Correlation id 0 means "none": a record without one must not land on calls without one.
TEST(AttachCallStreamsTest, ARecordWithoutCorrelationMatchesNoCall) {
  Timeline t;
  t.calls = {Call(kNoCorrelation, CallCategory::kSync)};
  AttachCallStreams({SyncOf(kNoCorrelation, 3), WaitOf(kNoCorrelation, 3, 4)}, &t);
  EXPECT_EQ(t.calls[0].stream, kNoStream);
  EXPECT_EQ(t.calls[0].peer_stream, kNoStream);
}

TEST(AttachCallStreamsTest, NegativeOrOutOfRangeStreamsAreUnknown) {
  Timeline t;
  t.calls = {Call(1, CallCategory::kSync), Call(2, CallCategory::kWaitEvent),
             Call(3, CallCategory::kSync), Call(4, CallCategory::kSync, /*stream=*/5)};
  AttachCallStreams({SyncOf(1, -1), WaitOf(2, int64_t{kNoStream}, int64_t{1} << 40),
                     SyncOf(3, INT64_MIN), SyncOf(4, -1)},
                    &t);
  EXPECT_EQ(t.calls[0].stream, kNoStream);
  EXPECT_EQ(t.calls[1].stream, kNoStream);
  EXPECT_EQ(t.calls[1].peer_stream, kNoStream);
  EXPECT_EQ(t.calls[2].stream, kNoStream);
  EXPECT_EQ(t.calls[3].stream, 5u) << "an unknown stream keeps what the call knew";
}

TEST(AttachCallStreamsTest, TheLargestStreamBelowTheNoStreamMarkerIsKept) {
  Timeline t;
  t.calls = {Call(1, CallCategory::kSync)};
  AttachCallStreams({SyncOf(1, int64_t{kNoStream} - 1)}, &t);
  EXPECT_EQ(t.calls[0].stream, kNoStream - 1);
}

TEST(AttachCallStreamsTest, AWaitGetsTheStreamItWaitedOnFromItsRecord) {
  Timeline t;
  t.calls = {Call(5, CallCategory::kWaitEvent)};
  AttachCallStreams({WaitOf(5, 7, 13)}, &t);
  EXPECT_EQ(t.calls[0].stream, 7u);
  EXPECT_EQ(t.calls[0].peer_stream, 13u);
}

TEST(AttachCallStreamsTest, AWaitFindsTheStreamWaitedOnThroughTheEventsRecord) {
  Timeline t;
  t.calls = {Call(4, CallCategory::kOther), Call(5, CallCategory::kWaitEvent)};
  AttachCallStreams({WaitForEventRecordedBy(5, 7, /*record_call=*/4)}, &t,
                    {EventRecordStream{4, 21}});
  EXPECT_EQ(t.calls[1].stream, 7u);
  EXPECT_EQ(t.calls[1].peer_stream, 21u);
}

TEST(AttachCallStreamsTest, AWaitFindsTheStreamWaitedOnThroughAnotherWaitForTheSameEvent) {
  Timeline t;
  t.calls = {Call(5, CallCategory::kWaitEvent), Call(6, CallCategory::kWaitEvent)};
  CallStreams named = WaitOf(6, 8, 21);
  named.event_record_correlation = 4;  // the same cudaEventRecord, which is not in the trace
  AttachCallStreams({WaitForEventRecordedBy(5, 7, 4), named}, &t);
  EXPECT_EQ(t.calls[0].peer_stream, 21u);
  EXPECT_EQ(t.calls[1].peer_stream, 21u);
}

TEST(AttachCallStreamsTest, AWaitFindsTheStreamWaitedOnFromTheRecordCallItself) {
  Timeline t;
  t.calls = {Call(4, CallCategory::kOther, /*stream=*/21), Call(5, CallCategory::kWaitEvent)};
  AttachCallStreams({WaitForEventRecordedBy(5, 7, 4)}, &t);
  EXPECT_EQ(t.calls[1].peer_stream, 21u);
  EXPECT_EQ(t.calls[0].stream, 21u);
}

TEST(AttachCallStreamsTest, TheWaitsOwnRecordComesBeforeTheEventsRecord) {
  Timeline t;
  t.calls = {Call(4, CallCategory::kOther, /*stream=*/30), Call(5, CallCategory::kWaitEvent)};
  CallStreams both = WaitOf(5, 7, 13);
  both.event_record_correlation = 4;
  AttachCallStreams({both}, &t, {EventRecordStream{4, 21}});
  EXPECT_EQ(t.calls[1].peer_stream, 13u);
}

TEST(AttachCallStreamsTest, TheEventsRecordComesBeforeOtherWaitsAndTheRecordCall) {
  Timeline t;
  t.calls = {Call(4, CallCategory::kOther, /*stream=*/30), Call(5, CallCategory::kWaitEvent),
             Call(6, CallCategory::kWaitEvent)};
  CallStreams other = WaitOf(6, 8, 22);
  other.event_record_correlation = 4;
  AttachCallStreams({WaitForEventRecordedBy(5, 7, 4), other}, &t, {EventRecordStream{4, 21}});
  EXPECT_EQ(t.calls[1].peer_stream, 21u);
  EXPECT_EQ(t.calls[2].peer_stream, 22u) << "a wait that names its stream keeps it";
}

TEST(AttachCallStreamsTest, AnotherWaitForTheSameEventComesBeforeTheRecordCall) {
  Timeline t;
  t.calls = {Call(4, CallCategory::kOther, /*stream=*/30), Call(5, CallCategory::kWaitEvent),
             Call(6, CallCategory::kWaitEvent)};
  CallStreams other = WaitOf(6, 8, 22);
  other.event_record_correlation = 4;
  AttachCallStreams({WaitForEventRecordedBy(5, 7, 4), other}, &t);
  EXPECT_EQ(t.calls[1].peer_stream, 22u);
}

TEST(AttachCallStreamsTest, EventRecordsWithAnUnknownStreamOrCorrelationAreIgnored) {
  Timeline t;
  t.calls = {Call(4, CallCategory::kOther, /*stream=*/30), Call(5, CallCategory::kWaitEvent)};
  AttachCallStreams({WaitForEventRecordedBy(5, 7, 4)}, &t,
                    {EventRecordStream{4, -1}, EventRecordStream{kNoCorrelation, 21}});
  EXPECT_EQ(t.calls[1].peer_stream, 30u) << "falls back to the record call's stream";
}

TEST(AttachCallStreamsTest, AWaitWhoseEventCannotBeTracedKeepsNoPeerStream) {
  Timeline t;
  t.calls = {Call(4, CallCategory::kOther), Call(5, CallCategory::kWaitEvent)};
  AttachCallStreams({WaitForEventRecordedBy(5, 7, 4)}, &t, {EventRecordStream{77, 3}});
  EXPECT_EQ(t.calls[1].stream, 7u);
  EXPECT_EQ(t.calls[1].peer_stream, kNoStream);
}

TEST(AttachCallStreamsTest, NoRecordsChangeNothingEvenWithEventRecords) {
  Timeline t;
  t.calls = {Call(4, CallCategory::kOther, /*stream=*/30), Call(5, CallCategory::kWaitEvent)};
  AttachCallStreams({}, &t, {EventRecordStream{4, 21}});
  EXPECT_EQ(t.calls[0].stream, 30u);
  EXPECT_EQ(t.calls[1].stream, kNoStream);
  EXPECT_EQ(t.calls[1].peer_stream, kNoStream);

  Timeline empty;
  AttachCallStreams({SyncOf(1, 2)}, &empty);
  EXPECT_TRUE(empty.calls.empty());
}

}  // namespace
}  // namespace gpuidle::internal
