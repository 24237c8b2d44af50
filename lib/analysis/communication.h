// Communication: how long collectives (NCCL kernels) ran on a device, how much of that no other
// kernel overlapped, and, across the ranks of a job, how long each rank's collectives waited
// for their peers.
#ifndef GPUIDLE_LIB_ANALYSIS_COMMUNICATION_H_
#define GPUIDLE_LIB_ANALYSIS_COMMUNICATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "analysis/attribution.h"
#include "gpuidle/report.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// Union of the kernels of one kind (communication or not) clipped to the window.
std::vector<Interval> KernelUnion(const DeviceTimeline& d, Interval window, bool communication);

int64_t TotalLength(const std::vector<Interval>& v);

// Length of (a minus b); both sorted and disjoint.
int64_t LengthNotCovered(const std::vector<Interval>& a, const std::vector<Interval>& b);

// The collective a communication kernel runs, from its name: "allreduce" for
// ncclDevKernel_AllReduce_Sum_f32_RING_LL (NCCL 2.19 and later) and ncclKernel_AllReduce_RING_LL_
// Sum_float (earlier), "sendrecv", "allgather", ...; other names up to their argument list.
std::string CollectiveOpOfKernel(absl::string_view kernel_name);

// Fills DeviceReport::collectives (per kind: the trace's process group and collective, else the
// kernel's; steady state only) and collective_timings (docs/ANALYSIS.md, "Many ranks").
// `compute` is the union of the other kernels in the steady state.
void AddCollectives(const Timeline& t, const DeviceTimeline& d, Interval window,
                    const std::vector<Interval>& compute, DeviceReport* report);

// Orders DeviceReport::collectives most time first (the rows follow their kinds).
void SortCollectives(DeviceReport* report);

// Adds the collectives of `from` (a later window of the same device) to `to`: kinds summed, rows
// appended while there is room (DeviceReport::kMaxCollectiveRows), the rest counted.
void AddCollectivesOf(const DeviceReport& from, DeviceReport* to);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_COMMUNICATION_H_
