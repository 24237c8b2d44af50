#include "collect/lost_records.h"

#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuidle::internal {
namespace {

using ::testing::IsEmpty;
using ::testing::SizeIs;

TEST(LostRecordLog, MergesOverlappingAndTouchingSpansInTimeOrderAndSumsTheirRecords) {
  LostRecordLog log;
  log.Add(500, 600, 2);
  log.Add(100, 200, 1);
  log.Add(150, 300, 4);  // overlaps the second
  log.Add(300, 350, 0);  // touches it: an unknown number
  log.Add(900, 800, 7);  // ends before it starts: the instant 900
  const std::vector<LostRecordSpan> spans = log.Take();
  ASSERT_THAT(spans, SizeIs(3));
  EXPECT_EQ(spans[0].start_ns, 100);
  EXPECT_EQ(spans[0].end_ns, 350);
  EXPECT_EQ(spans[0].records, 5u);
  EXPECT_EQ(spans[1].start_ns, 500);
  EXPECT_EQ(spans[1].end_ns, 600);
  EXPECT_EQ(spans[1].records, 2u);
  EXPECT_EQ(spans[2].start_ns, 900);
  EXPECT_EQ(spans[2].end_ns, 900);
  EXPECT_TRUE(log.empty()) << "Take empties the log";
  EXPECT_THAT(log.Take(), IsEmpty());
}

TEST(LostRecordLog, StaysBoundedAndStillCoversEverySpanItWasGiven) {
  constexpr size_t kMax = 8;
  LostRecordLog log(kMax);
  std::vector<LostRecordSpan> given;
  uint64_t records = 0;
  for (int64_t i = 0; i < 1000; ++i) {
    given.push_back({i * 100, i * 100 + 10, static_cast<uint64_t>(i % 3)});
    records += static_cast<uint64_t>(i % 3);
    log.Add(given.back().start_ns, given.back().end_ns, given.back().records);
  }
  const std::vector<LostRecordSpan> spans = log.Take();
  EXPECT_LE(spans.size(), kMax);
  uint64_t counted = 0;
  for (size_t i = 0; i < spans.size(); ++i) {
    counted += spans[i].records;
    if (i > 0) EXPECT_LT(spans[i - 1].end_ns, spans[i].start_ns) << "sorted, not overlapping";
  }
  EXPECT_EQ(counted, records) << "merging keeps every record counted";
  for (const LostRecordSpan& g : given) {
    bool covered = false;
    for (const LostRecordSpan& s : spans) {
      covered |= s.start_ns <= g.start_ns && g.end_ns <= s.end_ns;
    }
    EXPECT_TRUE(covered) << "[" << g.start_ns << ", " << g.end_ns << "] left uncovered";
  }
}

TEST(LostRecordTracker, RecordsDroppedAreLostSinceTheirQueuesPreviousCompletedBuffer) {
  LostRecordTracker tracker;
  tracker.Start(1000);
  tracker.NoteCompletion(/*context=*/1, /*stream=*/0, 2000, 0);
  tracker.NoteCompletion(2, 0, 2500, 3);  // the first of its queue: since the start
  tracker.NoteCompletion(1, 0, 4000, 5);  // since its queue's buffer at 2000
  const std::vector<LostRecordSpan> spans = tracker.Finish();
  ASSERT_THAT(spans, SizeIs(1));  // 1000-2500 and 2000-4000 overlap
  EXPECT_EQ(spans[0].start_ns, 1000);
  EXPECT_EQ(spans[0].end_ns, 4000);
  EXPECT_EQ(spans[0].records, 8u);
  EXPECT_EQ(tracker.last().size(), 1u);
}

TEST(LostRecordTracker, NotesNothingOutsideACollectionAndACancelledStartKeepsTheLastSpans) {
  LostRecordTracker tracker;
  tracker.NoteCompletion(1, 0, 2000, 9);  // before any start
  tracker.Start(3000);
  tracker.AddUntil(3500, 4000);
  EXPECT_THAT(tracker.Finish(), SizeIs(1));
  tracker.NoteCompletion(1, 0, 5000, 9);  // after the stop
  tracker.Start(6000);
  tracker.NoteCompletion(1, 0, 7000, 1);
  tracker.Cancel();
  EXPECT_EQ(tracker.last().size(), 1u);
  EXPECT_EQ(tracker.last()[0].start_ns, 3500);
  tracker.Start(8000);
  EXPECT_THAT(tracker.Finish(), IsEmpty());
}

TEST(LostRecordTracker, QueuesBeyondItsLimitCountFromTheStart) {
  LostRecordTracker tracker;
  tracker.Start(100);
  for (uintptr_t q = 0; q < LostRecordTracker::kMaxQueues; ++q)
    tracker.NoteCompletion(q, 0, 200, 0);
  tracker.NoteCompletion(LostRecordTracker::kMaxQueues, 0, 300, 0);  // not remembered
  tracker.NoteCompletion(LostRecordTracker::kMaxQueues, 0, 900, 2);
  const std::vector<LostRecordSpan> spans = tracker.Finish();
  ASSERT_THAT(spans, SizeIs(1));
  EXPECT_EQ(spans[0].start_ns, 100);
  EXPECT_EQ(spans[0].end_ns, 900);
}

}  // namespace
}  // namespace gpuidle::internal
