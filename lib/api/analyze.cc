// The public offline API (gpuidle/analyze.h) and its internal entry points (api/analyze.h):
// files -> timelines (or reports read back) -> report -> formats; two runs -> their diff.
#include "api/analyze.h"

#include <sys/stat.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "analysis/analyze.h"
#include "analysis/rank_merge.h"
#include "analysis/report_diff.h"
#include "core/out_of_memory.h"
#include "core/output_file.h"
#include "core/output_path.h"
#include "core/status_macros.h"
#include "core/text_safety.h"
#include "gpuidle/analyze.h"
#include "ingest/byte_source.h"
#include "ingest/read_trace.h"
#include "ingest/report_reader.h"
#include "report/diff_writer.h"
#include "report/trace_writer.h"
#include "report/writer.h"

namespace gpuidle {

namespace {

// Inputs that hold gpuidle reports (a rank's report read back) and perhaps traces too: each trace
// analysed as one process, then all merged as ranks of one job, in input order (MergeRanks).
absl::StatusOr<Report> MergeReportsAndTraces(const std::vector<std::string>& paths,
                                             std::vector<std::optional<Report>> reports,
                                             std::vector<internal::Timeline> timelines,
                                             const AnalysisOptions& options) {
  std::vector<Report> ranks;
  ranks.reserve(paths.size());
  size_t next_trace = 0;
  // A report was analysed once, with its own warm-up left out: --skip-steps cannot change it
  // (issue 29: it was ignored without a word).
  std::vector<std::string> kept_warm_up;
  for (size_t i = 0; i < reports.size(); ++i) {
    if (reports[i].has_value() && reports[i]->options.skip_steps != options.skip_steps) {
      kept_warm_up.push_back(absl::StrCat(internal::QuoteForMessage(paths[i]), " (",
                                          reports[i]->options.skip_steps, ")"));
    }
  }
  for (std::optional<Report>& r : reports) {
    if (r.has_value()) {
      ranks.push_back(*std::move(r));
      continue;
    }
    internal::Timeline t = std::move(timelines[next_trace++]);
    GPUIDLE_ASSIGN_OR_RETURN(Report one, internal::Analyze(t, options));
    ranks.push_back(std::move(one));
  }
  GPUIDLE_ASSIGN_OR_RETURN(Report report, internal::MergeRanks(std::move(ranks), paths, options));
  report.inputs = paths;
  if (!kept_warm_up.empty()) {
    const size_t shown = std::min<size_t>(kept_warm_up.size(), 3);
    report.warnings.push_back(absl::StrCat(
        "skipping ", options.skip_steps, " warm-up steps applies to traces only: the reports ",
        absl::StrJoin(kept_warm_up.begin(), kept_warm_up.begin() + static_cast<long>(shown), ", "),
        kept_warm_up.size() > shown ? absl::StrCat(" and ", kept_warm_up.size() - shown, " more")
                                    : "",
        " keep the warm-up steps they were analysed with"));
  }
  return report;
}

absl::Status Cancelled() { return absl::CancelledError("the analysis was cancelled"); }

// The inputs as read: per input the report, for a gpuidle JSON report (docs/REPORT_SCHEMA.md,
// "Reading reports back"), else nullopt and its timeline, in input order.
struct ReadInputs {
  std::vector<std::optional<Report>> reports;
  std::vector<internal::Timeline> timelines;  // of the traces only
  bool any_report = false;
};

// A read error of a file named .gz that holds no gzip data says so first: the name promised
// gzip, and what the reader then saw may puzzle ("truncated" for a plain file cut short).
absl::Status NamedNotGzip(const absl::Status& error, const std::string& path) {
  const std::string note = internal::NotGzipNote(path);
  if (note.empty()) return error;
  absl::string_view problem = error.message();
  absl::ConsumePrefix(&problem, absl::StrCat(path, ": "));
  return absl::Status(error.code(), absl::StrCat(note, "; read as it is: ", problem));
}

absl::StatusOr<ReadInputs> ReadFiles(const std::vector<std::string>& paths,
                                     const internal::FileProgress& progress,
                                     const std::atomic<bool>* cancel) {
  ReadInputs in;
  in.timelines.reserve(paths.size());
  for (size_t index = 0; index < paths.size(); ++index) {
    const std::string& path = paths[index];
    // The file system would see only the part before a NUL: another file than the one named.
    if (path.find('\0') != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("trace path ", internal::QuoteForMessage(path), " holds a NUL byte"));
    }
    internal::ReadProgress read_progress;
    if (progress || cancel != nullptr) {
      read_progress = [&](uint64_t bytes) {
        if (progress) progress(index, bytes);
        return cancel == nullptr || !cancel->load(std::memory_order_relaxed);
      };
    }
    absl::StatusOr<internal::InputFile> read = internal::ReadInputFile(path, read_progress);
    if (cancel != nullptr && cancel->load()) return Cancelled();
    if (!read.ok()) return NamedNotGzip(read.status(), path);
    internal::InputFile file = *std::move(read);
    in.any_report |= file.report.has_value();
    if (file.report.has_value() && paths.size() > 1) {
      internal::KeepStepRowsForMerge(paths.size(), &*file.report);
    }
    in.reports.push_back(std::move(file.report));
    if (in.reports.back().has_value()) continue;
    internal::Timeline t = std::move(file.trace);
    if (!t.HasActivity()) {
      // Everything may have been skipped as unusable: then the warnings say why.
      std::string why;
      for (const std::string& w : t.info.warnings) absl::StrAppend(&why, "; ", w);
      return NamedNotGzip(absl::FailedPreconditionError(absl::StrCat(
                              path,
                              ": the trace holds no host or GPU activity (was the profiler "
                              "active? CPU and CUDA activities recorded?)",
                              why)),
                          path);
    }
    // Read, though its name promised gzip: said once, beside the trace's other warnings.
    if (const std::string note = internal::NotGzipNote(path); !note.empty()) {
      t.info.warnings.push_back(absl::StrCat(note, ": read as plain JSON"));
    }
    in.timelines.push_back(std::move(t));
  }
  return in;
}

// At most `shown` names, then how many more.
std::string SomeNames(const std::vector<std::string>& names, size_t shown = 6) {
  if (names.size() <= shown) return absl::StrJoin(names, ", ");
  return absl::StrCat(absl::StrJoin(names.begin(), names.begin() + static_cast<long>(shown), ", "),
                      " and ", names.size() - shown, " more");
}

std::string BaseName(absl::string_view path) {
  const size_t slash = path.rfind('/');
  return std::string(slash == absl::string_view::npos ? path : path.substr(slash + 1));
}

// What inputs AnalyzeFiles takes: traces and reports, or (MergeReportFiles) reports, with
// traces beside them only.
enum class Inputs { kTracesOrReports, kReports };

absl::StatusOr<Report> AnalyzeFiles(const std::vector<std::string>& given,
                                    const AnalysisOptions& options,
                                    const internal::FileProgress& progress,
                                    const std::atomic<bool>* cancel,
                                    Inputs inputs = Inputs::kTracesOrReports) {
  GPUIDLE_RETURN_IF_ERROR(internal::ValidateOptions(options));
  if (given.empty()) {
    return absl::InvalidArgumentError(inputs == Inputs::kReports ? "no report given"
                                                                 : "no trace file given");
  }
  GPUIDLE_ASSIGN_OR_RETURN(internal::ExpandedInputs expanded,
                           internal::ExpandTraceDirectories(given));
  const std::vector<std::string>& paths = expanded.paths;
  GPUIDLE_ASSIGN_OR_RETURN(ReadInputs in, ReadFiles(paths, progress, cancel));
  if (inputs == Inputs::kReports && !in.any_report) {
    std::vector<std::string> quoted;
    for (const std::string& p : paths) quoted.push_back(internal::QuoteForMessage(p));
    return absl::InvalidArgumentError(absl::StrCat(
        SomeNames(quoted, 3), quoted.size() == 1 ? " is a trace" : " are traces",
        ", not a gpuidle report: there is nothing to merge. Traces are analysed together, several "
        "as the ranks of one job: gpuidle.analyze(paths) in Python, AnalyzeTraceFiles in C++, "
        "gpuidle analyze on the command line"));
  }
  if (in.any_report) {
    return MergeReportsAndTraces(paths, std::move(in.reports), std::move(in.timelines), options);
  }
  std::vector<const internal::Timeline*> ranks;
  for (const internal::Timeline& t : in.timelines) ranks.push_back(&t);
  GPUIDLE_ASSIGN_OR_RETURN(Report report, internal::AnalyzeRanks(ranks, options, paths));
  report.inputs = paths;
  return report;
}

// The output rules' error for a file whose directory is missing says "cannot create a temporary
// file": the directory is named instead ("cannot write out/r.json: the directory out/ does not
// exist"), or the file in the way of it.
absl::Status NamedMissingDirectory(const absl::Status& error, const std::string& path) {
  if (error.code() != absl::StatusCode::kNotFound) return error;
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return error;
  const std::string dir = path.substr(0, slash + 1);
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) return error;  // there now, or something else went wrong
  // The nearest part of the path that exists: a file there is what stands in the way.
  std::string existing = path.substr(0, slash);
  while (!existing.empty() && ::stat(existing.c_str(), &st) != 0) {
    const size_t up = existing.rfind('/');
    existing = up == std::string::npos || up == 0 ? "" : existing.substr(0, up);
  }
  if (!existing.empty() && !S_ISDIR(st.st_mode)) {
    return absl::Status(error.code(),
                        absl::StrCat("cannot write ", path, ": ", existing, " is not a directory"));
  }
  return absl::Status(error.code(), absl::StrCat("cannot write ", path, ": the directory ", dir,
                                                 " does not exist"));
}

