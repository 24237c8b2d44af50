// Answers "which range of this kind encloses time t on thread th?" in O(log n + depth).
//
// Ranges of one thread are properly nested (a call stack), so the innermost range that
// contains t is an ancestor-or-self of the last range that started at or before t.
#ifndef GPUIDLE_LIB_ANALYSIS_RANGE_INDEX_H_
#define GPUIDLE_LIB_ANALYSIS_RANGE_INDEX_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "model/timeline.h"

namespace gpuidle::internal {

class RangeIndex {
 public:
  static constexpr int32_t kNone = -1;

  // Indexes the ranges of `timeline` for which `keep` is true.
  RangeIndex(const Timeline& timeline, const std::function<bool(const Range&)>& keep);

  // Index into timeline.ranges of the innermost / outermost kept range on `thread` that
  // contains t (start <= t < end), or kNone.
  int32_t Innermost(uint64_t thread, int64_t t) const;
  int32_t Outermost(uint64_t thread, int64_t t) const;
  // Innermost containing range for which `accept` is true, or kNone.
  int32_t InnermostMatching(uint64_t thread, int64_t t,
                            const std::function<bool(const Range&)>& accept) const;

  // Every kept range on `thread` that contains t, innermost first.
  std::vector<int32_t> Enclosing(uint64_t thread, int64_t t) const;
  // The threads that have kept ranges.
  std::vector<uint64_t> Threads() const;

  // The outermost kept ranges of `thread` (no kept ancestor), as indices into timeline.ranges.
  std::vector<int32_t> Roots(uint64_t thread) const;

 private:
  struct Node {
    int64_t start_ns;
    int32_t range;   // index into timeline.ranges
    int32_t parent;  // index into the same thread's node vector, or kNone
  };
  const std::vector<Node>* NodesOf(uint64_t thread) const;
  int32_t LastStartedAtOrBefore(const std::vector<Node>& nodes, int64_t t) const;

  const Timeline& timeline_;
  absl::flat_hash_map<uint64_t, std::vector<Node>> by_thread_;
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_RANGE_INDEX_H_
