// The public offline API (gpuidle/analyze.h) and its internal entry points (api/analyze.h):
// files -> timelines (or reports read back) -> report -> formats; two runs -> their diff.
#include "api/analyze.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/analyze.h"
#include "analysis/rank_merge.h"
#include "analysis/report_diff.h"
#include "core/out_of_memory.h"
#include "core/output_file.h"
#include "core/status_macros.h"
#include "core/text_safety.h"
#include "gpuidle/analyze.h"
#include "ingest/read_trace.h"
#include "ingest/report_reader.h"
#include "report/diff_writer.h"
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

absl::StatusOr<Report> AnalyzeFiles(const std::vector<std::string>& paths,
                                    const AnalysisOptions& options,
                                    const internal::FileProgress& progress,
                                    const std::atomic<bool>* cancel) {
  GPUIDLE_RETURN_IF_ERROR(internal::ValidateOptions(options));
  if (paths.empty()) return absl::InvalidArgumentError("no trace file given");
  std::vector<internal::Timeline> timelines;
  timelines.reserve(paths.size());
  // Per input: the report, for a gpuidle JSON report (docs/REPORT_SCHEMA.md, "Reading reports
  // back"); nullopt for a trace.
  std::vector<std::optional<Report>> reports;
  bool any_report = false;
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
    GPUIDLE_ASSIGN_OR_RETURN(internal::InputFile in, std::move(read));
    any_report |= in.report.has_value();
    if (in.report.has_value() && paths.size() > 1) {
      internal::KeepStepRowsForMerge(paths.size(), &*in.report);
    }
    reports.push_back(std::move(in.report));
    if (reports.back().has_value()) continue;
    internal::Timeline t = std::move(in.trace);
    if (!t.HasActivity()) {
      // Everything may have been skipped as unusable: then the warnings say why.
      std::string why;
      for (const std::string& w : t.info.warnings) absl::StrAppend(&why, "; ", w);
      return absl::FailedPreconditionError(
          absl::StrCat(path,
                       ": the trace holds no host or GPU activity (was the profiler "
                       "active? CPU and CUDA activities recorded?)",
                       why));
    }
    timelines.push_back(std::move(t));
  }
  if (any_report) {
    return MergeReportsAndTraces(paths, std::move(reports), std::move(timelines), options);
  }
  std::vector<const internal::Timeline*> ranks;
  for (const internal::Timeline& t : timelines) ranks.push_back(&t);
  GPUIDLE_ASSIGN_OR_RETURN(Report report, internal::AnalyzeRanks(ranks, options, paths));
  report.inputs = paths;
  return report;
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
  return internal::WriteOutputFile(path, text, output).status();
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
  return internal::WriteOutputFile(path, text, output).status();
}

}  // namespace gpuidle