// gpuidle::MergeReportJson, which stops between reports once `cancel` (if given) is set.
absl::StatusOr<Report> MergeReports(const std::vector<std::string>& json_reports,
                                    const std::vector<std::string>& names,
                                    const AnalysisOptions& options,
                                    const std::atomic<bool>* cancel) {
  GPUIDLE_RETURN_IF_ERROR(internal::ValidateOptions(options));
  if (json_reports.empty()) return absl::InvalidArgumentError("no report given");
  if (names.size() != json_reports.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(json_reports.size(), " reports but ", names.size(), " names"));
  }
  return internal::OutOfMemoryIsAnError(
      "while reading and merging the reports", [&]() -> absl::StatusOr<Report> {
        std::vector<Report> ranks;
        ranks.reserve(json_reports.size());
        for (size_t i = 0; i < json_reports.size(); ++i) {
          if (cancel != nullptr && cancel->load()) return Cancelled();
          GPUIDLE_ASSIGN_OR_RETURN(Report r, internal::ParseReportJson(json_reports[i], names[i]));
          if (json_reports.size() > 1) internal::KeepStepRowsForMerge(json_reports.size(), &r);
          ranks.push_back(std::move(r));
        }
        GPUIDLE_ASSIGN_OR_RETURN(Report report,
                                 internal::MergeRanks(std::move(ranks), names, options));
        report.inputs = names;
        return report;
      });
}

}  // namespace

