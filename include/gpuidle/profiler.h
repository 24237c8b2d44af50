// Live profiling from C++: record the GPU timeline of this process with CUPTI and find out why
// its GPUs were idle.
//
//   gpuidle::Profiler profiler;                  // options from GPUIDLE_* variables
//   if (absl::Status s = profiler.Start(); !s.ok()) { /* gpuidle is inert; run as usual */ }
//   for (int i = 0; i < steps; ++i) {
//     gpuidle::StepMarker step;                  // marks one training step
//     { gpuidle::DataRange data; batch = LoadBatch(); }
//     Train(batch);
//   }
//   profiler.Stop();                             // analyses; writes GPUIDLE_OUT / GPUIDLE_TRACE
//   std::cout << *profiler.FormatReport("text");
//
// Or with RAII: `gpuidle::ScopedProfile scope;` starts at construction and stops (analyses,
// writes the configured outputs) at destruction.
//
// CUPTI has one owner per process, so one Profiler collects at a time. gpuidle never breaks the
// program it runs in: with no GPU, no CUPTI, CUPTI owned by another tool or in a forked child,
// Start() returns an error, prints one warning line and everything else does nothing.
#ifndef GPUIDLE_INCLUDE_GPUIDLE_PROFILER_H_
#define GPUIDLE_INCLUDE_GPUIDLE_PROFILER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpuidle/export.h"
#include "gpuidle/options.h"
#include "gpuidle/report.h"
#include "gpuidle/settings.h"  // ProfilerOptionsFromEnvironment

namespace gpuidle {

// What the last profile cost the program, part by part (monotonic clock). Start and stop are
// paid however short the profile, so gpuidle says what they took.
struct ProfileCost {
  int64_t start_ns = 0;     // CUPTI loaded, checked, subscribed and recording; of which:
  int64_t attach_ns = 0;    //   CUPTI claimed (subscriber, buffer callbacks, decode thread)
  int64_t kinds_ns = 0;     //   its activity kinds enabled
  int64_t calls_ns = 0;     //   the callbacks of the timed calls enabled
  int64_t flush_ns = 0;     // recording stopped: CUPTI's buffers flushed and decoded
  int64_t build_ns = 0;     // the timeline built from the records
  int64_t detach_ns = 0;    // CUPTI detached (0 when it stays attached)
  int64_t analysis_ns = 0;  // the report analysed
  int64_t output_ns = 0;    // summary printed, report and trace written
  int64_t StopNs() const { return flush_ns + build_ns + detach_ns + analysis_ns + output_ns; }
};

class GPUIDLE_EXPORT Profiler {
 public:
  // Options from the environment (a bad variable makes Start() fail with its error).
  Profiler();
  explicit Profiler(ProfilerOptions options);
  // Stops a running collection (analysing and writing the configured outputs).
  ~Profiler();
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  // Starts collecting. FailedPrecondition if another Profiler (or injection) is collecting in
  // this process; Unavailable if there is no GPU, no CUPTI, CUPTI is owned by another tool, or
  // this is a forked child. On failure gpuidle prints one warning line and stays inert.
  absl::Status Start();
  // Stops collecting, analyses, prints the summary and writes the configured outputs.
  // FailedPrecondition if not collecting. An output that cannot be written is a warning and an
  // error status; the report is still available.
  absl::Status Stop();
  // Stop() for a program that is about to exit (an exit handler): CUPTI stays attached, since
  // detaching it (which Stop() does, so that the program runs on at full speed) would only
  // speed up what runs after, and teardown at exit has hazards of its own.
  absl::Status StopAtExit();
  bool collecting() const;

  // The analysis of the last collection; nullptr before the first Stop().
  const Report* report() const;
  // The report as "text" or "json".
  absl::StatusOr<std::string> FormatReport(absl::string_view format) const;
  // Writes the report like gpuidle::SaveReport (format from the extension if empty; an
  // existing file is AlreadyExists unless save.overwrite).
  absl::Status SaveReport(const std::string& path, absl::string_view format = {}) const;
  absl::Status SaveReport(const std::string& path, const SaveOptions& save) const;
  // Writes the recorded timeline as a gpuidle trace, by the same rules as SaveReport.
  absl::Status SaveTrace(const std::string& path, bool overwrite = false) const;

