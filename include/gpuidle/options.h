// The options of gpuidle: the analysis's thresholds and limits (AnalysisOptions; defaults
// calibrated on the ground-truth traces in tests/data/traces, see docs/ANALYSIS.md) and what a
// live collection records and writes (ProfilerOptions). gpuidle/settings.h sets them by name.
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
  // Advice is given for every subcause with at least this share of all lost time (idle, plus
  // waiting for peers) and at least advice_min_steady_share of the steady state ...
  double advice_min_share = 0.05;
  double advice_min_steady_share = 0.01;
  // ... and only where the steady state lost at least this share of itself, over all devices:
  // below it the report says there is nothing worth fixing (Report::verdict; docs/ANALYSIS.md,
  // "Nothing worth fixing").
  double worth_fixing_min_share = 0.05;

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

// What to record and where the results go. Every field has a GPUIDLE_* environment variable
// (docs/CPP_API.md lists them); ProfilerOptionsFromEnvironment() reads them.
struct ProfilerOptions {
  AnalysisOptions analysis;

  // Where the report is written when collection stops ("" = nowhere). The path may hold
  // placeholders so that ranks and subprocesses never overwrite each other: %p (process id),
  // %r (distributed rank from RANK / OMPI_COMM_WORLD_RANK / PMI_RANK / SLURM_PROCID, "0" if
  // none), %h (host name), %% (a percent sign). An existing file is never replaced: the report
  // then goes to a name with the process id added.                      GPUIDLE_OUT
  std::string report_path;
  // "text", "json" or "html"; "" takes it from report_path's extension. GPUIDLE_FORMAT
  std::string report_format;
  // Where the recorded timeline is written ("" = nowhere), same placeholders. A gpuidle trace
  // (docs/TRACE_FORMAT.md): Perfetto UI opens it, `gpuidle analyze` reads it.  GPUIDLE_TRACE
  std::string trace_path;
  // Print the text summary on stderr when collection stops.            GPUIDLE_QUIET=1 clears
  bool print_summary = true;
  // Colours in the summary printed on stderr: "auto" (on a terminal, unless NO_COLOR is set),
  // "always" or "never"; files never get colour.                         GPUIDLE_COLOR
  std::string color = "auto";

  // Memory bound: collection stops after this many records; the report then says so and covers
  // the time until then.                                                GPUIDLE_MAX_RECORDS
  int64_t max_records = 20'000'000;
  // CUPTI activity buffers: preallocated, never more than this much.   GPUIDLE_BUFFER_MB
  int buffer_pool_mb = 64;

  // In Python processes: how often the Python stacks of the threads that launch CUDA work are
  // sampled while they are away from CUDA for long (evidence for host stretches); 0 turns the
  // sampling off.                                                       GPUIDLE_HOST_SAMPLE_MS
  int64_t host_sample_period_ns = 5'000'000;
  // How often each GPU the collection uses is read through the driver's NVML (clocks, power,
  // temperature, PCIe link, memory, other processes: docs/ANALYSIS.md, "GPU metrics"); 0 turns
  // the readings off.                                                   GPUIDLE_GPU_METRICS_MS
  int64_t gpu_metrics_period_ns = 100'000'000;
  // How long each sample of CUPTI's PM sampling of a used GPU's throughput lasts (SM and tensor
  // activity, DRAM, PCIe, NVLink: docs/ANALYSIS.md, "GPU throughput"); 0 turns it off. Off by
  // default until it has been proven on a GPU (10 ms is the rate it is built for).
  //                                                                 GPUIDLE_GPU_THROUGHPUT_MS
  int64_t gpu_throughput_interval_ns = 0;
  // gpuidle run and LD_PRELOAD load gpuidle's Python layer into Python programs (DataLoader
  // marks, call sites, steps, host stacks); false leaves Python programs alone.  GPUIDLE_PYTHON
  bool python_integration = true;

  // Sampled collection, for long jobs: record sample_window_ns of every sample_period_ns, with
  // CUPTI detached in between; each window is analysed as it closes and the report aggregates
  // them and states its coverage (Report::coverage). 0: record everything.  GPUIDLE_SAMPLE=W/P
  // The first window may be longer (sample_first_window_ns; 0: as the others). "auto", the
  // default of gpuidle run and LD_PRELOAD: the first 60 s whole, then 1 s of every 40 s.
  int64_t sample_window_ns = 0;
  int64_t sample_period_ns = 0;
  int64_t sample_first_window_ns = 0;
  // Every this often while collecting, the report of the windows closed so far: written to
  // summary_path (replaced each time) or, without one, printed on stderr. Without sampling, the
  // collection is then cut into windows of this length (nothing is left out).
  int64_t summary_every_ns = 0;  //                                     GPUIDLE_SUMMARY_EVERY_S
  std::string summary_path;      // same placeholders as report_path.   GPUIDLE_SUMMARY_FILE
  // Prometheus text-format metrics (docs/METRICS.md), updated as windows close: a file replaced
  // in place (node_exporter's textfile collector), and/or served on 127.0.0.1:metrics_port
  // (plus LOCAL_RANK, so that the ranks of one host do not collide).  GPUIDLE_METRICS_FILE,
  std::string metrics_path;  //                                          GPUIDLE_METRICS_PORT
  int metrics_port = 0;
};

}  // namespace gpuidle

#endif  // GPUIDLE_INCLUDE_GPUIDLE_OPTIONS_H_
