// Communication: how long collectives (NCCL kernels) ran on a device, how much of that no other
// kernel overlapped, and, across the ranks of a job, how long each rank's collectives waited
// for their peers.
#ifndef GPUIDLE_LIB_ANALYSIS_COMMUNICATION_H_
#define GPUIDLE_LIB_ANALYSIS_COMMUNICATION_H_

#include <cstdint>
#include <span>
#include <vector>

#include "analysis/attribution.h"
#include "gpuidle/report.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// Union of the kernels of one kind (communication or not) clipped to the window.
std::vector<Interval> KernelUnion(const DeviceTimeline& d, Interval window, bool communication);

int64_t TotalLength(const std::vector<Interval>& v);

// Length of (a minus b); both sorted and disjoint.
int64_t LengthNotCovered(const std::vector<Interval>& a, const std::vector<Interval>& b);

// Sets DeviceReport::comm_wait_ns of every device of `report` that the ranks share, inside its
// steady state: rank r's wait in collective k = latest start of k across ranks - r's start, at
// most the kernel's duration. Collectives are matched by their order on each rank and device.
// Nothing for a single rank.
void AddCommWait(std::span<const Timeline* const> ranks, Report* report);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_COMMUNICATION_H_
