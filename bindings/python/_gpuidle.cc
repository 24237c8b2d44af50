// gpuidle._gpuidle: the native half of the Python package. Thin over the public C++ API of
// libgpuidle.so (gpuidle/gpuidle.h: Profiler, markers, AnalyzeTraceFiles, FormatReport, the
// settings table, the command line); the Python side (bindings/python/gpuidle) builds the
// user-facing objects from what this returns.
//
// One collector per process: the module links libgpuidle.so only and includes only public
// headers, so that all state and all of gpuidle's code is the library's; tests/python/
// test_package.py checks both.
#include <dlfcn.h>
#include <pthread.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gpuidle/gpuidle.h"

namespace py = pybind11;

namespace gpuidle::python {
namespace {

// gpuidle.GpuidleError(RuntimeError): every error without a closer Python equivalent. Created
// once at import and never released (it lives as long as the interpreter's module).
PyObject* gpuidle_error = nullptr;

// The one place where absl::Status codes become Python exceptions.
[[noreturn]] void ThrowStatus(const absl::Status& status) {
  // File names and trace contents may hold bytes that are not UTF-8; Python's str needs it,
  // so those become U+FFFD.
  const absl::string_view text = status.message();
  PyObject* decoded =
      PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace");
  if (decoded == nullptr) throw py::error_already_set();
  const py::str message = py::reinterpret_steal<py::str>(decoded);
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
      PyErr_SetObject(PyExc_ValueError, message.ptr());
      break;
    case absl::StatusCode::kNotFound:
      PyErr_SetObject(PyExc_FileNotFoundError, message.ptr());
      break;
    case absl::StatusCode::kPermissionDenied:
      PyErr_SetObject(PyExc_PermissionError, message.ptr());
      break;
    case absl::StatusCode::kAlreadyExists:
      PyErr_SetObject(PyExc_FileExistsError, message.ptr());
      break;
    case absl::StatusCode::kResourceExhausted:
      PyErr_SetObject(PyExc_MemoryError, message.ptr());
      break;
    default: {
      // The code travels along (e.g. "DATA_LOSS" for a truncated trace) for callers that care.
      py::object error = py::reinterpret_borrow<py::object>(gpuidle_error)(message);
      error.attr("code") = absl::StatusCodeToString(status.code());
      PyErr_SetObject(gpuidle_error, error.ptr());
      break;
    }
  }
  throw py::error_already_set();
}

void ThrowIfError(const absl::Status& status) {
  if (!status.ok()) ThrowStatus(status);
}

// A save that refused an existing file says how to replace it.
void ThrowIfCannotSave(const absl::Status& status) {
  if (ReplaceableWithOverwrite(status)) {
    ThrowStatus(
        absl::AlreadyExistsError(absl::StrCat(status.message(), " (overwrite=True replaces it)")));
  }
  ThrowIfError(status);
}

// (label, variable, value): a keyword argument of the Python API as the GPUIDLE_* variable
// that means the same, so that Python, the environment and `gpuidle run` share one set of
// rules (gpuidle/settings.h). The label names the keyword in error messages.
using Setting = std::tuple<std::string, std::string, std::string>;

void ApplySettings(const std::vector<Setting>& settings, ProfilerOptions* options) {
  for (const auto& [label, variable, value] : settings) {
    absl::Status s = ApplySetting(variable, value, options);
    if (!s.ok()) ThrowStatus(absl::InvalidArgumentError(absl::StrCat(label, ": ", s.message())));
  }
}

// A finished analysis (it carries the options it was made with: the writers print them). Copies
// share the one report, which only SummaryJson changes, briefly and under the lock.
class NativeReport {
 public:
  explicit NativeReport(Report report) : state_(std::make_shared<State>()) {
    state_->report = std::move(report);
  }

  std::string Format(const std::string& format) const {
    absl::StatusOr<std::string> text;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(state_->mu);
      text = FormatReport(state_->report, format);
    }
    if (!text.ok()) ThrowStatus(text.status());
    return *std::move(text);
  }

