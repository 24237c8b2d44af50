// Checks that the traces given together are one job: each rank once, all of them, on one clock.
// What they find is a warning, never an error: the analysis of what is there stays valid, but
// cross-rank results (comm_wait) may not be.
#ifndef GPUIDLE_LIB_INGEST_JOB_CHECKS_H_
#define GPUIDLE_LIB_INGEST_JOB_CHECKS_H_

#include <string>
#include <vector>

#include "model/timeline.h"

namespace gpuidle::internal {

// One line per problem, naming the inputs (`names[i]` is the input of `timelines[i]`):
//   - two or more inputs claim one rank;
//   - the inputs' activity windows do not all overlap (not one job, or clocks that differ);
//   - the inputs disagree on world_size, or world_size W has ranks missing (named).
// A single input is one process, not a job: it gets no warnings.
std::vector<std::string> CheckJob(const std::vector<const Timeline*>& timelines,
                                  const std::vector<std::string>& names);

// Appends CheckJob's warnings to the first timeline's info.warnings, where a job's warnings go.
void AddJobWarnings(std::vector<Timeline>& timelines, const std::vector<std::string>& names);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_INGEST_JOB_CHECKS_H_
