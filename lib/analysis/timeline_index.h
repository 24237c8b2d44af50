// Lookups over a whole Timeline that the per-device analysis shares: correlation joins,
// enclosing framework ops / Python frames, which ranges are data waits.
#ifndef GPUIDLE_LIB_ANALYSIS_TIMELINE_INDEX_H_
#define GPUIDLE_LIB_ANALYSIS_TIMELINE_INDEX_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analysis/range_index.h"
#include "gpuidle/options.h"
#include "model/timeline.h"

namespace gpuidle::internal {

class TimelineIndex {
 public:
  TimelineIndex(const Timeline& timeline, const AnalysisOptions& options);

  const Timeline& timeline() const { return timeline_; }

  // Index into timeline.calls of the host call that issued op `op` of `device` (joined by
  // correlation id once, here), or -1.
  int32_t IssuingCall(const DeviceTimeline& device, int32_t op) const {
    return issuing_call_[&device - timeline_.devices.data()][op];
  }
  // Direction of the memcpy a copy call issued (kUnknown if none was joined).
  CopyKind CopyKindOfCall(int32_t call) const { return call_copy_kind_[call]; }
  bool IsDataRange(int32_t range) const { return range_is_data_[range]; }
  const std::vector<int32_t>& data_ranges() const { return data_ranges_; }

  const RangeIndex& framework_ops() const { return framework_ops_; }
  const RangeIndex& python_frames() const { return python_frames_; }
  // True if thread issued a launch call within [start, end).
  bool LaunchedWithin(uint64_t thread, int64_t start, int64_t end) const;

  // "aten::item at train.py(42): step": the outermost framework op and the innermost user
  // Python frame around time t on thread, as far as the trace has them ("" if neither).
  std::string CallSite(uint64_t thread, int64_t t) const;
  // The innermost Python frame of the program's own code around time t on thread: its range's
  // index, or -1.
  int32_t UserPythonFrame(uint64_t thread, int64_t t) const;

 private:
  const Timeline& timeline_;
  std::vector<std::vector<int32_t>> issuing_call_;  // per device, per op
  std::vector<CopyKind> call_copy_kind_;
  std::vector<bool> range_is_data_;
  std::vector<int32_t> data_ranges_;
  absl::flat_hash_map<uint64_t, std::vector<int64_t>> launch_starts_by_thread_;
  RangeIndex framework_ops_;
  RangeIndex python_frames_;
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_TIMELINE_INDEX_H_