  // The JSON report without the devices' collective timing tables (empty; collectives_not_listed
  // as it is): what the Python Report is built from, so that Python never holds the tables, which
  // are for a later merge of ranks (a merged job of 1024 ranks holds 4M rows).
  std::string SummaryJson() const {
    absl::StatusOr<std::string> text;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(state_->mu);
      std::vector<DeviceReport>& devices = state_->report.devices;
      std::vector<std::vector<CollectiveTiming>> tables(devices.size());
      for (size_t i = 0; i < devices.size(); ++i) tables[i].swap(devices[i].collective_timings);
      text = FormatReport(state_->report, "json");
      for (size_t i = 0; i < devices.size(); ++i) tables[i].swap(devices[i].collective_timings);
    }
    if (!text.ok()) ThrowStatus(text.status());
    return *std::move(text);
  }

  // By gpuidle's output rules (core/output_file.h), like every file gpuidle writes.
  void Save(const std::string& path, const std::string& format, bool overwrite) const {
    SaveOptions save;
    save.format = format;
    save.overwrite = overwrite;
    absl::Status status;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(state_->mu);
      status = SaveReport(state_->report, path, save);
    }
    ThrowIfCannotSave(status);
  }

  // `gpuidle diff` of this report (before) and `after`: (text, JSON of schema gpuidle.diff/1).
  std::pair<std::string, std::string> Diff(const NativeReport& after) const {
    absl::StatusOr<std::string> text, json;
    {
      py::gil_scoped_release release;
      ReportDiff diff;
      if (state_ == after.state_) {  // a report against itself: one lock
        std::lock_guard<std::mutex> lock(state_->mu);
        diff = DiffReports(state_->report, state_->report);
      } else {
        std::scoped_lock lock(state_->mu, after.state_->mu);
        diff = DiffReports(state_->report, after.state_->report);
      }
      text = FormatDiff(diff, "text");
      json = FormatDiff(diff, "json");
    }
    if (!text.ok()) ThrowStatus(text.status());
    if (!json.ok()) ThrowStatus(json.status());
    return {*std::move(text), *std::move(json)};
  }

  // A sampled collection's windows ({windows, traced_ns, span_ns}); None for any other report.
  std::optional<py::dict> Coverage() const {
    std::optional<gpuidle::Coverage> coverage;
    {
      py::gil_scoped_release release;  // SummaryJson may hold the lock meanwhile
      std::lock_guard<std::mutex> lock(state_->mu);
      coverage = state_->report.coverage;
    }
    if (!coverage.has_value()) return std::nullopt;
    py::dict d;
    d["windows"] = coverage->windows;
    d["traced_ns"] = coverage->traced_ns;
    d["span_ns"] = coverage->span_ns;
    return d;
  }

 private:
  struct State {
    std::mutex mu;
    Report report;
  };
  std::shared_ptr<State> state_;
};

// One analysis on its own thread, shared by that thread and the caller, which may give up on it
// (Ctrl-C): whoever lets go last frees it.
struct AnalysisJob {
  std::mutex mu;
  std::condition_variable done_cv;
  bool done = false;
  absl::StatusOr<Report> report;
  std::atomic<bool> cancelled{false};  // the caller gave up: the analysis stops early
};

// An analysis that stops (Cancelled) soon after its flag is set.
using Analysis = std::function<absl::StatusOr<Report>(const std::atomic<bool>& cancel)>;

// Starts an analysis (of trace files, or a merge of reports) on a thread of its own, which owns
// copies of everything it uses and never touches a Python object, so that the caller may stop
// waiting for it. Null if no thread could be started.
std::shared_ptr<AnalysisJob> StartAnalysis(Analysis analysis) {
  auto job = std::make_shared<AnalysisJob>();
  // Signals sent to the process go to the threads that wait for them (Python handles them on
  // the main thread); taken by the analysis they would only interrupt its reads (EINTR). Its
  // own threads (the read-ahead) inherit the mask. Faults of its own stay deliverable, so that
  // a crash handler (faulthandler) still sees them.
  sigset_t sent, previous;
  sigfillset(&sent);
  for (int fault : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS}) {
    sigdelset(&sent, fault);
  }
  pthread_sigmask(SIG_BLOCK, &sent, &previous);
  try {
    std::thread([job, analysis = std::move(analysis)] {
      absl::StatusOr<Report> report = absl::InternalError("the analysis failed");
      try {
        report = analysis(job->cancelled);
      } catch (const std::exception& e) {  // on this thread it would end the process
        report = absl::InternalError(absl::StrCat("the analysis failed: ", e.what()));
      }
      std::lock_guard<std::mutex> lock(job->mu);
      job->report = std::move(report);
      job->done = true;
      job->done_cv.notify_all();
    }).detach();
  } catch (const std::system_error&) {
    job = nullptr;
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return job;
}

// How long the caller waits, with the GIL released, between two looks at Python's signals.
constexpr auto kSignalCheckInterval = std::chrono::milliseconds(20);