absl::StatusOr<Report> AnalyzeTraceFiles(const std::vector<std::string>& paths,
                                         const AnalysisOptions& options) {
  return internal::AnalyzeTraceFilesWithProgress(paths, options, nullptr);
}

absl::StatusOr<Report> AnalyzeTraceFiles(const std::vector<std::string>& paths,
                                         const AnalysisOptions& options,
                                         const std::atomic<bool>& cancel) {
  return internal::AnalyzeTraceFilesWithProgress(paths, options, nullptr, &cancel);
}

absl::StatusOr<Report> MergeReportFiles(const std::vector<std::string>& paths,
                                        const AnalysisOptions& options,
                                        const std::atomic<bool>& cancel) {
  return internal::OutOfMemoryIsAnError("while reading and merging the reports", [&] {
    return AnalyzeFiles(paths, options, nullptr, &cancel, Inputs::kReports);
  });
}

absl::StatusOr<Report> MergeReportJson(const std::vector<std::string>& json_reports,
                                       const std::vector<std::string>& names,
                                       const AnalysisOptions& options) {
  return MergeReports(json_reports, names, options, nullptr);
}

absl::StatusOr<Report> MergeReportJson(const std::vector<std::string>& json_reports,
                                       const std::vector<std::string>& names,
                                       const AnalysisOptions& options,
                                       const std::atomic<bool>& cancel) {
  return MergeReports(json_reports, names, options, &cancel);
}

