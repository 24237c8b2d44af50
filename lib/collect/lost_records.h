// When a live capture lost records, so that the analysis can leave that time out of idle time
// instead of reading missing kernels as an idle GPU (docs/RELIABILITY.md, "activity buffers
// exhausted"). CUPTI only counts what it drops, at the next completed buffer of the queue that
// dropped it: the records were lost between that queue's previous completed buffer and this
// one. Other losses have a start and run to the end of the collection: another CUPTI client
// taking gpuidle's buffers, the record limit.
#ifndef GPUIDLE_LIB_COLLECT_LOST_RECORDS_H_
#define GPUIDLE_LIB_COLLECT_LOST_RECORDS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// LostRecordSpan (model/timeline.h): the timeline's clock, where records may be missing.

// The lost-record spans of one collection, bounded: past max_spans, neighbouring spans are
// merged (the covered time only grows, so nothing lost is ever left uncovered). Not
// thread-safe (the collector locks it).
class LostRecordLog {
 public:
  static constexpr size_t kMaxSpans = 1024;
  explicit LostRecordLog(size_t max_spans = kMaxSpans)
      : max_spans_(max_spans < 2 ? 2 : max_spans) {}

  // A span that ends before it starts is taken as the instant of its start.
  void Add(int64_t start_ns, int64_t end_ns, uint64_t records);
  // The spans sorted by start, overlapping and touching ones merged (their records summed); the
  // log is empty afterwards.
  std::vector<LostRecordSpan> Take();
  bool empty() const { return spans_.empty(); }

 private:
  // Sorts and merges; then halves the count until at most at_most spans are left.
  void Compact(size_t at_most);

  size_t max_spans_;
  std::vector<LostRecordSpan> spans_;
};

inline void LostRecordLog::Add(int64_t start_ns, int64_t end_ns, uint64_t records) {
  spans_.push_back(LostRecordSpan{start_ns, std::max(start_ns, end_ns), records});
  // Compacted to half the limit, so that the next compaction is max_spans / 2 spans away.
  if (spans_.size() > max_spans_) Compact(max_spans_ / 2);
}

inline void LostRecordLog::Compact(size_t at_most) {
  std::sort(spans_.begin(), spans_.end(), [](const LostRecordSpan& a, const LostRecordSpan& b) {
    return a.start_ns < b.start_ns;
  });
  std::vector<LostRecordSpan> merged;
  merged.reserve(spans_.size());
  for (const LostRecordSpan& s : spans_) {
    if (!merged.empty() && s.start_ns <= merged.back().end_ns) {
      merged.back().end_ns = std::max(merged.back().end_ns, s.end_ns);
      merged.back().records += s.records;
    } else {
      merged.push_back(s);
    }
  }
  // Still too many: each pair of neighbours becomes one span covering both (and the gap
  // between them), halving the count.
  while (merged.size() > at_most) {
    std::vector<LostRecordSpan> halved;
    halved.reserve(merged.size() / 2 + 1);
    for (size_t i = 0; i < merged.size(); i += 2) {
      LostRecordSpan s = merged[i];
      if (i + 1 < merged.size()) {
        s.end_ns = std::max(s.end_ns, merged[i + 1].end_ns);
        s.records += merged[i + 1].records;
      }
      halved.push_back(s);
    }
    merged.swap(halved);
  }
  spans_.swap(merged);
}

inline std::vector<LostRecordSpan> LostRecordLog::Take() {
  Compact(max_spans_);
  std::vector<LostRecordSpan> taken;
  taken.swap(spans_);
  return taken;
}

// The lost records of the running collection, from CUPTI's callbacks and the collector's stop.
// Thread-safe.
class LostRecordTracker {
 public:
  // Far more queues than any program has (one per context, or per stream): the rest count from
  // the collection's start.
  static constexpr size_t kMaxQueues = 4096;

  // A collection starts at started_ns: what it lost so far is forgotten.
  void Start(int64_t started_ns);
  // A completed buffer of one queue (context, stream) at now_ns, with what CUPTI dropped of
  // that queue since its last one: those records were lost between the two.
  void NoteCompletion(uintptr_t context, uint32_t stream, int64_t now_ns, uint64_t dropped);
  // Records were lost from from_ns to the stop at now_ns (count unknown).
  void AddUntil(int64_t from_ns, int64_t now_ns);
  // A start that failed: stops noting, forgets its spans.
  void Cancel();
  // Stops noting; the collection's spans (LostRecordLog::Take), also kept for last().
  std::vector<LostRecordSpan> Finish();
  // The spans of the last finished collection.
  std::vector<LostRecordSpan> last() const;
  int64_t started_ns() const;
  // In a forked child: a fresh lock, nothing noted.
  void AbandonAfterFork();

 private:
  mutable std::mutex mu_;
  bool noting_ = false;
  int64_t started_ns_ = 0;
  absl::flat_hash_map<std::pair<uintptr_t, uint32_t>, int64_t> last_completion_ns_;
  LostRecordLog log_;
  std::vector<LostRecordSpan> last_;
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_LOST_RECORDS_H_