// Runs an analysis on its own thread while this one waits in short slices and runs Python's
// signal handlers in between, so that Ctrl-C (KeyboardInterrupt) ends the call at once; the
// abandoned analysis is told to stop, and does within a fraction of a second while it reads (the
// analysis after the read runs to its end: seconds per million kernels).
NativeReport RunInterruptibly(Analysis analysis) {
  std::shared_ptr<AnalysisJob> job = StartAnalysis(analysis);
  absl::StatusOr<Report> report;
  if (job == nullptr) {  // no thread to be had: analyse here, uninterruptibly
    py::gil_scoped_release release;
    const std::atomic<bool> never{false};
    report = analysis(never);
  } else {
    for (;;) {
      {
        py::gil_scoped_release release;
        std::unique_lock<std::mutex> lock(job->mu);
        if (job->done_cv.wait_for(lock, kSignalCheckInterval, [&] { return job->done; })) {
          report = std::move(job->report);
          break;
        }
      }
      if (PyErr_CheckSignals() != 0) {
        job->cancelled = true;
        throw py::error_already_set();
      }
    }
  }
  if (!report.ok()) ThrowStatus(report.status());
  return NativeReport(*std::move(report));
}

// The analysis of one job's trace files (or reports).
NativeReport Analyze(const std::vector<std::string>& paths, const std::vector<Setting>& settings) {
  ProfilerOptions options;  // the analysis part only; the environment is not read (as the CLI)
  ApplySettings(settings, &options);
  return RunInterruptibly([paths, analysis = options.analysis](const std::atomic<bool>& cancel) {
    return AnalyzeTraceFiles(paths, analysis, cancel);
  });
}

// The merge of a job's per-rank JSON reports (texts, each named for errors and warnings), with
// the default analysis options, as `gpuidle analyze report.*.json`.
NativeReport MergeReports(std::vector<std::string> json_reports, std::vector<std::string> names) {
  auto shared = std::make_shared<std::pair<std::vector<std::string>, std::vector<std::string>>>(
      std::move(json_reports), std::move(names));
  return RunInterruptibly([shared](const std::atomic<bool>& cancel) {
    return MergeReportJson(shared->first, shared->second, AnalysisOptions{}, cancel);
  });
}

// The merge of a job's per-rank report files, with the default analysis options, as `gpuidle
// analyze report.*.json`; traces alone are refused (MergeReportFiles).
NativeReport MergeReportFilesOf(const std::vector<std::string>& paths) {
  return RunInterruptibly([paths](const std::atomic<bool>& cancel) {
    return MergeReportFiles(paths, AnalysisOptions{}, cancel);
  });
}

// gpuidle::Profiler with the options fixed at construction: the GPUIDLE_* environment first,
// then the keyword arguments. A bad environment is not an error here: like the C++ Profiler,
// start() then warns once and gpuidle stays inert.
class NativeProfiler {
 public:
  explicit NativeProfiler(const std::vector<Setting>& settings)
      : options_(ProfilerOptionsFromEnvironment()) {
    ProfilerOptions scratch;
    ApplySettings(settings, options_.ok() ? &*options_ : &scratch);
    if (options_.ok()) {
      // The Python side prints the summary (through sys.stderr, which notebooks show).
      print_summary_ = options_->print_summary;
      options_->print_summary = false;
    }
  }

  // None when collecting; otherwise why not (gpuidle already printed one warning line).
  std::optional<std::string> Start() {
    if (profiler_ != nullptr && profiler_->collecting()) {
      return "this profiler is already collecting";
    }
    absl::Status status;
    {
      py::gil_scoped_release release;
      profiler_ =
          options_.ok() ? std::make_unique<Profiler>(*options_) : std::make_unique<Profiler>();
      status = profiler_->Start();
      if (status.ok()) gpuidle::SetSummaryAtSignal(print_summary_);
    }
    if (status.ok()) return std::nullopt;
    return std::string(status.message());
  }

  // Stops, analyses and writes the configured outputs. None on success, else why an output was
  // not written (warned already; the report is still there). Raises if it was not collecting.
  // at_exit: the interpreter is exiting (Profiler::StopAtExit).
  std::optional<std::string> Stop(bool at_exit) {
    if (profiler_ == nullptr) {
      ThrowStatus(absl::FailedPreconditionError("this profiler is not collecting"));
    }
    absl::Status status;
    bool was_collecting = false;
    {
      py::gil_scoped_release release;
      was_collecting = profiler_->collecting();
      status = at_exit ? profiler_->StopAtExit() : profiler_->Stop();
    }
    if (!was_collecting && !status.ok()) ThrowStatus(status);
    if (status.ok()) return std::nullopt;
    return std::string(status.message());
  }

