// Thresholds and limits of the idle analysis. Defaults are calibrated on the ground-truth
// traces in tests/data/traces (see docs/ANALYSIS.md).
//
//   gpuidle::AnalysisOptions options;
//   options.launch_gap_max_ns = 1'000'000;  // eager code with heavy Python between ops
#ifndef GPUIDLE_INCLUDE_GPUIDLE_OPTIONS_H_
#define GPUIDLE_INCLUDE_GPUIDLE_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace gpuidle {

struct AnalysisOptions {
  // A stretch of host time outside CUDA calls shorter than this, between two CUDA calls of the
  // launching threads, is part of issuing GPU work (launch_bound.launch_overhead); a longer one
  // is host work that starved the GPU (data_starved.host). Eager PyTorch spends tens to
  // hundreds of microseconds of framework dispatch between launches.
  int64_t launch_gap_max_ns = 1'000'000;

  // Queued work normally starts a few microseconds after the GPU is free (under 6 us on the
  // H200 traces in tests/data). Up to this much of a queued wait with no other evidence is
  // launch_bound.kernel_gap; beyond it the GPU waited on something the trace does not show
  // (work recorded outside the window, another process) and the rest is unattributed.
  int64_t dispatch_latency_max_ns = 100'000;

  // One-off work (docs/ANALYSIS.md, "Phases"): the first call of an operation (a CUDA call, a
  // framework op) that lasts at least one_off_min_ns and first_call_ratio times the median of
  // its later calls is one-off (library initialisation, autotuning, lazy module loading), as is
  // the first CUDA call of a thread that lasts one_off_min_ns (context creation).
  int64_t one_off_min_ns = 1'000'000;
  double first_call_ratio = 10;

  // Host ranges whose name contains one of these (case-insensitive) are data waits.
  std::vector<std::string> data_range_patterns = {"DataLoader", "gpuidle.data", "data_load",
                                                  "dataload",   "next_batch",   "load_batch"};

  // Warm-up: the first this many steps (step ranges, in time order) are left out, and the window
  // begins where the next one begins. Like torch.profiler's warm-up steps, for start-up costs
  // that are not the program's own: a profiler's (CUPTI spends milliseconds on the first call
  // of each thread after a collection starts), the allocator's, cuDNN's autotuning. A timeline
  // with no more steps than this cannot be analysed (FailedPrecondition).
  int skip_steps = 0;

  // How many of the longest gap records the report keeps.
  int max_gap_records = 50;
  // How many offenders the report keeps.
  int max_offenders = 20;
  // Advice is given for every subcause with at least this share of all idle time.
  double advice_min_share = 0.05;

  // A live capture's own cost (the tracer's time on the host) is taken out of the timeline
  // before the analysis, so that the report describes the program as it runs without gpuidle
  // (docs/ANALYSIS.md, "The program without gpuidle"). True: analyse the timeline as recorded.
  bool as_recorded = false;
};

// How SaveReport writes.
struct SaveOptions {
  std::string format;  // "text" or "json"; empty: from the extension (".json", ".json.gz")
  // Replace an existing file. Even then gpuidle replaces only a regular file that you may write:
  // never a symbolic link, a directory, a device or FIFO, a read-only file or an input.
  bool overwrite = false;
};

}  // namespace gpuidle

#endif  // GPUIDLE_INCLUDE_GPUIDLE_OPTIONS_H_
