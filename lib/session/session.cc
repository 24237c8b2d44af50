#include "session/session.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "analysis/analyze.h"
#include "collect/clock.h"
#include "collect/collection.h"
#include "collect/cuda_driver.h"
#include "core/output_file.h"
#include "core/output_path.h"
#include "core/status_macros.h"
#include "core/termination_signals.h"
#include "gpuidle/analyze.h"
#include "report/trace_writer.h"
#include "report/writer.h"
#include "settings/process_tree_warning.h"

namespace gpuidle::internal {
namespace {

// How long a terminating signal waits for the report (docs/INJECTION.md): well inside the
// grace period of schedulers (SLURM's KillWait and Kubernetes' default are 30 s).
constexpr std::chrono::seconds kSignalReportDeadline{10};

// Whether the timeline shows GPU work of the process: a device op, a launch, sync, copy,
// wait-event or module load, or lost records. Initialising CUDA alone (a probe that asks for the
// device count) and gpuidle's own markers are not.
bool DidGpuWork(const Timeline& t) {
  if (t.info.dropped_records.value_or(0) > 0 || t.info.zero_timestamp_records > 0) return true;
  for (const DeviceTimeline& d : t.devices) {
    if (!d.ops.empty()) return true;
  }
  for (const HostCall& c : t.calls) {
    if (c.category != CallCategory::kInit && c.category != CallCategory::kOther) return true;
  }
  return false;
}

}  // namespace

Session& Session::Get() {
  static Session* session = new Session();  // never destroyed: exit handlers use it
  return *session;
}

bool Session::CollectingFor(const void* owner) const {
  std::lock_guard<std::mutex> lock(mu_);
  return owner_ != nullptr && owner_ == owner;
}

absl::Status Session::Start(const ProfilerOptions& options, const void* owner,
                            absl::string_view how) {
  std::lock_guard<std::mutex> lock(mu_);
  auto refuse = [this](absl::Status status) {
    // One line per reason and process (a profiled function called in a loop), and none where
    // `gpuidle run` or the preloaded library already told this process tree there is no GPU.
    const bool told =
        absl::IsUnavailable(status) && ProcessTreeWarned() && !CheckForNvidiaGpu().ok();
    std::string line =
        absl::StrCat(status.message(), "; gpuidle is off, the program runs as usual");
    if (!told && warned_.insert(line).second) Warn(line);
    return status;
  };
  if (forked_child_) {
    return refuse(absl::UnavailableError("not profiling a forked child process"));
  }
  if (owner_ != nullptr) {
    return refuse(absl::FailedPreconditionError(absl::StrCat(
        "gpuidle is already collecting in this process (started by ", started_by_, ")")));
  }
  const int64_t start_began = SteadyNowNs();
  // CUPTI and the settings first: a CUPTI that cannot be used (GPUIDLE_CUPTI_PATH, another
  // version) or a bad setting is worth saying on any machine.
  if (absl::Status s = PrepareCollection(); !s.ok()) return refuse(s);
  // Then the GPU, checked as every way in checks it, before CUPTI would fail with
  // CUPTI_ERROR_UNKNOWN and say nothing of why.
  if (absl::Status gpu = CheckForNvidiaGpu(); !gpu.ok()) return refuse(gpu);
  StartCost start_cost;
  if (absl::Status s = StartCollection(options, &start_cost); !s.ok()) {
    return refuse(s);
  }
  start_cost_ = ProfileCost{};
  start_cost_.start_ns = SteadyNowNs() - start_began;
  start_cost_.attach_ns = start_cost.attach_ns;
  start_cost_.kinds_ns = start_cost.kinds_ns;
  start_cost_.calls_ns = start_cost.calls_ns;
  recording_.store(true, std::memory_order_relaxed);
  owner_ = owner;
  started_by_ = std::string(how);
  summary_at_signal_.store(false);  // a binding that prints the summary says so after this
  options_ = options;
  wall_clock_offset_ns_ = WallClockOffsetNs();
  {
    std::lock_guard<std::mutex> samples_lock(samples_mu_);
    samples_.Take();
    accepting_samples_ = options.host_sample_period_ns > 0;
  }
  StartGpuMetricsLocked();
  StartGpuThroughputLocked();
  windows_ = SampledWindows::Plan(options);
  if (windows_ != nullptr && !windows_->StartThread(this, &mu_)) windows_.reset();
  if (!exit_handler_registered_) {
    // Registered after the CUDA runtime's own exit handlers (it registers when the program's
    // kernels are registered, before main), so it runs before them: CUDA is still alive.
    std::atexit(&Session::StopAtExit);
    pthread_atfork(nullptr, nullptr, &Session::AfterForkInChild);
    // SIGTERM and the like end a process without its exit handlers (docs/INJECTION.md, "How a
    // job ends"): the report is written on the way out instead.
    WatchTerminationSignals(&Session::StopForSignal, kSignalReportDeadline);
    exit_handler_registered_ = true;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const CollectionResult>> Session::Stop(const void* owner,
                                                                      CuptiAfterStop after) {
  std::unique_lock<std::mutex> lock(mu_);
  if (owner_ == nullptr || owner_ != owner) {
    return absl::FailedPreconditionError("this profiler is not collecting");
  }
  return StopHolding(lock, after);
}

absl::StatusOr<std::shared_ptr<const CollectionResult>> Session::StopHolding(
    std::unique_lock<std::mutex>& lock, CuptiAfterStop after) {
  if (windows_ != nullptr) windows_->StopThread(lock);
  if (owner_ == nullptr) return absl::FailedPreconditionError("gpuidle is not collecting");
  return StopLocked(after);
}

absl::StatusOr<std::string> Session::WriteOutput(absl::string_view pattern,
                                                 absl::string_view text) {
  return WriteOutput(pattern, [text](OutputStream& out) { return out.Write(text); });
}

absl::StatusOr<std::string> Session::WriteOutput(
    absl::string_view pattern, absl::FunctionRef<absl::Status(OutputStream&)> produce) {
  const ProcessIdentity id = CurrentProcessIdentity();
  GPUIDLE_ASSIGN_OR_RETURN(std::string path, ExpandOutputPath(pattern, id));
  OutputFileOptions live;
  live.if_exists = IfExists::kUseAnotherName;
  live.pid = id.pid;
  return WriteOutputFileStreamed(path, produce, live);
}

absl::StatusOr<std::shared_ptr<CollectionResult>> Session::CloseCollectionLocked(
    CuptiAfterStop after, const AnalysisOptions& analysis, bool* gpu_work) {
  auto result = std::make_shared<CollectionResult>();
  result->options = options_;
  result->options.analysis = analysis;
  recording_.store(false, std::memory_order_relaxed);
  HostSampleBuffer::Contents samples;
  {
    std::lock_guard<std::mutex> samples_lock(samples_mu_);
    accepting_samples_ = false;
    samples = samples_.Take();
  }
  // The GPU metrics stop with the recording (a stop waits for one NVML call at most).
  GpuMetricsSampler::Result gpu_metrics;
  if (gpu_metrics_ != nullptr) {
    gpu_metrics = gpu_metrics_->Stop();
    gpu_metrics_.reset();
  }
  GpuThroughputSampler::Result gpu_throughput;
  if (gpu_throughput_ != nullptr) {
    gpu_throughput = gpu_throughput_->Stop();
    gpu_throughput_.reset();
  }
  // Nothing of PM sampling may outlive CUPTI (collect/pm_sampling.h), an earlier collection's
  // samplers included.
  if (after == CuptiAfterStop::kDetach && CollectionDetachesAtStop()) ReleaseDeviceThroughput();
  result->cost = start_cost_;
  StopCost stop_cost;
  absl::StatusOr<Timeline> timeline = StopCollection(after, &stop_cost);
  result->cost.flush_ns = stop_cost.flush_ns;
  result->cost.build_ns = stop_cost.build_ns;
  result->cost.detach_ns = stop_cost.detach_ns;
  if (!timeline.ok()) {
    Warn(absl::StrCat("collection failed: ", timeline.status().message()));
    return timeline.status();
  }
  result->timeline = *std::move(timeline);
  if (const uint64_t taken = result->timeline.info.buffers_taken_by_another_client; taken > 0) {
    // Said whether or not a report follows (with no record left there is none to carry it).
    Warn(absl::StrCat(
        "another CUPTI client in this process took ", taken, " of gpuidle's activity buffers",
        " (a tool that registered its buffer callbacks after gpuidle started: a C++ CUPTI "
        "client, torch.profiler without gpuidle's Python layer); gpuidle's report misses the "
        "records from then on, and that tool misses what gpuidle had recorded: profile with one "
        "tool at a time"));
  }
  HostSampleBuffer::MoveInto(std::move(samples), analysis.launch_gap_max_ns, &result->timeline);
  MoveGpuMetricsLocked(std::move(gpu_metrics), &result->timeline);
  MoveGpuThroughputLocked(std::move(gpu_throughput), &result->timeline);
  TimelineInfo& info = result->timeline.info;
  const ProcessIdentity id = CurrentProcessIdentity();
  info.pid = id.pid;
  info.host = id.host;
  info.wall_clock_offset_ns = wall_clock_offset_ns_;
  // The rank that names the output files (RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID).
  int rank = 0;
  if (id.rank_known && absl::SimpleAtoi(id.rank, &rank) && rank >= 0) info.rank = rank;
  if (std::optional<int> world = IntFromEnvironment("WORLD_SIZE")) info.world_size = world;

  // A process that did no GPU work (a launcher, a compile worker, a `python -c` probe that
  // initialised CUDA) ends silently; one that did but left no record says so.
  *gpu_work = DidGpuWork(result->timeline);
  if (!*gpu_work || !result->timeline.HasActivity()) return result;
  const int64_t analysis_began = SteadyNowNs();
  AnalysisOptions& o = result->options.analysis;
  absl::StatusOr<Report> report = Analyze(result->timeline, o);
  if (!report.ok() && absl::IsFailedPrecondition(report.status()) && o.skip_steps > 0) {
    // Too few steps to leave the warm-up out: a report of the whole collection beats none.
    Warn(absl::StrCat("warm-up steps not left out: ", report.status().message(),
                      "; the report covers the whole collection"));
    o.skip_steps = 0;
    report = Analyze(result->timeline, o);
  }
  if (!report.ok()) {
    Warn(absl::StrCat("analysis failed: ", report.status().message()));
    return report.status();
  }
  report->inputs = {"live capture"};
  result->report = *std::move(report);
  result->cost.analysis_ns = SteadyNowNs() - analysis_began;
  return result;
}

absl::StatusOr<std::shared_ptr<const CollectionResult>> Session::StopLocked(CuptiAfterStop after) {
  owner_ = nullptr;
  std::shared_ptr<CollectionResult> result;
  bool gpu_work = false;
  std::optional<Report> last_window_report;  // a sampled collection's: the trace draws its gaps
  std::string partial_report;                // the job's report so far (IsPartialReport)
  if (windows_ == nullptr) {
    absl::StatusOr<std::shared_ptr<CollectionResult>> closed =
        CloseCollectionLocked(after, options_.analysis, &gpu_work);
    if (!closed.ok()) return closed.status();
    result = *std::move(closed);
  } else {
    SampledWindows::Outcome windows = windows_->Finish(this, after);
    windows_.reset();
    // The timeline (for the trace output) is the last window's with activity.
    result =
        windows.last != nullptr ? std::move(windows.last) : std::make_shared<CollectionResult>();
    last_window_report = std::move(result->report);
    result->options = options_;
    result->report = std::move(windows.report);
    if (result->report) result->report->inputs = {"live capture"};
    gpu_work = windows.gpu_work;
    partial_report = std::move(windows.partial_report);
  }
  if (!gpu_work) {
    const std::optional<int> run_parent = IntFromEnvironment("GPUIDLE_RUN_PARENT");
    const bool command_of_run = run_parent.has_value() && *run_parent == ::getppid();
    if (command_of_run && options_.print_summary) Note("no GPU work was recorded; no report");
  } else if (!result->report) {
    const uint64_t lost = result->timeline.info.dropped_records.value_or(0);
    if (options_.print_summary) {
      Note(lost > 0
               ? absl::StrCat("no CUDA activity was recorded (", lost, " records lost); no report")
               : "no CUDA activity was recorded; no report");
    }
  }
  WriteOutputsLocked(gpu_work, last_window_report ? &*last_window_report : nullptr, result.get());
  if (!partial_report.empty() && !result->report_path.empty()) ::unlink(partial_report.c_str());
  return std::shared_ptr<const CollectionResult>(std::move(result));
}

void Session::WriteOutputsLocked(bool gpu_work, const Report* window_report,
                                 CollectionResult* result) {
  const int64_t output_began = SteadyNowNs();
  const ProfilerOptions& o = options_;
  absl::Status status;
  if (result->report && o.print_summary) {
    absl::StatusOr<std::string> text = StderrSummary(*result->report, o);
    if (text.ok()) WriteStderrLine("", *text);
  }
  if (result->report && !o.report_path.empty()) {
    const std::string format =
        o.report_format.empty() ? FormatForPath(o.report_path) : o.report_format;
    absl::StatusOr<std::string> text = FormatReport(*result->report, format);
    absl::StatusOr<std::string> path =
        text.ok() ? WriteOutput(o.report_path, *text) : text.status();
    if (path.ok()) {
      result->report_path = *path;
      if (o.print_summary) Note(absl::StrCat("report written to ", *path));
    } else {
      Warn(absl::StrCat("report not written: ", path.status().message()));
      status.Update(path.status());
    }
  }
  if (!o.trace_path.empty() && gpu_work && result->timeline.HasActivity()) {
    const Report* drawn = window_report != nullptr ? window_report
                          : result->report         ? &*result->report
                                                   : nullptr;
    const std::optional<GapList> gaps =
        GapsToDraw(result->timeline, drawn, TraceOptions::kDefaultMaxGaps);
    // Streamed: a trace of millions of events is never held whole in memory.
    absl::StatusOr<std::string> path = WriteOutput(o.trace_path, [&](OutputStream& out) {
      return StreamGpuidleTrace(result->timeline, drawn, gaps ? &*gaps : nullptr, out);
    });
    if (path.ok()) {
      result->trace_path = *path;
      if (o.print_summary) Note(absl::StrCat("trace written to ", *path));
    } else {
      Warn(absl::StrCat("trace not written: ", path.status().message()));
      status.Update(path.status());
    }
  }
  result->output_status = status;
  result->cost.output_ns = SteadyNowNs() - output_began;
}

Session::State Session::CurrentState() const {
  std::lock_guard<std::mutex> lock(mu_);
  State state;
  state.collecting = owner_ != nullptr;
  if (!state.collecting) return state;
  state.injected = started_by_ == "LD_PRELOAD" || started_by_ == "CUDA_INJECTION64_PATH";
  state.started_by = started_by_;
  state.host_sample_period_ns = options_.host_sample_period_ns;
  state.launch_gap_max_ns = options_.analysis.launch_gap_max_ns;
  return state;
}

absl::Status Session::StopAny() {
  std::unique_lock<std::mutex> lock(mu_);
  if (owner_ == nullptr) return absl::FailedPreconditionError("gpuidle is not collecting");
  absl::StatusOr<std::shared_ptr<const CollectionResult>> result =
      StopHolding(lock, CuptiAfterStop::kStayAttached);
  return result.ok() ? (*result)->output_status : result.status();
}

void Session::RecordHostSamples(int64_t time_ns,
                                const std::vector<std::pair<uint64_t, std::string>>& samples) {
  std::lock_guard<std::mutex> lock(samples_mu_);
  if (!accepting_samples_) return;
  for (const auto& [thread, stack] : samples) samples_.Add(time_ns, thread, stack);
}

void Session::StartGpuMetricsLocked() {
  gpu_metrics_.reset();
  // NVML missing is said only where the readings were asked for otherwise than by default.
  gpu_metrics_asked_ = options_.gpu_metrics_period_ns != ProfilerOptions{}.gpu_metrics_period_ns;
  if (options_.gpu_metrics_period_ns <= 0) return;
  gpu_metrics_ = std::make_unique<GpuMetricsSampler>(options_.gpu_metrics_period_ns);
  gpu_metrics_->Start();
}

void Session::StartGpuThroughputLocked() {
  gpu_throughput_.reset();
  if (options_.gpu_throughput_interval_ns <= 0) return;
  GpuThroughputSampler::Options o;
  o.interval_ns = options_.gpu_throughput_interval_ns;
  gpu_throughput_ = std::make_unique<GpuThroughputSampler>(std::move(o));
  gpu_throughput_->Start();
}

void Session::MoveGpuThroughputLocked(GpuThroughputSampler::Result result, Timeline* timeline) {
  // A device that cannot be sampled is said once per reason: the report has NVML's readings
  // alone then (its own line says so too).
  if (!result.unavailable.empty()) {
    std::string line =
        absl::StrCat("GPU throughput not sampled (NVML readings only): ", result.unavailable);
    if (warned_.insert(line).second) Warn(line);
  }
  GpuThroughputSampler::MoveInto(std::move(result), timeline);
}

void Session::MoveGpuMetricsLocked(GpuMetricsSampler::Result result, Timeline* timeline) {
  const absl::Status status = result.status;
  GpuMetricsSampler::MoveInto(std::move(result), timeline);
  // Off, or stopped before NVML was read: nothing to say. NVML missing (machines and containers
  // without the driver's NVML): said only where the metrics were asked for.
  if (status.ok() || absl::IsFailedPrecondition(status) || absl::IsCancelled(status) ||
      !gpu_metrics_asked_) {
    return;
  }
  std::string line = absl::StrCat("GPU metrics not read: ", status.message());
  if (warned_.insert(line).second) Warn(line);
}

absl::Status Session::OpenWindow() {
  GPUIDLE_RETURN_IF_ERROR(StartCollection(options_));
  recording_.store(true, std::memory_order_relaxed);
  StartGpuMetricsLocked();
  StartGpuThroughputLocked();
  std::lock_guard<std::mutex> samples_lock(samples_mu_);
  samples_.Take();
  accepting_samples_ = options_.host_sample_period_ns > 0;
  return absl::OkStatus();
}

void Session::StopAtExit() {
  Session& s = Get();
  std::unique_lock<std::mutex> lock(s.mu_);
  if (s.owner_ == nullptr || s.forked_child_) return;
  s.StopHolding(lock, CuptiAfterStop::kStayAttached).IgnoreError();
}

void Session::StopForSignal(int signal) {
  Session& s = Get();
  std::unique_lock<std::mutex> lock(s.mu_);
  if (s.owner_ == nullptr || s.forked_child_) return;
  if (s.summary_at_signal_.load()) s.options_.print_summary = true;
  if (s.options_.print_summary) {
    const char* name = sigabbrev_np(signal);
    Note(absl::StrCat(name != nullptr ? absl::StrCat("SIG", name) : absl::StrCat("signal ", signal),
                      ": the process is ending; the report first (at most ",
                      kSignalReportDeadline.count(), " s)"));
  }
  s.StopHolding(lock, CuptiAfterStop::kStayAttached).IgnoreError();
}

void Session::AfterForkInChild() {
  Session& s = Get();
  // The parent's threads (and any lock they held) do not exist here: never touch CUPTI, never
  // write the parent's report.
  new (&s.mu_) std::mutex();
  new (&s.samples_mu_) std::mutex();
  s.accepting_samples_ = false;
  s.forked_child_ = true;
  s.owner_ = nullptr;
  s.recording_.store(false, std::memory_order_relaxed);
  if (s.windows_ != nullptr) {
    // The parent's window thread and metrics server do not exist here: forgotten, never
    // joined (destroying a joinable std::thread would end the child).
    s.windows_->AbandonAfterFork();
    (void)s.windows_.release();
  }
  if (s.gpu_metrics_ != nullptr) {
    // Its thread is the parent's: forgotten, never joined (nor destroyed).
    (void)s.gpu_metrics_.release();
  }
  if (s.gpu_throughput_ != nullptr) (void)s.gpu_throughput_.release();  // likewise
  AbandonCollectionAfterFork();
}

}  // namespace gpuidle::internal