  bool collecting() const { return profiler_ != nullptr && profiler_->collecting(); }

  std::optional<NativeReport> Report() const {
    const gpuidle::Report* r = profiler_ != nullptr ? profiler_->report() : nullptr;
    if (r == nullptr) return std::nullopt;
    return NativeReport(*r);
  }

  void SaveTrace(const std::string& path, bool overwrite) const {
    if (profiler_ == nullptr) {
      ThrowStatus(absl::FailedPreconditionError("no trace: nothing was collected yet"));
    }
    absl::Status status;
    {
      py::gil_scoped_release release;
      status = profiler_->SaveTrace(path, overwrite);
    }
    ThrowIfCannotSave(status);
  }

  // File system bytes (os.fsdecode makes them a str), not necessarily UTF-8.
  py::bytes written_report_path() const {
    return profiler_ != nullptr ? profiler_->written_report_path() : "";
  }
  py::bytes written_trace_path() const {
    return profiler_ != nullptr ? profiler_->written_trace_path() : "";
  }
  bool print_summary() const { return print_summary_; }
  // The last collection's start and stop, part by part, in milliseconds.
  py::dict cost() const {
    const ProfileCost c = profiler_ != nullptr ? profiler_->cost() : ProfileCost{};
    py::dict parts;
    for (const auto& [name, ns] :
         {std::pair{"start", c.start_ns}, std::pair{"attach", c.attach_ns},
          std::pair{"kinds", c.kinds_ns}, std::pair{"calls", c.calls_ns},
          std::pair{"flush", c.flush_ns}, std::pair{"build", c.build_ns},
          std::pair{"detach", c.detach_ns}, std::pair{"analysis", c.analysis_ns},
          std::pair{"output", c.output_ns}}) {
      parts[name] = static_cast<double>(ns) / 1e6;
    }
    return parts;
  }

 private:
  absl::StatusOr<ProfilerOptions> options_;
  bool print_summary_ = true;
  std::unique_ptr<Profiler> profiler_;
};

// The command line on this process's standard output and error, as `gpuidle ARGS...` would
// print it. The GIL is released: `run` waits for its command.
int CliMain(const std::vector<std::string>& args) {
  int code = 0;
  {
    py::gil_scoped_release release;
    code = RunCommandLine(args, std::cout, std::cerr);
    std::cout.flush();
    std::cerr.flush();
    std::fflush(stdout);
  }
  return code;
}

// The option table (gpuidle/settings.h), one dict per setting; the package checks its keywords
// against it (gpuidle/_options.py).
py::tuple SettingsTable() {
  py::list rows;
  for (const SettingInfo& s : Settings()) {
    py::dict row;
    row["variable"] = s.variable;
    row["flag"] = s.flag;
    row["flag_value"] = s.flag_value;
    row["keyword"] = s.keyword;
    row["type"] = s.type_name;
    row["default"] = s.default_value;
    row["range"] = s.range;
    row["help"] = s.help;
    py::list front_ends;
    for (const auto& [bit, name] :
         {std::pair{kSettingEnvironment, "environment"}, std::pair{kSettingRunFlag, "run"},
          std::pair{kSettingAnalyzeFlag, "analyze"}, std::pair{kSettingPythonProfile, "profile"},
          std::pair{kSettingPythonAnalyze, "py-analyze"}}) {
      if ((s.front_ends & bit) != 0) front_ends.append(name);
    }
    row["front_ends"] = py::tuple(front_ends);
    rows.append(row);
  }
  return py::tuple(rows);
}

// The libgpuidle.so this module uses: the file that `gpuidle run` should inject, so that a child
// that imports gpuidle too ends up with one copy of the library.
std::string LibraryPath() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&gpuidle::PopMarker), &info) == 0 ||
      info.dli_fname == nullptr) {
    return "";
  }
  return info.dli_fname;
}

