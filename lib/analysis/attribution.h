// Gives every idle nanosecond of one device exactly one cause (docs/ANALYSIS.md).
#ifndef GPUIDLE_LIB_ANALYSIS_ATTRIBUTION_H_
#define GPUIDLE_LIB_ANALYSIS_ATTRIBUTION_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "analysis/host_stacks.h"
#include "analysis/timeline_index.h"
#include "gpuidle/options.h"
#include "gpuidle/report.h"
#include "model/timeline.h"

namespace gpuidle::internal {

struct Interval {
  int64_t start_ns;
  int64_t end_ns;
};

// The union of the intervals: disjoint, by start; empty ones dropped.
std::vector<Interval> MergedIntervals(std::vector<Interval> v);

// A contiguous idle interval with one subcause and the evidence for it.
struct IdlePiece {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  Subcause subcause = Subcause::kUnattributed;
  int32_t gap = 0;       // ordinal of the gap (pieces of one gap share it)
  int32_t next_op = -1;  // index into the device's ops: the kernel that ended the gap
  int32_t call = -1;     // index into timeline.calls: the call that explains it
  int32_t range = -1;    // index into timeline.ranges: the marker that explains it
  int32_t stack = -1;    // HostStacks evidence: what a long host stretch was, by its stack
};

struct DeviceAttribution {
  std::vector<Interval> busy;     // merged kernel intervals inside the window
  std::vector<IdlePiece> pieces;  // tile the window minus busy exactly, in time order
  int64_t busy_ns = 0;
  absl::flat_hash_set<uint64_t> launching_threads;  // the threads that issued the ops
  std::array<int64_t, 3> op_counts{};               // the ops, by OpKind
  int64_t communication_kernels = 0;                // of the kernels, NCCL's (or alike)
};

// `last_step_end_ns`: where the host range of the last step ends (INT64_MIN without steps).
// A gap at the end of the window that begins inside a step is a loop cut off by the end of the
// trace, and goes by the rules of the gaps before it.
DeviceAttribution AttributeDevice(const TimelineIndex& index, HostStacks& stacks,
                                  const DeviceTimeline& device, Interval window,
                                  int64_t last_step_end_ns, const AnalysisOptions& options);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_ATTRIBUTION_H_
