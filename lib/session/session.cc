#include "session/session.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <iterator>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "analysis/analyze.h"
#include "collect/clock.h"
#include "collect/collection.h"
#include "collect/cuda_driver.h"
#include "core/atomic_file.h"
#include "core/output_file.h"
#include "core/output_path.h"
#include "core/process_tree_warning.h"
#include "core/status_macros.h"
#include "core/terminal.h"
#include "core/termination_signals.h"
#include "gpuidle/analyze.h"
#include "report/prometheus_writer.h"
#include "report/trace_writer.h"
#include "report/writer.h"
#include "session/analyze_files.h"

namespace gpuidle::internal {
namespace {

// How long a terminating signal waits for the report (docs/INJECTION.md): well inside the
// grace period of schedulers (SLURM's KillWait and Kubernetes' default are 30 s).
constexpr std::chrono::seconds kSignalReportDeadline{10};

// Whether the summary file is the default partial report of gpuidle run and LD_PRELOAD
// (session/option_table.h PartialReport): removed when the whole report is written.
bool IsPartialReport(const ProfilerOptions& o) {
  return !o.report_path.empty() && o.summary_path == TaggedOutputPath(o.report_path, "partial");
}

// The text summary as printed on standard error: coloured where that is a terminal and the
// settings allow it (GPUIDLE_COLOR, NO_COLOR: core/terminal.h).
absl::StatusOr<std::string> StderrSummary(const Report& report, const ProfilerOptions& options) {
  const ColorWhen when = ParseColorWhen(options.color).value_or(ColorWhen::kAuto);
  return FormatText(report, UseColor(when, STDERR_FILENO));
}

void WriteLine(absl::string_view prefix, absl::string_view message) {
  // One write(2): the line stays whole among the program's own output, and no stdio state is
  // needed (this also runs from exit handlers).
  const std::string line = absl::StrCat(prefix, message, "\n");
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

CollectionSettings CollectionSettingsFrom(const ProfilerOptions& options) {
  CollectionSettings c;
  const size_t pool_bytes = static_cast<size_t>(std::max(options.buffer_pool_mb, 1)) << 20;
  // At least 4 buffers, so CUPTI always has one while others are being decoded.
  c.buffer_bytes = std::min<size_t>(size_t{8} << 20, pool_bytes / 4);
  c.buffer_count = pool_bytes / c.buffer_bytes;
  c.max_records = options.max_records;
  return c;
}

std::optional<int> IntFromEnv(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 0 || n > (1 << 30)) return std::nullopt;
  return static_cast<int>(n);
}

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

void Warn(absl::string_view message) { WriteLine("gpuidle: warning: ", message); }
void Note(absl::string_view message) { WriteLine("gpuidle: ", message); }

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
  if (absl::Status s = StartCollection(CollectionSettingsFrom(options), &start_cost); !s.ok()) {
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
  StartWindowsLocked();
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
  if (windows_ != nullptr && windows_->thread.joinable()) {
    // The window thread takes the lock to close and open windows: joined without it.
    windows_->stop = true;
    windows_->wake.notify_all();
    std::thread thread = std::move(windows_->thread);
    lock.unlock();
    thread.join();
    lock.lock();
  }
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
  TimelineInfo& info = result->timeline.info;
  const ProcessIdentity id = CurrentProcessIdentity();
  info.pid = id.pid;
  info.host = id.host;
  info.wall_clock_offset_ns = wall_clock_offset_ns_;
  // The rank that names the output files (RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID).
  int rank = 0;
  if (id.rank_known && absl::SimpleAtoi(id.rank, &rank) && rank >= 0) info.rank = rank;
  if (std::optional<int> world = IntFromEnv("WORLD_SIZE")) info.world_size = world;

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
    if (recording_.load(std::memory_order_relaxed)) CloseWindowLocked(after);
    // The run went on to here: time after the last window is untraced, and the report says so.
    windows_->aggregate.CoverUntil(windows_->TimelineNowNs());
    // The summary file ends with the whole collection's report (stderr gets it below anyway);
    // the partial report is removed once the whole one is written, below.
    partial_report = IsPartialReport(options_) ? windows_->summary_path : "";
    PublishWindowsLocked(/*summary=*/!windows_->summary_path.empty() && partial_report.empty());
    std::unique_ptr<Windows> windows = std::move(windows_);
    // The timeline (for the trace output) is the last window's with activity.
    result =
        windows->last != nullptr ? std::move(windows->last) : std::make_shared<CollectionResult>();
    last_window_report = std::move(result->report);
    result->options = options_;
    result->report = windows->aggregate.Result();
    if (result->report) result->report->inputs = {"live capture"};
    gpu_work = windows->gpu_work;
  }
  if (!gpu_work) {
    const std::optional<int> run_parent = IntFromEnv("GPUIDLE_RUN_PARENT");
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
    if (text.ok()) WriteLine("", *text);
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
    // Streamed: a trace of millions of events is never held whole in memory.
    absl::StatusOr<std::string> path = WriteOutput(o.trace_path, [&](OutputStream& out) {
      return StreamGpuidleTrace(result->timeline, drawn, out);
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

void HostSampleBuffer::Add(int64_t time_ns, uint64_t thread, const std::string& stack) {
  if (contents_.samples.size() >= max_samples_) {
    ++contents_.dropped;
    return;
  }
  auto it = stack_ids_.find(stack);
  if (it == stack_ids_.end()) {
    if (stack_bytes_ + stack.size() > max_stack_bytes_) {
      ++contents_.dropped;
      return;
    }
    stack_bytes_ += stack.size();
    it = stack_ids_.emplace(stack, static_cast<uint32_t>(contents_.stacks.size())).first;
    contents_.stacks.push_back(stack);
  }
  contents_.samples.push_back(Sample{time_ns, thread, it->second});
}

HostSampleBuffer::Contents HostSampleBuffer::Take() {
  Contents taken = std::move(contents_);
  contents_ = Contents{};
  stack_ids_.clear();
  stack_bytes_ = 0;
  return taken;
}

void HostSampleBuffer::MoveInto(Contents pending, int64_t launch_gap_max_ns, Timeline* timeline) {
  if (pending.dropped > 0) {
    timeline->info.warnings.push_back(
        absl::StrCat(pending.dropped, " host stack samples dropped: over the limit of ",
                     kMaxSamples, " samples per collection"));
  }
  if (pending.samples.empty()) return;
  // Each thread's CUDA calls as [start, end), sorted by start (the timeline's calls are).
  absl::flat_hash_map<uint64_t, std::vector<std::pair<int64_t, int64_t>>> calls;
  for (const HostCall& c : timeline->calls) calls[c.thread].emplace_back(c.start_ns, c.end_ns);
  for (auto& [thread, spans] : calls) {
    std::sort(spans.begin(), spans.end());
    // The latest end so far, so that a call inside a longer one never opens a false stretch.
    for (size_t i = 1; i < spans.size(); ++i) {
      spans[i].second = std::max(spans[i].second, spans[i - 1].second);
    }
  }
  std::vector<StringId> ids(pending.stacks.size(), StringTable::kEmpty);
  std::vector<bool> interned(pending.stacks.size(), false);
  for (const Sample& s : pending.samples) {
    const auto it = calls.find(s.thread);
    if (it != calls.end()) {
      const std::vector<std::pair<int64_t, int64_t>>& spans = it->second;
      // The first call that starts after the sample, and the calls before it.
      const auto next = std::upper_bound(
          spans.begin(), spans.end(), s.time_ns,
          [](int64_t t, const std::pair<int64_t, int64_t>& span) { return t < span.first; });
      const bool has_prev = next != spans.begin();
      const int64_t prev_end = has_prev ? std::prev(next)->second : INT64_MIN;
      if (has_prev && prev_end > s.time_ns) continue;  // inside a CUDA call
      if (has_prev && next != spans.end() && next->first - prev_end < launch_gap_max_ns) {
        continue;  // a short stretch between calls: launch overhead, not host work
      }
    }
    if (!interned[s.stack]) {
      ids[s.stack] = timeline->strings.Intern(pending.stacks[s.stack]);
      interned[s.stack] = true;
    }
    timeline->samples.push_back(HostSample{s.time_ns, s.thread, ids[s.stack]});
  }
  std::stable_sort(timeline->samples.begin(), timeline->samples.end(),
                   [](const HostSample& a, const HostSample& b) { return a.time_ns < b.time_ns; });
}

// --- sampled collection -------------------------------------------------------------------

namespace {

// Without sampling, summaries and metrics cut the collection into windows of this length (or of
// the summary period), back to back: nothing is left out, and memory stays flat.
constexpr int64_t kDefaultWindowNs = 60'000'000'000;

std::chrono::nanoseconds Ns(int64_t ns) { return std::chrono::nanoseconds(ns); }

}  // namespace

void Session::StartWindowsLocked() {
  const ProfilerOptions& o = options_;
  const bool sampled = o.sample_window_ns > 0;
  if (!sampled && o.summary_every_ns == 0 && o.metrics_path.empty() && o.metrics_port == 0) {
    return;
  }
  auto w = std::make_unique<Windows>(o.analysis);
  const int64_t back_to_back = o.summary_every_ns > 0 ? o.summary_every_ns : kDefaultWindowNs;
  w->window = Ns(sampled ? o.sample_window_ns : back_to_back);
  w->first_window =
      sampled && o.sample_first_window_ns > 0 ? Ns(o.sample_first_window_ns) : w->window;
  w->period = Ns(sampled ? o.sample_period_ns : back_to_back);
  w->summary_every = Ns(o.summary_every_ns);
  if (sampled) {
    w->aggregate.SetPlan(w->first_window.count(), w->window.count(), w->period.count());
  }
  w->opened_at = Windows::Clock::now();
  w->opened_at_ns = TimelineNowNs();
  w->first_opened_at = w->opened_at;  // the collection running now is the first window
  w->first_opened_at_ns = w->opened_at_ns;
  w->next_summary = w->opened_at + w->summary_every;
  const ProcessIdentity id = CurrentProcessIdentity();
  auto expand = [&](const std::string& pattern, const char* what) -> std::string {
    if (pattern.empty()) return "";
    absl::StatusOr<std::string> path = ExpandOutputPath(pattern, id);
    if (!path.ok()) Warn(absl::StrCat(what, " not written: ", path.status().message()));
    return path.ok() ? *path : "";
  };
  w->summary_path = expand(o.summary_path, "summaries");
  // The default partial report never replaces a file it did not write (a killed job's partial
  // report): a name with the pid added, as the report's own.
  for (int attempt = 1; IsPartialReport(o) && !w->summary_path.empty() &&
                        ::access(w->summary_path.c_str(), F_OK) == 0 && attempt < 100;
       ++attempt) {
    w->summary_path = AlternativeOutputPath(expand(o.summary_path, "summaries"), id.pid, attempt);
  }
  w->metrics_path = expand(o.metrics_path, "metrics");
  if (o.metrics_port > 0) {
    // The ranks of one host each take their own port.
    const int port = o.metrics_port + IntFromEnv("LOCAL_RANK").value_or(0);
    absl::StatusOr<std::unique_ptr<MetricsServer>> server = MetricsServer::Start(port);
    if (server.ok()) {
      w->metrics = *std::move(server);
    } else {
      Warn(absl::StrCat("metrics not served on 127.0.0.1:", port, ": ", server.status().message()));
    }
  }
  windows_ = std::move(w);
  try {
    windows_->thread = std::thread(&Session::RunWindows, this);
  } catch (const std::system_error& e) {
    // No thread: the collection goes on unsampled, as if nothing had been asked.
    Warn(absl::StrCat("no thread for the sampled collection (", e.what(),
                      "); recording everything instead"));
    windows_.reset();
  }
}

void Session::RunWindows() {
  std::unique_lock<std::mutex> lock(mu_);
  Windows& w = *windows_;  // windows_ lives until this thread is joined
  while (!w.stop) {
    const bool open = recording_.load(std::memory_order_relaxed);
    const Windows::Clock::duration window = w.aggregate.windows() == 0 ? w.first_window : w.window;
    Windows::Clock::time_point next = open ? w.opened_at + window : w.opened_at + w.period;
    if (w.failed) next = Windows::Clock::time_point::max();
    if (w.summary_every.count() > 0) next = std::min(next, w.next_summary);
    w.wake.wait_until(lock, next, [&] { return w.stop; });
    if (w.stop) break;
    const Windows::Clock::time_point now = Windows::Clock::now();
    bool closed = false;
    if (open && now >= w.opened_at + window) {
      const bool back_to_back = w.window == w.period;
      // After a longer first window, the next opens a pause (period - window) later.
      if (window != w.window) w.opened_at = now - w.window;
      // Back to back, CUPTI stays attached: the next window opens at once.
      CloseWindowLocked(back_to_back ? CuptiAfterStop::kStayAttached : CuptiAfterStop::kDetach);
      closed = true;
      if (back_to_back) {
        w.opened_at = now;
        OpenWindowLocked();
      }
    } else if (!open && !w.failed && now >= w.opened_at + w.period) {
      // Periods missed meanwhile (a long analysis) are skipped, not caught up.
      while (w.opened_at + w.period <= now) w.opened_at += w.period;
      OpenWindowLocked();
    }
    const bool summary_due = w.summary_every.count() > 0 && now >= w.next_summary;
    if (summary_due) {
      while (w.next_summary <= now) w.next_summary += w.summary_every;
    }
    if (closed || summary_due) {
      w.aggregate.CoverUntil(w.TimelineNowNs());
      PublishWindowsLocked(summary_due);
    }
  }
}

void Session::CloseWindowLocked(CuptiAfterStop after) {
  Windows& w = *windows_;
  const int64_t end_ns = TimelineNowNs();  // CUPTI's clock, read while it is attached
  bool gpu_work = false;
  absl::StatusOr<std::shared_ptr<CollectionResult>> closed =
      CloseCollectionLocked(after, w.aggregate.WindowOptions(), &gpu_work);
  w.gpu_work = w.gpu_work || gpu_work;
  if (!closed.ok() || !(*closed)->report) {
    w.aggregate.Add(w.opened_at_ns, end_ns, nullptr);
    return;
  }
  w.aggregate.Add(w.opened_at_ns, end_ns, &*(*closed)->report);
  w.last = *std::move(closed);
}

void Session::OpenWindowLocked() {
  Windows& w = *windows_;
  if (absl::Status s = StartCollection(CollectionSettingsFrom(options_)); !s.ok()) {
    // Another tool took CUPTI between windows, or the GPU is gone: the report covers the
    // windows so far.
    Warn(absl::StrCat("sampled collection: window ", w.aggregate.windows() + 1,
                      " could not start (", s.message(), "); the report covers ",
                      w.aggregate.windows(), " windows"));
    w.failed = true;
    return;
  }
  w.opened_at_ns = TimelineNowNs();
  recording_.store(true, std::memory_order_relaxed);
  std::lock_guard<std::mutex> samples_lock(samples_mu_);
  samples_.Take();
  accepting_samples_ = options_.host_sample_period_ns > 0;
}

void Session::PublishWindowsLocked(bool summary) {
  Windows& w = *windows_;
  if (!summary && w.metrics == nullptr && w.metrics_path.empty()) return;
  // Metrics need no step rows: only a summary copies them.
  const std::optional<Report> report = w.aggregate.Result(/*with_steps=*/summary);
  if (!report) return;
  if (w.metrics != nullptr || !w.metrics_path.empty()) {
    const ProcessIdentity id = CurrentProcessIdentity();
    const std::string text = FormatPrometheusMetrics(
        *report, MetricsLabels{id.host, id.rank_known ? id.rank : "", absl::StrCat(id.pid)});
    if (w.metrics != nullptr) w.metrics->Publish(text);
    if (!w.metrics_path.empty()) {
      if (absl::Status s = WriteFileAtomically(w.metrics_path, text); !s.ok()) {
        Warn(absl::StrCat("metrics file not written (no more tries): ", s.message()));
        w.metrics_path.clear();
      }
    }
  }
  if (!summary) return;
  if (w.summary_path.empty()) {
    if (options_.print_summary) {
      absl::StatusOr<std::string> text = StderrSummary(*report, options_);
      if (text.ok()) WriteLine("gpuidle: summary so far\n", *text);
    }
    return;
  }
  absl::StatusOr<std::string> text = FormatReport(*report, FormatForPath(w.summary_path));
  absl::Status s = text.ok() ? WriteFileAtomically(w.summary_path, *text) : text.status();
  if (!s.ok()) {
    Warn(absl::StrCat("summary file not written (no more tries): ", s.message()));
    w.summary_path.clear();
  }
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
    if (s.windows_->metrics != nullptr) s.windows_->metrics->AbandonAfterFork();
    (void)s.windows_.release();
  }
  AbandonCollectionAfterFork();
}

}  // namespace gpuidle::internal