// The host-stack sampler's clock (gpuidle/_sampler.py): wait() sleeps with the GIL released
// and returns only when the running collection (whoever started it) has threads worth
// sampling, so that a program busy launching never pays for a Python stack walk. One per
// sampler thread; stop() wakes it for good.
class HostSampleGate {
 public:
  // The OS thread ids to sample now, or None once stopped. idle_ns: how often to look while
  // nothing collects (the injected collection begins at the program's first CUDA call).
  std::optional<std::vector<uint64_t>> Wait(int64_t idle_ns) {
    py::gil_scoped_release release;
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopped_) {
      const CollectionState state = CurrentCollection();
      const bool sampling = state.collecting && state.host_sample_period_ns > 0;
      const int64_t period = sampling ? state.host_sample_period_ns : std::max<int64_t>(idle_ns, 1);
      cv_.wait_for(lock, std::chrono::nanoseconds(period));
      if (stopped_ || !sampling) continue;
      std::vector<uint64_t> threads = ThreadsAwayFromCuda(state.launch_gap_max_ns);
      if (!threads.empty()) return threads;
    }
    return std::nullopt;
  }
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopped_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopped_ = false;
};

void RecordSamples(int64_t time_ns, const std::vector<std::pair<uint64_t, std::string>>& samples) {
  py::gil_scoped_release release;
  RecordHostSamples(time_ns, samples);
}

py::dict CollectionStateDict() {
  CollectionState state;
  {
    py::gil_scoped_release release;
    state = CurrentCollection();
  }
  py::dict d;
  d["supported"] = state.supported;
  d["collecting"] = state.collecting;
  d["injected"] = state.injected;
  d["started_by"] = state.started_by;
  d["host_sample_period_ns"] = state.host_sample_period_ns;
  d["launch_gap_max_ns"] = state.launch_gap_max_ns;
  return d;
}

// Stops the running collection for torch.profiler; None, or why not.
std::optional<std::string> StopForAnotherTool() {
  absl::Status status;
  {
    py::gil_scoped_release release;
    status = StopCollectionForAnotherTool();
  }
  if (status.ok()) return std::nullopt;
  return std::string(status.message());
}

}  // namespace

void DefineCallSites(py::module_& m);  // call_sites.cc

}  // namespace gpuidle::python

