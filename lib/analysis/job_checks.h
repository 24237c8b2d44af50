// Checks that the traces given together are one job: each rank once, all of them, on one clock.
// What they find is a warning, never an error: the analysis of what is there stays valid, but
// cross-rank results (waits for peers, the straggler) may not be.
#ifndef GPUIDLE_LIB_ANALYSIS_JOB_CHECKS_H_
#define GPUIDLE_LIB_ANALYSIS_JOB_CHECKS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuidle::internal {

// What the checks need of one input.
struct JobMember {
  std::optional<int> rank;
  std::optional<int> world_size;
  // Its activity window, if it has activity.
  std::optional<int64_t> start_ns, end_ns;
};

// One line per problem, naming the inputs (`names[i]` is the input of `members[i]`):
//   - two or more inputs claim one rank;
//   - the inputs' activity windows do not all overlap (not one job, or clocks that differ);
//   - the inputs disagree on world_size, or world_size W has ranks missing (named).
// A single input is one process, not a job: it gets no warnings.
std::vector<std::string> CheckJob(const std::vector<JobMember>& members,
                                  const std::vector<std::string>& names);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_JOB_CHECKS_H_
