// The process's profiling session: owns the collector's lifetime, turns a stopped collection
// into a report and the configured outputs, and keeps gpuidle harmless in the host process
// (one warning line and inert on any failure; fork children never collect; a collection still
// running at exit is stopped and written by an atexit handler, before CUDA tears down).
#ifndef GPUIDLE_LIB_SESSION_SESSION_H_
#define GPUIDLE_LIB_SESSION_SESSION_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "collect/collection.h"
#include "core/log.h"  // Warn, Note: the session's users print through them too
#include "core/output_file.h"
#include "gpuidle/profiler.h"
#include "gpuidle/report.h"
#include "model/timeline.h"
#include "session/gpu_metrics_sampler.h"
#include "session/gpu_throughput_sampler.h"
#include "session/host_samples.h"
#include "session/outputs.h"
#include "session/sampled_windows.h"

namespace gpuidle::internal {

class Session : private WindowedCollection {
 public:
  static Session& Get();

  // Starts collecting for owner (a Profiler, or the injection). Prints one warning line and
  // returns the error if gpuidle cannot collect.
  absl::Status Start(const ProfilerOptions& options, const void* owner, absl::string_view how);
  // Stops the collection of owner: analyses, prints the summary, writes the configured outputs.
  // A write failure is warned about and kept in the result's output_status. CUPTI is
  // detached unless the program is exiting (kStayAttached), as the exit handler's stop does.
  absl::StatusOr<std::shared_ptr<const CollectionResult>> Stop(
      const void* owner, CuptiAfterStop after = CuptiAfterStop::kDetach);
  bool CollectingFor(const void* owner) const;
  // Whether CUDA activity is recorded right now (gpuidle::Recording): lock-free.
  bool Recording() const noexcept override { return recording_.load(std::memory_order_relaxed); }

  // The running collection, whoever started it, for language bindings.
  struct State {
    bool collecting = false;
    bool injected = false;              // started by the injection (gpuidle run, LD_PRELOAD)
    std::string started_by;             // "LD_PRELOAD", "the C++ API", ...
    int64_t host_sample_period_ns = 0;  // ProfilerOptions::host_sample_period_ns
    int64_t launch_gap_max_ns = 0;
  };
  State CurrentState() const;
  // Stops the running collection whoever owns it (torch.profiler is about to take CUPTI), as
  // Stop does; FailedPrecondition if nothing collects.
  absl::Status StopAny();

  // For bindings that print the summary themselves and so collect with print_summary off: the
  // summary is printed on stderr when a terminating signal stops the collection (the binding
  // has no chance to). gpuidle::SetSummaryAtSignal.
  void SetSummaryAtSignal(bool print) { summary_at_signal_.store(print); }

  // Host stack samples of the running collection (a language binding's sampler; DESIGN.md,
  // evidence for host stretches): each (OS thread id, stack) taken at time_ns on the timeline's
  // clock. Ignored when nothing collects; bounded (HostSampleBuffer). Never takes the session's
  // main lock.
  void RecordHostSamples(int64_t time_ns,
                         const std::vector<std::pair<uint64_t, std::string>>& samples);

  // Writes text to the expanded path pattern without replacing anything; returns the path.
  static absl::StatusOr<std::string> WriteOutput(absl::string_view pattern, absl::string_view text);
  // The same with contents that `produce` writes in pieces (a trace).
  static absl::StatusOr<std::string> WriteOutput(
      absl::string_view pattern, absl::FunctionRef<absl::Status(OutputStream&)> produce);

 private:
  Session() = default;
  // Stops the collection whose lock is held: the window thread first (lock released while it
  // is joined), then StopLocked. FailedPrecondition when nothing collects (any more).
  absl::StatusOr<std::shared_ptr<const CollectionResult>> StopHolding(
      std::unique_lock<std::mutex>& lock, CuptiAfterStop after);
  absl::StatusOr<std::shared_ptr<const CollectionResult>> StopLocked(CuptiAfterStop after);
  // Stops recording and analyses what was recorded with `analysis` (no outputs); gpu_work says
  // whether the timeline shows GPU work of the process.
  absl::StatusOr<std::shared_ptr<CollectionResult>> CloseCollectionLocked(
      CuptiAfterStop after, const AnalysisOptions& analysis, bool* gpu_work);
  // WindowedCollection, for the sampled windows (their thread holds mu_); Recording() above.
  absl::StatusOr<std::shared_ptr<CollectionResult>> CloseWindow(CuptiAfterStop after,
                                                                const AnalysisOptions& analysis,
                                                                bool* gpu_work) override {
    return CloseCollectionLocked(after, analysis, gpu_work);
  }
  absl::Status OpenWindow() override;
  // The summary, report and trace; the trace draws window_report's gaps where given (the last
  // window of a sampled collection), else the result's.
  void WriteOutputsLocked(bool gpu_work, const Report* window_report, CollectionResult* result);
  static void StopAtExit();
  // A terminating signal's last chance (core/termination_signals.h): the collection stopped,
  // analysed and written as at exit (nothing when nothing collects).
  static void StopForSignal(int signal);
  static void AfterForkInChild();
  // The GPU-metrics sampler of the collection or window that starts
  // (ProfilerOptions::gpu_metrics_period_ns; 0: off), and, at its close, its readings into the
  // timeline; an NVML that cannot be loaded is said (once per reason) only where the period was
  // set to other than its default.
  void StartGpuMetricsLocked();
  void MoveGpuMetricsLocked(GpuMetricsSampler::Result result, Timeline* timeline);
  // Likewise the GPU-throughput sampler (ProfilerOptions::gpu_throughput_interval_ns); a device
  // that cannot be sampled is said once per reason.
  void StartGpuThroughputLocked();
  void MoveGpuThroughputLocked(GpuThroughputSampler::Result result, Timeline* timeline);

  // Host samples: their own lock, taken after mu_ (in StopLocked) or alone.
  std::mutex samples_mu_;
  bool accepting_samples_ = false;
  HostSampleBuffer samples_;

  mutable std::mutex mu_;
  std::atomic<bool> recording_{false};
  const void* owner_ = nullptr;  // non-null while collecting
  std::string started_by_;       // "the C++ API", "LD_PRELOAD", ...
  ProfilerOptions options_;
  int64_t wall_clock_offset_ns_ = 0;
  ProfileCost start_cost_;                                // the start's part of the cost
  std::unique_ptr<SampledWindows> windows_;               // a sampled collection only
  std::unique_ptr<GpuMetricsSampler> gpu_metrics_;        // while collecting, where not off
  std::unique_ptr<GpuThroughputSampler> gpu_throughput_;  // likewise
  bool gpu_metrics_asked_ = false;                        // a period other than the default
  bool forked_child_ = false;
  std::set<std::string> warned_;  // refusals already printed
  bool exit_handler_registered_ = false;
  std::atomic<bool> summary_at_signal_{false};
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_SESSION_SESSION_H_