PYBIND11_MODULE(_gpuidle, m) {
  using namespace gpuidle::python;  // NOLINT(build/namespaces): the binding table reads better
  m.doc() = "Native part of gpuidle; use the gpuidle package instead.";
  m.attr("__version__") = gpuidle::Version();

  gpuidle_error = PyErr_NewExceptionWithDoc(
      "gpuidle.GpuidleError",
      "A gpuidle error without a closer Python exception; `code` is the status code name "
      "(such as \"DATA_LOSS\" for a truncated trace).",
      PyExc_RuntimeError, nullptr);
  if (gpuidle_error == nullptr) throw py::error_already_set();
  m.attr("GpuidleError") = py::reinterpret_borrow<py::object>(gpuidle_error);

  // The taxonomy in report order (the JSON report's keys).
  py::list causes, subcauses;
  for (int c = 0; c < gpuidle::kNumCauses; ++c) {
    causes.append(std::string(gpuidle::CauseName(static_cast<gpuidle::Cause>(c))));
  }
  for (int s = 0; s < gpuidle::kNumSubcauses; ++s) {
    subcauses.append(gpuidle::QualifiedSubcauseName(static_cast<gpuidle::Subcause>(s)));
  }
  m.attr("CAUSES") = py::tuple(causes);
  m.attr("SUBCAUSES") = py::tuple(subcauses);
  // Phases of a run and the kinds of one-off time, in report order (the JSON report's names).
  py::list phases, one_off_kinds;
  for (int p = 0; p < gpuidle::kNumPhases; ++p) {
    phases.append(std::string(gpuidle::PhaseName(static_cast<gpuidle::Phase>(p))));
  }
  for (int k = 0; k < gpuidle::kNumOneOffKinds; ++k) {
    one_off_kinds.append(std::string(gpuidle::OneOffKindName(static_cast<gpuidle::OneOffKind>(k))));
  }
  m.attr("PHASES") = py::tuple(phases);
  m.attr("ONE_OFF_KINDS") = py::tuple(one_off_kinds);

  m.attr("MARKER_STEP") = static_cast<int>(gpuidle::MarkerKind::kStep);
  m.attr("MARKER_DATA") = static_cast<int>(gpuidle::MarkerKind::kData);
  m.attr("MARKER_USER") = static_cast<int>(gpuidle::MarkerKind::kUser);
  m.attr("MARKER_CALL_SITE") = static_cast<int>(gpuidle::MarkerKind::kCallSite);

  py::class_<NativeReport>(m, "NativeReport")
      .def("format", &NativeReport::Format, py::arg("format"),
           "The report as \"text\", \"json\" or \"html\" (ValueError for another format).")
      .def("diff", &NativeReport::Diff, py::arg("after"),
           "gpuidle diff of this report and `after`: (text, JSON of schema gpuidle.diff/1).")
      .def("save", &NativeReport::Save, py::arg("path"), py::arg("format"), py::arg("overwrite"),
           "Writes the report by gpuidle's output rules; FileExistsError unless overwrite.")
      .def("summary_json", &NativeReport::SummaryJson,
           "The JSON report without the collective timing tables (for the Python Report).")
      .def_property_readonly("coverage", &NativeReport::Coverage,
                             "A sampled collection's windows, traced_ns and span_ns; else None.");

  m.def("analyze", &Analyze, py::arg("paths"), py::arg("settings"),
        "Analyses the trace files of one job.");
  m.def("merge_reports", &MergeReports, py::arg("json_reports"), py::arg("names"),
        "Merges the JSON reports of a job's ranks (names name them in errors and warnings).");
  m.def("merge_report_files", &MergeReportFilesOf, py::arg("paths"),
        "Merges the JSON report files of a job's ranks; traces alone are a ValueError.");

  py::class_<NativeProfiler>(m, "Profiler")
      .def(py::init<const std::vector<Setting>&>(), py::arg("settings"))
      .def("start", &NativeProfiler::Start)
      .def("stop", &NativeProfiler::Stop, py::arg("at_exit") = false)
      .def_property_readonly("collecting", &NativeProfiler::collecting)
      .def("report", &NativeProfiler::Report)
      .def("save_trace", &NativeProfiler::SaveTrace, py::arg("path"), py::arg("overwrite") = false)
      .def_property_readonly("written_report_path", &NativeProfiler::written_report_path)
      .def_property_readonly("written_trace_path", &NativeProfiler::written_trace_path)
      .def_property_readonly("print_summary", &NativeProfiler::print_summary)
      .def_property_readonly("cost", &NativeProfiler::cost);

  // Markers cost one NVTX call when nothing collects; they never raise.
  m.def(
      "push_marker",
      [](int kind, const std::string& name) {
        if (kind < 0 || kind > static_cast<int>(gpuidle::MarkerKind::kCallSite)) {
          ThrowStatus(absl::InvalidArgumentError(absl::StrCat("unknown marker kind ", kind)));
        }
        gpuidle::PushMarker(static_cast<gpuidle::MarkerKind>(kind), name);
      },
      py::arg("kind"), py::arg("name") = "");
  m.def("pop_marker", &gpuidle::PopMarker);
  // Serving requests (gpuidle/_requests.py): start/end ranges by handle, which any thread may
  // end; 0 is the handle of a request nobody would see (nothing records).
  m.def(
      "start_request", [](const std::string& id) { return gpuidle::StartRequest(id); },
      py::arg("id") = "");
  m.def("request_running", &gpuidle::RequestRunning, py::arg("handle"));
  m.def("end_request", &gpuidle::EndRequest, py::arg("handle"));

  m.def(
      "format_for_path", [](const std::string& path) { return gpuidle::ReportFormatForPath(path); },
      py::arg("path"),
      "The report format a file name asks for: \"json\" for .json, else \"text\".");
  m.def("settings", &SettingsTable,
        "Every setting: variable, flag, keyword, type, default, range, help, front ends.");
  m.def("cli_main", &CliMain, py::arg("args"), "Runs `gpuidle ARGS...`; returns its exit code.");
  m.def("library_path", &LibraryPath, "The libgpuidle.so this module uses.");

  // The process's collection, whoever started it (gpuidle run, LD_PRELOAD, a profile).
  m.def("collection_state", &CollectionStateDict);
  // Whether a collection records now (lock-free): the Python hooks build no marker name and
  // walk no frame otherwise.
  m.def("recording", &gpuidle::Recording);
  m.def("stop_collection_for_another_tool", &StopForAnotherTool);
  // Host stack samples (gpuidle/_sampler.py).
  m.def("timeline_clock_ns", &gpuidle::TimelineClockNs);
  m.def("record_host_samples", &RecordSamples, py::arg("time_ns"), py::arg("samples"));
  py::class_<HostSampleGate>(m, "HostSampleGate")
      .def(py::init<>())
      .def("wait", &HostSampleGate::Wait, py::arg("idle_ns"))
      .def("stop", &HostSampleGate::Stop);
  DefineCallSites(m);
}