namespace internal {

absl::StatusOr<Report> AnalyzeTraceFilesWithProgress(const std::vector<std::string>& paths,
                                                     const AnalysisOptions& options,
                                                     const FileProgress& progress,
                                                     const std::atomic<bool>* cancel) {
  return internal::OutOfMemoryIsAnError("while reading and analysing the traces", [&] {
    return AnalyzeFiles(paths, options, progress, cancel);
  });
}

absl::StatusOr<ExpandedInputs> ExpandTraceDirectories(const std::vector<std::string>& paths) {
  ExpandedInputs expanded;
  for (const std::string& path : paths) {
    struct stat st {};
    // A path with a NUL byte is refused by the reader, which names it.
    if (path.find('\0') != std::string::npos || ::stat(path.c_str(), &st) != 0 ||
        !S_ISDIR(st.st_mode)) {
      expanded.paths.push_back(path);
      continue;
    }
    GPUIDLE_ASSIGN_OR_RETURN(ProfilerTraceDirectory found, FindProfilerTraces(path));
    std::vector<std::string> taken;
    for (const std::string& p : found.taken) taken.push_back(BaseName(p));
    std::string note =
        found.taken.size() == 1
            ? absl::StrCat(path, ": took its one worker's newest trace, ", taken.front())
            : absl::StrCat(path, ": took the newest trace of each of ", found.taken.size(),
                           " workers: ", SomeNames(taken));
    if (!found.skipped.empty()) {
      absl::StrAppend(&note, "; skipped ", found.skipped.size(),
                      " older: ", SomeNames(found.skipped));
    }
    if (!found.ignored.empty()) {
      absl::StrAppend(&note, "; ignored ", found.ignored.size(), " other ",
                      found.ignored.size() == 1 ? "entry" : "entries");
    }
    expanded.notes.push_back(std::move(note));
    expanded.paths.insert(expanded.paths.end(), found.taken.begin(), found.taken.end());
  }
  return expanded;
}

absl::StatusOr<AnalyzedTimelines> AnalyzeTraceFilesForTraces(const std::vector<std::string>& given,
                                                             const AnalysisOptions& options,
                                                             const FileProgress& progress,
                                                             const std::atomic<bool>* cancel) {
  return OutOfMemoryIsAnError(
      "while reading and analysing the traces", [&]() -> absl::StatusOr<AnalyzedTimelines> {
        GPUIDLE_RETURN_IF_ERROR(ValidateOptions(options));
        if (given.empty()) return absl::InvalidArgumentError("no trace file given");
        GPUIDLE_ASSIGN_OR_RETURN(ExpandedInputs expanded, ExpandTraceDirectories(given));
        const std::vector<std::string>& paths = expanded.paths;
        GPUIDLE_ASSIGN_OR_RETURN(ReadInputs in, ReadFiles(paths, progress, cancel));
        for (size_t i = 0; i < in.reports.size(); ++i) {
          if (in.reports[i].has_value()) {
            return absl::InvalidArgumentError(absl::StrCat(
                paths[i],
                " is a gpuidle report: it keeps no timeline to draw a trace of (give the trace "
                "it was made from)"));
          }
        }
        AnalyzedTimelines out;
        if (in.timelines.size() == 1) {
          // The report and the gaps to draw in one pass (analysis/analyze.h).
          GPUIDLE_ASSIGN_OR_RETURN(
              AnalysisWithGaps one,
              AnalyzeWithGaps(in.timelines.front(), options, TraceOptions::kDefaultMaxGaps));
          out.report = std::move(one.report);
          out.gaps = std::move(one.gaps);
        } else {
          std::vector<const Timeline*> ranks;
          for (const Timeline& t : in.timelines) ranks.push_back(&t);
          GPUIDLE_ASSIGN_OR_RETURN(out.report, AnalyzeRanks(ranks, options, paths));
        }
        out.report.inputs = paths;
        out.timelines = std::move(in.timelines);
        return out;
      });
}

std::vector<std::string> GpuidleTracePaths(const std::string& path, size_t inputs) {
  if (inputs <= 1) return {path};
  std::vector<std::string> paths;
  for (size_t i = 0; i < inputs; ++i) paths.push_back(TaggedOutputPath(path, absl::StrCat(i)));
  return paths;
}

absl::Status SaveGpuidleTraces(const AnalyzedTimelines& analyzed, const std::string& path,
                               const SaveOptions& save,
                               const std::function<void(const std::string&)>& written) {
  const std::vector<std::string> targets = GpuidleTracePaths(path, analyzed.timelines.size());
  OutputFileOptions output;
  output.if_exists = save.overwrite ? IfExists::kReplace : IfExists::kFail;
  output.inputs = analyzed.report.inputs;
  for (size_t i = 0; i < analyzed.timelines.size(); ++i) {
    const Timeline& timeline = analyzed.timelines[i];
    // Several ranks: each one's gaps as the analysis of the job found them (its options), listed
    // now and dropped once drawn.
    std::optional<GapList> listed;
    if (!analyzed.gaps.has_value()) {
      listed = GapsToDraw(timeline, &analyzed.report, TraceOptions::kDefaultMaxGaps);
    }
    const GapList* gaps = analyzed.gaps.has_value() ? &*analyzed.gaps
                          : listed.has_value()      ? &*listed
                                                    : nullptr;
    absl::StatusOr<std::string> done =
        OutOfMemoryIsAnError("while writing the trace", [&]() -> absl::StatusOr<std::string> {
          return WriteGpuidleTrace(timeline, &analyzed.report, gaps, targets[i], output);
        });
    if (!done.ok()) return NamedMissingDirectory(done.status(), targets[i]);
    if (written) written(*done);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> FormatText(const Report& report, bool color) {
  TextOptions text;
  text.color = color;
  return internal::OutOfMemoryIsAnError(
      "while formatting the report",
      [&]() -> absl::StatusOr<std::string> { return MakeTextWriter(text)->Write(report); });
}

}  // namespace internal

absl::StatusOr<std::string> FormatReport(const Report& report, absl::string_view format) {
  GPUIDLE_ASSIGN_OR_RETURN(std::unique_ptr<internal::ReportWriter> writer,
                           internal::WriterForFormat(format));
  return internal::OutOfMemoryIsAnError(
      "while formatting the report",
      [&]() -> absl::StatusOr<std::string> { return writer->Write(report); });
}

absl::Status SaveReport(const Report& report, const std::string& path, const SaveOptions& save) {
  const std::string format = save.format.empty() ? internal::FormatForPath(path) : save.format;
  GPUIDLE_ASSIGN_OR_RETURN(std::string text, FormatReport(report, format));
  internal::OutputFileOptions output;
  output.if_exists = save.overwrite ? internal::IfExists::kReplace : internal::IfExists::kFail;
  output.inputs = report.inputs;
  return NamedMissingDirectory(internal::WriteOutputFile(path, text, output).status(), path);
}

absl::Status SaveReport(const Report& report, const std::string& path, absl::string_view format) {
  SaveOptions save;
  save.format = std::string(format);
  return SaveReport(report, path, save);
}

std::string ReportFormatForPath(absl::string_view path) { return internal::FormatForPath(path); }

bool ReplaceableWithOverwrite(const absl::Status& status) {
  return internal::ReplaceableIfAsked(status);
}

ReportDiff DiffReports(const Report& before, const Report& after) {
  return internal::DiffReports(before, after);
}

absl::StatusOr<ReportDiff> DiffReportFiles(const std::vector<std::string>& before,
                                           const std::vector<std::string>& after,
                                           const AnalysisOptions& options) {
  // The side an error belongs to, in its message; the code stays AnalyzeTraceFiles'.
  const auto side = [&](const std::vector<std::string>& paths,
                        absl::string_view name) -> absl::StatusOr<Report> {
    if (paths.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("no trace or report given for ", name));
    }
    absl::StatusOr<Report> r = AnalyzeTraceFiles(paths, options);
    if (!r.ok()) {
      return absl::Status(r.status().code(), absl::StrCat(name, ": ", r.status().message()));
    }
    return r;
  };
  GPUIDLE_ASSIGN_OR_RETURN(Report b, side(before, "before"));
  GPUIDLE_ASSIGN_OR_RETURN(Report a, side(after, "after"));
  return internal::OutOfMemoryIsAnError(
      "while comparing the reports",
      [&]() -> absl::StatusOr<ReportDiff> { return internal::DiffReports(b, a); });
}

absl::StatusOr<std::string> FormatDiff(const ReportDiff& diff, absl::string_view format) {
  return internal::OutOfMemoryIsAnError(
      "while formatting the diff",
      [&]() -> absl::StatusOr<std::string> { return internal::WriteDiff(diff, format); });
}

absl::Status SaveDiff(const ReportDiff& diff, const std::string& path, const SaveOptions& save) {
  const std::string format = save.format.empty() ? internal::FormatForPath(path) : save.format;
  GPUIDLE_ASSIGN_OR_RETURN(std::string text, FormatDiff(diff, format));
  internal::OutputFileOptions output;
  output.if_exists = save.overwrite ? internal::IfExists::kReplace : internal::IfExists::kFail;
  output.inputs = diff.before.inputs;
  output.inputs.insert(output.inputs.end(), diff.after.inputs.begin(), diff.after.inputs.end());
  return NamedMissingDirectory(internal::WriteOutputFile(path, text, output).status(), path);
}

}  // namespace gpuidle
