// Periodic host work in the steady state — checkpointing, evaluation, logging — as one row each
// (docs/ANALYSIS.md, "Periodic work"). A torch.save every few steps makes the GPU idle under two
// causes: data_starved.host while it pickles and writes (the sampled stack shows
// torch/serialization.py) and sync_bound.host_sync while it copies the state to the host (the
// copy's call site is the same program line). Both are one activity with one cost per
// occurrence and one family of fixes.
//
// The evidence, per idle piece: the sampled stack's activity where there is one, else the name
// of the program's function at the piece's call site (evaluate, validation_step, log_metrics,
// save_checkpoint, ...). A program line seen doing checkpointing or logging in its stacks makes
// every piece at that line the same activity. Pieces of one activity and function within one step
// (without steps: less than 50 ms apart) are one occurrence.
#ifndef GPUIDLE_LIB_ANALYSIS_PERIODIC_WORK_H_
#define GPUIDLE_LIB_ANALYSIS_PERIODIC_WORK_H_

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/string_view.h"
#include "analysis/attribution.h"
#include "analysis/host_stacks.h"
#include "analysis/timeline_index.h"
#include "gpuidle/report.h"

namespace gpuidle::internal {

// The periodic activity a function's name says it does ("" when it says none).
absl::string_view ActivityOfFunction(absl::string_view function);

// "file:line" and the function of a site as call sites and sampled frames write it: "file:line
// in f", "op at file:line in f", "file(line): f", "file:line f". Empty when it has no line.
struct ProgramLine {
  std::string line;  // "file:line"
  std::string function;
  bool line_starts_function = false;  // torch.profiler's frames: the function's first line
};
ProgramLine ParseProgramLine(absl::string_view site);

// Folds `more` (another window's or rank's) into `into`: rows of the same activity and site add
// up; most idle first.
void MergePeriodicWork(const std::vector<PeriodicWork>& more, std::vector<PeriodicWork>* into);

class PeriodicWorkTable {
 public:
  PeriodicWorkTable(const TimelineIndex& index, const HostStacks& stacks)
      : index_(index), stacks_(stacks) {}

  // One device's steady-state pieces and its steps' spans (none: empty).
  void AddDevice(const DeviceTimeline& device, const std::vector<IdlePiece>& steady,
                 const std::vector<Interval>& steps);
  // The activities with at least two occurrences and at least min_share of the steady state's
  // time (steady_ns, all devices), most idle first.
  std::vector<PeriodicWork> Take(int64_t steady_ns, double min_share) const;

 private:
  using RowId = std::tuple<std::string, std::string, std::string>;  // activity, file, function
  struct Row {
    int64_t occurrences = 0;
    int64_t span_ns = 0;
    IdleBreakdown idle;
    std::map<std::string, int64_t> idle_by_line;
  };
  // Where the piece was issued from, as offenders find it (nullptr when unknown).
  const ProgramLine* SiteOf(const DeviceTimeline& device, const IdlePiece& piece) const;
  // ParseProgramLine(site), once per site (nullptr: no line).
  const ProgramLine* Parsed(absl::string_view site) const;
  // The lines of the program's functions named for an activity (its Python frame ranges).
  void LearnFunctions();

  const TimelineIndex& index_;
  const HostStacks& stacks_;
  mutable absl::node_hash_map<std::string, ProgramLine> lines_;  // by site: stable addresses
  absl::flat_hash_map<std::string, absl::string_view> activity_of_line_;
  bool learned_functions_ = false;
  absl::flat_hash_set<std::string> function_start_lines_;  // lines known only as a def's
  std::map<RowId, Row> rows_;
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_PERIODIC_WORK_H_