  // Where the report and trace of the last collection were written ("" if not).
  const std::string& written_report_path() const;
  const std::string& written_trace_path() const;
  // What the last collection's start and stop cost; zeros before the first Stop().
  ProfileCost cost() const;

 private:
  absl::Status StopCollection(bool detach_cupti);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Starts a Profiler at construction (warning and inert on failure) and stops it at destruction.
class GPUIDLE_EXPORT ScopedProfile {
 public:
  ScopedProfile();
  explicit ScopedProfile(ProfilerOptions options);
  ~ScopedProfile();
  ScopedProfile(const ScopedProfile&) = delete;
  ScopedProfile& operator=(const ScopedProfile&) = delete;

  Profiler& profiler() { return profiler_; }

 private:
  Profiler profiler_;
};

// Markers: host ranges on the calling thread, recorded by gpuidle (and visible to Nsight
// Systems in the NVTX domain "gpuidle"). Near free when nothing collects; never throw.
//   StepMarker: one training/serving step; steps get their own rows in the report.
//   DataRange:  the thread waits for input; GPU idle meanwhile is data_starved.dataloader.
//   UserRange:  any named region, shown in traces.
class GPUIDLE_EXPORT StepMarker {
 public:
  StepMarker() noexcept;
  ~StepMarker();
  StepMarker(const StepMarker&) = delete;
  StepMarker& operator=(const StepMarker&) = delete;
};

class GPUIDLE_EXPORT DataRange {
 public:
  DataRange() noexcept;
  ~DataRange();
  DataRange(const DataRange&) = delete;
  DataRange& operator=(const DataRange&) = delete;
};

class GPUIDLE_EXPORT UserRange {
 public:
  explicit UserRange(const char* name) noexcept;
  ~UserRange();
  UserRange(const UserRange&) = delete;
  UserRange& operator=(const UserRange&) = delete;
};

// Serving requests: one request from its arrival to its response, and the part of it that the
// server worked on, from when it took the request up (Running) to its end. The analysis tells GPU
// idle time with no request in flight (no demand) from idle time while requests waited
// (docs/ANALYSIS.md, "Serving"). They are NVTX start/end ranges of the domain "gpuidle", named
// "gpuidle.request:<id>" and "gpuidle.request_run:<id>" ("gpuidle.request" and
// "gpuidle.request_run" without an id), so they may end on another thread than they started on,
// and Nsight Systems shows them too. Near free when nothing collects; never throw or block.
//
//   void Handle(Request r) {
//     gpuidle::RequestRange request(r.id);   // arrived (queued)
//     ...wait for a batch slot...
//     request.Running();                     // taken up: the server works on it from now
//     Generate(r);
//   }                                        // answered: both ranges end
class GPUIDLE_EXPORT RequestRange {
 public:
  explicit RequestRange(absl::string_view id = {}) noexcept;
  // Ends the request (and its run, if Running was called).
  ~RequestRange();
  RequestRange(const RequestRange&) = delete;
  RequestRange& operator=(const RequestRange&) = delete;

  // The server takes the request up now: opens its run, which ends with the request. A second
  // call does nothing.
  void Running() noexcept;

