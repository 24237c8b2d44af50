// Gap records: the longest steady-state idle pieces of a run, each with the evidence that
// explains it (the call, marker or sampled stack) and where the program was.
#ifndef GPUIDLE_LIB_ANALYSIS_GAP_RECORDS_H_
#define GPUIDLE_LIB_ANALYSIS_GAP_RECORDS_H_

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "analysis/attribution.h"
#include "analysis/host_stacks.h"
#include "analysis/timeline_index.h"
#include "gpuidle/report.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// The record of an idle piece of `device`, reported as `d`.
GapRecord ToGapRecord(const TimelineIndex& index, const HostStacks& stacks,
                      const DeviceTimeline& device, const DeviceReport& d, const IdlePiece& piece);

// Keeps the n longest pieces seen.
class LongestGaps {
 public:
  explicit LongestGaps(int n) : n_(n) {}
  void Offer(GapRecord g) {
    if (n_ <= 0) return;
    if (static_cast<int>(heap_.size()) < n_) {
      heap_.push_back(std::move(g));
      std::push_heap(heap_.begin(), heap_.end(), Longer);
    } else if (Longer(g, heap_.front())) {
      std::pop_heap(heap_.begin(), heap_.end(), Longer);
      heap_.back() = std::move(g);
      std::push_heap(heap_.begin(), heap_.end(), Longer);
    }
  }
  // Cheap pre-check before building the record's strings.
  bool WouldKeep(int64_t length) const {
    return n_ > 0 && (static_cast<int>(heap_.size()) < n_ ||
                      length > heap_.front().end_ns - heap_.front().start_ns);
  }
  std::vector<GapRecord> Take() {
    std::sort(heap_.begin(), heap_.end(), Longer);
    return std::move(heap_);
  }
  // How many pieces a device had in all, kept or not: what a capped list left out.
  void CountDevice(int device, int64_t pieces) { counted_.emplace_back(device, pieces); }
  const std::vector<std::pair<int, int64_t>>& counted() const { return counted_; }

 private:
  static bool Longer(const GapRecord& a, const GapRecord& b) {
    const int64_t la = a.end_ns - a.start_ns, lb = b.end_ns - b.start_ns;
    return la != lb ? la > lb : a.start_ns < b.start_ns;
  }
  int n_;
  std::vector<GapRecord> heap_;                   // min-heap by length under Longer
  std::vector<std::pair<int, int64_t>> counted_;  // (device, pieces), in the order analysed
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_GAP_RECORDS_H_
