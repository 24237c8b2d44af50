// Start-up, steady state, wind-down, and the one-off work wherever it falls (docs/ANALYSIS.md,
// "Phases"). The headline describes the steady state; one-off time is reported apart.
#ifndef GPUIDLE_LIB_ANALYSIS_PHASES_H_
#define GPUIDLE_LIB_ANALYSIS_PHASES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "analysis/attribution.h"
#include "analysis/host_stacks.h"
#include "analysis/timeline_index.h"
#include "gpuidle/options.h"
#include "gpuidle/report.h"

namespace gpuidle::internal {

// A stretch of one-off host work of the process.
struct OneOffSpan {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  OneOffKind kind = OneOffKind::kFirstCall;
  std::string evidence;  // "cuModuleLoadData", "first aten::linear"
  uint64_t thread = 0;
  // Compilation inferred from a module load alone (the host stretch before it), which sampled
  // stacks may contradict: a load from a warm cache after other host work.
  bool inferred = false;
  // ... from a load of code compiled ahead of time (cuLibraryLoad*: the CUDA runtime loads a
  // program's own kernels at their first launch, after whatever host work came before): then
  // compilation only where sampled stacks show a compiler.
  bool needs_compiler_stacks = false;
};

// The one-off host work of one process, sorted by start (spans may overlap): initialisation
// calls and slow first CUDA calls of threads, module loads and the compilation before them
// (unless the stacks sampled there show other work; before a load of code compiled ahead of time,
// only where they show a compiler), compilation seen in sampled stacks or named by the
// compiler's own ranges (torch.compile's), first calls far slower than the later calls of the
// same operation.
std::vector<OneOffSpan> FindOneOffSpans(const TimelineIndex& index, HostStacks& stacks,
                                        const AnalysisOptions& options);

// One device's attribution split by phase: the steady-state idle pieces that the headline
// counts, and the one-off time.
struct PhasedDevice {
  std::vector<IdlePiece> steady;  // in time order, inside [steady.start, steady.end)
  int64_t steady_busy_ns = 0;
  std::vector<OneOffTime> one_off;  // by phase, then most time first
};

// `warm_up` is the span of a warm-up step inside the start-up (empty if none). In the steady
// state only the spans of `launching_threads` (the device's) count.
PhasedDevice SplitPhases(const DeviceAttribution& attribution, Interval steady, Interval warm_up,
                         const std::vector<OneOffSpan>& spans,
                         const absl::flat_hash_set<uint64_t>& launching_threads,
                         const HostStacks& stacks);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_PHASES_H_