 private:
  uint64_t handle_;
};

// The same for servers whose requests cross threads and callbacks: StartRequest when a request
// arrives returns its handle (0 when nothing would see the request: nothing records and no NVTX
// tool listens), RequestRunning(handle) when the server takes it up (once; later calls do
// nothing), EndRequest(handle) when it is answered (ends both ranges). Any thread may call them;
// unknown handles, 0 included, and handles already ended are ignored.
GPUIDLE_EXPORT uint64_t StartRequest(absl::string_view id = {}) noexcept;
GPUIDLE_EXPORT void RequestRunning(uint64_t handle) noexcept;
GPUIDLE_EXPORT void EndRequest(uint64_t handle) noexcept;

// The same markers without scopes, for bindings and non-nested code. Each Push must be
// matched by a Pop on the same thread.
// kCallSite: the place in the program around a call ("train.py:42 in train_step"), which the
// analysis names as the call site of the idle time that call causes (bindings use it).
enum class MarkerKind : int { kStep, kData, kUser, kCallSite };
GPUIDLE_EXPORT void PushMarker(MarkerKind kind, absl::string_view name = {}) noexcept;
GPUIDLE_EXPORT void PopMarker() noexcept;

// For language bindings: names the place in the program that is calling CUDA right now
// ("train.py:42 in train_step"), or returns nullptr when it cannot. gpuidle calls it on the
// calling thread at the start of every CUDA runtime launch, sync and copy call of a collection
// started after it was set; the place becomes the call site of the idle time those calls
// cause (report offenders). It must be fast, never block and never throw; the string must stay
// valid for the life of the process. nullptr removes it. The Python package sets one.
using CallSiteProvider = const char* (*)();
GPUIDLE_EXPORT void SetCallSiteProvider(CallSiteProvider provider) noexcept;

// For language bindings: the process's collection, whoever started it (a Profiler, or the
// injection of `gpuidle run` / LD_PRELOAD), so that a binding loaded into an unchanged program
// can serve the collection that is already running.
struct CollectionState {
  // Whether this build can collect at all (false: built with -DGPUIDLE_WITH_CUPTI=OFF, which
  // only analyses traces).
  bool supported = true;
  bool collecting = false;
  bool injected = false;              // started by gpuidle run / LD_PRELOAD (CUDA_INJECTION64_PATH)
  std::string started_by;             // for messages: "LD_PRELOAD", "the C++ API", ...
  int64_t host_sample_period_ns = 0;  // the collection's ProfilerOptions
  int64_t launch_gap_max_ns = 0;
};
GPUIDLE_EXPORT CollectionState CurrentCollection();
// Whether CUDA activity is being recorded right now: lock-free, for hot paths that would
// otherwise build a marker for nothing. False between the windows of a sampled collection.
GPUIDLE_EXPORT bool Recording() noexcept;
// Stops the running collection whoever started it, as Profiler::Stop does (analysis, summary,
// outputs), leaving CUPTI attached: another tool (torch.profiler) is about to take CUPTI.
// FailedPrecondition if nothing collects.
GPUIDLE_EXPORT absl::Status StopCollectionForAnotherTool();
// For language bindings that print the summary themselves (the Python package prints it through
// sys.stderr, and collects with print_summary off): whether gpuidle prints it on stderr when a
// terminating signal (SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGABRT with their default action)
// stops the collection, as the binding gets no chance to then. Off until set.
GPUIDLE_EXPORT void SetSummaryAtSignal(bool print) noexcept;

// Host stack samples (bindings with their own stacks: Python). The clock of the timeline
// (CUPTI's while collecting), in nanoseconds.
GPUIDLE_EXPORT int64_t TimelineClockNs() noexcept;
// The OS thread ids (gettid) of the threads worth sampling now: they made a launch, sync, copy
// or wait-event call in the running collection, are outside CUDA, and have been for at least
// min_away_ns. Empty when nothing collects. Lock-free.
GPUIDLE_EXPORT std::vector<uint64_t> ThreadsAwayFromCuda(int64_t min_away_ns);
// Records what the threads were doing at time_ns (TimelineClockNs): (OS thread id, stack) with
// the stack as frames "file:line function", outermost first, one per line. Ignored when
// nothing collects; bounded per collection (the report counts what was dropped).
GPUIDLE_EXPORT void RecordHostSamples(
    int64_t time_ns, const std::vector<std::pair<uint64_t, std::string>>& samples) noexcept;

}  // namespace gpuidle

#endif  // GPUIDLE_INCLUDE_GPUIDLE_PROFILER_H_
