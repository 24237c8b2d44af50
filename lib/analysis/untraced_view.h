// The program as it runs without gpuidle (docs/ANALYSIS.md, "The program without gpuidle"): a
// live capture's tracer time lands on the host's critical path, and from there in the very gaps
// the analysis measures (launch-bound ones above all). RemoveTracerTime takes it out of a
// timeline before the analysis looks at it, by the capture's TracerCostModel:
//
//  - the host: one tracer clock for the process (PyTorch's main and autograd threads take turns,
//    so their costs add up on one critical path). Each timed call moves everything after it
//    earlier by its cost; a sync that returned when the GPU's last op ended re-aligns the host
//    with the GPU (untraced, the host would have waited just as long for the same op);
//  - each device: an op moves earlier by its launching call's shift, but never earlier than
//    the end of the work before it on its device and stream (moved too): a gap shrinks by the
//    tracer time that delayed its next op, never below zero, and work the GPU had queued stays
//    where it was.
#ifndef GPUIDLE_LIB_ANALYSIS_UNTRACED_VIEW_H_
#define GPUIDLE_LIB_ANALYSIS_UNTRACED_VIEW_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "model/timeline.h"

namespace gpuidle::internal {

// How far each device's work moved, to say how much tracer time left its gaps.
class TracerShift {
 public:
  // The idle time taken out of [from_ns, to_ns] (times of the corrected timeline) on device:
  // how much further its work moved by to_ns than by from_ns; never negative.
  int64_t TakenOutNs(int device, int64_t from_ns, int64_t to_ns) const;
  // The tracer time of every timed call on the host, whether it reached a gap or not.
  int64_t host_ns() const { return host_ns_; }

 private:
  friend TracerShift RemoveTracerTime(Timeline* t);
  struct DeviceShift {
    int device = 0;
    std::vector<std::pair<int64_t, int64_t>> points;  // (corrected op start, shift), by time
  };
  int64_t ShiftAt(const DeviceShift& d, int64_t t) const;
  std::vector<DeviceShift> devices_;
  int64_t host_ns_ = 0;
};

// Moves t's host calls, ranges, samples, lost-record spans and device ops to where they would
// have been without the tracer (t->info.tracer_cost; nothing moves without one) and sorts them
// again.
TracerShift RemoveTracerTime(Timeline* t);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_UNTRACED_VIEW_H_
